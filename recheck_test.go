package proflow_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// peekFabric is an in-memory fabric whose telemetry can also Peek: the
// peek reads the current switch's transmit rate the test sets, or fails.
type peekFabric struct {
	*southboundtest.Fabric
	tx      float64 // the transmit rate every switch shows in a peek
	peekErr error
	short   bool // the peek leaves out the last switch
}

func (f *peekFabric) Peek(ctx context.Context, obs *proflow.Observation) error {
	if f.peekErr != nil {
		return f.peekErr
	}
	if err := f.Fabric.Collect(ctx, obs); err != nil {
		return err
	}
	for k := range obs.Switches {
		obs.Switches[k].TxRate = f.tx
	}
	if f.short {
		obs.Switches = obs.Switches[:len(obs.Switches)-1]
	}
	return nil
}

// noPeek hides a fabric's Peek: telemetry that cannot read between steps.
type noPeek struct{ *southboundtest.Fabric }

// deferGate wants switch 2 and defers every move to a recheck 100 ms
// later when the controller can recheck; its recheck moves the flow when
// the load it is given is above 1, and records that load.
type deferGate struct {
	defers   bool    // Admit defers (otherwise it stays)
	rechecks int     // Recheck calls
	load     float64 // the load the last Recheck saw
}

func (g *deferGate) Admit(d *proflow.Decision) {
	d.Best, d.Target = 2, -1
	switch {
	case d.Current == 2 || !g.defers:
		d.Reason = proflow.ReasonStay
	case d.Recheckable:
		d.Reason, d.Recheck = proflow.ReasonReserve, 100*time.Millisecond
	default:
		d.Target, d.Reason = 2, proflow.ReasonRerouted
	}
}

func (g *deferGate) Recheck(d *proflow.Decision) {
	g.rechecks++
	g.load = d.Load
	d.Best, d.Target, d.Reason = 2, -1, proflow.ReasonReserve
	if d.Load > 1 {
		d.Target, d.Reason = 2, proflow.ReasonRerouted
	}
}

// recheckRig is a controller on fab's telemetry (tel, a peekFabric or not)
// and its enforcer behind a deferGate, with the flow on switch 0.
type recheckRig struct {
	clock *southboundtest.ManualClock
	fab   *peekFabric
	gate  *deferGate
	ctrl  *proflow.Controller
}

func newRecheckRig(t *testing.T, peeks bool, mod func(*proflow.Config)) *recheckRig {
	t.Helper()
	clock := southboundtest.NewManualClock(epoch)
	topo := proflow.PaperTopology()
	fab := &peekFabric{Fabric: southboundtest.NewFabric(topo, clock)}
	fab.SetSwitches(healthySwitch)
	for l := range topo.NumLeaves() {
		fab.SetLeaf(l, healthyLeaf)
	}
	fab.SetFlow(healthyFlow)
	cfg := proflow.DefaultConfig()
	cfg.Flow, cfg.Clock, cfg.PlaceInitial = testFlow, clock, true
	b := testBaseline
	cfg.Baseline = &b
	if mod != nil {
		mod(&cfg)
	}
	var tel proflow.Telemetry = fab
	if !peeks {
		tel = noPeek{fab.Fabric}
	}
	gate := &deferGate{defers: true}
	pol := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error { copy(scores, []float64{0, 0, 1, 0}); return nil })
	ctrl, err := proflow.NewController(cfg, tel, &fakeEncoder{dim: 8}, pol, gate, fab.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &recheckRig{clock: clock, fab: fab, gate: gate, ctrl: ctrl}
}

// step advances the clock one interval and steps; it wants a deferral.
func (r *recheckRig) step(t *testing.T) proflow.Decision {
	t.Helper()
	r.clock.Advance(proflow.DefaultInterval)
	d := r.ctrl.Step(t.Context())
	if d.Reason != proflow.ReasonReserve || d.Recheck != 100*time.Millisecond || !d.Recheckable {
		t.Fatalf("step: reason %s, recheck %v, recheckable %v; want reserve, 100ms, true", d.Reason, d.Recheck, d.Recheckable)
	}
	return d
}

func (r *recheckRig) placement(t *testing.T) int {
	t.Helper()
	sw, ok := r.fab.Placement(testFlow)
	if !ok {
		t.Fatal("the fabric has no placement for the flow")
	}
	return sw
}

// A controller whose telemetry can peek rechecks the move its gate
// deferred: it peeks, gives the gate the current switch's load since the
// step, and makes the move the recheck admits, once.
func TestControllerRecheck(t *testing.T) {
	c := proflow.PaperTopology().BucketRate
	t.Run("the crowd stays: moved at the recheck", func(t *testing.T) {
		r := newRecheckRig(t, true, nil)
		step := r.step(t)
		r.fab.tx = 2 * c
		r.clock.Advance(100 * time.Millisecond)
		d, ok := r.ctrl.Recheck(t.Context())
		if !ok || !d.Rechecking || d.Seq != step.Seq || !d.Time.Equal(step.Time.Add(100*time.Millisecond)) || d.Load != 2 ||
			!d.Rerouted || d.Target != 2 || d.Reason != proflow.ReasonRerouted || d.Err != nil {
			t.Errorf("recheck %v: %+v; want a move to 2 at load 2, rechecking seq %d 100 ms after the step", ok, d, step.Seq)
		}
		if got := r.placement(t); got != 2 || r.ctrl.Current() != 2 {
			t.Errorf("flow on %d, controller says %d; want 2", got, r.ctrl.Current())
		}
		if _, ok := r.ctrl.Recheck(t.Context()); ok || r.gate.rechecks != 1 {
			t.Errorf("a second recheck ran (%v, %d gate rechecks), want one recheck per deferral", ok, r.gate.rechecks)
		}
		// The move started the cooldown clock at the recheck.
		r.clock.Advance(400 * time.Millisecond)
		if next := r.ctrl.Step(t.Context()); !next.LastReroute.Equal(d.Time) || next.Current != 2 {
			t.Errorf("next step: last reroute %v on %d, want %v on 2", next.LastReroute, next.Current, d.Time)
		}
	})
	t.Run("the crowd left: held", func(t *testing.T) {
		r := newRecheckRig(t, true, nil)
		r.step(t)
		r.fab.tx = c / 2
		r.clock.Advance(100 * time.Millisecond)
		d, ok := r.ctrl.Recheck(t.Context())
		if !ok || d.Rerouted || d.Target != -1 || d.Reason != proflow.ReasonReserve || r.gate.load != 0.5 {
			t.Errorf("recheck %v: %+v, gate saw load %v; want a reserve hold at load 0.5", ok, d, r.gate.load)
		}
		if got := r.placement(t); got != 0 {
			t.Errorf("flow on %d, want 0", got)
		}
	})
	t.Run("telemetry that cannot peek: nothing deferred", func(t *testing.T) {
		r := newRecheckRig(t, false, nil)
		r.clock.Advance(proflow.DefaultInterval)
		d := r.ctrl.Step(t.Context())
		if d.Recheckable || d.Recheck != 0 || !d.Rerouted || d.Target != 2 {
			t.Errorf("step %+v, want a move at the step, not recheckable", d)
		}
		if _, ok := r.ctrl.Recheck(t.Context()); ok {
			t.Error("Recheck ran without a deferral")
		}
	})
	t.Run("a failed peek holds", func(t *testing.T) {
		r := newRecheckRig(t, true, nil)
		r.step(t)
		r.fab.peekErr = errBoom
		r.clock.Advance(100 * time.Millisecond)
		d, ok := r.ctrl.Recheck(t.Context())
		if !ok || d.Reason != proflow.ReasonTelemetry || !errors.Is(d.Err, errBoom) || d.Rerouted || r.gate.rechecks != 0 {
			t.Errorf("recheck %v: %+v (gate rechecks %d); want a telemetry-error hold wrapping the peek's error, the gate not asked", ok, d, r.gate.rechecks)
		}
		if got := r.placement(t); got != 0 {
			t.Errorf("flow on %d, want 0", got)
		}
	})
	t.Run("a peek without a load holds", func(t *testing.T) {
		r := newRecheckRig(t, true, nil)
		r.step(t)
		r.fab.tx = math.NaN()
		r.clock.Advance(100 * time.Millisecond)
		d, _ := r.ctrl.Recheck(t.Context())
		var inv *proflow.InvalidObservationError
		if d.Reason != proflow.ReasonInvalid || !errors.As(d.Err, &inv) || inv.Field != "switches[agg1].tx_rate" || r.gate.rechecks != 0 {
			t.Errorf("recheck: %+v; want an invalid-observation hold naming switches[agg1].tx_rate", d)
		}
	})
	t.Run("a peek without every switch holds", func(t *testing.T) {
		r := newRecheckRig(t, true, nil)
		r.step(t)
		r.fab.tx, r.fab.short = 2*c, true
		r.clock.Advance(100 * time.Millisecond)
		d, _ := r.ctrl.Recheck(t.Context())
		var inv *proflow.InvalidObservationError
		if d.Reason != proflow.ReasonInvalid || !errors.As(d.Err, &inv) || inv.Field != "switches" || r.gate.rechecks != 0 || d.Rerouted {
			t.Errorf("recheck: %+v; want an invalid-observation hold naming switches", d)
		}
	})
	t.Run("a step ends the deferral", func(t *testing.T) {
		r := newRecheckRig(t, true, nil)
		r.step(t)
		r.gate.defers = false
		r.clock.Advance(proflow.DefaultInterval)
		if d := r.ctrl.Step(t.Context()); d.Recheck != 0 {
			t.Fatalf("second step asked a recheck %v", d.Recheck)
		}
		r.fab.tx = 2 * c
		if _, ok := r.ctrl.Recheck(t.Context()); ok || r.gate.rechecks != 0 {
			t.Error("Recheck ran after a step that deferred nothing")
		}
	})
	t.Run("a switch cordoned since the step is not moved to", func(t *testing.T) {
		r := newRecheckRig(t, true, nil)
		r.step(t)
		if err := r.ctrl.Cordon(2, true); err != nil {
			t.Fatal(err)
		}
		r.fab.tx = 2 * c
		r.clock.Advance(100 * time.Millisecond)
		if d, _ := r.ctrl.Recheck(t.Context()); d.Rerouted || d.Target != -1 || r.placement(t) != 0 {
			t.Errorf("recheck %+v, flow on %d; want no move to a cordoned switch", d, r.placement(t))
		}
	})
	t.Run("shadow mode reports the move and makes none", func(t *testing.T) {
		r := newRecheckRig(t, true, func(c *proflow.Config) { c.Shadow, c.PlaceInitial = true, false })
		r.step(t)
		r.fab.tx = 2 * c
		r.clock.Advance(100 * time.Millisecond)
		if d, _ := r.ctrl.Recheck(t.Context()); d.Reason != proflow.ReasonShadow || d.Target != 2 || d.Rerouted || r.fab.Places() != 0 || r.ctrl.Current() != 0 {
			t.Errorf("recheck %+v, %d places, controller on %d; want a shadow move to 2 not made", d, r.fab.Places(), r.ctrl.Current())
		}
	})
}

// Run waits for the recheck a step asks for on the controller's clock and
// reports it to the observer.
func TestControllerRunRechecks(t *testing.T) {
	defer goleak.VerifyNone(t)
	decisions := make(chan proflow.Decision, 16)
	r := newRecheckRig(t, true, func(c *proflow.Config) { c.Observer = proflow.SendTo(decisions) })
	r.fab.tx = 2 * proflow.PaperTopology().BucketRate
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.ctrl.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	}()
	if err := r.clock.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(proflow.DefaultInterval)
	if d := receive(t, decisions); d.Recheck != 100*time.Millisecond || d.Rechecking {
		t.Fatalf("step %+v, want a deferral of 100ms", d)
	}
	if err := r.clock.BlockUntil(ctx, 2); err != nil { // the recheck's ticker beside the loop's
		t.Fatal(err)
	}
	r.clock.Advance(100 * time.Millisecond)
	if d := receive(t, decisions); !d.Rechecking || !d.Rerouted || d.Target != 2 {
		t.Errorf("recheck %+v, want a move to 2", d)
	}
	waitFor(t, "the recheck's ticker to stop", func() bool { return r.clock.Tickers() == 1 })
}

// peekFlowFabric is a flowFabric whose telemetry peeks: the peek reads
// every switch's transmit rate as tx.
type peekFlowFabric struct {
	*flowFabric
	tx float64
}

func (f *peekFlowFabric) Peek(ctx context.Context, obs *proflow.Observation) error {
	if err := f.Collect(ctx, obs); err != nil {
		return err
	}
	for k := range obs.Switches {
		obs.Switches[k].TxRate = f.tx
	}
	return nil
}

// delayGate defers every move towards switch 2 by after (a deferGate
// with its own delay); its recheck moves the flow when the load is above 1.
type delayGate struct {
	deferGate
	after time.Duration
}

func (g *delayGate) Admit(d *proflow.Decision) {
	g.deferGate.Admit(d)
	if d.Recheck > 0 {
		d.Recheck = g.after
	}
}

// newPeekMulti returns a MultiController on a peekFlowFabric (as its
// telemetry when peek is set, else the plain flowFabric) and enforcer,
// whose flows want switch 2 behind gate's gates, with flows 1 to n added
// on switch 0.
func newPeekMulti(t *testing.T, peek bool, n int, gate func(proflow.ProtectedFlow) (proflow.Gate, error)) (*proflow.MultiController, *peekFlowFabric, *southboundtest.ManualClock) {
	t.Helper()
	clock := southboundtest.NewManualClock(epoch)
	fab := &peekFlowFabric{flowFabric: newFlowFabric(clock)}
	cfg := proflow.DefaultMultiConfig()
	cfg.Clock = clock
	b := testBaseline
	cfg.Baseline = &b
	parts := proflow.FlowParts{
		Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return &fakeEncoder{dim: 8}, nil },
		Policy: func(proflow.ProtectedFlow) (proflow.Policy, error) {
			return proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error { copy(scores, []float64{0, 0, 1, 0}); return nil }), nil
		},
		Gate: gate,
	}
	var tel proflow.Telemetry = fab
	if !peek {
		tel = fab.flowFabric
	}
	ctrl, err := proflow.NewMultiController(cfg, tel, parts, fab)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := ctrl.AddFlow(proflow.ProtectedFlow{ID: flowN(i)}, 0); err != nil {
			t.Fatal(err)
		}
	}
	return ctrl, fab, clock
}

// deferAll is a gate factory whose every gate defers (deferGate).
func deferAll(proflow.ProtectedFlow) (proflow.Gate, error) { return &deferGate{defers: true}, nil }

// A MultiController whose telemetry peeks rechecks each flow's deferred
// move when it is due, and hands the moves the rechecks admit to the
// joint step and the enforcer.
func TestMultiControllerRecheck(t *testing.T) {
	delays := map[proflow.FlowID]time.Duration{flowN(1): 100 * time.Millisecond, flowN(2): 300 * time.Millisecond}
	ctrl, fab, clock := newPeekMulti(t, true, 3, func(f proflow.ProtectedFlow) (proflow.Gate, error) {
		after, ok := delays[f.ID]
		return &delayGate{deferGate: deferGate{defers: ok}, after: after}, nil
	})
	ctx := t.Context()
	clock.Advance(proflow.DefaultInterval)
	s := ctrl.Step(ctx)
	if got := reasonsOf(s.Decisions); !slices.Equal(got, []proflow.Reason{proflow.ReasonReserve, proflow.ReasonReserve, proflow.ReasonStay}) || s.Recheck {
		t.Fatalf("step reasons %v (recheck %v), want reserve, reserve, stay", got, s.Recheck)
	}
	if next, ok := ctrl.NextRecheck(); !ok || !next.Equal(s.Time.Add(100*time.Millisecond)) {
		t.Fatalf("NextRecheck = %v, %v; want 100 ms after the step", next, ok)
	}
	if _, ok := ctrl.Recheck(ctx); ok {
		t.Error("Recheck ran before any recheck was due")
	}
	fab.tx = 2 * proflow.PaperTopology().BucketRate // flow 1's crowd stays
	clock.Advance(100 * time.Millisecond)
	r, ok := ctrl.Recheck(ctx)
	if got := outcomes(r); !ok || !r.Recheck || r.Seq != s.Seq || r.Rerouted != 1 ||
		!slices.Equal(got, []outcome{{Flow: 1, Current: 0, Target: 2, Rerouted: true, Reason: proflow.ReasonRerouted}}) {
		t.Errorf("first recheck (%v): %+v, %d rerouted; want flow 1 alone, moved to 2", ok, got, r.Rerouted)
	}
	if sw := fab.placed[flowN(1)]; sw != 2 {
		t.Errorf("flow 1 placed on %d, want 2", sw)
	}
	fab.tx = proflow.PaperTopology().BucketRate / 2 // flow 2's crowd has left
	clock.Advance(200 * time.Millisecond)
	r, ok = ctrl.Recheck(ctx)
	if got := outcomes(r); !ok || !slices.Equal(got, []outcome{{Flow: 2, Current: 0, Target: -1, Reason: proflow.ReasonReserve}}) {
		t.Errorf("second recheck (%v): %+v; want flow 2 alone, held", ok, got)
	}
	if _, ok := ctrl.NextRecheck(); ok {
		t.Error("a recheck still waits after both were made")
	}
	if cur, _ := ctrl.Current(flowN(1)); cur != 2 {
		t.Errorf("controller has flow 1 on %d, want 2", cur)
	}
}

// The MultiController's Run makes a due recheck between two steps.
func TestMultiControllerRunRechecks(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctrl, fab, clock := newPeekMulti(t, true, 1, deferAll)
	fab.tx = 2 * proflow.PaperTopology().BucketRate
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	}()
	if err := clock.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(proflow.DefaultInterval)
	if err := clock.BlockUntil(ctx, 2); err != nil { // the recheck's ticker beside the loop's
		t.Fatal(err)
	}
	clock.Advance(100 * time.Millisecond)
	waitFor(t, "the recheck's move", func() bool {
		fab.mu.Lock()
		defer fab.mu.Unlock()
		return fab.placed[flowN(1)] == 2
	})
	waitFor(t, "the recheck's ticker to stop", func() bool { return clock.Tickers() == 1 })
}
