package proflow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// flowLoop is the per-flow part of a control step, Encode → baseline phase
// → Policy.Score → Gate.Admit, with the state it keeps for one protected
// flow. Controller runs one; MultiController runs one per flow, so a flow
// protected alone is decided by the same code in both.
type flowLoop struct {
	flow     FlowID
	topo     Topology // shared with the controller, read only
	enc      StateEncoder
	pol      Policy
	gate     Gate
	rechecks bool // gate is a Rechecker

	marks       []bool // the cordon marks of the step under way (begin); nil: none
	current     atomic.Int64
	baseline    atomic.Pointer[Baseline]
	estimator   *BaselineEstimator
	lastReroute time.Time

	state State
	in    Input
}

// init checks the encoder's dimension and prepares fl for its first reset.
func (fl *flowLoop) init(flow FlowID, topo Topology, enc StateEncoder, pol Policy, gate Gate, warmup, samples int) error {
	var dim int
	if err := call("StateEncoder", "Dim", enc, func() error { dim = enc.Dim(); return nil }); err != nil {
		return err
	}
	if dim <= 0 {
		return fmt.Errorf("state encoder dimension %d, want > 0", dim)
	}
	est, err := NewBaselineEstimator(warmup, samples)
	if err != nil {
		return err
	}
	fl.flow, fl.topo, fl.enc, fl.pol, fl.gate, fl.estimator = flow, topo, enc, pol, gate, est
	_, fl.rechecks = gate.(Rechecker)
	fl.state = make(State, dim)
	return nil
}

// reset starts a new episode with the flow on switch current: the encoder,
// policy and gate forget their history, and the baseline is learned again
// unless fixed is set.
func (fl *flowLoop) reset(current int, fixed *Baseline) error {
	if n := fl.topo.NumSwitches(); current < 0 || current >= n {
		return unknownSwitch(fl.topo, current)
	}
	fl.current.Store(int64(current))
	fl.lastReroute = time.Time{}
	fl.estimator.Reset()
	fl.baseline.Store(nil)
	for _, r := range []any{fl.enc, fl.pol, fl.gate} {
		if r, ok := r.(Resetter); ok {
			if err := call("Resetter", "Reset", r, func() error { r.Reset(); return nil }); err != nil {
				return fmt.Errorf("reset: %w", err)
			}
		}
	}
	if fixed != nil {
		return fl.setBaseline(*fixed)
	}
	return nil
}

func (fl *flowLoop) setBaseline(b Baseline) error {
	if bl, ok := fl.enc.(Baseliner); ok {
		if err := call("Baseliner", "SetBaseline", bl, func() error { return bl.SetBaseline(b) }); err != nil {
			return fmt.Errorf("set baseline: %w", err)
		}
	}
	fl.baseline.Store(&b)
	return nil
}

// begin fills the fields of d that a step knows before it runs, and
// keeps marks, the controller's cordon marks read once when the step
// began (cordons.snapshot), for the whole step: the policy's input, the
// dominated switches and the masking of the scores all see the same set,
// whatever Cordon does meanwhile.
func (fl *flowLoop) begin(d *Decision, seq uint64, now time.Time, marks []bool) {
	fl.marks = marks
	d.reset()
	d.Seq, d.Time, d.Flow, d.Current, d.LastReroute = seq, now, fl.flow, int(fl.current.Load()), fl.lastReroute
}

// decide runs the per-flow part of a step on obs, a valid, fresh
// observation whose Flow is this flow's sample. It returns with d.Target
// the switch to move the flow to, or -1 to hold (d.Reason, d.Err say why).
func (fl *flowLoop) decide(obs *Observation, d *Decision) {
	if !fl.prepare(fl.state, obs, d) {
		return
	}
	fl.in = Input{Time: d.Time, Obs: obs, State: fl.state, Current: d.Current, Cordoned: fl.marks}
	fl.scores(d)
	if err := call("Policy", "Score", fl.pol, func() error { return fl.pol.Score(d.Scores, &fl.in) }); err != nil {
		d.Reason, d.Err = ReasonPolicy, fmt.Errorf("proflow: policy: %w", err)
		return
	}
	if f, ok := fl.pol.(Forecaster); ok && outscored(d.Scores, d.Current) {
		if err := call("Forecaster", "Forecast", f, func() error { return f.Forecast(&d.Forecast, &fl.in) }); err != nil {
			d.Forecast = FlowForecast{}
			d.Reason, d.Err = ReasonPolicy, fmt.Errorf("proflow: policy: forecast: %w", err)
			return
		}
	}
	fl.admit(d)
}

// prepare encodes the flow's state for obs into state and runs the
// baseline phase. It reports whether the flow is to be scored; if not, d
// says why it holds.
func (fl *flowLoop) prepare(state State, obs *Observation, d *Decision) bool {
	d.Throughput, d.AppLimited = obs.Flow.Throughput, obs.Flow.AppLimited
	if d.Current >= 0 && d.Current < len(obs.Switches) {
		d.Load = obs.Switches[d.Current].TxRate / fl.topo.BucketRate
	}
	d.Dominated = DominatedSwitches(d.Dominated, obs.Switches, d.Current, fl.marks)
	d.Relieves = RelievingSwitches(d.Relieves, obs.Switches, d.Current, fl.marks)
	if err := call("StateEncoder", "Encode", fl.enc, func() error { return fl.enc.Encode(state, obs, d.Current) }); err != nil {
		d.Reason, d.Err = ReasonEncoder, fmt.Errorf("proflow: encode state: %w", err)
		return false
	}
	if fl.baseline.Load() != nil {
		return true
	}
	d.Reason = ReasonBaseline
	if !fl.estimator.Add(obs, d.Current) {
		return false
	}
	b, err := fl.estimator.Baseline()
	if err == nil {
		err = fl.setBaseline(b)
	}
	if err != nil {
		fl.estimator.Restart()
		d.Err = fmt.Errorf("proflow: baseline window restarts: %w", err)
	}
	return false
}

// outscored reports whether some switch scores strictly above the current
// one: only then can the gate admit a move.
func outscored(scores []float64, current int) bool {
	if current < 0 || current >= len(scores) {
		return true // let the gate report the bad index
	}
	for k, s := range scores {
		if k != current && s > scores[current] {
			return true
		}
	}
	return false
}

// scores sizes d.Scores to one zeroed score per switch.
func (fl *flowLoop) scores(d *Decision) {
	n := fl.topo.NumSwitches()
	if cap(d.Scores) < n {
		d.Scores = make([]float64, 0, n)
	}
	d.Scores = d.Scores[:n]
	clear(d.Scores)
}

// admit checks the policy's scores in d.Scores, lowers the cordoned
// switches' below the rest, and runs the gate: d.Target becomes the switch
// to move the flow to, or -1 to hold.
func (fl *flowLoop) admit(d *Decision) {
	n := fl.topo.NumSwitches()
	for k, s := range d.Scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			d.Reason = ReasonPolicy
			d.Err = fmt.Errorf("proflow: policy: score %v for switch %s: %w", s, fl.topo.Switches[k], ErrBadScores)
			return
		}
	}
	maskCordoned(d.Scores, fl.marks, d.Current)

	cur := d.Current
	err := call("Gate", "Admit", fl.gate, func() error { fl.gate.Admit(d); return nil })
	// The placement is the controller's, not the gate's to change.
	d.Current, d.Rerouted = cur, false
	if err != nil {
		d.Reason, d.Err, d.Target = ReasonPolicy, fmt.Errorf("proflow: gate: %w", err), -1
		return
	}
	if d.Target < 0 || d.Target == d.Current {
		if d.Reason == ReasonRerouted { // admitted a move to where the flow is: none
			d.Reason = ReasonStay
		}
		d.Target = -1
		return
	}
	if d.Target >= n {
		d.Reason = ReasonPolicy
		d.Err = fmt.Errorf("proflow: gate: %w", unknownSwitch(fl.topo, d.Target))
		d.Target = -1
	}
}

// recheck asks the gate to recheck the move it deferred at the last step
// (Rechecker), from d.Load; d.Target becomes the move to make, or -1 to
// hold. A destination cordoned since the step is not moved to.
func (fl *flowLoop) recheck(d *Decision) {
	rc, ok := fl.gate.(Rechecker)
	if !ok { // not offered rechecks (rechecks unset): nothing was deferred
		d.Reason = ReasonStay
		return
	}
	cur := d.Current
	err := call("Rechecker", "Recheck", fl.gate, func() error { rc.Recheck(d); return nil })
	d.Current, d.Rerouted, d.Rechecking = cur, false, true
	switch n := fl.topo.NumSwitches(); {
	case err != nil:
		d.Reason, d.Err, d.Target = ReasonPolicy, fmt.Errorf("proflow: gate: %w", err), -1
	case d.Target >= n:
		d.Reason, d.Err = ReasonPolicy, fmt.Errorf("proflow: gate: %w", unknownSwitch(fl.topo, d.Target))
		d.Target = -1
	case d.Target < 0 || d.Target == cur || (d.Target < len(fl.marks) && fl.marks[d.Target]):
		if d.Reason == ReasonRerouted {
			d.Reason = ReasonStay
		}
		d.Target = -1
	}
}

// shadowed records a move the gate admitted and shadow mode did not make:
// the flow stays, and the cooldown runs from now.
func (fl *flowLoop) shadowed(d *Decision) {
	fl.lastReroute = d.Time
	d.Reason = ReasonShadow
}

// moved records that the enforcer put the flow on d.Target.
func (fl *flowLoop) moved(d *Decision) {
	fl.current.Store(int64(d.Target))
	fl.lastReroute = d.Time
	d.Rerouted, d.Reason = true, ReasonRerouted
}

// sampler collects the step's observation and refuses it when it is
// unusable: a telemetry error, an invalid sample, one dated ahead of the
// controller's clock, or a stale one.
type sampler struct {
	topo        Topology
	clock       Clock
	maxAge      time.Duration // MaxSampleAge; <= 0 disables the age check
	maxSkew     time.Duration // MaxClockSkew
	lastObsTime time.Time
}

// sample fills obs from tel for a step that began at stepTime. It returns
// the reason and error to hold with, or "" and nil. With perFlow, the
// samples in obs.Flows are left for the caller to check flow by flow, so
// that one flow's bad sample does not hold the others.
func (s *sampler) sample(ctx context.Context, tel Telemetry, obs *Observation, stepTime time.Time, perFlow bool) (Reason, error) {
	obs.Resize(s.topo)
	if err := call("Telemetry", "Collect", tel, func() error { return tel.Collect(ctx, obs) }); err != nil {
		if errors.Is(err, ErrStale) {
			return ReasonStale, fmt.Errorf("proflow: telemetry: %w", err)
		}
		return ReasonTelemetry, fmt.Errorf("proflow: telemetry: %w", err)
	}
	if err := s.validate(obs, perFlow); err != nil {
		return ReasonInvalid, err
	}
	// Compare with the clock once the sample has arrived: Collect may take
	// up to StepTimeout, so stepTime can be well before the sampling time.
	if err := s.checkNotAhead(s.clock.Now(), obs.Time); err != nil {
		return ReasonInvalid, err
	}
	if err := s.checkFresh(stepTime, obs.Time); err != nil {
		return ReasonStale, err
	}
	s.lastObsTime = obs.Time
	return "", nil
}

func (s *sampler) validate(obs *Observation, perFlow bool) error {
	if !perFlow {
		return obs.Validate(s.topo)
	}
	if len(obs.Flows) != len(obs.FlowIDs) {
		return &InvalidObservationError{Field: "flows",
			Problem: fmt.Sprintf("%d samples, want one per protected flow in flow_ids (%d)", len(obs.Flows), len(obs.FlowIDs))}
	}
	fabric := Observation{Time: obs.Time, Switches: obs.Switches, Leaves: obs.Leaves, Flow: obs.Flow}
	return fabric.Validate(s.topo)
}

// checkNotAhead refuses a sample dated more than MaxClockSkew after now: its
// time is wrong, and taking it as the latest sample would make every later,
// correctly dated one look as if it did not advance.
func (s *sampler) checkNotAhead(now, sampled time.Time) error {
	if ahead := sampled.Sub(now); ahead > s.maxSkew {
		return &InvalidObservationError{Field: "time", Problem: fmt.Sprintf(
			"%s is %v after the controller's clock (%s), want at most %v ahead (Config.MaxClockSkew)",
			sampled.Format(time.RFC3339Nano), ahead, now.Format(time.RFC3339Nano), s.maxSkew)}
	}
	return nil
}

// checkFresh refuses a sample older than MaxSampleAge or not newer than the
// previous one (counters that did not advance).
func (s *sampler) checkFresh(now, sampled time.Time) error {
	if s.maxAge > 0 {
		if age := now.Sub(sampled); age > s.maxAge {
			return fmt.Errorf("proflow: observation taken %v ago, want at most %v: %w", age, s.maxAge, ErrStale)
		}
	}
	if !s.lastObsTime.IsZero() && !sampled.After(s.lastObsTime) {
		return fmt.Errorf("proflow: observation time %v does not advance past %v: %w",
			sampled.Format(time.RFC3339Nano), s.lastObsTime.Format(time.RFC3339Nano), ErrStale)
	}
	return nil
}

// unknownSwitch returns the error for switch index i outside the topology,
// with its own copy of the switch names.
func unknownSwitch(topo Topology, i int) *UnknownSwitchError {
	return &UnknownSwitchError{Index: i, Known: slices.Clone(topo.Switches)}
}

// peek fills obs from p for a recheck, obs.FlowIDs set for a multi-flow
// controller, and returns the reason and error to hold with, or "" and
// nil: a failed peek, one with another number of switch samples than the
// topology's (or, with flows >= 0, of flow samples than flows), or one
// dated ahead of the controller's clock.
func (s *sampler) peek(ctx context.Context, p Peeker, obs *Observation, flows int) (Reason, error) {
	if err := call("Peeker", "Peek", p, func() error { return p.Peek(ctx, obs) }); err != nil {
		return ReasonTelemetry, fmt.Errorf("proflow: telemetry: peek: %w", err)
	}
	if n := s.topo.NumSwitches(); len(obs.Switches) != n {
		return ReasonInvalid, &InvalidObservationError{Field: "switches", Problem: fmt.Sprintf("the peek has %d switch samples, want %d", len(obs.Switches), n)}
	}
	if flows >= 0 && len(obs.Flows) != flows {
		return ReasonInvalid, &InvalidObservationError{Field: "flows", Problem: fmt.Sprintf("the peek has %d flow samples, want one per protected flow (%d)", len(obs.Flows), flows)}
	}
	if err := s.checkNotAhead(s.clock.Now(), obs.Time); err != nil {
		return ReasonInvalid, err
	}
	return "", nil
}

// peekedLoad returns switch current's load in a peek that passed
// sampler.peek: its transmit rate over the bucket rate, or an error for a
// rate that is not finite and >= 0.
func peekedLoad(topo Topology, obs *Observation, current int) (float64, error) {
	if tx := obs.Switches[current].TxRate; !(tx >= 0) || math.IsInf(tx, 0) {
		return 0, &InvalidObservationError{Field: fmt.Sprintf("switches[%s].tx_rate", topo.Switches[current]), Problem: fmt.Sprintf("peeked %v, want a finite rate >= 0", tx)}
	}
	return obs.Switches[current].TxRate / topo.BucketRate, nil
}

// sampler returns the sampler for c's settings.
func (c Config) sampler() sampler {
	return sampler{topo: c.Topology, clock: c.Clock, maxAge: c.MaxSampleAge, maxSkew: c.MaxClockSkew}
}
