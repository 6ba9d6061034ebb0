package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// bound runs a scenario against its twins and writes the report, the
// CSV of every schedule and the figure; a twin that is the scenario
// itself (a crowd that never leaves, frozen) is named, not run.
func TestBoundCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "short.json")
	// Four full-rate hosts join the protected flow's switch for the whole
	// 8 s window.
	if err := os.WriteFile(file, []byte(`{"name": "short", "protected_switch": "agg1", "window": "8s", "congesters": [
		{"host": "h2", "arrive": "20s", "switch": "agg1"}, {"host": "h3", "arrive": "20s", "switch": "agg1"},
		{"host": "h4", "arrive": "20s", "switch": "agg1"}, {"host": "h5", "arrive": "20s", "switch": "agg1"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"bound", "-profile", "testbed", "-model", filepath.Join("..", "models", "default.safetensors"), "-scenario-file", file, "-at", "2s,4s", "-repeats", "1", "-policies", "agent,crowd", "-out", out}); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, "bound.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| short | short-end2s | 2.0 | ", "## Each scenario against all its twins at once", "| short | 2 | ", "| short | short-end4s | 4.0 | ", "Not run, the same as their scenario: short-freeze2s, short-freeze4s."} {
		if !strings.Contains(string(report), want) {
			t.Errorf("bound.md lacks %q:\n%s", want, report)
		}
	}
	for _, c := range []string{"agent", "crowd"} {
		if !strings.Contains(string(report), " "+c+": scenario / twin |") {
			t.Errorf("bound.md lacks the %s column:\n%s", c, report)
		}
	}
	if !strings.Contains(stdout.String(), "| short | short-end2s |") {
		t.Errorf("stdout lacks the table:\n%s", stdout)
	}
	rows := readCSVFile(t, filepath.Join(out, "bound.csv"))
	// Header, then 2 twins × 2 members × (never + 16 decision times × 3
	// other switches + the agent + crowd).
	if want := 1 + 2*2*(1+16*3+2); len(rows) != want {
		t.Errorf("bound.csv has %d rows, want %d", len(rows), want)
	}
	// Crowd is one of the rules the yardstick is the best of: it is never
	// ahead of it, and level with it where it is the best rule.
	crowds := 0
	for _, row := range rows[1:] {
		if row[7] != "crowd" {
			continue
		}
		crowds++
		short, err := strconv.ParseFloat(row[11], 64)
		if err != nil || short < 0 || (row[5] == "crowd" && short != 0) {
			t.Errorf("crowd's row %v: shortfall %v (%v), want >= 0, and 0 where crowd is the best rule", row, short, err)
		}
	}
	if crowds != 4 {
		t.Errorf("bound.csv has %d crowd rows, want one per twin member (4)", crowds)
	}
	if fi, err := os.Stat(filepath.Join(out, "bound.png")); err != nil || fi.Size() == 0 {
		t.Errorf("bound.png: %v", err)
	}
}

func TestBoundCommandRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-at", "soon"}, `-at soon: want a comma-separated list of durations`},
		{[]string{"-twins", "end,later"}, "want a comma-separated list of end, freeze, each once"},
		{[]string{"-at", "3m"}, "want in [0s, 2m0s)"},
		{[]string{"-policies", "oracle,crowds"}, `a comma-separated list of agent, oracle or the deployable rules static, reactive, crowd, throughput-drop, latency-threshold ("crowds" is none of them)`},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), append([]string{"bound", "-scenarios", "S1", "-out", t.TempDir()}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bound %v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}

// readCSVFile returns every record of the CSV file path, failing the test
// when it cannot be read.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
