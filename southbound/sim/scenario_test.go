package sim_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

func TestBuiltinScenarios(t *testing.T) {
	want := []string{"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10", "S11", "S11b", "S11c", "S11d", "S11e", "S12", "S12b", "S12c", "S12d", "S12e", "C1", "C2", "M1", "M2", "M3", "M4", "N1", "N2",
		"O1", "O2", "O3", "O4", "O5", "O6", "O7", "O8", "O9", "O10", "O11", "O12", "Q1", "Q2",
		"R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "T1", "T2", "T3",
		"V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9", "V10", "V11", "V12"}
	if got := sim.BuiltinScenarios(); !slices.Equal(got, want) {
		t.Fatalf("BuiltinScenarios() = %v, want %v", got, want)
	}
	cfg := sim.DefaultConfig()
	for _, name := range want {
		t.Run(name, func(t *testing.T) {
			sc, err := sim.BuiltinScenario(name)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Name != name {
				t.Errorf("name %q, want %q", sc.Name, name)
			}
			// Round trip: marshal, load again, compare.
			data, err := json.Marshal(sc)
			if err != nil {
				t.Fatal(err)
			}
			back, err := sim.ReadScenario(bytes.NewReader(data), cfg)
			if err != nil {
				t.Fatalf("reading back %s: %v", data, err)
			}
			if diff := cmp.Diff(sc, back); diff != "" {
				t.Errorf("round trip changed the scenario (-want +got):\n%s", diff)
			}
			// And through a user's file.
			path := filepath.Join(t.TempDir(), name+".json")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			fromFile, err := sim.LoadScenario(path, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sc, fromFile); diff != "" {
				t.Errorf("file round trip changed the scenario (-want +got):\n%s", diff)
			}
			if got := sc.Length(); got != sim.DefaultCongestionStart+sim.DefaultWindow {
				t.Errorf("Length() = %v, want 140s", got)
			}
		})
	}
	if _, err := sim.BuiltinScenario("S99"); err == nil {
		t.Error("BuiltinScenario(S99) succeeded, want an error")
	}
}

func TestBuiltinScenarioShapes(t *testing.T) {
	// The placements the paper's tables describe.
	onSwitch := func(sc *sim.Scenario, sw string) int {
		n := 0
		for _, c := range sc.Congesters {
			if c.Switch == sw {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		name     string
		switch_  string
		onKStar  int
		total    int
		capped   bool
		streams  int
		protects string
	}{
		{"S1", "agg1", 5, 5, false, 0, "agg1"},
		{"S2", "agg2", 5, 5, false, 0, "agg2"},
		{"S3", "agg3", 5, 5, false, 0, "agg3"},
		{"S4", "agg4", 5, 5, false, 0, "agg4"},
		{"S5", "agg1", 3, 5, false, 0, "agg1"},
		{"S7", "agg1", 2, 5, false, 0, "agg1"},
		{"S10", "agg1", 5, 5, false, 16, "agg1"},
		{"S11", "agg1", 1, 1, false, 0, "agg1"},
		{"C1", "agg1", 5, 5, true, 6, "agg1"},
	} {
		sc, err := sim.BuiltinScenario(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if sc.ProtectedSwitch != c.protects {
			t.Errorf("%s: protected switch %s, want %s", c.name, sc.ProtectedSwitch, c.protects)
		}
		if got := onSwitch(sc, c.switch_); got != c.onKStar || len(sc.Congesters) != c.total {
			t.Errorf("%s: %d of %d congesters on %s, want %d of %d", c.name, got, len(sc.Congesters), c.switch_, c.onKStar, c.total)
		}
		for _, g := range sc.Congesters {
			if (g.StreamCap > 0) != c.capped || g.Streams != c.streams {
				t.Errorf("%s: congester %s has cap %v and %d streams", c.name, g.Host, g.StreamCap, g.Streams)
			}
		}
	}
}

func TestReadScenarioErrors(t *testing.T) {
	cfg := sim.DefaultConfig()
	base := `{"name": "T", "protected_switch": "agg1", "congesters": [%s]}`
	one := func(c string) string { return strings.Replace(base, "%s", c, 1) }
	for _, c := range []struct {
		name, json string
		want       []string // substrings of the error
	}{
		{"unknown field", `{"name": "T", "protected_switch": "agg1", "colour": "red", "congesters": []}`, []string{`unknown field "colour"`}},
		{"trailing data", `{"name": "T", "protected_switch": "agg1", "congesters": []} {}`, []string{"unexpected data after"}},
		{"not json", `name: T`, []string{"decode"}},
		{"no name", `{"protected_switch": "agg1", "congesters": []}`, []string{"name: empty"}},
		{"unknown protected switch", `{"name": "T", "protected_switch": "agg9", "congesters": []}`, []string{`scenario T: protected_switch: unknown switch "agg9"`}},
		{"negative start", `{"name": "T", "protected_switch": "agg1", "congestion_start": "-5s", "congesters": []}`, []string{"congestion_start: -5s is negative"}},
		{"bad window", `{"name": "T", "protected_switch": "agg1", "window": "soon", "congesters": []}`, []string{"window: not a duration"}},
		{"unknown host", one(`{"host": "h42", "arrive": "20s", "switch": "agg1"}`), []string{`congesters[0].host: unknown host "h42"`}},
		{"unknown dst", one(`{"host": "h2", "dst": "server", "arrive": "20s", "switch": "agg1"}`), []string{`congesters[0].dst: unknown host "server"`}},
		{"same leaf", one(`{"host": "h8", "arrive": "20s", "switch": "agg1"}`), []string{"congesters[0].dst: h7 is on the same leaf as h8"}},
		{"unknown switch", one(`{"host": "h2", "arrive": "20s", "switch": "core1"}`), []string{`congesters[0].switch: unknown switch "core1"`}},
		{"negative streams", one(`{"host": "h2", "streams": -1, "arrive": "20s", "switch": "agg1"}`), []string{"congesters[0].streams: -1, want 1..128"}},
		{"too many streams", one(`{"host": "h2", "streams": 1000, "arrive": "20s", "switch": "agg1"}`), []string{"congesters[0].streams: 1000"}},
		{"bad cap", one(`{"host": "h2", "stream_cap": "fast", "arrive": "20s", "switch": "agg1"}`), []string{"congesters[0].stream_cap: not a rate"}},
		{"negative arrive", one(`{"host": "h2", "arrive": "-1s", "switch": "agg1"}`), []string{"congesters[0].arrive: -1s is negative"}},
		{"arrive after end", one(`{"host": "h2", "arrive": "200s", "switch": "agg1"}`), []string{"congesters[0].arrive: 3m20s is not before the end of the episode (2m20s)"}},
		{"depart before arrive", one(`{"host": "h2", "arrive": "30s", "depart": "25s", "switch": "agg1"}`), []string{"congesters[0].depart: 25s is not after arrive 30s"}},
		{"depart after end", one(`{"host": "h2", "arrive": "30s", "depart": "300s", "switch": "agg1"}`), []string{"congesters[0].depart: 5m0s is after the end"}},
		{"negative move", one(`{"host": "h2", "arrive": "20s", "switch": "agg1", "moves": [{"at": "30s", "switch": "agg2"}, {"at": "-3s", "switch": "agg3"}]}`), []string{"scenario T: congesters[0].moves[1].at: -3s is negative"}},
		{"move before arrive", one(`{"host": "h2", "arrive": "20s", "switch": "agg1", "moves": [{"at": "10s", "switch": "agg2"}]}`), []string{"congesters[0].moves[0].at: 10s is not after arrive 20s"}},
		{"moves out of order", one(`{"host": "h2", "arrive": "20s", "switch": "agg1", "moves": [{"at": "40s", "switch": "agg2"}, {"at": "30s", "switch": "agg3"}]}`), []string{"congesters[0].moves[1].at: 30s is not after the previous move at 40s"}},
		{"move after depart", one(`{"host": "h2", "arrive": "20s", "depart": "40s", "switch": "agg1", "moves": [{"at": "50s", "switch": "agg2"}]}`), []string{"congesters[0].moves[0].at: 50s is not before the congester leaves (40s)"}},
		{"move to same switch", one(`{"host": "h2", "arrive": "20s", "switch": "agg1", "moves": [{"at": "30s", "switch": "agg1"}]}`), []string{"congesters[0].moves[0].switch: agg1 is where the congester already is"}},
		{"move to unknown switch", one(`{"host": "h2", "arrive": "20s", "switch": "agg1", "moves": [{"at": "30s", "switch": "agg7"}]}`), []string{`congesters[0].moves[0].switch: unknown switch "agg7"`}},
		{"overlap", one(`{"host": "h2", "arrive": "20s", "depart": "60s", "switch": "agg1"}, {"host": "h2", "arrive": "50s", "switch": "agg2"}`), []string{"congesters[1].arrive: host h2 already sends as congesters[0] from 20s to 1m0s"}},
		{"every problem at once", one(`{"host": "h42", "streams": -2, "arrive": "-1s", "switch": "x"}`), []string{"congesters[0].host", "congesters[0].streams", "congesters[0].arrive", "congesters[0].switch"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := sim.ReadScenario(strings.NewReader(c.json), cfg)
			wantErrorContaining(t, err, c.want)
		})
	}
}

// wantErrorContaining fails unless err is an error whose message contains
// every string of want.
func wantErrorContaining(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("succeeded, want an error containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q\ndoes not contain %q", err, w)
		}
	}
}

func TestScenarioValid(t *testing.T) {
	// A user's scenario with every feature: a leave-and-return host, moves,
	// caps, another sink and times in minutes.
	const doc = `{
	  "name": "mine",
	  "protected_switch": "agg2",
	  "congestion_start": "30s",
	  "window": "1m",
	  "congesters": [
	    {"host": "h3", "arrive": "30s", "switch": "agg2", "depart": "45s"},
	    {"host": "h3", "arrive": "50s", "switch": "agg3", "moves": [{"at": "1m", "switch": "agg4"}]},
	    {"host": "h5", "dst": "h2", "streams": 2, "stream_cap": "2.5Mbit/s", "arrive": "30s", "switch": "agg2"}
	  ]
	}`
	sc, err := sim.ReadScenario(strings.NewReader(doc), sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := float64(sc.Congesters[2].StreamCap), 2.5e6/8; got != want {
		t.Errorf("stream cap %v B/s, want %v", got, want)
	}
	if got := sc.Length().Seconds(); got != 90 {
		t.Errorf("Length = %vs, want 90s", got)
	}
	if _, err := sim.New(sim.DefaultConfig(), sc, 1); err != nil {
		t.Errorf("New: %v", err)
	}
	// Validation is against the fabric: a smaller fabric lacks agg4.
	small := sim.DefaultConfig()
	small.Switches = 3
	if err := sc.Validate(small); err == nil || !strings.Contains(err.Error(), `congesters[1].moves[0].switch: unknown switch "agg4"`) {
		t.Errorf("Validate on a 3-switch fabric = %v, want the unknown switch agg4", err)
	}
}

func TestLoadScenarioMissingFile(t *testing.T) {
	_, err := sim.LoadScenario(filepath.Join(t.TempDir(), "nope.json"), sim.DefaultConfig())
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadScenario of a missing file = %v, want os.ErrNotExist", err)
	}
}

func TestRate(t *testing.T) {
	for _, c := range []struct {
		text string
		want float64
		back string
	}{
		{"1Mbit/s", 125000, "1Mbit/s"},
		{"200 Mbit/s", 25e6, "200Mbit/s"},
		{"1Gbit/s", 125e6, "1Gbit/s"},
		{"500kbit/s", 62500, "500kbit/s"},
		{"10Mbps", 1.25e6, "10Mbit/s"},
		{"25MB/s", 25e6, "200Mbit/s"},
		{"1500B/s", 1500, "12kbit/s"},
		{"3B/s", 3, "3B/s"},
		{"2.5Mbit/s", 312500, "2.5Mbit/s"},
	} {
		r, err := sim.ParseRate(c.text)
		if err != nil {
			t.Errorf("ParseRate(%q): %v", c.text, err)
			continue
		}
		if float64(r) != c.want {
			t.Errorf("ParseRate(%q) = %v, want %v", c.text, float64(r), c.want)
		}
		if got := r.String(); got != c.back {
			t.Errorf("Rate(%v).String() = %q, want %q", float64(r), got, c.back)
		}
		if again, err := sim.ParseRate(r.String()); err != nil || again != r {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", r.String(), again, err, r)
		}
	}
	for _, bad := range []string{"", "fast", "1 furlong/s", "Mbit/s", "NaNMbit/s", "infMbit/s"} {
		if _, err := sim.ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) succeeded, want an error", bad)
		}
	}
	if _, err := sim.Rate(math.Inf(1)).MarshalText(); err == nil {
		t.Error("MarshalText of +Inf succeeded")
	}
}
