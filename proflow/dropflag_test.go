package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// settingsFlag describes a reference policy whose settings an evaluate
// flag takes: "calibrate" or a JSON file.
type settingsFlag struct {
	flag, policy, scenario string
	// good and bad are JSON settings files' contents; calibrated and
	// fromFile what the report says with -flag calibrate and with the good
	// file (fromFile follows the file's path).
	good, bad, calibrated, fromFile string
	// badWant are what the usage errors of the bad file, a missing file
	// and a folder say beyond the flag's name ("" for nothing more).
	badWant [3]string
}

// checkSettingsFlag: the settings come from the calibration on
// congestion-free traffic by default, or from a JSON file; a bad file is a
// usage error naming the flag.
func checkSettingsFlag(t *testing.T, f settingsFlag) {
	t.Helper()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(f.good), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(f.bad), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ value, want string }{{"calibrate", f.calibrated}, {good, strings.ReplaceAll(f.fromFile, "FILE", good)}} {
		e, stdout, _ := newTestEnv()
		args := []string{"evaluate", "-policies", "static," + f.policy, "-scenarios", f.scenario, "-repeats", "1", "-" + f.flag, tc.value, "-out", filepath.Join(dir, "out")}
		if err := e.dispatch(context.Background(), args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if !strings.Contains(stdout.String(), tc.want) {
			t.Errorf("-%s %s: the report does not say %q:\n%s", f.flag, tc.value, tc.want, stdout)
		}
	}
	for i, value := range []string{bad, filepath.Join(dir, "missing.json"), dir} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), []string{"evaluate", "-policies", f.policy, "-scenarios", f.scenario, "-" + f.flag, value, "-out", filepath.Join(dir, "out")})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "-"+f.flag) || !strings.Contains(err.Error(), f.badWant[i]) {
			t.Errorf("-%s %s: %v, want a usage error naming -%s and %q", f.flag, value, err, f.flag, f.badWant[i])
		}
	}
}

func TestEvaluateThroughputDropSettings(t *testing.T) {
	checkSettingsFlag(t, settingsFlag{flag: "drop", policy: "throughput-drop", scenario: "S11",
		good: `{"fraction": 0.6, "cooldown": "20s"}`, bad: `{"fraction": 1.5}`,
		calibrated: "throughput-drop calibrated on profile testbed's congestion-free traffic (proflow calibrate): fraction 0.9, 2 samples, cooldown 12s",
		fromFile:   "throughput-drop settings from FILE: fraction 0.6, 2 samples, cooldown 20s"})
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
