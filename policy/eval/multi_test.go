package eval

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// stepDecision is what the one-flow equivalence compares per step.
type stepDecision struct {
	Current  int
	Decision trace.Decision
	Recheck  *trace.Recheck
}

// TestOneFlowMultiControllerMatchesController is acceptance 2 of issue 13:
// on S1–S12, C1 and C2 (one protected flow) the MultiController with the
// Independent placer, driven by RunMultiEpisode, takes the decisions the
// single-flow Controller takes under sim.RunEpisode — same policy (the
// committed agent behind its recorded gate, and reactive), same seed, same
// profile — step by step: current switch, reason, target, reroute, and the
// scores, margin, votes and cooldown behind them, and the rechecks of the
// moves the gate defers (MultiSpec.Recheck: the controller peeks, as the
// Controller does on the simulator).
func TestOneFlowMultiControllerMatchesController(t *testing.T) {
	cfg := sim.TestbedConfig()
	agent, err := AgentPolicy("agent", "../../models/default.safetensors", policy.GateConfig{}, cfg.Topology())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	rechecks := 0
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
					want = append(want, stepDecision{st.Switch, st.Decision, st.Recheck})
					if st.Recheck != nil {
						mu.Lock()
						rechecks++
						mu.Unlock()
					}
				}
				moved := 0
				_, err = RunMultiEpisode(ctx, MultiSpec{Scenario: j.sc, Seed: seed, Config: cfg, Policy: j.pol.Name, NewPolicy: j.pol.New,
					Mode: JointIndependent, Recheck: true, Observer: func(s proflow.StepSummary) {
						if len(s.Decisions) != 1 {
							t.Errorf("%s/%s step %d (recheck %v): %d decisions, want 1", j.sc.Name, j.pol.Name, s.Seq, s.Recheck, len(s.Decisions))
							return
						}
						d := s.Decisions[0]
						if d.Rerouted {
							moved++
						}
						if s.Recheck {
							if len(got) == 0 || d.Seq != s.Seq || !d.Rechecking {
								t.Errorf("%s/%s: recheck of step %d before any step, or not marked", j.sc.Name, j.pol.Name, s.Seq)
								return
							}
							got[len(got)-1].Recheck = &trace.Recheck{Time: d.Time, Load: d.Load, Decision: trace.FromDecision(d)}
							return
						}
						got = append(got, stepDecision{d.Current, trace.FromDecision(d), nil})
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
	defer func() {
		if rechecks == 0 {
			t.Error("no recheck in the Controller's episodes: the comparison covers none")
		}
	}()
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

// synthetic returns a two-flow episode whose flows run at a and b bytes/s
// over the window, with one step that herds two flows.
func synthetic(mode string, repeat int, a, b float64) *MultiEpisode {
	flows := []proflow.ProtectedFlow{
		{ID: proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"), SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP}},
		{ID: proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"), SrcPort: 5002, DstPort: 5201, Proto: proflow.ProtoTCP}},
	}
	e := &MultiEpisode{Scenario: "X", Policy: "p", Mode: mode, Repeat: repeat, Seed: uint64(repeat), Flows: flows,
		T: []float64{-1, 0, 1, 200}, Throughput: [][]float64{{99, a, a, 99}, {99, b, b, 99}}, Switch: [][]int{{0, 0, 1, 1}, {0, 0, 1, 1}},
		Herding: []int{0, 0, 2, 0}, OverBudget: []int{0, 0, 1, 0}, Reroutes: []FlowReroute{{0, 1, 0, 1}, {1, 1, 0, 1}}}
	return e
}

func TestSummarizeMulti(t *testing.T) {
	opt := DefaultOptions()
	opt.Resamples = 200
	var eps []*MultiEpisode
	for r := range 3 {
		eps = append(eps, synthetic(JointGreedy, r, 6e6, 6e6), synthetic(JointIndependent, r, 8e6, 2e6))
	}
	s, err := SummarizeMulti(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{JointIndependent, JointGreedy}; !slices.Equal(s.Modes, want) {
		t.Errorf("modes %v, want %v", s.Modes, want)
	}
	ind, _ := s.Cell("X", "p", JointIndependent)
	want := MultiCell{Scenario: "X", Policy: "p", Mode: JointIndependent, Repeats: 3, FlowMeans: []float64{8e6, 2e6},
		Sum: 10e6, SumLo: 10e6, SumHi: 10e6, Min: 2e6, MinLo: 2e6, MinHi: 2e6, Jain: 100.0 / 136, JainLo: 100.0 / 136, JainHi: 100.0 / 136,
		Herding: 2, OverBudget: 1, Reroutes: 6}
	if diff := cmp.Diff(want, ind, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("independent cell (-want +got):\n%s", diff)
	}
	c, ok := s.Comparison("X", "p")
	if !ok || c.N != 3 || math.Abs(c.SumRatio-1.2) > 1e-12 || math.Abs(c.MinRatio-3) > 1e-12 || c.Worse() {
		t.Errorf("comparison %+v (found %t), want 3 pairs, sum ratio 1.2, min ratio 3, not worse", c, ok)
	}
	var b strings.Builder
	if err := s.WriteMarkdown(&b, "", nil); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| X | p | independent | 2 | 10.00 [10.00–10.00] | 2.00 [2.00–2.00] | 0.735 [0.735–0.735] | 2 | 1 | 6 | 0 |",
		"| X | p | 3 | 1.20× | [1.20×, 1.20×] | 3.00× | [3.00×, 3.00×] |  |"} {
		if !strings.Contains(b.String(), row) {
			t.Errorf("report lacks %q:\n%s", row, b.String())
		}
	}
	dir := t.TempDir()
	if err := s.WriteCSV(dir); err != nil {
		t.Fatal(err)
	}
	if err := s.WritePlots(dir); err != nil {
		t.Fatal(err)
	}

	bad := synthetic(JointGreedy, 0, 1, 1)
	bad.Herding = bad.Herding[:2]
	if _, err := SummarizeMulti([]*MultiEpisode{bad}, opt); err == nil || !strings.Contains(err.Error(), "herding") {
		t.Errorf("misaligned herding series: %v, want an error naming it", err)
	}
	if _, err := SummarizeMulti([]*MultiEpisode{synthetic(JointGreedy, 0, 1, 1), synthetic(JointIndependent, 0, 1, 1)}, Options{}); err == nil {
		t.Error("zero options accepted")
	}
}
