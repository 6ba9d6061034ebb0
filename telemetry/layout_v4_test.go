package telemetry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// v4Config is roundConfig in StateLayoutV4: Cq = 5 bytes, Cn = 10 flows,
// T = 30 s.
func v4Config(switches, leaves int) telemetry.EncoderConfig {
	return roundConfig(switches, leaves).WithLayout(telemetry.StateLayoutV4)
}

func TestLayoutV4Config(t *testing.T) {
	c := v4Config(4, 3)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got := []int{c.AggOffset(1), c.LeafOffset(0), c.PlacementOffset(), c.FlowOffset(), c.Dim(), c.CandidateDim()}
	want := []int{7, 28, 34, 38, 44, 46} // [x_agg 7·4, x_leaf 2·3, h 4, x_flow 6]; rows 5·7+1+4+6
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
	if c.VacatedSeconds != telemetry.VacatedDefault || c.DeficitScale != 0 || c.QueueScale != 5 {
		t.Errorf("vacated %v s, deficit scale %v, queue scale %v; want %v, 0, 5", c.VacatedSeconds, c.DeficitScale, c.QueueScale, telemetry.VacatedDefault)
	}
	if !c.HasVacated() || !c.HasFlowSignals() || c.HasDeficit() || v3Config(4, 3).HasVacated() || v2Config(4, 3).HasVacated() {
		t.Error("HasVacated/HasFlowSignals/HasDeficit: want v4 vacated and flow signals only, v2 and v3 no vacated")
	}
	if !telemetry.KnownLayout(telemetry.StateLayoutV4) {
		t.Error("KnownLayout(v4) = false")
	}
	if v2 := c.WithLayout(telemetry.StateLayoutV2); v2 != v2Config(4, 3) {
		t.Errorf("v4 to v2: %+v, want the v2 config (no vacated seconds)", v2)
	}
	for _, tc := range []struct {
		c    telemetry.EncoderConfig
		want string
	}{
		{func() telemetry.EncoderConfig { o := c; o.VacatedSeconds = 0; return o }(), "vacated_seconds 0, want a positive"},
		{func() telemetry.EncoderConfig { o := v2Config(4, 3); o.VacatedSeconds = 30; return o }(), "vacated_seconds 30 in layout proflow-state-v2, want 0"},
		{func() telemetry.EncoderConfig { o := c; o.DeficitScale = 1; return o }(), "deficit_scale 1 in layout proflow-state-v4, want 0"},
	} {
		if err := tc.c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
		}
	}
	if field, _, _, ok := c.ScalingMismatch(func() telemetry.EncoderConfig { o := c; o.VacatedSeconds *= 2; return o }()); ok || field != "encoder.vacated_seconds" {
		t.Errorf("a doubled vacated time: mismatch %q (ok %v), want encoder.vacated_seconds", field, ok)
	}
}

// TestEncodeV4 checks the vacated flows v4 adds, step by step against the
// leaky peak m ← max(n, m − Cn·Δt/T) worked by hand; the other features
// are the v2 encoder's.
func TestEncodeV4(t *testing.T) {
	c := v4Config(2, 1)
	e4, e2 := encoderPair(t, c)
	t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	sample := func(at time.Duration, flows0 float64) *proflow.Observation {
		o := obs([]proflow.SwitchSample{sw(900, 10, flows0, 0), sw(500, 0, 3, 0)}, []proflow.LeafSample{leaf(100, 100)}, 400, 0)
		o.Time = t0.Add(at)
		o.Switches[0].QueueBytes = 2
		o.Flow.RTTP99 = 0.05
		return o
	}
	steps := []struct {
		o  *proflow.Observation
		v0 float32 // switch 0; switch 1 keeps 3 flows and reads 0
	}{
		{sample(0, 12), 0},                   // first sample: m = n
		{sample(10*time.Second, 2), 2.0 / 3}, // m = 12 − 10·10/30 = 8.67; (8.67 − 2)/10
		{sample(20*time.Second, 2), 1.0 / 3}, // m = 5.33
		{sample(20*time.Second, 2), 1.0 / 3}, // the same time: Δt 0
		{sample(15*time.Second, 2), 1.0 / 3}, // earlier: Δt 0
		{sample(50*time.Second, 2), 0},       // m decayed to n
		{sample(60*time.Second, 30), 0},      // a crowd arrives: m = n
		{sample(61*time.Second, 0), 1},       // and leaves: 29.67/10 clipped
		{sample(76*time.Second, 0), 1},       // m = 24.67
		{sample(91*time.Second*2, 0), 0},     // long gone
		{sample(91*time.Second*2+1, 5), 0},   // rising: m = n
	}
	obsList, want := make([]*proflow.Observation, len(steps)), make([]float32, len(steps))
	for i, st := range steps {
		obsList[i], want[i] = st.o, st.v0
	}
	appendedSteps(t, c, e4, e2, 1, telemetry.FeatureVacated, obsList, want)
	s4 := make(proflow.State, c.Dim())

	// Reset forgets the peaks: a switch emptied right after it reads 0.
	if err := e4.Encode(s4, sample(200*time.Second, 20), 1); err != nil {
		t.Fatal(err)
	}
	e4.Reset()
	if err := e4.Encode(s4, sample(201*time.Second, 0), 1); err != nil {
		t.Fatal(err)
	}
	if got := s4[c.AggOffset(0)+telemetry.FeatureVacated]; got != 0 {
		t.Errorf("after Reset: vacated %v, want 0 (first sample)", got)
	}
}
