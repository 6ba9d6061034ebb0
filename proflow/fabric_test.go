package main

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fabric evaluate shows its own flags with the fabric's and the scaling's,
// and not run's single-episode ones.
func TestFabricEvaluateFlags(t *testing.T) {
	e, _, errb := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"fabric", "evaluate", "-h"}); exitCode(err) != 0 {
		t.Fatalf("fabric evaluate -h: %v, want exit 0", err)
	}
	for _, f := range []string{"-policies", "-scenarios", "-scenario-file", "-repeats", "-out", "-baseline", "-time-factor", "-model", "-gate", "-bucket", "-prefix"} {
		if !strings.Contains(errb.String(), "  "+f+" ") && !strings.Contains(errb.String(), "  "+f+"\n") {
			t.Errorf("fabric evaluate -h lacks %s:\n%s", f, errb)
		}
	}
	for _, f := range []string{"-policy", "-scenario", "-repeat", "-traces"} {
		if strings.Contains(errb.String(), "  "+f+" ") || strings.Contains(errb.String(), "  "+f+"\n") {
			t.Errorf("fabric evaluate -h lists run's %s:\n%s", f, errb)
		}
	}
}

// Bad settings are usage errors naming the flag, found before any fabric
// is built (so these run without root or OVS).
func TestFabricBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fabric", "evaluate", "-policies", "static,oracle"}, "-policies"},
		{[]string{"fabric", "evaluate", "-policies", "static,static"}, "-policies"},
		{[]string{"fabric", "evaluate", "-repeats", "0"}, "-repeats"},
		{[]string{"fabric", "evaluate", "-policies", "static", "-scenarios", "S99"}, "S99"},
		{[]string{"fabric", "evaluate", "-policies", "agent", "-model", "/nonexistent.safetensors"}, "-model"},
		{[]string{"fabric", "evaluate", "-policies", "static", "-time-factor", "-1"}, "time factor"},
		{[]string{"fabric", "evaluate", "-policies", "static,crowd", "-baseline", "reactive"}, "-baseline"},
		{[]string{"fabric", "run", "-scenario", "S99"}, "S99"},
		{[]string{"fabric", "run", "-policy", "oracle"}, "oracle"},
		{[]string{"fabric", "run", "-bucket", "fast"}, "fast"},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), c.args)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error naming %s", c.args, err, c.want)
		}
	}
}
