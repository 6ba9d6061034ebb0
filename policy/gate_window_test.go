package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// With Window the gate counts a candidate's votes over the last Window:
// bursts shorter than Votes add up, votes older than the window drop out,
// another candidate keeps its own count, and a move forgets them all.
func TestGateWindow(t *testing.T) {
	const none = -1
	vote := func(best, votes int) gateOut {
		return gateOut{Best: best, Margin: 1, Votes: votes, Target: -1, Reason: proflow.ReasonVotes}
	}
	stay := gateOut{Best: 0, Target: -1, Reason: proflow.ReasonStay}
	toward1 := []float64{0, 1, 0, 0}
	toward2 := []float64{0, 0, 1, 0}
	quiet := []float64{1, 0, 0, 0}
	cfg := GateConfig{Margin: 0.5, Votes: 4, Window: 10 * time.Second}
	g, err := NewGate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runGate(t, g, []gateStep{
		{0, toward1, 0, none, vote(1, 1)},
		{0, toward1, 1, none, vote(1, 2)},
		{0, quiet, 2, none, stay},          // a gap forgets nothing
		{0, toward2, 3, none, vote(2, 1)},  // another candidate counts apart
		{0, toward1, 4, none, vote(1, 3)},  // and does not erase switch 1's
		{0, quiet, 5, none, stay},          //
		{0, toward1, 11, none, vote(1, 2)}, // the votes at 0 s and 1 s are out of the window
		{0, toward1, 12, none, vote(1, 3)},
		{0, toward1, 13, none, gateOut{Best: 1, Margin: 1, Votes: 4, Target: 1, Reason: proflow.ReasonRerouted}},
		{1, toward2, 14, 13, vote(2, 1)}, // the move forgot every vote, switch 2's at 3 s too
	})

	// The same steps behind the paper's gate (consecutive votes) never move.
	paper := cfg
	paper.Window = 0
	p, err := NewGate(paper)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range [][]float64{toward1, toward1, quiet, toward1, toward1, toward1, quiet, toward1, toward1, toward1} {
		d := proflow.Decision{Time: at(float64(i)), Current: 0, Scores: s, Best: -1, Target: -1}
		p.Admit(&d)
		if d.Target >= 0 {
			t.Fatalf("consecutive votes: step %d admitted a move with %d votes, want none (no streak of 4)", i, d.Votes)
		}
	}

	// Reset forgets the window's votes.
	g.Reset()
	d := proflow.Decision{Time: at(20), Current: 0, Scores: toward1, Best: -1, Target: -1}
	g.Admit(&d)
	if d.Votes != 1 {
		t.Errorf("after Reset: %d votes, want 1", d.Votes)
	}

	if _, err := NewGate(GateConfig{Votes: 1, Window: -time.Second}); err == nil || !strings.Contains(err.Error(), "window -1s, want >= 0") {
		t.Errorf("negative window: error %v, want it named", err)
	}
}

// Counting over a window allocates nothing once its buffer has grown.
func TestGateWindowDoesNotAllocate(t *testing.T) {
	cfg := DefaultGateConfig()
	cfg.Window = 5 * time.Second
	g, err := NewGate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := proflow.Decision{Current: 0, Scores: []float64{0, 1, 2, 3}}
	step := 0
	admit := func() {
		d.Time = t0.Add(time.Duration(step) * 500 * time.Millisecond)
		d.Current, d.LastReroute = 0, time.Time{}
		step++
		g.Admit(&d)
	}
	for range 20 { // the buffer grows to the window's 10 votes
		admit()
	}
	if n := testing.AllocsPerRun(100, admit); n != 0 {
		t.Errorf("Admit with a window allocates %v times per call, want 0", n)
	}
}
