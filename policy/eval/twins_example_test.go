package eval_test

import (
	"context"
	"fmt"
	"time"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Bound and FanBound on a short S1 (five full-rate hosts join the flow's
// switch) against twins whose crowd leaves 2 and 4 s after it arrived:
// with 8 s left a move cannot pay for itself, so the least worst-case
// shortfall belongs to never moving.
func ExampleFanBound() {
	sc, err := sim.BuiltinScenario("S1")
	if err != nil {
		fmt.Println(err)
		return
	}
	sc.Window = sim.Duration(8 * time.Second)
	var twins []eval.Twin
	for _, d := range []time.Duration{2 * time.Second, 4 * time.Second} {
		b, err := sc.EndedAt(d)
		if err != nil {
			fmt.Println(err)
			return
		}
		twins = append(twins, eval.Twin{A: sc, B: b, Diverge: d, Kind: "end"})
	}
	var rules []eval.PolicySpec
	for _, name := range []string{"static", "crowd"} {
		r, err := eval.ReferencePolicy(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		rules = append(rules, r)
	}
	bounds, err := eval.Bound(context.Background(), eval.BoundSpec{Twins: twins, Rules: rules, Repeats: 1, Seed: 1, Config: sim.TestbedConfig(), Parallelism: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range eval.FanBound(bounds) {
		fmt.Printf("%s and %d twins: %d schedules; the least worst case is %.1f%% behind the best rule, never moving: %v\n",
			f.Scenario, f.Twins, len(f.Curve), 100*f.Best.Worst, f.Best.Schedule.To < 0)
	}
	// Output:
	// S1 and 2 twins: 49 schedules; the least worst case is 0.0% behind the best rule, never moving: true
}
