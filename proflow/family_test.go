package main

import (
	"errors"
	"slices"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// The held-out family is selectable by range, by the keyword "heldout" and
// by name, and "all" still means the built-ins only.
func TestSelectHeldOutScenarios(t *testing.T) {
	cfg, lim := sim.DefaultConfig(), sim.DefaultLimits()
	names := func(scs []*sim.Scenario) []string {
		var out []string
		for _, sc := range scs {
			out = append(out, sc.Name)
		}
		return out
	}
	for _, sel := range []string{"H1-H64", "heldout"} {
		scs, err := selectScenarios(sel, nil, cfg, lim)
		if err != nil {
			t.Fatalf("selectScenarios(%q): %v", sel, err)
		}
		if got := names(scs); !slices.Equal(got, sim.FamilyScenarios()) || len(got) != 64 {
			t.Errorf("selectScenarios(%q) = %d scenarios %v, want the 64 of sim.FamilyScenarios()", sel, len(got), got)
		}
	}
	scs, err := selectScenarios("S1,H3-H5,H64", nil, cfg, lim)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(scs), []string{"S1", "H3", "H4", "H5", "H64"}; !slices.Equal(got, want) {
		t.Errorf("selectScenarios(S1,H3-H5,H64) = %v, want %v", got, want)
	}
	scs, err = selectScenarios("all", nil, cfg, lim)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(scs); !slices.Equal(got, sim.BuiltinScenarios()) {
		t.Errorf("selectScenarios(all) = %v, want the built-ins %v", got, sim.BuiltinScenarios())
	}
	for _, sel := range []string{"H65", "H0", "S1-H3", "H5-H3"} {
		if _, err := selectScenarios(sel, nil, cfg, lim); !errors.Is(err, errUsage) {
			t.Errorf("selectScenarios(%q) = %v, want a usage error", sel, err)
		}
	}
}
