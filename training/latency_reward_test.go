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
	back := writeRead(t, ds)
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

// TestServedReward: with Served, an application-limited outcome counts as
// served in both rewards (φ_norm read as max(φ_norm, a)); without it, or
// with a flow the fabric starves (a = 0), the collapse stays.
func TestServedReward(t *testing.T) {
	c := DefaultRewardConfig()
	in := RewardInputs{ThroughputNorm: 0.1, AppLimited: 0.9}
	plain := c.RealTerms(in)
	c.Served = true
	served := c.RealTerms(in)
	if plain.Throughput != 0.1 || math.Abs(served.Throughput-0.9) > 1e-12 || math.Abs(served.Collapse+c.AlphaColl*0.1) > 1e-12 {
		t.Errorf("real terms: plain %+v, served %+v; want φ_norm 0.1, then 0.9 with collapse −α_coll·0.1", plain, served)
	}
	starved := c.RealTerms(RewardInputs{ThroughputNorm: 0.1})
	if starved.Throughput != 0.1 {
		t.Errorf("starved flow with Served: φ_norm %v, want 0.1", starved.Throughput)
	}

	enc := testEncoder().WithLayout(telemetry.StateLayoutV2)
	s, next := make([]float32, enc.Dim()), make([]float32, enc.Dim())
	next[enc.FlowOffset()+telemetry.FeatureThroughput] = 0.09
	next[enc.FlowOffset()+telemetry.FeatureAppLimited] = 0.9
	step := SyntheticStep{State: s, Next: next, Current: 0, Action: 0, ThroughputBaseline: 0.9}
	got, err := c.SyntheticTerms(enc, step)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Throughput-0.9) > 1e-6 {
		t.Errorf("synthetic φ'_norm %v with Served, want 0.9 (the app-limited share)", got.Throughput)
	}
	v1 := testEncoder()
	step = SyntheticStep{State: make([]float32, v1.Dim()), Next: make([]float32, v1.Dim()), Current: 0, Action: 0, ThroughputBaseline: 0.9}
	if _, err := c.SyntheticTerms(v1, step); err == nil || !strings.Contains(err.Error(), "served needs states of layout") {
		t.Errorf("Served on v1 states: %v, want an error naming the layout", err)
	}
	ds, err := FromEpisodes([]Episode{latencyEpisode(1)}, v1, DefaultRewardConfig(), "unit")
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Relabel(c); err == nil || !strings.Contains(err.Error(), "served needs the app-limited feature") {
		t.Errorf("v1 dataset relabelled with Served: %v, want an error naming the missing feature", err)
	}
}

// TestDeficitReward: a v3 dataset's transitions carry the outcome state's
// deficit of the switch the flow was on, and DeficitDrain charges κ times
// it in Relabel, after a write and a read.
func TestDeficitReward(t *testing.T) {
	enc := testEncoder().WithLayout(telemetry.StateLayoutV3)
	ep := testEpisode(1)
	for i := range ep.Observations {
		for k := range ep.Observations[i].Switches {
			ep.Observations[i].Switches[k].TxRate = 2 * enc.RateScale // draining at C
		}
	}
	c := DefaultRewardConfig()
	ds, err := FromEpisodes([]Episode{ep}, enc, c, "unit")
	if err != nil {
		t.Fatal(err)
	}
	before := append([]float32(nil), ds.R...)
	back := writeRead(t, ds)
	c.Kappa, c.DeficitDrain = 0.5, true
	if err := back.Relabel(c); err != nil {
		t.Fatal(err)
	}
	for i := range back.Len() {
		tr := back.At(i)
		d := tr.Next[enc.AggOffset(tr.Action)+telemetry.FeatureDeficit]
		// One second at twice the bucket rate adds C·1 s = 1/60 of CD.
		if want := float32(i+1) / telemetry.DeficitSeconds; math.Abs(float64(d-want)) > 1e-6 {
			t.Errorf("transition %d: deficit of the outcome %v, want %v", i, d, want)
		}
		want := min(max(float64(before[i])-0.5*float64(d), c.ClipMin), c.ClipMax)
		if math.Abs(float64(back.R[i])-want) > 1e-6 {
			t.Errorf("transition %d: relabelled reward %v, want %v (κ·deficit charged)", i, back.R[i], want)
		}
	}
}

// writeRead writes ds and reads it back, failing t on any error.
func writeRead(t *testing.T, ds *Dataset) *Dataset {
	t.Helper()
	var buf bytes.Buffer
	if err := ds.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadDataset(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
