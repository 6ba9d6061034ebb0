package training

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// Permuting the observation's switches and then encoding gives the same
// state as encoding and then permuting the state.
func TestPermuteState(t *testing.T) {
	enc := testEncoder()
	ep := testEpisode(0)
	perm := []int{2, 0, 3, 1}
	e1, _ := telemetry.NewEncoder(enc)
	e2, _ := telemetry.NewEncoder(enc)
	e1.SetBaseline(ep.Baseline)
	e2.SetBaseline(ep.Baseline)
	for i, o := range ep.Observations {
		cur := ep.Placements[i]
		s := make([]float32, enc.Dim())
		if err := e1.Encode(s, &o, cur); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, enc.Dim())
		if err := PermuteState(enc, got, s, perm); err != nil {
			t.Fatal(err)
		}
		po := o.Clone()
		for k, to := range perm {
			po.Switches[to] = o.Switches[k]
		}
		want := make(proflow.State, enc.Dim())
		if err := e2.Encode(want, po, perm[cur]); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]float32(want), got); diff != "" {
			t.Fatalf("observation %d (-encode permuted +permute encoded):\n%s", i, diff)
		}
	}
	s := make([]float32, enc.Dim())
	for _, bad := range [][]int{{0, 1, 2}, {0, 1, 1, 2}, {0, 1, 2, 4}} {
		if err := PermuteState(enc, s, s, bad); err == nil {
			t.Errorf("permutation %v: no error", bad)
		}
	}
}
