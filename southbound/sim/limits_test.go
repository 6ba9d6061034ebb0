package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// scenarioJSON returns a scenario document protecting agg1 with the given
// top-level fields (each `"key": value`) and congesters.
func scenarioJSON(fields string, congesters []string) string {
	if fields != "" {
		fields += ", "
	}
	return `{"name": "T", "protected_switch": "agg1", ` + fields + `"congesters": [` + strings.Join(congesters, ", ") + `]}`
}

// repeat returns n copies of the congester c, the i-th formatted with i.
func repeat(n int, c string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(c, i)
	}
	return out
}

// checkBounded fails when err lists more than maxProblems+1 lines or has a
// line longer than 512 bytes.
func checkBounded(t *testing.T, err error, maxProblems int) {
	t.Helper()
	lines := strings.Split(err.Error(), "\n")
	if len(lines) > maxProblems+1 {
		t.Errorf("error has %d lines, want at most %d", len(lines), maxProblems+1)
	}
	for i, l := range lines {
		if len(l) > 512 {
			t.Errorf("error line %d is %d bytes long, want at most 512: %.100s…", i, len(l), l)
		}
	}
}

func TestReadScenarioLimits(t *testing.T) {
	cfg := sim.DefaultConfig()
	h2 := `{"host": "h2", "arrive": "20s", "switch": "agg1"}`
	// Nine congesters of 128 streams, one after another on h2 and h3.
	var many []string
	for i := range 9 {
		many = append(many, fmt.Sprintf(`{"host": "h%d", "streams": 128, "arrive": "%ds", "depart": "%ds", "switch": "agg1"}`, 2+i%2, 20+i*10, 30+i*10))
	}
	moves := make([]string, 65)
	for i := range moves {
		moves[i] = fmt.Sprintf(`{"at": "%ds", "switch": "agg%d"}`, 21+i, 2+i%2)
	}
	for _, c := range []struct {
		name, json string
		want       string
		raise      sim.Limits // limits under which the scenario is accepted
	}{
		{"window", scenarioJSON(`"window": "2540400h"`, nil), "scenario T: window: 2540400h0m0s, want at most 1h0m0s (Limits.MaxWindow)",
			sim.Limits{MaxWindow: 2540400 * time.Hour}},
		{"congestion start", scenarioJSON(`"congestion_start": "11m"`, nil), "scenario T: congestion_start: 11m0s, want at most 10m0s (Limits.MaxCongestionStart)",
			sim.Limits{MaxCongestionStart: time.Hour}},
		{"congesters", scenarioJSON("", repeat(257, `{"host": "h2", "arrive": "%dms", "depart": "%[1]dms", "switch": "agg1"}`)),
			"scenario T: congesters: 257 entries, want at most 256 (Limits.MaxCongesters)", sim.Limits{}},
		{"streams", scenarioJSON("", []string{`{"host": "h2", "streams": 129, "arrive": "20s", "switch": "agg1"}`}),
			"scenario T: congesters[0].streams: 129, want 1..128", sim.Limits{MaxStreamsPerCongester: 129}},
		{"total streams", scenarioJSON("", many), "scenario T: congesters: more than 1024 streams in all, want at most 1024 (Limits.MaxTotalStreams)",
			sim.Limits{MaxTotalStreams: 9 * 128}},
		{"moves", scenarioJSON(`"window": "1h"`, []string{`{"host": "h2", "arrive": "20s", "switch": "agg1", "moves": [` + strings.Join(moves, ", ") + `]}`}),
			"scenario T: congesters[0].moves: 65 moves, want at most 64 (Limits.MaxMoves)", sim.Limits{MaxMoves: 65}},
		{"bytes", scenarioJSON(`"description": "`+strings.Repeat("x", 1<<20)+`"`, []string{h2}),
			"scenario: larger than 1048576 bytes, want a scenario of at most 1048576 bytes (Limits.MaxBytes)", sim.Limits{MaxBytes: 2 << 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := sim.ReadScenario(strings.NewReader(c.json), cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadScenario = %v\nwant an error containing %q", err, c.want)
			}
			if c.raise == (sim.Limits{}) {
				return
			}
			sc, err := sim.ReadScenarioWithLimits(strings.NewReader(c.json), cfg, c.raise)
			if err != nil {
				t.Fatalf("ReadScenarioWithLimits(%+v) = %v, want the scenario accepted under the raised limit", c.raise, err)
			}
			// Validate, which New and RunEpisode call, does not limit size.
			if err := sc.Validate(cfg); err != nil {
				t.Errorf("Validate = %v, want no error", err)
			}
			if c.name == "bytes" {
				return // a limit of the file, not of the scenario
			}
			if err := sc.ValidateLimits(cfg, sim.DefaultLimits()); err == nil || !strings.Contains(err.Error(), c.want[len("scenario T: "):]) {
				t.Errorf("ValidateLimits(DefaultLimits()) = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestLoadScenarioLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	doc := scenarioJSON(`"window": "2h"`, nil)
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := sim.LoadScenario(path, sim.DefaultConfig())
	if err == nil || !strings.Contains(err.Error(), "window: 2h0m0s, want at most 1h0m0s") {
		t.Errorf("LoadScenario = %v, want the window limit", err)
	}
	sc, err := sim.LoadScenarioWithLimits(path, sim.DefaultConfig(), sim.Limits{MaxWindow: 2 * time.Hour})
	if err != nil {
		t.Fatalf("LoadScenarioWithLimits with a 2h window limit: %v", err)
	}
	if got := sc.Length(); got != 2*time.Hour+sim.DefaultCongestionStart {
		t.Errorf("Length = %v, want 2h20s", got)
	}
	_, err = sim.LoadScenarioWithLimits(path, sim.DefaultConfig(), sim.Limits{MaxBytes: 10})
	if err == nil || !strings.Contains(err.Error(), "scenario "+path+": larger than 10 bytes") {
		t.Errorf("LoadScenarioWithLimits(MaxBytes 10) = %v, want the file named and its size refused", err)
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := sim.DefaultLimits().Validate(); err != nil {
		t.Errorf("DefaultLimits().Validate() = %v", err)
	}
	if err := (sim.Limits{}).Validate(); err != nil {
		t.Errorf("zero Limits (all defaults): %v", err)
	}
	bad := sim.Limits{MaxWindow: -time.Second, MaxProblems: -1}
	err := bad.Validate()
	if err == nil || !strings.Contains(err.Error(), "MaxWindow -1s, want a positive limit") || !strings.Contains(err.Error(), "MaxProblems -1") {
		t.Errorf("Validate(%+v) = %v, want both fields named", bad, err)
	}
	if _, err := sim.ReadScenarioWithLimits(strings.NewReader(scenarioJSON("", nil)), sim.DefaultConfig(), bad); err == nil {
		t.Error("ReadScenarioWithLimits with negative limits succeeded, want an error")
	}
}

func TestValidateReportsBoundedProblems(t *testing.T) {
	// 1,000 congesters on one host at once: 999 overlaps (and, pairwise,
	// 499,500), of which 20 are listed.
	doc := scenarioJSON("", repeat(1000, `{"host": "h2", "arrive": "%dms", "switch": "agg1"}`))
	var sc sim.Scenario
	if err := json.Unmarshal([]byte(doc), &sc); err != nil {
		t.Fatal(err)
	}
	err := sc.Validate(sim.DefaultConfig())
	if err == nil {
		t.Fatal("Validate succeeded, want the overlaps")
	}
	checkBounded(t, err, sim.DefaultLimits().MaxProblems)
	lines := strings.Split(err.Error(), "\n")
	if want := "scenario T: … and 979 more problems (at most 20 are listed)"; lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
	if want := "scenario T: congesters[1].arrive: host h2 already sends as congesters[0] from 0s to 2m20s"; !strings.HasPrefix(lines[0], want) {
		t.Errorf("first line %q, want it to start %q", lines[0], want)
	}
	// Read from a file, the same scenario stops at the congester limit.
	_, err = sim.ReadScenario(strings.NewReader(doc), sim.DefaultConfig())
	if err == nil || err.Error() != "scenario T: congesters: 1000 entries, want at most 256 (Limits.MaxCongesters)" {
		t.Errorf("ReadScenario = %v, want only the congester limit", err)
	}
	// MaxProblems is a limit like the others.
	_, err = sim.ReadScenarioWithLimits(strings.NewReader(doc), sim.DefaultConfig(), sim.Limits{MaxCongesters: 1000, MaxTotalStreams: 8000, MaxProblems: 3})
	if err == nil || strings.Count(err.Error(), "\n") != 3 || !strings.Contains(err.Error(), "… and 996 more problems") {
		t.Errorf("ReadScenarioWithLimits(MaxProblems 3) = %v, want 3 problems and 996 more", err)
	}
}

func TestValidateOverlaps(t *testing.T) {
	cfg := sim.DefaultConfig()
	for _, c := range []struct {
		name       string
		congesters []string
		want       []string // the problems, in order
	}{
		{"contained periods", []string{
			`{"host": "h2", "arrive": "20s", "depart": "100s", "switch": "agg1"}`,
			`{"host": "h2", "arrive": "30s", "depart": "40s", "switch": "agg2"}`,
			`{"host": "h2", "arrive": "50s", "depart": "60s", "switch": "agg2"}`,
			`{"host": "h3", "arrive": "50s", "depart": "60s", "switch": "agg2"}`,
		}, []string{
			"scenario T: congesters[1].arrive: host h2 already sends as congesters[0] from 20s to 1m40s, want non-overlapping periods",
			"scenario T: congesters[2].arrive: host h2 already sends as congesters[0] from 20s to 1m40s, want non-overlapping periods",
		}},
		{"later index starts first", []string{
			`{"host": "h4", "arrive": "60s", "switch": "agg1"}`,
			`{"host": "h3", "arrive": "20s", "depart": "60s", "switch": "agg1"}`,
			`{"host": "h4", "arrive": "20s", "depart": "61s", "switch": "agg2"}`,
		}, []string{
			"scenario T: congesters[0].arrive: host h4 already sends as congesters[2] from 20s to 1m1s, want non-overlapping periods",
		}},
		{"back to back", []string{
			`{"host": "h2", "arrive": "20s", "depart": "30s", "switch": "agg1"}`,
			`{"host": "h2", "arrive": "30s", "depart": "40s", "switch": "agg1"}`,
			`{"host": "h2", "arrive": "40s", "switch": "agg1"}`,
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := sim.ReadScenario(strings.NewReader(scenarioJSON("", c.congesters)), cfg)
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestScenarioName(t *testing.T) {
	cfg := sim.DefaultConfig()
	for _, name := range []string{"S1", "mine", "my-scenario_2.v1", "0", strings.Repeat("a", 64)} {
		sc := &sim.Scenario{Name: name, ProtectedSwitch: "agg1"}
		if err := sc.Validate(cfg); err != nil {
			t.Errorf("name %q: %v, want it accepted", name, err)
		}
	}
	for _, name := range []string{"../../escape", "a/b", `a\b`, ".hidden", "..", "-flag", "_x", "with space", "é", "S1\n", strings.Repeat("a", 65)} {
		sc := &sim.Scenario{Name: name, ProtectedSwitch: "agg1"}
		err := sc.Validate(cfg)
		if err == nil || !strings.Contains(err.Error(), "name: ") || !strings.Contains(err.Error(), "want 1 to 64 letters, digits, '.', '_' or '-'") {
			t.Errorf("name %q: %v, want the name refused with the allowed characters", name, err)
		}
	}
}

func TestScenarioErrorsQuoteBoundedValues(t *testing.T) {
	long := strings.Repeat("h", 100_000)
	for _, c := range []struct{ name, json, want string }{
		{"host", scenarioJSON("", []string{`{"host": "` + long + `", "dst": "` + long + `", "arrive": "20s", "switch": "` + long + `", "moves": [{"at": "30s", "switch": "` + long + `"}]}`}),
			`congesters[0].host: unknown host "hhhhhhhh`},
		{"name", `{"name": "` + long + `", "protected_switch": "` + long + `", "congesters": []}`, `name: "hhhh`},
		{"unknown field", `{"` + long + `": 1}`, `decode: json: unknown field "hhhh`},
		{"trailing data", scenarioJSON("", nil) + ` "` + long + `"`, "unexpected data after the scenario object at byte"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := sim.ReadScenario(strings.NewReader(c.json), sim.DefaultConfig())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadScenario = %.300v…, want an error containing %q", err, c.want)
			}
			checkBounded(t, err, sim.DefaultLimits().MaxProblems)
		})
	}
}

func TestValidateWindowOverflow(t *testing.T) {
	sc := &sim.Scenario{Name: "T", ProtectedSwitch: "agg1", Window: sim.Duration(1<<63 - 1)}
	err := sc.Validate(sim.DefaultConfig())
	if err == nil || !strings.Contains(err.Error(), "window: 2562047h47m16.854775807s after congestion_start 20s ends past the largest time") {
		t.Errorf("Validate = %v, want the overflowing window refused", err)
	}
}

// TestReadScenarioLargeQuickly reads a file of 10,000 congesters on one
// host with the congester limit raised: the validation sorts per host
// instead of comparing every pair.
func TestReadScenarioLargeQuickly(t *testing.T) {
	doc := scenarioJSON(`"window": "1h"`, repeat(10_000, `{"host": "h2", "streams": 1, "arrive": "%dms", "depart": "%[1]d001ms", "switch": "agg1"}`))
	var buf bytes.Buffer
	buf.WriteString(doc)
	start := time.Now()
	_, err := sim.ReadScenarioWithLimits(&buf, sim.DefaultConfig(), sim.Limits{MaxCongesters: 10_000, MaxTotalStreams: 10_000})
	if err == nil || !strings.Contains(err.Error(), "… and ") {
		t.Fatalf("ReadScenarioWithLimits = %v, want overlaps and a count of those left out", err)
	}
	checkBounded(t, err, sim.DefaultLimits().MaxProblems)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("validating 10,000 congesters took %v, want well under 10s", d)
	}
}
