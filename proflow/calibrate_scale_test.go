package main

import (
	"math"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// TestThresholdOptionsScaleWithTheBucket: App. E's grid at the paper's
// 200 Mbit/s, the same grid times 10/200 at the ovs profile's 10 Mbit/s.
func TestThresholdOptionsScaleWithTheBucket(t *testing.T) {
	if got, want := thresholdOptions(sim.TestbedConfig()), eval.DefaultThresholdOptions(); got != want {
		t.Errorf("testbed: %+v, want App. E's %+v", got, want)
	}
	got := thresholdOptions(sim.OVSConfig())
	for _, f := range []struct {
		name      string
		got, want float64
	}{{"from", got.From, 1000}, {"to", got.To, 1750}, {"step", got.Step, 25}} {
		if math.Abs(f.got-f.want) > 1e-9 {
			t.Errorf("ovs: %s %v, want %v", f.name, f.got, f.want)
		}
	}
}

func TestSelfOverflowComparison(t *testing.T) {
	var b strings.Builder
	writeSelfOverflowComparison(&b, "recorded d", &eval.ThresholdReport{Episodes: 2, Samples: 270, Lowest: 1000},
		"profile ovs", &eval.ThresholdReport{Episodes: 40, Samples: 11200, Mean: 3, P95: 7, Max: 9, Lowest: math.NaN()})
	for _, want := range []string{"| recorded d | 2 | 270 | 0 | 0 | 0 | 1000 |", "| profile ovs | 40 | 11200 | 3 | 7 | 9 | none in range |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, b.String())
		}
	}
}
