package sim

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The development family is the held-out family's design drawn from its
// own seed: the same 64 cells, other hosts, switches and times.
func TestDevFamily(t *testing.T) {
	names := DevFamilyScenarios()
	if len(names) != FamilySize {
		t.Fatalf("%d development scenarios, want %d", len(names), FamilySize)
	}
	for _, n := range BuiltinScenarios() {
		if strings.HasPrefix(n, DevFamilyPrefix) {
			t.Errorf("built-in %s has the development family's prefix %s", n, DevFamilyPrefix)
		}
	}
	held, dev := generateFamily(), devFamily().generate()
	if diff := cmp.Diff(familyDesign(held), familyDesign(dev), cmp.AllowUnexported(familyPlan{})); diff != "" {
		t.Errorf("development family's design differs from the held-out family's (-held +dev):\n%s", diff)
	}
	same := 0
	cfg := DefaultConfig()
	for i, n := range names {
		if want := DevFamilyPrefix + strconv.Itoa(i+1); n != want {
			t.Errorf("DevFamilyScenarios()[%d] = %s, want %s", i, n, want)
		}
		sc, err := LookupScenario(n)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != n {
			t.Errorf("LookupScenario(%s).Name = %s", n, sc.Name)
		}
		if err := sc.ValidateLimits(cfg, DefaultLimits()); err != nil {
			t.Error(err)
		}
		h := held[i].sc
		if cmp.Equal(h.Congesters, sc.Congesters) && h.ProtectedSwitch == sc.ProtectedSwitch {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d development scenarios equal their held-out namesake, want other draws", same)
	}
	for _, n := range []string{"D0", "D65", "D01", "d1", "D"} {
		_, err := DevFamilyScenario(n)
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(n)) || !strings.Contains(err.Error(), "D1..D64") {
			t.Errorf("DevFamilyScenario(%q) = %v, want an error naming it and D1..D64", n, err)
		}
	}
	if _, err := LookupScenario("D65"); err == nil {
		t.Error("LookupScenario(D65) succeeded, want an error")
	}
}

// Every size has a development family: the sized held-out family's design
// from the development seed, D<S>x<L>-1..-64, never a held-out member.
func TestSizedDevFamily(t *testing.T) {
	for _, size := range [][2]int{{6, 3}, {16, 3}, {4, 3}} {
		s, l := size[0], size[1]
		cfg, err := FamilyConfig(s, l)
		if err != nil {
			t.Fatal(err)
		}
		names, err := DevFamilyScenariosFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if s == familySwitches && l == familyLeaves {
			if diff := cmp.Diff(DevFamilyScenarios(), names); diff != "" {
				t.Errorf("the 4x3 development family is not D1..D64 (-want +got):\n%s", diff)
			}
			continue
		}
		shape, _ := sizedFamily(s, l)
		shape.dev = true
		dev, held := shape.generate(), sizedMembers(t, s, l)
		if diff := cmp.Diff(familyDesign(held), familyDesign(dev), cmp.AllowUnexported(familyPlan{})); diff != "" {
			t.Errorf("%dx%d: development design differs from the held-out one (-held +dev):\n%s", s, l, diff)
		}
		prefix := DevFamilyPrefix + strconv.Itoa(s) + "x" + strconv.Itoa(l) + "-"
		for i, n := range names {
			if want := prefix + strconv.Itoa(i+1); n != want {
				t.Fatalf("%dx%d: name %d = %s, want %s", s, l, i, n, want)
			}
			sc, err := LookupScenario(n)
			if err != nil {
				t.Fatal(err)
			}
			if err := sc.ValidateLimits(cfg, DefaultLimits()); err != nil {
				t.Error(err)
			}
			if h := held[i].sc; cmp.Equal(h.Congesters, sc.Congesters) && h.ProtectedSwitch == sc.ProtectedSwitch {
				t.Errorf("%s equals its held-out namesake", n)
			}
		}
	}
	for _, n := range []string{"D4x3-1", "D6x3-65", "D6x3-0", "D6x3", "D6y3-1", "D2x3-1"} {
		if _, err := DevFamilyScenario(n); err == nil || !strings.Contains(err.Error(), strconv.Quote(n)) {
			t.Errorf("DevFamilyScenario(%q) = %v, want an error naming it", n, err)
		}
	}
}
