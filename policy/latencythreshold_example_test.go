package policy_test

import (
	"fmt"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
)

// The latency-threshold policy learns a request/response flow's healthy
// completion time (its lowest, 35 ms) and fires on the second sample in a
// row above 1.2 × that level, to the switch with the least overflow. A
// sample with no latency (no request completed, no round trip measured)
// never counts.
func ExampleLatencyThreshold() {
	p, err := policy.NewLatencyThreshold(policy.LatencyThresholdConfig{Ratio: 1.05, CompletionRatio: 1.2, Consecutive: 2, Cooldown: 2 * time.Second})
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, ms := range []float64{36, 35, 41, 0, 45, 60} {
		now := start.Add(time.Duration(i) * 500 * time.Millisecond)
		obs := &proflow.Observation{Time: now, Switches: []proflow.SwitchSample{
			{OverflowRate: 30000}, {OverflowRate: 9000}, {OverflowRate: 2000}, {OverflowRate: 4000},
		}, Flow: proflow.FlowSample{CompletionP99: ms / 1000}}
		scores := make([]float64, 4)
		if err := p.Score(scores, &proflow.Input{Time: now, Obs: obs, Current: 0}); err != nil {
			panic(err)
		}
		fmt.Printf("completion p99 %2.0f ms, healthy %2.0f ms: scores %v\n", ms, 1000*p.Healthy(policy.CompletionLatency), scores)
	}
	// Output:
	// completion p99 36 ms, healthy 36 ms: scores [1 0 0 0]
	// completion p99 35 ms, healthy 35 ms: scores [1 0 0 0]
	// completion p99 41 ms, healthy 35 ms: scores [1 0 0 0]
	// completion p99  0 ms, healthy 35 ms: scores [1 0 0 0]
	// completion p99 45 ms, healthy 35 ms: scores [1 0 0 0]
	// completion p99 60 ms, healthy 35 ms: scores [0 0 1 0]
}
