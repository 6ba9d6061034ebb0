package policy

import (
	"math"
	"testing"
)

func TestReactiveConfigFor(t *testing.T) {
	def := DefaultReactiveConfig()
	for _, tc := range []struct {
		name string
		rate float64
		want float64
	}{
		{"paper's 200 Mbit/s", PaperBucketRate, 27000},
		{"ovs 10 Mbit/s", 10e6 / 8, 1350},
		{"20 Mbit/s", 20e6 / 8, 2700},
		{"unknown rate", 0, 27000},
		{"negative rate", -1, 27000},
		{"infinite rate", math.Inf(1), 27000},
	} {
		c := ReactiveConfigFor(tc.rate)
		if math.Abs(c.Threshold-tc.want) > 1e-9 {
			t.Errorf("%s: threshold %v, want %v", tc.name, c.Threshold, tc.want)
		}
		if c.Consecutive != def.Consecutive || c.Cooldown != def.Cooldown {
			t.Errorf("%s: %+v, want consecutive and cooldown of %+v", tc.name, c, def)
		}
	}
	if ReactiveConfigFor(PaperBucketRate) != def {
		t.Errorf("at the paper's rate: %+v, want DefaultReactiveConfig %+v", ReactiveConfigFor(PaperBucketRate), def)
	}
}
