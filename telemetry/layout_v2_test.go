package telemetry_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// v2Config is roundConfig in StateLayoutV2: Cq = 1000·5 ms = 5 bytes.
func v2Config(switches, leaves int) telemetry.EncoderConfig {
	return roundConfig(switches, leaves).WithLayout(telemetry.StateLayoutV2)
}

func TestLayoutV2Offsets(t *testing.T) {
	c := v2Config(4, 3)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got := []int{c.AggOffset(1), c.LeafOffset(0), c.LeafOffset(2), c.PlacementOffset(), c.FlowOffset(), c.Dim()}
	want := []int{6, 24, 28, 30, 34, 40} // [x_agg 6·4, x_leaf 2·3, h 4, x_flow 6]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
	if c.QueueScale != 5 || c.LayoutName() != telemetry.StateLayoutV2 {
		t.Errorf("queue scale %v, layout %q; want 5 and %q", c.QueueScale, c.LayoutName(), telemetry.StateLayoutV2)
	}
	v1 := c.WithLayout(telemetry.StateLayout)
	if v1 != roundConfig(4, 3) || v1.Dim() != 34 {
		t.Errorf("back to v1: %+v (dim %d), want the v1 config (dim 34)", v1, v1.Dim())
	}
}

func TestLayoutValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    telemetry.EncoderConfig
		want string
	}{
		{"v1 with a queue scale", func() telemetry.EncoderConfig { c := roundConfig(4, 3); c.QueueScale = 5; return c }(), "queue_scale 5 in layout proflow-state-v1, want 0"},
		{"v2 without", func() telemetry.EncoderConfig { c := v2Config(4, 3); c.QueueScale = 0; return c }(), "queue_scale 0, want a positive finite number"},
		{"unknown", func() telemetry.EncoderConfig { c := roundConfig(4, 3); c.Layout = "v3"; return c }(), `layout "v3", want`},
		{"v3 without a deficit scale", func() telemetry.EncoderConfig { c := v3Config(4, 3); c.DeficitScale = 0; return c }(), "deficit_scale 0, want a positive finite number in layout proflow-state-v3"},
		{"v3 without a queue scale", func() telemetry.EncoderConfig { c := v3Config(4, 3); c.QueueScale = 0; return c }(), "queue_scale 0, want a positive finite number"},
		{"v2 with a deficit scale", func() telemetry.EncoderConfig { c := v2Config(4, 3); c.DeficitScale = 7; return c }(), "deficit_scale 7 in layout proflow-state-v2, want 0"},
		{"v1 with a deficit scale", func() telemetry.EncoderConfig { c := roundConfig(4, 3); c.DeficitScale = 7; return c }(), "deficit_scale 7 in layout proflow-state-v1, want 0"},
	} {
		err := tc.c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestEncodeV2 checks the two features v2 adds; the v1 features are the
// v1 encoder's (the prefix of each block is compared with it).
func TestEncodeV2(t *testing.T) {
	c := v2Config(2, 1)
	e2, err := telemetry.NewEncoder(c)
	if err != nil {
		t.Fatal(err)
	}
	e1, err := telemetry.NewEncoder(roundConfig(2, 1))
	if err != nil {
		t.Fatal(err)
	}
	sample := func(q0, q1 float64, f proflow.FlowSample) *proflow.Observation {
		o := obs([]proflow.SwitchSample{sw(900, 10, 4, 0), sw(100, 0, 0, 0)}, []proflow.LeafSample{leaf(100, 100)}, f.Throughput, 0)
		o.Switches[0].QueueBytes, o.Switches[1].QueueBytes = q0, q1
		o.Flow = f
		return o
	}
	steps := []struct {
		o            *proflow.Observation
		q0, q1, infl float32
	}{
		{sample(0, 0, proflow.FlowSample{Throughput: 500, RTTP99: 0.050, SmoothedRTT: 0.049}), 0, 0, 0},
		{sample(2, 0, proflow.FlowSample{Throughput: 500, RTTP99: 0.060, SmoothedRTT: 0.055}), 0.4, 0, 0.2},
		{sample(50, 1, proflow.FlowSample{Throughput: 500, RTTP99: 0.040}), 1, 0.2, 0},                    // a new lowest
		{sample(0, 0, proflow.FlowSample{Throughput: 500, RTTP99: 0.1}), 0, 0, 1},                         // clipped at 1
		{sample(0, 0, proflow.FlowSample{Throughput: 500, CompletionP99: 0.030, RTTP99: 0.2}), 0, 0, 0},   // completions: own lowest
		{sample(0, 0, proflow.FlowSample{Throughput: 500, CompletionP99: 0.045, RTTP99: 0.2}), 0, 0, 0.5}, // against 30 ms
		{sample(0, 0, proflow.FlowSample{Throughput: 500, SmoothedRTT: 0.055}), 0, 0, 0},                  // srtt: its own lowest
		{sample(0, 0, proflow.FlowSample{Throughput: 500}), 0, 0, 0},                                      // no latency
	}
	s2, s1 := make(proflow.State, c.Dim()), make(proflow.State, 2*5+2+2+4)
	for i, st := range steps {
		if err := e2.Encode(s2, st.o, 0); err != nil {
			t.Fatal(err)
		}
		if err := e1.Encode(s1, st.o, 0); err != nil {
			t.Fatal(err)
		}
		got := []float32{s2[c.AggOffset(0)+telemetry.FeatureQueue], s2[c.AggOffset(1)+telemetry.FeatureQueue], s2[c.FlowOffset()+telemetry.FeatureLatency]}
		if diff := cmp.Diff([]float32{st.q0, st.q1, st.infl}, got, approx); diff != "" {
			t.Errorf("step %d: queue, queue, latency (-want +got):\n%s", i, diff)
		}
		v1 := roundConfig(2, 1)
		for k := range 2 {
			if diff := cmp.Diff(s1[v1.AggOffset(k):][:telemetry.SwitchFeatures], s2[c.AggOffset(k):][:telemetry.SwitchFeatures]); diff != "" {
				t.Errorf("step %d: switch %d's v1 features differ (-v1 +v2):\n%s", i, k, diff)
			}
		}
		if diff := cmp.Diff(s1[v1.LeafOffset(0):v1.FlowOffset()+telemetry.FlowFeatures], s2[c.LeafOffset(0):c.FlowOffset()+telemetry.FlowFeatures]); diff != "" {
			t.Errorf("step %d: leaf, placement and flow features differ (-v1 +v2):\n%s", i, diff)
		}
	}
	e2.Reset()
	if err := e2.Encode(s2, sample(0, 0, proflow.FlowSample{Throughput: 500, RTTP99: 0.1}), 0); err != nil {
		t.Fatal(err)
	}
	if got := s2[c.FlowOffset()+telemetry.FeatureLatency]; got != 0 {
		t.Errorf("first latency after Reset: inflation %v, want 0 (the lowest is forgotten)", got)
	}
	if err := e2.Encode(s2, sample(0, 0, proflow.FlowSample{Throughput: 500, AppLimited: 0.7}), 0); err != nil {
		t.Fatal(err)
	}
	if got := s2[c.FlowOffset()+telemetry.FeatureAppLimited]; math.Abs(float64(got)-0.7) > 1e-6 {
		t.Errorf("app-limited 0.7: feature %v, want 0.7", got)
	}
	bad := sample(-1, 0, proflow.FlowSample{Throughput: 500})
	if err := e2.Encode(s2, bad, 0); err == nil || !strings.Contains(err.Error(), "switches[0].queue_bytes") {
		t.Errorf("negative backlog: %v, want an error naming switches[0].queue_bytes", err)
	}
}
