package main

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// Help asked for is success everywhere: the top level, every command and
// every sub-command exit 0 on -h; no command at all is a usage error (exit
// 2) with the usage on stderr.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"-help"}, {"--help"}, {"help"},
		{"evaluate", "-h"}, {"collect", "-help"}, {"calibrate", "--help"}, {"probe", "-h"},
		{"tcstat", "-h"}, {"profile", "-h"}, {"profile", "show", "-h"}, {"fabric", "up", "-h"},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), args)
		if code := exitCode(err); code != 0 {
			t.Errorf("%q: %v, exit %d; want exit 0", args, err, code)
		}
	}
	e, out, errb := newTestEnv()
	err := e.dispatch(context.Background(), nil)
	if code := exitCode(err); code != 2 || !strings.Contains(errb.String(), "Usage: proflow") || out.Len() != 0 {
		t.Errorf("no command: %v, exit %d, stdout %q, stderr %q; want exit 2 and the usage on stderr only", err, code, out, errb)
	}
}

// Each fabric sub-command shows and takes only its own flags: down has no
// controller address, bucket rate or experiment; fabric -h lists all three
// sub-commands with theirs.
func TestFabricSubcommandFlags(t *testing.T) {
	all := []string{"-prefix", "-rundir", "-v", "-listen", "-bucket", "-policy", "-scenario", "-warmup", "-duration"}
	for _, c := range []struct {
		sub  string
		want int // how many of all, in order, sub takes
	}{{"down", 3}, {"up", 5}, {"run", 9}} {
		e, _, errb := newTestEnv()
		if err := e.dispatch(context.Background(), []string{"fabric", c.sub, "-h"}); exitCode(err) != 0 {
			t.Errorf("fabric %s -h: %v, want exit 0", c.sub, err)
		}
		for i, f := range all {
			if has := strings.Contains(errb.String(), "  "+f+" ") || strings.Contains(errb.String(), "  "+f+"\t"); has != (i < c.want) {
				t.Errorf("fabric %s -h lists %s: %v, want %v:\n%s", c.sub, f, has, i < c.want, errb)
			}
		}
	}
	e, _, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"fabric", "down", "-policy", "crowd"})
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "-policy") {
		t.Errorf("fabric down -policy crowd: %v, want a usage error naming -policy", err)
	}
	e, _, errb := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"fabric", "-h"}); exitCode(err) != 0 {
		t.Errorf("fabric -h: %v, want exit 0", err)
	}
	for _, sub := range []string{"up", "down", "run"} {
		if !strings.Contains(errb.String(), "Usage: proflow fabric "+sub) {
			t.Errorf("fabric -h lacks the usage of %s:\n%s", sub, errb)
		}
	}
}

// help CMD prints that command's usage and flags on stdout (exit 0), help
// CMD SUB a sub-command's; help with an unknown command is a usage error
// naming every command.
func TestHelpCommand(t *testing.T) {
	e, _, _ := newTestEnv()
	for _, c := range e.commands {
		e, out, errb := newTestEnv()
		err := e.dispatch(context.Background(), []string{"help", c.name})
		if err != nil || !strings.Contains(out.String(), "Usage: proflow "+c.name) || errb.Len() != 0 {
			t.Errorf("help %s: %v, stdout %q, stderr %q; want nil and the command's usage on stdout", c.name, err, out, errb)
		}
	}
	e, out, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"help", "evaluate"}); err != nil || !strings.Contains(out.String(), "-policies") {
		t.Errorf("help evaluate: %v, stdout %q; want evaluate's flags", err, out)
	}
	e, out, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"help", "fabric", "down"}); err != nil ||
		!strings.Contains(out.String(), "Usage: proflow fabric down") || strings.Contains(out.String(), "-policy") {
		t.Errorf("help fabric down: %v, stdout %q; want down's usage and flags only", err, out)
	}
	e, _, _ = newTestEnv()
	err := e.dispatch(context.Background(), []string{"help", "teleport"})
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `"teleport"`) {
		t.Errorf("help teleport: %v, want a usage error naming teleport", err)
	}
	for _, c := range e.commands {
		if err != nil && !strings.Contains(err.Error(), c.name) {
			t.Errorf("help teleport: %q does not name the command %s", err, c.name)
		}
	}
}

// Every flag's placeholder in -h says what the flag takes: a repeatable
// flag shows a name such as FILE.json, never the flag package's "value".
func TestHelpPlaceholders(t *testing.T) {
	e, _, _ := newTestEnv()
	helps := [][]string{{"profile", "show"}, {"profile", "check"}, {"profile", "fit"}}
	for _, c := range e.commands {
		helps = append(helps, []string{c.name})
	}
	for _, args := range helps {
		e, out, _ := newTestEnv()
		if err := e.dispatch(context.Background(), append([]string{"help"}, args...)); err != nil {
			t.Errorf("help %s: %v", strings.Join(args, " "), err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "  -") && strings.HasSuffix(line, " value") {
				t.Errorf("help %s: %q, want a placeholder naming what the flag takes", strings.Join(args, " "), line)
			}
		}
	}
	e, out, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"help", "evaluate"}); err != nil || !strings.Contains(out.String(), "  -scenario-file FILE.json\n") {
		t.Errorf("help evaluate: %v; want -scenario-file FILE.json in\n%s", err, out)
	}
}

// calibrate's trace and output flags take directories, and -h says so.
func TestCalibrateDirPlaceholders(t *testing.T) {
	e, out, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"help", "calibrate"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"quiet", "single", "crowd", "out"} {
		if !strings.Contains(out.String(), "  -"+f+" DIR\n") {
			t.Errorf("help calibrate: -%s not shown as \"-%s DIR\":\n%s", f, f, out)
		}
	}
}

// proflow version and proflow -version print the module version and what
// the build recorded of its VCS revision.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"-version"}, {"--version"}} {
		e, out, _ := newTestEnv()
		if err := e.dispatch(context.Background(), args); err != nil || !strings.HasPrefix(out.String(), "proflow ") || !strings.Contains(out.String(), "\nrevision:  ") {
			t.Errorf("%q: %v, stdout %q; want the version and revision", args, err, out)
		}
	}
	e, _, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"version", "extra"}); !errors.Is(err, errUsage) {
		t.Errorf("version extra: %v, want a usage error", err)
	}

	var b strings.Builder
	writeVersion(&b, &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/proflow-sdn/proflow", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{
			{Key: "-tags", Value: "torch"}, {Key: "vcs.revision", Value: "c851210abc"},
			{Key: "vcs.time", Value: "2025-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		},
	})
	want := "proflow v0.3.0\nmodule:    github.com/proflow-sdn/proflow\nrevision:  c851210abc (modified: uncommitted changes)\n" +
		"committed: 2025-11-30T10:00:00Z\ngo:        go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH + "\ntags:      torch\n"
	if b.String() != want {
		t.Errorf("writeVersion:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	writeVersion(&b, &debug.BuildInfo{Main: debug.Module{Path: "github.com/proflow-sdn/proflow", Version: "(devel)"}})
	if !strings.Contains(b.String(), "revision:  unknown (not stamped") || !strings.Contains(b.String(), "committed: unknown") {
		t.Errorf("writeVersion without VCS stamp: %q, want the revision and time said unknown", b.String())
	}
}

// Without -baseline, evaluate compares with reactive when it is evaluated,
// else with the first of static, reactive, crowd listed (never the oracle),
// else with nothing; an explicit -baseline outside -policies stays an
// error (TestBadFlagValues).
func TestEvaluateFallbackBaseline(t *testing.T) {
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"agent", "static"}, "static"},
		{[]string{"oracle", "crowd", "static"}, "crowd"},
		{[]string{"agent", "oracle"}, ""},
		{[]string{"crowd"}, ""},
	} {
		if got := fallbackBaseline(c.names); got != c.want {
			t.Errorf("fallbackBaseline(%q) = %q, want %q", c.names, got, c.want)
		}
	}
	out := filepath.Join(t.TempDir(), "eval")
	e, stdout, errb := newTestEnv()
	args := []string{"evaluate", "-policies", "oracle,crowd", "-scenarios", "S1", "-repeats", "1", "-parallel", "2", "-out", out}
	if err := e.dispatch(context.Background(), args); err != nil {
		t.Fatalf("%q: %v, want it compared with crowd", args, err)
	}
	if !strings.Contains(stdout.String(), "Comparison with crowd") || !strings.Contains(errb.String(), "comparing with crowd") {
		t.Errorf("%q: report and note do not compare with crowd:\n%s\n%s", args, stdout, errb)
	}
}

// The -policies errors list every policy evaluate accepts.
func TestEvaluatePoliciesListed(t *testing.T) {
	for _, list := range []string{"static,psychic", " , "} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), []string{"evaluate", "-policies", list, "-out", filepath.Join(t.TempDir(), "eval")})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "static, reactive, crowd, throughput-drop, latency-threshold, oracle, agent") {
			t.Errorf("-policies %q: %v, want a usage error listing static, reactive, crowd, throughput-drop, latency-threshold, oracle, agent", list, err)
		}
	}
}
