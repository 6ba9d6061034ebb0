package main

import (
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

func TestScenarioWindows(t *testing.T) {
	sc := func(name string, w time.Duration) *sim.Scenario {
		return &sim.Scenario{Name: name, ProtectedSwitch: "agg1", Window: sim.Duration(w)}
	}
	if longest, all := scenarioWindows([]*sim.Scenario{sc("S1", 0), sc("S2", 0)}); longest != 120 || all != nil {
		t.Errorf("default windows: %v %v, want 120 and none per scenario", longest, all)
	}
	if longest, all := scenarioWindows([]*sim.Scenario{sc("S1", 40*time.Second), sc("S5", 40*time.Second)}); longest != 40 || all != nil {
		t.Errorf("40 s windows: %v %v, want 40 and none per scenario", longest, all)
	}
	longest, all := scenarioWindows([]*sim.Scenario{sc("S1", 40*time.Second), sc("N1", 60*time.Second)})
	if longest != 60 || all["S1"] != 40 || all["N1"] != 60 {
		t.Errorf("mixed windows: %v %v, want 60 and S1 40, N1 60", longest, all)
	}
}

func TestReactiveNote(t *testing.T) {
	if n := reactiveNote([]string{"static", "reactive"}, 200e6/8); n != "" {
		t.Errorf("paper's rate: note %q, want none", n)
	}
	if n := reactiveNote([]string{"static", "agent"}, 10e6/8); n != "" {
		t.Errorf("no reactive: note %q, want none", n)
	}
	if n := reactiveNote([]string{"reactive"}, 10e6/8); !strings.Contains(n, "ξ_th = 1350") {
		t.Errorf("10 Mbit/s: note %q, want ξ_th = 1350", n)
	}
}
