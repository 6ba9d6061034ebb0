package policy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
)

// dropStep is one call of Score on a ThroughputDrop: the flow's throughput
// and the switches' samples.
type dropStep struct {
	time     float64
	current  int
	phi      float64
	switches []proflow.SwitchSample
	want     []float64
}

func runDrop(t *testing.T, p *ThroughputDrop, steps []dropStep) {
	t.Helper()
	for i, s := range steps {
		obs := &proflow.Observation{Time: at(s.time), Switches: s.switches, Flow: proflow.FlowSample{Throughput: s.phi}}
		scores := make([]float64, len(s.switches))
		for k := range scores {
			scores[k] = -7
		}
		if err := p.Score(scores, &proflow.Input{Time: at(s.time), Obs: obs, Current: s.current}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if diff := cmp.Diff(s.want, scores); diff != "" {
			t.Errorf("step %d (t=%vs, φ=%v, h=%v): scores (-want +got):\n%s", i, s.time, s.phi, p.Healthy(), diff)
		}
	}
}

func TestThroughputDrop(t *testing.T) {
	// Switch 1 overflows, switch 2 does not: 2 is the destination.
	fab := []proflow.SwitchSample{sw(9000, 2e7, 6), sw(5000, 1e7, 2), sw(0, 1e7, 4)}
	cfg := ThroughputDropConfig{Fraction: 0.8, Consecutive: 2, Cooldown: 10 * time.Second, Smoothing: 0.5}
	for _, tc := range []struct {
		name    string
		steps   []dropStep
		healthy float64 // h after the last step
	}{
		{"two low samples in a row fire", []dropStep{
			{0, 0, 100, fab, stay0},
			{0.5, 0, 79, fab, stay0},
			{1, 0, 10, fab, to2},
		}, 100},
		{"exactly the fraction is not low", []dropStep{
			{0, 0, 100, fab, stay0},
			{0.5, 0, 80, fab, stay0},
			{1, 0, 80, fab, stay0},
			{1.5, 0, 80, fab, stay0},
		}, 100 - 0.5*20 - 0.25*20 - 0.125*20}, // each sample at 80 is healthy and pulls h down
		{"a healthy sample restarts the count", []dropStep{
			{0, 0, 100, fab, stay0},
			{0.5, 0, 50, fab, stay0},
			{1, 0, 100, fab, stay0},
			{1.5, 0, 50, fab, stay0},
			{2, 0, 50, fab, to2},
		}, 100},
		{"the healthy level follows healthy samples", []dropStep{
			{0, 0, 100, fab, stay0},   // h = 100
			{0.5, 0, 200, fab, stay0}, // h = 150
			{1, 0, 200, fab, stay0},   // h = 175
			{1.5, 0, 130, fab, stay0}, // 130 < 140: low
			{2, 0, 130, fab, to2},
		}, 175},
		{"cooldown after a move: no fire and no learning", []dropStep{
			{0, 0, 100, fab, stay0},
			{0.5, 0, 10, fab, stay0},
			{1, 0, 10, fab, to2},
			{1.5, 2, 10, fab, []float64{0, 0, 1}}, // moved at 1 s; low on the new switch but cooling
			{2, 2, 10, fab, []float64{0, 0, 1}},
			{10.5, 2, 10, fab, []float64{0, 0, 1}},
			{11, 2, 10, fab, []float64{0, 1, 0}}, // cooldown over, still low: leave for 1 (5000 < 9000)
		}, 100}, // no learning from the low samples
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewThroughputDrop(cfg)
			if err != nil {
				t.Fatal(err)
			}
			runDrop(t, p, tc.steps)
			if h := p.Healthy(); h != tc.healthy {
				t.Errorf("healthy level %v at the end, want %v", h, tc.healthy)
			}
		})
	}
}

func TestThroughputDropDestinationTieBreaks(t *testing.T) {
	for _, tc := range []struct {
		name string
		sws  []proflow.SwitchSample
		want []float64
	}{
		{"lowest overflow", []proflow.SwitchSample{sw(9000, 0, 9), sw(10, 0, 1), sw(5, 0, 8)}, []float64{0, 0, 1}},
		{"then fewest flows", []proflow.SwitchSample{sw(9000, 0, 9), sw(0, 0, 3), sw(0, 0, 2)}, []float64{0, 0, 1}},
		{"then lowest transmit rate", []proflow.SwitchSample{sw(9000, 0, 9), sw(0, 5, 2), sw(0, 4, 2)}, []float64{0, 0, 1}},
		{"then lowest index", []proflow.SwitchSample{sw(9000, 0, 9), sw(0, 4, 2), sw(0, 4, 2)}, []float64{0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewThroughputDrop(ThroughputDropConfig{Fraction: 0.5, Consecutive: 1, Smoothing: 1})
			if err != nil {
				t.Fatal(err)
			}
			runDrop(t, p, []dropStep{{0, 0, 100, tc.sws, []float64{1, 0, 0}}, {0.5, 0, 1, tc.sws, tc.want}})
		})
	}
}

func TestThroughputDropReset(t *testing.T) {
	p, err := NewThroughputDrop(DefaultThroughputDropConfig())
	if err != nil {
		t.Fatal(err)
	}
	fab := []proflow.SwitchSample{sw(0, 0, 2), sw(0, 0, 2)}
	runDrop(t, p, []dropStep{{0, 0, 100, fab, []float64{1, 0}}, {0.5, 0, 10, fab, []float64{1, 0}}})
	p.Reset()
	if p.Healthy() != 0 {
		t.Fatalf("healthy %v after Reset, want 0", p.Healthy())
	}
	// The first sample after Reset sets h: 10 is healthy now, and one low
	// sample (the streak was forgotten) does not fire.
	runDrop(t, p, []dropStep{{1, 0, 10, fab, []float64{1, 0}}, {1.5, 0, 1, fab, []float64{1, 0}}})
}

func TestThroughputDropRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		cfg  ThroughputDropConfig
		want string
	}{
		{ThroughputDropConfig{Fraction: 1, Consecutive: 1, Smoothing: 0.1}, "fraction 1, want in (0, 1)"},
		{ThroughputDropConfig{Fraction: 0.5, Consecutive: 0, Smoothing: 0.1}, "consecutive 0 samples"},
		{ThroughputDropConfig{Fraction: 0.5, Consecutive: 1, Cooldown: -1, Smoothing: 0.1}, "cooldown -1ns"},
		{ThroughputDropConfig{Fraction: 0.5, Consecutive: 1, Smoothing: 0}, "smoothing 0, want in (0, 1]"},
	} {
		if _, err := NewThroughputDrop(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewThroughputDrop(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	p, err := NewThroughputDrop(DefaultThroughputDropConfig())
	if err != nil {
		t.Fatal(err)
	}
	obs := &proflow.Observation{Switches: []proflow.SwitchSample{{}, {}}, Flow: proflow.FlowSample{Throughput: -1}}
	if err := p.Score(make([]float64, 2), &proflow.Input{Obs: obs}); err == nil || !strings.Contains(err.Error(), "flow throughput -1") {
		t.Errorf("Score with φ = -1: %v, want an error naming the throughput", err)
	}
}

func TestThroughputDropConfigJSON(t *testing.T) {
	want := ThroughputDropConfig{Fraction: 0.85, Consecutive: 3, Cooldown: 7 * time.Second, Smoothing: 0.2}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"cooldown":"7s"`) {
		t.Errorf("marshalled %s, want the cooldown as a duration string", data)
	}
	got, err := ReadThroughputDropConfig(bytes.NewReader(data))
	if err != nil || got != want {
		t.Errorf("round trip: %+v, %v; want %+v", got, err, want)
	}
	// Fields left out keep the defaults; nanoseconds are accepted.
	got, err = ReadThroughputDropConfig(strings.NewReader(`{"fraction": 0.7, "cooldown": 3000000000}`))
	def := DefaultThroughputDropConfig()
	if err != nil || got.Fraction != 0.7 || got.Cooldown != 3*time.Second || got.Consecutive != def.Consecutive || got.Smoothing != def.Smoothing {
		t.Errorf("partial: %+v, %v", got, err)
	}
	for in, msg := range map[string]string{
		`{"fraction": 2}`:      "fraction 2, want in (0, 1)",
		`{"fractoin": 0.5}`:    `unknown field "fractoin"`,
		`{"cooldown": "soon"}`: `cooldown "soon", want a Go duration`,
		`{"fraction": 0.5} {}`: "trailing data",
		`{"fraction": 0.5}}`:   "trailing data",
	} {
		if _, err := ReadThroughputDropConfig(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want an error containing %q", in, err, msg)
		}
	}
}

// A move made before the flow recovered from the previous one doubles the
// cooldown; a recovery restores it.
func TestThroughputDropBackoff(t *testing.T) {
	p, err := NewThroughputDrop(ThroughputDropConfig{Fraction: 0.8, Consecutive: 1, Cooldown: 2 * time.Second, Smoothing: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	fab := []proflow.SwitchSample{sw(9, 0, 9), sw(0, 0, 1), sw(5, 0, 1)}
	runDrop(t, p, []dropStep{
		{0, 0, 100, fab, []float64{1, 0, 0}},
		{0.5, 0, 10, fab, []float64{0, 1, 0}}, // low: move to 1
		{1, 1, 10, fab, []float64{0, 1, 0}},   // moved at 0.5; cooling 2 s
		{2.5, 1, 10, fab, []float64{0, 0, 1}}, // 2 s after: still low, never recovered: move to 2
		{3, 2, 10, fab, []float64{0, 0, 1}},
		{4.5, 2, 10, fab, []float64{0, 0, 1}}, // 2 s after the second move: the cooldown is 4 s now
		{6.5, 2, 10, fab, []float64{0, 1, 0}}, // 4 s after: move again (cooldown 8 s next)
	})
	if got := p.Cooldown(); got != 4*time.Second {
		t.Fatalf("cooldown %v after the third move, want 4s until it is counted at the next step", got)
	}
	runDrop(t, p, []dropStep{
		{7, 1, 10, fab, []float64{0, 1, 0}},
		{14, 1, 95, fab, []float64{0, 1, 0}},   // recovered
		{14.5, 1, 10, fab, []float64{0, 0, 1}}, // 8 s since the third move (at 6.5): fire
		{15, 2, 10, fab, []float64{0, 0, 1}},   // a move after a recovery
	})
	if got := p.Cooldown(); got != 2*time.Second {
		t.Errorf("cooldown %v after a move that followed a recovery, want 2s", got)
	}
}
