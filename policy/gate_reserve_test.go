package policy

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
)

// loadStep is one decision of a gate with Reserve: the scores, the
// current switch's load (transmit rate over C) and the decision time.
type loadStep struct {
	current int
	scores  []float64
	load    float64
	time    float64 // seconds after t0
	want    gateOut
}

// mustGate returns NewGate(cfg), failing the test on an error.
func mustGate(t *testing.T, cfg GateConfig) *Gate {
	t.Helper()
	g, err := NewGate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func runLoadGate(t *testing.T, g *Gate, steps []loadStep) {
	t.Helper()
	for i, s := range steps {
		d := proflow.Decision{Time: at(s.time), Current: s.current, Scores: s.scores, Load: s.load, Best: -1, Target: -1}
		g.Admit(&d)
		if d.Err != nil {
			t.Errorf("step %d: unexpected error %v", i, d.Err)
		}
		got := gateOut{d.Best, d.Margin, d.Votes, d.Cooldown, d.Target, d.Reason}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d (scores %v, load %v, at %vs): decision (-want +got):\n%s", i, s.scores, s.load, s.time, diff)
		}
	}
}

// With Reserve the gate keeps a candidate's votes across a gap while the
// current switch has not earned back what it sent above C since the first
// of them: bursts onto a switch the flow keeps at C add up; a gap in which
// the switch refills forgets them.
func TestGateReserve(t *testing.T) {
	vote := func(best, votes int) gateOut {
		return gateOut{Best: best, Margin: 1, Votes: votes, Target: -1, Reason: proflow.ReasonVotes}
	}
	stay := gateOut{Best: 0, Target: -1, Reason: proflow.ReasonStay}
	moved := gateOut{Best: 1, Margin: 1, Votes: 4, Target: 1, Reason: proflow.ReasonRerouted}
	toward1 := []float64{0, 1, 0, 0}
	toward2 := []float64{0, 0, 1, 0}
	quiet := []float64{1, 0, 0, 0}
	cfg := GateConfig{Margin: 0.5, Votes: 4, Reserve: true}

	t.Run("bursts onto a switch held at C add up", func(t *testing.T) {
		g := mustGate(t, cfg)
		runLoadGate(t, g, []loadStep{
			{0, toward1, 5, 0, vote(1, 1)},
			{0, toward1, 5, 1, vote(1, 2)}, // 4 s of C drained
			{0, quiet, 1, 2, stay},         // the flow alone keeps the switch at C
			{0, quiet, 0.9, 12, stay},      // 1 s of C earned back in 10 s: 3 s still owed
			{0, toward2, 5, 13, vote(2, 1)},
			{0, toward1, 5, 14, vote(1, 3)}, // switch 2's vote did not erase switch 1's
			{0, toward1, 5, 15, moved},
		})
	})

	t.Run("a gap that refills the switch forgets the votes", func(t *testing.T) {
		g := mustGate(t, cfg)
		runLoadGate(t, g, []loadStep{
			{0, toward1, 5, 0, vote(1, 1)},
			{0, toward1, 5, 1, vote(1, 2)}, // 4 s of C drained
			{0, quiet, 0, 3, stay},         // 2 s idle: 2 s earned back, 2 s owed
			{0, toward1, 5, 4, vote(1, 3)},
			{0, quiet, 0, 9, stay},  // 2 + 4 owed, 5 s idle: still 1 owed
			{0, quiet, 0, 11, stay}, // refilled: the votes are forgotten
			{0, toward1, 5, 12, vote(1, 1)},
			{0, toward1, 5, 13, vote(1, 2)},
			{0, toward1, 5, 14, vote(1, 3)},
			{0, toward1, 5, 15, moved},
		})
	})

	t.Run("a streak in a row counts whatever the load", func(t *testing.T) {
		g := mustGate(t, cfg)
		runLoadGate(t, g, []loadStep{
			{0, toward1, 0.5, 0, vote(1, 1)},
			{0, toward1, 0.5, 1, vote(1, 2)},
			{0, toward1, 0.5, 2, vote(1, 3)},
			{0, toward1, 0.5, 3, moved},
		})
	})

	t.Run("a move and Reset forget the votes", func(t *testing.T) {
		g := mustGate(t, cfg)
		runLoadGate(t, g, []loadStep{
			{0, toward2, 5, 0, vote(2, 1)},
			{0, toward1, 5, 1, vote(1, 1)},
			{0, toward1, 5, 2, vote(1, 2)},
			{0, toward1, 5, 3, vote(1, 3)},
			{0, toward1, 5, 4, moved},
			{1, []float64{0, 0, 1, 0}, 5, 5, gateOut{Best: 2, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
		})
		g.Reset()
		runLoadGate(t, g, []loadStep{{0, toward2, 5, 6, vote(2, 1)}})
	})

	// The paper's gate on the first case's steps never moves.
	t.Run("consecutive votes do not add up across the gap", func(t *testing.T) {
		paper := cfg
		paper.Reserve = false
		g := mustGate(t, paper)
		for i, s := range []struct {
			scores []float64
			sec    float64
		}{{toward1, 0}, {toward1, 1}, {quiet, 2}, {quiet, 12}, {toward1, 13}, {toward1, 14}, {toward1, 15}} {
			d := proflow.Decision{Time: at(s.sec), Current: 0, Scores: s.scores, Load: 5, Best: -1, Target: -1}
			g.Admit(&d)
			if d.Target >= 0 {
				t.Fatalf("step %d: consecutive votes admitted a move with %d votes, want none", i, d.Votes)
			}
		}
	})
}

// A load the gate cannot integrate holds the placement with an error
// naming it; Reserve with Window is refused.
func TestGateReserveBadInput(t *testing.T) {
	g, err := NewGate(GateConfig{Margin: 0.5, Votes: 4, Reserve: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, load := range []float64{-1, math.Inf(1), math.NaN()} {
		d := proflow.Decision{Time: at(0), Current: 0, Scores: []float64{0, 1}, Load: load, Best: -1, Target: -1}
		g.Admit(&d)
		if d.Err == nil || !strings.Contains(d.Err.Error(), "current switch load") || d.Target != -1 || d.Reason != proflow.ReasonPolicy {
			t.Errorf("load %v: target %d, reason %v, error %v; want a held placement and the load named", load, d.Target, d.Reason, d.Err)
		}
	}
	_, err = NewGate(GateConfig{Votes: 4, Reserve: true, Window: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "reserve with window 1m0s") {
		t.Errorf("reserve with a window: error %v, want it named", err)
	}
}

// Holding votes allocates nothing once the per-switch counts exist.
func TestGateReserveDoesNotAllocate(t *testing.T) {
	cfg := DefaultGateConfig()
	cfg.Votes, cfg.Reserve = 1000, true
	g, err := NewGate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := proflow.Decision{Current: 0, Scores: []float64{0, 1, 2, 3}, Load: 2}
	step := 0
	admit := func() {
		d.Time = t0.Add(time.Duration(step) * 500 * time.Millisecond)
		d.Best, d.Target = -1, -1
		g.Admit(&d)
		step++
	}
	admit()
	if n := testing.AllocsPerRun(100, admit); n != 0 {
		t.Errorf("Admit with Reserve: %v allocations per call, want 0", n)
	}
}
