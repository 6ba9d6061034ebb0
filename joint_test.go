package proflow_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
)

// jointInput is a step on the paper's topology (C = 25e6 bytes/s) with the
// given transmit rate per switch and wishes.
func jointInput(tx []float64, wishes ...proflow.Wish) *proflow.JointInput {
	obs := &proflow.Observation{}
	topo := proflow.PaperTopology()
	obs.Resize(topo)
	for k, r := range tx {
		obs.Switches[k].TxRate = r
	}
	in := &proflow.JointInput{Topology: topo, Obs: obs, Wishes: wishes}
	for _, w := range wishes {
		for len(in.Current) <= w.Flow {
			in.Current = append(in.Current, 0)
		}
		in.Current[w.Flow] = w.Current
	}
	return in
}

// wish is flow i on switch 0 wanting target, with ΔQ margin, weight 1 and a
// baseline of 5e6 bytes/s (a fifth of C).
func wish(i, target int, margin float64, scores ...float64) proflow.Wish {
	return proflow.Wish{Flow: i, Weight: 1, Current: 0, Target: target, Scores: scores, Margin: margin, Throughput: 1e6, Baseline: 5e6}
}

func TestGreedyAssign(t *testing.T) {
	const c = 25e6
	for _, tc := range []struct {
		name string
		in   *proflow.JointInput
		want []int
	}{
		{
			// Switch 1 has room for two baselines, switch 2 for one:
			// flows 0 and 1 (first by index at equal priority) take
			// switch 1, flow 2 its next best, flow 3 holds.
			name: "budget stops the herd",
			in: jointInput([]float64{c, c - 10e6, c - 5e6, c},
				wish(0, 1, 1, 0, 1, 0.5, 0), wish(1, 1, 1, 0, 1, 0.5, 0),
				wish(2, 1, 1, 0, 1, 0.5, 0), wish(3, 1, 1, 0, 1, 0.5, 0)),
			want: []int{1, 1, 2, -1},
		},
		{
			// The same four flows with plenty of room all go.
			name: "room for all",
			in: jointInput([]float64{c, 0, 0, c},
				wish(0, 1, 1, 0, 1, 0.5, 0), wish(1, 1, 1, 0, 1, 0.5, 0),
				wish(2, 1, 1, 0, 1, 0.5, 0), wish(3, 1, 1, 0, 1, 0.5, 0)),
			want: []int{1, 1, 1, 1},
		},
		{
			// Equal priority: the lower flow index goes first.
			name: "tie on priority",
			in:   jointInput([]float64{c, c - 1, c, c}, wish(5, 1, 2, 0, 3, 0, 0), wish(2, 1, 2, 0, 3, 0, 0)),
			want: []int{-1, 1},
		},
		{
			// ΔQ × weight: flow 7's 1 × 3 beats flow 1's 2 × 1.
			name: "weight counts",
			in: jointInput([]float64{c, c - 1, c, c}, wish(1, 1, 2, 0, 3, 0, 0),
				proflow.Wish{Flow: 7, Weight: 3, Current: 0, Target: 1, Scores: []float64{0, 3, 0, 0}, Margin: 1, Baseline: 5e6}),
			want: []int{-1, 1},
		},
		{
			// The fallback: flow 9 (first by priority) fills switch 1;
			// switches 2 and 3 score the same for flow 0; the lower index wins.
			name: "tie on score",
			in:   jointInput([]float64{c, c, 0, 0}, wish(0, 1, 2, 0, 2, 1, 1), wish(9, 1, 5, 0, 2, 0, 0)),
			want: []int{2, 1},
		},
		{
			// A fallback must beat the current switch strictly.
			name: "no fallback above current",
			in:   jointInput([]float64{c, c, 0, 0}, wish(0, 1, 2, 1, 3, 1, 0.5), wish(9, 1, 5, 0, 2, 0, 0)),
			want: []int{-1, 1},
		},
		{
			// A lone flow goes where it wants, even to a switch with no
			// headroom (every switch at its bucket rate in a crowd): one
			// flow does not herd.
			name: "lone flow",
			in: jointInput([]float64{c, c - 1, c + 1, c},
				wish(0, 1, 1, 0, 1, 0, 0), proflow.Wish{Flow: 1, Weight: 1, Current: 3, Target: 2, Scores: []float64{0, 0, 1, 0}, Margin: 1}),
			want: []int{1, 2},
		},
		{
			// With no headroom anywhere, the first flow onto each switch
			// goes; the second wanting an over-full switch falls to an
			// untaken one that beats its current, the third holds.
			name: "no headroom anywhere",
			in: jointInput([]float64{c + 1, c + 1, c + 1, c + 1},
				wish(0, 1, 3, 0, 3, 2, 0), wish(1, 1, 2, 0, 3, 2, 0), wish(2, 1, 1, 0, 3, 2, 0)),
			want: []int{1, 2, -1},
		},
		{
			// Demand is the larger of throughput and baseline: flow 0 runs
			// at 20e6 and uses up switch 1 (room 15e6) alone.
			name: "demand above baseline",
			in: jointInput([]float64{c, c - 15e6, c, c},
				proflow.Wish{Flow: 0, Weight: 1, Target: 1, Scores: []float64{0, 2, 0, 0}, Margin: 2, Throughput: 20e6, Baseline: 5e6},
				wish(1, 1, 1, 0, 1, 0, 0)),
			want: []int{1, -1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g proflow.Greedy
			dst := make([]int, len(tc.in.Wishes))
			if err := g.Assign(dst, tc.in); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, dst); diff != "" {
				t.Errorf("destinations (-want +got):\n%s", diff)
			}
			// Reused, the same Greedy gives the same answer.
			clear(dst)
			if err := g.Assign(dst, tc.in); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, dst); diff != "" {
				t.Errorf("second call (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIndependentAssign(t *testing.T) {
	in := jointInput([]float64{25e6, 25e6, 25e6, 25e6}, wish(0, 1, 1, 0, 1, 0, 0), wish(1, 3, 1, 0, 0, 0, 1), wish(2, 1, 1, 0, 1, 0, 0))
	dst := make([]int, 3)
	if err := (proflow.Independent{}).Assign(dst, in); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 3, 1}, dst); diff != "" {
		t.Errorf("destinations (-want +got):\n%s", diff)
	}
}

func TestGreedyAllocationFree(t *testing.T) {
	in := jointInput([]float64{25e6, 0, 0, 0}, wish(0, 1, 1, 0, 1, 0, 0), wish(1, 2, 2, 0, 0, 2, 0), wish(2, 1, 1, 0, 1, 0, 0))
	dst := make([]int, 3)
	var g proflow.Greedy
	if allocs := testing.AllocsPerRun(100, func() { _ = g.Assign(dst, in) }); allocs != 0 {
		t.Errorf("Greedy.Assign allocates %v times per call after the first, want 0", allocs)
	}
}
