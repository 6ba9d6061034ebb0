package training

import (
	"testing"

	"github.com/proflow-sdn/proflow/telemetry"
)

func TestClampState(t *testing.T) {
	enc := testEncoder()
	s := make([]float32, enc.Dim())
	for i := range s {
		s[i] = 5
		if i%2 == 1 {
			s[i] = -5
		}
	}
	s[0] = float32(nan())
	if err := ClampState(enc, s, 2); err != nil {
		t.Fatal(err)
	}
	for k := range enc.NumSwitches {
		x := s[enc.AggOffset(k):][:telemetry.SwitchFeatures]
		lo, nlo := float32(0), float32(0)
		if k == 2 {
			lo, nlo = -1, -0.5
		}
		for f, v := range x {
			want := map[int][2]float32{
				telemetry.FeatureTxRate: {0, 1}, telemetry.FeatureTxRateChange: {-1, 1},
				telemetry.FeatureOverflow: {lo, 1}, telemetry.FeatureFlowCount: {nlo, 1}, telemetry.FeatureElephant: {0, 1},
			}[f]
			if v != want[0] && v != want[1] {
				t.Errorf("switch %d feature %d = %v, want a bound of [%v, %v]", k, f, v, want[0], want[1])
			}
		}
	}
	if k, err := Placement(enc, s); err != nil || k != 2 {
		t.Errorf("Placement = %d, %v; want 2", k, err)
	}
	if s[0] != 0 {
		t.Errorf("NaN clamped to %v, want 0", s[0])
	}
	flow := s[enc.FlowOffset():]
	if flow[telemetry.FeatureThroughputChange] != -1 && flow[telemetry.FeatureThroughputChange] != 1 {
		t.Errorf("Δφ = %v, want ±1", flow[telemetry.FeatureThroughputChange])
	}
	if err := ClampState(enc, s[:5], 0); err == nil {
		t.Error("short state: no error")
	}
	if err := ClampState(enc, s, 4); err == nil {
		t.Error("switch 4 of 4: no error")
	}
	h := s[enc.PlacementOffset():][:4]
	h[0] = 1
	if _, err := Placement(enc, s); err == nil {
		t.Error("two entries set: no error")
	}
	clear(h)
	if _, err := Placement(enc, s); err == nil {
		t.Error("no entry set: no error")
	}
}

// TestClampStateAppended checks that the features layouts v2–v5 append to
// each switch's block (backlog, deficit, vacated flows) are clipped to
// [0, 1] on every switch, the current one included.
func TestClampStateAppended(t *testing.T) {
	for _, layout := range []string{telemetry.StateLayoutV2, telemetry.StateLayoutV3, telemetry.StateLayoutV4, telemetry.StateLayoutV5} {
		enc := testEncoder().WithLayout(layout)
		s := make([]float32, enc.Dim())
		for i := range s {
			s[i] = 5
			if i%2 == 1 {
				s[i] = -5
			}
		}
		if err := ClampState(enc, s, 1); err != nil {
			t.Fatal(err)
		}
		for k := range enc.NumSwitches {
			x := s[enc.AggOffset(k):][:enc.SwitchWidth()]
			for f := telemetry.FeatureQueue; f < len(x); f++ {
				if x[f] != 0 && x[f] != 1 {
					t.Errorf("%s: switch %d feature %d = %v, want 0 or 1", layout, k, f, x[f])
				}
			}
		}
	}
}
