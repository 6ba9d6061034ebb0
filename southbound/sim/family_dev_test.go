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
	held, dev := generateFamily(), devFamily(devFirst).generate()
	if diff := cmp.Diff(familyDesign(held), familyDesign(dev), cmp.AllowUnexported(familyPlan{})); diff != "" {
		t.Errorf("development family's design differs from the held-out family's (-held +dev):\n%s", diff)
	}
	same := 0
	cfg := DefaultConfig()
	for i, n := range names {
		if want := DevFamilyPrefix + strconv.Itoa(i+1); n != want {
			t.Errorf("DevFamilyScenarios()[%d] = %s, want %s", i, n, want)
		}
		sc := lookupValid(t, n, cfg)
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
		shape.dev = devFirst
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

// The second development family is the same design from a third seed:
// E1..E64, never equal to its D or H namesake, at every size.
func TestSecondDevFamily(t *testing.T) {
	names := SecondDevFamilyScenarios()
	if len(names) != FamilySize || names[0] != "E1" || names[FamilySize-1] != "E64" {
		t.Fatalf("SecondDevFamilyScenarios() = %v, want E1..E64", names)
	}
	for _, n := range BuiltinScenarios() {
		if strings.HasPrefix(n, SecondDevFamilyPrefix) {
			t.Errorf("built-in %s has the second development family's prefix %s", n, SecondDevFamilyPrefix)
		}
	}
	held, dev, dev2 := generateFamily(), devFamily(devFirst).generate(), devFamily(devSecond).generate()
	if diff := cmp.Diff(familyDesign(held), familyDesign(dev2), cmp.AllowUnexported(familyPlan{})); diff != "" {
		t.Errorf("second development family's design differs from the held-out family's (-held +dev2):\n%s", diff)
	}
	cfg := DefaultConfig()
	for i, n := range names {
		sc := lookupValid(t, n, cfg)
		for _, other := range []familyMember{held[i], dev[i]} {
			if cmp.Equal(other.sc.Congesters, sc.Congesters) && other.sc.ProtectedSwitch == sc.ProtectedSwitch {
				t.Errorf("%s equals %s, want another draw", n, other.sc.Name)
			}
		}
	}
	for _, n := range []string{"E0", "E65", "E01", "e1", "E"} {
		_, err := DevFamilyScenario(n)
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(n)) || !strings.Contains(err.Error(), "E1..E64") {
			t.Errorf("DevFamilyScenario(%q) = %v, want an error naming it and E1..E64", n, err)
		}
	}

	cfg6, err := FamilyConfig(6, 3)
	if err != nil {
		t.Fatal(err)
	}
	sized, err := SecondDevFamilyScenariosFor(cfg6)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := DevFamilyScenariosFor(cfg6)
	for i, n := range sized {
		if want := "E6x3-" + strconv.Itoa(i+1); n != want {
			t.Fatalf("6x3: name %d = %s, want %s", i, n, want)
		}
		a, b := lookupValid(t, n, cfg6), lookupValid(t, first[i], cfg6)
		if cmp.Equal(a.Congesters, b.Congesters) && a.ProtectedSwitch == b.ProtectedSwitch {
			t.Errorf("%s equals %s, want another draw", n, first[i])
		}
	}
	for _, n := range []string{"E4x3-1", "E6x3-65", "E6x3-0", "E6y3-1"} {
		if _, err := DevFamilyScenario(n); err == nil || !strings.Contains(err.Error(), strconv.Quote(n)) {
			t.Errorf("DevFamilyScenario(%q) = %v, want an error naming it", n, err)
		}
	}
}

// lookupValid returns LookupScenario(name), failing the test unless it is
// found, carries that name and passes cfg's default limits.
func lookupValid(t *testing.T, name string, cfg Config) *Scenario {
	t.Helper()
	sc, err := LookupScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Name != name {
		t.Errorf("LookupScenario(%s).Name = %s", name, sc.Name)
	}
	if err := sc.ValidateLimits(cfg, DefaultLimits()); err != nil {
		t.Error(err)
	}
	return sc
}
