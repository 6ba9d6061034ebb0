package serve

import (
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
)

// The reactive reference policy's threshold follows the fabric's bucket
// rate (27,000/s at the paper's 25 MB/s, 1,350/s at 10 Mbit/s) unless the
// config sets one.
func TestReactiveThresholdFollowsBucket(t *testing.T) {
	for _, tc := range []struct {
		bucket, set, want float64
	}{
		{bucket: policy.PaperBucketRate, want: 27000},
		{bucket: 1.25e6, want: 1350},
		{bucket: 1.25e6, set: 2000, want: 2000},
	} {
		topo := proflow.PaperTopology()
		topo.BucketRate = tc.bucket
		c := &Config{Policy: PolicyConfig{Kind: "reactive"}}
		if tc.set != 0 {
			c.Policy.Reactive = &ReactiveConfig{ThresholdBytesPerSec: tc.set}
		}
		parts, err := flowParts(c, topo)
		if err != nil {
			t.Fatal(err)
		}
		pol, err := parts.Policy(proflow.ProtectedFlow{})
		if err != nil {
			t.Fatal(err)
		}
		if got := pol.(*policy.Reactive).Config().Threshold; got != tc.want {
			t.Errorf("bucket %v B/s, threshold set %v: ξ_th %v, want %v", tc.bucket, tc.set, got, tc.want)
		}
	}
}

// The latency-threshold policy runs with the testbed calibration, or with
// the overrides the config sets (a key left out keeps its default).
func TestLatencyThresholdFromConfig(t *testing.T) {
	def := policy.DefaultLatencyThresholdConfig()
	set := def
	set.Ratio, set.Cooldown = 1.4, 3*time.Second
	for _, tc := range []struct {
		yaml *LatencyThresholdConfig
		want policy.LatencyThresholdConfig
	}{
		{nil, def},
		{&LatencyThresholdConfig{Ratio: 1.4, Cooldown: 3 * time.Second}, set},
	} {
		c := &Config{Policy: PolicyConfig{Kind: "latency-threshold", LatencyThreshold: tc.yaml}}
		parts, err := flowParts(c, proflow.PaperTopology())
		if err != nil {
			t.Fatal(err)
		}
		pol, err := parts.Policy(proflow.ProtectedFlow{})
		if err != nil {
			t.Fatal(err)
		}
		if got := pol.(*policy.LatencyThreshold).Config(); got != tc.want {
			t.Errorf("latency_threshold %+v: settings %+v, want %+v", tc.yaml, got, tc.want)
		}
	}
	c := &Config{Policy: PolicyConfig{Kind: "latency-threshold", LatencyThreshold: &LatencyThresholdConfig{CompletionRatio: 0.5}}}
	if _, err := flowParts(c, proflow.PaperTopology()); err == nil || !strings.Contains(err.Error(), "policy.latency_threshold") || !strings.Contains(err.Error(), "completion_ratio 0.5, want a finite number > 1") {
		t.Errorf("completion_ratio 0.5: %v, want an error naming policy.latency_threshold and the value", err)
	}
}
