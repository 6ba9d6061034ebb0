package ovsfabric_test

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// recordOnSim runs a controller on a simulated fabric with the Recorder as
// its telemetry and observer, as Experiment.Run does on OVS, set up as
// sim.RunEpisode sets up its own, and returns the recorded trace.
func recordOnSim(t *testing.T, sc *sim.Scenario, seed uint64, pol eval.PolicySpec, meta func(*sim.Fabric) trace.Meta) *trace.Episode {
	t.Helper()
	ctx := context.Background()
	cfg := sim.DefaultConfig()
	f, err := sim.New(cfg, sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	var truth proflow.Observation
	rec := ovsfabric.NewRecorder(f, func() float64 {
		if !f.Truth(&truth) {
			return 0
		}
		return truth.Flow.Throughput
	})
	enc, p, gate, err := pol.New(f.Topology())
	if err != nil {
		t.Fatal(err)
	}
	cc := proflow.DefaultConfig()
	cc.Topology, cc.Flow, cc.InitialSwitch = f.Topology(), f.Flow(), f.InitialSwitch()
	cc.Clock, cc.Interval = f.Clock(), cfg.Interval
	cc.BaselineWarmup = int(cfg.ControllerWarmup / cfg.Interval)
	cc.Observer = rec.Observe
	ctrl, err := proflow.NewController(cc, rec, enc, p, gate, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	var wait time.Duration // the recheck the last step asked for, made as Run makes it
	for range int(sc.Length() / cfg.Interval) {
		if wait > 0 && wait < cfg.Interval {
			if err := f.Advance(wait); err != nil {
				t.Fatal(err)
			}
			ctrl.Recheck(ctx)
			wait = cfg.Interval - wait
		} else {
			wait = cfg.Interval
		}
		if err := f.Advance(wait); err != nil {
			t.Fatal(err)
		}
		wait = ctrl.Step(ctx).Recheck
	}
	ep, err := rec.Episode(meta(f))
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func metaOf(f *sim.Fabric, policy string, repeat string) trace.Meta {
	return trace.Meta{Source: ovsfabric.TraceSource, Scenario: f.Scenario().Name, Policy: policy, Seed: 7,
		Topology: f.Topology(), Flow: f.Flow(), InitialSwitch: f.InitialSwitch(), Interval: trace.Duration(f.Config().Interval),
		Start: f.Start(), CongestionStart: f.CongestionStart(), End: f.End(), Labels: map[string]string{"repeat": repeat}}
}

// On the simulator the Recorder writes, step for step, the trace that
// sim.RunEpisode writes: the same observations, decisions and throughput,
// and behind the committed model's gate the same rechecks. A trace
// recorded on OVS is therefore read like a simulated one.
func TestRecorderMatchesSimulatedTrace(t *testing.T) {
	sc, err := sim.BuiltinScenario("S1")
	if err != nil {
		t.Fatal(err)
	}
	reactive, err := eval.ReferencePolicy("reactive")
	if err != nil {
		t.Fatal(err)
	}
	agent, err := eval.AgentPolicy("agent", "../../../models/default.safetensors", policy.GateConfig{}, sim.DefaultConfig().Topology())
	if err != nil {
		t.Fatal(err)
	}
	s12, err := sim.BuiltinScenario("S12")
	if err != nil {
		t.Fatal(err)
	}
	rechecks := 0
	for _, c := range []struct {
		sc  *sim.Scenario
		pol eval.PolicySpec
	}{{sc, reactive}, {sc, agent}, {s12, agent}} {
		pol := c.pol
		got := recordOnSim(t, c.sc, 7, pol, func(f *sim.Fabric) trace.Meta { return metaOf(f, pol.Name, "2") })
		want, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{Scenario: c.sc, Seed: 7, Policy: pol.Name, NewPolicy: pol.New})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Steps) != len(want.Steps) || len(got.Steps) == 0 {
			t.Fatalf("%s/%s: %d steps recorded, the simulator's trace has %d", c.sc.Name, pol.Name, len(got.Steps), len(want.Steps))
		}
		if diff := cmp.Diff(want.Steps, got.Steps, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s/%s: recorded steps differ from sim.RunEpisode's (-sim +recorded):\n%s", c.sc.Name, pol.Name, diff)
		}
		for _, st := range got.Steps {
			if st.Recheck != nil {
				rechecks++
			}
		}
	}
	if rechecks == 0 {
		t.Error("no recheck recorded: the comparison covers none")
	}
	got := recordOnSim(t, sc, 7, reactive, func(f *sim.Fabric) trace.Meta { return metaOf(f, "reactive", "2") })
	var rerouted bool
	for _, st := range got.Steps {
		rerouted = rerouted || st.Decision.Rerouted
	}
	if !rerouted {
		t.Error("reactive never rerouted on S1: the comparison covers no reroute")
	}

	// Written and read back, it converts for evaluation with its metadata.
	path := filepath.Join(t.TempDir(), ovsfabric.TraceName("S1", "reactive", 2))
	if err := trace.WriteFile(path, got); err != nil {
		t.Fatal(err)
	}
	back, err := trace.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got.Meta, back.Meta, cmpopts.EquateComparable(netip.Addr{})); diff != "" {
		t.Errorf("metadata after a round trip (-written +read):\n%s", diff)
	}
	e, err := eval.FromTrace(back, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Scenario != "S1" || e.Policy != "reactive" || e.Repeat != 2 || e.Seed != 7 || !(e.Baseline > 0) || len(e.Reroutes) == 0 {
		t.Errorf("FromTrace: scenario %q, policy %q, repeat %d, seed %d, baseline %v, %d reroutes; want S1, reactive, 2, 7, > 0, > 0",
			e.Scenario, e.Policy, e.Repeat, e.Seed, e.Baseline, len(e.Reroutes))
	}
}

// Steps after the planned end are left out; a trace without a start is
// refused as a trace file would be.
func TestRecorderEpisode(t *testing.T) {
	sc := &sim.Scenario{Name: "quiet-agg1", ProtectedSwitch: "agg1", Window: sim.Duration(20 * time.Second)}
	static, err := eval.ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	ep := recordOnSim(t, sc, 1, static, func(f *sim.Fabric) trace.Meta {
		m := metaOf(f, "static", "0")
		m.End = m.Start.Add(30 * time.Second)
		return m
	})
	if n := len(ep.Steps); n != 60 {
		t.Errorf("%d steps up to 30 s at 500 ms, want 60", n)
	}
	if last := ep.Steps[len(ep.Steps)-1].Time; last.After(ep.Meta.End) {
		t.Errorf("last step at %v, after the end %v", last, ep.Meta.End)
	}
	rec := ovsfabric.NewRecorder(nil, func() float64 { return 0 })
	if _, err := rec.Episode(trace.Meta{}); err == nil {
		t.Error("Episode with empty metadata: nil error, want the trace's validation error")
	}

	// No-congestion traces are what calibrate -quiet reads: App. E's
	// threshold analysis takes them.
	th, err := eval.AnalyseThreshold([]*trace.Episode{ep}, eval.DefaultThresholdOptions())
	if err != nil {
		t.Fatalf("threshold analysis of a recorded quiet episode: %v", err)
	}
	if th.Samples == 0 || th.Episodes != 1 || len(th.Curve) == 0 {
		t.Errorf("threshold analysis of a recorded quiet episode: %d samples of %d episodes, %d curve points; want samples of 1 episode", th.Samples, th.Episodes, len(th.Curve))
	}
}
