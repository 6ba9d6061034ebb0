package sim_test

import (
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// The tests below check that each of M1–M4 shows, on the testbed profile,
// the mechanism it is named for, under fixed placements (no controller):
// which placements collapse a flow and which do not, not how much any
// policy gains. A flow "collapses" when its goodput stays below half of
// its rate before the window (14–20 s) for 2 s. Protected flows that
// drain a switch by themselves share its limit (1.05 C) instead: four
// flows of 12 MB/s get about 55% each, so there the test asks for a fall
// below 75%.

var multiSeeds = []uint64{1, 2, 3}

// preRates returns every flow's mean goodput over (14 s, 20 s].
func (r *multiRun) preRates() []float64 {
	out := make([]float64, len(r.flows))
	for i := range out {
		out[i] = r.mean(i, sec(14), sec(20))
	}
	return out
}

// collapses returns when each flow collapses after from, -1 for never.
func (r *multiRun) collapses(from time.Duration) []time.Duration { return r.dropsBelow(from, 0.5) }

// dropsBelow returns when each flow's goodput falls below frac of its rate
// before the window, for 2 s, after from; -1 for never.
func (r *multiRun) dropsBelow(from time.Duration, frac float64) []time.Duration {
	pre := r.preRates()
	out := make([]time.Duration, len(pre))
	for i := range pre {
		out[i] = r.collapse(i, from, pre[i], frac)
	}
	return out
}

// sampleAt returns the index of the sample taken at virtual time at.
func (r *multiRun) sampleAt(at time.Duration) int { return int(at/r.cfg.Interval) - 1 }

// M1: four flows on agg1 fit there until the crowd comes; moved all onto
// one clean switch they drain its reserve and collapse there with no
// congester in sight; spread two, one and one over the clean switches
// they run at their rate to the end.
func TestM1Herding(t *testing.T) {
	cfg := sim.TestbedConfig()
	for _, seed := range multiSeeds {
		static := runMulti(t, "M1", cfg, seed, nil)
		if n := static.obs[static.sampleAt(sec(19.5))].Switches[0].FlowCount; n != 8 {
			t.Errorf("seed %d: flow count on agg1 before the crowd %v, want 8 (two entries per protected flow)", seed, n)
		}
		for i, at := range static.collapses(sec(20)) {
			if at < 0 || at > sec(35) {
				t.Errorf("seed %d, static: flow %d collapses at %v, want within 15 s of the crowd", seed, i, at)
			}
		}
		herd := runMulti(t, "M1", cfg, seed, map[time.Duration][]int{sec(21): {1, 1, 1, 1}})
		for i, at := range herd.dropsBelow(sec(21), 0.75) {
			if at < 0 {
				t.Errorf("seed %d, all four on agg2: flow %d keeps 75%% of its rate, want the herd to drain agg2", seed, i)
			}
		}
		if n := herd.obs[herd.sampleAt(sec(60))].Switches[1].FlowCount; n != 8 {
			t.Errorf("seed %d, herd: flow count on agg2 %v, want 8 (the four flows, no congester)", seed, n)
		}
		spread := runMulti(t, "M1", cfg, seed, map[time.Duration][]int{sec(21): {1, 1, 2, 3}})
		pre := spread.preRates()
		for i, at := range spread.collapses(sec(21)) {
			if at >= 0 {
				t.Errorf("seed %d, spread: flow %d collapses at %v, want it to keep its rate", seed, i, at)
			}
			if m := spread.mean(i, sec(25), spread.sc.Length()); m < 0.9*pre[i] {
				t.Errorf("seed %d, spread: flow %d at %.1f MB/s after the move, want at least 90%% of %.1f", seed, i, m/1e6, pre[i]/1e6)
			}
		}
	}
}

// M2: the crowd visits every switch for 30 s; each pair collapses while it
// is there and recovers after it leaves. A pair that flees onto the
// switch the crowd reaches last doubles it up, and the four flows there
// collapse before the crowd arrives.
func TestM2Rolling(t *testing.T) {
	cfg := sim.TestbedConfig()
	for _, seed := range multiSeeds {
		static := runMulti(t, "M2", cfg, seed, nil)
		pre := static.preRates()
		coll := static.collapses(sec(20))
		for i, at := range coll {
			arrive := sec(20 + 30*float64(i/2))
			if at < arrive || at > arrive+sec(15) {
				t.Errorf("seed %d, static: flow %d (agg%d) collapses at %v, want within 15 s after the crowd arrives at %v", seed, i, i/2+1, at, arrive)
			}
			if i/2 == 3 {
				continue // the crowd stays on agg4 to the end
			}
			leave := arrive + sec(30)
			if m := static.mean(i, leave+sec(15), leave+sec(20)); m < 0.9*pre[i] {
				t.Errorf("seed %d, static: flow %d at %.1f MB/s 15-20 s after the crowd left, want it recovered (90%% of %.1f)", seed, i, m/1e6, pre[i]/1e6)
			}
		}
		flee := runMulti(t, "M2", cfg, seed, map[time.Duration][]int{sec(21): {3, 3, -1, -1, -1, -1, -1, -1}})
		for i, at := range flee.dropsBelow(sec(21), 0.75) {
			if onAgg4 := i < 2 || i >= 6; onAgg4 && (at < 0 || at >= sec(110)) {
				t.Errorf("seed %d, agg1's pair fled to agg4: flow %d falls below 75%% at %v, want before the crowd reaches agg4 at 110s", seed, i, at)
			}
		}
	}
}

// M3: agg4 is the one clean switch. One flow moved there keeps its rate;
// all three moved there collapse; left where they are, all three
// collapse. Which flow gets the switch decides the weighted throughput.
func TestM3Priority(t *testing.T) {
	cfg := sim.TestbedConfig()
	for _, seed := range multiSeeds {
		static := runMulti(t, "M3", cfg, seed, nil)
		for i, at := range static.collapses(sec(20)) {
			if at < 0 {
				t.Errorf("seed %d, static: flow %d never collapses, want every flow hurt by its crowd", seed, i)
			}
		}
		all := runMulti(t, "M3", cfg, seed, map[time.Duration][]int{sec(21): {3, 3, 3}})
		for i, at := range all.collapses(sec(21)) {
			if at < 0 {
				t.Errorf("seed %d, all three on agg4: flow %d never collapses, want agg4 drained", seed, i)
			}
		}
		weighted := func(r *multiRun) float64 {
			sum := 0.0
			for i, m := range r.windowMeans() {
				sum += r.flows[i].EffectiveWeight() * m
			}
			return sum
		}
		var w []float64
		for _, moved := range []int{0, 2} {
			plan := []int{-1, -1, -1}
			plan[moved] = 3
			one := runMulti(t, "M3", cfg, seed, map[time.Duration][]int{sec(21): plan})
			if at := one.collapses(sec(21))[moved]; at >= 0 {
				t.Errorf("seed %d, flow %d alone on agg4 collapses at %v, want it to keep its rate", seed, moved, at)
			}
			w = append(w, weighted(one))
		}
		if w[0] <= w[1] {
			t.Errorf("seed %d: weighted throughput %.1f with the weight-3 flow on agg4, %.1f with the weight-1 flow; want the first larger", seed, w[0]/1e6, w[1]/1e6)
		}
	}
}

// M4: no congestion traffic at all (λ and F zero), yet the three flows
// sharing agg1 drain it and collapse while the one on agg2 does not; one
// flow per switch runs clean.
func TestM4SelfCongestion(t *testing.T) {
	cfg := sim.TestbedConfig()
	for _, seed := range multiSeeds {
		static := runMulti(t, "M4", cfg, seed, nil)
		for s, o := range static.obs {
			if o.Flow.CongestionRate != 0 || o.Leaves[0].IngressRate != 0 {
				t.Fatalf("seed %d, sample %d: F %v, λ %v, want no congestion traffic", seed, s, o.Flow.CongestionRate, o.Leaves[0].IngressRate)
			}
		}
		if n := static.obs[static.sampleAt(sec(30))].Switches[0].FlowCount; n != 6 {
			t.Errorf("seed %d: flow count on agg1 %v, want 6 (three protected flows)", seed, n)
		}
		for i, at := range static.collapses(sec(0)) {
			if shared := i < 3; shared != (at >= 0) {
				t.Errorf("seed %d, static: flow %d collapses at %v; want a collapse exactly for the three flows on agg1", seed, i, at)
			}
		}
		spread := runMulti(t, "M4", cfg, seed, map[time.Duration][]int{sec(20): {-1, 2, 3, -1}})
		for i, at := range spread.collapses(sec(20)) {
			if at >= 0 {
				t.Errorf("seed %d, one flow per switch: flow %d collapses at %v", seed, i, at)
			}
		}
	}
}
