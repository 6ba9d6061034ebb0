package ovsfabric_test

import (
	"context"
	"os"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// TestMeasure prints the controller's figures against Open vSwitch: reroute
// latency (Place: decision → barrier replies from both leaves, old rules
// deleted) over 200 moves, the statistics round trip per switch, and the
// controller's CPU time per 500 ms interval. It runs only with
// PROFLOW_MEASURE=1 (make ovs-measure).
func TestMeasure(t *testing.T) {
	if os.Getenv("PROFLOW_MEASURE") == "" {
		t.Skip("skipping: set PROFLOW_MEASURE=1 to measure against OVS")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	b := upBed(t, ctx)

	lat := make([]time.Duration, 0, 200)
	for i := range 200 {
		start := time.Now()
		if err := b.srv.Place(ctx, fp, i%4); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	p50, p99 := pct(lat)
	t.Logf("reroute latency over %d moves (decision → barrier replies, old rules deleted): p50 %v, p99 %v", len(lat), p50, p99)

	// Polling: 40 Collects at the 500 ms interval on the idle fabric.
	obs := new(proflow.Observation)
	_ = b.srv.Collect(ctx, obs)
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	var col []time.Duration
	for range 40 {
		time.Sleep(500 * time.Millisecond)
		start := time.Now()
		if err := b.srv.Collect(ctx, obs); err != nil {
			t.Fatal(err)
		}
		col = append(col, time.Since(start))
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) / 40
	c50, c99 := pct(col)
	t.Logf("Collect (8 switches in parallel, port+flow stats): p50 %v, p99 %v", c50, c99)
	t.Logf("controller CPU per 500 ms interval (whole test process: polls, keepalive, lease refresh): %v (%.2f%% of one core)",
		cpu, 100*cpu.Seconds()/0.5)
	mfs, _ := b.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "proflow_openflow_poll_duration_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			t.Logf("stats round trip per switch (poll_duration_seconds): mean %v over %d polls",
				time.Duration(h.GetSampleSum()/float64(h.GetSampleCount())*1e9), h.GetSampleCount())
		}
	}
}

func pct(d []time.Duration) (p50, p99 time.Duration) {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}
