package policy

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
)

// latStep is one call of Score on a LatencyThreshold: the flow's latency
// sample and the scores wanted.
type latStep struct {
	time    float64
	current int
	flow    proflow.FlowSample
	want    []float64
}

// rtt and done are samples with only an RTT p99, and with a completion
// p99 beside it, seconds.
func rtt(v float64) proflow.FlowSample      { return proflow.FlowSample{RTTP99: v, SmoothedRTT: v} }
func done(c, r float64) proflow.FlowSample  { return proflow.FlowSample{CompletionP99: c, RTTP99: r} }
func srttOnly(v float64) proflow.FlowSample { return proflow.FlowSample{SmoothedRTT: v} }

func runLatency(t *testing.T, p *LatencyThreshold, fab []proflow.SwitchSample, steps []latStep) {
	t.Helper()
	for i, s := range steps {
		obs := &proflow.Observation{Time: at(s.time), Switches: fab, Flow: s.flow}
		scores := make([]float64, len(fab))
		for k := range scores {
			scores[k] = -7
		}
		if err := p.Score(scores, &proflow.Input{Time: at(s.time), Obs: obs, Current: s.current}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if diff := cmp.Diff(s.want, scores); diff != "" {
			t.Errorf("step %d (t=%vs, flow %+v): scores (-want +got):\n%s", i, s.time, s.flow, diff)
		}
	}
}

func TestLatencyThreshold(t *testing.T) {
	// Switch 1 overflows, switch 2 does not: 2 is the destination.
	fab := []proflow.SwitchSample{sw(9000, 2e7, 6), sw(5000, 1e7, 2), sw(0, 1e7, 4)}
	cfg := LatencyThresholdConfig{Ratio: 1.5, CompletionRatio: 2, Consecutive: 3, Cooldown: 10 * time.Second}
	for _, tc := range []struct {
		name  string
		steps []latStep
	}{
		{"three high samples in a row fire, two do not", []latStep{
			{0, 0, rtt(0.05), stay0},
			{0.5, 0, rtt(0.08), stay0},
			{1, 0, rtt(0.08), stay0},
			{1.5, 0, rtt(0.08), to2},
		}},
		{"exactly the ratio is not high", []latStep{
			{0, 0, rtt(0.04), stay0},
			{0.5, 0, rtt(0.06), stay0},
			{1, 0, rtt(0.06), stay0},
			{1.5, 0, rtt(0.06), stay0},
		}},
		{"zero latency never fires and ends the run", []latStep{
			{0, 0, rtt(0.05), stay0},
			{0.5, 0, rtt(0.5), stay0},
			{1, 0, rtt(0.5), stay0},
			{1.5, 0, proflow.FlowSample{}, stay0},
			{2, 0, proflow.FlowSample{}, stay0},
			{2.5, 0, proflow.FlowSample{}, stay0},
			{3, 0, rtt(0.5), stay0},
			{3.5, 0, rtt(0.5), stay0},
			{4, 0, rtt(0.5), to2},
		}},
		{"the healthy level is the lowest latency seen", []latStep{
			{0, 0, rtt(0.1), stay0},
			{0.5, 0, rtt(0.04), stay0}, // h = 0.04: 0.1 is high now
			{1, 0, rtt(0.1), stay0},
			{1.5, 0, rtt(0.1), stay0},
			{2, 0, rtt(0.1), to2},
		}},
		{"completion times have their own level and ratio", []latStep{
			{0, 0, done(0.02, 0.05), stay0},
			{0.5, 0, done(0.039, 0.05), stay0}, // below 2 × 0.02
			{1, 0, done(0.039, 0.05), stay0},
			{1.5, 0, done(0.039, 0.05), stay0},
			{2, 0, done(0.05, 0.05), stay0}, // high: 0.05 > 0.04
			{2.5, 0, done(0.05, 0.05), stay0},
			{3, 0, done(0.05, 0.05), to2},
		}},
		{"a round trip is not compared with a completion level", []latStep{
			{0, 0, done(0.02, 0.05), stay0},
			{0.5, 0, rtt(0.05), stay0}, // no completion in the interval: RTT, h 0.05
			{1, 0, rtt(0.06), stay0},
			{1.5, 0, rtt(0.06), stay0},
			{2, 0, rtt(0.06), stay0},
		}},
		{"the smoothed RTT when there is no p99", []latStep{
			{0, 0, srttOnly(0.05), stay0},
			{0.5, 0, srttOnly(0.1), stay0},
			{1, 0, srttOnly(0.1), stay0},
			{1.5, 0, srttOnly(0.1), to2},
		}},
		{"cooldown after a move", []latStep{
			{0, 0, rtt(0.05), stay0},
			{0.5, 0, rtt(0.1), stay0},
			{1, 0, rtt(0.1), stay0},
			{1.5, 0, rtt(0.1), to2},
			{2, 2, rtt(0.1), to2}, // moved at 1.5 s; high on the new switch but cooling
			{2.5, 2, rtt(0.1), to2},
			{3, 2, rtt(0.1), to2},
			{11, 2, rtt(0.1), to2},
			{11.5, 2, rtt(0.1), []float64{0, 1, 0}}, // cooldown over, still high: leave for 1 (5000 < 9000)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewLatencyThreshold(cfg)
			if err != nil {
				t.Fatal(err)
			}
			runLatency(t, p, fab, tc.steps)
		})
	}
}

func TestLatencyThresholdHealthy(t *testing.T) {
	p, err := NewLatencyThreshold(DefaultLatencyThresholdConfig())
	if err != nil {
		t.Fatal(err)
	}
	fab := []proflow.SwitchSample{sw(0, 0, 1), sw(0, 0, 1)}
	runLatency(t, p, fab, []latStep{
		{0, 0, done(0.03, 0.05), []float64{1, 0}},
		{0.5, 0, done(0.02, 0.06), []float64{1, 0}},
		{1, 0, srttOnly(0.04), []float64{1, 0}},
	})
	for s, want := range map[LatencySignal]float64{NoLatency: 0, CompletionLatency: 0.02, RTTLatency: 0.05, SmoothedRTTLatency: 0.04, 99: 0} {
		if got := p.Healthy(s); got != want {
			t.Errorf("Healthy(%v) = %v, want %v", s, got, want)
		}
	}
	p.Reset()
	for _, s := range []LatencySignal{CompletionLatency, RTTLatency, SmoothedRTTLatency} {
		if got := p.Healthy(s); got != 0 {
			t.Errorf("Healthy(%v) = %v after Reset, want 0", s, got)
		}
	}
}

// A move made before the flow recovered from the previous one doubles the
// cooldown, up to 16×; a recovery restores it.
func TestLatencyThresholdBackoff(t *testing.T) {
	p, err := NewLatencyThreshold(LatencyThresholdConfig{Ratio: 1.5, CompletionRatio: 1.5, Consecutive: 1, Cooldown: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Two switches: the destination is always the other one.
	fab := []proflow.SwitchSample{sw(9, 0, 9), sw(0, 0, 1)}
	stay := func(cur int) []float64 { s := []float64{0, 0}; s[cur] = 1; return s }
	move := func(cur int) []float64 { return stay(1 - cur) }
	runLatency(t, p, fab, []latStep{{0, 0, rtt(0.05), stay(0)}, {0.5, 0, rtt(0.1), move(0)}})
	// The flow stays high, so every move comes before a recovery and the
	// cooldown doubles each time, up to 32 s.
	now, cur := 0.5, 1 // the last move was issued at now; the flow is on cur
	for i, want := range []time.Duration{2, 4, 8, 16, 32, 32} {
		want *= time.Second
		runLatency(t, p, fab, []latStep{{now + 0.5, cur, rtt(0.1), stay(cur)}})
		if got := p.Cooldown(); got != want {
			t.Fatalf("move %d: cooldown %v, want %v", i+1, got, want)
		}
		// Just before the cooldown ends it holds; at its end it fires.
		runLatency(t, p, fab, []latStep{{now + want.Seconds() - 0.25, cur, rtt(0.1), stay(cur)}})
		now += want.Seconds()
		runLatency(t, p, fab, []latStep{{now, cur, rtt(0.1), move(cur)}})
		cur = 1 - cur
	}
	// A healthy sample on the new switch, then a move: back to 2 s.
	runLatency(t, p, fab, []latStep{{now + 0.5, cur, rtt(0.05), stay(cur)}})
	if got := p.Cooldown(); got != 32*time.Second {
		t.Fatalf("cooldown %v before the next move, want 32s still", got)
	}
	now += 32
	runLatency(t, p, fab, []latStep{{now, cur, rtt(0.1), move(cur)}})
	runLatency(t, p, fab, []latStep{{now + 0.5, 1 - cur, rtt(0.1), stay(1 - cur)}})
	if got := p.Cooldown(); got != 2*time.Second {
		t.Errorf("cooldown %v after a move that followed a recovery, want 2s", got)
	}
}

func TestLatencyThresholdRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		cfg  LatencyThresholdConfig
		want string
	}{
		{LatencyThresholdConfig{Ratio: 1, CompletionRatio: 2, Consecutive: 1}, "ratio 1, want a finite number > 1"},
		{LatencyThresholdConfig{Ratio: math.Inf(1), CompletionRatio: 2, Consecutive: 1}, "ratio +Inf, want a finite number > 1"},
		{LatencyThresholdConfig{Ratio: 2, CompletionRatio: math.NaN(), Consecutive: 1}, "completion_ratio NaN, want a finite number > 1"},
		{LatencyThresholdConfig{Ratio: 2, CompletionRatio: 2, Consecutive: 0}, "consecutive 0 samples, want >= 1"},
		{LatencyThresholdConfig{Ratio: 2, CompletionRatio: 2, Consecutive: 1, Cooldown: -1}, "cooldown -1ns, want >= 0"},
	} {
		if _, err := NewLatencyThreshold(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewLatencyThreshold(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	p, err := NewLatencyThreshold(DefaultLatencyThresholdConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []proflow.FlowSample{{RTTP99: -1}, {CompletionP99: math.Inf(1)}, {SmoothedRTT: math.NaN()}} {
		obs := &proflow.Observation{Switches: []proflow.SwitchSample{{}, {}}, Flow: f}
		if err := p.Score(make([]float64, 2), &proflow.Input{Obs: obs}); err == nil || !strings.Contains(err.Error(), "want a finite latency >= 0") {
			t.Errorf("Score with %+v: %v, want an error naming the latency", f, err)
		}
	}
}

func TestLatencyThresholdConfigJSON(t *testing.T) {
	want := LatencyThresholdConfig{Ratio: 1.25, CompletionRatio: 1.75, Consecutive: 3, Cooldown: 7 * time.Second}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"cooldown":"7s"`) || !strings.Contains(string(data), `"completion_ratio":1.75`) {
		t.Errorf("marshalled %s, want the cooldown as a duration string and every field by its JSON name", data)
	}
	got, err := ReadLatencyThresholdConfig(bytes.NewReader(data))
	if err != nil || got != want {
		t.Errorf("round trip: %+v, %v; want %+v", got, err, want)
	}
	// Fields left out keep the defaults; nanoseconds are accepted.
	got, err = ReadLatencyThresholdConfig(strings.NewReader(`{"ratio": 1.3, "cooldown": 3000000000}`))
	def := DefaultLatencyThresholdConfig()
	if err != nil || got.Ratio != 1.3 || got.Cooldown != 3*time.Second || got.Consecutive != def.Consecutive || got.CompletionRatio != def.CompletionRatio {
		t.Errorf("partial: %+v, %v", got, err)
	}
	// Keys match in any case, as encoding/json matches them, the
	// cooldown's too.
	got, err = ReadLatencyThresholdConfig(strings.NewReader(`{"Ratio": 1.3, "Cooldown": "9s"}`))
	if err != nil || got.Ratio != 1.3 || got.Cooldown != 9*time.Second {
		t.Errorf("capitalised keys: %+v, %v; want ratio 1.3, cooldown 9s", got, err)
	}
	for in, msg := range map[string]string{
		`{"ratio": 0.5}`:                       "ratio 0.5, want a finite number > 1",
		`{"raito": 1.5}`:                       `unknown field "raito"`,
		`{"cooldown": "soon"}`:                 `cooldown "soon", want a Go duration`,
		`{"ratio": 1.5} {}`:                    "trailing data",
		`{"ratio": 1.5}]`:                      "trailing data",
		`{"cooldown": "1s", "Cooldown": "2s"}`: "two cooldown fields",
		`{"consecutive": "two"}`:               "consecutive: a string, want a whole number",
		`[1.5]`:                                "an array, want a JSON object",
		`{"completion_ratio": -2}`:             "completion_ratio -2, want a finite number > 1",
		`{"consecutive": 0, "x": 1}`:           `unknown field "x"`,
	} {
		if _, err := ReadLatencyThresholdConfig(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want an error containing %q", in, err, msg)
		}
	}
}

func TestFlowLatency(t *testing.T) {
	for _, tc := range []struct {
		f    proflow.FlowSample
		v    float64
		s    LatencySignal
		name string
	}{
		{proflow.FlowSample{CompletionP99: 3, RTTP99: 2, SmoothedRTT: 1}, 3, CompletionLatency, "completion_p99"},
		{proflow.FlowSample{RTTP99: 2, SmoothedRTT: 1}, 2, RTTLatency, "rtt_p99"},
		{proflow.FlowSample{SmoothedRTT: 1}, 1, SmoothedRTTLatency, "srtt"},
		{proflow.FlowSample{Throughput: 5}, 0, NoLatency, "none"},
	} {
		v, s := FlowLatency(tc.f)
		if v != tc.v || s != tc.s || s.String() != tc.name {
			t.Errorf("FlowLatency(%+v) = %v, %v; want %v, %v (%s)", tc.f, v, s, tc.v, tc.s, tc.name)
		}
	}
}
