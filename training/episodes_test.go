package training

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

func testEpisode(id int) Episode {
	ep := Episode{ID: id, Baseline: proflow.Baseline{Overflow: 23000, FlowCount: 2, Throughput: 23e6}, Placements: []int{0, 0, 2, 2, 2}}
	for t := range ep.Placements {
		o := proflow.Observation{Time: time.Unix(int64(t), 0), Switches: make([]proflow.SwitchSample, 4), Leaves: make([]proflow.LeafSample, 3)}
		for k := range o.Switches {
			o.Switches[k] = proflow.SwitchSample{TxRate: 1e6 * float64(k+t), OverflowRate: 1000 * float64(k*t+1), FlowCount: float64(2 + k + t), ElephantRate: 5e5}
		}
		o.Flow = proflow.FlowSample{Throughput: 23e6 - 1e6*float64(t), CongestionRate: 1e7}
		ep.Observations = append(ep.Observations, o)
	}
	return ep
}

func TestFromEpisodes(t *testing.T) {
	enc := testEncoder()
	c := DefaultRewardConfig()
	eps := []Episode{testEpisode(3), testEpisode(8)}
	ds, err := FromEpisodes(eps, enc, c, "unit")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 8 || !ds.HasRewardInputs() || ds.Corpus != "unit" {
		t.Fatalf("Len %d, reward inputs %v, corpus %q; want 8, true, unit", ds.Len(), ds.HasRewardInputs(), ds.Corpus)
	}
	// Encode by hand.
	e, _ := telemetry.NewEncoder(enc)
	e.SetBaseline(eps[0].Baseline)
	var states []proflow.State
	for i, o := range eps[0].Observations {
		s := make(proflow.State, enc.Dim())
		if err := e.Encode(s, &o, eps[0].Placements[i]); err != nil {
			t.Fatal(err)
		}
		states = append(states, s)
	}
	for i := range 4 {
		tr := ds.At(i)
		if diff := cmp.Diff([]float32(states[i]), tr.State); diff != "" {
			t.Errorf("transition %d state (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff([]float32(states[i+1]), tr.Next); diff != "" {
			t.Errorf("transition %d next state (-want +got):\n%s", i, diff)
		}
		// No transition is Done, the last one included: the episode was cut
		// off, not terminated, so it bootstraps from its next state.
		if tr.Current != eps[0].Placements[i] || tr.Action != eps[0].Placements[i+1] || tr.Episode != 3 || tr.Step != i || tr.Done {
			t.Errorf("transition %d: current %d action %d episode %d step %d done %v", i, tr.Current, tr.Action, tr.Episode, tr.Step, tr.Done)
		}
		in, err := MeasureReward(enc, eps[0].Baseline, &eps[0].Observations[i+1], eps[0].Placements[i+1])
		if err != nil {
			t.Fatal(err)
		}
		if tr.Reward != float32(c.Real(in)) || *tr.Inputs != (RewardInputs{float64(float32(in.ThroughputNorm)), float64(float32(in.Overflow)), float64(float32(in.CrowdExcess)), float64(float32(in.Drain)), 0, 0, 0}) {
			t.Errorf("transition %d reward %v inputs %+v, want %v %+v", i, tr.Reward, *tr.Inputs, c.Real(in), in)
		}
		if want := float32(23e6 / enc.ThroughputScale); tr.ThroughputBaseline != want {
			t.Errorf("throughput baseline %v, want %v", tr.ThroughputBaseline, want)
		}
	}
	// The second episode starts from a reset encoder: same states.
	if diff := cmp.Diff(ds.At(0).State, ds.At(4).State); diff != "" {
		t.Errorf("second episode's first state differs (encoder not reset):\n%s", diff)
	}
	if st := ds.Stats(); st.Reroutes != 2 || st.Episodes != 2 || st.Done != 0 {
		t.Errorf("stats %+v, want 2 reroutes in 2 episodes, none done", st)
	}

	for name, mutate := range map[string]func(*Episode){
		"placements":    func(e *Episode) { e.Placements = e.Placements[:3] },
		"one interval":  func(e *Episode) { e.Observations, e.Placements = e.Observations[:1], e.Placements[:1] },
		"baseline":      func(e *Episode) { e.Baseline.Throughput = 0 },
		"bad switch":    func(e *Episode) { e.Placements[2] = 7 },
		"missing leaf":  func(e *Episode) { e.Observations[1].Leaves = nil },
		"negative rate": func(e *Episode) { e.Observations[2].Flow.Throughput = -1 },
	} {
		ep := testEpisode(1)
		mutate(&ep)
		if _, err := FromEpisodes([]Episode{ep}, enc, c, ""); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
