package eval

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

func TestWindowLoad(t *testing.T) {
	cfg := sim.DefaultConfig()
	for _, tc := range []struct {
		scenario string
		want     []float64
	}{
		{"S1", []float64{600, 0, 0, 0}},
		// Rolling: every switch carries the five hosts for 30 s of the
		// window, the later ones when less of it is left.
		{"S6", []float64{150, 150 * 0.75, 150 * 0.5, 150 * 0.25}},
		// C1: five hosts of 6 × 1 Mbit/s, each 3% of the 200 Mbit/s bucket.
		{"C1", []float64{5 * 0.03 * 120, 0, 0, 0}},
	} {
		sc, err := sim.BuiltinScenario(tc.scenario)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sc.WindowLoad(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
			t.Errorf("%s load (-want +got):\n%s", tc.scenario, diff)
		}
	}
}

// TestOracleMovesOnceAtCongestionStart: in S1 the oracle leaves agg1 at the
// first step of the window for a clean switch and never moves again; in S6
// it goes to the switch the rolling congestion reaches last.
func TestOracleMovesOnceAtCongestionStart(t *testing.T) {
	var scs []*sim.Scenario
	for _, n := range []string{"S1", "S6"} {
		sc, err := sim.BuiltinScenario(n)
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	oracle, err := ReferencePolicy(OracleName)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := Sweep{Scenarios: scs, Policies: []PolicySpec{oracle}, Repeats: 1, Seed: 1, Parallelism: 1}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		switch e.Scenario {
		case "S1":
			if len(e.Reroutes) != 1 || e.Reroutes[0].At < 0 || e.Reroutes[0].At > 0.5 || e.Reroutes[0].To != 1 {
				t.Errorf("S1: oracle reroutes %+v, want one move to agg2 (index 1) at congestion start", e.Reroutes)
			}
		case "S6":
			if len(e.Reroutes) != 1 || e.Reroutes[0].To != 3 {
				t.Errorf("S6: oracle reroutes %+v, want one move to agg4 (index 3)", e.Reroutes)
			}
		}
	}
	if _, _, _, err := oracle.New(sim.DefaultConfig().Topology()); err == nil {
		t.Error("the oracle builds without a scenario")
	}
}
