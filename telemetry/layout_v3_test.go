package telemetry_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// v3Config is roundConfig in StateLayoutV3: Cq = 5 bytes, CD = 1000·60 s =
// 60,000 bytes.
func v3Config(switches, leaves int) telemetry.EncoderConfig {
	return roundConfig(switches, leaves).WithLayout(telemetry.StateLayoutV3)
}

func TestLayoutV3Offsets(t *testing.T) {
	c := v3Config(4, 3)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got := []int{c.AggOffset(1), c.LeafOffset(0), c.LeafOffset(2), c.PlacementOffset(), c.FlowOffset(), c.Dim(), c.CandidateDim()}
	want := []int{7, 28, 32, 34, 38, 44, 46} // [x_agg 7·4, x_leaf 2·3, h 4, x_flow 6]; rows 5·7+1+4+6
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
	if c.QueueScale != 5 || c.DeficitScale != 60000 || c.LayoutName() != telemetry.StateLayoutV3 {
		t.Errorf("queue scale %v, deficit scale %v, layout %q; want 5, 60000 and %q", c.QueueScale, c.DeficitScale, c.LayoutName(), telemetry.StateLayoutV3)
	}
	if v2 := c.WithLayout(telemetry.StateLayoutV2); v2 != v2Config(4, 3) {
		t.Errorf("v3 to v2: %+v, want the v2 config (no deficit scale)", v2)
	}
	if !c.HasFlowSignals() || !c.HasDeficit() || v2Config(4, 3).HasDeficit() || roundConfig(4, 3).HasFlowSignals() {
		t.Error("HasFlowSignals/HasDeficit: want v3 both, v2 no deficit, v1 neither")
	}
	for _, l := range []string{telemetry.StateLayout, telemetry.StateLayoutV2, telemetry.StateLayoutV3} {
		if !telemetry.KnownLayout(l) {
			t.Errorf("KnownLayout(%q) = false", l)
		}
	}
	if telemetry.KnownLayout("proflow-state-v9") {
		t.Error(`KnownLayout("proflow-state-v9") = true`)
	}
	if field, _, _, ok := c.ScalingMismatch(func() telemetry.EncoderConfig { o := c; o.DeficitScale *= 2; return o }()); ok || field != "encoder.deficit_scale/rate_scale" {
		t.Errorf("a doubled deficit scale: mismatch %q (ok %v), want encoder.deficit_scale/rate_scale", field, ok)
	}
}

// TestEncodeV3 checks the deficit v3 adds, step by step against the
// recursion D ← clip(D + (ρ − C)·Δt, 0, CD) worked by hand; the other
// features are the v2 encoder's.
func TestEncodeV3(t *testing.T) {
	c := v3Config(2, 1)
	e3, e2 := encoderPair(t, c)
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	sample := func(at time.Duration, tx0 float64) *proflow.Observation {
		o := obs([]proflow.SwitchSample{sw(tx0, 10, 4, 0), sw(500, 0, 0, 0)}, []proflow.LeafSample{leaf(100, 100)}, 400, 0)
		o.Time = t0.Add(at)
		o.Switches[0].QueueBytes = 2
		o.Flow.RTTP99 = 0.05
		return o
	}
	steps := []struct {
		o  *proflow.Observation
		d0 float32 // switch 0; switch 1 sends below C and stays at 0
	}{
		{sample(0, 3000), 0},                            // first sample: no Δt
		{sample(10*time.Second, 3000), 20000.0 / 60000}, // +2000 B/s × 10 s
		{sample(20*time.Second, 4000), 50000.0 / 60000}, // +3000 × 10
		{sample(30*time.Second, 4000), 1},               // 80,000 clipped at CD
		{sample(40*time.Second, 0), 50000.0 / 60000},    // refilled at C: −1000 × 10
		{sample(40*time.Second, 9000), 50000.0 / 60000}, // the same time: Δt 0
		{sample(35*time.Second, 9000), 50000.0 / 60000}, // earlier: Δt 0
		{sample(45*time.Second, 1000), 50000.0 / 60000}, // at C: no change
		{sample(95*time.Second, 0), 0},                  // refilled: −1000 × 50
	}
	obsList, want := make([]*proflow.Observation, len(steps)), make([]float32, len(steps))
	for i, st := range steps {
		obsList[i], want[i] = st.o, st.d0
	}
	appendedSteps(t, c, e3, e2, 0, telemetry.FeatureDeficit, obsList, want)
	s3 := make(proflow.State, c.Dim())

	// Reset forgets the deficits; an observation without a time adds
	// nothing.
	if err := e3.Encode(s3, sample(100*time.Second, 9000), 0); err != nil {
		t.Fatal(err)
	}
	if got := s3[c.AggOffset(0)+telemetry.FeatureDeficit]; got == 0 {
		t.Fatal("8000 B/s over C for 5 s left the deficit at 0")
	}
	e3.Reset()
	for i, o := range []*proflow.Observation{sample(110*time.Second, 9000), sample(120*time.Second, 9000)} {
		if i == 1 {
			o.Time = time.Time{}
		}
		if err := e3.Encode(s3, o, 0); err != nil {
			t.Fatal(err)
		}
		if got := s3[c.AggOffset(0)+telemetry.FeatureDeficit]; got != 0 {
			t.Errorf("after Reset, sample %d: deficit %v, want 0 (first sample, then no time)", i, got)
		}
	}
}

// sameAsV2 checks that state s of layout c (v3 or v4) carries, at step i,
// the v2 encoder's state s2 (layout v2) in every feature but the one c
// appends to each switch.
func sameAsV2(t *testing.T, i int, v2 telemetry.EncoderConfig, s2 proflow.State, c telemetry.EncoderConfig, s proflow.State) {
	t.Helper()
	for k := range c.NumSwitches {
		if diff := cmp.Diff(s2[v2.AggOffset(k):][:telemetry.SwitchFeaturesV2], s[c.AggOffset(k):][:telemetry.SwitchFeaturesV2]); diff != "" {
			t.Errorf("step %d: switch %d's v2 features differ (-v2 +%s):\n%s", i, k, c.LayoutName(), diff)
		}
	}
	if diff := cmp.Diff(s2[v2.LeafOffset(0):], s[c.LeafOffset(0):]); diff != "" {
		t.Errorf("step %d: leaf, placement and flow features differ (-v2 +%s):\n%s", i, c.LayoutName(), diff)
	}
}

// encoderPair returns an encoder of c and one of the v2 layout of c's
// size.
func encoderPair(t *testing.T, c telemetry.EncoderConfig) (*telemetry.Encoder, *telemetry.Encoder) {
	t.Helper()
	e, err := telemetry.NewEncoder(c)
	if err != nil {
		t.Fatal(err)
	}
	e2, err := telemetry.NewEncoder(v2Config(c.NumSwitches, c.NumLeaves))
	if err != nil {
		t.Fatal(err)
	}
	return e, e2
}

// appendedSteps encodes obs in turn with e (layout c, v3 or v4) and e2
// (v2), the flow on switch current, and checks at each step that switch
// 0's appended feature is want[i], switch 1's is 0, and every other
// feature is the v2 encoder's (sameAsV2).
func appendedSteps(t *testing.T, c telemetry.EncoderConfig, e, e2 *telemetry.Encoder, current, feature int, obs []*proflow.Observation, want []float32) {
	t.Helper()
	v2 := v2Config(c.NumSwitches, c.NumLeaves)
	s, s2 := make(proflow.State, c.Dim()), make(proflow.State, v2.Dim())
	for i, o := range obs {
		if err := e.Encode(s, o, current); err != nil {
			t.Fatal(err)
		}
		if err := e2.Encode(s2, o, current); err != nil {
			t.Fatal(err)
		}
		got := []float32{s[c.AggOffset(0)+feature], s[c.AggOffset(1)+feature]}
		if diff := cmp.Diff([]float32{want[i], 0}, got, approx); diff != "" {
			t.Errorf("step %d: %s feature %d of switches 0 and 1 (-want +got):\n%s", i, c.LayoutName(), feature, diff)
		}
		sameAsV2(t, i, v2, s2, c, s)
	}
}
