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

// With Drain the gate holds a move its votes admit while the flow's
// switch's reserve lasts longer than the horizon by its own estimate: here
// a reserve of 10 s of the bucket rate C, served at 1.2 C (Rate), drained
// by a switch sending 3.2 C, so 2 s of C a second; at 1.1 C it refills.
func ExampleDrainConfig() {
	gate, err := policy.NewGate(policy.GateConfig{Margin: 0.5, Votes: 2,
		Drain: policy.DrainConfig{Depth: 10, Rate: 1.2, Horizon: time.Second}})
	if err != nil {
		panic(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, load := range []float64{3.2, 3.2, 1.1, 3.2, 3.2, 3.2, 3.2, 3.2} {
		d := proflow.Decision{Time: start.Add(time.Duration(i) * time.Second), Current: 0,
			Scores: []float64{0, 1, 0, 0}, Load: load, Best: -1, Target: -1}
		gate.Admit(&d)
		fmt.Printf("t=%ds load=%.1f votes=%d reason=%s target=%d\n", i, load, d.Votes, d.Reason, d.Target)
		if d.Target >= 0 {
			break
		}
	}
	// The deficit D after each step: 0, 2, 1.9 (refilled at 1.1 C), 3.9,
	// 5.9, 7.9 (1.05 s left), 9.9 (0.05 s left: the move goes ahead).
	// Output:
	// t=0s load=3.2 votes=1 reason=votes target=-1
	// t=1s load=3.2 votes=2 reason=reserve target=-1
	// t=2s load=1.1 votes=3 reason=reserve target=-1
	// t=3s load=3.2 votes=4 reason=reserve target=-1
	// t=4s load=3.2 votes=5 reason=reserve target=-1
	// t=5s load=3.2 votes=6 reason=reserve target=-1
	// t=6s load=3.2 votes=7 reason=rerouted target=1
}

// A gate with Drain.Recheck defers the move its reserve estimate lets go
// ahead to one reading before the estimate's end; a controller whose
// telemetry peeks takes that reading (proflow.Controller.Recheck), and the
// move is made only if the crowd is still there.
func ExampleGate_Recheck() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, peeked := range []float64{3, 0.8} { // the crowd stays; the crowd has left
		gate, err := policy.NewGate(policy.GateConfig{Margin: 0.5, Votes: 2,
			Drain: policy.DrainConfig{Depth: 10, Horizon: 2 * time.Second, Recheck: 500 * time.Millisecond}})
		if err != nil {
			panic(err)
		}
		var d proflow.Decision
		for i := range 4 { // load 3: the deficit grows by 2 s of C a second
			d = proflow.Decision{Time: start.Add(time.Duration(i) * time.Second), Current: 0,
				Scores: []float64{0, 1, 0, 0}, Load: 3, Best: -1, Target: -1, Recheckable: true}
			gate.Admit(&d)
		}
		fmt.Printf("step at 3s: reason=%s target=%d recheck after %v\n", d.Reason, d.Target, d.Recheck)
		r := proflow.Decision{Time: d.Time.Add(d.Recheck), Current: 0, Load: peeked, Rechecking: true}
		gate.Recheck(&r)
		fmt.Printf("recheck at load %.1f: reason=%s target=%d\n", peeked, r.Reason, r.Target)
	}
	// Output:
	// step at 3s: reason=reserve target=-1 recheck after 1.5s
	// recheck at load 3.0: reason=rerouted target=1
	// step at 3s: reason=reserve target=-1 recheck after 1.5s
	// recheck at load 0.8: reason=reserve target=-1
}
