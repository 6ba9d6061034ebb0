package sim_test

import (
	"context"
	"fmt"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Scenario S1 on the paper's testbed, watched through the fabric's
// telemetry without a controller: the congesters' flow entries appear at
// once, the protected flow keeps its rate while agg1's bucket drains its
// burst allowance (the precursor window), and collapses when it runs dry.
func Example() {
	cfg := sim.DefaultConfig()
	sc, err := sim.BuiltinScenario("S1")
	if err != nil {
		panic(err)
	}
	f, err := sim.New(cfg, sc, 1)
	if err != nil {
		panic(err)
	}
	var obs proflow.Observation
	for _, at := range []time.Duration{-5 * time.Second, time.Second, 10 * time.Second, 30 * time.Second} {
		if err := f.Advance(sc.Start() + at - f.Elapsed()); err != nil {
			panic(err)
		}
		if err := f.Collect(context.Background(), &obs); err != nil {
			panic(err)
		}
		agg1 := obs.Switches[0]
		state := "healthy"
		if obs.Flow.Throughput < 0.3*cfg.BucketRate {
			state = "collapsed"
		}
		sends := "at most the bucket rate"
		if agg1.TxRate > 1.1*cfg.BucketRate {
			sends = "more (draining the burst)"
		}
		fmt.Printf("t=%v: %2.0f flow entries, protected flow %s, agg1 sends %s, overflow above 27,000: %v\n",
			at, agg1.FlowCount, state, sends, agg1.OverflowRate > 27000)
	}
	// Output:
	// t=-5s:  2 flow entries, protected flow healthy, agg1 sends at most the bucket rate, overflow above 27,000: false
	// t=1s: 12 flow entries, protected flow healthy, agg1 sends more (draining the burst), overflow above 27,000: false
	// t=10s: 12 flow entries, protected flow healthy, agg1 sends more (draining the burst), overflow above 27,000: false
	// t=30s: 12 flow entries, protected flow collapsed, agg1 sends at most the bucket rate, overflow above 27,000: true
}
