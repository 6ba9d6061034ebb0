package policy

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// at returns t0 plus s seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// gateStep is one call of Admit: the inputs and the fields it must fill.
type gateStep struct {
	current int
	scores  []float64
	time    float64 // seconds after t0
	last    float64 // LastReroute, seconds after t0; < 0 for none
	want    gateOut
}

type gateOut struct {
	Best     int
	Margin   float64
	Votes    int
	Cooldown time.Duration
	Target   int
	Reason   proflow.Reason
}

func runGate(t *testing.T, g *Gate, steps []gateStep) {
	t.Helper()
	for i, s := range steps {
		d := proflow.Decision{Time: at(s.time), Current: s.current, Scores: s.scores, Best: -1, Target: -1}
		if s.last >= 0 {
			d.LastReroute = at(s.last)
		}
		g.Admit(&d)
		if d.Err != nil {
			t.Errorf("step %d: unexpected error %v", i, d.Err)
		}
		got := gateOut{d.Best, d.Margin, d.Votes, d.Cooldown, d.Target, d.Reason}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("step %d (scores %v, current %d): decision (-want +got):\n%s", i, s.scores, s.current, diff)
		}
		if d.Target == d.Current {
			t.Errorf("step %d: gate admitted a reroute to the current switch %d", i, d.Current)
		}
	}
}

func TestGate(t *testing.T) {
	const none = -1
	stay := func(best int) gateOut { return gateOut{Best: best, Target: -1, Reason: proflow.ReasonStay} }
	for _, tc := range []struct {
		name  string
		cfg   GateConfig
		steps []gateStep
	}{
		{"current best stays", GateConfig{Margin: 0.5, Votes: 1}, []gateStep{
			{0, []float64{3, 1, 2, 0}, 0, none, stay(0)},
		}},
		{"current among the maxima stays", GateConfig{Margin: 0, Votes: 1}, []gateStep{
			{2, []float64{5, 1, 5, 5}, 0, none, stay(2)},
		}},
		{"all equal stays", GateConfig{Margin: 0, Votes: 1}, []gateStep{
			{1, []float64{0, 0, 0, 0}, 0, none, stay(1)},
		}},
		{"tie between two others goes to the lowest index", GateConfig{Margin: 0.5, Votes: 1}, []gateStep{
			{0, []float64{1, 2, 4, 4}, 0, none, gateOut{Best: 2, Margin: 3, Votes: 1, Target: 2, Reason: proflow.ReasonRerouted}},
			{3, []float64{4, 2, 1, 1}, 1, none, gateOut{Best: 0, Margin: 3, Votes: 1, Target: 0, Reason: proflow.ReasonRerouted}},
			{0, []float64{1, 4, 2, 4}, 2, none, gateOut{Best: 1, Margin: 3, Votes: 1, Target: 1, Reason: proflow.ReasonRerouted}},
		}},
		{"margin exactly delta is not admitted", GateConfig{Margin: 0.5, Votes: 1}, []gateStep{
			{0, []float64{1, 1.5, 0, 0}, 0, none, gateOut{Best: 1, Margin: 0.5, Target: -1, Reason: proflow.ReasonMargin}},
		}},
		{"margin just above delta is admitted", GateConfig{Margin: 0.5, Votes: 1}, []gateStep{
			{0, []float64{1, math.Nextafter(1.5, 2), 0, 0}, 0, none,
				gateOut{Best: 1, Margin: math.Nextafter(1.5, 2) - 1, Votes: 1, Target: 1, Reason: proflow.ReasonRerouted}},
		}},
		{"W=1 admits at once", GateConfig{Margin: 0, Votes: 1}, []gateStep{
			{3, []float64{0, 0.25, 0, 0}, 0, none, gateOut{Best: 1, Margin: 0.25, Votes: 1, Target: 1, Reason: proflow.ReasonRerouted}},
		}},
		{"admitted after W votes", GateConfig{Margin: 0.1, Votes: 3}, []gateStep{
			{0, []float64{1, 2, 0, 0}, 0, none, gateOut{Best: 1, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{1, 2, 0, 0}, 0.5, none, gateOut{Best: 1, Margin: 1, Votes: 2, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{1, 2, 0, 0}, 1, none, gateOut{Best: 1, Margin: 1, Votes: 3, Target: 1, Reason: proflow.ReasonRerouted}},
		}},
		{"a different candidate restarts the streak at 1", GateConfig{Margin: 0.1, Votes: 3}, []gateStep{
			{0, []float64{1, 2, 0, 0}, 0, none, gateOut{Best: 1, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{1, 2, 0, 0}, 0.5, none, gateOut{Best: 1, Margin: 1, Votes: 2, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{1, 2, 3, 0}, 1, none, gateOut{Best: 2, Margin: 2, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{1, 2, 3, 0}, 1.5, none, gateOut{Best: 2, Margin: 2, Votes: 2, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{1, 2, 3, 0}, 2, none, gateOut{Best: 2, Margin: 2, Votes: 3, Target: 2, Reason: proflow.ReasonRerouted}},
		}},
		{"a step without a candidate resets the streak", GateConfig{Margin: 0.5, Votes: 2}, []gateStep{
			{0, []float64{1, 2, 0, 0}, 0, none, gateOut{Best: 1, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{1, 1.25, 0, 0}, 0.5, none, gateOut{Best: 1, Margin: 0.25, Target: -1, Reason: proflow.ReasonMargin}},
			{0, []float64{1, 2, 0, 0}, 1, none, gateOut{Best: 1, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{3, 2, 0, 0}, 1.5, none, stay(0)},
			{0, []float64{1, 2, 0, 0}, 2, none, gateOut{Best: 1, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{1, 2, 0, 0}, 2.5, none, gateOut{Best: 1, Margin: 1, Votes: 2, Target: 1, Reason: proflow.ReasonRerouted}},
		}},
		{"a change of the current switch resets the streak", GateConfig{Margin: 0.5, Votes: 2}, []gateStep{
			{0, []float64{1, 0, 2, 0}, 0, none, gateOut{Best: 2, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
			{1, []float64{1, 0, 2, 0}, 0.5, none, gateOut{Best: 2, Margin: 2, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
		}},
		{"cooldown: admitted exactly at expiry, not before", GateConfig{Margin: 0.1, Votes: 1, Cooldown: 10 * time.Second}, []gateStep{
			{1, []float64{0, 1, 2, 0}, 9.5, 0, gateOut{Best: 2, Margin: 1, Votes: 1, Cooldown: 500 * time.Millisecond, Target: -1, Reason: proflow.ReasonCooldown}},
			{1, []float64{0, 1, 2, 0}, 10, 0, gateOut{Best: 2, Margin: 1, Votes: 2, Target: 2, Reason: proflow.ReasonRerouted}},
		}},
		{"votes accumulate during the cooldown", GateConfig{Margin: 0.1, Votes: 3, Cooldown: 10 * time.Second}, []gateStep{
			{1, []float64{0, 1, 2, 0}, 2, 1, gateOut{Best: 2, Margin: 1, Votes: 1, Cooldown: 9 * time.Second, Target: -1, Reason: proflow.ReasonVotes}},
			{1, []float64{0, 1, 2, 0}, 6, 1, gateOut{Best: 2, Margin: 1, Votes: 2, Cooldown: 5 * time.Second, Target: -1, Reason: proflow.ReasonVotes}},
			{1, []float64{0, 1, 2, 0}, 10.5, 1, gateOut{Best: 2, Margin: 1, Votes: 3, Cooldown: 500 * time.Millisecond, Target: -1, Reason: proflow.ReasonCooldown}},
			{1, []float64{0, 1, 2, 0}, 11, 1, gateOut{Best: 2, Margin: 1, Votes: 4, Target: 2, Reason: proflow.ReasonRerouted}},
		}},
		{"stay reports the cooldown left", GateConfig{Margin: 0.1, Votes: 1, Cooldown: 10 * time.Second}, []gateStep{
			{1, []float64{0, 1, 0, 0}, 4, 1, gateOut{Best: 1, Cooldown: 7 * time.Second, Target: -1, Reason: proflow.ReasonStay}},
		}},
		{"a retry after a failed move needs no new votes", GateConfig{Margin: 0.1, Votes: 2}, []gateStep{
			{0, []float64{0, 1}, 0, none, gateOut{Best: 1, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}},
			{0, []float64{0, 1}, 0.5, none, gateOut{Best: 1, Margin: 1, Votes: 2, Target: 1, Reason: proflow.ReasonRerouted}},
			{0, []float64{0, 1}, 1, none, gateOut{Best: 1, Margin: 1, Votes: 3, Target: 1, Reason: proflow.ReasonRerouted}},
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
}

func TestGateReset(t *testing.T) {
	g, err := NewGate(GateConfig{Margin: 0.1, Votes: 2})
	if err != nil {
		t.Fatal(err)
	}
	votes := gateOut{Best: 1, Margin: 1, Votes: 1, Target: -1, Reason: proflow.ReasonVotes}
	runGate(t, g, []gateStep{{0, []float64{0, 1}, 0, -1, votes}})
	g.Reset()
	runGate(t, g, []gateStep{{0, []float64{0, 1}, 0.5, -1, votes}})
}

func TestImmediate(t *testing.T) {
	g := Immediate()
	if diff := cmp.Diff(GateConfig{Margin: 0, Votes: 1}, g.Config()); diff != "" {
		t.Errorf("Immediate config (-want +got):\n%s", diff)
	}
	runGate(t, g, []gateStep{
		{0, []float64{1, 0}, 0, -1, gateOut{Best: 0, Target: -1, Reason: proflow.ReasonStay}},
		{0, []float64{0, 1}, 0.5, 0.4, gateOut{Best: 1, Margin: 1, Votes: 1, Target: 1, Reason: proflow.ReasonRerouted}},
	})
}

func TestGateBadInput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		current int
		scores  []float64
		want    string
		is      error
	}{
		{"NaN score", 0, []float64{0, math.NaN()}, "score NaN for switch 1", proflow.ErrBadScores},
		{"infinite score", 1, []float64{math.Inf(1), 0}, "score +Inf for switch 0", proflow.ErrBadScores},
		{"current out of range", 2, []float64{0, 1}, "current switch 2, but there are 2 scores", nil},
		{"no scores", 0, nil, "current switch 0, but there are 0 scores", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := proflow.Decision{Time: t0, Current: tc.current, Scores: tc.scores}
			Immediate().Admit(&d)
			if d.Target != -1 || d.Reason != proflow.ReasonPolicy {
				t.Errorf("target %d reason %q, want -1 and %q", d.Target, d.Reason, proflow.ReasonPolicy)
			}
			if d.Err == nil || !strings.Contains(d.Err.Error(), tc.want) {
				t.Errorf("Err = %v, want one containing %q", d.Err, tc.want)
			}
			if tc.is != nil && !errors.Is(d.Err, tc.is) {
				t.Errorf("Err = %v, want it to match %v", d.Err, tc.is)
			}
		})
	}
}

func TestGateConfigValidate(t *testing.T) {
	if err := DefaultGateConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
	_, err := NewGate(GateConfig{Margin: math.NaN(), Votes: 0, Cooldown: -time.Second})
	for _, want := range []string{"margin NaN", "votes 0, want >= 1", "cooldown -1s, want >= 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewGate error %v, want it to contain %q", err, want)
		}
	}
}

func TestGateDoesNotAllocate(t *testing.T) {
	g, err := NewGate(DefaultGateConfig())
	if err != nil {
		t.Fatal(err)
	}
	d := proflow.Decision{Time: t0, Current: 0, Scores: []float64{0, 1, 2, 3}}
	if n := testing.AllocsPerRun(100, func() { g.Admit(&d) }); n != 0 {
		t.Errorf("Admit allocates %v times per call, want 0", n)
	}
}

// With Pareto the gate passes over the destinations Decision.Dominated
// marks for k_best, while a near-tie keeps a candidate already counted;
// without it, or without Dominated, it is the paper's gate.
func TestGatePareto(t *testing.T) {
	cfg := GateConfig{Margin: 0.2, Votes: 2, Tolerance: 3, Pareto: true}
	admit := func(g *Gate, scores []float64, dominated []bool) proflow.Decision {
		d := proflow.Decision{Time: t0, Current: 0, Scores: scores, Dominated: dominated, Best: -1, Target: -1}
		g.Admit(&d)
		if d.Err != nil {
			t.Fatalf("scores %v, dominated %v: %v", scores, dominated, d.Err)
		}
		return d
	}
	g, err := NewGate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dom := []bool{false, true, false, false}
	if d := admit(g, []float64{0, 5, 4, 1}, dom); d.Best != 2 || d.Votes != 1 {
		t.Errorf("switch 1 dominated: best %d with %d votes, want the undominated maximum 2 with 1", d.Best, d.Votes)
	}
	if d := admit(g, []float64{0, 5, 4, 1}, dom); d.Target != 2 || d.Reason != proflow.ReasonRerouted {
		t.Errorf("second vote: target %d (%s), want 2 admitted", d.Target, d.Reason)
	}
	// A dominated switch starts no streak, but a near-tie keeps a
	// candidate already counted: two switches that read alike swap
	// places by noise.
	g, _ = NewGate(cfg)
	admit(g, []float64{0, 5, 4, 1}, []bool{false, false, false, false}) // candidate 1
	if d := admit(g, []float64{0, 5, 4, 1}, dom); d.Best != 1 || d.Votes != 2 {
		t.Errorf("candidate 1 dominated now: best %d with %d votes, want 1 kept with 2", d.Best, d.Votes)
	}
	g, _ = NewGate(cfg)
	admit(g, []float64{0, 5, 4, 1}, []bool{false, false, false, false}) // candidate 1
	if d := admit(g, []float64{0, 5, 9, 1}, dom); d.Best != 2 || d.Votes != 1 {
		t.Errorf("candidate 1 dominated and no longer within the tolerance: best %d with %d votes, want 2 with 1", d.Best, d.Votes)
	}
	// Every destination dominated but one below the margin: stay.
	g, _ = NewGate(cfg)
	if d := admit(g, []float64{1, 5, 1.1, 5}, []bool{false, true, false, true}); d.Best != 2 || d.Reason != proflow.ReasonMargin {
		t.Errorf("best %d (%s), want 2 held by the margin", d.Best, d.Reason)
	}
	// Off, or no Dominated: the maximum, as the paper's gate.
	cfg.Pareto = false
	g, _ = NewGate(cfg)
	if d := admit(g, []float64{0, 5, 4, 1}, dom); d.Best != 1 {
		t.Errorf("Pareto off: best %d, want 1", d.Best)
	}
	cfg.Pareto = true
	g, _ = NewGate(cfg)
	if d := admit(g, []float64{0, 5, 4, 1}, nil); d.Best != 1 {
		t.Errorf("no Dominated: best %d, want 1", d.Best)
	}
	d := proflow.Decision{Time: t0, Current: 0, Scores: []float64{0, 5, 4, 1}, Dominated: dom}
	if n := testing.AllocsPerRun(100, func() { g.Admit(&d) }); n != 0 {
		t.Errorf("Admit with Pareto allocates %v times per call, want 0", n)
	}
}
