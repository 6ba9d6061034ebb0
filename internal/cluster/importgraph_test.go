package cluster

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestImportGraph: the library (root package, policy) does not depend on
// etcd; only this internal package and the command do.
func TestImportGraph(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(goBin, "list", "-deps", ".", "./policy/...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps . ./policy/...: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list -deps listed %d packages, want the library's graph", len(pkgs))
	}
	for _, p := range pkgs {
		if strings.HasPrefix(p, "go.etcd.io/") || strings.Contains(p, "/internal/cluster") {
			t.Errorf("the library imports %s", p)
		}
	}
}
