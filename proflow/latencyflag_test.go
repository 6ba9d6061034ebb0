package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// latency-threshold's settings come from the calibration on congestion-free
// traffic by default, or from a JSON file; a bad file is a usage error
// naming the flag and what it wants.
func TestEvaluateLatencyThresholdSettings(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "latency.json")
	if err := os.WriteFile(good, []byte(`{"ratio": 1.4, "cooldown": "20s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"ratio": 0.5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		latency, want string
	}{
		{"calibrate", "latency-threshold calibrated on profile testbed's congestion-free traffic of every kind (proflow calibrate): ratio 1.15, completion ratio 1.1, 2 samples, cooldown 9s"},
		{good, "latency-threshold settings from " + good + ": ratio 1.4, completion ratio 1.1, 2 samples, cooldown 20s"},
	} {
		e, stdout, _ := newTestEnv()
		args := []string{"evaluate", "-policies", "static,latency-threshold", "-scenarios", "T1", "-repeats", "1", "-latency", tc.latency, "-out", filepath.Join(dir, "out")}
		if err := e.dispatch(context.Background(), args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("-latency %s: the report does not say %q:\n%s", tc.latency, tc.want, stdout)
		}
	}
	for _, tc := range []struct{ latency, want string }{
		{bad, "ratio 0.5, want a finite number > 1"},
		{filepath.Join(dir, "missing.json"), `"calibrate" or a LatencyThresholdConfig JSON file`},
		{dir, `"calibrate" or a LatencyThresholdConfig JSON file`},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), []string{"evaluate", "-policies", "latency-threshold", "-scenarios", "T1", "-latency", tc.latency, "-out", filepath.Join(dir, "out")})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "-latency") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-latency %s: %v, want a usage error naming -latency and %q", tc.latency, err, tc.want)
		}
	}
}

// proflow calibrate writes latency-threshold.json beside
// throughput-drop.json, which evaluate -latency reads back; the
// throughput-drop section is as it was.
func TestCalibrateWritesLatencyThreshold(t *testing.T) {
	dir := t.TempDir()
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"calibrate", "-episodes", "8", "-repeats", "1", "-out", dir}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Latency-threshold policy", "(the flow alone: 8 bulk, 8 rate, 8 onoff, 8 rr)", "## Throughput-drop policy"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("calibrate's report lacks %q:\n%s", want, stdout)
		}
	}
	path := filepath.Join(dir, "latency-threshold.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"ratio": `, `"completion_ratio": `, `"consecutive": 2`, `"cooldown": "`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("latency-threshold.json = %s, want it to hold %s", data, want)
		}
	}
	e, stdout, _ = newTestEnv()
	args := []string{"evaluate", "-policies", "static,latency-threshold", "-scenarios", "T1", "-repeats", "1", "-latency", path, "-out", filepath.Join(dir, "ev")}
	if err := e.dispatch(context.Background(), args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	if !strings.Contains(stdout.String(), "latency-threshold settings from "+path) {
		t.Errorf("evaluate did not take the calibrated settings:\n%s", stdout)
	}
}
