package sim

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sizedMembers generates the family of a size, failing the test if the
// size has none.
func sizedMembers(t *testing.T, switches, leaves int) []familyMember {
	t.Helper()
	shape, err := sizedFamily(switches, leaves)
	if err != nil {
		t.Fatal(err)
	}
	return shape.generate()
}

func TestSizedFamilyBuiltinIsH(t *testing.T) {
	names, err := SizedFamilyScenarios(4, 3)
	if err != nil || !slices.Equal(names, FamilyScenarios()) {
		t.Errorf("SizedFamilyScenarios(4, 3) = %v, %v; want H1..H64", names, err)
	}
	names, err = FamilyScenariosFor(TestbedConfig())
	if err != nil || !slices.Equal(names, FamilyScenarios()) {
		t.Errorf("FamilyScenariosFor(testbed) = %v, %v; want H1..H64", names, err)
	}
}

func TestSizedFamilyReproducible(t *testing.T) {
	a, b := sizedMembers(t, 6, 3), sizedMembers(t, 6, 3)
	if diff := cmp.Diff(a[17].sc, b[17].sc); diff != "" {
		t.Errorf("two generations of H6x3-18 differ:\n%s", diff)
	}
	for i := range a {
		if !cmp.Equal(a[i].sc, b[i].sc) {
			t.Errorf("two generations of %s differ", a[i].sc.Name)
		}
	}
	c := sizedMembers(t, 6, 4)
	if cmp.Equal(a[0].sc.Congesters, c[0].sc.Congesters) && cmp.Equal(a[1].sc.Congesters, c[1].sc.Congesters) {
		t.Error("the 6x3 and 6x4 families start alike, want a seed of their own")
	}
}

// TestSizedFamilies checks the families of other sizes: 64 distinct
// members that validate against their fabric and the testbed resized,
// named H<S>x<L>-n, the built-in family's design cell for cell, the
// protected flow on every switch in turn, traps with their elephant
// elsewhere, and the fabric's extra congester hosts in use.
func TestSizedFamilies(t *testing.T) {
	design := familyDesign
	want := design(generateFamily())
	for _, size := range [][2]int{{6, 3}, {16, 3}, {8, 7}, {3, 2}} {
		s, l := size[0], size[1]
		ms := sizedMembers(t, s, l)
		names, err := SizedFamilyScenarios(s, l)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := FamilyConfig(s, l)
		testbed, err := TestbedConfig().WithFabric(s, l)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		perSwitch := make([]int, s)
		hosts := map[string]bool{}
		below, above := 0, 0
		for i, m := range ms {
			if m.sc.Name != names[i] || !strings.HasPrefix(names[i], "H"+strings.TrimPrefix(sizeSuffix(s, l), "-")+"-") {
				t.Errorf("member %d is %s, names[%d] = %s", i, m.sc.Name, i, names[i])
			}
			for _, c := range []Config{cfg, testbed} {
				if err := m.sc.ValidateLimits(c, DefaultLimits()); err != nil {
					t.Errorf("%s on %s: %v", m.sc.Name, c.Name, err)
				}
			}
			b, _ := json.Marshal(m.sc.Congesters)
			if other, dup := seen[string(b)]; dup {
				t.Errorf("%s has the congesters of %s", m.sc.Name, other)
			}
			seen[string(b)] = m.sc.Name
			perSwitch[m.plan.protected]++
			if m.plan.trap {
				if m.plan.trapAt == m.plan.protected {
					t.Errorf("%s: trap elephant on the protected flow's switch", m.sc.Name)
				}
				if m.plan.trapAt < m.plan.protected {
					below++
				} else {
					above++
				}
			}
			for _, c := range m.sc.Congesters {
				hosts[c.Host] = true
			}
			if n := len(m.sc.Congesters); n > familyMaxEntries {
				t.Errorf("%s: %d congester entries, want at most %d", m.sc.Name, n, familyMaxEntries)
			}
		}
		if diff := cmp.Diff(want, design(ms), cmp.AllowUnexported(familyPlan{})); diff != "" {
			t.Errorf("%dx%d: the design differs from H1..H64's (-want +got):\n%s", s, l, diff)
		}
		if lo, hi := slices.Min(perSwitch), slices.Max(perSwitch); hi-lo > 1 {
			t.Errorf("%dx%d: protected flow per switch %v, want balanced within one", s, l, perSwitch)
		}
		if below < 3 || above < 3 {
			t.Errorf("%dx%d: trap elephants %d below, %d above the protected switch, want both", s, l, below, above)
		}
		shape, _ := sizedFamily(s, l)
		if len(hosts) != len(shape.hosts) {
			t.Errorf("%dx%d: congesters on %d hosts, want all %d congester hosts %v", s, l, len(hosts), len(shape.hosts), shape.hosts)
		}
	}
}

// familyDesign returns the design cells of a family, without their
// switches, in planKey order.
func familyDesign(ms []familyMember) []familyPlan {
	var out []familyPlan
	for _, m := range ms {
		p := m.plan
		p.protected, p.trapAt = 0, 0
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b familyPlan) int { return strings.Compare(planKey(a), planKey(b)) })
	return out
}

// planKey orders design cells.
func planKey(p familyPlan) string {
	b, _ := json.Marshal([]any{p.pattern, p.overlap, p.arrival, p.trap, p.short})
	return string(b)
}

func TestSizedFamilyLookup(t *testing.T) {
	sc, err := LookupScenario("H16x3-40")
	if err != nil {
		t.Fatal(err)
	}
	want := sizedMembers(t, 16, 3)[39].sc
	if diff := cmp.Diff(want, sc); diff != "" {
		t.Errorf("LookupScenario(H16x3-40) differs from the generator (-want +got):\n%s", diff)
	}
	for name, msg := range map[string]string{
		"H4x3-1":  "the 4x3 family is H1..H64",
		"H6x3-65": "want H6x3-1..H6x3-64",
		"H6x3-01": "want H6x3-1..H6x3-64",
		"H6x3":    "want H<switches>x<leaves>-<n>",
		"H2x3-1":  "2 switches, want at least 3",
		"H4x1-1":  "1 congester hosts, want at least 3",
	} {
		if _, err := LookupScenario(name); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("LookupScenario(%s) = %v, want an error containing %q", name, err, msg)
		}
	}
}
