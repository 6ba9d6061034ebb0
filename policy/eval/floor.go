package eval

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/proflow-sdn/proflow/internal/workpool"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// FloorSpec describes a Floor search: on every scenario, never moving and
// every single-move schedule (MovePolicy every Every from congestion start
// to the end of the window, to every other switch), with the policies
// beside them, all on the same seeds.
type FloorSpec struct {
	// Scenarios each protect one flow of a kind other than bulk (bulk
	// flows have Bound, which judges mean throughput).
	Scenarios []*sim.Scenario
	// Rules are the deployable rules: the single one with the fewest mean
	// SLO seconds over a kind's scenarios is the yardstick (FloorKind).
	Rules []PolicySpec
	// Candidates are policies to set beside the floor (the agent, the
	// oracle); optional.
	Candidates []PolicySpec
	// Every is the spacing of the schedules' move times; 0 is
	// Config.Interval, every decision time. A coarser spacing runs fewer
	// episodes and can only raise the floor.
	Every time.Duration
	// Repeats per scenario and policy; repeat r of every policy on a
	// scenario runs with EpisodeSeed(Seed, name, r), the seed evaluate
	// gives it.
	Repeats int
	Seed    uint64
	// Config is the simulated fabric (zero: sim.DefaultConfig()).
	Config sim.Config
	// Parallelism is the number of episodes simulated at once.
	Parallelism int
	// Progress, when set, is called after each episode.
	Progress func(done, total int)
}

// FloorMove is a single-move schedule and its SLO seconds in one scenario.
type FloorMove struct {
	// At is the move's time in seconds after congestion start, To the
	// switch it moves to; To is -1 for never moving (At is then 0).
	At float64 `json:"at"`
	To int     `json:"to"`
	// SLO is the protected flow's SLO-violation seconds by its kind's
	// objective, the mean over the repeats.
	SLO float64 `json:"slo_s"`
}

// FloorRow is what a policy moving the flow at most once can do in one
// scenario, picked with hindsight, beside what the rules and candidates
// did. All SLO seconds are means over the repeats.
type FloorRow struct {
	Scenario string `json:"scenario"`
	Kind     string `json:"kind"`
	// Never is never moving (static).
	Never float64 `json:"never_s"`
	// Hindsight is the schedule with the fewest SLO seconds: never moving,
	// or one move at one of the searched times to one switch. Ties go to
	// never moving, then to the earliest move.
	Hindsight FloorMove `json:"hindsight"`
	// Rules and Candidates hold each policy's SLO seconds by name.
	Rules      map[string]float64 `json:"rules"`
	Candidates map[string]float64 `json:"candidates,omitempty"`
	// Best is the fewest SLO seconds anything measured reached here:
	// Hindsight, a rule or a candidate (which may move more than once).
	Best float64 `json:"best_s"`
}

// Floor runs the spec and returns one FloorRow per scenario, in order. It
// refuses a scenario with several protected flows or a bulk one, and a
// spec without a scenario, a rule or a repeat.
func Floor(ctx context.Context, spec FloorSpec) ([]FloorRow, error) {
	if len(spec.Scenarios) == 0 || len(spec.Rules) == 0 || spec.Repeats < 1 {
		return nil, errors.New("eval: floor needs at least one scenario, one rule and one repeat")
	}
	cfg := spec.Config
	if cfg.Switches == 0 {
		cfg = sim.DefaultConfig()
	}
	every := spec.Every
	if every == 0 {
		every = cfg.Interval
	}
	if every < cfg.Interval {
		return nil, fmt.Errorf("eval: floor: schedules every %v, want a positive spacing of at least the control interval %v (a move lands at a decision time)", every, cfg.Interval)
	}
	topo := cfg.Topology()
	type entry struct {
		spec      PolicySpec
		move      FloorMove // a schedule (never: To -1)
		rule      bool
		candidate bool
	}
	var eps []sim.EpisodeSpec
	entries := make([][]entry, len(spec.Scenarios))
	index := make([][][]int, len(spec.Scenarios)) // scenario, entry, repeat → eps
	for i, sc := range spec.Scenarios {
		if sc == nil {
			return nil, fmt.Errorf("eval: floor: scenario %d is nil", i)
		}
		if err := sc.Validate(cfg); err != nil {
			return nil, fmt.Errorf("eval: floor: %w", err)
		}
		if MultiFlow(sc) || sc.PrimaryKind().Name() == sim.KindBulk {
			return nil, fmt.Errorf("eval: floor: scenario %s protects %d flows of kind %s; the floor counts one flow's SLO seconds by its kind's objective, want one rr, rate or onoff flow (proflow bound judges bulk flows)",
				sc.Name, max(1, len(sc.Protected)), sc.PrimaryKind().Name())
		}
		home, err := topo.SwitchIndex(sc.ProtectedSwitch)
		if err != nil {
			return nil, fmt.Errorf("eval: floor: scenario %s: %w", sc.Name, err)
		}
		es := []entry{{spec: neverMove(), move: FloorMove{To: -1}}}
		for t := time.Duration(0); t < sc.Length()-sc.Start(); t += every {
			for k := range topo.NumSwitches() {
				if k != home {
					es = append(es, entry{spec: MovePolicy(t, k), move: FloorMove{At: t.Seconds(), To: k}})
				}
			}
		}
		for _, r := range spec.Rules {
			es = append(es, entry{spec: r, rule: true})
		}
		for _, c := range spec.Candidates {
			es = append(es, entry{spec: c, candidate: true})
		}
		entries[i] = es
		index[i] = make([][]int, len(es))
		for p, en := range es {
			factory, err := en.spec.factoryFor(sc, cfg)
			if err != nil {
				return nil, err
			}
			for r := range spec.Repeats {
				index[i][p] = append(index[i][p], len(eps))
				eps = append(eps, sim.EpisodeSpec{Scenario: sc, Seed: EpisodeSeed(spec.Seed, sc.Name, r), Config: cfg, Policy: en.spec.Name, NewPolicy: factory})
			}
		}
	}
	slo := make([]float64, len(eps))
	errs := workpool.Run(ctx, len(eps), spec.Parallelism, func(ctx context.Context, j int) error {
		tr, err := sim.RunEpisode(ctx, eps[j])
		if err != nil {
			return fmt.Errorf("eval: floor: %w", err)
		}
		ep, err := FromTrace(tr, 0)
		if err != nil {
			return err
		}
		sc := eps[j].Scenario
		ep.SetKind(sc.PrimaryKind(), eps[j].Config, sc.Start())
		slo[j] = ep.violationSeconds((sc.Length() - sc.Start()).Seconds())
		return nil
	}, spec.Progress)
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return nil, err
	}
	out := make([]FloorRow, len(spec.Scenarios))
	for i, sc := range spec.Scenarios {
		row := FloorRow{Scenario: sc.Name, Kind: sc.PrimaryKind().Name(), Rules: map[string]float64{}}
		best := math.Inf(1)
		for p, en := range entries[i] {
			v := 0.0
			for _, e := range index[i][p] {
				v += slo[e] / float64(len(index[i][p]))
			}
			best = min(best, v)
			switch {
			case en.rule:
				row.Rules[en.spec.Name] = v
			case en.candidate:
				if row.Candidates == nil {
					row.Candidates = map[string]float64{}
				}
				row.Candidates[en.spec.Name] = v
			default:
				m := en.move
				m.SLO = v
				if p == 0 {
					row.Never, row.Hindsight = v, m
				} else if v < row.Hindsight.SLO {
					row.Hindsight = m
				}
			}
		}
		row.Best = best
		out[i] = row
	}
	return out, nil
}

// FloorKind sums up one kind's FloorRows: means over its scenarios, and
// the floor against the best single rule.
type FloorKind struct {
	Kind      string `json:"kind"`
	Scenarios int    `json:"scenarios"`
	// Hindsight is the mean of the rows' Hindsight SLO seconds: what a
	// policy moving at most once reaches when it knows each scenario in
	// advance. Best is the mean of the rows' Best.
	Hindsight float64 `json:"hindsight_s"`
	Best      float64 `json:"best_s"`
	// BestRule is the rule with the fewest mean SLO seconds over the
	// kind's scenarios, BestRuleSLO that mean: the yardstick.
	BestRule    string  `json:"best_rule"`
	BestRuleSLO float64 `json:"best_rule_s"`
	// Ratio is Hindsight / BestRuleSLO, with a scenario-bootstrap
	// interval [Lo, Hi] (NaN where the best rule misses nothing).
	Ratio  float64 `json:"ratio"`
	Lo, Hi float64
	// Candidates holds each candidate's mean SLO seconds by name.
	Candidates map[string]float64 `json:"candidates,omitempty"`
}

// FloorKinds sums rows up per kind, in the order the kinds first appear;
// rng draws the bootstrap resamples (2000 of them, 95% intervals).
func FloorKinds(rows []FloorRow, rng *rand.Rand) []FloorKind {
	var kinds []string
	for _, r := range rows {
		if !slices.Contains(kinds, r.Kind) {
			kinds = append(kinds, r.Kind)
		}
	}
	out := make([]FloorKind, 0, len(kinds))
	for _, k := range kinds {
		var of []FloorRow
		for _, r := range rows {
			if r.Kind == k {
				of = append(of, r)
			}
		}
		fk := FloorKind{Kind: k, Scenarios: len(of), BestRuleSLO: math.Inf(1), Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		hind := make([]float64, len(of))
		for i, r := range of {
			hind[i] = r.Hindsight.SLO
			fk.Hindsight += r.Hindsight.SLO / float64(len(of))
			fk.Best += r.Best / float64(len(of))
		}
		for _, name := range slices.Sorted(maps.Keys(of[0].Rules)) {
			m := 0.0
			for _, r := range of {
				m += r.Rules[name] / float64(len(of))
			}
			if m < fk.BestRuleSLO || (m == fk.BestRuleSLO && name < fk.BestRule) {
				fk.BestRule, fk.BestRuleSLO = name, m
			}
		}
		if fk.BestRule == "" {
			fk.BestRuleSLO = math.NaN() // no rule ran
		}
		rule := make([]float64, len(of))
		for i, r := range of {
			rule[i] = r.Rules[fk.BestRule]
		}
		if fk.BestRuleSLO > 0 {
			fk.Ratio = fk.Hindsight / fk.BestRuleSLO
			if lo, hi, err := bootstrapRatioCI(hind, rule, 0.95, 2000, rng); err == nil {
				fk.Lo, fk.Hi = lo, hi
			}
		}
		for _, r := range of {
			for name, v := range r.Candidates {
				if fk.Candidates == nil {
					fk.Candidates = map[string]float64{}
				}
				fk.Candidates[name] += v / float64(len(of))
			}
		}
		out = append(out, fk)
	}
	return out
}
