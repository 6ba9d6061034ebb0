package sim_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// R<n>, V<n> and O<n> are S<n> with exactly the protected kind of R1, V1
// and O1 added: the same congesters, timing and switch, a name of their
// own and a description that starts from S<n>'s.
func TestKindScenariosAreSPlusKind(t *testing.T) {
	for _, prefix := range []string{"R", "V", "O"} {
		first, err := sim.BuiltinScenario(prefix + "1")
		if err != nil {
			t.Fatal(err)
		}
		if first.ProtectedKind.IsBulk() {
			t.Fatalf("%s1 has a bulk protected flow, want a kind", prefix)
		}
		for n := 2; n <= 12; n++ {
			name, base := prefix+strconv.Itoa(n), "S"+strconv.Itoa(n)
			got, err := sim.BuiltinScenario(name)
			if err != nil {
				t.Fatal(err)
			}
			want, err := sim.BuiltinScenario(base)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got.Description, base+" with ") || !strings.HasSuffix(got.Description, base+": "+want.Description) {
				t.Errorf("%s: description %q, want %q with the kind, then %s's description", name, got.Description, base+" with", base)
			}
			want.Name, want.Description, want.ProtectedKind = name, got.Description, first.ProtectedKind
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s is not %s with %s1's protected kind (-want +got):\n%s", name, base, prefix, diff)
			}
		}
	}
}

// The built-ins list every kind scenario, in order after the paper's.
func TestKindScenariosListed(t *testing.T) {
	names := sim.BuiltinScenarios()
	var want []string
	for _, prefix := range []string{"O", "R", "V"} {
		for n := 1; n <= 12; n++ {
			want = append(want, prefix+strconv.Itoa(n))
		}
	}
	want = append(want, "Q1", "Q2", "T1", "T2", "T3")
	for _, n := range want {
		if !slices.Contains(names, n) {
			t.Errorf("BuiltinScenarios() lacks %s", n)
		}
	}
	if i, j := slices.Index(names, "R12"), slices.Index(names, "S1"); i < j {
		t.Errorf("BuiltinScenarios() = %v: R12 before S1, want the paper's first", names)
	}
}

// The traps and slow queues are what their descriptions say.
func TestTrapAndQueueScenarios(t *testing.T) {
	get := func(name string) *sim.Scenario {
		t.Helper()
		sc, err := sim.BuiltinScenario(name)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	for _, name := range []string{"T2", "T3"} {
		if sc := get(name); len(sc.Congesters) != 0 {
			t.Errorf("%s: %d congesters, want none (a trap of the flow's own demand)", name, len(sc.Congesters))
		}
	}
	if k := get("T2").ProtectedKind; k.Kind != sim.KindRR || !(k.RequestRateFrom > 0 && k.RequestRateFrom < k.RequestRate) || k.From == 0 {
		t.Errorf("T2: protected kind %+v, want rr whose request rate drops at from", k)
	}
	if k := get("T3").ProtectedKind; k.Kind != sim.KindOnOff || k.Duty == get("T1").ProtectedKind.Duty {
		t.Errorf("T3: protected kind %+v, want onoff at another duty than T1's", k)
	}
	q1, q2 := get("Q1"), get("Q2")
	for _, sc := range []*sim.Scenario{q1, q2} {
		if sc.ProtectedKind.Kind != sim.KindRR {
			t.Errorf("%s: protected kind %+v, want rr", sc.Name, sc.ProtectedKind)
		}
		for _, c := range sc.Congesters {
			if c.StreamCap == 0 || len(c.Moves) != 0 || c.Depart != 0 {
				t.Errorf("%s: congester %+v, want a capped host that stays", sc.Name, c)
			}
		}
	}
	// Q1's hosts all arrive on k*, one after another; Q2's ramp is Q1's
	// first two hosts.
	for i, c := range q1.Congesters {
		if c.Switch != q1.ProtectedSwitch || (i > 0 && c.Arrive <= q1.Congesters[i-1].Arrive) {
			t.Errorf("Q1: congester %d %+v, want a later arrival on %s", i, c, q1.ProtectedSwitch)
		}
	}
	var ramp []sim.Congester
	for _, c := range q2.Congesters {
		if c.Switch == q2.ProtectedSwitch {
			ramp = append(ramp, c)
		}
	}
	if diff := cmp.Diff(q1.Congesters[:2], ramp); diff != "" {
		t.Errorf("Q2's ramp on %s is not Q1's first two hosts (-Q1 +Q2):\n%s", q2.ProtectedSwitch, diff)
	}
	// No switch is less loaded than Q2's k*, so a move cannot find a
	// cleaner one (the oracle stays).
	load, err := q2.WindowLoad(sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if k := 0; slices.Min(load) < load[k] {
		t.Errorf("Q2: window load %v, want agg1's the least", load)
	}
}
