package proflow_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/netip"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
	"github.com/proflow-sdn/proflow/telemetry"
)

// flowCounts is a minimal StateEncoder for the example: the state is the
// flow count of every aggregation switch.
type flowCounts struct{}

func (flowCounts) Dim() int { return 4 }

func (flowCounts) Encode(dst proflow.State, obs *proflow.Observation, current int) error {
	for k, s := range obs.Switches {
		dst[k] = float32(s.FlowCount)
	}
	return nil
}

// A Controller driven step by step over an in-memory fabric on virtual
// time. The policy prefers the switch with the fewest flows (a crowd
// policy); the gate admits a move when the best switch beats the current
// one by more than 3.
func ExampleController_Step() {
	ctx := context.Background()
	clock := southboundtest.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	topo := proflow.PaperTopology()
	fabric := southboundtest.NewFabric(topo, clock)
	fabric.SetSwitches(proflow.SwitchSample{TxRate: 23e6, OverflowRate: 20e3, FlowCount: 2})
	fabric.SetFlow(proflow.FlowSample{Throughput: 23e6})

	crowd := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
		for k := range scores {
			scores[k] = -float64(in.State[k])
		}
		return nil
	})
	gate := proflow.GateFunc(func(d *proflow.Decision) {
		d.Best = 0
		for k, s := range d.Scores {
			if s > d.Scores[d.Best] {
				d.Best = k
			}
		}
		d.Margin = d.Scores[d.Best] - d.Scores[d.Current]
		switch {
		case d.Best == d.Current:
			d.Reason = proflow.ReasonStay
		case d.Margin <= 3:
			d.Reason = proflow.ReasonMargin
		default:
			d.Target = d.Best
		}
	})

	cfg := proflow.DefaultConfig()
	cfg.Topology = topo
	cfg.Flow = proflow.FlowID{
		Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"),
		SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP,
	}
	cfg.Clock = clock
	cfg.Baseline = &proflow.Baseline{Overflow: 20e3, FlowCount: 2, Throughput: 23e6}
	cfg.PlaceInitial = true
	ctrl, err := proflow.NewController(cfg, fabric, flowCounts{}, crowd, gate, fabric)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := ctrl.Reconcile(ctx); err != nil {
		fmt.Println(err)
		return
	}

	step := func() {
		clock.Advance(cfg.Interval)
		d := ctrl.Step(ctx)
		fmt.Printf("%d %s on %s: %s", d.Seq, d.Time.Format("15:04:05.0"), topo.Switches[d.Current], d.Reason)
		if d.Rerouted {
			fmt.Printf(" to %s", topo.Switches[d.Target])
		}
		if d.Err != nil {
			fmt.Printf(" (%v)", d.Err)
		}
		fmt.Println()
	}
	step()
	fabric.SetSwitch(0, proflow.SwitchSample{TxRate: 25e6, OverflowRate: 21e3, FlowCount: 4}) // a crowd gathers
	step()
	fabric.SetSwitch(0, proflow.SwitchSample{TxRate: 25e6, OverflowRate: 22e3, FlowCount: 8})
	step()
	fabric.FailCollect(1, errors.New("agent down"))
	step()
	step()
	// Output:
	// 1 12:00:00.5 on agg1: stay
	// 2 12:00:01.0 on agg1: margin
	// 3 12:00:01.5 on agg1: rerouted to agg2
	// 4 12:00:02.0 on agg2: telemetry-error (proflow: telemetry: southboundtest: collect: injected failure: agent down)
	// 5 12:00:02.5 on agg2: stay
}

// Shadow mode on the same in-memory fabric: the crowd policy behind the
// paper's default gate (policy.DefaultGateConfig: 3 votes, a 15 s
// cooldown) wants to leave agg1 once a crowd gathers there; the controller
// reports the move it would make and makes none.
func ExampleConfig_shadow() {
	ctx := context.Background()
	clock := southboundtest.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	topo := proflow.PaperTopology()
	fabric := southboundtest.NewFabric(topo, clock)
	fabric.SetSwitches(proflow.SwitchSample{TxRate: 10e6, FlowCount: 2})
	fabric.SetSwitch(0, proflow.SwitchSample{TxRate: 25e6, OverflowRate: 22e3, FlowCount: 8}) // a crowd on agg1
	fabric.SetFlow(proflow.FlowSample{Throughput: 23e6})
	flow := proflow.FlowID{
		Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"),
		SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP,
	}
	if err := fabric.Place(ctx, flow, 0); err != nil { // where the flow runs today
		fmt.Println(err)
		return
	}

	crowd := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
		for k := range scores {
			scores[k] = -float64(in.State[k])
		}
		return nil
	})
	gate, err := policy.NewGate(policy.DefaultGateConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := proflow.DefaultConfig()
	cfg.Flow, cfg.Clock, cfg.Shadow = flow, clock, true
	cfg.Baseline = &proflow.Baseline{Overflow: 20e3, FlowCount: 2, Throughput: 23e6}
	ctrl, err := proflow.NewController(cfg, fabric, flowCounts{}, crowd, gate, fabric)
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 5 {
		clock.Advance(cfg.Interval)
		d := ctrl.Step(ctx)
		fmt.Printf("%d on %s: %s", d.Seq, topo.Switches[d.Current], d.Reason)
		if d.Reason == proflow.ReasonShadow {
			fmt.Printf(" (would move to %s)", topo.Switches[d.Target])
		}
		fmt.Println()
	}
	sw, _ := fabric.Placement(flow)
	fmt.Println("the fabric still forwards the flow through", topo.Switches[sw])
	// Output:
	// 1 on agg1: votes
	// 2 on agg1: votes
	// 3 on agg1: shadow (would move to agg2)
	// 4 on agg1: cooldown
	// 5 on agg1: cooldown
	// the fabric still forwards the flow through agg1
}

// The README's "Using it in your controller": the default state encoder,
// the learned agent and the stability gate, on the OpenFlow southbound of
// the paper's testbed as both Telemetry and Enforcer. No switch dials in
// here, so the first step finds no telemetry and holds the placement;
// against the Open vSwitch fabric of examples/ovsfabric the same code
// moves the flow.
func Example_embedding() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	cfg := proflow.DefaultConfig() // the paper's topology, 500 ms interval
	// The protected flow, h1 → h8: hosts of leaf1 and leaf4 of openflow.PaperFabric.
	flow, err := proflow.ParseFlowID("tcp 10.0.0.1:40000->10.0.0.8:5201")
	if err != nil {
		log.Fatal(err)
	}
	cfg.Flow = flow
	cfg.Observer = func(d proflow.Decision) { // every step's Decision; this example stops after one
		fmt.Printf("step %d: %s: %v\n", d.Seq, d.Reason, d.Err)
		cancel()
	}

	// The southbound: OpenFlow 1.3 to the leaf and aggregation switches.
	ofCfg := openflow.DefaultConfig()
	ofCfg.Fabric, ofCfg.Topology, ofCfg.Flow = openflow.PaperFabric(), cfg.Topology, cfg.Flow
	sb, err := openflow.NewServer(ofCfg) // refuses a flow that is not between two leaves' hosts
	if err != nil {
		log.Fatal(err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0") // or sb.ListenAndServe(ctx) on :6653
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- sb.Serve(ctx, ln) }() // switches dial in here

	// The learned agent and the gate its model was evaluated behind (or
	// models.LoadDefault(encCfg), the same model embedded; or policy.NewCrowd(...)).
	encCfg := telemetry.DefaultEncoderConfig(cfg.Topology)
	agent, gateCfg, err := policy.LoadModel("models/default.safetensors", encCfg)
	if err != nil {
		log.Fatal(err)
	}
	// The states the model was trained on: its layout, the fabric's constants.
	enc, err := telemetry.NewEncoder(agent.EncoderConfig())
	if err != nil {
		log.Fatal(err)
	}
	gate, err := policy.NewGate(gateCfg)
	if err != nil {
		log.Fatal(err)
	}
	ctrl, err := proflow.NewController(cfg, sb, enc, agent, gate, sb)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("run:", ctrl.Run(ctx)) // one decision per interval until ctx is cancelled
	fmt.Println("serve:", <-served)
	// Output:
	// step 1: telemetry-error: proflow: telemetry: openflow: switch agg1 (0x1) stats: switch agg1 (0x1): switch not connected (missing switch sample)
	// run: context canceled
	// serve: context canceled
}

// A MultiController protecting four flows that all sit on agg1 when it
// fills up. A crowd policy sends every one of them to the least loaded
// switch, agg3. Without a joint step all four go there; with Greedy, agg3
// takes the two its headroom allows (flow 4 first: it has twice the
// weight, then flow 1, the lower index among equals) and the other two go
// to their next choice, agg2 (herding names the lower index of equals).
func ExampleMultiController() {
	ctx := context.Background()
	clock := southboundtest.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	topo := proflow.PaperTopology() // buckets of C = 25 MB/s
	txRate := []float64{20e6, 18e6, 16e6, 22e6}
	fabric := proflow.TelemetryFunc(func(ctx context.Context, obs *proflow.Observation) error {
		obs.Time = clock.Now()
		for k := range obs.Switches {
			obs.Switches[k] = proflow.SwitchSample{TxRate: txRate[k], FlowCount: 4}
		}
		for i := range obs.Flows { // one sample per flow in obs.FlowIDs
			obs.Flows[i] = proflow.FlowSample{Throughput: 5e6}
		}
		return nil
	})
	crowd := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
		for k, s := range in.Obs.Switches {
			scores[k] = -s.TxRate / topo.BucketRate // the emptier, the better
		}
		return nil
	})
	parts := proflow.FlowParts{
		Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return flowCounts{}, nil },
		Policy:  func(proflow.ProtectedFlow) (proflow.Policy, error) { return crowd, nil }, // stateless: shared
		Gate:    func(proflow.ProtectedFlow) (proflow.Gate, error) { return policy.Immediate(), nil },
	}
	enforcer := proflow.EnforcerFunc(func(ctx context.Context, flow proflow.FlowID, sw int) error { return nil })

	for _, joint := range []proflow.JointPlacer{proflow.Independent{}, &proflow.Greedy{}} {
		cfg := proflow.DefaultMultiConfig()
		cfg.Topology, cfg.Clock, cfg.Joint = topo, clock, joint
		cfg.Baseline = &proflow.Baseline{FlowCount: 4, Throughput: 5e6} // each flow's φ0
		ctrl, err := proflow.NewMultiController(cfg, fabric, parts, enforcer)
		if err != nil {
			fmt.Println(err)
			return
		}
		for n := 1; n <= 4; n++ {
			flow, err := proflow.ParseFlowID(fmt.Sprintf("tcp 10.0.0.%d:40000->10.0.0.8:5201", n))
			if err != nil {
				fmt.Println(err)
				return
			}
			weight := 1.0
			if n == 4 {
				weight = 2
			}
			if err := ctrl.AddFlow(proflow.ProtectedFlow{ID: flow, Weight: weight}, 0); err != nil {
				fmt.Println(err)
				return
			}
		}
		clock.Advance(cfg.Interval)
		s := ctrl.Step(ctx)
		fmt.Printf("%T: herding %d onto %s\n", joint, s.Herding, topo.Switches[s.HerdingSwitch])
		for _, d := range s.Decisions {
			fmt.Printf("  %v: %s to %s\n", d.Flow.Src, d.Reason, topo.Switches[d.Target])
		}
	}
	// Output:
	// proflow.Independent: herding 4 onto agg3
	//   10.0.0.1: rerouted to agg3
	//   10.0.0.2: rerouted to agg3
	//   10.0.0.3: rerouted to agg3
	//   10.0.0.4: rerouted to agg3
	// *proflow.Greedy: herding 2 onto agg2
	//   10.0.0.1: rerouted to agg3
	//   10.0.0.2: rerouted to agg2
	//   10.0.0.3: rerouted to agg2
	//   10.0.0.4: rerouted to agg3
}
