package training

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// kindNames returns the protected-flow kinds a corpus may draw, in the
// order their shares are split (CollectConfig.Kinds).
func kindNames() []string { return []string{sim.KindBulk, sim.KindRR, sim.KindRate, sim.KindOnOff} }

// Parameters of the kinds a corpus draws (package documentation,
// "Protected-flow kinds"). Each range spans what the kinds' built-in
// scenarios use and more.
const (
	// kindDemandChange is the probability that an rr flow's request rate
	// falls mid-episode, and that an onoff flow sends continuously until
	// its cycle starts mid-episode: the flow's own demand drops with no
	// congestion behind it (T1, T2).
	kindDemandChange = 0.3
	// kindQuietChange is that probability in StrategyKQuiet, whose point
	// is the flow's own drop with nothing on the fabric.
	kindQuietChange = 0.8
)

// validateKinds checks a CollectConfig.Kinds map.
func validateKinds(kinds map[string]float64) error {
	if kinds == nil {
		return nil
	}
	var errs []error
	total := 0.0
	for name, v := range kinds {
		if !slices.Contains(kindNames(), name) {
			errs = append(errs, fmt.Errorf("kind %q, want one of %v", name, kindNames()))
		}
		if !(v >= 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("share of kind %s is %v, want a finite number >= 0", name, v))
		}
		total += v
	}
	if !(total > 0) {
		errs = append(errs, errors.New("kind shares sum to 0, want at least one kind with a positive share"))
	}
	return errors.Join(errs...)
}

// drawKind draws the protected flow's kind of plan p from kinds (shares by
// name), with a random source of the plan's own, so that adding kinds to a
// corpus leaves its congestion and scripts unchanged. The flow's demand
// may change once between the congestion start t0 and 10 s before the
// end.
func drawKind(kinds map[string]float64, seed uint64, t0, end time.Duration, pChange float64) sim.FlowKind {
	rng := rand.New(rand.NewPCG(seed, 0x6b696e6473)) // "kinds"
	total := 0.0
	for _, name := range kindNames() {
		total += kinds[name]
	}
	x, kind := rng.Float64()*total, sim.KindBulk
	for _, name := range kindNames() {
		if w := kinds[name]; w > 0 {
			kind = name
			if x < w {
				break
			}
			x -= w
		}
	}
	uniform := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
	logUniform := func(lo, hi float64) float64 { return math.Exp(uniform(math.Log(lo), math.Log(hi))) }
	change := rng.Float64() < pChange
	at := sim.Duration(time.Duration(uniform(t0.Seconds(), (end-10*time.Second).Seconds()) * float64(time.Second)).Round(time.Second))
	switch kind {
	case sim.KindRR:
		k := sim.FlowKind{Kind: sim.KindRR, RequestBytes: int(logUniform(4<<10, 64<<10)), RequestRate: math.Round(logUniform(20, 200))}
		if rng.IntN(2) == 0 {
			k.Arrivals = sim.ArrivalsPoisson
		}
		if change {
			k.From, k.RequestRateFrom = at, math.Max(1, math.Round(k.RequestRate*uniform(0.1, 0.5)))
		}
		return k
	case sim.KindRate:
		return sim.FlowKind{Kind: sim.KindRate, RateFraction: math.Round(uniform(0.2, 0.6)*100) / 100}
	case sim.KindOnOff:
		k := sim.FlowKind{Kind: sim.KindOnOff, Duty: math.Round(uniform(0.3, 0.7)*100) / 100,
			Period: sim.Duration(time.Duration(uniform(2, 10) * float64(time.Second)).Round(100 * time.Millisecond))}
		if rng.IntN(2) == 0 {
			k.RateFraction = math.Round(uniform(0.3, 0.7)*100) / 100
		}
		if change {
			k.From = at
		}
		return k
	}
	return sim.FlowKind{}
}
