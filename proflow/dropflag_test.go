package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// throughput-drop's settings come from the calibration on congestion-free
// traffic by default, or from a JSON file; a bad file is a usage error
// naming the flag.
func TestEvaluateThroughputDropSettings(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "drop.json")
	if err := os.WriteFile(good, []byte(`{"fraction": 0.6, "cooldown": "20s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"fraction": 1.5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		drop, want string
	}{
		{"calibrate", "throughput-drop calibrated on profile testbed's congestion-free traffic (proflow calibrate): fraction 0.9, 2 samples, cooldown 12s"},
		{good, "throughput-drop settings from " + good + ": fraction 0.6, 2 samples, cooldown 20s"},
	} {
		e, stdout, _ := newTestEnv()
		args := []string{"evaluate", "-policies", "static,throughput-drop", "-scenarios", "S11", "-repeats", "1", "-drop", tc.drop, "-out", filepath.Join(dir, "out")}
		if err := e.dispatch(context.Background(), args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("-drop %s: the report does not say %q:\n%s", tc.drop, tc.want, stdout)
		}
	}
	for _, drop := range []string{bad, filepath.Join(dir, "missing.json"), dir} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), []string{"evaluate", "-policies", "throughput-drop", "-scenarios", "S11", "-drop", drop, "-out", filepath.Join(dir, "out")})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "-drop") {
			t.Errorf("-drop %s: %v, want a usage error naming -drop", drop, err)
		}
	}
}

// proflow calibrate writes throughput-drop.json, which evaluate -drop reads
// back: the settings an operator carries from a calibration to a run.
func TestCalibrateWritesThroughputDrop(t *testing.T) {
	dir := t.TempDir()
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"calibrate", "-episodes", "8", "-repeats", "1", "-out", dir}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "## Throughput-drop policy") {
		t.Errorf("calibrate's report has no throughput-drop section:\n%s", stdout)
	}
	path := filepath.Join(dir, "throughput-drop.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"fraction": 0.9`) || !strings.Contains(string(data), `"cooldown": "12s"`) {
		t.Errorf("throughput-drop.json = %s, want the testbed profile's fraction 0.9 and cooldown 12s", data)
	}
	e, stdout, _ = newTestEnv()
	args := []string{"evaluate", "-policies", "static,throughput-drop", "-scenarios", "S11", "-repeats", "1", "-drop", path, "-out", filepath.Join(dir, "ev")}
	if err := e.dispatch(context.Background(), args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if !strings.Contains(stdout.String(), "throughput-drop settings from "+path) {
		t.Errorf("evaluate did not take the calibrated settings:\n%s", stdout)
	}
}
