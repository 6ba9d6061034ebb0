package ovsfabric_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// A sweep that cannot run is refused before any fabric is built: every
// problem named at once.
func TestSweepRefusesBeforeRunning(t *testing.T) {
	static, err := eval.ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	s1 := mustScenario(t, "S1")
	sw := ovsfabric.Sweep{
		Experiment: ovsfabric.Experiment{Fabric: ovsfabric.Config{BucketRate: "10mbit"}},
		Scenarios:  []*sim.Scenario{s1, s1},
		Policies:   []eval.PolicySpec{static, static, eval.OraclePolicy()},
		Repeats:    1,
	}
	_, err = sw.Run(context.Background())
	if err == nil {
		t.Fatal("Run: nil error, want the sweep refused")
	}
	for _, want := range []string{"scenario 1", `policy 1: unnamed or named as another ("static")`, "policy oracle"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run: %v\nwant it to name %q", err, want)
		}
	}
	sw = ovsfabric.Sweep{Scenarios: []*sim.Scenario{s1}, Policies: []eval.PolicySpec{static}}
	if _, err := sw.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "0 repeats") {
		t.Errorf("Run with no repeats: %v, want it refused", err)
	}
}

// The window handed to eval.Summarize is the shortest scaled one, after
// the -warmup/-duration overrides.
func TestSweepWindow(t *testing.T) {
	short := &sim.Scenario{Name: "short", ProtectedSwitch: "agg1", Window: sim.Duration(40 * time.Second)}
	sw := ovsfabric.Sweep{Experiment: ovsfabric.Experiment{Fabric: ovsfabric.Config{BucketRate: "10mbit"}, Scale: ovsfabric.DefaultScale()},
		Scenarios: []*sim.Scenario{mustScenario(t, "S1"), short}}
	if w, err := sw.Window(); err != nil || w != 20*time.Second {
		t.Errorf("Window = %v, %v; want 20s (40 s ÷ 2)", w, err)
	}
	sw.Experiment.Window = 12 * time.Second
	if w, err := sw.Window(); err != nil || w != 12*time.Second {
		t.Errorf("Window with a 12 s override = %v, %v; want 12s", w, err)
	}
	sw.Experiment.Fabric.BucketRate = "fast"
	if _, err := sw.Window(); err == nil {
		t.Error("Window with bucket rate \"fast\": nil error")
	}
}
