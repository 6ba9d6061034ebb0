package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvaluateLatencyThresholdSettings(t *testing.T) {
	checkSettingsFlag(t, settingsFlag{flag: "latency", policy: "latency-threshold", scenario: "T1",
		good: `{"ratio": 1.4, "cooldown": "20s"}`, bad: `{"ratio": 0.5}`,
		calibrated: "latency-threshold calibrated on profile testbed's congestion-free traffic of every kind (proflow calibrate): ratio 1.15, completion ratio 1.1, 2 samples, cooldown 9s",
		fromFile:   "latency-threshold settings from FILE: ratio 1.4, completion ratio 1.1, 2 samples, cooldown 20s",
		badWant:    [3]string{"ratio 0.5, want a finite number > 1", `"calibrate" or a LatencyThresholdConfig JSON file`, `"calibrate" or a LatencyThresholdConfig JSON file`}})
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
