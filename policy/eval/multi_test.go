package eval

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// stepDecision is what the one-flow equivalence compares per step.
type stepDecision struct {
	Current  int
	Decision trace.Decision
}

// TestOneFlowMultiControllerMatchesController is acceptance 2 of issue 13:
// on S1–S12, C1 and C2 (one protected flow) the MultiController with the
// Independent placer, driven by RunMultiEpisode, takes the decisions the
// single-flow Controller takes under sim.RunEpisode — same policy (the
// committed agent behind its recorded gate, and reactive), same seed, same
// profile — step by step: current switch, reason, target, reroute, and the
// scores, margin, votes and cooldown behind them.
func TestOneFlowMultiControllerMatchesController(t *testing.T) {
	cfg := sim.TestbedConfig()
	agent, err := AgentPolicy("agent", "../../models/default.safetensors", policy.GateConfig{}, cfg.Topology())
	if err != nil {
		t.Fatal(err)
	}
	reactive, err := ReferencePolicy("reactive")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 1; i <= 12; i++ {
		names = append(names, fmt.Sprintf("S%d", i))
	}
	names = append(names, "C1", "C2")
	type job struct {
		sc  *sim.Scenario
		pol PolicySpec
	}
	var jobs []job
	for _, n := range names {
		sc, err := sim.BuiltinScenario(n)
		if err != nil {
			t.Fatal(err)
		}
		if MultiFlow(sc) {
			t.Fatalf("%s protects %d flows, want one", n, len(sc.Protected))
		}
		for _, p := range []PolicySpec{agent, reactive} {
			jobs = append(jobs, job{sc, p})
		}
	}
	ctx := context.Background()
	ch := make(chan job)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			for j := range ch {
				seed := EpisodeSeed(3, j.sc.Name, 0)
				single, err := sim.RunEpisode(ctx, sim.EpisodeSpec{Scenario: j.sc, Seed: seed, Config: cfg, Policy: j.pol.Name, NewPolicy: j.pol.New})
				if err != nil {
					t.Error(err)
					continue
				}
				var want, got []stepDecision
				for _, st := range single.Steps {
					want = append(want, stepDecision{st.Switch, st.Decision})
				}
				moved := 0
				_, err = RunMultiEpisode(ctx, MultiSpec{Scenario: j.sc, Seed: seed, Config: cfg, Policy: j.pol.Name, NewPolicy: j.pol.New,
					Mode: JointIndependent, Observer: func(s proflow.StepSummary) {
						if len(s.Decisions) != 1 {
							t.Errorf("%s/%s step %d: %d decisions, want 1", j.sc.Name, j.pol.Name, s.Seq, len(s.Decisions))
							return
						}
						d := s.Decisions[0]
						if d.Rerouted {
							moved++
						}
						got = append(got, stepDecision{d.Current, trace.FromDecision(d)})
					}})
				if err != nil {
					t.Error(err)
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s/%s: MultiController decisions differ from Controller's (-controller +multi):\n%s", j.sc.Name, j.pol.Name, diff)
				}
				t.Logf("%s/%s: %d steps, %d reroutes, identical", j.sc.Name, j.pol.Name, len(got), moved)
			}
		})
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

func TestJain(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{5, 5, 5, 5}, 1},
		{[]float64{4, 0, 0, 0}, 0.25},
		{[]float64{1, 3}, 16.0 / 20},
		{[]float64{}, math.NaN()},
		{[]float64{0, 0}, math.NaN()},
	} {
		got := Jain(c.xs)
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) && math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Jain(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
