package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
)

// recheckOut is what a recheck decides: the destination, the votes it
// reports, the move or hold, and why.
type recheckOut struct {
	Best   int
	Votes  int
	Target int
	Reason proflow.Reason
}

// recheckGate is a gate with a bucket of 10 s of C, a 2 s horizon, a
// 0.5 s recheck lead and 2 votes, brought to the step at which the
// estimate lets a move go ahead: D = 6 at load 3 (2 s left), deferred to a
// recheck 1.5 s later. It returns the gate and that step's decision.
func recheckGate(t *testing.T) (*Gate, proflow.Decision) {
	t.Helper()
	g := mustGate(t, GateConfig{Margin: 0.5, Votes: 2, Drain: DrainConfig{Depth: 10, Horizon: 2 * time.Second, Recheck: 500 * time.Millisecond}})
	toward1 := []float64{0, 1, 0, 0}
	var d proflow.Decision
	for _, s := range []struct {
		time   float64
		reason proflow.Reason
	}{{0, proflow.ReasonVotes}, {1, proflow.ReasonReserve}, {2, proflow.ReasonReserve}, {3, proflow.ReasonReserve}} {
		d = proflow.Decision{Time: at(s.time), Current: 0, Scores: toward1, Load: 3, Best: -1, Target: -1, Recheckable: true}
		g.Admit(&d)
		if d.Reason != s.reason || d.Target != -1 || d.Err != nil {
			t.Fatalf("step at %vs: reason %s, target %d, error %v; want %s, -1, none", s.time, d.Reason, d.Target, d.Err, s.reason)
		}
	}
	return g, d
}

// recheck runs g.Recheck on switch current at t0 + sec with load.
func recheck(g *Gate, current int, sec, load float64) (recheckOut, proflow.Decision) {
	d := proflow.Decision{Time: at(sec), Current: current, Load: load, Rechecking: true, Recheckable: true}
	g.Recheck(&d)
	return recheckOut{d.Best, d.Votes, d.Target, d.Reason}, d
}

// With Drain.Recheck, a move the horizon lets go ahead while the estimate
// still gives the reserve more than the lead is deferred to one recheck
// the lead before the estimate's end; the recheck makes it only if the
// reserve, advanced over the load since the step, still runs out within
// the horizon.
func TestGateDrainRecheck(t *testing.T) {
	toward1 := []float64{0, 1, 0, 0}
	t.Run("deferred to the lead before the estimate's end", func(t *testing.T) {
		_, d := recheckGate(t)
		if d.Recheck != 1500*time.Millisecond { // 2 s left, less the 0.5 s lead
			t.Errorf("Recheck %v, want 1.5s", d.Recheck)
		}
	})
	t.Run("the crowd stays: moved", func(t *testing.T) {
		g, _ := recheckGate(t)
		got, _ := recheck(g, 0, 4.5, 3) // D = 9: 0.5 s left
		if diff := cmp.Diff(recheckOut{Best: 1, Votes: 4, Target: 1, Reason: proflow.ReasonRerouted}, got); diff != "" {
			t.Errorf("recheck (-want +got):\n%s", diff)
		}
	})
	t.Run("the crowd left: held, and the next step counts on", func(t *testing.T) {
		g, _ := recheckGate(t)
		got, _ := recheck(g, 0, 4.5, 0.5) // D = 6 − 0.75: never empties at 0.5
		if diff := cmp.Diff(recheckOut{Best: 1, Votes: 4, Target: -1, Reason: proflow.ReasonReserve}, got); diff != "" {
			t.Errorf("recheck (-want +got):\n%s", diff)
		}
		// The recheck did not advance the deficit the gate keeps: the next
		// step at load 3 finds D = 6 + 3 × 2 = 12 ≥ 10, empty, and moves.
		d := proflow.Decision{Time: at(5), Current: 0, Scores: toward1, Load: 3, Best: -1, Target: -1, Recheckable: true}
		g.Admit(&d)
		if d.Target != 1 || d.Reason != proflow.ReasonRerouted || d.Votes != 5 {
			t.Errorf("next step: target %d, reason %s, votes %d; want 1, rerouted, 5", d.Target, d.Reason, d.Votes)
		}
	})
	t.Run("one recheck for one deferral", func(t *testing.T) {
		g, _ := recheckGate(t)
		recheck(g, 0, 4.5, 0.5)
		if got, _ := recheck(g, 0, 4.6, 3); got != (recheckOut{Best: -1, Target: -1, Reason: proflow.ReasonStay}) {
			t.Errorf("second recheck %+v, want a stay with nothing deferred", got)
		}
	})
	t.Run("a step ends the deferral", func(t *testing.T) {
		g, _ := recheckGate(t)
		d := proflow.Decision{Time: at(3.5), Current: 0, Scores: []float64{1, 0, 0, 0}, Load: 3, Best: -1, Target: -1, Recheckable: true}
		g.Admit(&d) // the current switch scores best: nothing deferred
		if got, _ := recheck(g, 0, 4.5, 3); got.Target != -1 || got.Reason != proflow.ReasonStay {
			t.Errorf("recheck after a step %+v, want a stay", got)
		}
	})
	t.Run("a flow moved meanwhile is not moved again", func(t *testing.T) {
		g, _ := recheckGate(t)
		if got, _ := recheck(g, 2, 4.5, 3); got.Target != -1 || got.Reason != proflow.ReasonStay {
			t.Errorf("recheck on another switch %+v, want a stay", got)
		}
	})
	t.Run("a bad load is an error and holds", func(t *testing.T) {
		g, _ := recheckGate(t)
		got, d := recheck(g, 0, 4.5, -1)
		if got.Target != -1 || got.Reason != proflow.ReasonPolicy || d.Err == nil || !strings.Contains(d.Err.Error(), "load -1") {
			t.Errorf("recheck at load -1: %+v, error %v; want a policy-error hold naming the load", got, d.Err)
		}
	})
	t.Run("without a controller that rechecks, nothing is deferred", func(t *testing.T) {
		g := mustGate(t, GateConfig{Margin: 0.5, Votes: 2, Drain: DrainConfig{Depth: 10, Horizon: 2 * time.Second, Recheck: 500 * time.Millisecond}})
		runLoadGate(t, g, []loadStep{
			{0, toward1, 3, 0, drainVote(1)}, // Recheckable unset
			{0, toward1, 3, 1, drainHeld(2)},
			{0, toward1, 3, 2, drainHeld(3)},
			{0, toward1, 3, 3, drainMoved(4)}, // as without Recheck
		})
	})
	t.Run("within the lead, the move goes ahead at the step", func(t *testing.T) {
		g := mustGate(t, GateConfig{Margin: 0.5, Votes: 2, Drain: DrainConfig{Depth: 10, Horizon: 2 * time.Second, Recheck: 500 * time.Millisecond}})
		for i, s := range []struct {
			time, load float64
			reason     proflow.Reason
		}{{0, 3, proflow.ReasonVotes}, {1, 3, proflow.ReasonReserve}, {2, 8, proflow.ReasonRerouted}} { // D = 9 at load 8: 1/7 s left
			d := proflow.Decision{Time: at(s.time), Current: 0, Scores: toward1, Load: s.load, Best: -1, Target: -1, Recheckable: true}
			g.Admit(&d)
			if d.Reason != s.reason || d.Recheck != 0 {
				t.Errorf("step %d: reason %s, recheck %v; want %s, none", i, d.Reason, d.Recheck, s.reason)
			}
		}
	})
	t.Run("a flow in distress is not deferred", func(t *testing.T) {
		g := mustGate(t, GateConfig{Margin: 0.5, Votes: 9, Distress: DistressConfig{Fraction: 0.5, Consecutive: 1, Smoothing: 0.1},
			Drain: DrainConfig{Depth: 10, Horizon: 2 * time.Second, Recheck: 500 * time.Millisecond}})
		for i, s := range []struct {
			time, phi float64
			reason    proflow.Reason
		}{{0, 10, proflow.ReasonVotes}, {3, 1, proflow.ReasonRerouted}} {
			d := proflow.Decision{Time: at(s.time), Current: 0, Scores: toward1, Load: 3, Throughput: s.phi, Best: -1, Target: -1, Recheckable: true}
			g.Admit(&d)
			if d.Reason != s.reason || d.Recheck != 0 {
				t.Errorf("step %d: reason %s, recheck %v; want %s, none", i, d.Reason, d.Recheck, s.reason)
			}
		}
	})
	for _, c := range []struct {
		recheck time.Duration
		want    string
	}{
		{-time.Millisecond, "drain recheck -1ms, want 0 (none) or a lead > 0 shorter than the horizon 2s"},
		{2 * time.Second, "drain recheck 2s, want 0 (none) or a lead > 0 shorter than the horizon 2s"},
	} {
		if _, err := NewGate(GateConfig{Margin: 0.2, Votes: 2, Drain: DrainConfig{Depth: 10, Horizon: 2 * time.Second, Recheck: c.recheck}}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("recheck %v: error %v, want one containing %q", c.recheck, err, c.want)
		}
	}
	g, err := ReadGateConfig(strings.NewReader(`{"votes": 20, "drain": {"depth": 49.5, "rate": 1.04, "horizon": 500000000, "recheck": 50000000}}`))
	if err != nil {
		t.Fatal(err)
	}
	if g.Drain.Recheck != 50*time.Millisecond {
		t.Errorf("drain.recheck read as %v, want 50ms", g.Drain.Recheck)
	}
}
