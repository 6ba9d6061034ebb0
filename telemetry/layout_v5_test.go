package telemetry_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

func TestLayoutV5Config(t *testing.T) {
	c := roundConfig(4, 3).WithLayout(telemetry.StateLayoutV5)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got := []int{c.AggOffset(1), c.LeafOffset(0), c.PlacementOffset(), c.FlowOffset(), c.Dim(), c.CandidateDim(), c.VacatedFeature()}
	want := []int{8, 32, 38, 42, 48, 51, 7} // [x_agg 8·4, x_leaf 2·3, h 4, x_flow 6]; rows 5·8+1+4+6
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
	v3, v4 := v3Config(4, 3), v4Config(4, 3)
	if c.QueueScale != v3.QueueScale || c.DeficitScale != v3.DeficitScale || c.VacatedSeconds != v4.VacatedSeconds {
		t.Errorf("queue %v, deficit %v, vacated %v; want v3's %v and %v and v4's %v", c.QueueScale, c.DeficitScale, c.VacatedSeconds, v3.QueueScale, v3.DeficitScale, v4.VacatedSeconds)
	}
	if !c.HasDeficit() || !c.HasVacated() || !c.HasFlowSignals() || !telemetry.KnownLayout(telemetry.StateLayoutV5) {
		t.Error("v5: want the deficit, the vacated flows and the flow signals, and a known layout")
	}
	if v4.VacatedFeature() != telemetry.FeatureVacated || v3.VacatedFeature() != -1 {
		t.Errorf("VacatedFeature: v4 %d, v3 %d; want %d and -1", v4.VacatedFeature(), v3.VacatedFeature(), telemetry.FeatureVacated)
	}
	for _, o := range []telemetry.EncoderConfig{
		func() telemetry.EncoderConfig { o := c; o.DeficitScale = 0; return o }(),
		func() telemetry.EncoderConfig { o := c; o.VacatedSeconds = 0; return o }(),
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error (v5 needs both constants)", o)
		}
	}
}

// TestEncodeV5 checks that v5 writes v3's deficit and v4's vacated flows
// for the same observations, and v2's features everywhere else.
func TestEncodeV5(t *testing.T) {
	c := roundConfig(2, 1).WithLayout(telemetry.StateLayoutV5)
	var encs [4]*telemetry.Encoder // v5, v3, v4, v2
	for i, l := range []telemetry.EncoderConfig{c, v3Config(2, 1), v4Config(2, 1), v2Config(2, 1)} {
		e, err := telemetry.NewEncoder(l)
		if err != nil {
			t.Fatal(err)
		}
		encs[i] = e
	}
	t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	sample := func(at time.Duration, tx0, flows0 float64) *proflow.Observation {
		o := obs([]proflow.SwitchSample{sw(tx0, 10, flows0, 0), sw(500, 0, 3, 0)}, []proflow.LeafSample{leaf(100, 100)}, 400, 0)
		o.Time = t0.Add(at)
		o.Switches[0].QueueBytes = 2
		o.Flow.RTTP99 = 0.05
		return o
	}
	v2c, v3c, v4c := v2Config(2, 1), v3Config(2, 1), v4Config(2, 1)
	s5, s3, s4, s2 := make(proflow.State, c.Dim()), make(proflow.State, v3c.Dim()), make(proflow.State, v4c.Dim()), make(proflow.State, v2c.Dim())
	sawDeficit, sawVacated := false, false
	for i, o := range []*proflow.Observation{
		sample(0, 3000, 12), sample(10*time.Second, 3000, 12), sample(20*time.Second, 4000, 2),
		sample(30*time.Second, 0, 0), sample(45*time.Second, 200, 1), sample(90*time.Second, 0, 0),
	} {
		for j, st := range []proflow.State{s5, s3, s4, s2} {
			if err := encs[j].Encode(st, o, 1); err != nil {
				t.Fatal(err)
			}
		}
		sameAsV2(t, i, v2c, s2, c, s5)
		for k := range 2 {
			d5, d3 := s5[c.AggOffset(k)+telemetry.FeatureDeficit], s3[v3c.AggOffset(k)+telemetry.FeatureDeficit]
			m5, m4 := s5[c.AggOffset(k)+telemetry.FeatureVacatedV5], s4[v4c.AggOffset(k)+telemetry.FeatureVacated]
			if d5 != d3 || m5 != m4 {
				t.Errorf("step %d, switch %d: v5 deficit %v and vacated %v, want v3's %v and v4's %v", i, k, d5, m5, d3, m4)
			}
			sawDeficit = sawDeficit || d5 > 0
			sawVacated = sawVacated || m5 > 0
		}
	}
	if !sawDeficit || !sawVacated {
		t.Errorf("the steps never set the deficit (%v) or the vacated flows (%v): the test checks nothing", sawDeficit, sawVacated)
	}
}
