package training

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/telemetry"
)

// latencyEpisode is testEpisode with an RTT p99 that rises from 50 ms.
func latencyEpisode(id int) Episode {
	ep := testEpisode(id)
	for t := range ep.Observations {
		ep.Observations[t].Flow.RTTP99 = 0.050 * (1 + 0.2*float64(t))
	}
	return ep
}

// TestLatencyReward: a v2 dataset keeps ℓ̂ of each outcome state, λ
// charges it in Relabel, and the column survives a write and a read; a v1
// dataset refuses λ.
func TestLatencyReward(t *testing.T) {
	enc := testEncoder().WithLayout(telemetry.StateLayoutV2)
	c := DefaultRewardConfig()
	ds, err := FromEpisodes([]Episode{latencyEpisode(1)}, enc, c, "unit")
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Latency) != ds.Len() {
		t.Fatalf("%d latency inputs for %d transitions", len(ds.Latency), ds.Len())
	}
	before := append([]float32(nil), ds.R...)
	for i := range ds.Len() {
		tr := ds.At(i)
		want := tr.Next[enc.FlowOffset()+telemetry.FeatureLatency]
		if ds.Latency[i] != want {
			t.Errorf("transition %d: latency input %v, want the next state's feature %v", i, ds.Latency[i], want)
		}
	}
	if ds.Latency[3] < 0.7 {
		t.Errorf("last transition: latency input %v, want about 0.8 (RTT p99 up 80%%)", ds.Latency[3])
	}
	var buf bytes.Buffer
	if err := ds.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadDataset(&buf)
	if err != nil {
		t.Fatal(err)
	}
	c.Lambda = 0.5
	if err := back.Relabel(c); err != nil {
		t.Fatal(err)
	}
	for i := range back.Len() {
		want := float64(before[i]) - 0.5*float64(ds.Latency[i])
		if want = min(max(want, c.ClipMin), c.ClipMax); math.Abs(float64(back.R[i])-want) > 1e-6 {
			t.Errorf("transition %d: relabelled reward %v, want %v", i, back.R[i], want)
		}
	}

	v1, err := FromEpisodes([]Episode{latencyEpisode(1)}, testEncoder(), DefaultRewardConfig(), "unit")
	if err != nil {
		t.Fatal(err)
	}
	if err := v1.Relabel(c); err == nil || !strings.Contains(err.Error(), "lambda 0.5 needs the latency input") {
		t.Errorf("v1 dataset relabelled with lambda: %v, want an error naming the missing latency input", err)
	}
}

// TestSyntheticLatency: the synthetic reward charges the predicted next
// state's ℓ̂ for either action, and refuses λ on v1 states.
func TestSyntheticLatency(t *testing.T) {
	enc := testEncoder().WithLayout(telemetry.StateLayoutV2)
	s, next := make([]float32, enc.Dim()), make([]float32, enc.Dim())
	next[enc.FlowOffset()+telemetry.FeatureThroughput] = 0.9
	next[enc.FlowOffset()+telemetry.FeatureLatency] = 0.6
	for _, a := range []int{0, 2} {
		step := SyntheticStep{State: s, Next: next, Current: 0, Action: a, ThroughputBaseline: 0.9}
		c := DefaultRewardConfig()
		base, err := c.SyntheticTerms(enc, step)
		if err != nil {
			t.Fatal(err)
		}
		c.Lambda = 0.5
		got, err := c.SyntheticTerms(enc, step)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Latency+0.3) > 1e-6 || math.Abs(got.Sum()-base.Sum()+0.3) > 1e-6 {
			t.Errorf("action %d: latency term %v (sum %v, without λ %v), want −0.3", a, got.Latency, got.Sum(), base.Sum())
		}
	}
	c := DefaultRewardConfig()
	c.Lambda = 0.5
	v1 := testEncoder()
	step := SyntheticStep{State: make([]float32, v1.Dim()), Next: make([]float32, v1.Dim()), Current: 0, Action: 0, ThroughputBaseline: 0.9}
	if _, err := c.SyntheticTerms(v1, step); err == nil || !strings.Contains(err.Error(), "needs states of layout") {
		t.Errorf("λ on v1 states: %v, want an error naming the layout", err)
	}
}
