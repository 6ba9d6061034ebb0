package openflow_test

import (
	"sort"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// BenchmarkPlace measures a reroute against fake switches over loopback
// TCP: flow-mods to both leaves, barriers, deletion of the old rules.
// It reports the p50 and p99 of decision→barrier-reply latency.
func BenchmarkPlace(b *testing.B) {
	tb := newTestbed(b, nil)
	ctx := ctxT(b, time.Hour)
	if err := tb.srv.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if err := tb.srv.Place(ctx, fp, i%4); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	p50, p99 := percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
}

// BenchmarkCollect measures one telemetry sample: port and flow statistics
// of all eight switches polled in parallel, replies reassembled and turned
// into an Observation.
func BenchmarkCollect(b *testing.B) {
	tb := newTestbed(b, nil)
	ctx := ctxT(b, time.Hour)
	if err := tb.srv.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	obs := new(proflow.Observation)
	_ = tb.srv.Collect(ctx, obs)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tb.clock.Advance(500 * time.Millisecond)
		if err := tb.srv.Collect(ctx, obs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCollect1000Flows is BenchmarkCollect for a multi-flow
// controller: 1,000 placed flows listed in Observation.FlowIDs, each one's
// throughput read from its override rule's counter (one pass over each
// source leaf's rules, a map lookup per flow).
func BenchmarkCollect1000Flows(b *testing.B) {
	tb := newTestbed(b, nil)
	ctx := ctxT(b, time.Hour)
	if err := tb.srv.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	obs := new(proflow.Observation)
	ps := make([]proflow.Placement, 1000)
	for i := range ps {
		f := fp
		f.SrcPort = uint16(10000 + i)
		ps[i] = proflow.Placement{Flow: f, Switch: i % 4}
		obs.FlowIDs = append(obs.FlowIDs, f)
	}
	errs := make([]error, len(ps))
	if err := tb.srv.PlaceBatch(ctx, ps, errs); err != nil {
		b.Fatal(err)
	}
	_ = tb.srv.Collect(ctx, obs)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tb.clock.Advance(500 * time.Millisecond)
		if err := tb.srv.Collect(ctx, obs); err != nil {
			b.Fatal(err)
		}
	}
}

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

// benchFlows is how many flows the many-flow benchmarks move per step.
const benchFlows = 1000

// BenchmarkPlace1000Batch measures one step that moves 1,000 flows (h1 to
// h8, one override pair each) to the next switch with one PlaceBatch: per
// leaf one write of 1,000 adds and a barrier, then 1,000 deletes and a
// barrier, against fake switches over loopback TCP. BenchmarkPlace1000OneByOne
// is the same step as 1,000 Place calls.
func BenchmarkPlace1000Batch(b *testing.B) { benchPlace1000(b, true) }

// BenchmarkPlace1000OneByOne: see BenchmarkPlace1000Batch.
func BenchmarkPlace1000OneByOne(b *testing.B) { benchPlace1000(b, false) }

func benchPlace1000(b *testing.B, batch bool) {
	// The default barrier timeout (the test bed's 300 ms is too short for
	// 1,000 flow-mods to the fake switch, which scans its table per add).
	tb := newTestbed(b, func(c *openflow.Config) { c.RequestTimeout = 2 * time.Second })
	ctx := ctxT(b, time.Hour)
	if err := tb.srv.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	southboundtest.BenchmarkPlacements(b, ctx, tb.srv, flowN, benchFlows, batch)
}
