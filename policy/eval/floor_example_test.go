package eval_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Floor and FloorKinds on a short V1 (a constant-bitrate flow at about
// half of C; five full-rate hosts join its switch for good): the best
// single move leaves at once, and it misses far less than staying or
// waiting for the flow's own throughput to fall.
func ExampleFloorKinds() {
	sc, err := sim.BuiltinScenario("V1")
	if err != nil {
		fmt.Println(err)
		return
	}
	sc.Window = sim.Duration(30 * time.Second)
	var rules []eval.PolicySpec
	for _, name := range []string{"static", eval.ThroughputDropName} {
		r, err := eval.ReferencePolicy(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		rules = append(rules, r)
	}
	rows, err := eval.Floor(context.Background(), eval.FloorSpec{Scenarios: []*sim.Scenario{sc}, Rules: rules, Every: 10 * time.Second,
		Repeats: 1, Seed: 7, Config: sim.TestbedConfig(), Parallelism: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := rows[0]
	fmt.Printf("%s (%s): never moving misses %.1f s; the best single move, to switch %d at %g s, %.1f s\n", r.Scenario, r.Kind, r.Never, r.Hindsight.To, r.Hindsight.At, r.Hindsight.SLO)
	for _, k := range eval.FloorKinds(rows, rand.New(rand.NewPCG(1, 1))) {
		fmt.Printf("%s: best single rule %s, %.1f s; the hindsight move is %.2f× of it\n", k.Kind, k.BestRule, k.BestRuleSLO, k.Ratio)
	}
	// Output:
	// V1 (rate): never moving misses 19.0 s; the best single move, to switch 1 at 0 s, 5.0 s
	// rate: best single rule throughput-drop, 10.0 s; the hindsight move is 0.50× of it
}
