package telemetry_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// approx absorbs float32 rounding of hand-computed decimals such as 0.3.
var approx = cmpopts.EquateApprox(0, 1e-6)

// roundConfig has round scaling constants so that expectations can be
// computed by hand: Cρ = 1000, Cξ = 100, Cn = 10, Cλ = 2000, Cφ = 1000 and a
// three-sample drop window.
func roundConfig(switches, leaves int) telemetry.EncoderConfig {
	return telemetry.EncoderConfig{
		NumSwitches:     switches,
		NumLeaves:       leaves,
		RateScale:       1000,
		OverflowScale:   100,
		FlowCountScale:  10,
		IngressScale:    2000,
		ThroughputScale: 1000,
		DropWindow:      3,
	}
}

func sw(tx, overflow, flows, elephant float64) proflow.SwitchSample {
	return proflow.SwitchSample{TxRate: tx, OverflowRate: overflow, FlowCount: flows, ElephantRate: elephant}
}

func leaf(ingress, transmit float64) proflow.LeafSample {
	return proflow.LeafSample{IngressRate: ingress, TransmitRate: transmit}
}

func obs(switches []proflow.SwitchSample, leaves []proflow.LeafSample, phi, congestion float64) *proflow.Observation {
	return &proflow.Observation{Switches: switches, Leaves: leaves,
		Flow: proflow.FlowSample{Throughput: phi, CongestionRate: congestion}}
}

// state restates the layout of the paper's App. A independently of the
// encoder's offset helpers: [x_agg (5|S|), x_leaf (2|L|), h (|S|), x_flow (4)].
func state(agg [][5]float32, leaves [][2]float32, current int, flow [4]float32) proflow.State {
	var s proflow.State
	for _, a := range agg {
		s = append(s, a[:]...)
	}
	for _, l := range leaves {
		s = append(s, l[:]...)
	}
	for k := range agg {
		h := float32(0)
		if k == current {
			h = 1
		}
		s = append(s, h)
	}
	return append(s, flow[:]...)
}

type step struct {
	name     string
	baseline *proflow.Baseline // SetBaseline before this step
	reset    bool              // Reset before this step
	obs      *proflow.Observation
	current  int
	want     proflow.State
}

func runSteps(t *testing.T, enc *telemetry.Encoder, steps []step) {
	t.Helper()
	for _, st := range steps {
		if st.reset {
			enc.Reset()
		}
		if st.baseline != nil {
			if err := enc.SetBaseline(*st.baseline); err != nil {
				t.Fatalf("%s: SetBaseline: %v", st.name, err)
			}
		}
		got := make(proflow.State, enc.Dim())
		if err := enc.Encode(got, st.obs, st.current); err != nil {
			t.Fatalf("%s: Encode: %v", st.name, err)
		}
		if len(st.want) != enc.Dim() {
			t.Fatalf("%s: test expectation has %d entries, want %d", st.name, len(st.want), enc.Dim())
		}
		if diff := cmp.Diff(st.want, got, approx); diff != "" {
			t.Errorf("%s: state mismatch (-want +got):\n%s", st.name, diff)
		}
	}
}

// TestEncodeSequence walks a 4-switch, 3-leaf encoder (34 entries) through
// every clip bound, a baseline arriving mid-episode, a move of the protected
// flow, the drop window forgetting an old peak, and Reset.
func TestEncodeSequence(t *testing.T) {
	enc, err := telemetry.NewEncoder(roundConfig(4, 3))
	if err != nil {
		t.Fatal(err)
	}
	if got := enc.Dim(); got != 34 {
		t.Fatalf("Dim() = %d, want 34", got)
	}
	base := &proflow.Baseline{Overflow: 150, FlowCount: 8, Throughput: 800}
	steadyLeaves := []proflow.LeafSample{leaf(400, 100), leaf(0, 0), leaf(3000, 1000)}
	steadyLeavesWant := [][2]float32{{0.2, 0.1}, {0, 0}, {1, 1}}
	lateSwitches := []proflow.SwitchSample{sw(100, 60, 4, 0), sw(0, 170, 10, 100), sw(1200, 0, 0, 0), sw(250, 50, 2, 0)}

	runSteps(t, enc, []step{{
		// No baseline yet: the current switch is encoded against zero,
		// clip(ξ/Cξ, −1, 1) and clip(n/Cn, −0.5, 1). Everything on switch 1
		// and leaf 1 exceeds its constant and clips to 1. First sample:
		// no change yet, no drop.
		name: "1 before baseline, unsigned clips",
		obs: obs([]proflow.SwitchSample{sw(500, 30, 4, 200), sw(1500, 250, 20, 3000), sw(0, 0, 0, 0), sw(250, 50, 2, 0)},
			[]proflow.LeafSample{leaf(1000, 500), leaf(5000, 2000), leaf(0, 0)}, 800, 300),
		current: 0,
		want: state([][5]float32{{0.5, 0, 0.3, 0.4, 0.2}, {1, 0, 1, 1, 1}, {0, 0, 0, 0, 0}, {0.25, 0, 0.5, 0.2, 0}},
			[][2]float32{{0.5, 0.5}, {1, 1}, {0, 0}}, 0, [4]float32{0.8, 0.3, 0, 0}),
	}, {
		// Baseline ξ̄ = 150, n̄ = 8: switch 0 (k*) goes signed,
		// (120−150)/100 = −0.3 and (6−8)/10 = −0.2. ρ̇: +400 → 0.4,
		// −1500 → −1 (clip), +1200 → 1 (clip). φ: 800 → 400, Δφ −0.4,
		// drop (800−400)/800.
		name:     "2 signed deviation, rate change clips",
		baseline: base,
		obs: obs([]proflow.SwitchSample{sw(900, 120, 6, 0), sw(0, 10, 3, 100), sw(1200, 0, 0, 0), sw(250, 50, 2, 0)},
			steadyLeaves, 400, 0),
		current: 0,
		want: state([][5]float32{{0.9, 0.4, -0.3, -0.2, 0}, {0, -1, 0.1, 0.3, 0.1}, {1, 1, 0, 0, 0}, {0.25, 0, 0.5, 0.2, 0}},
			steadyLeavesWant, 0, [4]float32{0.4, 0, -0.4, 0.5}),
	}, {
		// k* lower clips: (0−150)/100 → −1, (1−8)/10 → −0.5. φ 1500 > Cφ
		// clips to 1, Δφ = 1100 → 1, F 5000 → 1; new peak, no drop.
		name: "3 signed lower clips, throughput upper clips",
		obs: obs([]proflow.SwitchSample{sw(900, 0, 1, 0), sw(0, 10, 3, 100), sw(1200, 0, 0, 0), sw(250, 50, 2, 0)},
			steadyLeaves, 1500, 5000),
		current: 0,
		want: state([][5]float32{{0.9, 0, -1, -0.5, 0}, {0, 0, 0.1, 0.3, 0.1}, {1, 0, 0, 0, 0}, {0.25, 0, 0.5, 0.2, 0}},
			steadyLeavesWant, 0, [4]float32{1, 1, 1, 0}),
	}, {
		// k* upper clips: (400−150)/100 → 1, (30−8)/10 → 1. ρ̇ −800 → −0.8.
		// φ collapses to 0: Δφ −1500 → −1, drop (1500−0)/1500 = 1.
		name: "4 signed upper clips, throughput collapse",
		obs: obs([]proflow.SwitchSample{sw(100, 400, 30, 0), sw(0, 10, 3, 100), sw(1200, 0, 0, 0), sw(250, 50, 2, 0)},
			steadyLeaves, 0, 0),
		current: 0,
		want: state([][5]float32{{0.1, -0.8, 1, 1, 0}, {0, 0, 0.1, 0.3, 0.1}, {1, 0, 0, 0, 0}, {0.25, 0, 0.5, 0.2, 0}},
			steadyLeavesWant, 0, [4]float32{0, 0, -1, 1}),
	}, {
		// The flow moves to switch 1: switch 0 becomes unsigned (60/100,
		// 4/10; signed would be −0.9, −0.4), switch 1 signed
		// ((170−150)/100, (10−8)/10; unsigned would clip to 1, 1). The
		// window [1500, 0, 300] still holds the peak: drop 1200/1500.
		name:    "5 signed encoding follows k*",
		obs:     obs(lateSwitches, steadyLeaves, 300, 0),
		current: 1,
		want: state([][5]float32{{0.1, 0, 0.6, 0.4, 0}, {0, 0, 0.2, 0.2, 0.1}, {1, 0, 0, 0, 0}, {0.25, 0, 0.5, 0.2, 0}},
			steadyLeavesWant, 1, [4]float32{0.3, 0, 0.3, 0.8}),
	}, {
		// The window [0, 300, 200] has dropped the old peak 1500:
		// drop (300−200)/300.
		name:    "6 rolling maximum forgets an old peak",
		obs:     obs(lateSwitches, steadyLeaves, 200, 0),
		current: 1,
		want: state([][5]float32{{0.1, 0, 0.6, 0.4, 0}, {0, 0, 0.2, 0.2, 0.1}, {1, 0, 0, 0, 0}, {0.25, 0, 0.5, 0.2, 0}},
			steadyLeavesWant, 1, [4]float32{0.2, 0, -0.1, 1.0 / 3}),
	}, {
		// Reset forgets history and baseline: no change, no drop, and
		// switch 1 is encoded against zero (170/100 → 1, 10/10 = 1).
		name:    "7 after Reset",
		reset:   true,
		obs:     obs(lateSwitches, steadyLeaves, 200, 0),
		current: 1,
		want: state([][5]float32{{0.1, 0, 0.6, 0.4, 0}, {0, 0, 1, 1, 0.1}, {1, 0, 0, 0, 0}, {0.25, 0, 0.5, 0.2, 0}},
			steadyLeavesWant, 1, [4]float32{0.2, 0, 0, 0}),
	}})
}

// TestEncodeDefaultConfig runs a 3-switch, 1-leaf encoder (24 entries) with
// the default constants of a 200 Mbit/s bucket (Cρ = Cφ = 25e6 B/s, Cξ =
// 50,000 B/s, Cn = 12, Cλ = 50e6 B/s, ten-sample drop window), a baseline set
// before the first sample, and the exact edge of the drop window.
func TestEncodeDefaultConfig(t *testing.T) {
	topo := proflow.Topology{Switches: []string{"a", "b", "c"}, Leaves: []string{"l"}, BucketRate: 200e6 / 8}
	cfg := telemetry.DefaultEncoderConfig(topo)
	enc, err := telemetry.NewEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := enc.Dim(); got != 24 {
		t.Fatalf("Dim() = %d, want 24", got)
	}
	base := &proflow.Baseline{Overflow: 25000, FlowCount: 2, Throughput: 23e6, Switch: 2}
	leaves := []proflow.LeafSample{leaf(25e6, 20e6)}
	leavesWant := [][2]float32{{0.5, 0.8}}
	healthy := []proflow.SwitchSample{sw(12.5e6, 10000, 6, 5e6), sw(25e6, 0, 0, 0), sw(23e6, 35000, 8, 0)}
	collapsed := []proflow.SwitchSample{sw(12.5e6, 10000, 6, 5e6), sw(25e6, 0, 0, 0), sw(20e6, 15000, 2, 0)}
	collapsedAgg := [][5]float32{{0.5, 0, 0.2, 0.5, 0.2}, {1, 0, 0, 0, 0}, {0.8, 0, -0.2, 0, 0}}

	steps := []step{{
		// k* = 2: (35000−25000)/50000 = 0.2, (8−2)/12 = 0.5.
		name:     "1 crowd arriving on k*",
		baseline: base,
		obs:      obs(healthy, leaves, 23e6, 12.5e6),
		current:  2,
		want: state([][5]float32{{0.5, 0, 0.2, 0.5, 0.2}, {1, 0, 0, 0, 0}, {0.92, 0, 0.2, 0.5, 0}},
			leavesWant, 2, [4]float32{0.92, 0.5, 0, 0}),
	}, {
		// The flow's own TCP collapses: ξ below baseline, throughput halves.
		name:    "2 collapse",
		obs:     obs(collapsed, leaves, 11.5e6, 12.5e6),
		current: 2,
		want: state([][5]float32{{0.5, 0, 0.2, 0.5, 0.2}, {1, 0, 0, 0, 0}, {0.8, -0.12, -0.2, 0, 0}},
			leavesWant, 2, [4]float32{0.46, 0.5, -0.46, 0.5}),
	}}
	// Samples 3..10 still hold sample 1's peak of 23e6 in the ten-sample
	// window; sample 11 no longer does.
	for i := 3; i <= 11; i++ {
		d := float32(0.5)
		if i == 11 {
			d = 0
		}
		steps = append(steps, step{
			name:    fmt.Sprintf("%d steady collapsed", i),
			obs:     obs(collapsed, leaves, 11.5e6, 12.5e6),
			current: 2,
			want:    state(collapsedAgg, leavesWant, 2, [4]float32{0.46, 0.5, 0, d}),
		})
	}
	runSteps(t, enc, steps)
}

func TestDefaultEncoderConfig(t *testing.T) {
	got := telemetry.DefaultEncoderConfig(proflow.PaperTopology())
	want := telemetry.EncoderConfig{
		NumSwitches: 4, NumLeaves: 3,
		RateScale: 25e6, OverflowScale: 50000, FlowCountScale: 12,
		IngressScale: 50e6, ThroughputScale: 25e6, DropWindow: 10,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DefaultEncoderConfig(PaperTopology()) mismatch (-want +got):\n%s", diff)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
}

func TestOffsets(t *testing.T) {
	for _, tc := range []struct {
		switches, leaves                     int
		aggLast, leaf0, placement, flow, dim int
	}{
		{4, 3, 15, 20, 26, 30, 34},
		{3, 1, 10, 15, 17, 20, 24},
		{2, 0, 5, 10, 10, 12, 16},
	} {
		c := roundConfig(tc.switches, tc.leaves)
		got := []int{c.AggOffset(tc.switches - 1), c.LeafOffset(0), c.PlacementOffset(), c.FlowOffset(), c.Dim()}
		want := []int{tc.aggLast, tc.leaf0, tc.placement, tc.flow, tc.dim}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("|S|=%d |L|=%d: [AggOffset(|S|-1) LeafOffset(0) PlacementOffset FlowOffset Dim] (-want +got):\n%s",
				tc.switches, tc.leaves, diff)
		}
		if got := c.FlowOffset() + telemetry.FlowFeatures; got != c.Dim() {
			t.Errorf("|S|=%d |L|=%d: FlowOffset()+FlowFeatures = %d, want Dim() = %d", tc.switches, tc.leaves, got, c.Dim())
		}
	}
	if got := []int{telemetry.SwitchFeatures, telemetry.LeafFeatures, telemetry.FlowFeatures}; !cmp.Equal(got, []int{5, 2, 4}) {
		t.Errorf("feature counts = %v, want [5 2 4]", got)
	}
}

// TestOffsetsReadState reads features of an encoded state through the
// offset helpers.
func TestOffsetsReadState(t *testing.T) {
	cfg := roundConfig(4, 3)
	enc, err := telemetry.NewEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := make(proflow.State, enc.Dim())
	o := obs([]proflow.SwitchSample{sw(0, 0, 0, 0), sw(0, 0, 0, 0), sw(700, 40, 3, 0), sw(0, 0, 0, 0)},
		[]proflow.LeafSample{leaf(0, 0), leaf(0, 0), leaf(600, 0)}, 250, 0)
	if err := enc.Encode(s, o, 3); err != nil {
		t.Fatal(err)
	}
	got := []float32{
		s[cfg.AggOffset(2)+telemetry.FeatureTxRate],
		s[cfg.AggOffset(2)+telemetry.FeatureOverflow],
		s[cfg.AggOffset(2)+telemetry.FeatureFlowCount],
		s[cfg.LeafOffset(2)+telemetry.FeatureLeafIngress],
		s[cfg.PlacementOffset()+3],
		s[cfg.FlowOffset()+telemetry.FeatureThroughput],
	}
	want := []float32{0.7, 0.4, 0.3, 0.3, 1, 0.25}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("features read through offsets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cfg, enc.Config()); diff != "" {
		t.Errorf("Config() (-want +got):\n%s", diff)
	}
}

func TestEncodeErrors(t *testing.T) {
	good := func() *proflow.Observation {
		return obs(make([]proflow.SwitchSample, 4), make([]proflow.LeafSample, 3), 0, 0)
	}
	for _, tc := range []struct {
		name    string
		dstLen  int
		obs     func() *proflow.Observation
		current int
		want    string
		is      error
		field   string // *proflow.InvalidObservationError.Field
	}{
		{name: "short state", dstLen: 30, obs: good, want: "telemetry: encode: state has 30 entries, want 34"},
		{name: "long state", dstLen: 35, obs: good, want: "telemetry: encode: state has 35 entries, want 34"},
		{name: "negative current", current: -1, obs: good, want: "telemetry: encode: current switch -1 out of range, want 0..3"},
		{name: "current past end", current: 4, obs: good, want: "telemetry: encode: current switch 4 out of range, want 0..3"},
		{name: "nil observation", obs: func() *proflow.Observation { return nil }, want: "telemetry: encode: nil observation"},
		{name: "missing switch", obs: func() *proflow.Observation {
			o := good()
			o.Switches = o.Switches[:3]
			return o
		}, want: "telemetry: encode: observation has 3 switch samples, want 4: missing switch sample", is: proflow.ErrMissingSwitch},
		{name: "extra leaf", obs: func() *proflow.Observation {
			o := good()
			o.Leaves = append(o.Leaves, proflow.LeafSample{})
			return o
		}, want: "telemetry: encode: observation has 4 leaf samples, want 3"},
		{name: "NaN overflow", obs: func() *proflow.Observation {
			o := good()
			o.Switches[2].OverflowRate = math.NaN()
			return o
		}, field: "switches[2].overflow_rate",
			want: "telemetry: encode: proflow: invalid observation: switches[2].overflow_rate: NaN, want a finite non-negative number"},
		{name: "infinite elephant rate", obs: func() *proflow.Observation {
			o := good()
			o.Switches[0].ElephantRate = math.Inf(1)
			return o
		}, field: "switches[0].elephant_rate"},
		{name: "negative leaf transmit", obs: func() *proflow.Observation {
			o := good()
			o.Leaves[1].TransmitRate = -1
			return o
		}, field: "leaves[1].transmit_rate",
			want: "telemetry: encode: proflow: invalid observation: leaves[1].transmit_rate: -1, want a finite non-negative number"},
		{name: "infinite throughput", obs: func() *proflow.Observation {
			o := good()
			o.Flow.Throughput = math.Inf(1)
			return o
		}, field: "flow.throughput"},
		{name: "negative congestion rate", obs: func() *proflow.Observation {
			o := good()
			o.Flow.CongestionRate = -5
			return o
		}, field: "flow.congestion_rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := telemetry.NewEncoder(roundConfig(4, 3))
			if err != nil {
				t.Fatal(err)
			}
			n := tc.dstLen
			if n == 0 {
				n = enc.Dim()
			}
			dst := make(proflow.State, n)
			for i := range dst {
				dst[i] = 7
			}
			err = enc.Encode(dst, tc.obs(), tc.current)
			if err == nil {
				t.Fatal("Encode succeeded, want an error")
			}
			if tc.want != "" && err.Error() != tc.want {
				t.Errorf("error = %q\nwant    %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.is)
			}
			if tc.field != "" {
				var ie *proflow.InvalidObservationError
				if !errors.As(err, &ie) || ie.Field != tc.field {
					t.Errorf("error %v: want an *InvalidObservationError for field %q", err, tc.field)
				}
			}
			for i, v := range dst {
				if v != 7 {
					t.Fatalf("dst[%d] = %v after a failed Encode, want it untouched", i, v)
				}
			}
		})
	}
}

// TestEncodeErrorKeepsHistory checks that a rejected observation is not
// remembered as the previous sample.
func TestEncodeErrorKeepsHistory(t *testing.T) {
	cfg := roundConfig(2, 0)
	a := obs([]proflow.SwitchSample{sw(100, 0, 0, 0), sw(0, 0, 0, 0)}, nil, 500, 0)
	b := obs([]proflow.SwitchSample{sw(300, 0, 0, 0), sw(0, 0, 0, 0)}, nil, 400, 0)
	bad := obs([]proflow.SwitchSample{sw(900, 0, 0, 0), sw(0, 0, 0, 0)}, nil, 900, math.NaN())

	clean, _ := telemetry.NewEncoder(cfg)
	faulty, _ := telemetry.NewEncoder(cfg)
	want := make(proflow.State, cfg.Dim())
	got := make(proflow.State, cfg.Dim())
	for _, o := range []*proflow.Observation{a, b} {
		if err := clean.Encode(want, o, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := faulty.Encode(got, a, 0); err != nil {
		t.Fatal(err)
	}
	if err := faulty.Encode(got, bad, 0); err == nil {
		t.Fatal("Encode(NaN congestion rate) succeeded, want an error")
	}
	if err := faulty.Encode(got, b, 0); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state after a rejected sample (-want +got):\n%s", diff)
	}
}

func TestNewEncoderInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*telemetry.EncoderConfig)
		want   []string // substrings of the error
	}{
		{"one switch", func(c *telemetry.EncoderConfig) { c.NumSwitches = 1 }, []string{"num_switches 1, want 2..65536"}},
		{"negative leaves", func(c *telemetry.EncoderConfig) { c.NumLeaves = -1 }, []string{"num_leaves -1, want 0..65536"}},
		{"too many switches", func(c *telemetry.EncoderConfig) { c.NumSwitches = telemetry.MaxSwitches + 1 }, []string{"num_switches 65537, want 2..65536"}},
		{"too many leaves", func(c *telemetry.EncoderConfig) { c.NumLeaves = telemetry.MaxLeaves + 1 }, []string{"num_leaves 65537, want 0..65536"}},
		// Dim would wrap round to 4.
		{"sizes overflowing Dim", func(c *telemetry.EncoderConfig) { c.NumSwitches, c.NumLeaves = 1<<62, 1<<62 },
			[]string{"num_switches 4611686018427387904, want 2..65536", "num_leaves 4611686018427387904, want 0..65536"}},
		{"zero rate scale", func(c *telemetry.EncoderConfig) { c.RateScale = 0 }, []string{"rate_scale 0, want a positive finite number"}},
		{"NaN overflow scale", func(c *telemetry.EncoderConfig) { c.OverflowScale = math.NaN() }, []string{"overflow_scale NaN"}},
		{"infinite throughput scale", func(c *telemetry.EncoderConfig) { c.ThroughputScale = math.Inf(1) }, []string{"throughput_scale +Inf"}},
		{"zero drop window", func(c *telemetry.EncoderConfig) { c.DropWindow = 0 }, []string{"drop_window 0 samples, want >= 1"}},
		{"several", func(c *telemetry.EncoderConfig) { c.FlowCountScale, c.IngressScale = -1, 0 },
			[]string{"flow_count_scale -1", "ingress_scale 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := roundConfig(4, 3)
			tc.modify(&cfg)
			enc, err := telemetry.NewEncoder(cfg)
			if err == nil {
				t.Fatalf("NewEncoder succeeded (%+v), want an error", enc)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "telemetry: invalid encoder config: ") {
				t.Errorf("error %q lacks the component prefix", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}

// The largest fabric Validate accepts has a state dimension far from
// overflowing in every layout.
func TestEncoderConfigLargestFabric(t *testing.T) {
	for _, layout := range []string{telemetry.StateLayout, telemetry.StateLayoutV2, telemetry.StateLayoutV3, telemetry.StateLayoutV4,
		telemetry.StateLayoutV5, telemetry.StateLayoutV6, telemetry.StateLayoutV7, telemetry.StateLayoutV8} {
		cfg := roundConfig(4, 3)
		cfg.NumSwitches, cfg.NumLeaves = telemetry.MaxSwitches, telemetry.MaxLeaves
		cfg = cfg.WithLayout(layout)
		if err := cfg.Validate(); err != nil {
			t.Fatalf("layout %s: Validate of %d switches and %d leaves: %v", layout, cfg.NumSwitches, cfg.NumLeaves, err)
		}
		if dim := cfg.Dim(); dim <= 0 || dim > 16*(telemetry.MaxSwitches+telemetry.MaxLeaves) {
			t.Errorf("layout %s: Dim %d", layout, dim)
		}
	}
}

func TestSetBaselineInvalid(t *testing.T) {
	enc, err := telemetry.NewEncoder(roundConfig(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	good := proflow.Baseline{Overflow: 10, FlowCount: 2, Throughput: 100}
	if err := enc.SetBaseline(good); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		b    proflow.Baseline
		want string
	}{
		{proflow.Baseline{Overflow: math.NaN()}, "telemetry: set baseline: overflow is NaN, want a finite non-negative number"},
		{proflow.Baseline{Overflow: math.Inf(1)}, "telemetry: set baseline: overflow is +Inf, want a finite non-negative number"},
		{proflow.Baseline{FlowCount: -2}, "telemetry: set baseline: flow count is -2, want a finite non-negative number"},
	} {
		err := enc.SetBaseline(tc.b)
		if err == nil || err.Error() != tc.want {
			t.Errorf("SetBaseline(%+v) = %v, want %q", tc.b, err, tc.want)
		}
	}
	if diff := cmp.Diff(good, enc.Baseline()); diff != "" {
		t.Errorf("baseline after rejected updates (-want +got):\n%s", diff)
	}
	enc.Reset()
	if diff := cmp.Diff(proflow.Baseline{}, enc.Baseline()); diff != "" {
		t.Errorf("baseline after Reset (-want +got):\n%s", diff)
	}
}

func paperObservations() []*proflow.Observation {
	topo := proflow.PaperTopology()
	out := make([]*proflow.Observation, 2)
	for i := range out {
		o := new(proflow.Observation)
		o.Resize(topo)
		for k := range o.Switches {
			o.Switches[k] = sw(float64(10e6+1e6*k+2e6*i), float64(20000+1000*k*i), float64(2+2*k), float64(1e6*i))
		}
		for l := range o.Leaves {
			o.Leaves[l] = leaf(float64(20e6+1e6*l), float64(15e6+1e6*i))
		}
		o.Flow = proflow.FlowSample{Throughput: float64(23e6 - 5e6*i), CongestionRate: float64(40e6 * i)}
		out[i] = o
	}
	return out
}

func TestEncodeDoesNotAllocate(t *testing.T) {
	enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(proflow.PaperTopology()))
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.SetBaseline(proflow.Baseline{Overflow: 23000, FlowCount: 2, Throughput: 23e6}); err != nil {
		t.Fatal(err)
	}
	obs := paperObservations()
	dst := make(proflow.State, enc.Dim())
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		i++
		if err := enc.Encode(dst, obs[i%2], i%4); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Encode allocates %v times per call, want 0", allocs)
	}
}

func BenchmarkEncode(b *testing.B) {
	enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(proflow.PaperTopology()))
	if err != nil {
		b.Fatal(err)
	}
	obs := paperObservations()
	dst := make(proflow.State, enc.Dim())
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := enc.Encode(dst, obs[i&1], i&3); err != nil {
			b.Fatal(err)
		}
	}
}
