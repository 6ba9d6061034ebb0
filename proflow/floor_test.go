package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// floor runs every single move on a short rate scenario beside the rules
// and a candidate, and writes the report, the CSV and the figure.
func TestFloorCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "short.json")
	// A constant-bitrate flow at half of C; four full-rate hosts join its
	// switch for the whole 20 s window.
	if err := os.WriteFile(file, []byte(`{"name": "short", "protected_switch": "agg1", "window": "20s", "protected_kind": {"kind": "rate", "rate": "100Mbit/s"}, "congesters": [
		{"host": "h2", "arrive": "20s", "switch": "agg1"}, {"host": "h3", "arrive": "20s", "switch": "agg1"},
		{"host": "h4", "arrive": "20s", "switch": "agg1"}, {"host": "h5", "arrive": "20s", "switch": "agg1"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"floor", "-profile", "testbed", "-scenario-file", file, "-every", "5s", "-repeats", "1", "-policies", "crowd", "-out", out}); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, "floor.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| rate | 1 | ", "| short | rate | ", " crowd (s) | crowd ratio |", "every 5s from congestion start"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("floor.md lacks %q:\n%s", want, report)
		}
	}
	if !strings.Contains(stdout.String(), "| short | rate | ") {
		t.Errorf("stdout lacks the table:\n%s", stdout)
	}
	rows := readCSVFile(t, filepath.Join(out, "floor.csv"))
	// Header, then never, the hindsight move, the five rules and crowd
	// again as a candidate.
	if len(rows) != 1+2+5+1 || rows[2][2] != "hindsight" {
		t.Errorf("floor.csv has %d rows (%v), want 9 with the hindsight move second", len(rows), rows)
	}
	if fi, err := os.Stat(filepath.Join(out, "floor.png")); err != nil || fi.Size() == 0 {
		t.Errorf("floor.png: %v", err)
	}
}

func TestFloorCommandRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-kinds", "bulk"}, "a comma-separated list of rr, rate, onoff, each once"},
		{[]string{"-kinds", "rate,rate"}, "a comma-separated list of rr, rate, onoff, each once"},
		{[]string{"-every", "-1s"}, "a positive duration"},
		{[]string{"-every", "100ms"}, "0 or at least the profile's control interval 500ms"},
		{[]string{"-scenarios", "S1"}, "at least one scenario protecting a flow of kind rr, rate, onoff"},
		{[]string{"-scenarios", "V1", "-policies", "nope"}, `"nope" is none of them`},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), append([]string{"floor", "-out", t.TempDir()}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("floor %v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}
