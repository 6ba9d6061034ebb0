package eval

import (
	"context"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// On the simulator with the testbed calibration, latency-threshold moves
// the request/response flow of R1 (all congesters join its switch) and
// cuts the time above its completion-time objective well below static's;
// in T1 (the flow's own demand drops, no congestion) it never moves.
func TestLatencyThresholdOnKinds(t *testing.T) {
	static, err := ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	lt, err := ReferencePolicy(LatencyThresholdName)
	if err != nil {
		t.Fatal(err)
	}
	var scs []*sim.Scenario
	for _, n := range []string{"R1", "T1"} {
		sc, err := sim.BuiltinScenario(n)
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	sw := Sweep{Scenarios: scs, Policies: []PolicySpec{static, lt}, Repeats: 3, Seed: 1, Config: sim.TestbedConfig(), Parallelism: 2}
	eps, err := sw.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Baseline = "static"
	s, err := Summarize(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.Cell("R1", "static")
	c, _ := s.Cell("R1", LatencyThresholdName)
	if !(c.KindSLOSeconds < st.KindSLOSeconds/10) {
		t.Errorf("R1: latency-threshold %v s above the SLO, static %v s; want under a tenth of static's", c.KindSLOSeconds, st.KindSLOSeconds)
	}
	for _, ep := range s.Episodes[[2]string{"R1", LatencyThresholdName}] {
		if _, ok := ep.reroute(0, s.Options.Window); !ok {
			t.Errorf("R1 repeat %d: latency-threshold never moved the flow", ep.Repeat)
		}
	}
	if c, _ := s.Cell("T1", LatencyThresholdName); c.Reroutes != 0 {
		t.Errorf("T1: latency-threshold rerouted %d times, want never (no congestion: the flow only asks for less)", c.Reroutes)
	}
}
