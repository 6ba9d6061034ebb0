package policy

import (
	"testing"

	"github.com/proflow-sdn/proflow"
)

// With Gap the gate holds a move it admits while the flow sends in a
// burst no longer than its last one bounded by idle samples (nothing
// delivered while application-limited), and lets it through at the next
// idle sample; a flow never idle, one that delivers while
// application-limited, a burst longer than the last and a gate that was
// Reset are not held.
func TestGateGap(t *testing.T) {
	type step struct {
		thr, app float64 // the flow's sample
		move     bool    // switch 1 outscores the current switch 0 by more than the margin
		want     proflow.Reason
		scores   []float64 // instead of move's, when set
	}
	idle := func(move bool, want proflow.Reason) step { return step{0, 1, move, want, nil} }
	busy := func(move bool, want proflow.Reason) step { return step{1e6, 0, move, want, nil} }
	stay := proflow.ReasonStay
	run := func(t *testing.T, g *Gate, from int, steps []step) {
		t.Helper()
		for i, s := range steps {
			scores := []float64{1, 0, 0, 0}
			if s.move {
				scores = []float64{0, 1, 0, 0}
			}
			if s.scores != nil {
				scores = s.scores
			}
			d := proflow.Decision{Time: at(float64(from + i)), Current: 0, Scores: scores, Throughput: s.thr, AppLimited: s.app, Best: -1, Target: -1}
			g.Admit(&d)
			if d.Err != nil {
				t.Fatalf("step %d: %v", i, d.Err)
			}
			if d.Reason != s.want {
				t.Errorf("step %d (throughput %v, app-limited %v, candidate %v): reason %q, want %q", i, s.thr, s.app, s.move, d.Reason, s.want)
			}
		}
	}
	cfg := GateConfig{Margin: 0.5, Votes: 1, Gap: true}
	onoff := []step{idle(false, stay), busy(false, stay), busy(false, stay), idle(false, stay)} // a burst of 2 between gaps

	t.Run("held through a burst no longer than the last, moved in the gap", func(t *testing.T) {
		run(t, mustGate(t, cfg), 0, append(onoff,
			busy(true, proflow.ReasonGap), busy(true, proflow.ReasonGap), idle(true, proflow.ReasonRerouted)))
	})
	t.Run("the held move is made in the gap while the destination scores at least the current switch", func(t *testing.T) {
		barely := step{0, 1, false, proflow.ReasonRerouted, []float64{0.5, 0.6, 0, 0}} // ΔQ 0.1, under the margin
		run(t, mustGate(t, cfg), 0, append(onoff, busy(true, proflow.ReasonGap), barely))
	})
	t.Run("the held move is dropped in a gap where the destination scores below the current switch", func(t *testing.T) {
		worse := step{0, 1, false, proflow.ReasonStay, []float64{0.6, 0.5, 0, 0}}
		run(t, mustGate(t, cfg), 0, append(onoff, busy(true, proflow.ReasonGap), worse, idle(false, stay)))
	})
	t.Run("a burst longer than the last is not held", func(t *testing.T) {
		run(t, mustGate(t, cfg), 0, append(onoff,
			busy(true, proflow.ReasonGap), busy(true, proflow.ReasonGap), busy(true, proflow.ReasonRerouted)))
	})
	t.Run("a flow never idle is not held", func(t *testing.T) {
		run(t, mustGate(t, cfg), 0, []step{busy(false, stay), busy(false, stay), busy(true, proflow.ReasonRerouted)})
	})
	t.Run("a flow that delivers while application-limited is not idle", func(t *testing.T) {
		limited := func(move bool, want proflow.Reason) step { return step{1e6, 1, move, want, nil} }
		run(t, mustGate(t, cfg), 0, []step{limited(false, stay), busy(false, stay), limited(false, stay), busy(true, proflow.ReasonRerouted)})
	})
	t.Run("the first burst, not bounded before, sets no hold", func(t *testing.T) {
		run(t, mustGate(t, cfg), 0, []step{busy(false, stay), busy(false, stay), idle(false, stay), busy(true, proflow.ReasonRerouted)})
	})
	t.Run("Reset forgets the bursts", func(t *testing.T) {
		g := mustGate(t, cfg)
		run(t, g, 0, onoff)
		g.Reset()
		run(t, g, len(onoff), []step{busy(true, proflow.ReasonRerouted)})
	})
	t.Run("off, the paper's gate moves in a burst", func(t *testing.T) {
		off := cfg
		off.Gap = false
		run(t, mustGate(t, off), 0, append(onoff, busy(true, proflow.ReasonRerouted)))
	})
}
