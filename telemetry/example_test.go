package telemetry_test

import (
	"context"
	"fmt"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// A crowd arrives on the protected flow's switch agg1 before its overflow
// rises much: the flow count's signed deviation shows it.
func ExampleEncoder() {
	topo := proflow.PaperTopology()
	cfg := telemetry.DefaultEncoderConfig(topo)
	enc, err := telemetry.NewEncoder(cfg)
	if err != nil {
		panic(err)
	}
	// The baseline learned while the flow ran alone on agg1.
	if err := enc.SetBaseline(proflow.Baseline{Overflow: 23000, FlowCount: 2, Throughput: 23e6}); err != nil {
		panic(err)
	}

	var obs proflow.Observation
	obs.Resize(topo)
	obs.Switches[0] = proflow.SwitchSample{TxRate: 24e6, OverflowRate: 28000, FlowCount: 8}
	obs.Switches[1] = proflow.SwitchSample{TxRate: 5e6, OverflowRate: 1000, FlowCount: 2}
	obs.Flow = proflow.FlowSample{Throughput: 22e6, CongestionRate: 30e6}

	state := make(proflow.State, enc.Dim())
	if err := enc.Encode(state, &obs, 0); err != nil {
		panic(err)
	}
	fmt.Println("entries:", len(state))
	for k, name := range topo.Switches {
		x := state[cfg.AggOffset(k):]
		fmt.Printf("%s: overflow %+.2f, flow count %+.2f\n", name, x[telemetry.FeatureOverflow], x[telemetry.FeatureFlowCount])
	}
	fmt.Println("placement:", state[cfg.PlacementOffset():][:cfg.NumSwitches])
	fmt.Printf("throughput %.2f, congestion %.2f\n",
		state[cfg.FlowOffset()+telemetry.FeatureThroughput], state[cfg.FlowOffset()+telemetry.FeatureCongestionRate])
	// Output:
	// entries: 34
	// agg1: overflow +0.10, flow count +0.50
	// agg2: overflow +0.02, flow count +0.17
	// agg3: overflow +0.00, flow count +0.00
	// agg4: overflow +0.00, flow count +0.00
	// placement: [1 0 0 0]
	// throughput 0.88, congestion 1.00
}

// Switch statistics come from the southbound, overflow rates from an agent
// on each node.
func ExampleMerge() {
	topo := proflow.PaperTopology()
	stats := proflow.TelemetryFunc(func(_ context.Context, o *proflow.Observation) error {
		o.Resize(topo)
		for k := range o.Switches {
			o.Switches[k].TxRate = 20e6
		}
		return nil
	})
	overflow := telemetry.OverlayFunc(func(_ context.Context, o *proflow.Observation) error {
		o.Switches[2].OverflowRate = 31000
		return nil
	})

	tel, err := telemetry.Merge(stats, overflow)
	if err != nil {
		panic(err)
	}
	var obs proflow.Observation
	if err := tel.Collect(context.Background(), &obs); err != nil {
		panic(err)
	}
	fmt.Printf("%s: tx %.0f B/s, overflow %.0f B/s\n", topo.Switches[2], obs.Switches[2].TxRate, obs.Switches[2].OverflowRate)
	// Output:
	// agg3: tx 20000000 B/s, overflow 31000 B/s
}
