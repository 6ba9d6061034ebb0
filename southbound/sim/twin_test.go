package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// durationParser returns a parser of Go durations that fails t on a bad
// one.
func durationParser(t *testing.T) func(string) sim.Duration {
	return func(s string) sim.Duration {
		v, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return sim.Duration(v)
	}
}

func TestEndedAt(t *testing.T) {
	d := durationParser(t)
	sc := &sim.Scenario{
		Name: "twin", Description: "three congesters", ProtectedSwitch: "agg1",
		Congesters: []sim.Congester{
			{Host: "h2", Arrive: d("20s"), Switch: "agg1", Moves: []sim.Move{{At: d("25s"), Switch: "agg2"}, {At: d("40s"), Switch: "agg3"}}},
			{Host: "h3", Arrive: d("20s"), Switch: "agg1", Depart: d("28s")},
			{Host: "h4", Arrive: d("31s"), Switch: "agg1"},
		},
	}
	orig := sc.Clone()
	got, err := sc.EndedAt(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []sim.Congester{
		{Host: "h2", Arrive: d("20s"), Switch: "agg1", Moves: []sim.Move{{At: d("25s"), Switch: "agg2"}}, Depart: d("30s")},
		{Host: "h3", Arrive: d("20s"), Switch: "agg1", Depart: d("28s")},
	}
	if diff := cmp.Diff(want, got.Congesters); diff != "" {
		t.Errorf("EndedAt(10s) congesters (-want +got):\n%s", diff)
	}
	if got.Name != "twin-end10s" || got.ProtectedSwitch != "agg1" || got.Length() != sc.Length() {
		t.Errorf("EndedAt(10s): name %q, switch %q, length %v; want twin-end10s, agg1, %v", got.Name, got.ProtectedSwitch, got.Length(), sc.Length())
	}
	if err := got.Validate(sim.DefaultConfig()); err != nil {
		t.Errorf("the twin does not validate: %v", err)
	}
	if diff := cmp.Diff(orig, sc); diff != "" {
		t.Errorf("EndedAt changed the scenario it was called on (-before +after):\n%s", diff)
	}
	quiet, err := sc.EndedAt(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(quiet.Congesters) != 0 {
		t.Errorf("EndedAt(0) congesters %+v, want none (every one arrives at congestion start or later)", quiet.Congesters)
	}
	if err := quiet.Validate(sim.DefaultConfig()); err != nil {
		t.Errorf("the quiet twin does not validate: %v", err)
	}
	for _, bad := range []time.Duration{-time.Second, 120 * time.Second} {
		if _, err := sc.EndedAt(bad); err == nil || !strings.Contains(err.Error(), "want in [0s, 2m0s)") {
			t.Errorf("EndedAt(%v) error %v, want one naming the window", bad, err)
		}
	}
}

func TestFrozenAt(t *testing.T) {
	d := durationParser(t)
	sc := &sim.Scenario{
		Name: "twin", ProtectedSwitch: "agg1",
		Congesters: []sim.Congester{
			{Host: "h2", Arrive: d("20s"), Switch: "agg1", Moves: []sim.Move{{At: d("25s"), Switch: "agg2"}, {At: d("40s"), Switch: "agg3"}}, Depart: d("50s")},
			{Host: "h3", Arrive: d("20s"), Switch: "agg1", Depart: d("28s")},
			{Host: "h4", Arrive: d("31s"), Switch: "agg1"},
		},
	}
	got, err := sc.FrozenAt(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []sim.Congester{
		{Host: "h2", Arrive: d("20s"), Switch: "agg1", Moves: []sim.Move{{At: d("25s"), Switch: "agg2"}}},
		{Host: "h3", Arrive: d("20s"), Switch: "agg1", Depart: d("28s")},
	}
	if diff := cmp.Diff(want, got.Congesters); diff != "" {
		t.Errorf("FrozenAt(10s) congesters (-want +got):\n%s", diff)
	}
	if got.Name != "twin-freeze10s" {
		t.Errorf("FrozenAt(10s) name %q, want twin-freeze10s", got.Name)
	}
	if err := got.Validate(sim.DefaultConfig()); err != nil {
		t.Errorf("the twin does not validate: %v", err)
	}
	if _, err := sc.FrozenAt(2 * time.Minute); err == nil {
		t.Error("FrozenAt(2m) on a 2 min window: no error")
	}
}

// A twin sends like its scenario until the first instant their congesters
// differ, which may come well after the time it was built at.
func TestSameTrafficUntil(t *testing.T) {
	sc, err := sim.DevFamilyScenario("E50") // bursts of 5 s at 0, 40 and 80 s after congestion start
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	for _, c := range []struct {
		kind string
		at   time.Duration
		want time.Duration
	}{
		{"end", 3 * s, 3 * s},      // a burst sends: it leaves at once
		{"freeze", 3 * s, 5 * s},   // it stays where the scenario's ends
		{"end", 10 * s, 40 * s},    // nothing sends: alike until the next burst
		{"freeze", 10 * s, 40 * s}, // the same
		{"end", 79 * s, 80 * s},
	} {
		var twin *sim.Scenario
		if c.kind == "end" {
			twin, err = sc.EndedAt(c.at)
		} else {
			twin, err = sc.FrozenAt(c.at)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := sim.SameTrafficUntil(sc, twin, c.at); got != c.want {
			t.Errorf("%s: alike until %v, want %v", twin.Name, got, c.want)
		}
		if got := sim.SameTrafficUntil(sc, sc.Clone(), c.at); got != sc.Length()-sc.Start() {
			t.Errorf("E50 and a copy: alike until %v, want the whole window %v", got, sc.Length()-sc.Start())
		}
	}
	// A rolling crowd frozen between moves differs at the scenario's next move.
	s6, err := sim.BuiltinScenario("S6")
	if err != nil {
		t.Fatal(err)
	}
	frozen, err := s6.FrozenAt(5 * s)
	if err != nil {
		t.Fatal(err)
	}
	next := time.Duration(-1)
	for _, c := range s6.Congesters {
		for _, m := range c.Moves {
			if mt := time.Duration(m.At) - s6.Start(); mt >= 5*s && (next < 0 || mt < next) {
				next = mt
			}
		}
	}
	if got := sim.SameTrafficUntil(s6, frozen, 5*s); next < 0 || got != next {
		t.Errorf("S6 frozen at 5s: alike until %v, want its next move %v", got, next)
	}
}
