package training

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// DefaultCollectEpisodes is the size of the paper's corpus (Sec. V-A c).
const DefaultCollectEpisodes = 779

// CollectConfig describes a training corpus collected on the simulated
// fabric with the strategies of Table I.
type CollectConfig struct {
	// Episodes is the number of episodes (0: DefaultCollectEpisodes).
	Episodes int
	// Shares weighs the strategies, by name (nil: DefaultShares()). They
	// need not sum to 1; a strategy left out gets no episode. Episodes are
	// split in proportion, by largest remainder.
	Shares map[string]float64
	// Seed seeds every plan and episode: the same config gives the same
	// corpus. Episode j of strategy s has a seed derived from (Seed, s, j),
	// so changing one strategy's share leaves the other strategies' episodes
	// unchanged.
	Seed uint64
	// Parallelism is the number of episodes simulated at once (at least 1).
	Parallelism int
	// Sim is the simulated fabric (zero: sim.DefaultConfig()).
	Sim sim.Config
	// Reward labels the dataset (zero: DefaultRewardConfig()); the dataset
	// keeps the reward inputs, so a trainer can relabel it.
	Reward RewardConfig
	// Trace controls how traces become episodes (see EpisodeFromTrace).
	Trace TraceOptions
	// Progress, when set, is called after every finished episode.
	Progress func(done, total int)
	// OutDir, when set, receives every episode's trace as
	// NNNN-STRATEGY-J.jsonl.gz.
	OutDir string
	// Kinds weighs the protected flow's kind of traffic (sim.KindBulk,
	// KindRR, KindRate, KindOnOff) by name, as Shares weighs strategies;
	// nil: every episode protects a bulk flow, the paper's corpus. Each
	// episode's kind and its parameters come from a random source of the
	// episode's own, so the congestion and the scripts do not change.
	Kinds map[string]float64
	// Layout is the state layout the dataset is encoded in
	// (telemetry.StateLayout, the default when empty,
	// telemetry.StateLayoutV2 or telemetry.StateLayoutV3).
	Layout string
}

// layout returns the layout the dataset is encoded in.
func (c CollectConfig) layout() string {
	if c.Layout == "" {
		return telemetry.StateLayout
	}
	return c.Layout
}

func (c CollectConfig) withDefaults() CollectConfig {
	if c.Episodes == 0 {
		c.Episodes = DefaultCollectEpisodes
	}
	if c.Shares == nil {
		c.Shares = DefaultShares()
	}
	if c.Parallelism < 1 {
		c.Parallelism = 1
	}
	if c.Sim.Switches == 0 {
		c.Sim = sim.DefaultConfig()
	}
	if c.Reward == (RewardConfig{}) {
		c.Reward = DefaultRewardConfig()
	}
	return c
}

// Validate checks the settings (after defaults).
func (c CollectConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Episodes < 0 {
		errs = append(errs, fmt.Errorf("episodes %d, want > 0", c.Episodes))
	}
	total := 0.0
	for name, v := range c.Shares {
		if _, err := ParseStrategy(name); err != nil {
			errs = append(errs, err)
		}
		if !(v >= 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("share of %s is %v, want a finite number >= 0", name, v))
		}
		total += v
	}
	if !(total > 0) {
		errs = append(errs, errors.New("shares sum to 0, want at least one strategy with a positive share"))
	}
	if err := c.Sim.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Reward.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := validateKinds(c.Kinds); err != nil {
		errs = append(errs, err)
	}
	if l := c.layout(); !telemetry.KnownLayout(l) {
		errs = append(errs, fmt.Errorf("layout %q, want %s", l, telemetry.Layouts()))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("training: invalid collect config: %w", err)
	}
	return nil
}

// Allocate splits n episodes over the strategies in proportion to shares
// (largest remainder, ties to the strategy listed first in Table I) and
// returns the count of each, in the order of Strategies.
func Allocate(n int, shares map[string]float64) []int {
	sts := Strategies()
	counts := make([]int, len(sts))
	total := 0.0
	for _, st := range sts {
		total += max(0, shares[string(st)])
	}
	if total <= 0 || n <= 0 {
		return counts
	}
	rem := make([]float64, len(sts))
	left := n
	for i, st := range sts {
		q := float64(n) * max(0, shares[string(st)]) / total
		counts[i] = int(math.Floor(q))
		rem[i] = q - float64(counts[i])
		left -= counts[i]
	}
	order := make([]int, len(sts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case rem[a] > rem[b]:
			return -1
		case rem[a] < rem[b]:
			return 1
		}
		return 0
	})
	for i := 0; i < left; i++ {
		counts[order[i%len(order)]]++
	}
	return counts
}

// planSeed derives the seed of episode j of strategy st.
func planSeed(seed uint64, st Strategy, j int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "proflow-collect/%d/%s/%d", seed, st, j)
	return h.Sum64()
}

// PlanCorpus returns the plans of the corpus cfg describes, grouped by
// strategy in the order of Table I.
func PlanCorpus(cfg CollectConfig) ([]Plan, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	counts := Allocate(cfg.Episodes, cfg.Shares)
	var plans []Plan
	for i, st := range Strategies() {
		for j := range counts[i] {
			p, err := PlanEpisode(st, j, planSeed(cfg.Seed, st, j), cfg.Sim)
			if err != nil {
				return nil, err
			}
			if cfg.Kinds != nil {
				sc := p.Scenario
				change := kindDemandChange
				if st == StrategyKQuiet {
					change = kindQuietChange
				}
				sc.ProtectedKind = drawKind(cfg.Kinds, p.Seed, time.Duration(sc.CongestionStart), time.Duration(sc.CongestionStart+sc.Window), change)
				if err := sc.Validate(cfg.Sim); err != nil {
					return nil, fmt.Errorf("training: plan %s-%d with kind %+v: %w", st, j, sc.ProtectedKind, err)
				}
			}
			plans = append(plans, p)
		}
	}
	return plans, nil
}

// Spec returns the simulated episode of plan p on the fabric cfg, run under
// the plan's scripted policy behind policy.Immediate().
func (p Plan) Spec(cfg sim.Config) sim.EpisodeSpec {
	script := p.Script
	return sim.EpisodeSpec{
		Scenario: p.Scenario, Seed: p.Seed, Config: cfg, Policy: "collect-" + string(p.Strategy),
		NewPolicy: func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
			if err != nil {
				return nil, nil, nil, err
			}
			pol, err := NewScriptedPolicy(script, cfg.Epoch, topo.NumSwitches())
			if err != nil {
				return nil, nil, nil, err
			}
			return enc, pol, policy.Immediate(), nil
		},
		Labels: map[string]string{"strategy": string(p.Strategy), "index": strconv.Itoa(p.Index), "kind": p.Scenario.ProtectedKind.Name()},
	}
}

// CollectedEpisode summarises one episode of a collection.
type CollectedEpisode struct {
	Strategy Strategy
	Index    int
	Seed     uint64
	// Reroutes lists the times of the reroutes, as offsets from the start
	// of the episode.
	Reroutes []time.Duration
	// Transitions is the number of transitions the episode gave.
	Transitions int
}

// Collection is a collected corpus.
type Collection struct {
	Dataset  *Dataset
	Episodes []CollectedEpisode
	// Counts is the number of episodes of each strategy, in the order of
	// Strategies.
	Counts []int
}

// collectChunk bounds the traces held in memory at once.
const collectChunk = 64

// Collect runs the corpus cfg describes on the simulated fabric (the plans
// of PlanCorpus, under their scripted runners, with sim.RunMany), converts
// every trace with EpisodeFromTrace and builds the dataset with
// FromEpisodes, encoded with telemetry.DefaultEncoderConfig of the fabric's
// topology in cfg.Layout. The dataset's Corpus records the episode count, the seed, the
// shares, the per-strategy counts and a digest of the fabric configuration.
func Collect(ctx context.Context, cfg CollectConfig) (*Collection, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	plans, err := PlanCorpus(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.OutDir != "" {
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return nil, fmt.Errorf("training: collect: %w", err)
		}
	}
	enc := telemetry.DefaultEncoderConfig(cfg.Sim.Topology()).WithLayout(cfg.layout())
	if err := enc.Validate(); err != nil {
		return nil, fmt.Errorf("training: collect: %w", err)
	}
	counts := Allocate(cfg.Episodes, cfg.Shares)
	ds, err := NewDataset(enc, corpusDescription(cfg, counts), true)
	if err != nil {
		return nil, err
	}
	e, err := telemetry.NewEncoder(enc)
	if err != nil {
		return nil, err
	}
	ds.Profile, ds.ProfileDigest, ds.Interval = cfg.Sim.Name, cfg.Sim.Digest(), cfg.Sim.Interval
	col := &Collection{Dataset: ds, Counts: counts}
	for off := 0; off < len(plans); off += collectChunk {
		chunk := plans[off:min(off+collectChunk, len(plans))]
		specs := make([]sim.EpisodeSpec, len(chunk))
		for i, p := range chunk {
			specs[i] = p.Spec(cfg.Sim)
		}
		var progress func(done, total int)
		if cfg.Progress != nil {
			progress = func(done, _ int) { cfg.Progress(off+done, len(plans)) }
		}
		traces, err := sim.RunMany(ctx, specs, cfg.Parallelism, progress)
		if err != nil {
			return nil, fmt.Errorf("training: collect: %w", err)
		}
		for i, tr := range traces {
			id := off + i
			p := chunk[i]
			if cfg.OutDir != "" {
				path := filepath.Join(cfg.OutDir, fmt.Sprintf("%04d-%s-%d.jsonl.gz", id, p.Strategy, p.Index))
				if err := trace.WriteFile(path, tr); err != nil {
					return nil, fmt.Errorf("training: collect: %w", err)
				}
			}
			ep, err := EpisodeFromTrace(tr, id, cfg.Trace)
			if err != nil {
				return nil, fmt.Errorf("training: collect: plan %s #%d: %w", p.Strategy, p.Index, err)
			}
			before := ds.Len()
			if err := addEpisode(ds, e, ep, cfg.Reward); err != nil {
				return nil, fmt.Errorf("training: collect: plan %s #%d: %w", p.Strategy, p.Index, err)
			}
			ce := CollectedEpisode{Strategy: p.Strategy, Index: p.Index, Seed: p.Seed, Transitions: ds.Len() - before}
			for _, st := range tr.Steps {
				if _, at, ok := st.Moved(); ok {
					ce.Reroutes = append(ce.Reroutes, at.Sub(tr.Meta.Start))
				}
			}
			col.Episodes = append(col.Episodes, ce)
		}
	}
	return col, nil
}

// corpusDescription is the Corpus text of a collected dataset.
func corpusDescription(cfg CollectConfig, counts []int) string {
	var shares, alloc []string
	total := 0.0
	for _, v := range cfg.Shares {
		total += v
	}
	for i, st := range Strategies() {
		if v := cfg.Shares[string(st)]; v > 0 {
			shares = append(shares, fmt.Sprintf("%s=%.3g", st, v/total))
		}
		if counts[i] > 0 {
			alloc = append(alloc, fmt.Sprintf("%s=%d", st, counts[i]))
		}
	}
	desc := fmt.Sprintf("proflow collect: %d episodes on the simulated fabric (profile %s, %s), seed %d; shares %s; episodes %s",
		cfg.Episodes, cfg.Sim.Name, cfg.Sim.Digest(), cfg.Seed, strings.Join(shares, " "), strings.Join(alloc, " "))
	if cfg.Kinds != nil {
		var kinds []string
		for _, name := range kindNames() {
			if v := cfg.Kinds[name]; v > 0 {
				kinds = append(kinds, fmt.Sprintf("%s=%.3g", name, v))
			}
		}
		desc += "; kinds " + strings.Join(kinds, " ")
	}
	return desc
}

// DatasetFromTraces builds a dataset from recorded traces (for example
// episodes a controller recorded on a real fabric): each becomes an episode
// with EpisodeFromTrace, numbered in order, and FromEpisodes encodes and
// labels them with enc and c.
func DatasetFromTraces(traces []*trace.Episode, enc telemetry.EncoderConfig, c RewardConfig, opt TraceOptions, corpus string) (*Dataset, error) {
	eps := make([]Episode, 0, len(traces))
	for i, tr := range traces {
		ep, err := EpisodeFromTrace(tr, i, opt)
		if err != nil {
			return nil, err
		}
		eps = append(eps, ep)
	}
	return FromEpisodes(eps, enc, c, corpus)
}
