package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/workpool"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Joint modes of a multi-flow episode: the JointPlacer between the per-flow
// gates and the enforcer.
const (
	// JointIndependent runs proflow.Independent: every admitted move goes
	// to its gate's target, as if each flow had a controller of its own.
	JointIndependent = "independent"
	// JointGreedy runs proflow.Greedy: moves share each switch's headroom.
	JointGreedy = "joint"
)

// JointModes returns the joint modes in report order.
func JointModes() []string { return []string{JointIndependent, JointGreedy} }

// NewJointPlacer returns a fresh JointPlacer for a joint mode.
func NewJointPlacer(mode string) (proflow.JointPlacer, error) {
	switch mode {
	case JointIndependent:
		return proflow.Independent{}, nil
	case JointGreedy:
		return &proflow.Greedy{}, nil
	}
	return nil, fmt.Errorf("eval: unknown joint mode %q, want %s or %s", mode, JointIndependent, JointGreedy)
}

// MultiFlow reports whether a scenario protects several flows: such
// scenarios are evaluated with MultiSweep, the others with Sweep.
func MultiFlow(sc *sim.Scenario) bool { return sc != nil && len(sc.Protected) > 1 }

// MultiEpisode is one episode of a MultiController protecting every flow of
// a scenario: each flow's true goodput and switch per step, the moves, and
// the herding of every step.
type MultiEpisode struct {
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	// Mode is the joint mode (JointIndependent or JointGreedy).
	Mode   string `json:"mode"`
	Repeat int    `json:"repeat"`
	Seed   uint64 `json:"seed"`
	// Flows are the protected flows in the fabric's order (the primary first).
	Flows []proflow.ProtectedFlow `json:"flows"`
	// Switches names the aggregation switches by index.
	Switches []string `json:"switches,omitempty"`
	// T holds the step times in seconds since congestion start.
	T []float64 `json:"t"`
	// Throughput[i][s] is flow i's true goodput over the interval before
	// step s, bytes/s (Fabric.FlowTruths).
	Throughput [][]float64 `json:"throughput"`
	// Switch[i][s] is the switch carrying flow i after step s.
	Switch [][]int `json:"switch"`
	// Herding[s] is step s's StepSummary.Herding: the most protected flows
	// moved onto one switch in that step.
	Herding []int `json:"herding"`
	// OverBudget[s] is, over the switches that received flows in step s,
	// the largest number of flows moved there beyond the switch's budget in
	// flows (see MultiCell.OverBudget); 0 when none.
	OverBudget []int `json:"over_budget"`
	// JointHeld counts the admitted moves the joint step held.
	JointHeld int `json:"joint_held"`
	// Reroutes lists every move of a protected flow in time order.
	Reroutes []FlowReroute `json:"reroutes"`
}

// FlowReroute is one move of one protected flow.
type FlowReroute struct {
	// Flow is the flow's index in MultiEpisode.Flows.
	Flow int `json:"flow"`
	// At is the decision time in seconds since congestion start.
	At   float64 `json:"at"`
	From int     `json:"from"`
	To   int     `json:"to"`
}

// id names the episode in errors.
func (e *MultiEpisode) id() string {
	return fmt.Sprintf("eval: episode %s/%s/%s/%d", e.Scenario, e.Policy, e.Mode, e.Repeat)
}

// Validate checks that the series line up and hold usable numbers.
func (e *MultiEpisode) Validate() error {
	id := e.id()
	switch {
	case e.Scenario == "" || e.Policy == "" || e.Mode == "":
		return fmt.Errorf("%s: scenario, policy and mode names are required", id)
	case len(e.Flows) == 0:
		return fmt.Errorf("%s: no protected flows", id)
	case len(e.T) == 0:
		return fmt.Errorf("%s: no samples", id)
	case len(e.Throughput) != len(e.Flows) || len(e.Switch) != len(e.Flows):
		return fmt.Errorf("%s: %d flows, %d throughput and %d switch series, want one per flow", id, len(e.Flows), len(e.Throughput), len(e.Switch))
	case len(e.Herding) != len(e.T) || len(e.OverBudget) != len(e.T):
		return fmt.Errorf("%s: %d times, %d herding and %d over-budget samples, want equal lengths", id, len(e.T), len(e.Herding), len(e.OverBudget))
	}
	for i := range e.Flows {
		if len(e.Throughput[i]) != len(e.T) || len(e.Switch[i]) != len(e.T) {
			return fmt.Errorf("%s: flow %d has %d throughput and %d switch samples, want %d", id, i, len(e.Throughput[i]), len(e.Switch[i]), len(e.T))
		}
		for s, v := range e.Throughput[i] {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("%s: flow %d sample %d holds %v, want a finite rate >= 0", id, i, s, v)
			}
		}
	}
	for s := 1; s < len(e.T); s++ {
		if !(e.T[s] > e.T[s-1]) {
			return fmt.Errorf("%s: sample %d at %vs does not follow %vs", id, s, e.T[s], e.T[s-1])
		}
	}
	return nil
}

// FlowMeans returns every flow's mean goodput over the samples of the
// window (0, window] seconds after congestion start (each stands for the
// interval that ends at it), bytes/s (NaN without a sample there).
func (e *MultiEpisode) FlowMeans(window float64) []float64 {
	out := make([]float64, len(e.Flows))
	for i := range e.Flows {
		sum, n := 0.0, 0
		for s, t := range e.T {
			if inWindow(t, window) {
				sum += e.Throughput[i][s]
				n++
			}
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = sum / float64(n)
		}
	}
	return out
}

// MultiMetrics are one episode's figures (see MultiCell).
type MultiMetrics struct {
	Sum, Min, Jain float64
	Herding        int
	OverBudget     int
	Reroutes       int
}

// Metrics computes the episode's figures over the window (per-flow means,
// their sum, minimum and Jain's index); herding, over-budget and reroutes
// count the whole episode.
func (e *MultiEpisode) Metrics(window float64) MultiMetrics {
	means := e.FlowMeans(window)
	m := MultiMetrics{Min: math.Inf(1), Jain: Jain(means), Herding: slices.Max(e.Herding), OverBudget: slices.Max(e.OverBudget), Reroutes: len(e.Reroutes)}
	for _, x := range means {
		m.Sum += x
		m.Min = math.Min(m.Min, x)
	}
	return m
}

// Jain returns Jain's fairness index of xs, (Σx)² / (n·Σx²): 1 when all are
// equal, 1/n when one takes everything; NaN for no values or all zero.
func Jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if len(xs) == 0 || s2 == 0 {
		return math.NaN()
	}
	return s * s / (float64(len(xs)) * s2)
}

// MultiSpec says what one multi-flow episode runs.
type MultiSpec struct {
	// Scenario is the traffic; every flow of Fabric.Protected is protected.
	Scenario *sim.Scenario
	Seed     uint64
	// Config is the fabric (zero: sim.DefaultConfig()).
	Config sim.Config
	// Policy names the policy; NewPolicy builds one flow's encoder, policy
	// and gate (called once per flow).
	Policy    string
	NewPolicy sim.PolicyFactory
	// Mode is the joint mode (JointIndependent or JointGreedy).
	Mode   string
	Repeat int
	// Observer, when set, sees every step's summary (its Decisions are
	// reused by the next step), and with Recheck every recheck's.
	Observer func(proflow.StepSummary)
	// Recheck lets the controller take readings between steps
	// (proflow.Peeker), so that gates with a recheck
	// (policy.DrainConfig.Recheck) defer moves to one, as a Controller
	// does under sim.RunEpisode. Off, the controller takes no reading
	// between steps and such gates move at the step: the many-flow
	// results of docs/reproduction.md are of that controller.
	Recheck bool
	// Progress is as sim.EpisodeSpec's.
	Progress func(done, total time.Duration)
}

// obsRecorder passes Collect through and keeps what the controller got,
// for the budget of the step's moves.
type obsRecorder struct {
	tel  proflow.Telemetry
	obs  proflow.Observation
	have bool
}

// peekRecorder is an obsRecorder that also peeks (MultiSpec.Recheck).
type peekRecorder struct{ *obsRecorder }

// Peek passes Peek through to the fabric.
func (r peekRecorder) Peek(ctx context.Context, obs *proflow.Observation) error {
	return r.tel.(proflow.Peeker).Peek(ctx, obs)
}

func (r *obsRecorder) Collect(ctx context.Context, obs *proflow.Observation) error {
	r.have = false
	if err := r.tel.Collect(ctx, obs); err != nil {
		return err
	}
	r.obs.CopyFrom(obs)
	r.have = true
	return nil
}

// RunMultiEpisode simulates one episode under a proflow.MultiController
// that protects every flow of the scenario from its initial placement,
// each flow with its own encoder, policy and gate from spec.NewPolicy, and
// the joint mode's placer. The controller runs on the fabric's clock
// exactly as sim.RunEpisode runs a Controller: it reconciles, learns each
// flow's baseline before congestion start (the same warm-up), and steps
// once per interval after the fabric has simulated it. With one protected
// flow and JointIndependent its decisions are RunEpisode's.
func RunMultiEpisode(ctx context.Context, spec MultiSpec) (*MultiEpisode, error) {
	if spec.Scenario == nil {
		return nil, errors.New("eval: run multi-flow episode: scenario is nil")
	}
	name := spec.Scenario.Name
	if spec.NewPolicy == nil {
		return nil, fmt.Errorf("eval: run multi-flow episode %s: policy factory is nil", name)
	}
	joint, err := NewJointPlacer(spec.Mode)
	if err != nil {
		return nil, err
	}
	cfg := spec.Config
	if cfg.Switches == 0 {
		cfg = sim.DefaultConfig()
	}
	fab, err := sim.New(cfg, spec.Scenario, spec.Seed)
	if err != nil {
		return nil, fmt.Errorf("eval: run multi-flow episode %s: %w", name, err)
	}
	topo := fab.Topology()
	mc := proflow.DefaultMultiConfig()
	mc.Topology, mc.Clock, mc.Interval, mc.Joint = topo, fab.Clock(), cfg.Interval, joint
	mc.BaselineWarmup = int(cfg.ControllerWarmup / cfg.Interval)
	rec := &obsRecorder{tel: fab}
	var tel proflow.Telemetry = rec
	if spec.Recheck {
		tel = peekRecorder{rec}
	}
	ctrl, err := proflow.NewMultiController(mc, tel, flowParts(topo, spec.NewPolicy), fab)
	if err != nil {
		return nil, fmt.Errorf("eval: run multi-flow episode %s: %w", name, err)
	}
	flows := fab.Protected()
	for i, pl := range fab.InitialPlacements() {
		if err := ctrl.AddFlow(flows[i], pl.Switch); err != nil {
			return nil, fmt.Errorf("eval: run multi-flow episode %s: build policy %q: %w", name, spec.Policy, err)
		}
	}
	if err := ctrl.Reconcile(ctx); err != nil {
		return nil, fmt.Errorf("eval: run multi-flow episode %s: %w", name, err)
	}
	steps := int(spec.Scenario.Length() / cfg.Interval)
	e := &MultiEpisode{Scenario: name, Policy: spec.Policy, Mode: spec.Mode, Repeat: spec.Repeat, Seed: spec.Seed,
		Flows: flows, Switches: topo.Switches, Throughput: make([][]float64, len(flows)), Switch: make([][]int, len(flows))}
	index := make(map[proflow.FlowID]int, len(flows))
	for i, f := range flows {
		index[f.ID] = i
		e.Throughput[i] = make([]float64, 0, steps)
		e.Switch[i] = make([]int, 0, steps)
	}
	every := max(1, int(sim.ProgressEvery/cfg.Interval))
	start := fab.CongestionStart()
	var truths []sim.FlowTruth
	var bud budget
	for s := range steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("eval: run multi-flow episode %s: %w", name, err)
		}
		stepAt := fab.Now().Add(cfg.Interval)
		for { // the rechecks the last step asked for, each when due
			next, ok := ctrl.NextRecheck()
			if !ok || !next.Before(stepAt) {
				break
			}
			if err := fab.Advance(max(0, next.Sub(fab.Now()))); err != nil {
				return nil, fmt.Errorf("eval: run multi-flow episode %s: %w", name, err)
			}
			rs, ok := ctrl.Recheck(ctx)
			if !ok {
				break
			}
			if spec.Observer != nil {
				spec.Observer(rs)
			}
			for _, d := range rs.Decisions {
				if d.Rerouted {
					e.Reroutes = append(e.Reroutes, FlowReroute{Flow: index[d.Flow], At: rs.Time.Sub(start).Seconds(), From: d.Current, To: d.Target})
				}
			}
		}
		if err := fab.Advance(stepAt.Sub(fab.Now())); err != nil {
			return nil, fmt.Errorf("eval: run multi-flow episode %s: %w", name, err)
		}
		rec.have = false
		sum := ctrl.Step(ctx)
		if spec.Observer != nil {
			spec.Observer(sum)
		}
		t := sum.Time.Sub(start).Seconds()
		e.T = append(e.T, t)
		e.Herding = append(e.Herding, sum.Herding)
		e.JointHeld += sum.JointHeld
		over := 0
		if sum.Rerouted > 0 && rec.have {
			over = bud.over(ctrl, topo, &rec.obs, sum.Decisions)
		}
		e.OverBudget = append(e.OverBudget, over)
		for _, d := range sum.Decisions {
			if d.Rerouted {
				e.Reroutes = append(e.Reroutes, FlowReroute{Flow: index[d.Flow], At: t, From: d.Current, To: d.Target})
			}
		}
		truths = fab.FlowTruths(truths)
		for i, ft := range truths {
			e.Throughput[i] = append(e.Throughput[i], ft.Throughput)
			e.Switch[i] = append(e.Switch[i], ft.Switch)
		}
		if done := s + 1; spec.Progress != nil && (done%every == 0 || done == steps) {
			spec.Progress(time.Duration(done)*cfg.Interval, time.Duration(steps)*cfg.Interval)
		}
	}
	return e, nil
}

// budget measures how far a step's moves exceed each receiving switch's
// budget in flows: the switch's headroom C − ρ_k in the observation the
// controller acted on, over the mean demand max(φ, φ0) of the flows moved
// there, rounded up (what proflow.Greedy admits for equal demands).
type budget struct {
	moved  []int
	demand []float64
}

func (b *budget) over(ctrl *proflow.MultiController, topo proflow.Topology, obs *proflow.Observation, ds []proflow.Decision) int {
	n := topo.NumSwitches()
	b.moved = slices.Grow(b.moved[:0], n)[:n]
	b.demand = slices.Grow(b.demand[:0], n)[:n]
	clear(b.moved)
	clear(b.demand)
	for i, d := range ds {
		if !d.Rerouted || i >= len(obs.Flows) {
			continue
		}
		dem := obs.Flows[i].Throughput
		if base, ok := ctrl.Baseline(d.Flow); ok {
			dem = max(dem, base.Throughput)
		}
		b.moved[d.Target]++
		b.demand[d.Target] += dem
	}
	worst := 0
	for k, m := range b.moved {
		if m == 0 {
			continue
		}
		head := topo.BucketRate - obs.Switches[k].TxRate
		fit := 0
		if head > 0 && b.demand[k] > 0 {
			fit = int(math.Ceil(head / (b.demand[k] / float64(m))))
		}
		worst = max(worst, m-fit)
	}
	return worst
}

// flowParts builds a MultiController's per-flow collaborators from a
// PolicyFactory: one call per flow, so that every flow has its own encoder
// (its own baseline and rates of change), policy and gate.
func flowParts(topo proflow.Topology, factory sim.PolicyFactory) proflow.FlowParts {
	type built struct {
		pol  proflow.Policy
		gate proflow.Gate
	}
	var mu sync.Mutex
	pending := map[proflow.FlowID]built{}
	take := func(f proflow.ProtectedFlow) (built, error) {
		mu.Lock()
		defer mu.Unlock()
		b, ok := pending[f.ID]
		if !ok {
			return built{}, fmt.Errorf("eval: flow %v: policy asked for before its encoder", f.ID)
		}
		return b, nil
	}
	return proflow.FlowParts{
		Encoder: func(f proflow.ProtectedFlow) (proflow.StateEncoder, error) {
			enc, pol, gate, err := factory(topo)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			pending[f.ID] = built{pol, gate}
			mu.Unlock()
			return enc, nil
		},
		Policy: func(f proflow.ProtectedFlow) (proflow.Policy, error) {
			b, err := take(f)
			return b.pol, err
		},
		Gate: func(f proflow.ProtectedFlow) (proflow.Gate, error) {
			b, err := take(f)
			mu.Lock()
			delete(pending, f.ID)
			mu.Unlock()
			return b.gate, err
		},
	}
}

// MultiSweep is an evaluation of multi-flow scenarios: every policy in
// every joint mode on every scenario, Repeats times. Repeat r of a
// scenario uses the same seed (EpisodeSeed) for every policy and mode, so
// joint and independent placement meet the same traffic.
type MultiSweep struct {
	Scenarios []*sim.Scenario
	Policies  []PolicySpec
	// Modes are the joint modes (default JointModes()).
	Modes   []string
	Repeats int
	Seed    uint64
	Config  sim.Config
	// Parallelism is the number of episodes simulated at once.
	Parallelism int
	// Progress and SimProgress are as Sweep's.
	Progress    func(done, total int)
	SimProgress func(done, total time.Duration)
}

// Run simulates the sweep and returns the episodes, scenario-major, then
// policy, mode and repeat. It refuses what Sweep.Run refuses, and unknown
// or repeated modes.
func (s MultiSweep) Run(ctx context.Context) ([]*MultiEpisode, error) {
	if len(s.Scenarios) == 0 || len(s.Policies) == 0 || s.Repeats < 1 {
		return nil, errors.New("eval: multi-flow sweep needs at least one scenario, one policy and one repeat")
	}
	if err := (Sweep{Scenarios: s.Scenarios, Policies: s.Policies}).checkNames(); err != nil {
		return nil, err
	}
	modes := s.Modes
	if len(modes) == 0 {
		modes = JointModes()
	}
	for i, m := range modes {
		if _, err := NewJointPlacer(m); err != nil {
			return nil, err
		}
		if slices.Contains(modes[:i], m) {
			return nil, fmt.Errorf("eval: joint mode %s listed twice", m)
		}
	}
	cfg := s.Config
	if cfg.Switches == 0 {
		cfg = sim.DefaultConfig()
	}
	var specs []MultiSpec
	for _, sc := range s.Scenarios {
		for _, p := range s.Policies {
			factory, err := p.factoryFor(sc, cfg)
			if err != nil {
				return nil, err
			}
			for _, m := range modes {
				for r := 0; r < s.Repeats; r++ {
					specs = append(specs, MultiSpec{Scenario: sc, Seed: EpisodeSeed(s.Seed, sc.Name, r), Config: s.Config,
						Policy: p.Name, NewPolicy: factory, Mode: m, Repeat: r})
				}
			}
		}
	}
	if s.SimProgress != nil {
		lengths := make([]time.Duration, len(specs))
		for i, sp := range specs {
			lengths[i] = sp.Scenario.Length()
		}
		for i, p := range episodeProgress(lengths, s.SimProgress) {
			specs[i].Progress = p
		}
	}
	return runMultiMany(ctx, specs, s.Parallelism, s.Progress)
}

// runMultiMany runs specs on parallelism workers; the result does not
// depend on parallelism. The first failure in spec order is returned.
func runMultiMany(ctx context.Context, specs []MultiSpec, parallelism int, progress func(done, total int)) ([]*MultiEpisode, error) {
	out := make([]*MultiEpisode, len(specs))
	errs := workpool.Run(ctx, len(specs), parallelism, func(ctx context.Context, i int) (err error) {
		out[i], err = RunMultiEpisode(ctx, specs[i])
		return err
	}, progress)
	if i := workpool.First(ctx, errs); i >= 0 {
		return nil, fmt.Errorf("eval: multi-flow episode %d (%s/%s/%s, seed %d): %w", i, specs[i].Scenario.Name, specs[i].Policy, specs[i].Mode, specs[i].Seed, errs[i])
	}
	for _, e := range out {
		if e == nil {
			return nil, fmt.Errorf("eval: multi-flow sweep: %w", context.Cause(ctx))
		}
	}
	return out, nil
}
