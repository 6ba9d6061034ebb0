package policy_test

import (
	"fmt"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
)

// The reactive baseline fires on the third consecutive sample whose overflow
// on the current switch exceeds 27,000 B/s, and picks the switch with the
// least overflow. Immediate admits its choice at once.
func ExampleReactive() {
	reactive, err := policy.NewReactive(policy.DefaultReactiveConfig())
	if err != nil {
		panic(err)
	}
	gate := policy.Immediate()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	current := 0
	for i, xi := range []float64{23000, 28000, 31000, 26000, 29000, 33000, 36000} {
		now := start.Add(time.Duration(i) * 500 * time.Millisecond)
		obs := &proflow.Observation{Time: now, Switches: []proflow.SwitchSample{
			{OverflowRate: xi}, {OverflowRate: 9000}, {OverflowRate: 2000}, {OverflowRate: 4000},
		}}
		d := proflow.Decision{Time: now, Current: current, Scores: make([]float64, 4)}
		if err := reactive.Score(d.Scores, &proflow.Input{Time: now, Obs: obs, Current: current}); err != nil {
			panic(err)
		}
		gate.Admit(&d)
		fmt.Printf("ξ=%5.0f scores=%v reason=%s target=%d\n", xi, d.Scores, d.Reason, d.Target)
		if d.Target >= 0 {
			current = d.Target
			break
		}
	}
	fmt.Println("flow now on switch", current)
	// Output:
	// ξ=23000 scores=[1 0 0 0] reason=stay target=-1
	// ξ=28000 scores=[1 0 0 0] reason=stay target=-1
	// ξ=31000 scores=[1 0 0 0] reason=stay target=-1
	// ξ=26000 scores=[1 0 0 0] reason=stay target=-1
	// ξ=29000 scores=[1 0 0 0] reason=stay target=-1
	// ξ=33000 scores=[1 0 0 0] reason=stay target=-1
	// ξ=36000 scores=[0 0 1 0] reason=rerouted target=2
	// flow now on switch 2
}

// The gate admits a candidate only after it has beaten the current switch by
// more than δ on W consecutive steps.
func ExampleGate() {
	gate, err := policy.NewGate(policy.DefaultGateConfig()) // δ=0.1, W=3, cooldown 15 s
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, q := range [][]float64{
		{5.0, 5.05, 4.0, 4.0}, // switch 1 better, but by less than δ
		{5.0, 5.60, 4.0, 4.0}, // vote 1
		{5.0, 5.90, 4.0, 4.0}, // vote 2
		{5.0, 6.20, 4.0, 4.0}, // vote 3: admitted
	} {
		d := proflow.Decision{Time: start.Add(time.Duration(i) * 500 * time.Millisecond), Current: 0, Scores: q}
		gate.Admit(&d)
		fmt.Printf("best=%d ΔQ=%.2f votes=%d reason=%s target=%d\n", d.Best, d.Margin, d.Votes, d.Reason, d.Target)
	}
	// Output:
	// best=1 ΔQ=0.05 votes=0 reason=margin target=-1
	// best=1 ΔQ=0.60 votes=1 reason=votes target=-1
	// best=1 ΔQ=0.90 votes=2 reason=votes target=-1
	// best=1 ΔQ=1.20 votes=3 reason=rerouted target=1
}
