package proflow_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// errorText compares errors by their messages, for decisions built by two
// controllers.
var errorText = cmp.Comparer(func(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
})

// flowN returns the n-th test flow, h1:5000+n → h8:5201.
func flowN(n int) proflow.FlowID {
	f := testFlow
	f.SrcPort = uint16(5000 + n)
	return f
}

// scripted is the world both controllers see in the comparison tests: the
// fabric, every flow's sample and scores, and the failures, as functions of
// the step number t alone, so that one Collect for many flows and one
// Collect per single-flow controller see the same thing.
type scripted struct {
	t     int
	topo  proflow.Topology
	clock *southboundtest.ManualClock
}

// fabric fills the fabric part of obs for step t: a telemetry failure at
// steps 5 and 25, a sample that does not advance at 20, a NaN at 27.
func (s *scripted) fabric(obs *proflow.Observation) error {
	if s.t == 5 || s.t == 25 {
		return errBoom
	}
	at := s.t
	if at == 20 {
		at = 19
	}
	obs.Time = epoch.Add(time.Duration(at) * 500 * time.Millisecond)
	for k := range obs.Switches {
		obs.Switches[k] = healthySwitch
		obs.Switches[k].OverflowRate += float64(s.t * k)
	}
	if s.t == 27 {
		obs.Switches[1].OverflowRate = math.NaN()
	}
	for l := range obs.Leaves {
		obs.Leaves[l] = healthyLeaf
	}
	return nil
}

// telemetry is a multi-flow Telemetry of the script: the fabric, and each
// listed flow's sample (flow i has source port 5000+i).
func (s *scripted) telemetry() proflow.Telemetry {
	return proflow.TelemetryFunc(func(ctx context.Context, obs *proflow.Observation) error {
		if err := s.fabric(obs); err != nil {
			return err
		}
		for i, id := range obs.FlowIDs {
			obs.Flows[i] = s.sample(int(id.SrcPort) - 5000)
		}
		return nil
	})
}

// sample is flow i's sample at step t.
func (s *scripted) sample(i int) proflow.FlowSample {
	return proflow.FlowSample{Throughput: float64(i+1)*1e7 + float64(s.t%3)*1e5, CongestionRate: 3e6}
}

// scores are flow i's policy scores at step t: the current placement first,
// then each flow's own better switch from step 22+3i and switch 3 from step
// 26+3i (within the cooldown of the first move); an error at step 30+i and
// a NaN for flow 0 at 33.
func (s *scripted) scores(i int, dst []float64) error {
	copy(dst, []float64{1, 0, 0, 0})
	if s.t >= 22+3*i {
		dst[(1+i)%4] = 2
	}
	if s.t >= 26+3*i {
		dst[3] = 3
	}
	switch {
	case s.t == 30+i:
		return fmt.Errorf("flow %d: %w", i, errBoom)
	case s.t == 33 && i == 0:
		dst[2] = math.NaN()
	}
	return nil
}

// placeFails reports whether the n-th placement (from 1) of a flow fails:
// the first one does.
func placeFails(n int) error {
	if n == 1 {
		return errors.New("table full")
	}
	return nil
}

func comparisonGate(t *testing.T) proflow.Gate {
	g, err := policy.NewGate(policy.GateConfig{Margin: 0.2, Votes: 2, Cooldown: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestMultiControllerMatchesControllers drives a MultiController with the
// Independent joint step and one Controller per flow through the same
// scripted world — baseline phase, telemetry failures, a stale and an
// invalid sample, policy errors, NaN scores, a refused placement, reroutes
// under a voting gate with a cooldown — and checks that every flow's
// decisions are identical. With one flow this is the single-flow
// equivalence; with several it shows that without a joint step each flow
// is decided as by a controller of its own.
func TestMultiControllerMatchesControllers(t *testing.T) {
	for _, flows := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d flows", flows), func(t *testing.T) {
			s := &scripted{topo: proflow.PaperTopology(), clock: southboundtest.NewManualClock(epoch)}
			cfg := proflow.DefaultConfig()
			cfg.Clock = s.clock

			singles := make([]*proflow.Controller, flows)
			for i := range singles {
				tel := proflow.TelemetryFunc(func(ctx context.Context, obs *proflow.Observation) error {
					if err := s.fabric(obs); err != nil {
						return err
					}
					obs.Flow = s.sample(i)
					return nil
				})
				pol := proflow.PolicyFunc(func(dst []float64, in *proflow.Input) error { return s.scores(i, dst) })
				var places int
				enf := proflow.EnforcerFunc(func(ctx context.Context, flow proflow.FlowID, sw int) error {
					places++
					return placeFails(places)
				})
				c := cfg
				c.Flow = flowN(i)
				ctrl, err := proflow.NewController(c, tel, &fakeEncoder{dim: 8}, pol, comparisonGate(t), enf)
				if err != nil {
					t.Fatal(err)
				}
				singles[i] = ctrl
			}

			mcfg := proflow.DefaultMultiConfig()
			mcfg.Clock = s.clock
			tel := s.telemetry()
			places := map[proflow.FlowID]int{}
			enf := proflow.EnforcerFunc(func(ctx context.Context, flow proflow.FlowID, sw int) error {
				places[flow]++
				return placeFails(places[flow])
			})
			parts := proflow.FlowParts{
				Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return &fakeEncoder{dim: 8}, nil },
				Policy: func(f proflow.ProtectedFlow) (proflow.Policy, error) {
					i := int(f.ID.SrcPort) - 5000
					return proflow.PolicyFunc(func(dst []float64, in *proflow.Input) error { return s.scores(i, dst) }), nil
				},
				Gate: func(proflow.ProtectedFlow) (proflow.Gate, error) { return comparisonGate(t), nil },
			}
			multi, err := proflow.NewMultiController(mcfg, tel, parts, enf)
			if err != nil {
				t.Fatal(err)
			}
			for i := range flows {
				if err := multi.AddFlow(proflow.ProtectedFlow{ID: flowN(i)}, 0); err != nil {
					t.Fatal(err)
				}
			}

			want := make([][]proflow.Decision, flows)
			got := make([][]proflow.Decision, flows)
			reasons := map[proflow.Reason]bool{}
			for s.t = 1; s.t <= 60; s.t++ {
				s.clock.Advance(500 * time.Millisecond)
				for i, c := range singles {
					d := c.Step(t.Context())
					want[i] = append(want[i], d.Clone())
					reasons[d.Reason] = true
				}
				sum := multi.Step(t.Context())
				if len(sum.Decisions) != flows {
					t.Fatalf("step %d: %d decisions, want %d", s.t, len(sum.Decisions), flows)
				}
				for i, d := range sum.Decisions {
					got[i] = append(got[i], d.Clone())
				}
			}
			for i := range flows {
				if diff := cmp.Diff(want[i], got[i], decisionOpts, errorText, cmpopts.EquateNaNs()); diff != "" {
					t.Errorf("flow %d: decisions differ (-Controller +MultiController):\n%s", i, diff)
				}
				wb, wok := singles[i].Baseline()
				gb, gok := multi.Baseline(flowN(i))
				if gb != wb || gok != wok || !gok {
					t.Errorf("flow %d: baseline %+v, %v; the Controller learned %+v, %v", i, gb, gok, wb, wok)
				}
			}
			// The script must have reached every path it was written for.
			for _, r := range []proflow.Reason{proflow.ReasonBaseline, proflow.ReasonTelemetry, proflow.ReasonStale,
				proflow.ReasonInvalid, proflow.ReasonPolicy, proflow.ReasonVotes, proflow.ReasonCooldown,
				proflow.ReasonEnforcer, proflow.ReasonRerouted, proflow.ReasonStay} {
				if !reasons[r] {
					t.Errorf("no decision with reason %q: the script misses a path", r)
				}
			}
		})
	}
}

// flowFabric is a fabric for many protected flows: a Telemetry that fills
// Observation.Flows and an Enforcer keeping every flow's placement, which
// can refuse chosen flows.
type flowFabric struct {
	mu         sync.Mutex
	clock      *southboundtest.ManualClock
	switches   []proflow.SwitchSample
	samples    map[proflow.FlowID]proflow.FlowSample // healthyFlow when absent
	placed     map[proflow.FlowID]int
	refuse     map[proflow.FlowID]error
	collectErr error
	tamper     func(obs *proflow.Observation)
	places     int
}

func newFlowFabric(clock *southboundtest.ManualClock) *flowFabric {
	f := &flowFabric{clock: clock, samples: map[proflow.FlowID]proflow.FlowSample{},
		placed: map[proflow.FlowID]int{}, refuse: map[proflow.FlowID]error{}}
	for range proflow.PaperTopology().NumSwitches() {
		f.switches = append(f.switches, healthySwitch)
	}
	return f
}

func (f *flowFabric) Collect(ctx context.Context, obs *proflow.Observation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.collectErr != nil {
		return f.collectErr
	}
	obs.Time = f.clock.Now()
	copy(obs.Switches, f.switches)
	for l := range obs.Leaves {
		obs.Leaves[l] = healthyLeaf
	}
	for i, id := range obs.FlowIDs {
		s, ok := f.samples[id]
		if !ok {
			s = healthyFlow
		}
		obs.Flows[i] = s
	}
	if f.tamper != nil {
		f.tamper(obs)
	}
	return nil
}

func (f *flowFabric) Place(ctx context.Context, flow proflow.FlowID, sw int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.places++
	return f.placeLocked(flow, sw)
}

func (f *flowFabric) placeLocked(flow proflow.FlowID, sw int) error {
	if err := f.refuse[flow]; err != nil {
		return err
	}
	f.placed[flow] = sw
	return nil
}

// batchFabric is a flowFabric that is a BatchEnforcer.
type batchFabric struct {
	*flowFabric
	batches  int
	batchErr error // returned after the per-flow outcomes are written
	panicV   any
}

func (b *batchFabric) PlaceBatch(ctx context.Context, ps []proflow.Placement, errs []error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batches++
	if b.panicV != nil {
		panic(b.panicV)
	}
	for j, p := range ps {
		errs[j] = b.placeLocked(p.Flow, p.Switch)
	}
	return b.batchErr
}

// flowRig is a MultiController on a flowFabric with per-flow fake encoders,
// a policy returning each flow's scores from a table and argmaxGate.
type flowRig struct {
	t      *testing.T
	clock  *southboundtest.ManualClock
	fab    *flowFabric
	mu     sync.Mutex
	encs   map[proflow.FlowID]*fakeEncoder
	scores map[proflow.FlowID][]float64 // {1, 0, 0, 0} when absent
	polErr map[proflow.FlowID]error
	ctrl   *proflow.MultiController
}

func newFlowRig(t *testing.T, mod func(*proflow.MultiConfig), enf func(*flowFabric) proflow.Enforcer) *flowRig {
	t.Helper()
	r := &flowRig{t: t, clock: southboundtest.NewManualClock(epoch), encs: map[proflow.FlowID]*fakeEncoder{},
		scores: map[proflow.FlowID][]float64{}, polErr: map[proflow.FlowID]error{}}
	r.fab = newFlowFabric(r.clock)
	cfg := proflow.DefaultMultiConfig()
	cfg.Clock = r.clock
	b := testBaseline
	cfg.Baseline = &b
	if mod != nil {
		mod(&cfg)
	}
	var e proflow.Enforcer = r.fab
	if enf != nil {
		e = enf(r.fab)
	}
	ctrl, err := proflow.NewMultiController(cfg, r.fab, r.parts(), e)
	if err != nil {
		t.Fatalf("NewMultiController: %v", err)
	}
	r.ctrl = ctrl
	return r
}

func (r *flowRig) parts() proflow.FlowParts {
	return proflow.FlowParts{
		Encoder: func(f proflow.ProtectedFlow) (proflow.StateEncoder, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			e := &fakeEncoder{dim: 8}
			r.encs[f.ID] = e
			return e, nil
		},
		Policy: func(f proflow.ProtectedFlow) (proflow.Policy, error) {
			return proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
				r.mu.Lock()
				defer r.mu.Unlock()
				s, ok := r.scores[f.ID]
				if !ok {
					s = []float64{1, 0, 0, 0}
				}
				copy(scores, s)
				return r.polErr[f.ID]
			}), nil
		},
		Gate: func(proflow.ProtectedFlow) (proflow.Gate, error) { return proflow.GateFunc(argmaxGate), nil },
	}
}

func (r *flowRig) add(n int, weight float64, current int) {
	r.t.Helper()
	if err := r.ctrl.AddFlow(proflow.ProtectedFlow{ID: flowN(n), Weight: weight}, current); err != nil {
		r.t.Fatalf("AddFlow(%d): %v", n, err)
	}
}

func (r *flowRig) setScores(n int, s ...float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scores[flowN(n)] = s
}

func (r *flowRig) step() proflow.StepSummary {
	r.t.Helper()
	r.clock.Advance(500 * time.Millisecond)
	return r.ctrl.Step(r.t.Context())
}

// outcome is the part of a Decision the table tests look at.
type outcome struct {
	Flow     uint16 // SrcPort − 5000
	Current  int
	Target   int
	Rerouted bool
	Reason   proflow.Reason
	Err      string
}

func outcomes(s proflow.StepSummary) []outcome {
	var out []outcome
	for _, d := range s.Decisions {
		o := outcome{Flow: d.Flow.SrcPort - 5000, Current: d.Current, Target: d.Target, Rerouted: d.Rerouted, Reason: d.Reason}
		if d.Err != nil {
			o.Err = d.Err.Error()
		}
		out = append(out, o)
	}
	return out
}

// TestMultiControllerAddRemove changes the flow set between steps and
// while the controller runs: changes take effect at the next step, in order,
// and the other flows keep their decisions.
func TestMultiControllerAddRemove(t *testing.T) {
	r := newFlowRig(t, nil, nil)
	if s := r.step(); len(s.Decisions) != 0 || s.Admitted != 0 {
		t.Errorf("a step without flows: %+v, want no decisions", s)
	}
	r.add(1, 0, 0)
	r.add(2, 2, 1)
	if err := r.ctrl.AddFlow(proflow.ProtectedFlow{ID: flowN(1)}, 3); !errors.Is(err, proflow.ErrFlowProtected) {
		t.Errorf("adding flow 1 twice: %v, want ErrFlowProtected", err)
	}
	if err := r.ctrl.RemoveFlow(flowN(9)); !errors.Is(err, proflow.ErrFlowNotProtected) {
		t.Errorf("removing an unknown flow: %v, want ErrFlowNotProtected", err)
	}
	if sw, ok := r.ctrl.Current(flowN(2)); sw != 1 || !ok {
		t.Errorf("Current(flow 2) before any step = %d, %v; want 1, true", sw, ok)
	}

	r.setScores(1, 1, 0, 0, 0) // stays
	r.setScores(2, 0, 0, 5, 0) // moves to 2
	want := []outcome{{1, 0, -1, false, proflow.ReasonStay, ""}, {2, 1, 2, true, proflow.ReasonRerouted, ""}}
	if diff := cmp.Diff(want, outcomes(r.step())); diff != "" {
		t.Errorf("step 2 (-want +got):\n%s", diff)
	}

	// Remove 1, add 3 and remove it again before a step, add 4.
	if err := r.ctrl.RemoveFlow(flowN(1)); err != nil {
		t.Fatal(err)
	}
	r.add(3, 0, 0)
	if err := r.ctrl.RemoveFlow(flowN(3)); err != nil {
		t.Fatal(err)
	}
	r.add(4, 0, 3)
	wantFlows := []proflow.ProtectedFlow{{ID: flowN(2), Weight: 2}, {ID: flowN(4)}}
	if diff := cmp.Diff(wantFlows, r.ctrl.Flows(), addrs); diff != "" {
		t.Errorf("Flows() (-want +got):\n%s", diff)
	}
	if _, ok := r.ctrl.Current(flowN(1)); ok {
		t.Error("Current(flow 1) after RemoveFlow: still protected")
	}
	want = []outcome{{2, 2, -1, false, proflow.ReasonStay, ""}, {4, 3, 0, true, proflow.ReasonRerouted, ""}}
	if diff := cmp.Diff(want, outcomes(r.step())); diff != "" {
		t.Errorf("step 3 (-want +got):\n%s", diff)
	}
	if sw, _ := r.ctrl.Current(flowN(4)); sw != 0 {
		t.Errorf("Current(flow 4) = %d, want 0", sw)
	}
	// A removed flow may come back, as a new flow at the end.
	r.add(1, 0, 0)
	if got := outcomes(r.step()); len(got) != 3 || got[2].Flow != 1 {
		t.Errorf("after re-adding flow 1: %+v, want it third", got)
	}
}

// TestMultiControllerAddRemoveWhileRunning adds and removes flows from
// another goroutine while Run steps: every step has a decision for every
// flow that stays, with consecutive sequence numbers.
func TestMultiControllerAddRemoveWhileRunning(t *testing.T) {
	decisions := make(chan proflow.Decision, 1000)
	r := newFlowRig(t, func(c *proflow.MultiConfig) { c.Observer = proflow.SendTo(decisions) }, nil)
	r.add(0, 0, 0)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.ctrl.Run(ctx) }()

	var seqs []uint64
	others := 0
	for tick := 0; len(seqs) < 12; tick++ {
		switch tick {
		case 3:
			r.add(1, 0, 0)
		case 6:
			if err := r.ctrl.RemoveFlow(flowN(1)); err != nil {
				t.Error(err)
			}
		}
		waitFor(t, "the ticker", func() bool { return r.clock.Tickers() > 0 })
		r.clock.Advance(500 * time.Millisecond)
		for d := receive(t, decisions); ; d = receive(t, decisions) {
			if d.Flow == flowN(0) {
				seqs = append(seqs, d.Seq)
				break
			}
			others++
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("flow 0's decisions have sequence numbers %v, want 1, 2, 3, …", seqs)
		}
	}
	if others == 0 {
		t.Error("flow 1, added while running, never had a decision")
	}
}

// TestMultiControllerPerFlowBaselines checks that every flow learns its own
// baseline from its own samples, starting when it is added, and that its
// encoder alone receives it.
func TestMultiControllerPerFlowBaselines(t *testing.T) {
	r := newFlowRig(t, func(c *proflow.MultiConfig) { c.Baseline, c.BaselineWarmup, c.BaselineSamples = nil, 1, 2 }, nil)
	r.fab.samples[flowN(1)] = proflow.FlowSample{Throughput: 1e7}
	r.fab.samples[flowN(2)] = proflow.FlowSample{Throughput: 3e7}
	r.add(1, 0, 0)
	var reasons [][]proflow.Reason
	for step := range 5 {
		if step == 1 {
			r.add(2, 0, 2)
		}
		var rs []proflow.Reason
		for _, d := range r.step().Decisions {
			rs = append(rs, d.Reason)
		}
		reasons = append(reasons, rs)
	}
	b, s := proflow.ReasonBaseline, proflow.ReasonStay
	want := [][]proflow.Reason{{b}, {b, b}, {b, b}, {s, b}, {s, proflow.ReasonRerouted}}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("reasons by step (-want +got):\n%s", diff)
	}
	for n, want := range map[int]proflow.Baseline{
		1: {Overflow: healthySwitch.OverflowRate, FlowCount: 2, Throughput: 1e7, Switch: 0},
		2: {Overflow: healthySwitch.OverflowRate, FlowCount: 2, Throughput: 3e7, Switch: 2},
	} {
		got, ok := r.ctrl.Baseline(flowN(n))
		if !ok || got != want {
			t.Errorf("Baseline(flow %d) = %+v, %v; want %+v", n, got, ok, want)
		}
		if e := r.encs[flowN(n)]; e.baseline == nil || *e.baseline != want {
			t.Errorf("flow %d's encoder got baseline %+v, want %+v", n, e.baseline, want)
		}
	}
}

// TestMultiControllerAddFlowResumed checks that a flow added with the
// baseline it learnt elsewhere skips the baseline phase and is decided on
// from its first step, while a flow added plainly learns its own, and that
// an invalid resumed baseline is refused.
func TestMultiControllerAddFlowResumed(t *testing.T) {
	r := newFlowRig(t, func(c *proflow.MultiConfig) { c.Baseline, c.BaselineWarmup, c.BaselineSamples = nil, 1, 2 }, nil)
	r.fab.samples[flowN(1)] = proflow.FlowSample{Throughput: 1e7}
	r.fab.samples[flowN(2)] = proflow.FlowSample{Throughput: 3e7}
	resumed := proflow.Baseline{Overflow: 100, FlowCount: 2, Throughput: 2.5e7, Switch: 1}
	if err := r.ctrl.AddFlowResumed(proflow.ProtectedFlow{ID: flowN(1)}, 1, &resumed); err != nil {
		t.Fatal(err)
	}
	if err := r.ctrl.AddFlowResumed(proflow.ProtectedFlow{ID: flowN(2)}, 0, nil); err != nil {
		t.Fatal(err)
	}
	bad := proflow.Baseline{Throughput: -1}
	if err := r.ctrl.AddFlowResumed(proflow.ProtectedFlow{ID: flowN(3)}, 0, &bad); err == nil || !strings.Contains(err.Error(), "resumed baseline") {
		t.Errorf("AddFlowResumed with throughput −1: %v, want an error naming the resumed baseline", err)
	}
	if got := r.step().Decisions; len(got) != 2 || got[0].Reason == proflow.ReasonBaseline || got[1].Reason != proflow.ReasonBaseline {
		t.Errorf("first step reasons %v, want flow 1 decided on (resumed) and flow 2 in its baseline phase", reasonsOf(got))
	}
	if got, ok := r.ctrl.Baseline(flowN(1)); !ok || got != resumed {
		t.Errorf("Baseline(flow 1) = %+v, %v; want the resumed %+v", got, ok, resumed)
	}
	if e := r.encs[flowN(1)]; e.baseline == nil || *e.baseline != resumed {
		t.Errorf("flow 1's encoder got baseline %+v, want the resumed %+v", e.baseline, resumed)
	}
}

func reasonsOf(ds []proflow.Decision) []proflow.Reason {
	var rs []proflow.Reason
	for _, d := range ds {
		rs = append(rs, d.Reason)
	}
	return rs
}

// releasingEnforcer is the rig's fabric as a Releaser whose releases fail
// while fail is set.
type releasingEnforcer struct {
	proflow.Enforcer
	mu       sync.Mutex
	fail     bool
	released []proflow.FlowID
}

func (e *releasingEnforcer) Release(_ context.Context, f proflow.FlowID) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fail {
		return errors.New("switch unreachable")
	}
	e.released = append(e.released, f)
	return nil
}

// TestMultiControllerReleasesRemovedFlows checks that a removed flow is
// released at the next step, a failed release is retried until it works,
// the other flows keep being decided on meanwhile, and a flow added again
// before the step is not released.
func TestMultiControllerReleasesRemovedFlows(t *testing.T) {
	var rel *releasingEnforcer
	r := newFlowRig(t, nil, func(f *flowFabric) proflow.Enforcer {
		rel = &releasingEnforcer{Enforcer: f}
		return rel
	})
	for n := 1; n <= 3; n++ {
		r.add(n, 0, 0)
	}
	r.step()
	if err := r.ctrl.RemoveFlow(flowN(1)); err != nil {
		t.Fatal(err)
	}
	rel.mu.Lock()
	rel.fail = true
	rel.mu.Unlock()
	if s := r.step(); s.Released != 0 || s.Unreleased != 1 || len(s.Decisions) != 2 {
		t.Errorf("step with a failing release: released %d, unreleased %d, %d decisions; want 0, 1, 2", s.Released, s.Unreleased, len(s.Decisions))
	}
	rel.mu.Lock()
	rel.fail = false
	rel.mu.Unlock()
	if err := r.ctrl.RemoveFlow(flowN(2)); err != nil {
		t.Fatal(err)
	}
	r.add(2, 0, 0) // protected again before the step: not released
	if s := r.step(); s.Released != 1 || s.Unreleased != 0 || len(s.Decisions) != 2 {
		t.Errorf("step after the retry: released %d, unreleased %d, %d decisions; want 1, 0, 2", s.Released, s.Unreleased, len(s.Decisions))
	}
	if diff := cmp.Diff([]proflow.FlowID{flowN(1)}, rel.released, cmpopts.EquateComparable(netip.Addr{})); diff != "" {
		t.Errorf("released (-want +got):\n%s", diff)
	}
}

// TestMultiControllerHoldsOnBadInput checks that a failure of the fabric
// holds every flow and a failure of one flow's part holds that flow only.
func TestMultiControllerHoldsOnBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(r *flowRig)
		want  []outcome
		hold  proflow.Reason // StepSummary.Hold
	}{
		{
			name:  "telemetry error",
			setup: func(r *flowRig) { r.fab.collectErr = errBoom },
			want: []outcome{{1, 0, -1, false, proflow.ReasonTelemetry, "proflow: telemetry: boom"},
				{2, 0, -1, false, proflow.ReasonTelemetry, "proflow: telemetry: boom"}},
			hold: proflow.ReasonTelemetry,
		},
		{
			name:  "one flow's NaN throughput",
			setup: func(r *flowRig) { r.fab.samples[flowN(1)] = proflow.FlowSample{Throughput: math.NaN()} },
			want: []outcome{{1, 0, -1, false, proflow.ReasonInvalid, "proflow: invalid observation: flows[" + flowN(1).String() + "].throughput: NaN, want a finite non-negative number"},
				{2, 0, 3, true, proflow.ReasonRerouted, ""}},
		},
		{
			name: "telemetry reorders the flows",
			setup: func(r *flowRig) {
				r.fab.tamper = func(o *proflow.Observation) { o.FlowIDs[0], o.FlowIDs[1] = o.FlowIDs[1], o.FlowIDs[0] }
			},
			want: []outcome{{1, 0, -1, false, proflow.ReasonInvalid, "proflow: invalid observation: flow_ids: the telemetry changed the list of protected flows, want " + flowN(1).String() + " at index 0"},
				{2, 0, -1, false, proflow.ReasonInvalid, "proflow: invalid observation: flow_ids: the telemetry changed the list of protected flows, want " + flowN(2).String() + " at index 1"}},
		},
		{
			name:  "telemetry drops a flow sample",
			setup: func(r *flowRig) { r.fab.tamper = func(o *proflow.Observation) { o.Flows = o.Flows[:1] } },
			want: []outcome{{1, 0, -1, false, proflow.ReasonInvalid, "proflow: invalid observation: flows: 1 samples, want one per protected flow in flow_ids (2)"},
				{2, 0, -1, false, proflow.ReasonInvalid, "proflow: invalid observation: flows: 1 samples, want one per protected flow in flow_ids (2)"}},
			hold: proflow.ReasonInvalid,
		},
		{
			name:  "one flow's policy fails",
			setup: func(r *flowRig) { r.polErr[flowN(2)] = errBoom },
			want:  []outcome{{1, 0, 3, true, proflow.ReasonRerouted, ""}, {2, 0, -1, false, proflow.ReasonPolicy, "proflow: policy: boom"}},
		},
		{
			name:  "one flow's placement refused",
			setup: func(r *flowRig) { r.fab.refuse[flowN(1)] = errBoom },
			want: []outcome{{1, 0, 3, false, proflow.ReasonEnforcer, "proflow: place " + flowN(1).String() + " on agg4: boom"},
				{2, 0, 3, true, proflow.ReasonRerouted, ""}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFlowRig(t, nil, nil)
			r.add(1, 0, 0)
			r.add(2, 0, 0)
			r.setScores(1, 0, 0, 0, 1)
			r.setScores(2, 0, 0, 0, 1)
			tc.setup(r)
			s := r.step()
			if diff := cmp.Diff(tc.want, outcomes(s)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if s.Hold != tc.hold || (s.Err != nil) != (tc.hold != "") {
				t.Errorf("summary Hold %q, Err %v; want %q", s.Hold, s.Err, tc.hold)
			}
			for _, o := range tc.want {
				sw, _ := r.ctrl.Current(flowN(int(o.Flow)))
				if want := map[bool]int{true: o.Target, false: o.Current}[o.Rerouted]; sw != want {
					t.Errorf("flow %d is believed on %d, want %d", o.Flow, sw, want)
				}
			}
		})
	}
}

// TestMultiControllerBatch checks batched enforcement: one PlaceBatch call
// per step, a refused flow holds alone, a whole-batch error holds the flows
// not known to be applied, and a panic holds all.
func TestMultiControllerBatch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		refuse   int // flow refused, 0 for none
		batchErr error
		panicV   any
		want     []bool // rerouted, flows 1..3
		wantErr  []string
	}{
		{name: "all applied", want: []bool{true, true, true}, wantErr: []string{"", "", ""}},
		{name: "one refused", refuse: 2, want: []bool{true, false, true},
			wantErr: []string{"", "proflow: place " + flowN(2).String() + " on agg3: table full", ""}},
		{name: "batch error after one refused", refuse: 2, batchErr: errBoom, want: []bool{true, false, true},
			wantErr: []string{"", "proflow: place " + flowN(2).String() + " on agg3: table full (batch: boom)", ""}},
		{name: "panic", panicV: "bug", want: []bool{false, false, false}, wantErr: []string{
			"proflow: place " + flowN(1).String() + " on agg3: BatchEnforcer.PlaceBatch of *proflow_test.batchFabric panicked: bug",
			"proflow: place " + flowN(2).String() + " on agg3: BatchEnforcer.PlaceBatch of *proflow_test.batchFabric panicked: bug",
			"proflow: place " + flowN(3).String() + " on agg3: BatchEnforcer.PlaceBatch of *proflow_test.batchFabric panicked: bug"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bf *batchFabric
			r := newFlowRig(t, nil, func(f *flowFabric) proflow.Enforcer {
				bf = &batchFabric{flowFabric: f, batchErr: tc.batchErr, panicV: tc.panicV}
				return bf
			})
			for n := 1; n <= 3; n++ {
				r.add(n, 0, 0)
				r.setScores(n, 0, 0, 1, 0)
			}
			if tc.refuse > 0 {
				r.fab.refuse[flowN(tc.refuse)] = errors.New("table full")
			}
			s := r.step()
			var rerouted []bool
			var errs []string
			for _, d := range s.Decisions {
				rerouted = append(rerouted, d.Rerouted)
				e := ""
				if d.Err != nil {
					e = d.Err.Error()
					if d.Reason != proflow.ReasonEnforcer {
						t.Errorf("flow %v held with reason %q, want %q", d.Flow, d.Reason, proflow.ReasonEnforcer)
					}
				}
				errs = append(errs, e)
			}
			if diff := cmp.Diff(tc.want, rerouted); diff != "" {
				t.Errorf("rerouted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if bf.batches != 1 || r.fab.places != 0 {
				t.Errorf("%d PlaceBatch and %d Place calls, want 1 and 0", bf.batches, r.fab.places)
			}
			if want := countTrue(tc.want); s.Rerouted != want || s.Failed != 3-want || s.Admitted != 3 {
				t.Errorf("summary rerouted %d, failed %d, admitted %d; want %d, %d, 3", s.Rerouted, s.Failed, s.Admitted, want, 3-want)
			}
		})
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// TestMultiControllerJointStep puts four flows on switch 0 that all want
// switch 1, which has headroom for two of their baselines (Greedy), and
// checks that two go there, the next to its second choice and the last
// holds, while Independent sends all four to switch 1.
func TestMultiControllerJointStep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		joint proflow.JointPlacer
		want  []outcome
		herd  int
		held  int
	}{
		{
			name:  "independent",
			joint: proflow.Independent{},
			want: []outcome{{1, 0, 1, true, proflow.ReasonRerouted, ""}, {2, 0, 1, true, proflow.ReasonRerouted, ""},
				{3, 0, 1, true, proflow.ReasonRerouted, ""}, {4, 0, 1, true, proflow.ReasonRerouted, ""}},
			herd: 4,
		},
		{
			name:  "greedy",
			joint: &proflow.Greedy{},
			// Priority ΔQ × weight: flow 4 (3×1), then flows 1 and 2 (2×1,
			// tie: lower index first), then flow 3 (1×1).
			want: []outcome{{1, 0, 1, true, proflow.ReasonRerouted, ""}, {2, 0, 2, true, proflow.ReasonRerouted, ""},
				{3, 0, -1, false, proflow.ReasonJoint, ""}, {4, 0, 1, true, proflow.ReasonRerouted, ""}},
			herd: 2,
			held: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			const phi0 = 5e6 // every flow's baseline throughput, bytes/s
			r := newFlowRig(t, func(c *proflow.MultiConfig) {
				c.Joint, c.Registerer = tc.joint, reg
				c.Baseline = &proflow.Baseline{Overflow: 2e4, FlowCount: 2, Throughput: phi0}
			}, nil)
			c := r.fab
			bucket := proflow.PaperTopology().BucketRate // 25e6 bytes/s
			c.switches[0].TxRate = bucket
			c.switches[1].TxRate = bucket - 2*phi0 // room for two baselines
			c.switches[2].TxRate = bucket - phi0   // room for one
			c.switches[3].TxRate = bucket          // full
			for n := 1; n <= 4; n++ {
				// Collapsed: each flow asks for its baseline, not what it gets now.
				c.samples[flowN(n)] = proflow.FlowSample{Throughput: 1e6}
			}
			r.add(1, 0, 0)
			r.setScores(1, 0, 2, 1, 0)
			r.add(2, 0, 0)
			r.setScores(2, 0, 2, 1.5, 0)
			r.add(3, 0, 0)
			r.setScores(3, 0, 1, 0.5, 0)
			r.add(4, 0, 0)
			r.setScores(4, 0, 3, 0, 0)
			s := r.step()
			if diff := cmp.Diff(tc.want, outcomes(s)); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if s.Herding != tc.herd || s.HerdingSwitch != 1 || s.JointHeld != tc.held || s.Admitted != 4 {
				t.Errorf("summary herding %d on %d, joint held %d, admitted %d; want %d on 1, %d, 4",
					s.Herding, s.HerdingSwitch, s.JointHeld, s.Admitted, tc.herd, tc.held)
			}
			if got := histogramSum(t, reg, "proflow_multi_herding"); got != float64(tc.herd) {
				t.Errorf("proflow_multi_herding sum %v, want %d", got, tc.herd)
			}
			if got := counterValue(t, reg, "proflow_multi_decisions_total", "joint"); got != float64(tc.held) {
				t.Errorf(`proflow_multi_decisions_total{reason="joint"} = %v, want %d`, got, tc.held)
			}
		})
	}
}

// TestMultiControllerJointFailures checks that a failing joint placer
// holds every wish, and a destination outside the topology the flow given it.
func TestMultiControllerJointFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		joint proflow.JointPlacerFunc
		want  []outcome
	}{
		{
			name:  "error",
			joint: func(dst []int, in *proflow.JointInput) error { return errBoom },
			want: []outcome{{1, 0, -1, false, proflow.ReasonPolicy, "proflow: joint placement: boom"},
				{2, 0, -1, false, proflow.ReasonPolicy, "proflow: joint placement: boom"}},
		},
		{
			name:  "panic",
			joint: func(dst []int, in *proflow.JointInput) error { panic("bug") },
			want: []outcome{{1, 0, -1, false, proflow.ReasonPolicy, "proflow: joint placement: JointPlacer.Assign of proflow.JointPlacerFunc panicked: bug"},
				{2, 0, -1, false, proflow.ReasonPolicy, "proflow: joint placement: JointPlacer.Assign of proflow.JointPlacerFunc panicked: bug"}},
		},
		{
			name:  "unknown switch",
			joint: func(dst []int, in *proflow.JointInput) error { dst[0], dst[1] = 7, 2; return nil },
			want: []outcome{{1, 0, -1, false, proflow.ReasonPolicy, "proflow: joint placement: proflow: switch index 7 out of range, want 0..3 ([agg1 agg2 agg3 agg4])"},
				{2, 0, 2, true, proflow.ReasonRerouted, ""}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFlowRig(t, func(c *proflow.MultiConfig) { c.Joint = tc.joint }, nil)
			r.add(1, 0, 0)
			r.add(2, 0, 0)
			r.setScores(1, 0, 1, 0, 0)
			r.setScores(2, 0, 1, 0, 0)
			if diff := cmp.Diff(tc.want, outcomes(r.step())); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

// family returns the gathered metric family called name.
func family(t *testing.T, reg *prometheus.Registry, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == name })
	if i < 0 {
		t.Fatalf("no metric %s", name)
	}
	return mfs[i]
}

// histogramSum returns the sum of the histogram called name.
func histogramSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	return family(t, reg, name).GetMetric()[0].GetHistogram().GetSampleSum()
}

// counterValue returns the series of the counter called name whose one
// label has the value label.
func counterValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	return series(t, reg, name, label).GetCounter().GetValue()
}

// gaugeValue returns the value of the gauge series of family name whose
// single label has the value label.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	return series(t, reg, name, label).GetGauge().GetValue()
}

// series returns the series of family name whose single label has the
// value label.
func series(t *testing.T, reg *prometheus.Registry, name, label string) *dto.Metric {
	t.Helper()
	for _, m := range family(t, reg, name).GetMetric() {
		if m.GetLabel()[0].GetValue() == label {
			return m
		}
	}
	t.Fatalf("no series %s{%s}", name, label)
	return nil
}

// TestMultiControllerMetrics checks the aggregate series after two steps
// and that no metric has a flow label.
func TestMultiControllerMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := newFlowRig(t, func(c *proflow.MultiConfig) { c.Registerer = reg }, nil)
	for n := range 3 {
		r.add(n, 0, 0)
	}
	r.setScores(1, 0, 0, 1, 0)
	r.step()
	r.fab.collectErr = errBoom
	r.step()
	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP proflow_multi_flows Protected flows in the latest step.
# TYPE proflow_multi_flows gauge
proflow_multi_flows 3
# HELP proflow_multi_flows_on_switch Protected flows carried by each aggregation switch after the latest step.
# TYPE proflow_multi_flows_on_switch gauge
proflow_multi_flows_on_switch{switch="agg1"} 2
proflow_multi_flows_on_switch{switch="agg2"} 0
proflow_multi_flows_on_switch{switch="agg3"} 1
proflow_multi_flows_on_switch{switch="agg4"} 0
# HELP proflow_multi_reroutes_total Protected flows the enforcer moved, summed over all flows.
# TYPE proflow_multi_reroutes_total counter
proflow_multi_reroutes_total 1
# HELP proflow_multi_telemetry_errors_total Steps in which every protected flow was held because telemetry failed, was invalid or stale.
# TYPE proflow_multi_telemetry_errors_total counter
proflow_multi_telemetry_errors_total 1
`), "proflow_multi_flows", "proflow_multi_flows_on_switch", "proflow_multi_reroutes_total", "proflow_multi_telemetry_errors_total")
	if err != nil {
		t.Error(err)
	}
	for reason, want := range map[string]float64{"stay": 2, "rerouted": 1, "telemetry-error": 3, "joint": 0} {
		if got := counterValue(t, reg, "proflow_multi_decisions_total", reason); got != want {
			t.Errorf(`proflow_multi_decisions_total{reason=%q} = %v, want %v`, reason, got, want)
		}
	}
	if n, err := testutil.GatherAndCount(reg, "proflow_multi_step_duration_seconds"); err != nil || n != 1 {
		t.Errorf("proflow_multi_step_duration_seconds: %d series, %v", n, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "reason" && l.GetName() != "switch" {
					t.Errorf("%s has label %q: only reason and switch keep the cardinality bounded", mf.GetName(), l.GetName())
				}
			}
		}
	}
}

// TestMultiControllerLogs checks one record per flow, naming the flow, and
// a step record.
func TestMultiControllerLogs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r := newFlowRig(t, func(c *proflow.MultiConfig) { c.Logger = log }, nil)
	r.add(1, 0, 0)
	r.add(2, 0, 0)
	r.setScores(2, 0, 1, 0, 0)
	r.step()
	out := buf.String()
	for _, want := range []string{
		"level=DEBUG msg=\"proflow decision\" seq=1",
		"reason=stay", "flow=\"" + flowN(1).String() + "\"",
		"level=INFO msg=\"proflow decision\"", "reason=rerouted", "target=agg2", "flow=\"" + flowN(2).String() + "\"",
		"msg=\"proflow step\" seq=1 flows=2 admitted=1 rerouted=1 joint_held=0 shadowed=0 failed=0 herding=1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// TestNewMultiControllerRefuses checks the configuration and collaborator
// checks of NewMultiController and AddFlow.
func TestNewMultiControllerRefuses(t *testing.T) {
	fab := newFlowFabric(southboundtest.NewManualClock(epoch))
	good := (&flowRig{encs: map[proflow.FlowID]*fakeEncoder{}}).parts()
	var nilGreedy *proflow.Greedy
	for _, tc := range []struct {
		name  string
		cfg   func(*proflow.MultiConfig)
		parts func(*proflow.FlowParts)
		want  string
	}{
		{name: "no policy factory", parts: func(p *proflow.FlowParts) { p.Policy = nil },
			want: "proflow: new multi-flow controller: FlowParts.Policy and Batch are both nil, want Policy returning each flow's policy, or Batch scoring all flows at once"},
		{name: "no encoder nor gate", parts: func(p *proflow.FlowParts) { p.Encoder, p.Gate = nil, nil },
			want: "proflow: new multi-flow controller: FlowParts.Encoder is nil, want a function returning each flow's state encoder; FlowParts.Gate is nil, want a function returning each flow's gate"},
		{name: "batch without encoder", parts: func(p *proflow.FlowParts) {
			p.Policy, p.Encoder = nil, nil
			p.Batch = proflow.BatchPolicyFunc(func([]float64, *proflow.BatchInput) error { return nil })
		},
			want: "proflow: new multi-flow controller: FlowParts.Encoder is nil, want a function returning each flow's state encoder"},
		{name: "typed nil joint", cfg: func(c *proflow.MultiConfig) { c.Joint = nilGreedy },
			want: "proflow: invalid multi-flow controller config: joint placer is a nil *proflow.Greedy, want a usable one, or nil for Independent"},
		{name: "one switch", cfg: func(c *proflow.MultiConfig) { c.Topology.Switches = []string{"agg1"} },
			want: "proflow: invalid multi-flow controller config: topology: 1 aggregation switches, want at least 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, parts := proflow.DefaultMultiConfig(), good
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			if tc.parts != nil {
				tc.parts(&parts)
			}
			_, err := proflow.NewMultiController(cfg, fab, parts, fab)
			if err == nil || err.Error() != tc.want {
				t.Errorf("NewMultiController: %v, want %q", err, tc.want)
			}
		})
	}

	for _, tc := range []struct {
		name    string
		flow    proflow.ProtectedFlow
		current int
		parts   func(*proflow.FlowParts)
		want    string
	}{
		{name: "negative weight", flow: proflow.ProtectedFlow{ID: flowN(1), Weight: -1}, want: "weight -1"},
		{name: "switch out of range", flow: proflow.ProtectedFlow{ID: flowN(1)}, current: 4, want: "switch index 4 out of range"},
		{name: "factory error", flow: proflow.ProtectedFlow{ID: flowN(1)}, want: "new gate: boom",
			parts: func(p *proflow.FlowParts) {
				p.Gate = func(proflow.ProtectedFlow) (proflow.Gate, error) { return nil, errBoom }
			}},
		{name: "typed nil from factory", flow: proflow.ProtectedFlow{ID: flowN(1)}, want: "new encoder: encoder is a nil *proflow_test.fakeEncoder",
			parts: func(p *proflow.FlowParts) {
				p.Encoder = func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return (*fakeEncoder)(nil), nil }
			}},
		{name: "panicking factory", flow: proflow.ProtectedFlow{ID: flowN(1)}, want: "new policy: FlowParts.policy",
			parts: func(p *proflow.FlowParts) {
				p.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) { panic("bug") }
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parts := good
			if tc.parts != nil {
				tc.parts(&parts)
			}
			m, err := proflow.NewMultiController(proflow.DefaultMultiConfig(), fab, parts, fab)
			if err != nil {
				t.Fatal(err)
			}
			err = m.AddFlow(tc.flow, tc.current)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("AddFlow: %v, want an error containing %q", err, tc.want)
			}
			if len(m.Flows()) != 0 {
				t.Errorf("a refused flow is protected: %v", m.Flows())
			}
		})
	}
}

// TestMultiControllerRefusesSharedGate checks issue 24's finding: a
// FlowParts.Gate returning one gate for two flows is refused, without
// resetting the first flow's gate; a gate per flow, or the same flow added
// again with its own gate, is accepted.
func TestMultiControllerRefusesSharedGate(t *testing.T) {
	fab := newFlowFabric(southboundtest.NewManualClock(epoch))
	shared := &resetCountingGate{}
	parts := (&flowRig{encs: map[proflow.FlowID]*fakeEncoder{}}).parts()
	parts.Gate = func(proflow.ProtectedFlow) (proflow.Gate, error) { return shared, nil }
	m, err := proflow.NewMultiController(proflow.DefaultMultiConfig(), fab, parts, fab)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddFlow(proflow.ProtectedFlow{ID: flowN(1)}, 0); err != nil {
		t.Fatal(err)
	}
	resets := shared.resets
	err = m.AddFlow(proflow.ProtectedFlow{ID: flowN(2)}, 0)
	want := "proflow: add flow " + flowN(2).String() + ": FlowParts.Gate returned the *proflow_test.resetCountingGate it returned for flow " +
		flowN(1).String() + ", want a gate of its own for every flow (a gate keeps its flow's vote streak and cooldown): build a new one in each call"
	if err == nil || err.Error() != want {
		t.Errorf("AddFlow of a second flow with the same gate: %v, want %q", err, want)
	}
	if shared.resets != resets {
		t.Error("the refused AddFlow reset the first flow's gate")
	}
	if err := m.RemoveFlow(flowN(1)); err != nil {
		t.Fatal(err)
	}
	if err := m.AddFlow(proflow.ProtectedFlow{ID: flowN(2)}, 0); err != nil {
		t.Errorf("AddFlow with the gate of a removed flow: %v, want nil", err)
	}

	parts.Gate = func(proflow.ProtectedFlow) (proflow.Gate, error) { return &resetCountingGate{}, nil }
	if m, err = proflow.NewMultiController(proflow.DefaultMultiConfig(), fab, parts, fab); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := m.AddFlow(proflow.ProtectedFlow{ID: flowN(i)}, 0); err != nil {
			t.Errorf("AddFlow with a gate of its own: %v", err)
		}
	}
}

// TestAddFlowErrorNamesFlowOnce: AddFlow's error names the flow and the
// problem once, with one proflow prefix.
func TestAddFlowErrorNamesFlowOnce(t *testing.T) {
	fab := newFlowFabric(southboundtest.NewManualClock(epoch))
	m, err := proflow.NewMultiController(proflow.DefaultMultiConfig(), fab, (&flowRig{encs: map[proflow.FlowID]*fakeEncoder{}}).parts(), fab)
	if err != nil {
		t.Fatal(err)
	}
	err = m.AddFlow(proflow.ProtectedFlow{ID: flowN(1), Weight: -1}, 0)
	want := "proflow: add flow " + flowN(1).String() + ": weight -1, want a finite number > 0 (or 0 for the default 1)"
	if err == nil || err.Error() != want {
		t.Errorf("AddFlow = %v, want %q", err, want)
	}
}

// resetCountingGate is a pointer Gate that counts its resets.
type resetCountingGate struct{ resets int }

func (g *resetCountingGate) Admit(*proflow.Decision) {}
func (g *resetCountingGate) Reset()                  { g.resets++ }

// TestMultiControllerReconcile checks that a Locator enforcer's placements
// win over those given to AddFlow.
func TestMultiControllerReconcile(t *testing.T) {
	fab := newFlowFabric(southboundtest.NewManualClock(epoch))
	loc := locatingMulti{fab}
	m, err := proflow.NewMultiController(proflow.DefaultMultiConfig(), fab, (&flowRig{encs: map[proflow.FlowID]*fakeEncoder{}}).parts(), loc)
	if err != nil {
		t.Fatal(err)
	}
	fab.placed[flowN(1)] = 2
	fab.placed[flowN(3)] = 9
	for n := 1; n <= 3; n++ {
		if err := m.AddFlow(proflow.ProtectedFlow{ID: flowN(n)}, 1); err != nil {
			t.Fatal(err)
		}
	}
	err = m.Reconcile(t.Context())
	if err == nil || !strings.Contains(err.Error(), "flow "+flowN(3).String()+": located proflow: switch index 9 out of range") {
		t.Errorf("Reconcile: %v, want flow 3's bad placement", err)
	}
	for n, want := range []int{1: 2, 2: 1, 3: 1} {
		if n == 0 {
			continue
		}
		if got, _ := m.Current(flowN(n)); got != want {
			t.Errorf("Current(flow %d) = %d, want %d", n, got, want)
		}
	}
}

// locatingMulti is a flowFabric enforcer that is a Locator.
type locatingMulti struct{ *flowFabric }

func (l locatingMulti) Locate(ctx context.Context, flow proflow.FlowID) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sw, ok := l.placed[flow]; ok {
		return sw, nil
	}
	return 0, proflow.ErrNotPlaced
}

// nopEncoder is a StateEncoder that writes the placement only: what the
// benchmark needs of one.
type nopEncoder struct{}

func (nopEncoder) Dim() int { return 34 }

func (nopEncoder) Encode(dst proflow.State, obs *proflow.Observation, current int) error {
	dst[current] = 1
	return nil
}

// steadyMulti returns a MultiController protecting n flows on the paper's
// four switches with a cheap policy (the flows' own sample and switch
// decide the scores), the stability gate and the Greedy joint step, in
// steady state: every flow past its baseline, a few moving each step, its
// buffers grown by ten steps with ctx. Advance the clock by the interval
// before each further step.
func steadyMulti(tb testing.TB, ctx context.Context, n int) (*proflow.MultiController, *southboundtest.ManualClock) {
	tb.Helper()
	clock := southboundtest.NewManualClock(epoch)
	fab := newFlowFabric(clock)
	tel := proflow.TelemetryFunc(func(ctx context.Context, obs *proflow.Observation) error {
		obs.Time = clock.Now()
		copy(obs.Switches, fab.switches)
		for i := range obs.Flows {
			obs.Flows[i] = healthyFlow
		}
		return nil
	})
	pol := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
		for k := range scores {
			scores[k] = float64((k + in.Current) % 4)
		}
		return nil
	})
	parts := proflow.FlowParts{
		Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return nopEncoder{}, nil },
		Policy:  func(proflow.ProtectedFlow) (proflow.Policy, error) { return pol, nil },
		Gate: func(proflow.ProtectedFlow) (proflow.Gate, error) {
			return policy.NewGate(policy.GateConfig{Margin: 0.2, Votes: 3, Cooldown: 15 * time.Second})
		},
	}
	m := manyFlows(tb, clock, tel, parts, n)
	for range 10 { // apply the additions, grow the buffers
		clock.Advance(500 * time.Millisecond)
		m.Step(ctx)
	}
	return m, clock
}

// manyFlows returns a MultiController with the Greedy joint step, the test
// baseline and an enforcer accepting every move, protecting n flows that
// differ in their source address, flow i on switch i mod 4.
func manyFlows(tb testing.TB, clock proflow.Clock, tel proflow.Telemetry, parts proflow.FlowParts, n int) *proflow.MultiController {
	tb.Helper()
	cfg := proflow.DefaultMultiConfig()
	cfg.Clock = clock
	base := testBaseline
	cfg.Baseline = &base
	cfg.Joint = &proflow.Greedy{}
	enf := proflow.EnforcerFunc(func(ctx context.Context, flow proflow.FlowID, sw int) error { return nil })
	m, err := proflow.NewMultiController(cfg, tel, parts, enf)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		f := testFlow
		f.Src = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if err := m.AddFlow(proflow.ProtectedFlow{ID: f}, i%4); err != nil {
			tb.Fatal(err)
		}
	}
	return m
}

// TestMultiControllerStepAllocs checks issue 13's "0 allocations per step
// in steady state", with moves in every step, under a parent context that
// is never cancelled and under one that can be.
func TestMultiControllerStepAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{{"background", context.Background()}, {"cancellable", t.Context()}} {
		t.Run(tc.name, func(t *testing.T) {
			m, clock := steadyMulti(t, tc.ctx, 100)
			moved := 0
			allocs := testing.AllocsPerRun(20, func() {
				clock.Advance(500 * time.Millisecond)
				moved += m.Step(tc.ctx).Rerouted
			})
			if allocs != 0 {
				t.Errorf("a step of 100 flows allocates %v times, want 0", allocs)
			}
			if moved == 0 {
				t.Error("no flow moved: the steps did not reach the enforcer")
			}
		})
	}
}

// BenchmarkMultiControllerStep measures one step of steadyMulti's
// controller for 1, 100 and 10,000 protected flows.
func BenchmarkMultiControllerStep(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("flows=%d", n), func(b *testing.B) {
			ctx := context.Background()
			m, clock := steadyMulti(b, ctx, n)
			b.ReportAllocs()
			b.ResetTimer()
			moved := 0
			for b.Loop() {
				clock.Advance(500 * time.Millisecond)
				moved += m.Step(ctx).Rerouted
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/flow")
			b.ReportMetric(float64(moved)/float64(b.N), "reroutes/op")
		})
	}
}

// TestMultiControllerShadow runs the joint step in shadow mode: the moves
// it assigns are reported (ReasonShadow, their targets) and never sent to
// the enforcer, every flow stays, and the joint step still holds what it
// would have held.
func TestMultiControllerShadow(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	const phi0 = 5e6
	r := newFlowRig(t, func(c *proflow.MultiConfig) {
		c.Joint, c.Registerer, c.Shadow = &proflow.Greedy{}, reg, true
		c.Baseline = &proflow.Baseline{Overflow: 2e4, FlowCount: 2, Throughput: phi0}
	}, nil)
	c := r.fab
	bucket := proflow.PaperTopology().BucketRate
	c.switches[0].TxRate = bucket
	c.switches[1].TxRate = bucket - phi0 // room for one baseline
	c.switches[2].TxRate = bucket
	c.switches[3].TxRate = bucket
	for n := 1; n <= 2; n++ {
		c.samples[flowN(n)] = proflow.FlowSample{Throughput: 1e6}
		r.add(n, 0, 0)
	}
	r.setScores(1, 0, 2, 0, 0)
	r.setScores(2, 0, 3, 0, 0)
	s := r.step()
	want := []outcome{{1, 0, -1, false, proflow.ReasonJoint, ""}, {2, 0, 1, false, proflow.ReasonShadow, ""}}
	if diff := cmp.Diff(want, outcomes(s)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if s.Admitted != 2 || s.Shadowed != 1 || s.JointHeld != 1 || s.Rerouted != 0 || s.Herding != 0 {
		t.Errorf("summary admitted %d, shadowed %d, joint held %d, rerouted %d, herding %d; want 2, 1, 1, 0, 0",
			s.Admitted, s.Shadowed, s.JointHeld, s.Rerouted, s.Herding)
	}
	if c.places != 0 {
		t.Errorf("the enforcer placed %d times, want 0", c.places)
	}
	for n := 1; n <= 2; n++ {
		if got, _ := r.ctrl.Current(flowN(n)); got != 0 {
			t.Errorf("flow %d on switch %d, want 0: shadow mode never moves a flow", n, got)
		}
	}
	if got := counterValue(t, reg, "proflow_multi_decisions_total", "shadow"); got != 1 {
		t.Errorf(`proflow_multi_decisions_total{reason="shadow"} = %v, want 1`, got)
	}
	// The flows stay on switch 0: the next step sees them there.
	s = r.step()
	if d := s.Decisions[1]; d.Current != 0 || !d.LastReroute.Equal(epoch.Add(500*time.Millisecond)) {
		t.Errorf("flow 2 next step: current %d, last reroute %v; want 0, %v", d.Current, d.LastReroute, epoch.Add(500*time.Millisecond))
	}
}

// TestMultiControllerCordon cordons agg2 for every flow: each goes to its
// best switch that is not cordoned, through the joint step, and a switch
// index outside the topology is refused.
func TestMultiControllerCordon(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := newFlowRig(t, func(c *proflow.MultiConfig) { c.Cordoned, c.Registerer = []int{1}, reg }, nil)
	r.add(1, 0, 0)
	r.setScores(1, 0, 3, 2, 1)
	r.add(2, 0, 0)
	r.setScores(2, 0, 3, 1, 2)
	s := r.step()
	want := []outcome{{1, 0, 2, true, proflow.ReasonRerouted, ""}, {2, 0, 3, true, proflow.ReasonRerouted, ""}}
	if diff := cmp.Diff(want, outcomes(s)); diff != "" {
		t.Errorf("agg2 cordoned (-want +got):\n%s", diff)
	}
	if got := gaugeValue(t, reg, "proflow_multi_cordoned", "agg2"); got != 1 {
		t.Errorf(`proflow_multi_cordoned{switch="agg2"} = %v, want 1`, got)
	}
	if err := r.ctrl.Cordon(1, false); err != nil {
		t.Fatal(err)
	}
	if err := r.ctrl.Cordon(-1, true); err == nil {
		t.Error("Cordon(-1) = nil, want an error")
	}
	s = r.step()
	want = []outcome{{1, 2, 1, true, proflow.ReasonRerouted, ""}, {2, 3, 1, true, proflow.ReasonRerouted, ""}}
	if diff := cmp.Diff(want, outcomes(s)); diff != "" {
		t.Errorf("cordon lifted (-want +got):\n%s", diff)
	}
	if got := r.ctrl.Cordoned(); len(got) != 0 {
		t.Errorf("Cordoned() = %v, want none", got)
	}
	if got := gaugeValue(t, reg, "proflow_multi_cordoned", "agg2"); got != 0 {
		t.Errorf(`proflow_multi_cordoned{switch="agg2"} = %v after the cordon was lifted, want 0`, got)
	}
}
