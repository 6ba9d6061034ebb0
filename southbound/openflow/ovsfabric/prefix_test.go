package ovsfabric_test

import (
	"strings"
	"testing"
)

func TestProcessPrefix(t *testing.T) {
	seen := map[string]int{}
	for pid := 1; pid <= 36*36; pid++ {
		p := processPrefix(pid)
		if len(p) != 4 || p[0] != 't' || !strings.HasSuffix(p, "-") {
			t.Fatalf("pid %d: prefix %q, want t, two base-36 digits and -", pid, p)
		}
		if q, ok := seen[p]; ok {
			t.Fatalf("pids %d and %d share prefix %q", q, pid, p)
		}
		seen[p] = pid
	}
	if processPrefix(7) != processPrefix(7+36*36) {
		t.Error("prefix is not the pid modulo 1,296")
	}
}
