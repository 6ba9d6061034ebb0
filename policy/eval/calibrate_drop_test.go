package eval

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// The default throughput-drop settings are what the calibration measures on
// the testbed profile; the datacenter profile recovers from a move faster.
func TestCalibrateThroughputDropProfiles(t *testing.T) {
	for _, tc := range []struct {
		cfg  sim.Config
		want policy.ThroughputDropConfig
	}{
		{sim.TestbedConfig(), policy.DefaultThroughputDropConfig()},
		{sim.DatacenterConfig(), policy.ThroughputDropConfig{Fraction: 0.9, Consecutive: 2, Cooldown: 2 * time.Second, Smoothing: 0.1}},
	} {
		r, err := CalibrateThroughputDrop(context.Background(), tc.cfg, 40, 1, 2, DefaultDropOptions())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, r.Config); diff != "" {
			t.Errorf("profile %s: calibrated config (-want +got):\n%s\n%+v", tc.cfg.Name, diff, r)
		}
		if r.Episodes != 40 || r.Moved != 40 || len(r.Curve) != 10 {
			t.Errorf("profile %s: %d quiet and %d moved episodes, %d curve points; want 40, 40, 10", tc.cfg.Name, r.Episodes, r.Moved, len(r.Curve))
		}
	}
}

// flowTrace is a scored episode whose flow runs at the given throughputs,
// one sample per 500 ms.
func flowTrace(phis ...float64) *trace.Episode {
	topo := proflow.Topology{Switches: []string{"agg1", "agg2"}, Leaves: []string{"leaf1"}, BucketRate: 1e6}
	ep := &trace.Episode{Meta: trace.Meta{Scenario: "q", Topology: topo, Interval: trace.Duration(500 * time.Millisecond)}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, phi := range phis {
		obs := &proflow.Observation{Time: t0.Add(time.Duration(i) * 500 * time.Millisecond),
			Switches: make([]proflow.SwitchSample, 2), Leaves: make([]proflow.LeafSample, 1), Flow: proflow.FlowSample{Throughput: phi}}
		ep.Steps = append(ep.Steps, trace.Step{Seq: uint64(i), Time: obs.Time, Obs: obs, Throughput: phi,
			Decision: trace.Decision{Reason: proflow.ReasonStay, Target: -1}})
	}
	return ep
}

func TestAnalyseDrop(t *testing.T) {
	// One episode dips to 0.82 of its level for two samples: fractions
	// above 0.82 fire on it, 0.80 does not.
	quiet := []*trace.Episode{flowTrace(100, 100, 100, 82, 82, 100), flowTrace(100, 100, 100, 100)}
	moved := flowTrace(100, 100, 100, 100, 10, 50, 70, 100, 100)
	moved.Steps[3].Decision.Rerouted = true
	opt := DropOptions{Consecutive: 2, From: 0.7, To: 0.9, Step: 0.05, Smoothing: 0.1, Settle: 60}
	r, err := AnalyseDrop(quiet, []*trace.Episode{moved}, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []DropPoint{{0.7, 0}, {0.75, 0}, {0.8, 0}, {0.85, 0.5}, {0.9, 0.5}}
	if diff := cmp.Diff(want, r.Curve); diff != "" {
		t.Errorf("curve (-want +got):\n%s", diff)
	}
	// The move at step 3 (1.5 s); below 0.8 × 100 at 2, 2.5 and 3 s: the
	// last ends at 3.5 s, 2 s after the move.
	if r.Highest != 0.8 || r.Recovery != 2 || r.Config.Cooldown != 3*time.Second {
		t.Errorf("highest %v, recovery %vs, cooldown %v; want 0.8, 2s, 3s", r.Highest, r.Recovery, r.Config.Cooldown)
	}
	// A grid where everything fires is refused, naming the grid.
	opt.From, opt.To = 0.85, 0.9
	if _, err := AnalyseDrop(quiet[:1], nil, opt); err == nil || !strings.Contains(err.Error(), "every fraction from 0.85 to 0.9 fires") {
		t.Errorf("all-firing grid: %v", err)
	}
	// A moved episode without a move is refused.
	opt.From = 0.7
	if _, err := AnalyseDrop(quiet, quiet[:1], opt); err == nil || !strings.Contains(err.Error(), "has no move") {
		t.Errorf("moved episode without a move: %v", err)
	}
	if _, err := AnalyseDrop(quiet, nil, DropOptions{}); err == nil || !strings.Contains(err.Error(), "consecutive 0") {
		t.Errorf("zero options: %v", err)
	}
}
