package training

import (
	"errors"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// sized returns the v2 encoder of a fabric of s switches and l congestion
// leaves at bucket rate rate (bytes/s), built as the simulator's profiles
// build theirs.
func sized(s, l int, rate float64) telemetry.EncoderConfig {
	topo := proflow.PaperTopology()
	topo.Switches, topo.Leaves = nil, nil
	for k := range s {
		topo.Switches = append(topo.Switches, "agg"+string(rune('a'+k)))
	}
	for k := range l {
		topo.Leaves = append(topo.Leaves, "leaf"+string(rune('a'+k)))
	}
	topo.BucketRate = rate
	enc := telemetry.DefaultEncoderConfig(topo)
	enc.Layout, enc.QueueScale = telemetry.StateLayoutV2, rate/10
	return enc
}

func TestCheckFabrics(t *testing.T) {
	a, b, c := sized(4, 3, 25e6), sized(2, 3, 25e6), sized(8, 7, 50e6)
	if err := CheckFabrics([]telemetry.EncoderConfig{a, b, c}, true); err != nil {
		t.Errorf("three sizes, two rates: %v", err)
	}
	if err := CheckFabrics([]telemetry.EncoderConfig{a}, false); err != nil {
		t.Errorf("one dataset, not universal: %v", err)
	}
	if got := FabricName(c); got != "8x7" {
		t.Errorf("FabricName = %q, want 8x7", got)
	}
	v1 := b
	v1.Layout, v1.QueueScale = "", 0
	drop := b
	drop.DropWindow++
	scale := b
	scale.IngressScale *= 2
	for _, tc := range []struct {
		name      string
		encs      []telemetry.EncoderConfig
		universal bool
		is        error
		want      string
	}{
		{"none", nil, true, nil, "no datasets"},
		{"two, not universal", []telemetry.EncoderConfig{a, b}, false, ErrNotUniversal, "2 datasets (4x3, 2x3)"},
		{"same size", []telemetry.EncoderConfig{a, b, sized(2, 3, 50e6)}, true, ErrSameFabric, "datasets 2 and 3 are both of fabric 2x3"},
		{"layout", []telemetry.EncoderConfig{a, v1}, true, ErrScalingMismatch, "dataset 2 (fabric 2x3) has state_layout proflow-state-v1, dataset 1 (fabric 4x3) proflow-state-v2"},
		{"drop window", []telemetry.EncoderConfig{a, drop}, true, ErrScalingMismatch, "encoder.drop_window 11"},
		{"ingress", []telemetry.EncoderConfig{a, scale}, true, ErrScalingMismatch, "encoder.ingress_scale/rate_scale 4, dataset 1 (fabric 4x3) 2"},
		{"invalid", []telemetry.EncoderConfig{a, {}}, true, nil, "dataset 2: "},
	} {
		err := CheckFabrics(tc.encs, tc.universal)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: %v, want an error containing %q (%v)", tc.name, err, tc.want, tc.is)
		}
	}
}
