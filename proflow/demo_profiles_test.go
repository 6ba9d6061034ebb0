package main

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestDemoBadProfileNamesFlag: an unknown profile is a usage error that
// names demo's own flag, -profiles (issue 24).
func TestDemoBadProfileNamesFlag(t *testing.T) {
	e, _, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"demo", "-profiles", "bogus", "-out", t.TempDir()})
	if !errors.Is(err, errUsage) || !strings.HasPrefix(err.Error(), "demo: -profiles bogus: ") || exitCode(err) != 2 {
		t.Errorf("demo -profiles bogus: %v (exit %d), want a usage error starting %q, exit 2", err, exitCode(err), "demo: -profiles bogus: ")
	}
}
