package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// evaluate -alone runs each scenario with its congesters removed: S1's
// protected flow alone keeps its rate under static, where S1 starves it.
func TestEvaluateAlone(t *testing.T) {
	mean := map[bool]float64{}
	for _, alone := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "eval")
		args := []string{"evaluate", "-profile", "testbed", "-policies", "static", "-scenarios", "S1", "-repeats", "1", "-out", out}
		name := "| S1 | "
		if alone {
			args, name = append(args, "-alone"), "| S1-alone | "
		}
		e, _, _ := newTestEnv()
		if err := e.dispatch(context.Background(), args); err != nil {
			t.Fatal(err)
		}
		report, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(report), "\n") {
			// The mean-throughput table: "| S1 | 2.79 [2.79–2.79] |".
			if rest, ok := strings.CutPrefix(line, name); ok {
				if v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64); err == nil {
					mean[alone] = v
					break
				}
			}
		}
		if mean[alone] == 0 {
			t.Fatalf("-alone %v: report.md has no mean-throughput row starting %q:\n%s", alone, name, report)
		}
	}
	if !(mean[true] > 5*mean[false]) {
		t.Errorf("static in S1 %.2f MB/s, alone %.2f MB/s: want the flow alone far above the starved one", mean[false], mean[true])
	}
}
