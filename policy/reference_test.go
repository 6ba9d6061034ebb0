package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
)

// sw is a switch sample with the fields the reference policies read.
func sw(overflow, tx, flows float64) proflow.SwitchSample {
	return proflow.SwitchSample{OverflowRate: overflow, TxRate: tx, FlowCount: flows}
}

// refStep is one call of Score on a reference policy.
type refStep struct {
	time     float64 // seconds after t0
	current  int
	switches []proflow.SwitchSample
	want     []float64
}

func runPolicy(t *testing.T, p proflow.Policy, steps []refStep) {
	t.Helper()
	for i, s := range steps {
		obs := &proflow.Observation{Time: at(s.time), Switches: s.switches}
		scores := make([]float64, len(s.switches))
		for k := range scores {
			scores[k] = -7 // Score must overwrite every entry
		}
		if err := p.Score(scores, &proflow.Input{Time: at(s.time), Obs: obs, Current: s.current}); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if diff := cmp.Diff(s.want, scores); diff != "" {
			t.Errorf("step %d (t=%vs, current %d): scores (-want +got):\n%s", i, s.time, s.current, diff)
		}
	}
}

// high and low are overflow rates around the reactive default of 27000 B/s.
const (
	high = 28000
	low  = 20000
)

// stay0 and stay1 are the scores of holding on switch 0 and 1 of three.
var (
	stay0 = []float64{1, 0, 0}
	stay1 = []float64{0, 1, 0}
	to1   = []float64{0, 1, 0}
	to2   = []float64{0, 0, 1}
)

func TestReactive(t *testing.T) {
	// On k*=0 overflowing; switch 1 is busier than 2, so 2 is the destination.
	hot := func(xi float64) []proflow.SwitchSample {
		return []proflow.SwitchSample{sw(xi, 1e6, 2), sw(5000, 1e6, 2), sw(1000, 1e6, 2)}
	}
	for _, tc := range []struct {
		name  string
		cfg   ReactiveConfig
		steps []refStep
	}{
		{"fires on the third consecutive sample", DefaultReactiveConfig(), []refStep{
			{0, 0, hot(high), stay0},
			{0.5, 0, hot(high), stay0},
			{1, 0, hot(high), to2},
		}},
		{"equal to the threshold does not count", DefaultReactiveConfig(), []refStep{
			{0, 0, hot(27000), stay0},
			{0.5, 0, hot(27000), stay0},
			{1, 0, hot(27000), stay0},
			{1.5, 0, hot(27000.5), stay0},
		}},
		{"a dip below the threshold resets the count", DefaultReactiveConfig(), []refStep{
			{0, 0, hot(high), stay0},
			{0.5, 0, hot(high), stay0},
			{1, 0, hot(low), stay0},
			{1.5, 0, hot(high), stay0},
			{2, 0, hot(high), stay0},
			{2.5, 0, hot(high), to2},
			{3, 0, hot(high), to2}, // keeps firing until the flow moves
		}},
		{"cooldown after a move", DefaultReactiveConfig(), []refStep{
			{0, 0, hot(high), stay0},
			{0.5, 0, hot(high), stay0},
			{1, 0, hot(high), to2}, // the controller moves the flow to 2 at t=1
			// On switch 2 now, overflowing at once; the count restarts and the
			// cooldown runs until t=31.
			{1.5, 2, []proflow.SwitchSample{sw(0, 0, 0), sw(5000, 0, 0), sw(high, 0, 0)}, []float64{0, 0, 1}},
			{2, 2, []proflow.SwitchSample{sw(0, 0, 0), sw(5000, 0, 0), sw(high, 0, 0)}, []float64{0, 0, 1}},
			{2.5, 2, []proflow.SwitchSample{sw(0, 0, 0), sw(5000, 0, 0), sw(high, 0, 0)}, []float64{0, 0, 1}},
			{30.5, 2, []proflow.SwitchSample{sw(0, 0, 0), sw(5000, 0, 0), sw(high, 0, 0)}, []float64{0, 0, 1}},
			{31, 2, []proflow.SwitchSample{sw(0, 0, 0), sw(5000, 0, 0), sw(high, 0, 0)}, []float64{1, 0, 0}},
		}},
		{"the count restarts after a move", ReactiveConfig{Threshold: 27000, Consecutive: 3}, []refStep{
			{0, 0, hot(high), stay0},
			{0.5, 0, hot(high), stay0},
			{1, 1, []proflow.SwitchSample{sw(0, 0, 0), sw(high, 0, 0), sw(0, 0, 0)}, stay1}, // moved by someone else
			{1.5, 1, []proflow.SwitchSample{sw(0, 0, 0), sw(high, 0, 0), sw(0, 0, 0)}, stay1},
			{2, 1, []proflow.SwitchSample{sw(0, 0, 0), sw(high, 0, 0), sw(0, 0, 0)}, []float64{1, 0, 0}},
		}},
		{"destination: lowest overflow", ReactiveConfig{Threshold: 100, Consecutive: 1}, []refStep{
			{0, 1, []proflow.SwitchSample{sw(300, 0, 0), sw(500, 0, 0), sw(200, 0, 0)}, to2},
		}},
		{"destination ties: lowest transmit rate", ReactiveConfig{Threshold: 100, Consecutive: 1}, []refStep{
			{0, 0, []proflow.SwitchSample{sw(500, 0, 0), sw(200, 9, 0), sw(200, 8, 0)}, to2},
		}},
		{"destination ties: lowest index", ReactiveConfig{Threshold: 100, Consecutive: 1}, []refStep{
			{0, 2, []proflow.SwitchSample{sw(200, 8, 0), sw(200, 8, 0), sw(500, 0, 0)}, []float64{1, 0, 0}},
		}},
		{"never the current switch", ReactiveConfig{Threshold: 0, Consecutive: 1}, []refStep{
			{0, 0, []proflow.SwitchSample{sw(1, 0, 0), sw(500, 0, 0), sw(400, 0, 0)}, to2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReactive(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			runPolicy(t, r, tc.steps)
		})
	}
}

func TestReactiveReset(t *testing.T) {
	r, err := NewReactive(DefaultReactiveConfig())
	if err != nil {
		t.Fatal(err)
	}
	hot := []proflow.SwitchSample{sw(high, 0, 0), sw(0, 0, 0)}
	runPolicy(t, r, []refStep{{0, 0, hot, []float64{1, 0}}, {0.5, 0, hot, []float64{1, 0}}})
	r.Reset()
	runPolicy(t, r, []refStep{{1, 0, hot, []float64{1, 0}}, {1.5, 0, hot, []float64{1, 0}}, {2, 0, hot, []float64{0, 1}}})
}

func TestCrowd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   CrowdConfig
		steps []refStep
	}{
		{"equal to the threshold does not fire", DefaultCrowdConfig(), []refStep{
			{0, 0, []proflow.SwitchSample{sw(0, 0, 5), sw(0, 0, 2), sw(0, 0, 0)}, stay0},
		}},
		{"above the threshold fires at once", DefaultCrowdConfig(), []refStep{
			{0, 0, []proflow.SwitchSample{sw(0, 0, 4), sw(0, 0, 2), sw(0, 0, 0)}, stay0},
			{0.5, 0, []proflow.SwitchSample{sw(0, 0, 6), sw(0, 0, 2), sw(0, 0, 0)}, to2},
		}},
		{"destination: fewest flows", DefaultCrowdConfig(), []refStep{
			{0, 2, []proflow.SwitchSample{sw(0, 0, 4), sw(90000, 0, 2), sw(0, 0, 12)}, to1},
		}},
		{"destination ties ignore overflow", DefaultCrowdConfig(), []refStep{
			{0, 0, []proflow.SwitchSample{sw(0, 0, 12), sw(90000, 0, 2), sw(300, 0, 2)}, to1},
		}},
		{"destination ties: lowest index", DefaultCrowdConfig(), []refStep{
			{0, 0, []proflow.SwitchSample{sw(0, 0, 12), sw(300, 0, 2), sw(300, 0, 2)}, to1},
		}},
		{"consecutive samples", CrowdConfig{Threshold: 5, Consecutive: 2}, []refStep{
			{0, 0, []proflow.SwitchSample{sw(0, 0, 8), sw(0, 0, 2), sw(0, 0, 0)}, stay0},
			{0.5, 0, []proflow.SwitchSample{sw(0, 0, 4), sw(0, 0, 2), sw(0, 0, 0)}, stay0},
			{1, 0, []proflow.SwitchSample{sw(0, 0, 8), sw(0, 0, 2), sw(0, 0, 0)}, stay0},
			{1.5, 0, []proflow.SwitchSample{sw(0, 0, 8), sw(0, 0, 2), sw(0, 0, 0)}, to2},
		}},
		{"cooldown after a move", CrowdConfig{Threshold: 5, Consecutive: 1, Cooldown: 10 * time.Second}, []refStep{
			{0, 0, []proflow.SwitchSample{sw(0, 0, 8), sw(0, 0, 2), sw(0, 0, 0)}, to2},
			{0.5, 2, []proflow.SwitchSample{sw(0, 0, 2), sw(0, 0, 4), sw(0, 0, 8)}, []float64{0, 0, 1}},
			{9.5, 2, []proflow.SwitchSample{sw(0, 0, 2), sw(0, 0, 4), sw(0, 0, 8)}, []float64{0, 0, 1}},
			{10, 2, []proflow.SwitchSample{sw(0, 0, 2), sw(0, 0, 4), sw(0, 0, 8)}, []float64{1, 0, 0}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCrowd(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			runPolicy(t, c, tc.steps)
		})
	}
}

func TestStatic(t *testing.T) {
	runPolicy(t, Static{}, []refStep{
		{0, 1, []proflow.SwitchSample{sw(0, 0, 0), sw(1e9, 1e9, 99), sw(0, 0, 0)}, stay1},
		{0.5, 0, []proflow.SwitchSample{sw(1e9, 1e9, 99), sw(0, 0, 0), sw(0, 0, 0)}, stay0},
	})
	// Static reads no observation at all.
	scores := make([]float64, 2)
	if err := (Static{}).Score(scores, &proflow.Input{Current: 1}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{0, 1}, scores); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

func TestReferenceBadInput(t *testing.T) {
	r, err := NewReactive(DefaultReactiveConfig())
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCrowd(DefaultCrowdConfig())
	if err != nil {
		t.Fatal(err)
	}
	two := &proflow.Observation{Switches: make([]proflow.SwitchSample, 2)}
	for _, tc := range []struct {
		name string
		p    proflow.Policy
		in   *proflow.Input
		want string
	}{
		{"reactive nil input", r, nil, "policy: reactive: nil input"},
		{"reactive nil observation", r, &proflow.Input{}, "policy: reactive: nil observation"},
		{"reactive switch count", r, &proflow.Input{Obs: &proflow.Observation{Switches: make([]proflow.SwitchSample, 3)}}, "3 switch samples, want one per score (2)"},
		{"crowd current", c, &proflow.Input{Obs: two, Current: 2}, "policy: crowd: current switch 2, want 0..1"},
		{"static current", Static{}, &proflow.Input{Current: -1}, "policy: static: current switch -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Score(make([]float64, 2), tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Score = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestReferenceConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"reactive", func() error {
			_, err := NewReactive(ReactiveConfig{Threshold: -1, Consecutive: 0, Cooldown: -1})
			return err
		}(), []string{"reactive config", "threshold -1 bytes/s", "consecutive 0 samples", "cooldown -1ns"}},
		{"crowd", func() error { _, err := NewCrowd(CrowdConfig{Threshold: -2, Consecutive: 0}); return err }(),
			[]string{"crowd config", "threshold -2 flows", "consecutive 0 samples"}},
		{"reactive default", DefaultReactiveConfig().Validate(), nil},
		{"crowd default", DefaultCrowdConfig().Validate(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.err == nil) != (len(tc.want) == 0) {
				t.Fatalf("error %v, want one containing %q", tc.err, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(tc.err.Error(), w) {
					t.Errorf("error %v, want it to contain %q", tc.err, w)
				}
			}
		})
	}
}

func TestReferenceDoesNotAllocate(t *testing.T) {
	r, err := NewReactive(ReactiveConfig{Threshold: 0, Consecutive: 1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCrowd(CrowdConfig{Threshold: 0, Consecutive: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := &proflow.Input{Time: t0, Obs: &proflow.Observation{Switches: []proflow.SwitchSample{sw(5, 5, 5), sw(1, 1, 1)}}}
	scores := make([]float64, 2)
	for _, p := range []proflow.Policy{r, c, Static{}} {
		if n := testing.AllocsPerRun(100, func() { _ = p.Score(scores, in) }); n != 0 {
			t.Errorf("%T.Score allocates %v times per call, want 0", p, n)
		}
	}
}

// The reference policies pick their destination among the switches that
// are not cordoned (proflow.Input.Cordoned), and hold when every other
// switch is.
func TestReferencePoliciesSkipCordoned(t *testing.T) {
	// On k*=0, crowded and overflowing; switch 2 is the best destination by
	// every rule, switch 1 the second best.
	hot := []proflow.SwitchSample{sw(high, 1e6, 9), sw(5000, 2e6, 3), sw(1000, 1e6, 2)}
	for _, tc := range []struct {
		name     string
		cordoned []bool
		want     []float64
		wantDest int
	}{
		{"none", nil, to2, 2},
		{"the best cordoned", []bool{false, false, true}, to1, 1},
		{"every other cordoned", []bool{false, true, true}, stay0, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reactive, err := NewReactive(ReactiveConfig{Threshold: 27000, Consecutive: 1})
			if err != nil {
				t.Fatal(err)
			}
			crowd, err := NewCrowd(DefaultCrowdConfig())
			if err != nil {
				t.Fatal(err)
			}
			for name, p := range map[string]proflow.Policy{"reactive": reactive, "crowd": crowd} {
				scores := make([]float64, 3)
				in := &proflow.Input{Time: at(0), Obs: &proflow.Observation{Time: at(0), Switches: hot}, Current: 0, Cordoned: tc.cordoned}
				if err := p.Score(scores, in); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, scores); diff != "" {
					t.Errorf("%s: scores (-want +got):\n%s", name, diff)
				}
			}
			if got := leastStressedOther(hot, 0, tc.cordoned); got != tc.wantDest {
				t.Errorf("throughput-drop's and latency-threshold's destination %d, want %d", got, tc.wantDest)
			}
		})
	}
}
