package policy

import (
	"testing"

	"github.com/proflow-sdn/proflow"
)

// Two destinations that swap places by less than Tolerance do not restart
// the vote count; one that pulls ahead by more does, and so does a previous
// candidate that no longer beats the current switch by the margin.
func TestGateTolerance(t *testing.T) {
	const none = -1
	votes := func(best int, margin float64, n int) gateOut {
		return gateOut{Best: best, Margin: margin, Votes: n, Target: -1, Reason: proflow.ReasonVotes}
	}
	for _, tc := range []struct {
		name  string
		cfg   GateConfig
		steps []gateStep
	}{
		{"near-tie keeps the candidate", GateConfig{Margin: 0.1, Votes: 3, Tolerance: 0.1}, []gateStep{
			{0, []float64{1, 2, 1.96875, 0}, 0, none, votes(1, 1, 1)},
			{0, []float64{1, 1.9375, 2, 0}, 0.5, none, votes(1, 0.9375, 2)},
			{0, []float64{1, 1.96875, 2.03125, 0}, 1, none, gateOut{Best: 1, Margin: 0.96875, Votes: 3, Target: 1, Reason: proflow.ReasonRerouted}},
		}},
		{"without tolerance the same scores restart the count", GateConfig{Margin: 0.1, Votes: 3}, []gateStep{
			{0, []float64{1, 2, 1.96875, 0}, 0, none, votes(1, 1, 1)},
			{0, []float64{1, 1.9375, 2, 0}, 0.5, none, votes(2, 1, 1)},
			{0, []float64{1, 1.96875, 2.03125, 0}, 1, none, votes(2, 1.03125, 2)},
		}},
		{"a clear lead changes the candidate", GateConfig{Margin: 0.1, Votes: 3, Tolerance: 0.1}, []gateStep{
			{0, []float64{1, 2, 1.96875, 0}, 0, none, votes(1, 1, 1)},
			{0, []float64{1, 1.75, 2, 0}, 0.5, none, votes(2, 1, 1)},
		}},
		{"a kept candidate that no longer clears the margin gives way to the maximum", GateConfig{Margin: 0.1, Votes: 3, Tolerance: 0.1}, []gateStep{
			{0, []float64{1, 1.5, 1.4375, 0}, 0, none, votes(1, 0.5, 1)},
			{0, []float64{1, 1.0625, 1.125, 0}, 0.5, none, votes(2, 0.125, 1)},
		}},
		{"no switch clears the margin", GateConfig{Margin: 0.1, Votes: 3, Tolerance: 0.1}, []gateStep{
			{0, []float64{1, 1.5, 1.4375, 0}, 0, none, votes(1, 0.5, 1)},
			{0, []float64{1, 1.0625, 1.0625, 0}, 0.5, none, gateOut{Best: 1, Margin: 0.0625, Target: -1, Reason: proflow.ReasonMargin}},
		}},
		{"the current switch still wins when it is best", GateConfig{Margin: 0.1, Votes: 3, Tolerance: 0.1}, []gateStep{
			{0, []float64{1, 2, 0, 0}, 0, none, votes(1, 1, 1)},
			{0, []float64{2, 1.9375, 0, 0}, 0.5, none, gateOut{Best: 0, Target: -1, Reason: proflow.ReasonStay}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewGate(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			runGate(t, g, tc.steps)
		})
	}
	if _, err := NewGate(GateConfig{Margin: 0.1, Votes: 1, Tolerance: -1}); err == nil {
		t.Error("negative tolerance: no error")
	}
}
