package southboundtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// The simulated fabric is a proflow.BatchEnforcer: every protected flow of
// scenario M2 (eight, on all switches) goes through the many-flow cases in
// PlaceBatch steps. (Package sim runs the one-flow cases itself.)
func TestSimManyFlowsConformance(t *testing.T) {
	southboundtest.TestEnforcer(t, func(t *testing.T) southboundtest.EnforcerHarness {
		sc, err := sim.BuiltinScenario("M2")
		if err != nil {
			t.Fatal(err)
		}
		f, err := sim.New(sim.TestbedConfig(), sc, 1)
		if err != nil {
			t.Fatal(err)
		}
		var flows []proflow.FlowID
		for _, p := range f.Protected() {
			flows = append(flows, p.ID)
		}
		return southboundtest.EnforcerHarness{
			Enforcer: f,
			Topology: f.Topology(),
			Flow:     f.Flow(),
			Where:    func(context.Context) (int, error) { return f.Current(), nil },
			Flows:    flows,
			// The simulator's ground truth, read without the enforcer.
			WhereFlow: func(_ context.Context, flow proflow.FlowID) (int, error) {
				for _, tr := range f.FlowTruths(nil) {
					if tr.Flow.ID == flow {
						return tr.Switch, nil
					}
				}
				return -1, fmt.Errorf("%v is not a protected flow of M2", flow)
			},
		}
	})
}
