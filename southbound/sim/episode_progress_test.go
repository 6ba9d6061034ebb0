package sim_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

func TestRunEpisodeProgress(t *testing.T) {
	spec := sim.EpisodeSpec{Scenario: mustScenario(t, "S1"), Seed: 3, Policy: "threshold", NewPolicy: thresholdFactory(reactiveThreshold, reactiveConsecutive)}
	plain, err := sim.RunEpisode(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var done []time.Duration
	spec.Progress = func(d, total time.Duration) {
		if total != spec.Scenario.Length() {
			t.Errorf("progress total %v, want the episode's length %v", total, spec.Scenario.Length())
		}
		done = append(done, d)
	}
	watched, err := sim.RunEpisode(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var want []time.Duration
	for d := sim.ProgressEvery; d <= spec.Scenario.Length(); d += sim.ProgressEvery {
		want = append(want, d)
	}
	if !slices.Equal(done, want) {
		t.Errorf("progress called at %v, want every %v up to %v: %v", done, sim.ProgressEvery, spec.Scenario.Length(), want)
	}
	// Watching does not change the episode.
	var a, b bytes.Buffer
	if err := trace.Write(&a, plain); err != nil {
		t.Fatal(err)
	}
	if err := trace.Write(&b, watched); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the trace with a progress callback differs from the trace without")
	}
}

func TestRunEpisodeProgressAtEnd(t *testing.T) {
	// A length that is no multiple of ProgressEvery still ends with a call
	// at the end.
	sc := &sim.Scenario{Name: "short", ProtectedSwitch: "agg1", CongestionStart: sim.Duration(10 * time.Second), Window: sim.Duration(2 * time.Second)}
	var done []time.Duration
	_, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{Scenario: sc, Seed: 1, NewPolicy: thresholdFactory(reactiveThreshold, reactiveConsecutive),
		Progress: func(d, _ time.Duration) { done = append(done, d) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{5 * time.Second, 10 * time.Second, 12 * time.Second}; !slices.Equal(done, want) {
		t.Errorf("progress called at %v, want %v", done, want)
	}
}
