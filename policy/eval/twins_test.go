package eval

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// shortCrowd is S1 with a 10 s window: five full-rate hosts on the
// protected flow's switch agg1 from congestion start.
func shortCrowd(t *testing.T) *sim.Scenario {
	t.Helper()
	sc, err := sim.BuiltinScenario("S1")
	if err != nil {
		t.Fatal(err)
	}
	sc.Name, sc.Window = "crowd10", sim.Duration(10*time.Second)
	return sc
}

func boundRules(t *testing.T) []PolicySpec {
	t.Helper()
	var rules []PolicySpec
	for _, name := range []string{"static", "crowd"} {
		p, err := ReferencePolicy(name)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, p)
	}
	return rules
}

func TestMovePolicyMovesOnceAtItsTime(t *testing.T) {
	sc := shortCrowd(t)
	eps, err := Sweep{Scenarios: []*sim.Scenario{sc}, Policies: []PolicySpec{MovePolicy(3500*time.Millisecond, 2)}, Repeats: 1, Seed: 3, Config: sim.TestbedConfig()}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rr := eps[0].Reroutes
	if len(rr) != 1 || rr[0].At != 3.5 || rr[0].From != 0 || rr[0].To != 2 {
		t.Fatalf("reroutes %+v, want one from switch 0 to 2 at 3.5 s", rr)
	}
}

func TestBound(t *testing.T) {
	cfg := sim.TestbedConfig()
	a := shortCrowd(t)
	b, err := a.EndedAt(3 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Bound(context.Background(), BoundSpec{
		Twins: []Twin{{A: a, B: b, Diverge: 3 * time.Second}}, Rules: boundRules(t),
		Repeats: 1, Seed: 5, Config: cfg, Parallelism: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d bounds, want 1", len(got))
	}
	tb := got[0]
	// Never, then 20 decision times × 3 other switches, in both.
	for _, m := range tb.Members {
		if n := len(m.Schedules); n != 61 || m.Schedules[0].To != -1 {
			t.Fatalf("%s: %d schedules starting with %+v, want 61 starting with never", m.Scenario, n, m.Schedules[0])
		}
		if m.BestRule != "static" && m.BestRule != "crowd" {
			t.Errorf("%s: best rule %q, want static or crowd", m.Scenario, m.BestRule)
		}
		for _, s := range m.Schedules {
			if s.Mean > m.Hindsight.Mean {
				t.Errorf("%s: schedule %+v beats the hindsight best %+v", m.Scenario, s, m.Hindsight)
			}
		}
	}
	// The minimax, computed here again from the schedules.
	a0, b0 := tb.Members[0], tb.Members[1]
	commit, waitA, waitB := math.Inf(1), math.Inf(1), math.Inf(1)
	for i := range a0.Schedules {
		fa, fb := a0.Shortfall(a0.Schedules[i].Mean), b0.Shortfall(b0.Schedules[i].Mean)
		if a0.Schedules[i].To >= 0 && a0.Schedules[i].At <= 3 {
			commit = min(commit, max(fa, fb))
		} else {
			waitA, waitB = min(waitA, fa), min(waitB, fb)
		}
	}
	if want := min(commit, max(waitA, waitB)); math.Abs(tb.Least-want) > 1e-12 {
		t.Errorf("least shortfall %v, want %v (commit %v, wait %v and %v)", tb.Least, want, commit, waitA, waitB)
	}
	if tb.Members[1].BestRule != "static" {
		t.Errorf("a 3 s visit: best rule %s, want static (a move only costs)", tb.Members[1].BestRule)
	}
}

func TestBoundRefusesScenariosThatDifferBeforeDiverging(t *testing.T) {
	a := shortCrowd(t)
	b, err := a.EndedAt(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Bound(context.Background(), BoundSpec{
		Twins: []Twin{{A: a, B: b, Diverge: 4 * time.Second}}, Rules: boundRules(t),
		Repeats: 1, Seed: 5, Config: sim.TestbedConfig(), Parallelism: 2,
	})
	if err == nil || !strings.Contains(err.Error(), "do not look the same to a controller up to 4s") {
		t.Fatalf("Bound on scenarios apart from 1 s, diverging at 4 s: error %v, want one saying they differ before", err)
	}
}

func TestFanBound(t *testing.T) {
	// Shortfalls as means behind a best rule of 100.
	member := func(name string, sf ...float64) Member {
		m := Member{Scenario: name, BestRuleMean: 100}
		for i, f := range sf {
			s := Schedule{To: -1, Mean: 100 * (1 - f)}
			if i > 0 {
				s = Schedule{At: float64(2*i - 1), To: 1, Mean: 100 * (1 - f)}
			}
			m.Schedules = append(m.Schedules, s)
		}
		return m
	}
	// The scenario: never 5%, a move at 1 s 0%, at 3 s 3% behind.
	x := member("X", 0.05, 0, 0.03)
	// B1 is X until 2 s, then the congestion leaves: staying is best, a
	// move costs 3%. B2 leaves at 0.5 s.
	b1, b2 := member("B1", 0, 0.03, 0.03), member("B2", 0, 0.03, 0.03)
	bounds := []TwinBound{
		{Members: [2]Member{x, b1}, Diverge: 2},
		{Members: [2]Member{x, b2}, Diverge: 0.5},
	}
	for i := range bounds {
		bounds[i].minimax()
	}
	fans := FanBound(bounds)
	if len(fans) != 1 || fans[0].Twins != 2 {
		t.Fatalf("fans %+v, want one over two twins", fans)
	}
	approx := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	want := []struct {
		worst float64
		in    string
	}{{0.05, "X"}, {0.03, "B1"}, {0.03, "X"}}
	for i, w := range want {
		pt := fans[0].Curve[i]
		if !approx(pt.Worst, w.worst) || pt.WorstIn != w.in {
			t.Errorf("point %d (%+v): worst %v in %s, want %v in %s", i, pt.Schedule, pt.Worst, pt.WorstIn, w.worst, w.in)
		}
	}
	if b := fans[0].Best; b.Schedule.At != 1 || !approx(b.Worst, 0.03) {
		t.Errorf("best %+v, want the move at 1 s, 3%% worst", b)
	}
}

func TestBoundRefusesOtherKinds(t *testing.T) {
	a, err := sim.BuiltinScenario("R1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.EndedAt(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Bound(context.Background(), BoundSpec{Twins: []Twin{{A: a, B: b, Diverge: time.Second}}, Rules: boundRules(t), Repeats: 1, Config: sim.TestbedConfig()})
	if err == nil || !strings.Contains(err.Error(), "of kind rr; the bound compares one bulk flow's mean throughput") {
		t.Fatalf("Bound on R1 (an rr flow): error %v, want one naming the kind", err)
	}
}

// A twin ended while no congester sends is the same as its scenario until
// the next one arrives, and the bound counts it so: a move made before
// then is made in both.
func TestBoundDivergesWhenTrafficParts(t *testing.T) {
	a := shortCrowd(t)
	a.Name = "bursts"
	var back []sim.Congester
	for i := range a.Congesters {
		c := &a.Congesters[i]
		c.Depart = sim.Duration(a.Start() + 2*time.Second)
		again := *c
		again.Arrive, again.Depart = sim.Duration(a.Start()+7*time.Second), 0
		back = append(back, again)
	}
	a.Congesters = append(a.Congesters, back...)
	b, err := a.EndedAt(4 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Bound(context.Background(), BoundSpec{
		Twins: []Twin{{A: a, B: b, Diverge: 4 * time.Second}}, Rules: boundRules(t),
		Repeats: 1, Seed: 5, Config: sim.TestbedConfig(), Parallelism: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	tb := got[0]
	if tb.Diverge != 6.5 {
		t.Errorf("diverge %v s, want 6.5 (the last decision before the second burst arrives at 7 s)", tb.Diverge)
	}
	if tb.Commit.To >= 0 && tb.Commit.At > tb.Diverge {
		t.Errorf("commit %+v after the twins part at %v s", tb.Commit, tb.Diverge)
	}
}
