package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func newTestEnv() (*env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	e.commands = commands()
	return e, &out, &errb
}

func TestHelpListsCommands(t *testing.T) {
	e, out, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"help"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range e.commands {
		if !strings.Contains(out.String(), "  "+c.name) {
			t.Errorf("help does not list %q:\n%s", c.name, out.String())
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	e, _, errb := newTestEnv()
	err := e.dispatch(context.Background(), []string{"teleport"})
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `unknown command "teleport"`) {
		t.Errorf("dispatch = %v, want an unknown-command usage error", err)
	}
	if !strings.Contains(errb.String(), "Usage: proflow") {
		t.Errorf("no usage on stderr: %q", errb.String())
	}
	if exitCode(err) != 2 {
		t.Errorf("exit code %d, want 2", exitCode(err))
	}
}

func TestTCStatNeedsInterfaces(t *testing.T) {
	e, _, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"tcstat", "-listen", "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "no interfaces") {
		t.Errorf("tcstat without -interfaces = %v, want an error naming the missing interfaces", err)
	}
}

func TestFabricNeedsSubcommand(t *testing.T) {
	e, _, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"fabric", "sideways"})
	if !errors.Is(err, errUsage) {
		t.Errorf("fabric sideways = %v, want a usage error", err)
	}
}
