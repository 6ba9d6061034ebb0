package proflow

import (
	"fmt"
	"math"
)

// State is the encoded state vector s_t that policies read (paper §IV-C,
// App. A; docs/method.md). Its length is StateEncoder.Dim(); for the
// default encoder 6|S|+2|L|+4.
type State []float32

// Baseline holds the per-episode reference values of the state encoding,
// learned while the protected flow runs alone on its initial switch, before
// congestion (paper App. A).
type Baseline struct {
	// Overflow is ξ̄, the mean overflow rate produced by the protected
	// flow's own TCP on its initial switch, bytes/s.
	Overflow float64 `json:"overflow"`
	// FlowCount is n̄, the flow count on that switch before congestion.
	FlowCount float64 `json:"flow_count"`
	// Throughput is φ0, the protected flow's pre-congestion throughput, bytes/s.
	Throughput float64 `json:"throughput"`
	// Switch is the index of the switch the baseline was measured on.
	Switch int `json:"switch"`
}

// Validate checks that every field is finite and non-negative and that the
// throughput is positive (it divides the normalised throughput φ_norm).
func (b Baseline) Validate() error {
	for _, f := range [...]struct {
		name string
		v    float64
	}{{"overflow", b.Overflow}, {"flow_count", b.FlowCount}, {"throughput", b.Throughput}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("proflow: baseline %s is %v, want a finite non-negative number", f.name, f.v)
		}
	}
	if b.Throughput == 0 {
		return fmt.Errorf("proflow: baseline throughput is 0, want the protected flow's pre-congestion rate (bytes/s)")
	}
	if b.Switch < 0 {
		return fmt.Errorf("proflow: baseline switch %d, want a switch index", b.Switch)
	}
	return nil
}

// BaselineEstimator learns a Baseline from the first samples of an episode:
// it discards Warmup samples (the protected flow's TCP ramp-up) and then
// averages the next Samples observations of the switch carrying the flow.
// This is the explicit baseline phase of a deployment: run it while the
// fabric is known to be uncongested, or set Config.Baseline from a previous
// measurement instead.
//
// The zero value is not usable; create one with NewBaselineEstimator.
type BaselineEstimator struct {
	warmup, samples int
	seen, used      int
	sum             Baseline
	sw              int
}

// NewBaselineEstimator returns an estimator that skips warmup samples and
// averages the following samples observations.
func NewBaselineEstimator(warmup, samples int) (*BaselineEstimator, error) {
	if warmup < 0 {
		return nil, fmt.Errorf("proflow: baseline warm-up %d samples, want >= 0", warmup)
	}
	if samples < 1 {
		return nil, fmt.Errorf("proflow: baseline window %d samples, want >= 1", samples)
	}
	return &BaselineEstimator{warmup: warmup, samples: samples, sw: -1}, nil
}

// Reset forgets every sample.
func (e *BaselineEstimator) Reset() {
	e.seen, e.used, e.sum, e.sw = 0, 0, Baseline{}, -1
}

// Restart starts a new averaging window without repeating the warm-up:
// what follows a window that gave no usable baseline (the flow idle
// throughout it, say). The warm-up is for the flow's ramp-up, long over by
// then; repeating it would keep the windows of a flow with a regular
// on/off pattern in step with its idle phases whenever the warm-up plus
// the window is a multiple of its period.
func (e *BaselineEstimator) Restart() {
	e.used, e.sum = 0, Baseline{}
}

// Add feeds one observation taken while the protected flow is on switch
// current. A move during the phase restarts the average on the new switch.
// It reports whether the baseline is complete.
func (e *BaselineEstimator) Add(o *Observation, current int) bool {
	if current < 0 || current >= len(o.Switches) {
		return e.Done()
	}
	if e.sw != current {
		e.used, e.sum, e.sw = 0, Baseline{}, current
	}
	e.seen++
	if e.seen <= e.warmup || e.Done() {
		return e.Done()
	}
	s := o.Switches[current]
	e.sum.Overflow += s.OverflowRate
	e.sum.FlowCount += s.FlowCount
	e.sum.Throughput += o.Flow.Throughput
	e.used++
	return e.Done()
}

// Done reports whether enough samples have been averaged.
func (e *BaselineEstimator) Done() bool { return e.used >= e.samples }

// Progress returns how many samples have been averaged and how many are needed.
func (e *BaselineEstimator) Progress() (have, want int) { return e.used, e.samples }

// Baseline returns the averaged baseline, or an error if the phase has not
// finished or produced an unusable value (for example zero throughput: the
// protected flow was not running).
func (e *BaselineEstimator) Baseline() (Baseline, error) {
	if !e.Done() {
		return Baseline{}, fmt.Errorf("proflow: baseline has %d of %d samples: %w", e.used, e.samples, ErrBaselinePending)
	}
	n := float64(e.used)
	b := Baseline{Overflow: e.sum.Overflow / n, FlowCount: e.sum.FlowCount / n, Throughput: e.sum.Throughput / n, Switch: e.sw}
	if err := b.Validate(); err != nil {
		return Baseline{}, err
	}
	return b, nil
}
