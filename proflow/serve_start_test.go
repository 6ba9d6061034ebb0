package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Issue 24 (B13): SIGTERM during the start (here: while joining an etcd
// that does not answer) exited 1 with "context canceled"; it is
// a clean stop, exit 0.
func TestServeStopDuringStartIsClean(t *testing.T) {
	// A closed port: the etcd client retries until Join's dial timeout
	// (5 s), long after the stop.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	src := "southbound: {sim: {scenario: M2}}\nmetrics: {listen: off}\npolicy: {kind: crowd}\ncluster: {endpoints: [\"http://" + addr + "\"], replica: r1}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	e, _, errb := newTestEnv()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := e.dispatch(ctx, []string{"serve", "-config", path}); err != nil {
		t.Errorf("serve stopped during the start: %v (exit %d), want a clean stop (exit 0)\n%s", err, exitCode(err), errb.String())
	}
}
