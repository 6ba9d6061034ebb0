package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A stray argument stops the flag package, which then ignores every flag
// after it; every command refuses it as a usage error before doing anything.
func TestStrayArgument(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, args := range [][]string{
		{"collect", "stray", "-episodes", "1", "-out", filepath.Join(out, "c.dataset")},
		{"evaluate", "stray", "-repeats", "1", "-out", out},
		{"calibrate", "stray", "-episodes", "1", "-out", out},
		{"probe", "stray", "-out", out},
		{"tcstat", "-interfaces", "eth0", "stray", "-listen", "127.0.0.1:0"},
		{"fabric", "up", "stray", "-prefix", "x-"},
		{"fabric", "down", "-prefix", "x-", "stray"},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), args)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `unexpected arguments ["stray"`) || exitCode(err) != 2 {
			t.Errorf("%q: %v (exit %d), want a usage error naming the stray argument, exit 2", args, err, exitCode(err))
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused command created %s (%v)", out, err)
	}
}

// Out-of-range and malformed flag values are usage errors (exit 2) that name
// the flag, the value and what was expected, reported before any output
// folder is created.
func TestBadFlagValues(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"collect", "-episodes", "0"}, []string{"collect: -episodes 0: want at least 1"}},
		{[]string{"collect", "-parallel", "0"}, []string{"collect: -parallel 0: want at least 1"}},
		{[]string{"collect", "-episodes", "-2", "-parallel", "-1"}, []string{"-episodes -2: want at least 1", "-parallel -1: want at least 1"}},
		{[]string{"collect", "-episodes", "many"}, []string{"collect:", "-episodes"}},
		{[]string{"evaluate", "-repeats", "0", "-out", out}, []string{"evaluate: -repeats 0: want at least 1"}},
		{[]string{"evaluate", "-parallel", "0", "-out", out}, []string{"evaluate: -parallel 0: want at least 1"}},
		{[]string{"evaluate", "-policies", "static,reactive", "-baseline", "crowd", "-out", out}, []string{"-baseline crowd: want one of the -policies static,reactive"}},
		{[]string{"evaluate", "-policies", "static,reactive,static", "-out", out}, []string{"-policies static,reactive,static", "static is listed twice"}},
		{[]string{"evaluate", "-policies", " , ", "-out", out}, []string{"-policies"}},
		{[]string{"evaluate", "-policies", "static,reactive,psychic", "-out", out}, []string{"-policies", "psychic"}},
		{[]string{"evaluate", "-policies", "static,reactive", "-scenarios", "S99", "-out", out}, []string{"-scenarios S99", "S99"}},
		{[]string{"evaluate", "-policies", "static,reactive", "-scenarios", "S5-S2", "-out", out}, []string{"-scenarios: range \"S5-S2\""}},
		{[]string{"evaluate", "-policies", "static,reactive", "-scenarios", "", "-out", out}, []string{"no scenarios selected"}},
		{[]string{"calibrate", "-episodes", "0", "-out", out}, []string{"calibrate: -episodes 0: want at least 1"}},
		{[]string{"calibrate", "-repeats", "0", "-out", out}, []string{"calibrate: -repeats 0: want at least 1"}},
		{[]string{"probe", "-margin", "NaN", "-out", out}, []string{"probe: -margin NaN: want a finite number >= 0"}},
		{[]string{"probe", "-margin", "+Inf", "-out", out}, []string{"probe: -margin +Inf: want a finite number >= 0"}},
		{[]string{"probe", "-margin", "-0.1", "-out", out}, []string{"probe: -margin -0.1: want a finite number >= 0"}},
		{[]string{"probe", "-overflow-flows", "-1", "-out", out}, []string{"probe: -overflow-flows -1: want a finite number >= 0"}},
		{[]string{"probe", "-crowd-overflow", "Inf", "-crowd-threshold", "-3", "-out", out}, []string{"-crowd-overflow +Inf", "-crowd-threshold -3"}},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), c.args)
		if !errors.Is(err, errUsage) || exitCode(err) != 2 {
			t.Errorf("%q: %v (exit %d), want a usage error, exit 2", c.args, err, exitCode(err))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %q lacks %q", c.args, err, w)
			}
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused command created %s (%v)", out, err)
	}
}

// -h is help, not a usage error message: it returns flag.ErrHelp (exit 0,
// nothing printed by main).
func TestFlagHelp(t *testing.T) {
	for _, cmd := range []string{"collect", "evaluate", "calibrate", "probe", "tcstat"} {
		e, _, errb := newTestEnv()
		err := e.dispatch(context.Background(), []string{cmd, "-h"})
		if err == nil || errors.Is(err, errUsage) || exitCode(err) != 0 || !strings.Contains(errb.String(), "Usage: proflow "+cmd) {
			t.Errorf("%s -h: %v (exit %d), usage %q; want flag.ErrHelp, exit 0 and the usage", cmd, err, exitCode(err), errb.String())
		}
	}
}

// noTempFiles fails if dir holds a temporary file of fileutil.WriteAtomic.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		if strings.Contains(ent.Name(), ".tmp-") {
			t.Errorf("temporary file %s left in %s", ent.Name(), dir)
		}
	}
}

func TestEvaluateCommandWritesReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "eval")
	e, stdout, _ := newTestEnv()
	args := []string{"evaluate", "-policies", "static,reactive", "-scenarios", "S1", "-repeats", "1", "-parallel", "2", "-out", out}
	if err := e.dispatch(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(report), "<!-- generated by: proflow evaluate -policies static,reactive -scenarios S1") {
		t.Errorf("report.md starts %q, want the generating command", string(report)[:min(len(report), 80)])
	}
	if !strings.Contains(stdout.String(), "S1") {
		t.Errorf("report on stdout lacks S1:\n%s", stdout.String())
	}
	noTempFiles(t, out)
}

// A single policy without -baseline is evaluated on its own: no comparison,
// no error; naming a -baseline that is not evaluated is still refused.
func TestEvaluateSinglePolicy(t *testing.T) {
	out := filepath.Join(t.TempDir(), "eval")
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"evaluate", "-policies", "crowd", "-scenarios", "C1", "-repeats", "1", "-out", out}); err != nil {
		t.Fatalf("one policy, no -baseline: %v", err)
	}
	if strings.Contains(stdout.String(), "Comparison with") {
		t.Errorf("a single policy's report compares it with something:\n%s", stdout.String())
	}
	e, _, _ = newTestEnv()
	err := e.dispatch(context.Background(), []string{"evaluate", "-policies", "crowd", "-baseline", "reactive", "-scenarios", "C1", "-repeats", "1", "-out", out})
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "-baseline reactive") {
		t.Errorf("an explicit -baseline outside -policies: %v, want a usage error naming it", err)
	}
}

func TestCalibrateCommandWritesReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cal")
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"calibrate", "-episodes", "4", "-repeats", "1", "-parallel", "4", "-out", out}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "calibration.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(md) == 0 || !strings.Contains(stdout.String(), strings.SplitN(string(md), "\n", 2)[0]) {
		t.Errorf("calibration.md (%d bytes) does not match the report on stdout", len(md))
	}
	noTempFiles(t, out)

	// A missing trace directory names the flag.
	e, _, _ = newTestEnv()
	missing := filepath.Join(t.TempDir(), "none")
	err = e.dispatch(context.Background(), []string{"calibrate", "-quiet", missing, "-out", out})
	if err == nil || !strings.Contains(err.Error(), "calibrate: -quiet "+missing) {
		t.Errorf("missing -quiet directory: %v, want an error naming -quiet and the directory", err)
	}
}
