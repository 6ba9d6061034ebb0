package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fabric report summarizes recorded episodes (here the simulator's, in
// the same trace format) against the baseline asked for; no traces, or a
// baseline none of them ran, is an error naming what is wrong.
func TestFabricReport(t *testing.T) {
	dir := t.TempDir()
	e, _, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"evaluate", "-profile", "ovs", "-policies", "static,reactive", "-scenarios", "S1",
		"-repeats", "2", "-traces", "-out", dir}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report")
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"fabric", "report", "-traces", filepath.Join(dir, "traces"), "-baseline", "static", "-out", out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"4 traces", "reactive", "static"} {
		if !strings.Contains(string(b), want) || !strings.Contains(stdout.String(), "reactive") {
			t.Errorf("report lacks %q:\n%s", want, b)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-traces", t.TempDir()}, "no *.jsonl.gz trace"},
		{[]string{}, "-traces is empty"},
		{[]string{"-traces", filepath.Join(dir, "traces"), "-baseline", "crowd", "-out", t.TempDir()}, "crowd"},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), append([]string{"fabric", "report"}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("fabric report %v: %v, want an error with %q", tc.args, err, tc.want)
		}
		if tc.want != "crowd" && !errors.Is(err, errUsage) {
			t.Errorf("fabric report %v: %v, want a usage error", tc.args, err)
		}
	}
}

// fabric scale -duration leaves out the congesters that arrive at or after
// the shortened window's end, as the fabric leaves them out, so that the
// simulator takes the scenario (S8's last two arrive 47.5 and 60 s in).
func TestFabricScaleDuration(t *testing.T) {
	dir := t.TempDir()
	e, _, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"fabric", "scale", "-scenarios", "S8", "-duration", "30s", "-out", dir}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "S8.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), `"host"`); n != 3 {
		t.Errorf("scaled S8 with a 30 s window has %d congesters, want 3 (h2–h4 arrive before 40 s):\n%s", n, b)
	}
	e, _, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"evaluate", "-profile", "ovs-regime", "-policies", "static", "-scenario-file",
		filepath.Join(dir, "S8.json"), "-repeats", "1", "-out", t.TempDir()}); err != nil {
		t.Errorf("the simulator refuses the scaled S8: %v", err)
	}
}
