package main

import (
	"context"
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
