package ovsfabric_test

import (
	"context"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// TestExperimentTrace runs S1 scaled to the fabric (times ÷ 4, congestion
// after 6 s, a 12 s window) under the static policy on Open vSwitch and
// reads its trace back the way the evaluation reads simulated ones: the
// metadata the simulator writes, a step per interval, a baseline, the
// precursor (the flow keeps its rate while the congesters drain the
// bucket's reserve) and then the collapse. About 30 s as root.
func TestExperimentTrace(t *testing.T) {
	requireFabric(t)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	static, err := eval.ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	scale := ovsfabric.DefaultScale()
	scale.TimeFactor = 4 // a precursor of 3.7 s
	dir := t.TempDir()
	var out strings.Builder
	x := ovsfabric.Experiment{
		Fabric: ovsfabric.Config{Prefix: testPrefix, RunDir: testRunDir, BucketRate: "10mbit"}, Listen: "127.0.0.1:0",
		Policy: static, Scenario: mustScenario(t, "S1"), Scale: scale, Warmup: 6 * time.Second, Window: 12 * time.Second,
		Seed: 42, Repeat: 3, TraceFile: filepath.Join(dir, ovsfabric.TraceName("S1", "static", 3)), Out: &out,
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
	if len(back.Steps) != len(ep.Steps) {
		t.Errorf("trace file holds %d steps, Run returned %d", len(back.Steps), len(ep.Steps))
	}
	m := back.Meta
	flow := proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"), Proto: proflow.ProtoTCP, SrcPort: 40000, DstPort: 5201}
	if m.Source != ovsfabric.TraceSource || m.Scenario != "S1" || m.Policy != "static" || m.Seed != 42 || m.Labels["repeat"] != "3" ||
		m.Flow != flow || m.InitialSwitch != 0 || m.Interval != trace.Duration(500*time.Millisecond) ||
		m.Topology.BucketRate != 10e6/8 || len(m.Topology.Switches) != 4 || m.Labels["time_factor"] != "4" {
		t.Errorf("metadata %+v\nwant source openflow, S1, static, seed 42, repeat 3, flow %v, switch 0, 500ms, 4 switches of 10 Mbit/s, time factor 4", m, flow)
	}
	// The regime is off, and the trace says so: the kernel's default
	// congestion control is named.
	if !strings.HasPrefix(m.Labels[ovsfabric.LabelCongestionControl], "default:") || len(m.Labels[ovsfabric.LabelCongestionControl]) == len("default:") ||
		m.Labels[ovsfabric.LabelRTT] != "off" || m.Labels[ovsfabric.LabelRcvBuf] != "off" || m.Labels[ovsfabric.LabelHLimitRate] != "off" {
		t.Errorf("regime labels %v, want congestion_control default:NAME and rtt, protected_rcvbuf, hlimit_rate off", m.Labels)
	}
	if got := m.CongestionStart.Sub(m.Start); got != 6*time.Second {
		t.Errorf("congestion starts %v after the start, want 6s", got)
	}
	if got := m.End.Sub(m.Start); got != 18*time.Second {
		t.Errorf("the episode ends %v after the start, want 18s", got)
	}
	// The controller starts with the protected flow and steps every 500 ms.
	if n := len(back.Steps); n < 32 || n > 37 {
		t.Errorf("%d steps in 18 s, want about 36", n)
	}

	e, err := eval.FromTrace(back, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Scenario != "S1" || e.Policy != "static" || e.Repeat != 3 || e.Seed != 42 || len(e.Reroutes) != 0 {
		t.Errorf("FromTrace: %s/%s repeat %d seed %d, %d reroutes; want S1/static repeat 3 seed 42, none", e.Scenario, e.Policy, e.Repeat, e.Seed, len(e.Reroutes))
	}
	mean := func(from, to float64) float64 {
		sum, n := 0.0, 0
		for i, tt := range e.T {
			if tt >= from && tt < to {
				sum += e.Throughput[i]
				n++
			}
		}
		return sum / float64(max(n, 1))
	}
	t.Logf("baseline %s; first 2 s of congestion %s; last 4 s %s", mbit(e.Baseline), mbit(mean(0, 2)), mbit(mean(8, 12)))
	if e.Baseline < 0.7*10e6/8 {
		t.Errorf("baseline %s, want at least 70%% of the 10 Mbit/s bucket", mbit(e.Baseline))
	}
	if got := mean(0, 2); got < 0.6*e.Baseline {
		t.Errorf("first 2 s after the congesters arrive: %s, want at least 60%% of the baseline %s (the precursor: the reserve still lasts)", mbit(got), mbit(e.Baseline))
	}
	if got := mean(8, 12); got > 0.5*e.Baseline {
		t.Errorf("last 4 s of the window: %s, want below half the baseline %s (the reserve is gone)", mbit(got), mbit(e.Baseline))
	}
	// The evaluation's defaults (options added later get theirs), on a 12 s
	// window, with no baseline or reference policy: static ran alone.
	opt := eval.DefaultOptions()
	opt.Window, opt.Resamples, opt.Baseline, opt.Reference = 12, 100, "", ""
	if _, err := eval.Summarize([]*eval.Episode{e}, opt); err != nil {
		t.Errorf("Summarize of the real episode with a 12 s window: %v", err)
	}
}
