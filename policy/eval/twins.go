package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/workpool"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// MovePolicy returns a scripted policy that is not deployable: it keeps
// the protected flow where it is until at after congestion start, then, at
// the first decision from then on, moves it to switch to (unless it is
// there) and stays. It is one point of the space of single-move schedules
// that Bound searches.
func MovePolicy(at time.Duration, to int) PolicySpec {
	name := fmt.Sprintf("move-%v-%d", at, to)
	return PolicySpec{
		Name: name,
		New: func(proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			return nil, nil, nil, fmt.Errorf("eval: the %s policy reads the scenario's start; build it with ForScenario", name)
		},
		ForScenario: func(sc *sim.Scenario, cfg sim.Config) (sim.PolicyFactory, error) {
			when := cfg.Epoch.Add(sc.Start() + at)
			return func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
				if to < 0 || to >= topo.NumSwitches() {
					return nil, nil, nil, fmt.Errorf("eval: %s: switch %d, want one of the topology's %d", name, to, topo.NumSwitches())
				}
				enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
				if err != nil {
					return nil, nil, nil, err
				}
				return enc, &scheduledMove{at: when, to: to}, policy.Immediate(), nil
			}, nil
		},
	}
}

// scheduledMove is the policy MovePolicy builds for one episode.
type scheduledMove struct {
	at    time.Time
	to    int
	moved bool
}

// Score keeps the current switch until the move's time, then once scores
// the move's switch above it.
func (m *scheduledMove) Score(scores []float64, in *proflow.Input) error {
	if in == nil || in.Current < 0 || in.Current >= len(scores) || m.to >= len(scores) {
		return fmt.Errorf("eval: scheduled move: input for %d scores, want a current switch and switch %d among them", len(scores), m.to)
	}
	clear(scores)
	scores[in.Current] = 1
	if m.moved || in.Time.Before(m.at) {
		return nil
	}
	m.moved = true
	scores[m.to] = 2
	return nil
}

// Reset forgets the move, for a new episode.
func (m *scheduledMove) Reset() { m.moved = false }

// Twin is a pair of scenarios that give a controller the same observations
// until Diverge after congestion start and differ after it: a scenario and
// its sim.Scenario.EndedAt twin, say. Until Diverge no policy, learned or
// not, can tell which of the two it is in, so whatever it does by then it
// does in both.
type Twin struct {
	A, B *sim.Scenario
	// Kind labels B in reports: "end" for A.EndedAt(Diverge), "freeze"
	// for A.FrozenAt(Diverge); optional.
	Kind string
	// Diverge is the last decision time, after congestion start, at which
	// the two are still the same to a controller.
	Diverge time.Duration
}

// BoundSpec describes a Bound search: for every twin, every single-move
// schedule (MovePolicy at every decision time of the window, to every
// other switch, and never moving) and every rule, on both scenarios.
type BoundSpec struct {
	Twins []Twin
	// Rules are the deployable rules whose best in each scenario is the
	// yardstick (DeployablePolicies, built with ReferencePolicy).
	Rules []PolicySpec
	// Candidates are policies to place beside the bound (the agent): each
	// runs on both scenarios of every twin, and Member.Candidates holds
	// its mean. Optional.
	Candidates []PolicySpec
	// Repeats per scenario and policy; repeat r of both twins runs with
	// the same seed, derived from Seed and A's name.
	Repeats int
	Seed    uint64
	// Config is the simulated fabric (zero: sim.DefaultConfig()).
	Config sim.Config
	// Parallelism is the number of episodes simulated at once.
	Parallelism int
	// Progress, when set, is called after each episode.
	Progress func(done, total int)
}

// Schedule is a single-move schedule and its outcome in one scenario.
type Schedule struct {
	// At is the move's decision time in seconds after congestion start;
	// To the switch it moves to, -1 for never moving (then At is 0).
	At float64 `json:"at"`
	To int     `json:"to"`
	// Mean is the protected flow's mean throughput over the window,
	// bytes/s, averaged over the repeats.
	Mean float64 `json:"mean"`
}

// Member is one scenario of a twin: its best rule and what every
// single-move schedule achieves in it.
type Member struct {
	Scenario string `json:"scenario"`
	// BestRule is the rule with the highest mean in this scenario, and
	// BestRuleMean that mean, bytes/s: the per-scenario yardstick.
	BestRule     string  `json:"best_rule"`
	BestRuleMean float64 `json:"best_rule_mean"`
	// Schedules holds never moving first, then every move in order of
	// time and switch.
	Schedules []Schedule `json:"schedules"`
	// Hindsight is the best of Schedules: what a policy that knew the
	// scenario and moved at most once could get.
	Hindsight Schedule `json:"hindsight"`
	// Candidates holds each BoundSpec.Candidates policy's mean, bytes/s,
	// by name.
	Candidates map[string]float64 `json:"candidates,omitempty"`
}

// Shortfall is how far a mean is behind the member's best rule, as a
// fraction of it: 0.02 is the "more than 2% behind" line; negative when
// ahead.
func (m Member) Shortfall(mean float64) float64 { return 1 - mean/m.BestRuleMean }

// TwinBound is what any policy that moves the flow at most once can do on a
// twin, measured: Least is the smallest worst-case shortfall behind the
// per-scenario best rule over the two scenarios. A policy either moves by
// Diverge, and then makes that same move in both (Commit, the best such
// move for the worse of the two), or it does not, and then the best it can
// do in each is the best schedule moving later or never (Wait, chosen per
// scenario with hindsight). Least above 0.02 means every such policy is
// more than 2% behind the best rule in at least one of the two scenarios.
type TwinBound struct {
	Members [2]Member `json:"members"`
	// Kind is Twin.Kind.
	Kind string `json:"kind,omitempty"`
	// Switches names the switches Schedule.To indexes.
	Switches []string `json:"switches"`
	// Diverge is the last decision time, in seconds after congestion
	// start, at which the two are still the same to a controller:
	// Twin.Diverge, or later when their congesters go on sending alike
	// past it (sim.SameTrafficUntil; an ended twin built while no
	// congester sends parts from its scenario only when the next one
	// arrives), as the never-moving episodes confirm step by step.
	Diverge float64 `json:"diverge"`
	// Commit is the move by Diverge with the smallest larger shortfall
	// (its Mean unset: it differs by member), CommitShortfall its
	// shortfall in each member.
	Commit          Schedule   `json:"commit"`
	CommitShortfall [2]float64 `json:"commit_shortfall"`
	// Wait is, per member, the best schedule that does not move by
	// Diverge, and WaitShortfall its shortfall.
	Wait          [2]Schedule `json:"wait"`
	WaitShortfall [2]float64  `json:"wait_shortfall"`
	// Least is min(max(CommitShortfall), max(WaitShortfall)).
	Least float64 `json:"least"`
}

// Bound runs the spec and returns one TwinBound per twin. Before it
// trusts a twin it checks, on every repeat, that the never-moving
// schedule sees the same observations and throughput in both scenarios at
// every step up to Diverge, and refuses the spec if not: the bound rests
// on the two being indistinguishable until then. Where the two stay the
// same past Diverge, the bound counts them as one until they part
// (TwinBound.Diverge): a move made before then is made in both, which
// only tightens the bound.
func Bound(ctx context.Context, spec BoundSpec) ([]TwinBound, error) {
	if len(spec.Twins) == 0 || len(spec.Rules) == 0 || spec.Repeats < 1 {
		return nil, errors.New("eval: bound needs at least one twin, one rule and one repeat")
	}
	cfg := spec.Config
	if cfg.Switches == 0 {
		cfg = sim.DefaultConfig()
	}
	topo := cfg.Topology()
	pols := make([][]boundPolicy, len(spec.Twins))
	// episode[i][m][p][r] indexes eps: twin i, member m, policy p, repeat r.
	episode := make([][2][][]int, len(spec.Twins))
	uniq := map[string]int{} // episode key → index in eps
	var eps []sim.EpisodeSpec
	var statics []bool // eps[e] never moves: keep its steps
	for i, tw := range spec.Twins {
		if tw.A == nil || tw.B == nil {
			return nil, fmt.Errorf("eval: bound: twin %d lacks a scenario", i)
		}
		if tw.A.Start() != tw.B.Start() || tw.A.Length() != tw.B.Length() || tw.A.ProtectedSwitch != tw.B.ProtectedSwitch {
			return nil, fmt.Errorf("eval: bound: twin %s/%s: the two differ in congestion start, window or protected switch, want the same", tw.A.Name, tw.B.Name)
		}
		w := tw.A.Length() - tw.A.Start()
		if tw.Diverge < 0 || tw.Diverge >= w {
			return nil, fmt.Errorf("eval: bound: twin %s/%s diverges %v after congestion start, want in [0s, %v)", tw.A.Name, tw.B.Name, tw.Diverge, w)
		}
		home, err := topo.SwitchIndex(tw.A.ProtectedSwitch)
		if err != nil {
			return nil, fmt.Errorf("eval: bound: twin %s/%s: %w", tw.A.Name, tw.B.Name, err)
		}
		pols[i] = []boundPolicy{{spec: neverMove(), sched: Schedule{To: -1}}}
		for t := time.Duration(0); t < w; t += cfg.Interval {
			for k := range topo.NumSwitches() {
				if k != home {
					pols[i] = append(pols[i], boundPolicy{spec: MovePolicy(t, k), sched: Schedule{At: t.Seconds(), To: k}})
				}
			}
		}
		for _, r := range spec.Rules {
			pols[i] = append(pols[i], boundPolicy{spec: r, rule: true})
		}
		for _, c := range spec.Candidates {
			pols[i] = append(pols[i], boundPolicy{spec: c, candidate: true})
		}
		for m, sc := range [2]*sim.Scenario{tw.A, tw.B} {
			if err := sc.Validate(cfg); err != nil {
				return nil, fmt.Errorf("eval: bound: %w", err)
			}
			if MultiFlow(sc) || sc.PrimaryKind().Name() != sim.KindBulk {
				return nil, fmt.Errorf("eval: bound: scenario %s protects %d flows of kind %s; the bound compares one bulk flow's mean throughput, want one bulk flow",
					sc.Name, max(1, len(sc.Protected)), sc.PrimaryKind().Name())
			}
			episode[i][m] = make([][]int, len(pols[i]))
			for p, pol := range pols[i] {
				factory, err := pol.spec.factoryFor(sc, cfg)
				if err != nil {
					return nil, err
				}
				for r := range spec.Repeats {
					seed := EpisodeSeed(spec.Seed, tw.A.Name, r)
					// Twins that share a scenario (one scenario against
					// several of its twins) share its episodes.
					key := fmt.Sprintf("%s/%s/%d", sc.Name, pol.spec.Name, seed)
					e, ok := uniq[key]
					if !ok {
						e = len(eps)
						uniq[key] = e
						eps = append(eps, sim.EpisodeSpec{Scenario: sc, Seed: seed, Config: cfg, Policy: pol.spec.Name, NewPolicy: factory})
						statics = append(statics, p == 0)
					}
					episode[i][m][p] = append(episode[i][m][p], e)
				}
			}
		}
	}
	means := make([]float64, len(eps))
	steps := make([][]trace.Step, len(eps))
	errs := workpool.Run(ctx, len(eps), spec.Parallelism, func(ctx context.Context, j int) error {
		tr, err := sim.RunEpisode(ctx, eps[j])
		if err != nil {
			return fmt.Errorf("eval: bound: %w", err)
		}
		ep, err := FromTrace(tr, 0)
		if err != nil {
			return err
		}
		sc := eps[j].Scenario
		means[j] = ep.meanThroughput((sc.Length() - sc.Start()).Seconds())
		if statics[j] {
			steps[j] = tr.Steps
		}
		return nil
	}, spec.Progress)
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return nil, err
	}
	out := make([]TwinBound, len(spec.Twins))
	for i, tw := range spec.Twins {
		until := cfg.Epoch.Add(tw.A.Start() + tw.Diverge)
		for r := range spec.Repeats {
			a, b := prefix(steps[episode[i][0][0][r]], until), prefix(steps[episode[i][1][0][r]], until)
			if len(a) == 0 || !reflect.DeepEqual(a, b) {
				return nil, fmt.Errorf("eval: bound: %s and %s do not look the same to a controller up to %v after congestion start (repeat %d), want twins", tw.A.Name, tw.B.Name, tw.Diverge, r)
			}
		}
		diverge := tw.Diverge
		if same := sim.SameTrafficUntil(tw.A, tw.B, tw.Diverge); same > tw.Diverge {
			// Their congesters send alike past Diverge, so every policy
			// still sees the same in both at the decisions before they
			// part: the last decision time before same, confirmed on the
			// never-moving episodes step by step.
			last := cfg.Epoch.Add(tw.A.Start() + (same-1)/cfg.Interval*cfg.Interval)
			for r := range spec.Repeats {
				last = equalThrough(steps[episode[i][0][0][r]], steps[episode[i][1][0][r]], last)
			}
			diverge = max(diverge, last.Sub(cfg.Epoch.Add(tw.A.Start())))
		}
		tb := TwinBound{Diverge: diverge.Seconds(), Kind: tw.Kind, Switches: topo.Switches}
		for m, sc := range [2]*sim.Scenario{tw.A, tw.B} {
			tb.Members[m] = member(sc.Name, pols[i], episode[i][m], means)
		}
		tb.minimax()
		out[i] = tb
	}
	return out, nil
}

// boundPolicy is one policy of a Bound search: a schedule, a rule or a
// candidate.
type boundPolicy struct {
	spec      PolicySpec
	sched     Schedule
	rule      bool
	candidate bool
}

// neverMove is the never-moving schedule.
func neverMove() PolicySpec {
	return immediateSpec("static", func(proflow.Topology) (proflow.Policy, error) { return policy.Static{}, nil })
}

// member sums up one scenario of a twin: each policy's mean over its
// repeats' episodes (episodes[p] indexes means), the best rule, the
// schedules and the candidates.
func member(name string, pols []boundPolicy, episodes [][]int, means []float64) Member {
	mem := Member{Scenario: name, BestRuleMean: math.Inf(-1)}
	for p, pol := range pols {
		v := 0.0
		for _, e := range episodes[p] {
			v += means[e] / float64(len(episodes[p]))
		}
		switch {
		case pol.candidate:
			if mem.Candidates == nil {
				mem.Candidates = map[string]float64{}
			}
			mem.Candidates[pol.spec.Name] = v
		case pol.rule:
			if v > mem.BestRuleMean {
				mem.BestRule, mem.BestRuleMean = pol.spec.Name, v
			}
		default:
			s := pol.sched
			s.Mean = v
			mem.Schedules = append(mem.Schedules, s)
		}
	}
	mem.Hindsight = mem.Schedules[0]
	for _, s := range mem.Schedules {
		if s.Mean > mem.Hindsight.Mean {
			mem.Hindsight = s
		}
	}
	return mem
}

// equalThrough returns the time of the last step, up to until, through
// which a and b are equal step by step (until itself when they are equal
// past it).
func equalThrough(a, b []trace.Step, until time.Time) time.Time {
	last := time.Time{}
	for k := range min(len(a), len(b)) {
		if a[k].Time.After(until) {
			return until
		}
		if !reflect.DeepEqual(a[k], b[k]) {
			return last
		}
		last = a[k].Time
	}
	return last
}

// prefix returns the steps up to and including until.
func prefix(steps []trace.Step, until time.Time) []trace.Step {
	n := 0
	for n < len(steps) && !steps[n].Time.After(until) {
		n++
	}
	return steps[:n]
}

// minimax fills Commit, Wait and Least from the members' schedules, which
// list the same schedules in the same order.
func (tb *TwinBound) minimax() {
	a, b := tb.Members[0], tb.Members[1]
	commit := math.Inf(1)
	for w := range 2 {
		tb.Wait[w] = Schedule{To: -1, Mean: math.Inf(-1)}
	}
	for s := range a.Schedules {
		sa, sb := a.Schedules[s], b.Schedules[s]
		if sa.To >= 0 && sa.At <= tb.Diverge {
			fa, fb := a.Shortfall(sa.Mean), b.Shortfall(sb.Mean)
			if worse := max(fa, fb); worse < commit {
				commit, tb.Commit, tb.CommitShortfall = worse, Schedule{At: sa.At, To: sa.To}, [2]float64{fa, fb}
			}
			continue
		}
		for w, x := range [2]Schedule{sa, sb} {
			if x.Mean > tb.Wait[w].Mean {
				tb.Wait[w] = x
			}
		}
	}
	for w, m := range tb.Members {
		tb.WaitShortfall[w] = m.Shortfall(tb.Wait[w].Mean)
	}
	tb.Least = min(commit, max(tb.WaitShortfall[0], tb.WaitShortfall[1]))
}

// Fan is the bound over a scenario and all its twins at once (FanBound):
// a policy makes one choice in the scenario, its schedule, and that
// choice plays out in every twin that is still the same when the move is
// made; a twin that diverged before the move lets the policy do the best
// it could from then on. It is the ski-rental question of proactive
// placement: move early, and the congestion may leave right after,
// making the move a needless cost; wait, and the congestion may stay.
type Fan struct {
	Scenario string `json:"scenario"`
	// Twins is how many twins the fan holds, and LastDiverge the latest
	// time, seconds after congestion start, at which one is still the
	// same as the scenario.
	Twins       int     `json:"twins"`
	LastDiverge float64 `json:"last_diverge"`
	// Curve holds, for never moving first and then every move of the
	// scenario's schedules, the shortfall in the scenario (Own) and the
	// worst shortfall over the scenario and every twin (Worst), with the
	// twin or the scenario where it is worst.
	Curve []FanPoint `json:"curve"`
	// Best is the point of Curve with the least Worst.
	Best FanPoint `json:"best"`
	// Candidates holds each candidate policy's (BoundSpec.Candidates)
	// largest shortfall over the scenario and its twins, with where; its
	// Schedule is zero.
	Candidates map[string]FanPoint `json:"candidates,omitempty"`
	// Switches names the switches Schedule.To indexes.
	Switches []string `json:"switches"`
}

// FanPoint is one schedule's outcome over a fan.
type FanPoint struct {
	Schedule Schedule `json:"schedule"`
	// Own is the shortfall behind the best rule in the scenario itself.
	Own float64 `json:"own"`
	// Worst is the largest shortfall over the scenario and its twins,
	// and WorstIn names where it is.
	Worst   float64 `json:"worst"`
	WorstIn string  `json:"worst_in"`
}

// FanBound groups the bounds by their scenario (Members[0]) and returns,
// per scenario, the fan over all its twins; the bounds must come from one
// Bound call (the schedules of a scenario listed alike in every twin).
// More twins can only raise a fan's least Worst: any set of twins gives a
// valid bound.
func FanBound(bounds []TwinBound) []Fan {
	var order []string
	groups := map[string][]TwinBound{}
	for _, tb := range bounds {
		sc := tb.Members[0].Scenario
		if _, ok := groups[sc]; !ok {
			order = append(order, sc)
		}
		groups[sc] = append(groups[sc], tb)
	}
	fans := make([]Fan, 0, len(order))
	for _, sc := range order {
		g := groups[sc]
		x := g[0].Members[0]
		// After diverging, each twin's best: the best schedule that had
		// not moved by its divergence.
		later := make([]float64, len(g))
		for i, tb := range g {
			later[i] = tb.WaitShortfall[1]
		}
		last := 0.0
		for _, tb := range g {
			last = max(last, tb.Diverge)
		}
		fan := Fan{Scenario: sc, Twins: len(g), LastDiverge: last, Switches: g[0].Switches}
		for s, sched := range x.Schedules {
			pt := FanPoint{Schedule: sched, Own: x.Shortfall(sched.Mean)}
			pt.Worst, pt.WorstIn = pt.Own, sc
			for i, tb := range g {
				b := tb.Members[1]
				w := later[i]
				if sched.To >= 0 && sched.At <= tb.Diverge {
					w = b.Shortfall(b.Schedules[s].Mean)
				}
				if w > pt.Worst {
					pt.Worst, pt.WorstIn = w, b.Scenario
				}
			}
			fan.Curve = append(fan.Curve, pt)
			if s == 0 || pt.Worst < fan.Best.Worst {
				fan.Best = pt
			}
		}
		for name, mean := range x.Candidates {
			pt := FanPoint{Own: x.Shortfall(mean), WorstIn: sc}
			pt.Worst = pt.Own
			for _, tb := range g {
				b := tb.Members[1]
				if w := b.Shortfall(b.Candidates[name]); w > pt.Worst {
					pt.Worst, pt.WorstIn = w, b.Scenario
				}
			}
			if fan.Candidates == nil {
				fan.Candidates = map[string]FanPoint{}
			}
			fan.Candidates[name] = pt
		}
		fans = append(fans, fan)
	}
	return fans
}
