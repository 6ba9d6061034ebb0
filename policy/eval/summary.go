package eval

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
)

// Options controls how episodes are summarised. Start from DefaultOptions.
type Options struct {
	// Window is the evaluation window after congestion start, seconds (120).
	// For scenarios with different windows it is the longest: an episode
	// has no sample past its own window.
	Window float64 `json:"window"`
	// Windows, when set, holds each scenario's own window in seconds by
	// name, for the report's header; callers set it when the scenarios'
	// windows differ.
	Windows map[string]float64 `json:"windows,omitempty"`
	// DegradationFraction: an episode is degraded from the first sample whose
	// throughput is below this fraction of its baseline (0.5).
	DegradationFraction float64 `json:"degradation_fraction"`
	// Baseline is the policy every other policy is compared with ("reactive").
	// When the episodes hold more than one policy, Summarize refuses a
	// Baseline that names none of them; with a single policy there is
	// nothing to compare and no comparison is made. Empty means no
	// comparisons.
	Baseline string `json:"baseline"`
	// Reference is the policy whose degradation onset defines a policy's
	// lead time, i.e. when the flow degrades if nobody moves it ("static").
	// When the reference policy was not run in a scenario, there is no
	// lead there (the report says "no reference"): a policy's own onset
	// is not when the flow would have degraded without it.
	Reference string `json:"reference"`
	// Confidence is the level of every interval (0.95).
	Confidence float64 `json:"confidence"`
	// Resamples is the number of scenario bootstrap resamples (10,000).
	Resamples int `json:"resamples"`
	// SLOFraction: a sample is an SLO violation when its throughput is
	// below this fraction of the episode's baseline (0.8); Cell.SLOSeconds
	// adds up their time.
	SLOFraction float64 `json:"slo_fraction"`
	// Deployable lists the policies that count as deployable baselines:
	// the strongest of them in each scenario is the yardstick of every
	// other policy (Summary.Strongest, StrongestComparisons). Default
	// DeployablePolicies.
	Deployable []string `json:"deployable,omitempty"`
	// Quiet lists the scenarios with no congestion at all (no congester):
	// where the protected flow's only trouble is its own demand changing,
	// no move is right. KindYardstick counts the candidate's moves there.
	// Optional; QuietScenarios fills it from the scenarios.
	Quiet []string `json:"quiet,omitempty"`
	// Seed seeds the bootstrap, so reports are reproducible. Each
	// comparison draws from its own generator, derived from Seed and the
	// candidate's name (FNV-1a), so adding or removing a policy does not
	// change the other comparisons' intervals.
	Seed uint64 `json:"seed"`
}

// DefaultOptions returns the settings of the paper's evaluation (§V-B,
// App. H; docs/method.md).
func DefaultOptions() Options {
	return Options{Window: 120, DegradationFraction: 0.5, Baseline: "reactive", Reference: "static",
		Confidence: 0.95, Resamples: 10000, Seed: 1, SLOFraction: 0.8, Deployable: DeployablePolicies()}
}

// Validate checks the options.
func (o Options) Validate() error {
	var errs []error
	if !(o.Window > 0) || math.IsInf(o.Window, 1) {
		errs = append(errs, fmt.Errorf("window %vs, want a finite number > 0", o.Window))
	}
	if !(o.DegradationFraction > 0 && o.DegradationFraction < 1) {
		errs = append(errs, fmt.Errorf("degradation fraction %v, want in (0, 1)", o.DegradationFraction))
	}
	if !(o.SLOFraction > 0 && o.SLOFraction <= 1) {
		errs = append(errs, fmt.Errorf("SLO fraction %v, want in (0, 1]", o.SLOFraction))
	}
	if !(o.Confidence > 0 && o.Confidence < 1) {
		errs = append(errs, fmt.Errorf("confidence %v, want in (0, 1)", o.Confidence))
	}
	if o.Resamples < 1 {
		errs = append(errs, fmt.Errorf("resamples %d, want >= 1", o.Resamples))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eval: invalid options: %w", err)
	}
	return nil
}

// Cell summarises the repeats of one policy on one scenario. Times are in
// seconds since congestion start, rates in bytes/s; NaN marks "no value"
// (for example no repeat rerouted).
type Cell struct {
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	Repeats  int    `json:"repeats"`
	// MeanThroughput is the mean over repeats of each episode's mean φ in the window.
	MeanThroughput float64 `json:"mean_throughput"`
	MinThroughput  float64 `json:"min_throughput"`
	MaxThroughput  float64 `json:"max_throughput"`
	// Fired counts repeats with a reroute in the window; FirstReroute is the
	// mean time of their first one.
	Fired        int     `json:"fired"`
	FirstReroute float64 `json:"first_reroute"`
	// SecondFired and SecondReroute do the same for a second reroute.
	SecondFired   int     `json:"second_fired"`
	SecondReroute float64 `json:"second_reroute"`
	// OverflowAtReroute is the mean ξ on the old switch at the first reroute.
	OverflowAtReroute float64 `json:"overflow_at_reroute"`
	// Degraded counts repeats whose throughput fell below the degradation
	// fraction of baseline; Degradation is the mean onset.
	Degraded    int     `json:"degraded"`
	Degradation float64 `json:"degradation"`
	// Lead is the mean over fired repeats of (reference degradation onset −
	// first reroute): positive = the flow moved before it would degrade.
	// It is NaN (no lead) where the reference never degraded or did not
	// run in the scenario (NoReference).
	Lead float64 `json:"lead"`
	// NoReference is set when the reference policy did not run in the
	// scenario, so that there is no onset to lead.
	NoReference bool `json:"no_reference,omitempty"`
	// Reroutes counts the moves in the window over all repeats;
	// Destinations says where they went, "agg2 ×3, agg4 ×1" (switches in
	// order of first use).
	Reroutes     int    `json:"reroutes"`
	Destinations string `json:"destinations"`
	// Moves is the mean number of moves per repeat in the window
	// (Reroutes / Repeats).
	Moves float64 `json:"moves"`
	// SLOSeconds is the mean over repeats of the time in the window with
	// the flow below Options.SLOFraction of its baseline, seconds.
	SLOSeconds float64 `json:"slo_seconds"`

	// Kind is the protected flow's kind of traffic (sim.KindBulk when the
	// episodes name none).
	Kind string `json:"kind"`
	// LatencyP50 and LatencyP99 are the median and 99th percentile of the
	// episodes' per-sample latency (Episode.Latency) in the window over all
	// repeats, seconds; NaN where no sample had one.
	LatencyP50 float64 `json:"latency_p50"`
	LatencyP99 float64 `json:"latency_p99"`
	// KindSLOSeconds is the mean over repeats of the time in the window the
	// flow missed its kind's objective, seconds: latency above Episode.SLO
	// for rr, goodput below DemandFraction of the demand while the
	// application sends for rate and onoff. NaN for bulk, whose objective
	// is SLOSeconds'.
	KindSLOSeconds float64 `json:"kind_slo_seconds"`
}

// Comparison compares a candidate policy with the baseline policy over the
// scenarios both ran.
type Comparison struct {
	Candidate string   `json:"candidate"`
	Baseline  string   `json:"baseline"`
	Scenarios []string `json:"scenarios"`
	// CandidateMean and BaselineMean are dataset-wide means of the
	// per-scenario mean throughputs, bytes/s.
	CandidateMean float64 `json:"candidate_mean"`
	BaselineMean  float64 `json:"baseline_mean"`
	// Gain is CandidateMean/BaselineMean with its scenario-bootstrap interval.
	Gain   float64 `json:"gain"`
	GainLo float64 `json:"gain_lo"`
	GainHi float64 `json:"gain_hi"`
	// MeanDiff, T and P are the paired t-test across scenarios of
	// candidate − baseline mean throughput (bytes/s).
	MeanDiff float64 `json:"mean_diff"`
	T        float64 `json:"t"`
	P        float64 `json:"p"`
	// LeadScenarios are the scenarios where the baseline rerouted on every
	// repeat and the candidate at least once; Lead is the mean of
	// (baseline first reroute − candidate first reroute) over them, with a
	// t interval.
	LeadScenarios []string `json:"lead_scenarios"`
	Lead          float64  `json:"lead"`
	LeadLo        float64  `json:"lead_lo"`
	LeadHi        float64  `json:"lead_hi"`
	// PerScenario is the candidate's difference from the baseline in each
	// scenario, repeats paired by their traffic seed.
	PerScenario []ScenarioDiff `json:"per_scenario"`
}

// Verdicts of a ScenarioDiff.
const (
	VerdictBetter = "better" // the whole interval above 0
	VerdictWorse  = "worse"  // the whole interval below 0
	VerdictTie    = "tie"    // the interval holds 0, or one pair only
	VerdictNone   = "n/a"    // no repeat of both policies on the same seed
)

// ScenarioDiff is a candidate's mean throughput minus the baseline's in one
// scenario: the mean over repeats of the paired differences (repeat r of
// both policies ran on the same traffic seed), with its t interval at the
// report's confidence. A verdict of tie means the repeats cannot tell the
// two policies apart there, not that they are equal.
type ScenarioDiff struct {
	Scenario string  `json:"scenario"`
	Pairs    int     `json:"pairs"` // repeats run by both policies with the same seed
	Diff     float64 `json:"diff"`  // bytes/s
	DiffLo   float64 `json:"diff_lo"`
	DiffHi   float64 `json:"diff_hi"`
	Verdict  string  `json:"verdict"`
}

// Summary is the evaluation of a set of episodes.
type Summary struct {
	Options     Options      `json:"options"`
	Scenarios   []string     `json:"scenarios"` // in first-seen order
	Policies    []string     `json:"policies"`  // in first-seen order
	Cells       []Cell       `json:"cells"`     // scenario-major, policy-minor; missing pairs omitted
	Comparisons []Comparison `json:"comparisons"`
	// Strongest names the strongest deployable policy of each scenario
	// (Options.Deployable), in the order of Scenarios; empty when none ran.
	Strongest []StrongestCell `json:"strongest,omitempty"`
	// StrongestComparisons set every policy that is not deployable (the
	// agent, the oracle) against the strongest deployable one of each
	// scenario.
	StrongestComparisons []StrongestComparison `json:"strongest_comparisons,omitempty"`
	// Envelopes hold every policy against the best of the deployable
	// policies other than itself, scenario by scenario: the agent's
	// yardstick applied to each policy alike (EnvelopeShortfall). Empty
	// unless two deployable policies ran.
	Envelopes []EnvelopeShortfall `json:"envelopes,omitempty"`
	// KindYardsticks set every policy that is not deployable against the
	// deployable ones on the objective of each kind of flow other than
	// bulk (SLO-violation seconds), one per kind and candidate.
	KindYardsticks []KindYardstick `json:"kind_yardsticks,omitempty"`
	// Notes are printed at the top of the report (warnings such as a model
	// trained on another profile).
	Notes []string `json:"notes,omitempty"`
	// Episodes are the inputs, grouped by scenario and policy, for plotting.
	Episodes map[[2]string][]*Episode `json:"-"`
}

// PolicyMean returns the mean over scenarios of a policy's per-scenario
// mean throughput (the report's "mean" row), bytes/s; NaN when the policy
// ran nowhere.
func (s *Summary) PolicyMean(policy string) float64 {
	var ms []float64
	for _, sc := range s.Scenarios {
		if c, ok := s.Cell(sc, policy); ok {
			ms = append(ms, c.MeanThroughput)
		}
	}
	return mean(ms)
}

// Cell returns the cell of a scenario and policy.
func (s *Summary) Cell(scenario, policy string) (Cell, bool) {
	for _, c := range s.Cells {
		if c.Scenario == scenario && c.Policy == policy {
			return c, true
		}
	}
	return Cell{}, false
}

// Comparison returns the comparison of a candidate with the baseline.
func (s *Summary) Comparison(candidate string) (Comparison, bool) {
	for _, c := range s.Comparisons {
		if c.Candidate == candidate {
			return c, true
		}
	}
	return Comparison{}, false
}

// Summarize computes per-scenario cells and the comparisons with the
// baseline policy (the paper's Tables IV and V). It refuses an invalid
// episode, an episode without a sample in the evaluation window (naming its
// scenario, policy and repeat), and a baseline policy that is not among
// several policies (see Options.Baseline).
func Summarize(eps []*Episode, opt Options) (*Summary, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("eval: no episodes to summarise")
	}
	s := &Summary{Options: opt, Episodes: map[[2]string][]*Episode{}}
	seenS, seenP := map[string]bool{}, map[string]bool{}
	for i, e := range eps {
		if e == nil {
			return nil, fmt.Errorf("eval: episode %d of %d is nil", i, len(eps))
		}
		if err := e.Validate(); err != nil {
			return nil, err
		}
		if err := e.checkWindow(opt.Window); err != nil {
			return nil, err
		}
		if !seenS[e.Scenario] {
			seenS[e.Scenario] = true
			s.Scenarios = append(s.Scenarios, e.Scenario)
		}
		if !seenP[e.Policy] {
			seenP[e.Policy] = true
			s.Policies = append(s.Policies, e.Policy)
		}
		k := [2]string{e.Scenario, e.Policy}
		s.Episodes[k] = append(s.Episodes[k], e)
	}
	if opt.Baseline != "" && !seenP[opt.Baseline] && len(s.Policies) > 1 {
		return nil, fmt.Errorf("eval: baseline policy %q is not among the episodes' policies %q, want one of them", opt.Baseline, s.Policies)
	}
	for _, sc := range s.Scenarios {
		refEps := s.Episodes[[2]string{sc, opt.Reference}]
		ref := meanOnset(refEps, opt)
		for _, p := range s.Policies {
			if group := s.Episodes[[2]string{sc, p}]; len(group) > 0 {
				s.Cells = append(s.Cells, summariseCell(sc, p, group, ref, len(refEps) > 0, opt))
			}
		}
	}
	for _, p := range s.Policies {
		if p != opt.Baseline && seenP[opt.Baseline] {
			c, err := s.compare(p, comparisonRNG(opt.Seed, p))
			if err != nil {
				return nil, fmt.Errorf("eval: compare %s with %s: %w", p, opt.Baseline, err)
			}
			s.Comparisons = append(s.Comparisons, c)
		}
	}
	if err := s.strongest(); err != nil {
		return nil, err
	}
	if err := s.kindYardsticks(); err != nil {
		return nil, err
	}
	return s, nil
}

// comparisonRNG returns the bootstrap generator of the comparison of
// candidate with the baseline: seeded by seed and an FNV-1a hash of the
// candidate's name, so it does not depend on which other policies ran.
func comparisonRNG(seed uint64, candidate string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(candidate))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// meanOnset is the mean degradation onset of the episodes that degraded;
// NaN when none did (there is then no onset to lead).
func meanOnset(eps []*Episode, opt Options) float64 {
	var ts []float64
	for _, e := range eps {
		if t, ok := e.degradation(opt.DegradationFraction, opt.Window); ok {
			ts = append(ts, t)
		}
	}
	return mean(ts)
}

// summariseCell summarises one scenario and policy. refOnset is the
// reference policy's mean onset (NaN: it never degraded), hasRef whether
// the reference ran at all; without it there is no lead.
func summariseCell(sc, p string, eps []*Episode, refOnset float64, hasRef bool, opt Options) Cell {
	c := Cell{Scenario: sc, Policy: p, Repeats: len(eps), MinThroughput: math.Inf(1), MaxThroughput: math.Inf(-1), NoReference: !hasRef}
	var means, first, second, ovf, onset, lead, slo []float64
	var dests []string
	count := map[string]int{}
	for _, e := range eps {
		for _, r := range e.Reroutes {
			if r.At < 0 || r.At >= opt.Window {
				continue
			}
			c.Reroutes++
			name := e.switchName(r.To)
			if count[name] == 0 {
				dests = append(dests, name)
			}
			count[name]++
		}
		m := e.meanThroughput(opt.Window)
		means = append(means, m)
		slo = append(slo, e.belowSeconds(opt.SLOFraction, opt.Window))
		c.MinThroughput = math.Min(c.MinThroughput, m)
		c.MaxThroughput = math.Max(c.MaxThroughput, m)
		own, degraded := e.degradation(opt.DegradationFraction, opt.Window)
		if degraded {
			onset = append(onset, own)
		}
		if r, ok := e.reroute(0, opt.Window); ok {
			first = append(first, r.At)
			ovf = append(ovf, r.Overflow)
			if hasRef && !math.IsNaN(refOnset) {
				lead = append(lead, refOnset-r.At)
			}
		}
		if r, ok := e.reroute(1, opt.Window); ok {
			second = append(second, r.At)
		}
	}
	c.MeanThroughput = mean(means)
	c.Moves = float64(c.Reroutes) / float64(c.Repeats)
	c.SLOSeconds = mean(slo)
	c.Fired, c.FirstReroute = len(first), mean(first)
	c.SecondFired, c.SecondReroute = len(second), mean(second)
	c.OverflowAtReroute = mean(ovf)
	c.Degraded, c.Degradation = len(onset), mean(onset)
	c.Lead = mean(lead)
	parts := make([]string, len(dests))
	for i, d := range dests {
		parts[i] = fmt.Sprintf("%s ×%d", d, count[d])
	}
	c.Destinations = strings.Join(parts, ", ")
	c.summariseKind(eps, opt.Window)
	return c
}

func (s *Summary) compare(candidate string, rng *rand.Rand) (Comparison, error) {
	opt := s.Options
	cmp := Comparison{Candidate: candidate, Baseline: opt.Baseline}
	var a, b, leads []float64
	for _, sc := range s.Scenarios {
		cc, ok1 := s.Cell(sc, candidate)
		bc, ok2 := s.Cell(sc, opt.Baseline)
		if !ok1 || !ok2 {
			continue
		}
		cmp.Scenarios = append(cmp.Scenarios, sc)
		a = append(a, cc.MeanThroughput)
		b = append(b, bc.MeanThroughput)
		if bc.Fired == bc.Repeats && cc.Fired > 0 {
			cmp.LeadScenarios = append(cmp.LeadScenarios, sc)
			leads = append(leads, bc.FirstReroute-cc.FirstReroute)
		}
	}
	for _, sc := range cmp.Scenarios {
		d, err := s.scenarioDiff(sc, candidate, opt.Baseline)
		if err != nil {
			return Comparison{}, err
		}
		cmp.PerScenario = append(cmp.PerScenario, d)
	}
	cmp.CandidateMean, cmp.BaselineMean = mean(a), mean(b)
	cmp.Gain = cmp.CandidateMean / cmp.BaselineMean
	var err error
	if cmp.GainLo, cmp.GainHi, err = bootstrapRatioCI(a, b, opt.Confidence, opt.Resamples, rng); err != nil {
		return Comparison{}, fmt.Errorf("gain interval over scenarios %v: %w", cmp.Scenarios, err)
	}
	t, err := pairedTTest(a, b)
	if err != nil {
		return Comparison{}, fmt.Errorf("throughput over scenarios %v: %w", cmp.Scenarios, err)
	}
	cmp.MeanDiff, cmp.T, cmp.P = t.MeanDiff, t.T, t.P
	if cmp.Lead, cmp.LeadLo, cmp.LeadHi, err = tInterval(leads, opt.Confidence); err != nil {
		return Comparison{}, fmt.Errorf("lead over scenarios %v: %w", cmp.LeadScenarios, err)
	}
	return cmp, nil
}

// scenarioDiff pairs the candidate's and the baseline policy's episodes of a
// scenario by seed and returns the mean paired difference of their window
// means with its t interval. A seed that either policy ran more than once
// (traces merged from several runs) pairs nothing: which of its episodes
// belongs with which is unknown.
func (s *Summary) scenarioDiff(sc, candidate, baseline string) (ScenarioDiff, error) {
	return s.scenarioDiffOf(sc, candidate, baseline, func(e *Episode) float64 { return e.meanThroughput(s.Options.Window) })
}

// scenarioDiffOf is scenarioDiff of another per-episode metric, higher
// better: the verdict is "better" when the candidate's metric is above
// the baseline's.
func (s *Summary) scenarioDiffOf(sc, candidate, baseline string, metric func(*Episode) float64) (ScenarioDiff, error) {
	opt := s.Options
	bySeed := func(p string) map[uint64][]float64 {
		m := map[uint64][]float64{}
		for _, e := range s.Episodes[[2]string{sc, p}] {
			m[e.Seed] = append(m[e.Seed], metric(e))
		}
		return m
	}
	base, cand := bySeed(baseline), bySeed(candidate)
	var diffs []float64
	for _, e := range s.Episodes[[2]string{sc, candidate}] {
		b, c := base[e.Seed], cand[e.Seed]
		if len(b) == 1 && len(c) == 1 {
			diffs = append(diffs, c[0]-b[0])
		}
	}
	d := ScenarioDiff{Scenario: sc, Pairs: len(diffs), Diff: math.NaN(), DiffLo: math.NaN(), DiffHi: math.NaN(), Verdict: VerdictNone}
	if len(diffs) == 0 {
		return d, nil
	}
	m, lo, hi, err := tInterval(diffs, opt.Confidence)
	if err != nil {
		return ScenarioDiff{}, fmt.Errorf("difference in %s: %w", sc, err)
	}
	d.Diff, d.DiffLo, d.DiffHi, d.Verdict = m, lo, hi, VerdictTie
	switch {
	case lo > 0:
		d.Verdict = VerdictBetter
	case hi < 0:
		d.Verdict = VerdictWorse
	}
	return d, nil
}
