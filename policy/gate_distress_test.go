package policy

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// distressStep is one Admit of the distress gate: the flow's throughput,
// whether the policy prefers switch 1 (by 1.0, above δ) and what the gate
// must do.
type distressStep struct {
	phi    float64 // bytes/s
	prefer bool    // scores {0, 1}: switch 1 beats the current switch 0
	last   float64 // LastReroute, seconds after t0; < 0 for none
	target int
	reason proflow.Reason
}

func runDistress(t *testing.T, g *Gate, steps []distressStep) {
	t.Helper()
	for i, s := range steps {
		scores := []float64{0, 0}
		if s.prefer {
			scores[1] = 1
		}
		d := proflow.Decision{Time: at(0.5 * float64(i)), Current: 0, Scores: scores, Throughput: s.phi, Best: -1, Target: -1}
		if s.last >= 0 {
			d.LastReroute = at(s.last)
		}
		g.Admit(&d)
		if d.Err != nil {
			t.Fatalf("step %d: unexpected error %v", i, d.Err)
		}
		if d.Target != s.target || d.Reason != s.reason {
			t.Errorf("step %d (φ %g, prefer %v): target %d reason %s, want %d %s", i, s.phi, s.prefer, d.Target, d.Reason, s.target, s.reason)
		}
	}
}

// The distress gate waives the vote count once the flow's throughput has
// been low for the debounce, and only for a candidate that clears δ.
func TestGateDistress(t *testing.T) {
	cfg := GateConfig{Margin: 0.2, Votes: 16, Cooldown: 15 * time.Second,
		Distress: DistressConfig{Fraction: 0.9, Consecutive: 2, Smoothing: 0.1}}
	const healthy, hurt = 20e6, 4e6
	votes, moved, stay := proflow.ReasonVotes, proflow.ReasonRerouted, proflow.ReasonStay

	t.Run("moves on the second low sample", func(t *testing.T) {
		g, _ := NewGate(cfg)
		runDistress(t, g, []distressStep{
			{healthy, true, -1, -1, votes},
			{healthy, true, -1, -1, votes},
			{hurt, true, -1, -1, votes}, // one low sample is not distress
			{hurt, true, -1, 1, moved},
		})
	})
	t.Run("a healthy flow waits for its votes", func(t *testing.T) {
		g, _ := NewGate(cfg)
		var steps []distressStep
		for range 15 {
			steps = append(steps, distressStep{healthy, true, -1, -1, votes})
		}
		runDistress(t, g, append(steps, distressStep{healthy, true, -1, 1, moved}))
	})
	t.Run("a flow whose demand fell stays when nothing is better", func(t *testing.T) {
		g, _ := NewGate(cfg)
		runDistress(t, g, []distressStep{
			{healthy, false, -1, -1, stay},
			{hurt, false, -1, -1, stay},
			{hurt, false, -1, -1, stay},
			{hurt, false, -1, -1, stay},
		})
	})
	t.Run("an application-limited flow is not in distress", func(t *testing.T) {
		g, _ := NewGate(cfg)
		for i, app := range []float64{0, 0.9, 0.6, 0.5, 0.4, 0.4} {
			d := proflow.Decision{Time: at(0.5 * float64(i)), Current: 0, Scores: []float64{0, 1}, Throughput: healthy, AppLimited: app}
			if i > 0 {
				d.Throughput = hurt
			}
			g.Admit(&d)
			want := votes
			if i == 5 { // two low samples the network set
				want = moved
			}
			if d.Reason != want {
				t.Errorf("sample %d (φ %g, app-limited %v): reason %s, want %s", i, d.Throughput, app, d.Reason, want)
			}
		}
	})
	t.Run("low samples in a cooldown do not count", func(t *testing.T) {
		g, _ := NewGate(cfg)
		runDistress(t, g, []distressStep{
			{healthy, false, -1, -1, stay},
			{hurt, true, 0, -1, votes}, // moved at t0: cooling down until 15 s
			{hurt, true, 0, -1, votes},
			{hurt, true, 0, -1, votes},
		})
		// After the cooldown two fresh low samples are needed.
		for i, want := range []proflow.Reason{votes, moved} {
			d := proflow.Decision{Time: at(20 + 0.5*float64(i)), Current: 0, Scores: []float64{0, 1}, Throughput: hurt, LastReroute: at(0)}
			g.Admit(&d)
			if d.Reason != want {
				t.Errorf("after the cooldown, sample %d: reason %s, want %s", i, d.Reason, want)
			}
		}
	})
	t.Run("the healthy level follows a slow decline", func(t *testing.T) {
		g, _ := NewGate(cfg)
		// Each sample 0.5% under the last is never low against the
		// moving average (α 0.1 lags it by about 5%); the level comes
		// down with the flow.
		phi := healthy
		for i := range 150 {
			d := proflow.Decision{Time: at(0.5 * float64(i)), Current: 0, Scores: []float64{0, 1}, Throughput: phi}
			g.Admit(&d)
			if d.Target >= 0 && d.Votes < cfg.Votes {
				t.Fatalf("sample %d (φ %g, level %g): moved on distress during a slow decline", i, phi, g.healthy)
			}
			phi *= 0.995
		}
		if g.healthy > 0.55*healthy {
			t.Errorf("healthy level %g after the flow fell to %g, want it to follow (below %g)", g.healthy, phi, 0.55*healthy)
		}
	})
	t.Run("reset forgets the healthy level", func(t *testing.T) {
		g, _ := NewGate(cfg)
		runDistress(t, g, []distressStep{{healthy, true, -1, -1, votes}, {hurt, true, -1, -1, votes}})
		g.Reset()
		// hurt is now the first sample: the healthy level, not a drop.
		runDistress(t, g, []distressStep{{hurt, true, -1, -1, votes}, {hurt, true, -1, -1, votes}, {hurt, true, -1, -1, votes}})
	})
	t.Run("bad throughput holds", func(t *testing.T) {
		for _, phi := range []float64{-1, math.NaN(), math.Inf(1)} {
			g, _ := NewGate(cfg)
			d := proflow.Decision{Time: t0, Current: 0, Scores: []float64{0, 1}, Throughput: phi}
			g.Admit(&d)
			if d.Err == nil || d.Reason != proflow.ReasonPolicy || d.Target != -1 || !strings.Contains(d.Err.Error(), "throughput") {
				t.Errorf("throughput %v: reason %s target %d err %v, want a held placement naming the throughput", phi, d.Reason, d.Target, d.Err)
			}
		}
	})
	t.Run("bad input keeps the healthy level", func(t *testing.T) {
		g, _ := NewGate(cfg)
		runDistress(t, g, []distressStep{{healthy, true, -1, -1, votes}})
		d := proflow.Decision{Time: at(0.5), Current: 0, Scores: []float64{0, math.NaN()}, Throughput: hurt}
		g.Admit(&d)
		if d.Err == nil || d.Reason != proflow.ReasonPolicy {
			t.Fatalf("NaN score: reason %s err %v, want a held placement", d.Reason, d.Err)
		}
		for i, want := range []proflow.Reason{votes, moved} { // hurt is still low against 20e6
			d := proflow.Decision{Time: at(1 + 0.5*float64(i)), Current: 0, Scores: []float64{0, 1}, Throughput: hurt}
			g.Admit(&d)
			if d.Reason != want {
				t.Errorf("after the bad step, sample %d: reason %s, want %s", i, d.Reason, want)
			}
		}
	})
	t.Run("off by default", func(t *testing.T) {
		g, _ := NewGate(GateConfig{Margin: 0.2, Votes: 16, Cooldown: 15 * time.Second})
		runDistress(t, g, []distressStep{
			{healthy, true, -1, -1, votes},
			{hurt, true, -1, -1, votes},
			{hurt, true, -1, -1, votes},
			{math.NaN(), true, -1, -1, votes}, // not read when off
		})
	})
}

func TestDistressConfig(t *testing.T) {
	for _, tc := range []struct {
		c    DistressConfig
		want string
	}{
		{DistressConfig{Fraction: 1, Consecutive: 2, Smoothing: 0.1}, "distress fraction 1"},
		{DistressConfig{Fraction: 0.9, Consecutive: 0, Smoothing: 0.1}, "distress consecutive 0"},
		{DistressConfig{Fraction: 0.9, Consecutive: 2, Smoothing: 0}, "distress smoothing 0"},
		{DistressConfig{Consecutive: 2}, "distress fraction 0"},
	} {
		err := GateConfig{Margin: 0.2, Votes: 3, Distress: tc.c}.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", tc.c, err, tc.want)
		}
	}
	if got, want := DistressFrom(DefaultThroughputDropConfig()), (DistressConfig{Fraction: 0.9, Consecutive: 2, Smoothing: 0.1}); got != want {
		t.Errorf("DistressFrom(default) = %+v, want %+v", got, want)
	}
	g, err := ReadGateConfig(strings.NewReader(`{"votes": 16, "distress": {"fraction": 0.9, "consecutive": 2, "smoothing": 0.1}}`))
	if err != nil || g.Distress != (DistressConfig{Fraction: 0.9, Consecutive: 2, Smoothing: 0.1}) || g.Votes != 16 {
		t.Errorf("ReadGateConfig with distress = %+v, %v", g, err)
	}
	b, err := json.Marshal(DefaultGateConfig())
	if err != nil || strings.Contains(string(b), "distress") {
		t.Errorf("DefaultGateConfig as JSON = %s, %v, want no distress field", b, err)
	}
	b, _ = json.Marshal(g)
	if back, err := ReadGateConfig(strings.NewReader(string(b))); err != nil || back != g {
		t.Errorf("round trip of %s = %+v, %v, want %+v", b, back, err, g)
	}
	if _, err := ReadGateConfig(strings.NewReader(`{"distress": {"fraction": 0.9, "consecutive": 2, "smoothing": 0.1, "debounce": 3}}`)); err == nil || !strings.Contains(err.Error(), "debounce") {
		t.Errorf("ReadGateConfig with an unknown distress field = %v, want an error naming it", err)
	}
}
