package sim_test

import (
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// S11's variants put the lone full-rate elephant and the protected flow
// together on another switch.
func TestS11Variants(t *testing.T) {
	for _, c := range []struct{ name, k, host string }{
		{"S11", "agg1", "h2"}, {"S11b", "agg2", "h2"}, {"S11c", "agg3", "h2"}, {"S11d", "agg4", "h2"}, {"S11e", "agg3", "h5"},
	} {
		sc, err := sim.BuiltinScenario(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.Congesters) != 1 {
			t.Fatalf("%s: %d congesters, want 1", c.name, len(sc.Congesters))
		}
		g := sc.Congesters[0]
		if sc.ProtectedSwitch != c.k || g.Switch != c.k || g.Host != c.host || g.StreamCap != 0 || g.Streams != 0 || len(g.Moves) != 0 || g.Depart != 0 {
			t.Errorf("%s: protected flow on %s, congester %+v; want a lone full-rate %s on %s", c.name, sc.ProtectedSwitch, g, c.host, c.k)
		}
	}
}

// S12's variants move the elephant and the protected flow so that the
// elephant's switch is, or is not, the lowest-index candidate that a
// fewest-flows rule with a lowest-index tie-break (policy.Crowd) picks.
func TestS12Variants(t *testing.T) {
	for _, c := range []struct {
		name, k, elephant string
		springs           bool // the lowest-index candidate is the elephant's
	}{
		{"S12", "agg1", "agg2", true},
		{"S12b", "agg1", "agg3", false},
		{"S12c", "agg2", "agg1", true},
		{"S12d", "agg3", "agg4", false},
		{"S12e", "agg4", "agg1", true},
	} {
		sc, err := sim.BuiltinScenario(c.name)
		if err != nil {
			t.Fatal(err)
		}
		hosts := map[string]int{} // congester hosts per switch
		lowest := ""
		for _, g := range sc.Congesters {
			hosts[g.Switch]++
			full := g.StreamCap == 0
			switch {
			case g.Switch == c.k && (!full || g.Arrive.String() != "20s"):
				t.Errorf("%s: congester %+v on the protected flow's switch, want a full-rate crowd host arriving at 20s", c.name, g)
			case g.Switch == c.elephant && (!full || g.Arrive != 0):
				t.Errorf("%s: congester %+v on %s, want the full-rate elephant from 0s", c.name, g, c.elephant)
			case g.Switch != c.k && g.Switch != c.elephant && full:
				t.Errorf("%s: congester %+v on %s is full-rate, want a capped host", c.name, g, g.Switch)
			}
		}
		for _, sw := range []string{"agg1", "agg2", "agg3", "agg4"} {
			want := 1
			if sw == c.k {
				want = 2
			}
			if hosts[sw] != want {
				t.Errorf("%s: %d congester hosts on %s, want %d", c.name, hosts[sw], sw, want)
			}
			if lowest == "" && sw != c.k {
				lowest = sw
			}
		}
		if sc.ProtectedSwitch != c.k || (lowest == c.elephant) != c.springs {
			t.Errorf("%s: protected flow on %s, lowest-index candidate %s, elephant on %s; want protected on %s and trap springing %v", c.name, sc.ProtectedSwitch, lowest, c.elephant, c.k, c.springs)
		}
	}
}
