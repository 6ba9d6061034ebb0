package proflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
	"github.com/proflow-sdn/proflow/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	epoch    = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	testFlow = proflow.FlowID{
		Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"),
		SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP,
	}
	errBoom = errors.New("boom")

	healthySwitch = proflow.SwitchSample{TxRate: 2e7, OverflowRate: 2e4, FlowCount: 2, ElephantRate: 1e7}
	healthyLeaf   = proflow.LeafSample{IngressRate: 1e6, TransmitRate: 1e6}
	healthyFlow   = proflow.FlowSample{Throughput: 2e7, CongestionRate: 3e6}
	testBaseline  = proflow.Baseline{Overflow: 2e4, FlowCount: 2, Throughput: 2e7, Switch: 0}

	// addrs lets go-cmp compare netip.Addr, whose fields are unexported.
	addrs = cmpopts.EquateComparable(netip.Addr{})
	// decisionOpts compares Decisions, ignoring the wall-clock latency.
	decisionOpts = cmp.Options{addrs, cmpopts.IgnoreFields(proflow.Decision{}, "Latency")}
)

// fakeEncoder writes each switch's overflow rate into the state, so a test
// can see what the policy was given, and records what the controller did to it.
type fakeEncoder struct {
	dim      int
	err      error // returned by Encode when set
	setErr   error // returned by SetBaseline when set
	panicV   any   // Dim, Encode and Reset panic with it when set
	baseline *proflow.Baseline
	resets   int
	encodes  int
}

func (e *fakeEncoder) Dim() int {
	if e.panicV != nil {
		panic(e.panicV)
	}
	return e.dim
}

func (e *fakeEncoder) Encode(dst proflow.State, obs *proflow.Observation, current int) error {
	e.encodes++
	if e.panicV != nil {
		panic(e.panicV)
	}
	if e.err != nil {
		return e.err
	}
	clear(dst)
	for k, s := range obs.Switches {
		dst[k] = float32(s.OverflowRate)
	}
	dst[len(obs.Switches)+current] = 1
	return nil
}

func (e *fakeEncoder) SetBaseline(b proflow.Baseline) error {
	if e.setErr != nil {
		return e.setErr
	}
	e.baseline = &b
	return nil
}

func (e *fakeEncoder) Reset() {
	if e.panicV != nil {
		panic(e.panicV)
	}
	e.resets++
}

// rig is a controller on an in-memory fabric and a manual clock, with a
// policy and gate whose behaviour each test sets.
type rig struct {
	t     *testing.T
	clock *southboundtest.ManualClock
	fab   *southboundtest.Fabric
	enc   *fakeEncoder
	cfg   proflow.Config
	ctrl  *proflow.Controller

	scores      []float64 // what the policy returns, one per switch
	policyErr   error
	policyCalls int
	policyIn    proflow.Input // the last input the policy saw
	gate        func(d *proflow.Decision)
	panicIn     string                                                 // "Collect", "Score" or "Place": that method panics
	forecast    func(f *proflow.FlowForecast, in *proflow.Input) error // nil: the policy forecasts nothing
}

// rigPolicy is the rig's policy: a PolicyFunc that is also a Forecaster
// answering with the rig's forecast.
type rigPolicy struct {
	proflow.PolicyFunc
	r *rig
}

func (p rigPolicy) Forecast(f *proflow.FlowForecast, in *proflow.Input) error {
	if p.r.forecast == nil {
		return nil
	}
	return p.r.forecast(f, in)
}

// rigFabric is the in-memory fabric as the rig's controller sees it, as its
// Telemetry and its Enforcer: Collect and Place panic when the rig says so.
type rigFabric struct {
	*southboundtest.Fabric
	r *rig
}

func (f rigFabric) Collect(ctx context.Context, obs *proflow.Observation) error {
	if f.r.panicIn == "Collect" {
		panic(errBoom)
	}
	return f.Fabric.Collect(ctx, obs)
}

func (f rigFabric) Place(ctx context.Context, flow proflow.FlowID, sw int) error {
	if f.r.panicIn == "Place" {
		panic(fmt.Sprintf("place %v on %d: boom", flow, sw))
	}
	return f.Fabric.Place(ctx, flow, sw)
}

// newRig returns a controller with a known baseline (no baseline phase), the
// flow placed on switch 0 by Reconcile, a healthy fabric and a policy that
// prefers switch 0. mod, if not nil, edits the config first.
func newRig(t *testing.T, mod func(*proflow.Config)) *rig {
	t.Helper()
	r := &rig{t: t, clock: southboundtest.NewManualClock(epoch), enc: &fakeEncoder{dim: 8}}
	topo := proflow.PaperTopology()
	r.fab = southboundtest.NewFabric(topo, r.clock)
	r.fab.SetSwitches(healthySwitch)
	for l := range topo.NumLeaves() {
		r.fab.SetLeaf(l, healthyLeaf)
	}
	r.fab.SetFlow(healthyFlow)
	r.scores = []float64{1, 0, 0, 0}
	r.gate = argmaxGate

	cfg := proflow.DefaultConfig()
	cfg.Flow = testFlow
	cfg.Clock = r.clock
	b := testBaseline
	cfg.Baseline = &b
	cfg.PlaceInitial = true
	if mod != nil {
		mod(&cfg)
	}
	r.cfg = cfg
	pol := rigPolicy{r: r}
	pol.PolicyFunc = proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
		r.policyCalls++
		r.policyIn = *in
		if r.panicIn == "Score" {
			var agent *policy.Agent // what policy.LoadAgent returns for a missing file
			return agent.Score(scores, in)
		}
		copy(scores, r.scores)
		return r.policyErr
	})
	gate := proflow.GateFunc(func(d *proflow.Decision) { r.gate(d) })
	sb := rigFabric{r.fab, r}
	ctrl, err := proflow.NewController(cfg, sb, r.enc, pol, gate, sb)
	if err != nil {
		t.Fatalf("NewController: %v", err)
	}
	r.ctrl = ctrl
	if err := ctrl.Reconcile(t.Context()); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return r
}

// argmaxGate admits the best-scoring switch at once when it is not the
// current one: a gate with δ = 0, W = 1 and no cooldown.
func argmaxGate(d *proflow.Decision) {
	best := 0
	for k, s := range d.Scores {
		if s > d.Scores[best] {
			best = k
		}
	}
	d.Best, d.Margin, d.Votes = best, d.Scores[best]-d.Scores[d.Current], 1
	if best == d.Current {
		d.Target, d.Reason, d.Votes = -1, proflow.ReasonStay, 0
		return
	}
	d.Target = best
}

// step advances the clock one interval and runs one step.
func (r *rig) step() proflow.Decision {
	r.t.Helper()
	r.clock.Advance(r.cfg.Interval)
	return r.ctrl.Step(r.t.Context())
}

// placement returns where the fabric really forwards the flow.
func (r *rig) placement() int {
	r.t.Helper()
	sw, ok := r.fab.Placement(testFlow)
	if !ok {
		r.t.Fatal("the fabric has no placement for the flow")
	}
	return sw
}

func TestControllerReroutesToBestSwitch(t *testing.T) {
	r := newRig(t, nil)
	d := r.step()
	want := proflow.Decision{
		Seq: 1, Time: epoch.Add(500 * time.Millisecond), Flow: testFlow, Current: 0,
		Scores: []float64{1, 0, 0, 0}, Best: 0, Target: -1, Reason: proflow.ReasonStay,
		Throughput: 2e7,                                // the flow's sample, for the gate
		Load:       0.8,                                // agg1 sends 20 of the bucket's 25 MB/s
		Dominated:  []bool{false, false, false, false}, // the test fabric's idle switches tie
		Relieves:   []bool{false, false, false, false}, // and every switch reads as the flow's
	}
	if diff := cmp.Diff(want, d, decisionOpts); diff != "" {
		t.Fatalf("first step (-want +got):\n%s", diff)
	}

	r.scores = []float64{0, 0, 3, 1}
	d = r.step()
	want = proflow.Decision{
		Seq: 2, Time: epoch.Add(time.Second), Flow: testFlow, Current: 0,
		Scores: []float64{0, 0, 3, 1}, Best: 2, Margin: 3, Votes: 1, Target: 2,
		Rerouted: true, Reason: proflow.ReasonRerouted, Throughput: 2e7, Load: 0.8, Dominated: []bool{false, false, false, false},
		Relieves: []bool{false, false, false, false},
	}
	if diff := cmp.Diff(want, d, decisionOpts); diff != "" {
		t.Fatalf("rerouting step (-want +got):\n%s", diff)
	}
	if got := r.ctrl.Current(); got != 2 {
		t.Errorf("Current() = %d, want 2", got)
	}
	if got := r.placement(); got != 2 {
		t.Errorf("fabric placement = %d, want 2", got)
	}

	d = r.step()
	if d.Current != 2 || d.Reason != proflow.ReasonStay || !d.LastReroute.Equal(epoch.Add(time.Second)) {
		t.Errorf("step after the reroute: current %d, reason %q, last reroute %v; want 2, stay, %v",
			d.Current, d.Reason, d.LastReroute, epoch.Add(time.Second))
	}
	if r.policyIn.Current != 2 || r.policyIn.Obs == nil || len(r.policyIn.State) != r.enc.dim {
		t.Errorf("policy input = current %d, obs %v, state of %d; want 2, set, %d",
			r.policyIn.Current, r.policyIn.Obs != nil, len(r.policyIn.State), r.enc.dim)
	}
}

// TestControllerHoldsOnBadInput injects every kind of bad input into a
// controller whose policy wants to move the flow from switch 0 to 2: the
// step must hold the placement, say why in the Decision, and the next step,
// with the fault removed, must move the flow.
func TestControllerHoldsOnBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	withSwitch := func(k int, s proflow.SwitchSample) func(*rig) {
		return func(r *rig) { r.fab.SetSwitch(k, s) }
	}
	withLeaf := func(l int, s proflow.LeafSample) func(*rig) {
		return func(r *rig) { r.fab.SetLeaf(l, s) }
	}
	withFlow := func(s proflow.FlowSample) func(*rig) {
		return func(r *rig) { r.fab.SetFlow(s) }
	}
	for _, c := range []struct {
		name    string
		config  func(*proflow.Config)
		inject  func(*rig)
		restore func(*rig) // nil: the fault lasts one step
		reason  proflow.Reason
		is      error  // a sentinel the error must wrap, if any
		field   string // the observation field the error must name, if any
		panics  string // the method whose panic the error must report, if any
		policy  bool   // whether the policy runs on the faulty step
	}{
		{name: "telemetry error", inject: func(r *rig) { r.fab.FailCollect(1, errBoom) },
			reason: proflow.ReasonTelemetry, is: errBoom},
		{name: "telemetry reports stale counters", inject: func(r *rig) { r.fab.FailCollect(1, proflow.ErrStale) },
			reason: proflow.ReasonStale, is: proflow.ErrStale},
		{name: "missing switch",
			inject:  func(r *rig) { r.fab.Tamper(func(o *proflow.Observation) { o.Switches = o.Switches[:3] }) },
			restore: func(r *rig) { r.fab.Tamper(nil) },
			reason:  proflow.ReasonInvalid, is: proflow.ErrMissingSwitch, field: "switches"},
		{name: "missing leaf",
			inject:  func(r *rig) { r.fab.Tamper(func(o *proflow.Observation) { o.Leaves = o.Leaves[:1] }) },
			restore: func(r *rig) { r.fab.Tamper(nil) },
			reason:  proflow.ReasonInvalid, field: "leaves"},
		{name: "unset time",
			inject:  func(r *rig) { r.fab.Tamper(func(o *proflow.Observation) { o.Time = time.Time{} }) },
			restore: func(r *rig) { r.fab.Tamper(nil) },
			reason:  proflow.ReasonInvalid, field: "time"},
		{name: "NaN tx rate", inject: withSwitch(1, proflow.SwitchSample{TxRate: nan}),
			restore: withSwitch(1, healthySwitch), reason: proflow.ReasonInvalid, field: "switches[agg2].tx_rate"},
		{name: "+Inf overflow rate", inject: withSwitch(0, proflow.SwitchSample{OverflowRate: inf}),
			restore: withSwitch(0, healthySwitch), reason: proflow.ReasonInvalid, field: "switches[agg1].overflow_rate"},
		{name: "negative flow count", inject: withSwitch(3, proflow.SwitchSample{FlowCount: -2}),
			restore: withSwitch(3, healthySwitch), reason: proflow.ReasonInvalid, field: "switches[agg4].flow_count"},
		{name: "-Inf elephant rate", inject: withSwitch(2, proflow.SwitchSample{ElephantRate: math.Inf(-1)}),
			restore: withSwitch(2, healthySwitch), reason: proflow.ReasonInvalid, field: "switches[agg3].elephant_rate"},
		{name: "+Inf leaf ingress rate", inject: withLeaf(2, proflow.LeafSample{IngressRate: inf}),
			restore: withLeaf(2, healthyLeaf), reason: proflow.ReasonInvalid, field: "leaves[leaf3].ingress_rate"},
		{name: "negative leaf transmit rate", inject: withLeaf(0, proflow.LeafSample{TransmitRate: -1}),
			restore: withLeaf(0, healthyLeaf), reason: proflow.ReasonInvalid, field: "leaves[leaf1].transmit_rate"},
		{name: "NaN throughput", inject: withFlow(proflow.FlowSample{Throughput: nan}),
			restore: withFlow(healthyFlow), reason: proflow.ReasonInvalid, field: "flow.throughput"},
		{name: "negative congestion rate", inject: withFlow(proflow.FlowSample{Throughput: 1, CongestionRate: -5}),
			restore: withFlow(healthyFlow), reason: proflow.ReasonInvalid, field: "flow.congestion_rate"},
		{name: "sample older than MaxSampleAge",
			inject:  func(r *rig) { r.fab.SetLag(r.cfg.Interval * 3) },
			restore: func(r *rig) { r.fab.SetLag(0) },
			reason:  proflow.ReasonStale, is: proflow.ErrStale},
		{name: "sample time not advancing",
			inject:  func(r *rig) { r.fab.SetStale(true) },
			restore: func(r *rig) { r.fab.SetStale(false) },
			reason:  proflow.ReasonStale, is: proflow.ErrStale},
		{name: "encoder error",
			inject:  func(r *rig) { r.enc.err = errBoom },
			restore: func(r *rig) { r.enc.err = nil },
			reason:  proflow.ReasonEncoder, is: errBoom},
		{name: "policy error",
			inject:  func(r *rig) { r.policyErr = errBoom },
			restore: func(r *rig) { r.policyErr = nil },
			reason:  proflow.ReasonPolicy, is: errBoom, policy: true},
		{name: "NaN score",
			inject: func(r *rig) { r.scores = []float64{0, nan, 3, 1} },
			reason: proflow.ReasonPolicy, is: proflow.ErrBadScores, policy: true},
		{name: "-Inf score",
			inject: func(r *rig) { r.scores = []float64{0, 0, 3, math.Inf(-1)} },
			reason: proflow.ReasonPolicy, is: proflow.ErrBadScores, policy: true},
		{name: "gate target out of range",
			inject:  func(r *rig) { r.gate = func(d *proflow.Decision) { argmaxGate(d); d.Target = 4 } },
			restore: func(r *rig) { r.gate = argmaxGate },
			reason:  proflow.ReasonPolicy, is: proflow.ErrMissingSwitch, policy: true},
		{name: "enforcer error",
			inject: func(r *rig) { r.fab.FailPlace(1, errBoom) },
			reason: proflow.ReasonEnforcer, is: errBoom, policy: true},
		{name: "telemetry panics",
			inject:  func(r *rig) { r.panicIn = "Collect" },
			restore: func(r *rig) { r.panicIn = "" },
			reason:  proflow.ReasonTelemetry, is: errBoom, panics: "Telemetry.Collect"},
		{name: "encoder panics",
			inject:  func(r *rig) { r.enc.panicV = "encoder bug" },
			restore: func(r *rig) { r.enc.panicV = nil },
			reason:  proflow.ReasonEncoder, panics: "StateEncoder.Encode"},
		{name: "policy panics (a nil *policy.Agent)",
			inject:  func(r *rig) { r.panicIn = "Score" },
			restore: func(r *rig) { r.panicIn = "" },
			reason:  proflow.ReasonPolicy, panics: "Policy.Score", policy: true},
		{name: "gate panics",
			inject:  func(r *rig) { r.gate = func(d *proflow.Decision) { d.Target = 2; panic("gate bug") } },
			restore: func(r *rig) { r.gate = argmaxGate },
			reason:  proflow.ReasonPolicy, panics: "Gate.Admit", policy: true},
		{name: "enforcer panics",
			inject:  func(r *rig) { r.panicIn = "Place" },
			restore: func(r *rig) { r.panicIn = "" },
			reason:  proflow.ReasonEnforcer, panics: "Enforcer.Place", policy: true},
		{name: "enforcer hangs past the step timeout",
			config:  func(c *proflow.Config) { c.StepTimeout = 20 * time.Millisecond },
			inject:  func(r *rig) { r.fab.BlockPlace(true) },
			restore: func(r *rig) { r.fab.BlockPlace(false) },
			reason:  proflow.ReasonEnforcer, is: context.DeadlineExceeded, policy: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.config)
			if d := r.step(); d.Reason != proflow.ReasonStay || d.Err != nil {
				t.Fatalf("healthy step: reason %q, err %v; want stay, nil", d.Reason, d.Err)
			}
			r.scores = []float64{0, 0, 3, 1} // the policy now wants switch 2
			calls := r.policyCalls

			c.inject(r)
			d := r.step()
			if d.Reason != c.reason {
				t.Errorf("faulty step: reason %q, want %q (err %v)", d.Reason, c.reason, d.Err)
			}
			if !d.Reason.Held() {
				t.Errorf("reason %q: Held() = false, want true", d.Reason)
			}
			switch {
			case d.Err == nil:
				t.Errorf("faulty step: Err = nil, want the error behind the hold")
			case c.is != nil && !errors.Is(d.Err, c.is):
				t.Errorf("faulty step: Err = %v, want it to wrap %v", d.Err, c.is)
			}
			if c.panics != "" {
				var pe *proflow.PanicError
				if !errors.As(d.Err, &pe) || pe.Interface+"."+pe.Method != c.panics || len(pe.Stack) == 0 {
					t.Errorf("faulty step: Err = %v, want a *PanicError from %s with its stack", d.Err, c.panics)
				} else if !strings.Contains(d.Err.Error(), c.panics+" of ") {
					t.Errorf("error message %q does not name %s", d.Err, c.panics)
				}
			}
			if c.field != "" {
				var ioe *proflow.InvalidObservationError
				if !errors.As(d.Err, &ioe) || ioe.Field != c.field {
					t.Errorf("faulty step: Err = %v, want an InvalidObservationError on field %q", d.Err, c.field)
				} else if !strings.Contains(d.Err.Error(), c.field) {
					t.Errorf("error message %q does not name the field %q", d.Err, c.field)
				}
			}
			if d.Rerouted || d.Current != 0 {
				t.Errorf("faulty step: rerouted %v from %d, want a hold on 0", d.Rerouted, d.Current)
			}
			if c.reason != proflow.ReasonEnforcer && d.Target != -1 {
				t.Errorf("faulty step: target %d, want -1", d.Target)
			}
			if got := r.ctrl.Current(); got != 0 {
				t.Errorf("Current() after the faulty step = %d, want 0 (held)", got)
			}
			if got := r.placement(); got != 0 {
				t.Errorf("fabric placement after the faulty step = %d, want 0 (held)", got)
			}
			if ran := r.policyCalls > calls; ran != c.policy {
				t.Errorf("policy ran on the faulty step: %v, want %v", ran, c.policy)
			}

			if c.restore != nil {
				c.restore(r)
			}
			r.scores = []float64{0, 0, 3, 1}
			d = r.step()
			if !d.Rerouted || d.Reason != proflow.ReasonRerouted || d.Err != nil {
				t.Fatalf("step after the fault: rerouted %v, reason %q, err %v; want a reroute", d.Rerouted, d.Reason, d.Err)
			}
			if got, fab := r.ctrl.Current(), r.placement(); got != 2 || fab != 2 {
				t.Errorf("after recovery Current() = %d, fabric placement %d; want 2, 2", got, fab)
			}
		})
	}
}

func TestControllerBaselinePhase(t *testing.T) {
	const warmup, samples = 2, 3
	r := newRig(t, func(c *proflow.Config) {
		c.Baseline = nil
		c.BaselineWarmup, c.BaselineSamples = warmup, samples
	})
	var want proflow.Baseline
	for i := 1; i <= warmup+samples; i++ {
		s := healthySwitch
		s.OverflowRate, s.FlowCount = float64(1000*i), float64(i)
		r.fab.SetSwitch(0, s)
		r.fab.SetSwitch(1, proflow.SwitchSample{OverflowRate: 1e9}) // other switches do not count
		r.fab.SetFlow(proflow.FlowSample{Throughput: 1e6 * float64(i)})
		if i > warmup {
			want.Overflow += float64(1000*i) / samples
			want.FlowCount += float64(i) / samples
			want.Throughput += 1e6 * float64(i) / samples
		}
		if _, ok := r.ctrl.Baseline(); ok {
			t.Fatalf("Baseline() known before step %d, want it learned after %d steps", i, warmup+samples)
		}
		d := r.step()
		if d.Reason != proflow.ReasonBaseline || d.Err != nil || d.Best != -1 || len(d.Scores) != 0 {
			t.Errorf("step %d: reason %q, err %v, best %d, scores %v; want baseline, nil, -1, none",
				i, d.Reason, d.Err, d.Best, d.Scores)
		}
	}
	if r.policyCalls != 0 {
		t.Errorf("policy called %d times during the baseline phase, want 0", r.policyCalls)
	}
	got, ok := r.ctrl.Baseline()
	if !ok {
		t.Fatal("Baseline() unknown after the baseline phase")
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("learned baseline (-want +got):\n%s", diff)
	}
	if r.enc.baseline == nil || *r.enc.baseline != got {
		t.Errorf("encoder baseline = %v, want %v", r.enc.baseline, got)
	}
	if d := r.step(); d.Reason != proflow.ReasonStay || r.policyCalls != 1 {
		t.Errorf("first step after the phase: reason %q, policy calls %d; want stay, 1", d.Reason, r.policyCalls)
	}
}

func TestControllerBaselinePhaseRestartsOnUnusableBaseline(t *testing.T) {
	r := newRig(t, func(c *proflow.Config) {
		c.Baseline = nil
		c.BaselineWarmup, c.BaselineSamples = 0, 2
	})
	r.fab.SetFlow(proflow.FlowSample{}) // the protected flow is not running
	r.step()
	d := r.step()
	if d.Reason != proflow.ReasonBaseline || d.Err == nil || !strings.Contains(d.Err.Error(), "throughput") {
		t.Errorf("end of a phase with zero throughput: reason %q, err %v; want baseline with a throughput error", d.Reason, d.Err)
	}
	if _, ok := r.ctrl.Baseline(); ok {
		t.Error("Baseline() known after a phase with zero throughput")
	}
	r.fab.SetFlow(healthyFlow)
	r.step()
	if d := r.step(); d.Reason != proflow.ReasonBaseline || d.Err != nil {
		t.Errorf("restarted phase: reason %q, err %v; want baseline, nil", d.Reason, d.Err)
	}
	if b, ok := r.ctrl.Baseline(); !ok || b.Throughput != healthyFlow.Throughput {
		t.Errorf("Baseline() after the restarted phase = %v, %v; want throughput %v", b, ok, healthyFlow.Throughput)
	}
	if r.policyCalls != 0 {
		t.Errorf("policy called %d times during the phase, want 0", r.policyCalls)
	}
}

func TestControllerConfiguredBaselineSkipsPhase(t *testing.T) {
	r := newRig(t, nil)
	if b, ok := r.ctrl.Baseline(); !ok || b != testBaseline {
		t.Errorf("Baseline() = %v, %v; want %v, true", b, ok, testBaseline)
	}
	if r.enc.baseline == nil || *r.enc.baseline != testBaseline {
		t.Errorf("encoder baseline = %v, want %v", r.enc.baseline, testBaseline)
	}
	if d := r.step(); d.Reason != proflow.ReasonStay || r.policyCalls != 1 {
		t.Errorf("first step: reason %q, policy calls %d; want stay, 1", d.Reason, r.policyCalls)
	}
}

func TestControllerResetStartsNewEpisode(t *testing.T) {
	r := newRig(t, func(c *proflow.Config) { c.Baseline = nil; c.BaselineWarmup, c.BaselineSamples = 0, 1 })
	r.step()
	if _, ok := r.ctrl.Baseline(); !ok {
		t.Fatal("baseline not learned after one sample")
	}
	resets := r.enc.resets
	if err := r.ctrl.Reset(3); err != nil {
		t.Fatal(err)
	}
	if r.ctrl.Current() != 3 || r.enc.resets != resets+1 {
		t.Errorf("after Reset(3): Current() = %d, encoder resets %d; want 3, %d", r.ctrl.Current(), r.enc.resets, resets+1)
	}
	if _, ok := r.ctrl.Baseline(); ok {
		t.Error("Baseline() still known after Reset, want it learned again")
	}
	if d := r.step(); d.Seq != 1 || d.Reason != proflow.ReasonBaseline {
		t.Errorf("first step after Reset: seq %d, reason %q; want 1, baseline", d.Seq, d.Reason)
	}
	var use *proflow.UnknownSwitchError
	if err := r.ctrl.Reset(4); !errors.As(err, &use) || use.Index != 4 {
		t.Errorf("Reset(4) = %v, want an UnknownSwitchError for index 4", err)
	}
}

func TestControllerRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	decisions := make(chan proflow.Decision, 16)
	r := newRig(t, func(c *proflow.Config) { c.Observer = proflow.SendTo(decisions) })
	if err := r.fab.Place(t.Context(), testFlow, 1); err != nil {
		t.Fatal(err)
	}
	r.scores = []float64{0, 1, 0, 0} // stay on 1

	stop := startRun(t, r)
	defer stop()
	for i := 1; i <= 3; i++ {
		select {
		case d := <-decisions:
			t.Fatalf("decision %d before tick %d", d.Seq, i)
		default:
		}
		r.clock.Advance(r.cfg.Interval)
		d := receive(t, decisions)
		if d.Seq != uint64(i) || d.Current != 1 || d.Reason != proflow.ReasonStay {
			t.Errorf("tick %d: decision seq %d on %d, reason %q; want seq %d on 1 (reconciled), stay", i, d.Seq, d.Current, d.Reason, i)
		}
		if want := epoch.Add(time.Duration(i) * r.cfg.Interval); !d.Time.Equal(want) {
			t.Errorf("tick %d: decision time %v, want %v", i, d.Time, want)
		}
	}

	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if n := r.clock.Tickers(); n != 0 {
		t.Errorf("%d tickers left after Run returned, want 0 (stopped)", n)
	}
}

// startRun runs r's controller in a goroutine and returns once Run's ticker
// exists. stop cancels Run and returns its error; it fails the test if Run
// does not return within 5 s, and may be called more than once.
func startRun(t *testing.T, r *rig) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.ctrl.Run(ctx) }()
	stop = sync.OnceValue(func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5 s of cancel")
			return nil
		}
	})
	if err := r.clock.BlockUntil(ctx, 1); err != nil {
		stop()
		t.Fatal(err)
	}
	return stop
}

func TestControllerRunCancelledDuringHangingPlace(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := newRig(t, func(c *proflow.Config) { c.StepTimeout = time.Hour })
	r.scores = []float64{0, 0, 3, 0}
	r.fab.BlockPlace(true)
	places := r.fab.Places()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.ctrl.Run(ctx) }()
	if err := r.clock.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(r.cfg.Interval)
	waitFor(t, "Place to be called", func() bool { return r.fab.Places() > places })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel while Place hung")
	}
	if got := r.placement(); got != 0 {
		t.Errorf("placement after the abandoned Place = %d, want 0", got)
	}
}

func TestControllerRunAlreadyCancelled(t *testing.T) {
	r := newRig(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := r.ctrl.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context = %v, want context.Canceled", err)
	}
}

func receive(t *testing.T, ch <-chan proflow.Decision) proflow.Decision {
	t.Helper()
	select {
	case d := <-ch:
		return d
	case <-time.After(5 * time.Second):
		t.Fatal("no decision within 5 s of a tick")
		return proflow.Decision{}
	}
}

// waitFor polls cond every millisecond, for at most 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// locatingEnforcer is an Enforcer and Locator built from functions.
type locatingEnforcer struct {
	proflow.EnforcerFunc
	locate func(ctx context.Context, flow proflow.FlowID) (int, error)
}

func (l locatingEnforcer) Locate(ctx context.Context, flow proflow.FlowID) (int, error) {
	return l.locate(ctx, flow)
}

func TestControllerReconcile(t *testing.T) {
	var placed []int
	place := proflow.EnforcerFunc(func(_ context.Context, _ proflow.FlowID, sw int) error {
		placed = append(placed, sw)
		return nil
	})
	failPlace := proflow.EnforcerFunc(func(context.Context, proflow.FlowID, int) error { return errBoom })
	locateAt := func(sw int, err error) func(context.Context, proflow.FlowID) (int, error) {
		return func(context.Context, proflow.FlowID) (int, error) { return sw, err }
	}
	notPlaced := fmt.Errorf("sb: locate: %w", proflow.ErrNotPlaced)
	for _, c := range []struct {
		name         string
		enf          proflow.Enforcer
		placeInitial bool
		wantCurrent  int
		wantPlaced   []int
		wantIs       error // nil: Reconcile succeeds
	}{
		{name: "locator wins over the configured switch", enf: locatingEnforcer{place, locateAt(3, nil)},
			placeInitial: true, wantCurrent: 3},
		{name: "not placed, keep the configured switch", enf: locatingEnforcer{place, locateAt(-1, notPlaced)},
			wantCurrent: 1},
		{name: "not placed, place initial", enf: locatingEnforcer{place, locateAt(-1, notPlaced)},
			placeInitial: true, wantCurrent: 1, wantPlaced: []int{1}},
		{name: "locate fails", enf: locatingEnforcer{place, locateAt(-1, errBoom)},
			placeInitial: true, wantCurrent: 1, wantIs: errBoom},
		{name: "located switch out of range", enf: locatingEnforcer{place, locateAt(7, nil)},
			wantCurrent: 1, wantIs: proflow.ErrMissingSwitch},
		{name: "no locator, place initial", enf: place, placeInitial: true, wantCurrent: 1, wantPlaced: []int{1}},
		{name: "no locator, nothing to do", enf: place, wantCurrent: 1},
		{name: "initial placement fails", enf: failPlace, placeInitial: true, wantCurrent: 1, wantIs: errBoom},
	} {
		t.Run(c.name, func(t *testing.T) {
			placed = nil
			cfg := proflow.DefaultConfig()
			cfg.Flow, cfg.InitialSwitch, cfg.PlaceInitial = testFlow, 1, c.placeInitial
			ctrl, err := proflow.NewController(cfg, southboundtest.NewFabric(cfg.Topology, nil), &fakeEncoder{dim: 8},
				proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil }), proflow.GateFunc(argmaxGate), c.enf)
			if err != nil {
				t.Fatal(err)
			}
			err = ctrl.Reconcile(t.Context())
			switch {
			case c.wantIs == nil && err != nil:
				t.Errorf("Reconcile = %v, want nil", err)
			case c.wantIs != nil && !errors.Is(err, c.wantIs):
				t.Errorf("Reconcile = %v, want an error wrapping %v", err, c.wantIs)
			}
			if got := ctrl.Current(); got != c.wantCurrent {
				t.Errorf("Current() = %d, want %d", got, c.wantCurrent)
			}
			if diff := cmp.Diff(c.wantPlaced, placed); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
		})
	}
}

func validConfig() proflow.Config {
	cfg := proflow.DefaultConfig()
	cfg.Flow = testFlow
	return cfg
}

func TestConfigValidate(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, c := range []struct {
		name string
		mod  func(*proflow.Config)
		want []string // substrings of the error
	}{
		{"one switch", func(c *proflow.Config) { c.Topology.Switches = []string{"agg1"} },
			[]string{"1 aggregation switches, want at least 2"}},
		{"duplicate switch names", func(c *proflow.Config) { c.Topology.Switches = []string{"a", "b", "a"} },
			[]string{`switch name "a" used at index 0 and 2`}},
		{"duplicate leaf names", func(c *proflow.Config) { c.Topology.Leaves = []string{"l", "l"} },
			[]string{`leaf name "l" used at index 0 and 1`}},
		{"zero bucket rate", func(c *proflow.Config) { c.Topology.BucketRate = 0 },
			[]string{"bucket rate 0 bytes/s"}},
		{"zero flow", func(c *proflow.Config) { c.Flow = proflow.FlowID{} },
			[]string{"proflow: invalid controller config: flow: source address is unset, want an IPv4 or IPv6 address"}},
		{"flow with unknown protocol", func(c *proflow.Config) { c.Flow.Proto = 1 },
			[]string{"protocol 1 is not supported"}},
		{"negative initial switch", func(c *proflow.Config) { c.InitialSwitch = -1 },
			[]string{"initial switch -1 out of range, want 0..3"}},
		{"initial switch past the end", func(c *proflow.Config) { c.InitialSwitch = 4 },
			[]string{"initial switch 4 out of range, want 0..3"}},
		{"negative interval", func(c *proflow.Config) { c.Interval = -time.Second },
			[]string{"interval -1s"}},
		{"negative step timeout", func(c *proflow.Config) { c.StepTimeout = -time.Second },
			[]string{"step timeout -1s"}},
		{"negative max clock skew", func(c *proflow.Config) { c.MaxClockSkew = -time.Second },
			[]string{"max clock skew -1s, want a positive duration"}},
		{"negative baseline window", func(c *proflow.Config) { c.BaselineSamples = -1 },
			[]string{"window -1 samples"}},
		{"invalid baseline", func(c *proflow.Config) { c.Baseline = &proflow.Baseline{Throughput: math.NaN()} },
			[]string{"baseline throughput is NaN"}},
		{"typed nil clock", func(c *proflow.Config) { c.Clock = (*southboundtest.ManualClock)(nil) },
			[]string{"clock is a nil *southboundtest.ManualClock, want a usable clock, or nil for the system clock"}},
		{"typed nil registerer", func(c *proflow.Config) { c.Registerer = (*prometheus.Registry)(nil) },
			[]string{"registerer is a nil *prometheus.Registry"}},
		{"shadow and place initial", func(c *proflow.Config) { c.Shadow, c.PlaceInitial = true, true },
			[]string{"shadow and place-initial both set"}},
		{"cordoned switch out of range", func(c *proflow.Config) { c.Cordoned = []int{1, 7} },
			[]string{"cordoned switch 7 out of range, want 0..3"}},
		{"several problems at once", func(c *proflow.Config) {
			c.Topology.BucketRate = math.Inf(1)
			c.InitialSwitch = 9
		}, []string{"bucket rate +Inf", "initial switch 9"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := validConfig()
			c.mod(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("Validate = nil, want an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, want it to contain %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "proflow: invalid controller config: ") {
				t.Errorf("Validate = %q, want the component prefix", err)
			}
			fab := southboundtest.NewFabric(proflow.PaperTopology(), nil)
			if _, err := proflow.NewController(cfg, fab, &fakeEncoder{dim: 8},
				proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil }), proflow.GateFunc(argmaxGate), fab); err == nil {
				t.Error("NewController accepted the invalid config")
			}
		})
	}
}

func TestNewControllerCollaborators(t *testing.T) {
	fab := southboundtest.NewFabric(proflow.PaperTopology(), nil)
	enc := &fakeEncoder{dim: 8}
	pol := proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil })
	gate := proflow.GateFunc(argmaxGate)
	// The README's mistake: the error of LoadAgent ignored, the file missing.
	agent, loadErr := policy.LoadAgent(filepath.Join(t.TempDir(), "missing.safetensors"), telemetry.DefaultEncoderConfig(proflow.PaperTopology()))
	if agent != nil || loadErr == nil {
		t.Fatalf("LoadAgent of a missing file = %v, %v; want a nil agent and an error", agent, loadErr)
	}
	for _, c := range []struct {
		name string
		tel  proflow.Telemetry
		enc  proflow.StateEncoder
		pol  proflow.Policy
		gate proflow.Gate
		enf  proflow.Enforcer
		want string
	}{
		{"nil telemetry", nil, enc, pol, gate, fab, "telemetry is nil"},
		{"nil encoder", fab, nil, pol, gate, fab, "state encoder is nil"},
		{"nil policy", fab, enc, nil, gate, fab, "policy is nil"},
		{"nil gate", fab, enc, pol, nil, fab, "gate is nil"},
		{"nil enforcer", fab, enc, pol, gate, nil, "enforcer is nil"},
		{"typed nil telemetry", (*southboundtest.Fabric)(nil), enc, pol, gate, fab, "telemetry is a nil *southboundtest.Fabric"},
		{"typed nil encoder", fab, (*fakeEncoder)(nil), pol, gate, fab, "state encoder is a nil *proflow_test.fakeEncoder"},
		{"typed nil policy from LoadAgent", fab, enc, agent, gate, fab, "policy is a nil *policy.Agent, want a usable one (was it returned together with an error?)"},
		{"nil PolicyFunc", fab, enc, proflow.PolicyFunc(nil), gate, fab, "policy is a nil proflow.PolicyFunc"},
		{"nil GateFunc", fab, enc, pol, proflow.GateFunc(nil), fab, "gate is a nil proflow.GateFunc"},
		{"nil EnforcerFunc", fab, enc, pol, gate, proflow.EnforcerFunc(nil), "enforcer is a nil proflow.EnforcerFunc"},
		{"zero-dimension encoder", fab, &fakeEncoder{}, pol, gate, fab, "dimension 0"},
		{"encoder panics in Dim", fab, &fakeEncoder{dim: 8, panicV: "no dimension"}, pol, gate, fab,
			"StateEncoder.Dim of *proflow_test.fakeEncoder panicked: no dimension"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctrl, err := proflow.NewController(validConfig(), c.tel, c.enc, c.pol, c.gate, c.enf)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewController = %v, %v; want an error containing %q", ctrl, err, c.want)
			}
		})
	}

	cfg := validConfig()
	cfg.Baseline = &testBaseline
	if _, err := proflow.NewController(cfg, fab, &fakeEncoder{dim: 8, setErr: errBoom}, pol, gate, fab); !errors.Is(err, errBoom) {
		t.Errorf("NewController with an encoder refusing the baseline = %v, want %v", err, errBoom)
	}
}

func TestControllerPrometheus(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := newRig(t, func(c *proflow.Config) { c.Registerer = reg })
	r.step() // stay
	r.scores = []float64{0, 0, 3, 1}
	r.step() // reroute to 2
	r.fab.FailCollect(2, errBoom)
	r.step() // telemetry error
	r.step() // telemetry error
	r.scores = []float64{0, 5, 3, 1}
	r.step() // reroute to 1

	const want = `
# HELP proflow_decisions_total Control-loop steps, by the reason the step ended.
# TYPE proflow_decisions_total counter
proflow_decisions_total{reason="baseline"} 0
proflow_decisions_total{reason="cooldown"} 0
proflow_decisions_total{reason="encoder-error"} 0
proflow_decisions_total{reason="enforcer-error"} 0
proflow_decisions_total{reason="gap"} 0
proflow_decisions_total{reason="invalid-observation"} 0
proflow_decisions_total{reason="margin"} 0
proflow_decisions_total{reason="policy-error"} 0
proflow_decisions_total{reason="rerouted"} 2
proflow_decisions_total{reason="reserve"} 0
proflow_decisions_total{reason="shadow"} 0
proflow_decisions_total{reason="stale-observation"} 0
proflow_decisions_total{reason="stay"} 1
proflow_decisions_total{reason="telemetry-error"} 2
proflow_decisions_total{reason="votes"} 0
# HELP proflow_reroutes_total Decisions to reroute the protected flow that the enforcer carried out (steps with reason rerouted).
# TYPE proflow_reroutes_total counter
proflow_reroutes_total 2
# HELP proflow_telemetry_errors_total Steps held because telemetry failed, was invalid or stale.
# TYPE proflow_telemetry_errors_total counter
proflow_telemetry_errors_total 2
# HELP proflow_current_switch 1 for the aggregation switch carrying the protected flow after the latest step, 0 for the others (all 0 before the first step).
# TYPE proflow_current_switch gauge
proflow_current_switch{switch="agg1"} 0
proflow_current_switch{switch="agg2"} 1
proflow_current_switch{switch="agg3"} 0
proflow_current_switch{switch="agg4"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"proflow_decisions_total", "proflow_reroutes_total", "proflow_telemetry_errors_total", "proflow_current_switch"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "proflow_loop_duration_seconds"); err != nil || n != 1 {
		t.Errorf("loop duration histogram series = %d, %v; want 1", n, err)
	}
	if got := gatheredCount(t, reg, "proflow_loop_duration_seconds"); got != 5 {
		t.Errorf("loop duration observations = %d, want 5", got)
	}

}

func TestControllerPrometheusRegistration(t *testing.T) {
	newCtrl := func(reg prometheus.Registerer) error {
		cfg := validConfig()
		cfg.Registerer = reg
		fab := southboundtest.NewFabric(cfg.Topology, nil)
		pol := proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil })
		_, err := proflow.NewController(cfg, fab, &fakeEncoder{dim: 8}, pol, proflow.GateFunc(argmaxGate), fab)
		return err
	}

	// Two controllers on one registry collide unless each is wrapped.
	reg := prometheus.NewRegistry()
	if err := newCtrl(reg); err != nil {
		t.Fatal(err)
	}
	if err := newCtrl(reg); err == nil {
		t.Error("second controller on one registry: NewController = nil error, want a registration error")
	}
	reg = prometheus.NewRegistry()
	for _, flow := range []string{"first", "second"} {
		if err := newCtrl(prometheus.WrapRegistererWith(prometheus.Labels{"flow": flow}, reg)); err != nil {
			t.Errorf("controller %s on a wrapped registerer: %v", flow, err)
		}
	}

	// A failed registration leaves nothing behind, so a retry can succeed.
	reg = prometheus.NewRegistry()
	squatter := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "proflow_reroutes_total", Help: "Decisions to reroute the protected flow that the enforcer carried out (steps with reason rerouted).",
	})
	reg.MustRegister(squatter)
	if err := newCtrl(reg); err == nil {
		t.Fatal("NewController with a conflicting metric = nil error, want a registration error")
	}
	reg.Unregister(squatter)
	if err := newCtrl(reg); err != nil {
		t.Errorf("NewController after the conflict is gone: %v", err)
	}
}

// gatheredCount returns the sample count of the histogram called name.
func gatheredCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func TestControllerLogs(t *testing.T) {
	var buf bytes.Buffer
	r := newRig(t, func(c *proflow.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	r.step() // stay: Debug, filtered out
	r.scores = []float64{0, 0, 3, 1}
	r.fab.FailPlace(1, errBoom)
	r.step() // enforcer error: Warn
	r.step() // reroute: Info

	type record struct {
		Level, Msg, Reason, Target, Error string
		Seq                               uint64
	}
	var got []record
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var rec record
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		got = append(got, rec)
	}
	want := []record{
		{Level: "WARN", Msg: "proflow decision", Seq: 2, Reason: "enforcer-error", Target: "agg3",
			Error: "proflow: place tcp 10.0.0.1:5001->10.0.0.8:5201 on agg3: southboundtest: place tcp 10.0.0.1:5001->10.0.0.8:5201 on agg3: injected failure: boom"},
		{Level: "INFO", Msg: "proflow decision", Seq: 3, Reason: "rerouted", Target: "agg3"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log records (-want +got):\n%s", diff)
	}
}

func TestSendToDropsWhenFullAndClones(t *testing.T) {
	ch := make(chan proflow.Decision, 1)
	send := proflow.SendTo(ch)
	scores := []float64{1, 2}
	send(proflow.Decision{Seq: 1, Scores: scores})
	send(proflow.Decision{Seq: 2}) // dropped: ch is full
	scores[0] = 99
	d := <-ch
	if d.Seq != 1 || d.Scores[0] != 1 {
		t.Errorf("received seq %d with scores %v, want seq 1 with its own copy [1 2]", d.Seq, d.Scores)
	}
	select {
	case d := <-ch:
		t.Errorf("received seq %d, want it dropped", d.Seq)
	default:
	}
}

func TestDecisionClone(t *testing.T) {
	d := proflow.Decision{Seq: 3, Scores: []float64{1, 2, 3}, Reason: proflow.ReasonStay}
	c := d.Clone()
	d.Scores[0] = -1
	if diff := cmp.Diff(proflow.Decision{Seq: 3, Scores: []float64{1, 2, 3}, Reason: proflow.ReasonStay}, c, addrs); diff != "" {
		t.Errorf("clone shares storage (-want +got):\n%s", diff)
	}
}

// TestReasonHeld checks Held and Failed for every reason: the joint step
// holds a flow (issue 24) without failing.
func TestReasonHeld(t *testing.T) {
	type want struct{ held, failed bool }
	for r, w := range map[proflow.Reason]want{
		proflow.ReasonRerouted: {}, proflow.ReasonStay: {}, proflow.ReasonMargin: {},
		proflow.ReasonVotes: {}, proflow.ReasonCooldown: {}, proflow.ReasonBaseline: {},
		proflow.ReasonJoint: {held: true}, proflow.ReasonShadow: {held: true},
		proflow.ReasonTelemetry: {true, true}, proflow.ReasonInvalid: {true, true}, proflow.ReasonStale: {true, true},
		proflow.ReasonEncoder: {true, true}, proflow.ReasonPolicy: {true, true}, proflow.ReasonEnforcer: {true, true},
	} {
		if got := r.Held(); got != w.held {
			t.Errorf("Reason(%q).Held() = %v, want %v", r, got, w.held)
		}
		if got := r.Failed(); got != w.failed {
			t.Errorf("Reason(%q).Failed() = %v, want %v", r, got, w.failed)
		}
	}
}

// TestDecisionJSON checks issue 24's finding: a Decision's error survives
// JSON as the string "err", and a Decision without one has no "err".
func TestDecisionJSON(t *testing.T) {
	d := proflow.Decision{Seq: 7, Time: epoch, Flow: testFlow, Current: 1, Scores: []float64{1, 2, 3, 4}, Best: 3,
		Margin: 2, Target: -1, Reason: proflow.ReasonEnforcer, Err: errors.New("openflow: switch 0x2: refused"), Latency: time.Millisecond}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"err":"openflow: switch 0x2: refused"`) {
		t.Errorf("JSON %s lacks the error as \"err\"", data)
	}
	var back proflow.Decision
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("Unmarshal(%s): %v", data, err)
	}
	if back.Err == nil || back.Err.Error() != d.Err.Error() {
		t.Errorf("Err read back = %v, want %q", back.Err, d.Err)
	}
	back.Err, d.Err = nil, nil
	if diff := cmp.Diff(d, back, addrs); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	data, err = json.Marshal(&proflow.Decision{Reason: proflow.ReasonStay})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"err"`) {
		t.Errorf("JSON of a decision without error %s has \"err\"", data)
	}
}

// TestControllerRefusesFutureSample feeds a sample dated well after the
// controller's clock: the step must hold with an invalid-time error, and the
// sample must not become the latest one, so that the next, correctly dated
// samples are acted on instead of being refused as not advancing.
func TestControllerRefusesFutureSample(t *testing.T) {
	r := newRig(t, nil)
	if d := r.step(); d.Reason != proflow.ReasonStay || d.Err != nil {
		t.Fatalf("healthy step: reason %q, err %v; want stay, nil", d.Reason, d.Err)
	}
	r.scores = []float64{0, 0, 3, 1} // the policy now wants switch 2

	r.fab.SetLag(-time.Hour) // the telemetry's clock runs an hour ahead
	d := r.step()
	var ioe *proflow.InvalidObservationError
	if d.Reason != proflow.ReasonInvalid || !errors.As(d.Err, &ioe) || ioe.Field != "time" {
		t.Fatalf("future-dated step: reason %q, err %v; want invalid, an InvalidObservationError on time", d.Reason, d.Err)
	}
	if !strings.Contains(d.Err.Error(), "after the controller's clock") {
		t.Errorf("error %q does not say the sample is dated after the clock", d.Err)
	}
	if d.Rerouted || r.ctrl.Current() != 0 || r.placement() != 0 {
		t.Errorf("future-dated step moved the flow: rerouted %v, current %d, fabric %d; want a hold on 0",
			d.Rerouted, r.ctrl.Current(), r.placement())
	}

	r.fab.SetLag(0)
	for i := range 3 {
		d = r.step()
		if d.Err != nil {
			t.Fatalf("step %d after the clock was fixed: reason %q, err %v; want no error", i+1, d.Reason, d.Err)
		}
	}
	if got := r.ctrl.Current(); got != 2 {
		t.Errorf("Current() = %d after the clock was fixed, want 2", got)
	}
}

func TestControllerAcceptsSampleWithinClockSkew(t *testing.T) {
	r := newRig(t, func(c *proflow.Config) { c.MaxClockSkew = time.Second })
	r.fab.SetLag(-time.Second) // exactly the allowance
	if d := r.step(); d.Reason != proflow.ReasonStay || d.Err != nil {
		t.Fatalf("sample 1 s ahead with a 1 s allowance: reason %q, err %v; want stay, nil", d.Reason, d.Err)
	}
	r.fab.SetLag(-time.Second - time.Millisecond)
	if d := r.step(); d.Reason != proflow.ReasonInvalid {
		t.Errorf("sample 1.001 s ahead with a 1 s allowance: reason %q, err %v; want invalid", d.Reason, d.Err)
	}
}

// TestNewControllerCopiesConfig changes the caller's topology slices and
// baseline after NewController: the controller must not see the changes.
func TestNewControllerCopiesConfig(t *testing.T) {
	cfg := validConfig()
	cfg.Topology = proflow.PaperTopology()
	b := testBaseline
	cfg.Baseline = &b
	fab := southboundtest.NewFabric(proflow.PaperTopology(), nil)
	ctrl, err := proflow.NewController(cfg, fab, &fakeEncoder{dim: 8},
		proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil }), proflow.GateFunc(argmaxGate), fab)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Topology.Switches[0] = "changed"
	cfg.Topology.Leaves[0] = "changed"
	b.Throughput = 1

	if err := ctrl.Reset(0); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if got, _ := ctrl.Baseline(); got != testBaseline {
		t.Errorf("Baseline() after Reset = %+v, want the configured %+v", got, testBaseline)
	}
	var use *proflow.UnknownSwitchError
	if err := ctrl.Reset(9); !errors.As(err, &use) {
		t.Fatalf("Reset(9) = %v, want an UnknownSwitchError", err)
	} else if diff := cmp.Diff(proflow.PaperTopology().Switches, use.Known); diff != "" {
		t.Errorf("switches the controller knows (-want +got):\n%s", diff)
	}
	fab.SetLeaf(0, proflow.LeafSample{IngressRate: -1})
	if d := ctrl.Step(t.Context()); d.Err == nil || !strings.Contains(d.Err.Error(), "leaves[leaf1]") {
		t.Errorf("step with a bad first leaf: err %v, want it to name leaves[leaf1]", d.Err)
	}
}

// TestControllerHoldsWhenGateTargetsCurrent has the gate name the current
// switch as its target: that is a hold, not a reroute, so the enforcer must
// not be called and no reroute must be recorded.
func TestControllerHoldsWhenGateTargetsCurrent(t *testing.T) {
	r := newRig(t, nil)
	r.gate = func(d *proflow.Decision) {
		d.Best, d.Target, d.Votes, d.Reason = d.Current, d.Current, 3, proflow.ReasonVotes
	}
	places := r.fab.Places()
	for i := range 2 {
		d := r.step()
		if d.Rerouted || d.Target != -1 || d.Reason != proflow.ReasonVotes || d.Err != nil || !d.LastReroute.IsZero() {
			t.Errorf("step %d with the gate targeting the current switch: rerouted %v, target %d, reason %q, err %v, last reroute %v; want a hold: false, -1, votes, nil, never",
				i+1, d.Rerouted, d.Target, d.Reason, d.Err, d.LastReroute)
		}
	}
	if n := r.fab.Places() - places; n != 0 {
		t.Errorf("enforcer called %d times, want 0 (the flow is already there)", n)
	}
	if got := r.ctrl.Current(); got != 0 {
		t.Errorf("Current() = %d, want 0", got)
	}
}

// validatingEnforcer is an Enforcer and FlowValidator built from functions.
type validatingEnforcer struct {
	proflow.EnforcerFunc
	validate func(proflow.FlowID) error
}

func (v validatingEnforcer) ValidateFlow(flow proflow.FlowID) error { return v.validate(flow) }

func TestNewControllerValidatesFlow(t *testing.T) {
	fab := southboundtest.NewFabric(proflow.PaperTopology(), nil)
	pol := proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil })
	place := proflow.EnforcerFunc(func(context.Context, proflow.FlowID, int) error { return nil })
	var asked []proflow.FlowID
	for _, c := range []struct {
		name     string
		validate func(proflow.FlowID) error
		is       error  // nil: NewController succeeds
		want     string // in the error
	}{
		{name: "flow in the fabric", validate: func(proflow.FlowID) error { return nil }},
		{name: "host outside the fabric",
			validate: func(f proflow.FlowID) error {
				return fmt.Errorf("sb: source %v is not a host of the fabric: %w", f.Src, proflow.ErrNotInFabric)
			},
			is:   proflow.ErrNotInFabric,
			want: "proflow: new controller: the enforcer cannot carry flow tcp 10.0.0.1:5001->10.0.0.8:5201: sb: source 10.0.0.1 is not a host"},
		{name: "validator panics", validate: func(proflow.FlowID) error { panic("validator bug") },
			want: "FlowValidator.ValidateFlow of proflow_test.validatingEnforcer panicked: validator bug"},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked = nil
			enf := validatingEnforcer{place, func(f proflow.FlowID) error { asked = append(asked, f); return c.validate(f) }}
			_, err := proflow.NewController(validConfig(), fab, &fakeEncoder{dim: 8}, pol, proflow.GateFunc(argmaxGate), enf)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("NewController = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("NewController = %v, want an error containing %q", err, c.want)
			case c.is != nil && !errors.Is(err, c.is):
				t.Errorf("NewController = %v, want it to wrap %v", err, c.is)
			}
			if diff := cmp.Diff([]proflow.FlowID{testFlow}, asked, addrs); diff != "" {
				t.Errorf("flows validated (-want +got):\n%s", diff)
			}
		})
	}
}

// TestControllerRecoversPanicsOutsideSteps makes collaborators panic in the
// calls the controller makes outside Step: each must come back as a
// *PanicError from the call that made it.
func TestControllerRecoversPanicsOutsideSteps(t *testing.T) {
	checkPanic := func(t *testing.T, what string, err error, method string) {
		t.Helper()
		var pe *proflow.PanicError
		if !errors.As(err, &pe) || pe.Interface+"."+pe.Method != method {
			t.Errorf("%s = %v, want a *PanicError from %s", what, err, method)
		}
	}
	t.Run("Locator.Locate in Reconcile", func(t *testing.T) {
		cfg := validConfig()
		enf := locatingEnforcer{proflow.EnforcerFunc(func(context.Context, proflow.FlowID, int) error { return nil }),
			func(context.Context, proflow.FlowID) (int, error) { panic("locate bug") }}
		ctrl, err := proflow.NewController(cfg, southboundtest.NewFabric(cfg.Topology, nil), &fakeEncoder{dim: 8},
			proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil }), proflow.GateFunc(argmaxGate), enf)
		if err != nil {
			t.Fatal(err)
		}
		checkPanic(t, "Reconcile", ctrl.Reconcile(t.Context()), "Locator.Locate")
	})
	t.Run("Resetter.Reset in Reset", func(t *testing.T) {
		r := newRig(t, nil)
		r.enc.panicV = "reset bug"
		checkPanic(t, "Reset", r.ctrl.Reset(1), "Resetter.Reset")
	})
	t.Run("Baseliner.SetBaseline in the baseline phase", func(t *testing.T) {
		r := newRig(t, func(c *proflow.Config) { c.Baseline = nil; c.BaselineWarmup, c.BaselineSamples = 0, 1 })
		enc := &panickyBaseliner{fakeEncoder: r.enc}
		ctrl, err := proflow.NewController(r.cfg, r.fab, enc, proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil }),
			proflow.GateFunc(argmaxGate), r.fab)
		if err != nil {
			t.Fatal(err)
		}
		r.clock.Advance(r.cfg.Interval)
		d := ctrl.Step(t.Context())
		checkPanic(t, "the step ending the baseline phase", d.Err, "Baseliner.SetBaseline")
		if _, ok := ctrl.Baseline(); ok || d.Reason != proflow.ReasonBaseline {
			t.Errorf("after SetBaseline panicked: reason %q, baseline known %v; want baseline, false", d.Reason, ok)
		}
	})
}

// panickyBaseliner is a fakeEncoder whose SetBaseline panics.
type panickyBaseliner struct{ *fakeEncoder }

func (panickyBaseliner) SetBaseline(proflow.Baseline) error { panic("baseline bug") }

// TestControllerRunSurvivesPanics runs the loop with a policy that panics on
// every step: Run must keep stepping, reporting each panic, and move the
// flow once the policy works again.
func TestControllerRunSurvivesPanics(t *testing.T) {
	defer goleak.VerifyNone(t)
	decisions := make(chan proflow.Decision, 16)
	r := newRig(t, func(c *proflow.Config) { c.Observer = proflow.SendTo(decisions) })
	r.panicIn = "Score"
	stop := startRun(t, r)
	defer stop()
	for i := 1; i <= 2; i++ {
		r.clock.Advance(r.cfg.Interval)
		d := receive(t, decisions)
		var pe *proflow.PanicError
		if d.Reason != proflow.ReasonPolicy || !errors.As(d.Err, &pe) || !strings.Contains(d.Err.Error(), "nil pointer dereference") {
			t.Errorf("tick %d: reason %q, err %v; want policy-error with the recovered nil dereference", i, d.Reason, d.Err)
		}
	}
	// The policy is fixed while Run runs: the loop goes on and moves the flow.
	r.panicIn, r.scores = "", []float64{0, 0, 3, 1}
	r.clock.Advance(r.cfg.Interval)
	if d := receive(t, decisions); !d.Rerouted || r.placement() != 2 {
		t.Errorf("tick 3: rerouted %v (reason %q, err %v), fabric placement %d; want a reroute to 2", d.Rerouted, d.Reason, d.Err, r.placement())
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
}

// TestControllerLogsPanicStack checks that the log record of a step held by
// a panic carries the stack of the panic, pointing at the panicking code.
func TestControllerLogsPanicStack(t *testing.T) {
	var buf bytes.Buffer
	r := newRig(t, func(c *proflow.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	r.panicIn = "Collect"
	r.step()
	var rec struct{ Level, Reason, Error, Stack string }
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	if rec.Level != "WARN" || rec.Reason != "telemetry-error" || !strings.Contains(rec.Error, "Telemetry.Collect of proflow_test.rigFabric panicked: boom") {
		t.Errorf("record %+v, want a warning for the telemetry panic", rec)
	}
	if !strings.Contains(rec.Stack, "proflow_test.rigFabric.Collect") {
		t.Errorf("logged stack %q does not show the panicking method rigFabric.Collect", rec.Stack)
	}
}

// TestControllerBaselinePhaseOnOffFlow runs the baseline phase on a flow
// that sends for 7 samples and idles for 10, period 17, with a warm-up of
// 24 and a window of 10: the first window (samples 25–34) falls in an idle
// phase, and had the warm-up been repeated after it, so would every later
// one (each 34 samples on, two periods). The window restarts without it and
// learns the baseline from samples 35–44.
func TestControllerBaselinePhaseOnOffFlow(t *testing.T) {
	r := newRig(t, func(c *proflow.Config) {
		c.Baseline = nil
		c.BaselineWarmup, c.BaselineSamples = 24, 10
	})
	var want float64
	for i := 1; i <= 200; i++ {
		f := proflow.FlowSample{AppLimited: 1}
		if (i-1)%17 < 7 {
			f = healthyFlow
		}
		if i >= 35 && i <= 44 {
			want += f.Throughput / 10
		}
		r.fab.SetFlow(f)
		r.step()
		if _, ok := r.ctrl.Baseline(); ok {
			if i != 44 {
				t.Errorf("baseline learned at sample %d, want 44", i)
			}
			break
		}
	}
	b, ok := r.ctrl.Baseline()
	if !ok {
		t.Fatal("no baseline after 200 samples of an on/off flow")
	}
	if math.Abs(b.Throughput-want) > 1e-6*want {
		t.Errorf("baseline throughput %v, want %v (the mean of samples 35–44)", b.Throughput, want)
	}
}

// TestControllerShadow runs the controller in shadow mode behind a gate
// with a cooldown: a move the gate admits is reported with its target and
// never made (the enforcer, which panics if called, is not), the flow stays
// where it is, and the gate's cooldown runs from the move not made.
func TestControllerShadow(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := newRig(t, func(c *proflow.Config) { c.Shadow, c.PlaceInitial, c.Registerer = true, false, reg })
	// The flow runs on switch 0 before the controller starts.
	if err := r.fab.Place(t.Context(), testFlow, 0); err != nil {
		t.Fatal(err)
	}
	g, err := policy.NewGate(policy.GateConfig{Margin: 0.1, Votes: 1, Cooldown: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r.gate = g.Admit
	r.panicIn = "Place" // the enforcer must never be called
	r.scores = []float64{0, 0, 3, 1}

	d := r.step()
	first := d.Time
	if d.Reason != proflow.ReasonShadow || d.Target != 2 || d.Rerouted || d.Err != nil || d.Current != 0 {
		t.Fatalf("first step: reason %q, target %d, rerouted %v, err %v, current %d; want shadow, 2, false, nil, 0",
			d.Reason, d.Target, d.Rerouted, d.Err, d.Current)
	}
	if !d.Reason.Held() {
		t.Error("ReasonShadow: Held() = false, want true")
	}
	d = r.step()
	if d.Reason != proflow.ReasonCooldown || d.Current != 0 || !d.LastReroute.Equal(first) {
		t.Errorf("second step: reason %q, current %d, last reroute %v; want cooldown, 0, %v", d.Reason, d.Current, d.LastReroute, first)
	}
	for range 3 { // past the 2 s cooldown
		d = r.step()
	}
	if d.Reason != proflow.ReasonShadow || d.Target != 2 {
		t.Errorf("after the cooldown: reason %q, target %d; want shadow, 2", d.Reason, d.Target)
	}
	if got := r.ctrl.Current(); got != 0 {
		t.Errorf("Current() = %d, want 0: shadow mode never moves the flow", got)
	}
	if got := r.placement(); got != 0 {
		t.Errorf("fabric placement = %d, want 0", got)
	}
	if got := counterValue(t, reg, "proflow_decisions_total", "shadow"); got != 2 {
		t.Errorf(`proflow_decisions_total{reason="shadow"} = %v, want 2`, got)
	}
	if got := counterValue(t, reg, "proflow_decisions_total", "enforcer-error"); got != 0 {
		t.Errorf(`proflow_decisions_total{reason="enforcer-error"} = %v, want 0: the enforcer was called`, got)
	}
}

// TestControllerCordon cordons switches at start and while the controller
// steps: the gate never picks a cordoned switch, takes the best other one,
// stays when no other beats the current switch, and sees a lifted cordon
// at the next step.
func TestControllerCordon(t *testing.T) {
	r := newRig(t, func(c *proflow.Config) { c.Cordoned = []int{2} })
	r.scores = []float64{0, 1, 3, 2}
	d := r.step()
	if !d.Rerouted || d.Target != 3 {
		t.Fatalf("agg3 cordoned: reason %q, target %d; want rerouted to 3 (the best switch not cordoned)", d.Reason, d.Target)
	}
	if want := []float64{0, 1, -1, 2}; !slices.Equal(d.Scores, want) {
		t.Errorf("scores %v, want %v: the cordoned switch below every other", d.Scores, want)
	}
	if got := r.ctrl.Cordoned(); !slices.Equal(got, []int{2}) {
		t.Errorf("Cordoned() = %v, want [2]", got)
	}

	// On agg4 now; agg3 is still the policy's best but cordoned.
	d = r.step()
	if d.Rerouted || d.Reason != proflow.ReasonStay {
		t.Errorf("on agg4 with agg3 cordoned: reason %q, rerouted %v; want stay", d.Reason, d.Rerouted)
	}
	var wg sync.WaitGroup
	wg.Go(func() { // from another goroutine, as an operator's API would
		if err := r.ctrl.Cordon(2, false); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	d = r.step()
	if !d.Rerouted || d.Target != 2 {
		t.Errorf("cordon lifted: reason %q, target %d; want rerouted to 2", d.Reason, d.Target)
	}
	if got := r.ctrl.Cordoned(); len(got) != 0 {
		t.Errorf("Cordoned() = %v, want none", got)
	}

	// Every other switch cordoned: the flow stays on agg3 whatever the scores.
	for _, k := range []int{0, 1, 3} {
		if err := r.ctrl.Cordon(k, true); err != nil {
			t.Fatal(err)
		}
	}
	r.scores = []float64{9, 8, 0, 7}
	if d = r.step(); d.Rerouted || d.Current != 2 {
		t.Errorf("all others cordoned: reason %q, rerouted %v, current %d; want to stay on 2", d.Reason, d.Rerouted, d.Current)
	}
	if err := r.ctrl.Cordon(4, true); err == nil || !strings.Contains(err.Error(), "4") {
		t.Errorf("Cordon(4) = %v, want an error naming the switch", err)
	}
	if err := r.ctrl.SetCordoned([]int{0, 9}); err == nil || !strings.Contains(err.Error(), "9") {
		t.Errorf("SetCordoned([0 9]) = %v, want an error naming switch 9", err)
	}
	if got := r.ctrl.Cordoned(); !slices.Equal(got, []int{0, 1, 3}) {
		t.Errorf("Cordoned() after a refused SetCordoned = %v, want [0 1 3] unchanged", got)
	}
	if err := r.ctrl.SetCordoned(nil); err != nil {
		t.Fatal(err)
	}
	if got := r.ctrl.Cordoned(); len(got) != 0 {
		t.Errorf("Cordoned() after SetCordoned(nil) = %v, want none", got)
	}
	if d = r.step(); !d.Rerouted || d.Target != 0 {
		t.Errorf("every cordon lifted: reason %q, target %d; want rerouted to 0", d.Reason, d.Target)
	}
}

// The controller marks the destinations another switch dominates for a
// Pareto gate, and a cordoned switch dominates none: with the empty agg2
// cordoned, the crowded agg3 (12 entries) is still dominated by agg4 and
// the flow goes to agg4, not to nothing.
func TestControllerParetoWithCordon(t *testing.T) {
	r := newRig(t, func(c *proflow.Config) { c.Cordoned = []int{1} })
	g, err := policy.NewGate(policy.GateConfig{Votes: 1, Pareto: true})
	if err != nil {
		t.Fatal(err)
	}
	r.gate = g.Admit
	r.fab.SetSwitch(1, proflow.SwitchSample{})                                         // agg2: empty, cordoned
	r.fab.SetSwitch(2, proflow.SwitchSample{TxRate: 3e6, FlowCount: 12})               // agg3: a capped crowd
	r.fab.SetSwitch(3, proflow.SwitchSample{TxRate: 3e6, FlowCount: 4, QueueBytes: 0}) // agg4: beats agg3
	r.scores = []float64{0, 5, 4, 3}
	d := r.step()
	if want := []bool{false, false, true, false}; !slices.Equal(d.Dominated, want) {
		t.Errorf("dominated %v, want %v (agg3 beaten by agg4; agg2 cordoned beats none)", d.Dominated, want)
	}
	if len(d.Relieves) != 4 || d.Relieves[1] || d.Relieves[0] {
		t.Errorf("relieves %v, want 4 marks, the cordoned agg2 (empty) and the current agg1 not among them", d.Relieves)
	}
	if !d.Rerouted || d.Target != 3 {
		t.Errorf("reason %q, target %d; want rerouted to agg4, the best switch neither cordoned nor dominated", d.Reason, d.Target)
	}
}

// Decision.Load is the current switch's transmit rate over the bucket
// rate, read from the step's sample, and follows the flow when it moves.
func TestControllerDecisionLoad(t *testing.T) {
	r := newRig(t, nil)
	r.fab.SetSwitch(2, proflow.SwitchSample{TxRate: 5e7, FlowCount: 6})
	r.scores = []float64{0, 0, 3, 1}
	if d := r.step(); !d.Rerouted || d.Load != 0.8 {
		t.Fatalf("on agg1: rerouted %v, load %v; want a move and 0.8 (20 of 25 MB/s)", d.Rerouted, d.Load)
	}
	r.scores = []float64{0, 0, 3, 1}
	if d := r.step(); d.Current != 2 || d.Load != 2 {
		t.Errorf("on agg3: current %d, load %v; want 2 and 2 (50 of 25 MB/s)", d.Current, d.Load)
	}
}

// The controller asks a Forecaster policy for its forecast after a Score
// that puts another switch above the current one, and hands it to the
// gate in Decision.Forecast; a failed forecast holds the placement like a
// failed Score.
func TestControllerForecast(t *testing.T) {
	r := newRig(t, nil)
	var gateSaw proflow.FlowForecast
	r.gate = func(d *proflow.Decision) { gateSaw = d.Forecast; d.Target, d.Reason = -1, proflow.ReasonVotes }
	calls := 0
	r.forecast = func(f *proflow.FlowForecast, in *proflow.Input) error {
		calls++
		if in.Current != 0 || len(in.State) != 8 {
			t.Errorf("forecast input: current %d, %d state values; want 0 and 8", in.Current, len(in.State))
		}
		*f = proflow.FlowForecast{OK: true, Throughput: 1e7, AppLimited: 0.25}
		return nil
	}
	if d := r.step(); calls != 0 || d.Forecast.OK || gateSaw.OK { // scores {1, 0, 0, 0}: the current switch is best
		t.Errorf("no switch above the current one: %d forecasts, decision %+v, gate %+v; want none", calls, d.Forecast, gateSaw)
	}
	r.scores = []float64{0, 0, 3, 1}
	want := proflow.FlowForecast{OK: true, Throughput: 1e7, AppLimited: 0.25}
	if d := r.step(); calls != 1 || d.Forecast != want || gateSaw != want {
		t.Errorf("agg3 above the current switch: %d forecasts, decision %+v, the gate saw %+v; want 1 and %+v", calls, d.Forecast, gateSaw, want)
	}
	r.gate = argmaxGate
	r.forecast = func(f *proflow.FlowForecast, in *proflow.Input) error { return errBoom }
	d := r.step()
	if d.Reason != proflow.ReasonPolicy || !errors.Is(d.Err, errBoom) || d.Rerouted || d.Forecast.OK || r.placement() != 0 {
		t.Errorf("failed forecast: reason %q, err %v, rerouted %v, forecast %+v, placement %d; want a held placement on agg1", d.Reason, d.Err, d.Rerouted, d.Forecast, r.placement())
	}
	r.forecast = nil
	if d := r.step(); !d.Rerouted || d.Forecast.OK {
		t.Errorf("no forecast: rerouted %v, forecast %+v; want a move and no forecast", d.Rerouted, d.Forecast)
	}
}
