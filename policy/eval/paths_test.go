package eval

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// files lists the regular files under root, relative to it.
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSweepConfinesTraceFiles(t *testing.T) {
	static, err := ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	renamed := func(name string) PolicySpec { return PolicySpec{Name: name, New: static.New} }
	quiet := func(name string) *sim.Scenario { return &sim.Scenario{Name: name, ProtectedSwitch: "agg1"} }
	for _, c := range []struct {
		name      string
		scenarios []*sim.Scenario
		policies  []PolicySpec
		want      string
	}{
		{"scenario climbs out", []*sim.Scenario{quiet("../../escape")}, []PolicySpec{static},
			`trace file "../../escape-static-r0.jsonl.gz" of scenario "../../escape" and policy "static" would not lie directly in`},
		{"policy climbs out", []*sim.Scenario{quiet("S1")}, []PolicySpec{renamed("/../../../escape")},
			`trace file "S1-/../../../escape-r0.jsonl.gz" of scenario "S1" and policy "/../../../escape" would not lie directly in`},
		{"backslash", []*sim.Scenario{quiet("S1")}, []PolicySpec{renamed(`..\..\escape`)}, `want names without '/' or '\'`},
		{"two episodes, one file", []*sim.Scenario{quiet("a-b"), quiet("a")}, []PolicySpec{renamed("c"), renamed("b-c")},
			`trace file a-b-c-r0.jsonl.gz would hold the episodes of scenario "a-b" under policy "c" and of scenario "a" under policy "b-c"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "a", "b", "out", "traces")
			sw := Sweep{Scenarios: c.scenarios, Policies: c.policies, Repeats: 1, Seed: 1, TraceDir: dir}
			eps, err := sw.Run(t.Context())
			if err == nil || !strings.Contains(err.Error(), c.want) || eps != nil {
				t.Errorf("Run = %d episodes, %v\nwant none and an error containing %q", len(eps), err, c.want)
			}
			if got := files(t, root); len(got) != 0 {
				t.Errorf("Run wrote %v under %s, want nothing written", got, root)
			}
		})
	}
}

func TestSweepWritesTracesInTraceDir(t *testing.T) {
	static, err := ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "traces")
	sc := &sim.Scenario{Name: "quiet.v1", ProtectedSwitch: "agg2"}
	sw := Sweep{Scenarios: []*sim.Scenario{sc}, Policies: []PolicySpec{static}, Repeats: 2, Seed: 1, TraceDir: dir}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, want := files(t, root), []string{"traces/quiet.v1-static-r0.jsonl.gz", "traces/quiet.v1-static-r1.jsonl.gz"}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
}
