package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvaluateScenarioLimits: a scenario file beyond the default limits is
// refused before anything is simulated, naming the limit, and the research
// flags raise the limit; the progress bar counts simulated seconds, so even
// one long episode shows progress.
func TestEvaluateScenarioLimits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "long.json")
	long := `{"name": "long", "protected_switch": "agg1", "window": "61m", "congesters": [{"host": "h2", "arrive": "20s", "switch": "agg2"}]}`
	if err := os.WriteFile(path, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	e, _, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"evaluate", "-profile", "datacenter", "-policies", "static", "-scenario-file", path,
		"-repeats", "1", "-out", filepath.Join(dir, "a")})
	if err == nil || !strings.Contains(err.Error(), "MaxWindow") {
		t.Fatalf("a 61 min window: %v, want an error naming the window limit", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(statErr) {
		t.Errorf("the refused evaluation created its output directory (%v)", statErr)
	}
	e, _, errb := newTestEnv()
	err = e.dispatch(context.Background(), []string{"evaluate", "-profile", "datacenter", "-policies", "static", "-scenario-file", path,
		"-repeats", "1", "-max-window", "2h", "-out", filepath.Join(dir, "b")})
	if err != nil {
		t.Fatalf("-max-window 2h: %v", err)
	}
	if !strings.Contains(errb.String(), "evaluate (simulated s): ") || !strings.Contains(errb.String(), "/3680 ") {
		t.Errorf("progress is not counted in simulated seconds of the 3,680 s episode:\n%s", errb.String())
	}
}
