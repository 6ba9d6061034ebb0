package sim_test

import (
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// placementBound is the outcome of every fixed placement of a many-flow
// scenario's protected flows, applied once at 21 s, averaged over seeds.
type placementBound struct {
	plan     []int   // switch of each flow
	min, sum float64 // mean over seeds of the window's minimum-flow and summed goodput, bytes/s
}

// boundOf runs plan on every seed and averages the minimum-flow and the
// summed window goodput.
func boundOf(t *testing.T, name string, cfg sim.Config, plan []int) placementBound {
	t.Helper()
	b := placementBound{plan: plan}
	for _, seed := range multiSeeds {
		r := runMulti(t, name, cfg, seed, map[time.Duration][]int{sec(21): plan})
		means := r.windowMeans()
		low := means[0]
		for _, m := range means {
			low = min(low, m)
			b.sum += m / float64(len(multiSeeds))
		}
		b.min += low / float64(len(multiSeeds))
	}
	return b
}

// plans returns every assignment of n flows to k switches; with identical
// flows (same hosts, rate and starting switch) only the counts per switch
// matter, and sorted plans (non-decreasing switch per flow) cover them.
func plans(n, k int, identical bool) [][]int {
	var out [][]int
	plan := make([]int, n)
	var walk func(i, from int)
	walk = func(i, from int) {
		if i == n {
			out = append(out, append([]int(nil), plan...))
			return
		}
		for s := from; s < k; s++ {
			plan[i] = s
			if identical {
				walk(i+1, s)
			} else {
				walk(i+1, 0)
			}
		}
	}
	walk(0, 0)
	return out
}

// TestManyFlowPlacementBound searches every placement of M1's and M3's
// flows made with one move of each flow at 21 s for the best minimum-flow
// throughput, and compares it with herding (every flow onto one clean
// switch, what independent per-flow placement does). It asserts the
// mechanism (the best placement spreads the flows and beats herding) and
// logs the ratio: a herd on a clean switch shares the switch's limit, it
// is not crushed by congesters' streams, so herding costs the weakest flow
// far less than a collapse does. Later moves are not searched; they can do
// more where a switch drains slowly (go test -run ManyFlowPlacementBound -v).
func TestManyFlowPlacementBound(t *testing.T) {
	cfg := sim.TestbedConfig()
	for _, c := range []struct {
		name      string
		flows     int
		identical bool
		herd      []int
		maxShare  int // most flows the best placement may put on one switch
	}{
		{name: "M1", flows: 4, identical: true, herd: []int{1, 1, 1, 1}, maxShare: 3},
		{name: "M3", flows: 3, identical: false, herd: []int{3, 3, 3}, maxShare: 2},
	} {
		herd := boundOf(t, c.name, cfg, c.herd)
		best := herd
		for _, p := range plans(c.flows, 4, c.identical) {
			if b := boundOf(t, c.name, cfg, p); b.min > best.min {
				best = b
			}
		}
		share := make([]int, 4)
		for _, s := range best.plan {
			share[s]++
		}
		if m := max(share[0], share[1], share[2], share[3]); m > c.maxShare {
			t.Errorf("%s: best placement %v puts %d flows on one switch, want at most %d", c.name, best.plan, m, c.maxShare)
		}
		if best.min <= herd.min {
			t.Errorf("%s: best minimum %.2f MB/s (%v) not above the herd's %.2f (%v)", c.name, best.min/1e6, best.plan, herd.min/1e6, c.herd)
		}
		t.Logf("%s: herd %v min %.2f sum %.2f MB/s; best placement %v min %.2f sum %.2f MB/s; best/herd min %.2f×, sum %.2f×",
			c.name, c.herd, herd.min/1e6, herd.sum/1e6, best.plan, best.min/1e6, best.sum/1e6, best.min/herd.min, best.sum/herd.sum)
	}
}
