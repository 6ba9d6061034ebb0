package training

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
)

// Sweeps of the Q-network signal analysis (paper Fig. 8).
const (
	// SweepCrowd varies the flow count on the flow's switch, the overflow
	// held low.
	SweepCrowd = "crowd"
	// SweepOverflow varies the overflow rate on the flow's switch, the flow
	// count held at the flow's own.
	SweepOverflow = "overflow"
)

// ProbeConfig describes the signal analysis of a policy: synthetic states of
// the protected flow alone on its switch k*, at its baseline, in which one
// signal of k* is swept while everything else stays put.
type ProbeConfig struct {
	// Alone[k] is the observation of the protected flow alone on switch k
	// at its baseline, and Baselines[k] that episode's baseline (see
	// AloneObservations). Every switch in Switches needs one.
	Alone     []proflow.Observation
	Baselines []proflow.Baseline
	// Switches lists the k* to probe (nil: every switch of Alone).
	Switches []int
	// CrowdCounts are the flow counts n_k* of the crowd sweep, with the
	// overflow rate of k* held at CrowdOverflow (bytes/s).
	CrowdCounts   []float64
	CrowdOverflow float64
	// Overflows are the overflow rates ξ_k* (bytes/s) of the overflow sweep,
	// with the flow count of k* held at OverflowCount.
	Overflows     []float64
	OverflowCount float64
	// Margin is the gate's δ: a point flips the decision when its margin
	// exceeds it.
	Margin float64
}

// DefaultProbeConfig returns the sweeps of the paper's Fig. 8 (the alone
// observations left to fill in): flow counts 2–30 with the overflow held at
// 5,000 B/s, and overflow rates 0–60,000 B/s in steps of 1,000 with the
// flow count held at 2 (the protected flow's own two flow-table entries),
// for the gate margin δ.
func DefaultProbeConfig(margin float64) ProbeConfig {
	c := ProbeConfig{CrowdOverflow: 5000, OverflowCount: 2, Margin: margin}
	for n := 2; n <= 30; n++ {
		c.CrowdCounts = append(c.CrowdCounts, float64(n))
	}
	for x := 0; x <= 60000; x += 1000 {
		c.Overflows = append(c.Overflows, float64(x))
	}
	return c
}

// ProbePoint is the policy's decision in one synthetic state.
type ProbePoint struct {
	// Sweep is SweepCrowd or SweepOverflow; X the swept value (flows or
	// bytes/s); Switch the k* carrying the flow.
	Sweep  string
	Switch int
	X      float64
	// Scores are the policy's scores (Q-values) per switch; Best the
	// highest-scoring switch other than k*.
	Scores []float64
	Best   int
	// Margin is the decision margin max_{k≠k*} Q(s,k) − Q(s,k*): positive
	// when the policy prefers to leave.
	Margin float64
}

// ProbeFlip is where a sweep first flips the decision on one switch.
type ProbeFlip struct {
	Sweep  string
	Switch int
	// X is the first swept value whose margin exceeds δ; NaN if none does.
	X float64
}

// ProbeResult holds every point, in sweep, switch and x order, and the flips.
type ProbeResult struct {
	Points []ProbePoint
	Flips  []ProbeFlip
}

// Flip returns the flip of a sweep on switch k.
func (r *ProbeResult) Flip(sweep string, k int) (ProbeFlip, bool) {
	for _, f := range r.Flips {
		if f.Sweep == sweep && f.Switch == k {
			return f, true
		}
	}
	return ProbeFlip{}, false
}

// Probe evaluates pol on the synthetic states of cfg, encoded with a fresh
// telemetry.Encoder for enc holding each switch's baseline: the encoder
// first sees the alone observation DropWindow times (so rates of change and
// the throughput drop read zero), then the probed one. pol reads the state
// (a learned agent reads nothing else) and, for reference policies, the
// observation.
func Probe(pol proflow.Policy, enc telemetry.EncoderConfig, cfg ProbeConfig) (*ProbeResult, error) {
	if pol == nil {
		return nil, errors.New("training: probe: nil policy")
	}
	if err := enc.Validate(); err != nil {
		return nil, fmt.Errorf("training: probe: %w", err)
	}
	if len(cfg.Alone) != len(cfg.Baselines) {
		return nil, fmt.Errorf("training: probe: %d alone observations and %d baselines, want one each", len(cfg.Alone), len(cfg.Baselines))
	}
	switches := cfg.Switches
	if switches == nil {
		for k := range cfg.Alone {
			switches = append(switches, k)
		}
	}
	e, err := telemetry.NewEncoder(enc)
	if err != nil {
		return nil, err
	}
	n := enc.NumSwitches
	res := &ProbeResult{}
	for _, sweep := range []string{SweepCrowd, SweepOverflow} {
		xs := cfg.CrowdCounts
		if sweep == SweepOverflow {
			xs = cfg.Overflows
		}
		for _, k := range switches {
			if k < 0 || k >= len(cfg.Alone) || k >= n {
				return nil, fmt.Errorf("training: probe: switch %d has no alone observation or is out of range 0..%d", k, n-1)
			}
			flip := ProbeFlip{Sweep: sweep, Switch: k, X: math.NaN()}
			for _, x := range xs {
				obs := cfg.Alone[k].Clone()
				sw := &obs.Switches[k]
				if sweep == SweepCrowd {
					sw.FlowCount, sw.OverflowRate = x, cfg.CrowdOverflow
				} else {
					sw.FlowCount, sw.OverflowRate = cfg.OverflowCount, x
				}
				pt, err := probePoint(pol, e, enc, &cfg.Alone[k], obs, cfg.Baselines[k], k)
				if err != nil {
					return nil, fmt.Errorf("training: probe: %s sweep, switch %d, x %v: %w", sweep, k, x, err)
				}
				pt.Sweep, pt.X = sweep, x
				res.Points = append(res.Points, pt)
				if math.IsNaN(flip.X) && pt.Margin > cfg.Margin {
					flip.X = x
				}
			}
			res.Flips = append(res.Flips, flip)
		}
	}
	return res, nil
}

func probePoint(pol proflow.Policy, e *telemetry.Encoder, enc telemetry.EncoderConfig, alone, obs *proflow.Observation, base proflow.Baseline, k int) (ProbePoint, error) {
	e.Reset()
	if err := e.SetBaseline(base); err != nil {
		return ProbePoint{}, err
	}
	s := make(proflow.State, enc.Dim())
	at := alone.Time
	for range enc.DropWindow {
		a := alone.Clone()
		a.Time = at
		if err := e.Encode(s, a, k); err != nil {
			return ProbePoint{}, err
		}
		at = at.Add(proflow.DefaultInterval)
	}
	obs.Time = at
	if err := e.Encode(s, obs, k); err != nil {
		return ProbePoint{}, err
	}
	if r, ok := pol.(proflow.Resetter); ok {
		r.Reset()
	}
	scores := make([]float64, enc.NumSwitches)
	if err := pol.Score(scores, &proflow.Input{Time: at, Obs: obs, State: s, Current: k}); err != nil {
		return ProbePoint{}, err
	}
	pt := ProbePoint{Switch: k, Scores: scores, Best: -1, Margin: math.Inf(-1)}
	for j, q := range scores {
		if j != k && q-scores[k] > pt.Margin {
			pt.Best, pt.Margin = j, q-scores[k]
		}
	}
	return pt, nil
}

// AloneObservations measures, on the simulated fabric cfg, the protected
// flow alone on each switch: for every k it runs the flow alone on k for
// warmup+window and returns the mean ground-truth observation over the last
// window (time set to its end) and the baseline over the same samples (ξ̄,
// n̄, φ0 on k). The result depends only on cfg and seed.
func AloneObservations(cfg sim.Config, seed uint64, warmup, window time.Duration) ([]proflow.Observation, []proflow.Baseline, error) {
	if window <= 0 || warmup < 0 {
		return nil, nil, fmt.Errorf("training: alone observations: warm-up %v and window %v, want >= 0 and > 0", warmup, window)
	}
	var obs []proflow.Observation
	var bases []proflow.Baseline
	for k := range cfg.Switches {
		sc := &sim.Scenario{Name: "alone-" + switchName(k), ProtectedSwitch: switchName(k),
			CongestionStart: sim.Duration(warmup + window), Window: sim.Duration(cfg.Interval)}
		f, err := sim.New(cfg, sc, seed)
		if err != nil {
			return nil, nil, fmt.Errorf("training: alone observations: %w", err)
		}
		if err := f.Advance(warmup); err != nil {
			return nil, nil, err
		}
		var sum, o proflow.Observation
		sum.Resize(f.Topology())
		count := 0
		for f.Elapsed() < warmup+window {
			if err := f.Advance(cfg.Interval); err != nil {
				return nil, nil, err
			}
			f.Truth(&o)
			for j, s := range o.Switches {
				t := &sum.Switches[j]
				t.TxRate += s.TxRate
				t.OverflowRate += s.OverflowRate
				t.FlowCount += s.FlowCount
				t.ElephantRate += s.ElephantRate
			}
			for j, l := range o.Leaves {
				sum.Leaves[j].IngressRate += l.IngressRate
				sum.Leaves[j].TransmitRate += l.TransmitRate
			}
			sum.Flow.Throughput += o.Flow.Throughput
			sum.Flow.CongestionRate += o.Flow.CongestionRate
			sum.Time = o.Time
			count++
		}
		c := float64(count)
		for j := range sum.Switches {
			t := &sum.Switches[j]
			t.TxRate, t.OverflowRate, t.FlowCount, t.ElephantRate = t.TxRate/c, t.OverflowRate/c, math.Round(t.FlowCount/c), t.ElephantRate/c
		}
		for j := range sum.Leaves {
			sum.Leaves[j].IngressRate /= c
			sum.Leaves[j].TransmitRate /= c
		}
		sum.Flow.Throughput /= c
		sum.Flow.CongestionRate /= c
		obs = append(obs, sum)
		bases = append(bases, proflow.Baseline{Overflow: sum.Switches[k].OverflowRate, FlowCount: sum.Switches[k].FlowCount,
			Throughput: sum.Flow.Throughput, Switch: k})
	}
	return obs, bases, nil
}
