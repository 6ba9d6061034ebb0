package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// shortRate is V1 with a 30 s window: a constant-bitrate flow at about
// half of C and five full-rate hosts on its switch agg1 from congestion
// start, which drain its bucket within the window.
func shortRate(t *testing.T) *sim.Scenario {
	t.Helper()
	sc, err := sim.BuiltinScenario("V1")
	if err != nil {
		t.Fatal(err)
	}
	sc.Name, sc.Window = "rate30", sim.Duration(30*time.Second)
	return sc
}

func TestFloor(t *testing.T) {
	cfg := sim.TestbedConfig()
	sc := shortRate(t)
	rules := boundRules(t) // static, crowd
	td, err := ReferencePolicy(ThroughputDropName)
	if err != nil {
		t.Fatal(err)
	}
	rules = append(rules, td)
	rows, err := Floor(context.Background(), FloorSpec{Scenarios: []*sim.Scenario{sc}, Rules: rules, Every: 10 * time.Second,
		Repeats: 1, Seed: 7, Config: cfg, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Scenario != "rate30" || rows[0].Kind != sim.KindRate {
		t.Fatalf("rows %+v, want one rate row for rate30", rows)
	}
	r := rows[0]
	t.Logf("%+v", r)
	// Never moving is static, on the same seed.
	if r.Never != r.Rules["static"] {
		t.Errorf("never %v s, static %v s: want the same episode", r.Never, r.Rules["static"])
	}
	// The crowd stays to the end: staying misses its objective, and the
	// best single move leaves agg1 at one of the searched times.
	if !(r.Never > 10) || r.Hindsight.To < 1 || math.Mod(r.Hindsight.At, 10) != 0 || !(r.Hindsight.SLO < r.Never) {
		t.Errorf("never %v s, hindsight %+v: want a move off agg1 at 0, 10 or 20 s that misses less than staying's > 10 s", r.Never, r.Hindsight)
	}
	if r.Best > r.Hindsight.SLO || r.Best > r.Rules["crowd"] || r.Best > r.Rules[ThroughputDropName] {
		t.Errorf("best measured %v s above the hindsight move %v or a rule %v", r.Best, r.Hindsight.SLO, r.Rules)
	}
	// The rules' SLO seconds are evaluate's on the same base seed.
	eps, err := Sweep{Scenarios: []*sim.Scenario{sc}, Policies: rules, Repeats: 1, Seed: 7, Config: cfg}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		if got, want := r.Rules[e.Policy], e.violationSeconds(30); got != want {
			t.Errorf("%s: floor counts %v SLO seconds, evaluate's episode %v", e.Policy, got, want)
		}
	}
}

func TestFloorRefusesBulk(t *testing.T) {
	sc, err := sim.BuiltinScenario("S1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Floor(context.Background(), FloorSpec{Scenarios: []*sim.Scenario{sc}, Rules: boundRules(t), Repeats: 1, Config: sim.TestbedConfig()})
	if err == nil || !strings.Contains(err.Error(), "S1 protects 1 flows of kind bulk") || !strings.Contains(err.Error(), "want one rr, rate or onoff flow") {
		t.Fatalf("Floor on S1 (a bulk flow): error %v, want one naming the kind and what is expected", err)
	}
	if _, err := Floor(context.Background(), FloorSpec{Scenarios: []*sim.Scenario{shortRate(t)}, Rules: boundRules(t), Repeats: 1, Every: -time.Second}); err == nil || !strings.Contains(err.Error(), "want a positive spacing of at least the control interval") {
		t.Fatalf("negative spacing: error %v, want one asking for a positive spacing", err)
	}
}

func TestFloorKinds(t *testing.T) {
	rows := []FloorRow{
		{Scenario: "a", Kind: "rate", Hindsight: FloorMove{SLO: 1}, Best: 1, Rules: map[string]float64{"static": 10, "throughput-drop": 4}, Candidates: map[string]float64{"agent": 3}},
		{Scenario: "b", Kind: "rate", Hindsight: FloorMove{SLO: 2}, Best: 1.5, Rules: map[string]float64{"static": 2, "throughput-drop": 6}, Candidates: map[string]float64{"agent": 5}},
		{Scenario: "c", Kind: "rr", Hindsight: FloorMove{SLO: 0}, Best: 0, Rules: map[string]float64{"static": 0, "throughput-drop": 0}},
	}
	got := FloorKinds(rows, rand.New(rand.NewPCG(1, 2)))
	if len(got) != 2 || got[0].Kind != "rate" || got[1].Kind != "rr" {
		t.Fatalf("kinds %+v, want rate then rr", got)
	}
	k := got[0]
	// static averages 6 s, throughput-drop 5 s: the best single rule is
	// throughput-drop though static is the better one in b.
	if k.Scenarios != 2 || k.BestRule != "throughput-drop" || k.BestRuleSLO != 5 || k.Hindsight != 1.5 || k.Best != 1.25 || k.Candidates["agent"] != 4 {
		t.Errorf("rate: %+v, want 2 scenarios, throughput-drop at 5 s, hindsight 1.5 s, best 1.25 s, agent 4 s", k)
	}
	if math.Abs(k.Ratio-0.3) > 1e-12 || !(k.Lo <= k.Ratio && k.Ratio <= k.Hi) || k.Lo < 0.25 || k.Hi > 2.0/6 {
		t.Errorf("rate ratio %v [%v, %v], want 0.3 inside an interval within [1/4, 1/3] (the resamples' ratios)", k.Ratio, k.Lo, k.Hi)
	}
	if rr := got[1]; !math.IsNaN(rr.Ratio) || !math.IsNaN(rr.Lo) {
		t.Errorf("rr: ratio %v [%v, %v] over a best rule missing nothing, want NaN", rr.Ratio, rr.Lo, rr.Hi)
	}
}
