package serve

import (
	"testing"

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
