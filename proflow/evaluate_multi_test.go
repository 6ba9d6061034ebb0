package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A scenario with several protected flows runs under the MultiController
// in both joint modes; beside a one-flow scenario its section follows the
// one-flow report, and its CSV files and figure are written too.
func TestEvaluateManyFlows(t *testing.T) {
	out := filepath.Join(t.TempDir(), "eval")
	e, stdout, _ := newTestEnv()
	args := []string{"evaluate", "-policies", "static,reactive", "-scenarios", "S1,M1", "-repeats", "1", "-parallel", "2", "-out", out}
	if err := e.dispatch(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(report)
	one, many := strings.Index(md, "## Mean throughput of the protected flow"), strings.Index(md, "## Many protected flows")
	if one < 0 || many < one {
		t.Errorf("report.md: one-flow table at %d, many-flow section at %d, want both, in that order:\n%s", one, many, md)
	}
	for _, row := range []string{"| M1 | static | independent | 4 |", "| M1 | reactive | joint | 4 |", "| M1 | reactive | 1 |"} {
		if !strings.Contains(md, row) {
			t.Errorf("report.md lacks the row %q:\n%s", row, md)
		}
	}
	if strings.Contains(md[:many], "| M1 |") {
		t.Errorf("M1 is in the one-flow tables:\n%s", md[:many])
	}
	if !strings.HasSuffix(stdout.String(), md[strings.Index(md, "\n")+1:]) {
		t.Errorf("stdout does not end with the report")
	}
	for _, f := range []string{"cells.csv", "multi-cells.csv", "multi-flows.csv", "multi-comparisons.csv", "many-flows.png", "throughput.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	noTempFiles(t, out)

	// Only many-flow scenarios, one joint mode: a report of its own.
	out = filepath.Join(t.TempDir(), "eval")
	e, _, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"evaluate", "-policies", "static", "-scenarios", "M4", "-joint", "joint", "-repeats", "1", "-out", out}); err != nil {
		t.Fatal(err)
	}
	report, err = os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if md := string(report); !strings.Contains(md, "| M4 | static | joint | 4 |") || strings.Contains(md, "independent |") || strings.Contains(md, "Joint vs independent") {
		t.Errorf("-joint joint: report.md\n%s\nwant the joint rows only, no comparison", md)
	}
}

func TestEvaluateJointFlag(t *testing.T) {
	for _, v := range []string{"greedy", "joint,joint", " , "} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), []string{"evaluate", "-policies", "static", "-scenarios", "M1", "-joint", v, "-out", filepath.Join(t.TempDir(), "eval")})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "-joint") {
			t.Errorf("-joint %q: %v, want a usage error naming -joint", v, err)
		}
	}
}
