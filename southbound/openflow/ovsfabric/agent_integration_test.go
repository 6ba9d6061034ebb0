package ovsfabric_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// ovsModel is the agent trained on the simulator's ovs profile (make model
// PROFILE=ovs), behind the gate it records (models/gate-ovs.json).
var ovsModel = filepath.Join("..", "..", "..", "models", "ovs.safetensors")

// TestAgentEpisodeS1 runs the learned agent of the ovs profile on S1
// scaled to the fabric (times ÷ 2; the protected flow alone for 6 s, then
// a 12 s window) on Open vSwitch with real TCP and tc. The five congesters
// join the protected flow's switch agg1; the bucket's reserve lasts
// Scale.Precursor (7.4 s) against them. The agent must move the flow away
// from agg1 before it degrades: within the precursor, while the flow still
// carried at least half its baseline on average since the congesters
// came. The move must be make-before-break: no packet of the episode finds
// no rule on any bridge (ovs-ofctl dump-tables, the trace's table_misses
// label). About 25 s as root.
func TestAgentEpisodeS1(t *testing.T) {
	requireFabric(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	scale := ovsfabric.DefaultScale()
	topo := scale.Topology()
	agent, err := ovsfabric.PolicyNamed("agent", ovsModel, "", topo)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	x := ovsfabric.Experiment{
		Fabric: ovsfabric.Config{Prefix: testPrefix, RunDir: testRunDir, BucketRate: "10mbit"}, Listen: "127.0.0.1:0",
		Policy: agent, Scenario: mustScenario(t, "S1"), Scale: scale, Warmup: 6 * time.Second, Window: 12 * time.Second,
		Seed: 1, Repeat: 1, TraceFile: filepath.Join(t.TempDir(), ovsfabric.TraceName("S1", "agent", 1)), Out: &out,
	}
	start := time.Now()
	ep, err := x.Run(ctx)
	t.Logf("episode in %v:\n%s", time.Since(start).Round(time.Millisecond), out.String())
	if err != nil {
		t.Fatal(err)
	}
	assertNothingLeft(t)
	back, err := trace.ReadFile(x.TraceFile)
	if err != nil {
		t.Fatal(err)
	}
	misses, err := strconv.Atoi(back.Meta.Labels[ovsfabric.LabelTableMisses])
	if err != nil {
		t.Errorf("trace label %s = %q, want a count: %v", ovsfabric.LabelTableMisses, back.Meta.Labels[ovsfabric.LabelTableMisses], err)
	} else if misses != 0 {
		t.Errorf("%d packets found no rule during the episode, want 0 (make-before-break)", misses)
	}

	e, err := eval.FromTrace(ep, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Reroutes) == 0 {
		t.Fatalf("the agent never moved the flow off agg1 (baseline %s)", mbit(e.Baseline))
	}
	first := e.Reroutes[0]
	t.Logf("first reroute %s→%s at %.1f s after the congesters arrived; %d reroutes; baseline %s",
		topo.Switches[first.From], topo.Switches[first.To], first.At, len(e.Reroutes), mbit(e.Baseline))
	if first.From != 0 || first.To == 0 {
		t.Errorf("first reroute %d→%d, want away from agg1 (0)", first.From, first.To)
	}
	if precursor := scale.Precursor().Seconds(); first.At < 0 || first.At >= precursor {
		t.Errorf("first reroute %.1f s after the congesters arrived, want within the precursor [0, %.1f s)", first.At, precursor)
	}
	sum, n := 0.0, 0
	for i, tt := range e.T {
		if tt >= 0 && tt <= first.At {
			sum += e.Throughput[i]
			n++
		}
	}
	if n > 0 && sum/float64(n) < 0.5*e.Baseline {
		t.Errorf("from the congesters' arrival to the reroute the flow carried %s on average, want at least half its baseline %s (moved before it degraded)",
			mbit(sum/float64(n)), mbit(e.Baseline))
	}
}
