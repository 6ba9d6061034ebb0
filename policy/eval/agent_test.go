package eval

import (
	"context"
	"runtime"
	"testing"

	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// TestCommittedAgentNeedlessMovesAndDestinations checks the committed
// testbed agent (models/default.safetensors, behind the gate it records) on
// the scenarios built for it: it never moves in N1 (congestion only on
// other switches) or N2 (a crowd that leaves within 6 s) over ten repeats,
// and keeps static's throughput there; in S12 it never moves to the
// elephant's switch; it stays with C1's crowd of capped flows, which
// leaves the bucket's reserve nearly whole on this profile (static keeps
// the flow's full rate there), on every repeat.
func TestCommittedAgentNeedlessMovesAndDestinations(t *testing.T) {
	cfg := sim.TestbedConfig()
	agent, err := AgentPolicy("agent", "../../models/default.safetensors", policy.GateConfig{}, cfg.Topology())
	if err != nil {
		t.Fatal(err)
	}
	if note := ProfileMismatch("agent", *agent.Model, cfg); note != "" {
		t.Fatalf("the committed model is not the testbed profile's: %s", note)
	}
	static, err := ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	run := func(names []string, repeats int) []*Episode {
		var scs []*sim.Scenario
		for _, n := range names {
			sc, err := sim.BuiltinScenario(n)
			if err != nil {
				t.Fatal(err)
			}
			scs = append(scs, sc)
		}
		eps, err := Sweep{Scenarios: scs, Policies: []PolicySpec{static, agent}, Repeats: repeats, Seed: 7, Config: cfg,
			Parallelism: runtime.NumCPU()}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	means := map[[2]string][]float64{}
	for _, e := range run([]string{"N1", "N2"}, 10) {
		means[[2]string{e.Scenario, e.Policy}] = append(means[[2]string{e.Scenario, e.Policy}], e.meanThroughput(DefaultOptions().Window))
		if e.Policy == "agent" && len(e.Reroutes) > 0 {
			t.Errorf("%s repeat %d: the agent moved at %.1f s, want no move where its switch stays or turns clean", e.Scenario, e.Repeat, e.Reroutes[0].At)
		}
	}
	for _, sc := range []string{"N1", "N2"} {
		a, s := mean(means[[2]string{sc, "agent"}]), mean(means[[2]string{sc, "static"}])
		if a < 0.98*s {
			t.Errorf("%s: agent %.2f MB/s, want at least 98%% of static's %.2f", sc, a/1e6, s/1e6)
		}
	}
	for _, e := range run([]string{"S12", "C1"}, 3) {
		if e.Policy != "agent" {
			continue
		}
		switch e.Scenario {
		case "S12":
			for _, r := range e.Reroutes {
				if r.To == 1 {
					t.Errorf("S12 repeat %d: the agent moved to agg2, the elephant's switch", e.Repeat)
				}
			}
		case "C1":
			if len(e.Reroutes) > 0 {
				t.Errorf("C1 repeat %d: the agent left the capped crowd at %.1f s, want it to stay (the crowd does not hurt the flow here)", e.Repeat, e.Reroutes[0].At)
			}
		}
	}
}
