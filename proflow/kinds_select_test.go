package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// "kinds" selects the built-in kind scenarios, "heldout-kinds" and
// K1-K64 the held-out kinds family, "dev" and D1-D64 the development
// family, and "all" every built-in, the kind scenarios among them.
func TestSelectKindScenarios(t *testing.T) {
	cfg, lim := sim.DefaultConfig(), sim.DefaultLimits()
	names := func(sel string) []string {
		t.Helper()
		scs, err := selectScenarios(sel, nil, cfg, lim)
		if err != nil {
			t.Fatalf("selectScenarios(%q): %v", sel, err)
		}
		var out []string
		for _, sc := range scs {
			out = append(out, sc.Name)
		}
		return out
	}
	var want []string
	for _, n := range sim.BuiltinScenarios() {
		if strings.ContainsAny(n[:1], "OQRTV") {
			want = append(want, n)
		}
	}
	if got := names("kinds"); !slices.Equal(got, want) || len(got) != 3*12+5 {
		t.Errorf("selectScenarios(kinds) = %v, want the %d built-ins O*, Q*, R*, T*, V* %v", got, 3*12+5, want)
	}
	for _, sel := range []string{"heldout-kinds", "K1-K64"} {
		if got := names(sel); !slices.Equal(got, sim.KindsFamilyScenarios()) || len(got) != 64 {
			t.Errorf("selectScenarios(%q) = %v, want the 64 of sim.KindsFamilyScenarios()", sel, got)
		}
	}
	for _, sel := range []string{"dev", "D1-D64"} {
		if got := names(sel); !slices.Equal(got, sim.DevFamilyScenarios()) || len(got) != 64 {
			t.Errorf("selectScenarios(%q) = %v, want the 64 of sim.DevFamilyScenarios()", sel, got)
		}
	}
	for _, sel := range []string{"dev2", "E1-E64"} {
		if got := names(sel); !slices.Equal(got, sim.SecondDevFamilyScenarios()) || len(got) != 64 || got[0] != "E1" {
			t.Errorf("selectScenarios(%q) = %v, want the 64 of sim.SecondDevFamilyScenarios()", sel, got)
		}
	}
	for _, sel := range []string{"dev-kinds", "J1-J64"} {
		if got := names(sel); !slices.Equal(got, sim.DevKindsFamilyScenarios()) || len(got) != 64 || got[0] != "J1" {
			t.Errorf("selectScenarios(%q) = %v, want the 64 of sim.DevKindsFamilyScenarios()", sel, got)
		}
	}
	cfg6, err := sim.FamilyConfig(6, 3)
	if err != nil {
		t.Fatal(err)
	}
	want6, _ := sim.DevFamilyScenariosFor(cfg6)
	for _, sel := range []string{"dev", "D6x3-1-D6x3-64"} {
		scs, err := selectScenarios(sel, nil, cfg6, lim)
		if err != nil || len(scs) != 64 || scs[0].Name != "D6x3-1" || scs[63].Name != want6[63] {
			t.Errorf("selectScenarios(%q) at 6x3: %d scenarios, %v; want the 64 of D6x3-1..D6x3-64", sel, len(scs), err)
		}
	}
	for _, sel := range []string{"dev2", "E6x3-1-E6x3-64"} {
		scs, err := selectScenarios(sel, nil, cfg6, lim)
		if err != nil || len(scs) != 64 || scs[0].Name != "E6x3-1" || scs[63].Name != "E6x3-64" {
			t.Errorf("selectScenarios(%q) at 6x3: %d scenarios, %v; want the 64 of E6x3-1..E6x3-64", sel, len(scs), err)
		}
	}
	if got, want := names("R5,K3-K5,Q1"), []string{"R5", "K3", "K4", "K5", "Q1"}; !slices.Equal(got, want) {
		t.Errorf("selectScenarios(R5,K3-K5,Q1) = %v, want %v", got, want)
	}
	all := names("all")
	if !slices.Equal(all, sim.BuiltinScenarios()) {
		t.Errorf("selectScenarios(all) = %v, want the built-ins %v", all, sim.BuiltinScenarios())
	}
	for _, n := range append(want, "S1", "C2", "M4") {
		if !slices.Contains(all, n) {
			t.Errorf("selectScenarios(all) lacks %s", n)
		}
	}
	for _, n := range all {
		if n[0] == 'K' || n[0] == 'H' || n[0] == 'D' || n[0] == 'E' {
			t.Errorf("selectScenarios(all) has %s, want built-ins only", n)
		}
	}
	for _, sel := range []string{"K65", "K0", "K5-K3", "S1-K3", "H1-K3", "D65", "D3-D1", "E65", "E3-E1", "D1-E3"} {
		if _, err := selectScenarios(sel, nil, cfg, lim); !errors.Is(err, errUsage) {
			t.Errorf("selectScenarios(%q) = %v, want a usage error", sel, err)
		}
	}
}

// The demo keeps the built-ins it ran before the kind scenarios R2–R12,
// V2–V12, O2–O12, T2, T3, Q1 and Q2 were added.
func TestDemoScenarios(t *testing.T) {
	scs, err := selectDemoScenarios(sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, sc := range scs {
		got = append(got, sc.Name)
	}
	// Not the many-flow scenarios M1–M4, which one flow's controller
	// cannot run as they are meant.
	for _, n := range sim.BuiltinScenarios() {
		if !strings.ContainsAny(n[:1], "MOQRTV") || slices.Contains([]string{"O1", "R1", "T1", "V1"}, n) {
			want = append(want, n)
		}
	}
	if !slices.Equal(got, want) || len(got) != 28 {
		t.Errorf("demo scenarios %v, want the 28 built-ins %v", got, want)
	}
}
