package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A corpus draw is a member of the family's design from seeds of its own:
// valid on every fabric the corpora use, reproducible, and never a member
// of the held-out or development families.
func TestDrawFamilyScenario(t *testing.T) {
	heldOut := map[string]bool{}
	for _, m := range generateFamily() {
		heldOut[trafficKey(m.sc)] = true
	}
	for _, m := range generateKindsFamily() {
		heldOut[trafficKey(m.sc)] = true
	}
	if len(heldOut) < FamilySize {
		t.Fatalf("%d distinct held-out traffics, want at least %d", len(heldOut), FamilySize)
	}
	for _, size := range [][2]int{{4, 3}, {2, 3}, {8, 3}, {4, 7}} {
		cfg, err := DefaultConfig().WithFabric(size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		traps := 0
		for seed := range uint64(6) {
			for cell := range FamilySize {
				sc, err := DrawFamilyScenario(cfg, seed, cell)
				if err != nil {
					t.Fatalf("%dx%d seed %d cell %d: %v", size[0], size[1], seed, cell, err)
				}
				if size == [2]int{4, 3} {
					if heldOut[trafficKey(sc)] {
						t.Errorf("seed %d cell %d draws the traffic of a held-out member", seed, cell)
					}
				}
				if strings.Contains(sc.Description, "Destination trap") {
					traps++
				}
			}
		}
		if size[0] == 2 && traps != 0 {
			t.Errorf("2x%d: %d draws with a destination trap, want none on two switches", size[1], traps)
		}
		if size[0] > 2 && traps == 0 {
			t.Errorf("%dx%d: no draw with a destination trap, want the design's traps", size[0], size[1])
		}
	}
	// The first draws of these seeds and cells (found among seeds 0–39)
	// are held-out traffic: DrawFamilyScenario draws them again.
	for _, sc := range [][2]int{{10, 57}, {21, 0}, {29, 5}} {
		raw := rawDraw(DefaultConfig(), uint64(sc[0]), sc[1])
		if !heldOut[trafficKey(raw)] {
			t.Errorf("seed %d cell %d: first draw is not held-out traffic; the case tests nothing", sc[0], sc[1])
			continue
		}
		got, err := DrawFamilyScenario(DefaultConfig(), uint64(sc[0]), sc[1])
		if err != nil {
			t.Fatal(err)
		}
		if heldOut[trafficKey(got)] {
			t.Errorf("seed %d cell %d: drew held-out traffic", sc[0], sc[1])
		}
	}
	cfg := DefaultConfig()
	a, err := DrawFamilyScenario(cfg, 7, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DrawFamilyScenario(cfg, 7, 3+FamilySize)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("the same seed and cell drew different scenarios (-first +second):\n%s", diff)
	}
	c, _ := DrawFamilyScenario(cfg, 8, 3)
	if cmp.Equal(a.Congesters, c.Congesters) {
		t.Error("seeds 7 and 8 drew the same congesters for cell 3")
	}
	one := DefaultConfig()
	one.Switches = 1
	if _, err := DrawFamilyScenario(one, 1, 0); err == nil || !strings.Contains(err.Error(), "switches 1") {
		t.Errorf("a fabric of one switch: %v, want an error naming its switches", err)
	}
	few := DefaultConfig()
	few.CongestionLeaves = []int{0}
	if _, err := DrawFamilyScenario(few, 1, 0); err == nil || !strings.Contains(err.Error(), "congester hosts") {
		t.Errorf("a fabric of one congester host: %v, want an error naming the congester hosts", err)
	}
	if a, b := mustDraw(t, cfg, 7, 3-FamilySize), mustDraw(t, cfg, 7, 3); !cmp.Equal(a, b) {
		t.Error("cell -61 and cell 3 drew different scenarios, want the same member (modulo FamilySize)")
	}
}

// mustDraw returns DrawFamilyScenario's draw or fails the test.
func mustDraw(t *testing.T, cfg Config, seed uint64, cell int) *Scenario {
	t.Helper()
	sc, err := DrawFamilyScenario(cfg, seed, cell)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// rawDraw is the first draw DrawFamilyScenario makes for seed and cell,
// before any redraw.
func rawDraw(cfg Config, seed uint64, cell int) *Scenario {
	s := familyShape{switches: cfg.Switches, leaves: len(cfg.CongestionLeaves), cfg: cfg, hosts: congesterHosts(cfg), draw: &[2]uint64{corpusFamilySeed1, seed}}
	return s.generate()[cell].sc
}
