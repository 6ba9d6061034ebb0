package southboundtest

import (
	"context"
	"testing"

	"github.com/proflow-sdn/proflow"
)

// BenchmarkPlacements measures one step that moves n flows, flow(0) …
// flow(n-1), each to the next of 4 switches: with one PlaceBatch when batch
// is set, else with n Place calls. Every flow is placed once before the
// timer starts, so each measured step moves them all; it reports µs/flow.
// The southbounds' many-flow benchmarks share it.
func BenchmarkPlacements(b *testing.B, ctx context.Context, enf proflow.BatchEnforcer, flow func(i int) proflow.FlowID, n int, batch bool) {
	b.Helper()
	ps := make([]proflow.Placement, n)
	errs := make([]error, n)
	step := func(k int) {
		for i := range ps {
			ps[i] = proflow.Placement{Flow: flow(i), Switch: (i + k) % 4}
		}
		if batch {
			if err := enf.PlaceBatch(ctx, ps, errs); err != nil {
				b.Fatal(err)
			}
			for i, err := range errs {
				if err != nil {
					b.Fatalf("flow %d: %v", i, err)
				}
			}
			return
		}
		for _, p := range ps {
			if err := enf.Place(ctx, p.Flow, p.Switch); err != nil {
				b.Fatal(err)
			}
		}
	}
	step(0) // every flow placed once: the steps below move them
	b.ResetTimer()
	for i := range b.N {
		step(i + 1)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/flow")
}
