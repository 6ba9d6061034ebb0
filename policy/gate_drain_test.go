package policy

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// drainVote, drainHeld and drainMoved are what the gate says of a step
// whose scores put switch 1 ahead by 1 with votes votes: counting, held by
// the reserve, and moved.
func drainVote(votes int) gateOut {
	return gateOut{Best: 1, Margin: 1, Votes: votes, Target: -1, Reason: proflow.ReasonVotes}
}

func drainHeld(votes int) gateOut {
	return gateOut{Best: 1, Margin: 1, Votes: votes, Target: -1, Reason: proflow.ReasonReserve}
}

func drainMoved(votes int) gateOut {
	return gateOut{Best: 1, Margin: 1, Votes: votes, Target: 1, Reason: proflow.ReasonRerouted}
}

// With Drain the gate holds a move its votes admit while the current
// switch's bucket, drained by the integral of Load − 1 since the flow came
// to it, lasts longer than the horizon at the present load; it lets the
// move go once the bucket is that close to empty, and never holds a flow
// in distress.
func TestGateDrain(t *testing.T) {
	toward1 := []float64{0, 1, 0, 0}
	vote, held, moved := drainVote, drainHeld, drainMoved
	// A bucket of 10 s of C, a 2 s horizon, 2 votes.
	cfg := GateConfig{Margin: 0.5, Votes: 2, Drain: DrainConfig{Depth: 10, Horizon: 2 * time.Second}}

	t.Run("held until the bucket is within the horizon of empty", func(t *testing.T) {
		runLoadGate(t, mustGate(t, cfg), []loadStep{
			{0, toward1, 3, 0, vote(1)},  // D starts at 0
			{0, toward1, 3, 1, held(2)},  // D = 2: (10 − 2)/2 = 4 s left
			{0, toward1, 3, 2, held(3)},  // D = 4: 3 s left
			{0, toward1, 3, 3, moved(4)}, // D = 6: 2 s left, not more than the horizon
		})
	})
	t.Run("a switch at or below C never empties", func(t *testing.T) {
		runLoadGate(t, mustGate(t, cfg), []loadStep{
			{0, toward1, 1, 0, vote(1)},
			{0, toward1, 1, 100, held(2)},
			{0, toward1, 0.5, 200, held(3)},
		})
	})
	t.Run("a bucket the estimate has emptied holds nothing, even at C", func(t *testing.T) {
		four := cfg
		four.Votes = 4
		runLoadGate(t, mustGate(t, four), []loadStep{
			{0, toward1, 3, 0, vote(1)},
			{0, toward1, 3, 5, vote(2)},   // D = 10: the whole depth
			{0, toward1, 1, 5.5, vote(3)}, // a dry bucket sends at C
			{0, toward1, 1, 6, moved(4)},  // not held: D has reached Depth
		})
	})
	t.Run("a higher load shortens the wait", func(t *testing.T) {
		runLoadGate(t, mustGate(t, cfg), []loadStep{
			{0, toward1, 3, 0, vote(1)},
			{0, toward1, 3, 1, held(2)},  // D = 2, 4 s left at load 3
			{0, toward1, 9, 2, moved(3)}, // D = 10: (10 − 10)/8 = 0 s left
		})
	})
	t.Run("a new switch starts full", func(t *testing.T) {
		toward2 := []float64{0, 0, 1, 0}
		runLoadGate(t, mustGate(t, cfg), []loadStep{
			{0, toward1, 3, 0, vote(1)},
			{0, toward1, 3, 1, held(2)},
			{0, toward1, 3, 3, moved(3)}, // D = 6 on switch 0
			{1, toward2, 3, 4, gateOut{Best: 2, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
			{1, toward2, 3, 5, gateOut{Best: 2, Margin: 1, Votes: 2, Target: -1, Reason: proflow.ReasonReserve}}, // D = 2 on switch 1, not 8
		})
	})
}

// With Drain.Rate the reserve is served at Rate × C: the switch drains it
// only above that rate, refills it below, and it empties in
// (Depth − D)/(Load − Rate).
func TestGateDrainRate(t *testing.T) {
	toward1 := []float64{0, 1, 0, 0}
	vote, held, moved := drainVote, drainHeld, drainMoved
	cfg := GateConfig{Margin: 0.5, Votes: 2, Drain: DrainConfig{Depth: 10, Rate: 1.5, Horizon: 2 * time.Second}}
	t.Run("drained above the rate", func(t *testing.T) {
		runLoadGate(t, mustGate(t, cfg), []loadStep{
			{0, toward1, 3.5, 0, vote(1)},  // D starts at 0
			{0, toward1, 3.5, 1, held(2)},  // D = 2: (10 − 2)/2 = 4 s left (at rate 1: 8/2.5 = 3.2 s)
			{0, toward1, 3.5, 2, held(3)},  // D = 4: 3 s left
			{0, toward1, 3.5, 3, moved(4)}, // D = 6: 2 s left
		})
	})
	t.Run("a load between C and the rate refills", func(t *testing.T) {
		runLoadGate(t, mustGate(t, cfg), []loadStep{
			{0, toward1, 3.5, 0, vote(1)},
			{0, toward1, 3.5, 2, held(2)}, // D = 4: 3 s left
			{0, toward1, 1.2, 4, held(3)}, // D = 4 − 0.3 × 2 = 3.4; never empties at 1.2
			{0, toward1, 3.5, 5, held(4)}, // D = 5.4: 2.3 s left (without the refill, D = 6: 2 s, a move)
			{0, toward1, 3.5, 6, moved(5)},
		})
	})
	for _, c := range []struct {
		rate float64
		want string
	}{
		{-1, "drain rate -1, want a finite multiple of the bucket rate > 0 (0 reads as 1)"},
		{math.NaN(), "drain rate NaN"},
		{math.Inf(1), "drain rate +Inf"},
	} {
		if _, err := NewGate(GateConfig{Margin: 0.2, Votes: 2, Drain: DrainConfig{Depth: 50, Rate: c.rate, Horizon: time.Second}}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rate %v: error %v, want one containing %q", c.rate, err, c.want)
		}
	}
	g, err := ReadGateConfig(strings.NewReader(`{"votes": 20, "drain": {"depth": 49.6, "rate": 1.04, "horizon": 500000000}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (DrainConfig{Depth: 49.6, Rate: 1.04, Horizon: 500 * time.Millisecond}); g.Drain != want {
		t.Errorf("drain %+v, want %+v", g.Drain, want)
	}
}

// A flow in distress moves at once, whatever its switch's reserve.
func TestGateDrainDistress(t *testing.T) {
	cfg := GateConfig{Margin: 0.5, Votes: 20, Drain: DrainConfig{Depth: 50, Horizon: 2 * time.Second},
		Distress: DistressConfig{Fraction: 0.9, Consecutive: 2, Smoothing: 0.1}}
	g := mustGate(t, cfg)
	scores := []float64{0, 1, 0, 0}
	for i, phi := range []float64{10, 10, 1, 1} {
		d := proflow.Decision{Time: at(float64(i)), Current: 0, Scores: scores, Load: 2, Throughput: phi, Best: -1, Target: -1}
		g.Admit(&d)
		if want := i == 3; (d.Target == 1) != want || d.Err != nil {
			t.Fatalf("step %d (throughput %v): target %d, reason %s, err %v; want a move only at the second low sample", i, phi, d.Target, d.Reason, d.Err)
		}
	}
}

// A step the gate refuses for its input changes none of its state: the
// healthy level, the low streak and the votes stay as the last good step
// left them, whatever part of the input was bad.
func TestGateRefusedStepLearnsNothing(t *testing.T) {
	cfg := GateConfig{Margin: 0.5, Votes: 3, Reserve: true,
		Distress: DistressConfig{Fraction: 0.5, Consecutive: 1, Smoothing: 1, Forecast: true}}
	toward1 := []float64{0, 1, 0, 0}
	for _, bad := range []struct {
		name string
		d    proflow.Decision
		want string
	}{
		{"load", proflow.Decision{Throughput: 1000, Load: math.NaN()}, "current switch load NaN"},
		{"forecast", proflow.Decision{Throughput: 1000, Load: 0.5, Forecast: proflow.FlowForecast{OK: true, Throughput: math.NaN()}}, "forecast throughput NaN"},
		{"app-limited share", proflow.Decision{Throughput: 1000, Load: 0.5, AppLimited: math.NaN()}, "app-limited share NaN, want a share in [0, 1]"},
		{"app-limited share above 1", proflow.Decision{Throughput: 1000, Load: 0.5, AppLimited: 1.5}, "app-limited share 1.5"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			g := mustGate(t, cfg)
			step := func(i int, d proflow.Decision) proflow.Decision {
				d.Time, d.Current, d.Scores, d.Best, d.Target = at(float64(i)), 0, toward1, -1, -1
				g.Admit(&d)
				return d
			}
			if d := step(0, proflow.Decision{Throughput: 100, Load: 0.5}); d.Reason != proflow.ReasonVotes || d.Err != nil {
				t.Fatalf("first step: %s, %v", d.Reason, d.Err)
			}
			if d := step(1, bad.d); d.Reason != proflow.ReasonPolicy || d.Err == nil || !strings.Contains(d.Err.Error(), bad.want) {
				t.Fatalf("bad step: %s, %v; want a policy error containing %q", d.Reason, d.Err, bad.want)
			}
			// Healthy at 100, 60 is not low (at 1000 it would be, and
			// distress would move the flow at once).
			if d := step(2, proflow.Decision{Throughput: 60, Load: 0.5}); d.Reason != proflow.ReasonVotes || d.Target != -1 {
				t.Errorf("after the refused step, 60 B/s against a healthy 100: %s, target %d; want a vote, no move", d.Reason, d.Target)
			}
		})
	}
}

func TestGateDrainInput(t *testing.T) {
	for _, c := range []struct {
		cfg  DrainConfig
		want string
	}{
		{DrainConfig{Depth: -1, Horizon: time.Second}, "drain depth -1, want a finite number of seconds of the bucket rate > 0"},
		{DrainConfig{Depth: math.Inf(1), Horizon: time.Second}, "drain depth +Inf"},
		{DrainConfig{Depth: 50}, "drain horizon 0s, want > 0"},
	} {
		if _, err := NewGate(GateConfig{Margin: 0.2, Votes: 2, Drain: c.cfg}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("drain %+v: error %v, want one containing %q", c.cfg, err, c.want)
		}
	}
	g := mustGate(t, GateConfig{Margin: 0.2, Votes: 2, Drain: DrainConfig{Depth: 50, Horizon: time.Second}})
	d := proflow.Decision{Time: at(0), Current: 0, Scores: []float64{0, 1, 0, 0}, Load: math.NaN(), Best: -1, Target: -1}
	g.Admit(&d)
	if d.Reason != proflow.ReasonPolicy || d.Err == nil || !strings.Contains(d.Err.Error(), "current switch load NaN, want a finite ratio >= 0") || d.Target != -1 {
		t.Errorf("load NaN: reason %s, err %v, target %d; want a held placement naming the load", d.Reason, d.Err, d.Target)
	}
}

// With Waive, a bucket within the horizon of empty waives the votes: a
// second burst onto a switch the first left drained moves the flow before
// its votes are in.
func TestGateDrainWaive(t *testing.T) {
	toward1 := []float64{0, 1, 0, 0}
	quiet := []float64{1, 0, 0, 0}
	cfg := GateConfig{Margin: 0.5, Votes: 4, Drain: DrainConfig{Depth: 10, Horizon: 2 * time.Second, Waive: true}}
	runLoadGate(t, mustGate(t, cfg), []loadStep{
		{0, toward1, 3, 0, gateOut{Best: 1, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
		{0, toward1, 3, 1, gateOut{Best: 1, Margin: 1, Votes: 2, Target: -1, Reason: proflow.ReasonVotes}}, // D = 2
		{0, toward1, 3, 2, gateOut{Best: 1, Margin: 1, Votes: 3, Target: -1, Reason: proflow.ReasonVotes}}, // D = 4
		{0, quiet, 1, 3, gateOut{Best: 0, Target: -1, Reason: proflow.ReasonStay}},                         // the burst leaves; at C, D = 4 stays
		{0, quiet, 1, 30, gateOut{Best: 0, Target: -1, Reason: proflow.ReasonStay}},                        // the flow alone keeps it at C
		// The next burst: D = 6, (10 − 6)/2 = 2 s left, within the
		// horizon: the first vote moves the flow.
		{0, toward1, 3, 31, gateOut{Best: 1, Margin: 1, Votes: 1, Target: 1, Reason: proflow.ReasonRerouted}},
	})
}

// A gate file carries the drain settings; a drain without a horizon, or
// with a key the gate does not know, is refused by name.
func TestReadGateConfigDrain(t *testing.T) {
	g, err := ReadGateConfig(strings.NewReader(`{"votes": 20, "drain": {"depth": 53.3, "horizon": 2000000000, "waive": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (DrainConfig{Depth: 53.3, Horizon: 2 * time.Second, Waive: true}); g.Drain != want || g.Votes != 20 {
		t.Errorf("drain %+v, votes %d; want %+v and 20", g.Drain, g.Votes, want)
	}
	for _, c := range []struct{ json, want string }{
		{`{"drain": {"depth": 53.3}}`, "drain horizon 0s, want > 0"},
		{`{"drain": {"depth": 53.3, "horizon": 1000000000, "lead": 3}}`, `unknown field "lead"`},
	} {
		if _, err := ReadGateConfig(strings.NewReader(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.json, err, c.want)
		}
	}
}

// A step held on bad input restarts the votes but keeps the estimate of
// the switch's bucket; Reset (a new episode) forgets it.
func TestGateDrainKeepsEstimate(t *testing.T) {
	cfg := GateConfig{Margin: 0.5, Votes: 2, Drain: DrainConfig{Depth: 10, Horizon: 2 * time.Second}}
	g := mustGate(t, cfg)
	step := func(s float64, scores []float64) proflow.Decision {
		d := proflow.Decision{Time: at(s), Current: 0, Scores: scores, Load: 3, Best: -1, Target: -1}
		g.Admit(&d)
		return d
	}
	toward1 := []float64{0, 1, 0, 0}
	step(0, toward1)
	step(1, toward1) // D = 2
	if d := step(1.5, []float64{0, math.NaN(), 0, 0}); d.Reason != proflow.ReasonPolicy {
		t.Fatalf("a NaN score: reason %s, want %s", d.Reason, proflow.ReasonPolicy)
	}
	step(2, toward1) // D = 4: the bad step held before the estimate, which spans it
	if d := step(3, toward1); d.Reason != proflow.ReasonRerouted {
		t.Errorf("after the bad step: reason %s with %d votes, want %s (D = 6 of 10: 2 s left)", d.Reason, d.Votes, proflow.ReasonRerouted)
	}
	g.Reset()
	step(10, toward1)
	if d := step(11, toward1); d.Reason != proflow.ReasonReserve {
		t.Errorf("after Reset: reason %s, want %s (a full bucket: D = 2, 4 s left)", d.Reason, proflow.ReasonReserve)
	}
}

// With Drain beside Idle, a move the idle waiver admits is not held while
// the reserve lasts (with nothing in flight it costs the flow nothing),
// while one its votes admit on a busy sample still is.
func TestGateDrainIdle(t *testing.T) {
	cfg := GateConfig{Margin: 0.5, Votes: 1, Idle: true, Drain: DrainConfig{Depth: 50, Horizon: 2 * time.Second}}
	for _, tc := range []struct {
		name     string
		thr, app float64
		want     proflow.Reason
	}{
		{"busy: held while the reserve lasts", 1e6, 0, proflow.ReasonReserve},
		{"idle: moved", 0, 1, proflow.ReasonRerouted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := mustGate(t, cfg)
			d := proflow.Decision{Time: at(0), Current: 0, Scores: []float64{0, 1, 0, 0}, Load: 2,
				Throughput: tc.thr, AppLimited: tc.app, Relieves: []bool{false, true, true, true}, Best: -1, Target: -1}
			g.Admit(&d)
			if d.Err != nil || d.Reason != tc.want {
				t.Fatalf("reason %q, err %v; want %q", d.Reason, d.Err, tc.want)
			}
		})
	}
}
