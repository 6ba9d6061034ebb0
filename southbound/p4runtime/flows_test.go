package p4runtime

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
)

// TestCollectPerFlow: obs.Flows[i] is the rate of FlowIDs[i]'s forward
// entry's direct counter on its source leaf; a flow without an entry is
// NaN; Config.Flow released does not stop the others' samples.
func TestCollectPerFlow(t *testing.T) {
	f, c, ctx := placed(t, 0)
	a := testFlow
	a.SrcPort = 6001
	b := proflow.FlowID{Src: netip.MustParseAddr("10.0.3.7"), Dst: netip.MustParseAddr("10.0.2.9"), SrcPort: 7000, DstPort: 80, Proto: proflow.ProtoTCP}
	unplaced := b
	unplaced.SrcPort = 7001
	if err := c.Place(ctx, a, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Place(ctx, b, 3); err != nil {
		t.Fatal(err)
	}
	var obs proflow.Observation
	obs.FlowIDs = []proflow.FlowID{b, testFlow, unplaced, a}
	if err := c.Collect(ctx, &obs); !errors.Is(err, proflow.ErrStale) {
		t.Fatalf("first Collect: %v, want ErrStale (priming)", err)
	}
	add := func(dev uint64, flow proflow.FlowID, bytes uint64) {
		f.dp.AddFlowTraffic(dev, flow, target.Counts{Bytes: bytes, Packets: bytes / 1500})
	}
	add(1, testFlow, 1_000_000)
	add(1, a, 250_000)
	add(3, b, 4_000_000)
	add(2, b.Reverse(), 9_000_000) // the reverse entry, on the destination leaf: not b's throughput
	f.traffic(0, 0, 1_000_000)     // congestion: 2 MB/s per leaf
	f.clock.Advance(500 * time.Millisecond)
	if err := c.Collect(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	if len(obs.Flows) != len(obs.FlowIDs) {
		t.Fatalf("%d flow samples, want %d", len(obs.Flows), len(obs.FlowIDs))
	}
	want := []float64{8e6, 2e6, math.NaN(), 5e5}
	for i, w := range want {
		got := obs.Flows[i].Throughput
		if math.IsNaN(w) != math.IsNaN(got) || !math.IsNaN(w) && math.Abs(got-w) > 1e-6*w {
			t.Errorf("Flows[%d] (%v) throughput = %v, want %v", i, obs.FlowIDs[i], got, w)
		}
		if cr := obs.Flows[i].CongestionRate; cr != obs.Flow.CongestionRate {
			t.Errorf("Flows[%d] congestion rate %v, want F = %v", i, cr, obs.Flow.CongestionRate)
		}
	}
	if obs.Flow.Throughput != obs.Flows[1].Throughput {
		t.Errorf("obs.Flow throughput %v, want Config.Flow's %v", obs.Flow.Throughput, obs.Flows[1].Throughput)
	}

	// A flow placed during the interval counts from its insertion; Config.Flow
	// released: obs.Flow reads zero, the others go on.
	if err := c.Place(ctx, unplaced, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, testFlow); err != nil {
		t.Fatal(err)
	}
	add(3, unplaced, 1_000_000)
	add(3, b, 1_000_000)
	f.clock.Advance(time.Second)
	if err := c.Collect(ctx, &obs); err != nil {
		t.Fatalf("Collect with Config.Flow released: %v", err)
	}
	if got := obs.Flows[2].Throughput; math.Abs(got-1e6) > 1 {
		t.Errorf("newly placed flow: %v, want 1e6", got)
	}
	if got := obs.Flows[0].Throughput; math.Abs(got-1e6) > 1 {
		t.Errorf("b: %v, want 1e6", got)
	}
	if !math.IsNaN(obs.Flows[1].Throughput) || obs.Flow.Throughput != 0 {
		t.Errorf("released Config.Flow: Flows[1] %v (want NaN), Flow %v (want 0)", obs.Flows[1].Throughput, obs.Flow.Throughput)
	}
	// Without FlowIDs the one-flow contract stands: Config.Flow must be placed.
	obs.FlowIDs = nil
	f.clock.Advance(time.Second)
	if err := c.Collect(ctx, &obs); !errors.Is(err, proflow.ErrNotPlaced) {
		t.Errorf("one-flow Collect with Config.Flow released: %v, want ErrNotPlaced", err)
	}
}

func TestCollectPerFlowUnknown(t *testing.T) {
	f, c, ctx := placed(t, 0)
	var obs proflow.Observation
	_ = c.Collect(ctx, &obs)
	f.clock.Advance(time.Second)
	stranger := proflow.FlowID{Src: netip.MustParseAddr("192.168.1.1"), Dst: netip.MustParseAddr("10.0.4.1"), Proto: proflow.ProtoUDP, SrcPort: 1, DstPort: 2}
	obs.FlowIDs = []proflow.FlowID{testFlow, stranger}
	err := c.Collect(ctx, &obs)
	if !errors.Is(err, proflow.ErrNotInFabric) || !strings.Contains(err.Error(), "flow_ids[1]") || !strings.Contains(err.Error(), "192.168.1.1") {
		t.Errorf("Collect with a flow outside the fabric: %v, want ErrNotInFabric naming flow_ids[1] and its address", err)
	}
	// Overlay fills Flows too; the refused Collect took no sample, so the
	// interval is both seconds since the priming one.
	obs.FlowIDs = obs.FlowIDs[:1]
	f.traffic(0, 3_000_000, 0)
	f.clock.Advance(time.Second)
	obs.Resize(c.cfg.Topology)
	if err := c.Overlay(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	if got := obs.Flows[0].Throughput; math.Abs(got-1.5e6) > 1 {
		t.Errorf("Overlay: Flows[0] = %v, want 1.5e6 (3 MB over 2 s)", got)
	}
}
