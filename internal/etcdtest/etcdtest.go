// Package etcdtest tells tests whether this machine can run etcd, the one
// way the project's tests decide it: Debian's etcd-server binary at Bin.
package etcdtest

import (
	"fmt"
	"os"
	"testing"
)

// Bin is where Debian's etcd-server installs etcd (make etcd-deps).
const Bin = "/usr/bin/etcd"

// Check returns nil when Bin exists, else why not.
func Check() error {
	if _, err := os.Stat(Bin); err != nil {
		return fmt.Errorf("etcd not installed: %w (make etcd-deps installs Debian's etcd-server)", err)
	}
	return nil
}

// Require returns Bin. Without it, a test not running as root is skipped
// (it lacks the capability to install etcd), and a test running as root
// fails: there make etcd-deps installs it, so a missing binary is a failed
// setup.
func Require(t testing.TB) string {
	t.Helper()
	if err := Check(); err != nil {
		if os.Geteuid() == 0 {
			t.Fatalf("%v", err)
		}
		t.Skipf("skipping: not root and %v", err)
	}
	return Bin
}
