package openflow

import (
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// TestComputeFlowsAllocs checks that the per-flow part of Collect — the
// throughputs of 1,000 flows from two samples of their source leaf —
// allocates nothing in steady state. (The aggregation switches' samples
// are empty here: their per-switch counter index, and the polls that
// produce the samples, do allocate.)
func TestComputeFlowsAllocs(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Fabric, cfg.Topology = PaperFabric(), proflow.PaperTopology()
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	samples := make([][2]*sample, len(srv.order))
	for i := range samples {
		samples[i] = [2]*sample{{at: t0}, {at: t0.Add(time.Second)}}
	}
	obs := new(proflow.Observation)
	leaf1 := samples[len(cfg.Fabric.Aggs)]
	for i := range 1000 {
		f := proflow.FlowID{Src: cfg.Fabric.Leaves[0].Hosts[0].Addr, Dst: cfg.Fabric.Leaves[3].Hosts[1].Addr,
			Proto: proflow.ProtoTCP, SrcPort: uint16(10000 + i), DstPort: 5201}
		obs.FlowIDs = append(obs.FlowIDs, f)
		rule := ofwire.FlowStats{Priority: cfg.OverridePriority + 1, Cookie: srv.cookie(kindOverride, flowTag(f), 1), Match: flowMatch(f), Bytes: 1000}
		leaf1[0].flows = append(leaf1[0].flows, rule)
		rule.Bytes += uint64(i)
		leaf1[1].flows = append(leaf1[1].flows, rule)
	}
	obs.Resize(cfg.Topology)
	if err := srv.compute(obs, samples); err != nil {
		t.Fatal(err)
	}
	for i, f := range obs.Flows {
		if f.Throughput != float64(i) {
			t.Fatalf("Flows[%d] throughput %v, want %d", i, f.Throughput, i)
		}
	}
	if n := testing.AllocsPerRun(20, func() {
		obs.Resize(cfg.Topology)
		if err := srv.compute(obs, samples); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("compute of 1,000 flows: %v allocations, want 0", n)
	}
}
