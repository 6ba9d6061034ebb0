package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// multiRun is one simulated episode with several protected flows, driven
// by a fixed plan of placements instead of a controller.
type multiRun struct {
	cfg   sim.Config
	sc    *sim.Scenario
	flows []proflow.ProtectedFlow
	at    []time.Duration       // end of each interval
	thr   [][]float64           // [interval][flow] goodput, bytes/s, truth
	sw    [][]int               // [interval][flow] switch during the interval
	obs   []proflow.Observation // truth per interval
}

// runMulti runs the built-in scenario name on cfg with seed; moves[t]
// lists the switch for each protected flow (-1: stay) to apply at virtual
// time t, in one PlaceBatch.
func runMulti(t testing.TB, name string, cfg sim.Config, seed uint64, moves map[time.Duration][]int) *multiRun {
	t.Helper()
	sc, err := sim.BuiltinScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	return runMultiScenario(t, sc, cfg, seed, moves)
}

func runMultiScenario(t testing.TB, sc *sim.Scenario, cfg sim.Config, seed uint64, moves map[time.Duration][]int) *multiRun {
	t.Helper()
	f, err := sim.New(cfg, sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	r := &multiRun{cfg: cfg, sc: sc, flows: f.Protected()}
	ctx := context.Background()
	var truths []sim.FlowTruth
	var ps []proflow.Placement
	var errs []error
	for now := time.Duration(0); now < sc.Length(); now += cfg.Interval {
		if m, ok := moves[now]; ok {
			ps = ps[:0]
			for i, k := range m {
				if k >= 0 {
					ps = append(ps, proflow.Placement{Flow: r.flows[i].ID, Switch: k})
				}
			}
			errs = make([]error, len(ps))
			if err := f.PlaceBatch(ctx, ps, errs); err != nil {
				t.Fatal(err)
			}
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		truths = f.FlowTruths(truths)
		sws := make([]int, len(truths))
		for i, ft := range truths {
			sws[i] = ft.Switch
		}
		if err := f.Advance(cfg.Interval); err != nil {
			t.Fatal(err)
		}
		var o proflow.Observation
		f.Truth(&o)
		truths = f.FlowTruths(truths)
		thr := make([]float64, len(truths))
		for i, ft := range truths {
			thr[i] = ft.Throughput
		}
		r.at = append(r.at, now+cfg.Interval)
		r.thr = append(r.thr, thr)
		r.sw = append(r.sw, sws)
		r.obs = append(r.obs, o)
	}
	return r
}

// mean returns flow i's mean goodput over the intervals ending in (from, to].
func (r *multiRun) mean(i int, from, to time.Duration) float64 {
	sum, n := 0.0, 0
	for s, at := range r.at {
		if at > from && at <= to {
			sum += r.thr[s][i]
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// windowMeans returns every flow's mean goodput over the evaluation window.
func (r *multiRun) windowMeans() []float64 {
	out := make([]float64, len(r.flows))
	for i := range out {
		out[i] = r.mean(i, r.sc.Start(), r.sc.Length())
	}
	return out
}

// collapse returns when flow i's goodput first falls below frac of ref
// after from and stays there for the next 2 s, or -1.
func (r *multiRun) collapse(i int, from time.Duration, ref, frac float64) time.Duration {
	const hold = 4
	for s := range r.at {
		if r.at[s] <= from || s+hold > len(r.at) {
			continue
		}
		below := true
		for j := s; j < s+hold; j++ {
			if r.thr[j][i] >= frac*ref {
				below = false
				break
			}
		}
		if below {
			return r.at[s]
		}
	}
	return -1
}
