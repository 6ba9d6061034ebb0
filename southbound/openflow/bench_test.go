package openflow_test

import (
	"sort"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
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

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}
