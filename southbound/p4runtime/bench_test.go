package p4runtime

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// reportQuantiles adds p50 and p99 of the samples, in microseconds.
func reportQuantiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	q := func(p float64) float64 {
		return float64(d[min(int(p*float64(len(d))), len(d)-1)]) / float64(time.Microsecond)
	}
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

// BenchmarkReroute measures one reroute of the protected flow over loopback
// gRPC: a MODIFY of the path_select entry on the source leaf (forward
// direction) and on the destination leaf (reverse), written in parallel,
// each acknowledged by the target.
func BenchmarkReroute(b *testing.B) {
	f := newFabric(b, nil)
	c := dial(b, f.config(10))
	ctx := context.Background()
	if err := c.Place(ctx, testFlow, 0); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := c.Place(ctx, testFlow, 1+i%2); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportQuantiles(b, lat)
}

// BenchmarkCollect measures one telemetry sample of the 4-leaf fabric: one
// Read RPC per leaf (port counters of 4 uplinks and 2 host ports, and the
// owned path entries with their direct counters), in parallel.
func BenchmarkCollect(b *testing.B) {
	f := newFabric(b, nil)
	c := dial(b, f.config(10))
	ctx := context.Background()
	if err := c.Place(ctx, testFlow, 0); err != nil {
		b.Fatal(err)
	}
	var obs proflow.Observation
	_ = c.Collect(ctx, &obs)
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f.clock.Advance(time.Millisecond)
		start := time.Now()
		if err := c.Collect(ctx, &obs); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportQuantiles(b, lat)
}

// benchFlows is how many flows the many-flow benchmarks move per step.
const benchFlows = 1000

// BenchmarkPlace1000Batch measures one step that moves 1,000 flows (leaf1
// to leaf4, one path_select entry per direction) to the next switch with
// one PlaceBatch: one Write of 1,000 MODIFYs per leaf over loopback gRPC.
// BenchmarkPlace1000OneByOne is the same step as 1,000 Place calls.
func BenchmarkPlace1000Batch(b *testing.B) { benchPlace1000(b, true) }

// BenchmarkPlace1000OneByOne: see BenchmarkPlace1000Batch.
func BenchmarkPlace1000OneByOne(b *testing.B) { benchPlace1000(b, false) }

func benchPlace1000(b *testing.B, batch bool) {
	f := newFabric(b, nil)
	cfg := f.config(10)
	cfg.Pipeline = smallTable(b, 2*benchFlows) // leaf.p4's path_select holds 256
	c := dial(b, cfg)
	ctx := context.Background()
	southboundtest.BenchmarkPlacements(b, ctx, c, flowN, benchFlows, batch)
}
