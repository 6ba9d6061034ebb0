package policy

import (
	"testing"

	"github.com/proflow-sdn/proflow"
)

// With Hold a step at which the counted candidate still beats the
// current switch, but by no more than the margin, keeps the streak
// without adding a vote; a step at which the current switch scores at
// least as high resets it, as without Hold.
func TestGateHold(t *testing.T) {
	ahead := []float64{0, 1, 0, 0}      // switch 1 beats the current switch 0 by 1
	within := []float64{0, 0.3, 0, 0}   // by 0.3, not above the margin 0.5
	behind := []float64{0.2, 0.1, 0, 0} // the current switch scores higher
	type step struct {
		scores []float64
		votes  int
		want   proflow.Reason
	}
	run := func(t *testing.T, cfg GateConfig, steps []step) {
		t.Helper()
		g := mustGate(t, cfg)
		for i, s := range steps {
			d := proflow.Decision{Time: at(float64(i)), Current: 0, Scores: s.scores, Best: -1, Target: -1}
			g.Admit(&d)
			if d.Err != nil {
				t.Fatalf("step %d: %v", i, d.Err)
			}
			if d.Reason != s.want || d.Votes != s.votes {
				t.Errorf("step %d (scores %v): reason %q, votes %d; want %q, %d", i, s.scores, d.Reason, d.Votes, s.want, s.votes)
			}
		}
	}
	cfg := GateConfig{Margin: 0.5, Votes: 3, Hold: true}
	t.Run("a step within the margin holds the streak", func(t *testing.T) {
		run(t, cfg, []step{
			{ahead, 1, proflow.ReasonVotes}, {within, 1, proflow.ReasonMargin},
			{ahead, 2, proflow.ReasonVotes}, {ahead, 3, proflow.ReasonRerouted},
		})
	})
	t.Run("a step where the current switch scores higher resets it", func(t *testing.T) {
		run(t, cfg, []step{
			{ahead, 1, proflow.ReasonVotes}, {ahead, 2, proflow.ReasonVotes},
			{behind, 0, proflow.ReasonStay}, {ahead, 1, proflow.ReasonVotes},
		})
	})
	t.Run("a step within the margin with no streak starts none", func(t *testing.T) {
		run(t, cfg, []step{{within, 0, proflow.ReasonMargin}, {within, 0, proflow.ReasonMargin}, {ahead, 1, proflow.ReasonVotes}})
	})
	t.Run("off, a step within the margin resets the streak", func(t *testing.T) {
		off := cfg
		off.Hold = false
		run(t, off, []step{
			{ahead, 1, proflow.ReasonVotes}, {ahead, 2, proflow.ReasonVotes},
			{within, 0, proflow.ReasonMargin}, {ahead, 1, proflow.ReasonVotes},
		})
	})
}
