package southboundtest_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// A Fabric on a ManualClock answers telemetry with the values a test set,
// stamped with virtual time, and records where the enforcer put the flow.
func Example() {
	ctx := context.Background()
	clock := southboundtest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fabric := southboundtest.NewFabric(proflow.PaperTopology(), clock)
	flow := proflow.FlowID{
		Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"),
		SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP,
	}

	fabric.SetSwitch(2, proflow.SwitchSample{TxRate: 23e6, OverflowRate: 31e3, FlowCount: 12})
	fabric.SetFlow(proflow.FlowSample{Throughput: 4e6})
	clock.Advance(500 * time.Millisecond)

	var obs proflow.Observation
	if err := fabric.Collect(ctx, &obs); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(obs.Time.Format("15:04:05.000"), len(obs.Switches), obs.Switches[2].FlowCount, obs.Flow.Throughput)

	if err := fabric.Place(ctx, flow, 4); err != nil {
		fmt.Println(err)
	}
	if err := fabric.Place(ctx, flow, 1); err != nil {
		fmt.Println(err)
	}
	sw, _ := fabric.Locate(ctx, flow)
	fmt.Println("flow on", fabric.Topology().Switches[sw])
	// Output:
	// 00:00:00.500 4 12 4e+06
	// southboundtest: place tcp 10.0.0.1:5001->10.0.0.8:5201: proflow: switch index 4 out of range, want 0..3 ([agg1 agg2 agg3 agg4])
	// flow on agg2
}
