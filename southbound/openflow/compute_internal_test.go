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
	cfg, srv, samples := computeFixture(t)
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

// TestComputeBytesBackwardsIsReset: a switch is untrusted input. A base
// host-pair rule whose packet counter went up while its byte counter went
// down was reset (re-created) in between, like one whose packets went
// down: its current counters count in full, and the byte delta never
// wraps around to an elephant of 1.8e19 B/s.
func TestComputeBytesBackwardsIsReset(t *testing.T) {
	cfg, srv, samples := computeFixture(t)
	src, dst := cfg.Fabric.Leaves[0].Hosts[0].Addr, cfg.Fabric.Leaves[3].Hosts[0].Addr
	rule := ofwire.FlowStats{Priority: prioBase, Cookie: srv.cookie(kindBase, 0, 0), Match: pairMatch(src, dst), Packets: 100, Bytes: 5_000_000}
	agg := samples[0]
	agg[0].flows = append(agg[0].flows, rule)
	rule.Packets, rule.Bytes = 200, 3_000_000 // packets up, bytes down: reset
	agg[1].flows = append(agg[1].flows, rule)
	obs := new(proflow.Observation)
	obs.Resize(cfg.Topology)
	if err := srv.compute(obs, samples); err != nil {
		t.Fatal(err)
	}
	// Elephant above 0.1 × 25 MB/s: the 3 MB counted since the reset, over 1 s.
	if sw := obs.Switches[0]; sw.FlowCount != 1 || sw.ElephantRate != 3e6 {
		t.Errorf("agg1 after a reset with packets up and bytes down: flow count %v, elephant rate %v; want 1 and 3e6", sw.FlowCount, sw.ElephantRate)
	}
}

// computeFixture returns the paper fabric's config, a server for it and,
// per switch, two empty samples one second apart for compute to read.
func computeFixture(t *testing.T) (Config, *Server, [][2]*sample) {
	t.Helper()
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
	return cfg, srv, samples
}
