package proflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Reason says why a Decision ended the way it did.
type Reason string

// Reasons a Decision can carry. Rerouted is the only one that moved the flow.
const (
	// ReasonRerouted: the gate admitted a candidate and the enforcer moved the flow.
	ReasonRerouted Reason = "rerouted"
	// ReasonStay: the current switch scores best (or ties the best).
	ReasonStay Reason = "stay"
	// ReasonMargin: a better switch exists but ΔQ ≤ δ.
	ReasonMargin Reason = "margin"
	// ReasonVotes: the candidate has not yet won W consecutive steps.
	ReasonVotes Reason = "votes"
	// ReasonCooldown: a reroute happened less than the cooldown ago.
	ReasonCooldown Reason = "cooldown"
	// ReasonReserve: the gate admits the candidate by its votes, but the
	// current switch's reserve lasts longer than the gate's drain horizon
	// (policy.GateConfig.Drain), so the move waits.
	ReasonReserve Reason = "reserve"
	// ReasonGap: the gate admits the move, but the flow is sending in a
	// burst no longer than its previous one, so the move waits for its
	// next idle gap, when it has nothing in flight to lose
	// (policy.GateConfig.Gap).
	ReasonGap Reason = "gap"
	// ReasonBaseline: the controller is still learning the episode baseline.
	ReasonBaseline Reason = "baseline"
	// ReasonTelemetry: telemetry failed; the placement is held.
	ReasonTelemetry Reason = "telemetry-error"
	// ReasonInvalid: the observation failed validation; the placement is held.
	ReasonInvalid Reason = "invalid-observation"
	// ReasonStale: the observation is older than allowed; the placement is held.
	ReasonStale Reason = "stale-observation"
	// ReasonEncoder: the state encoder failed; the placement is held.
	ReasonEncoder Reason = "encoder-error"
	// ReasonPolicy: the policy failed or returned unusable scores; the placement is held.
	ReasonPolicy Reason = "policy-error"
	// ReasonEnforcer: the enforcer failed to move the flow; the placement is held.
	ReasonEnforcer Reason = "enforcer-error"
	// ReasonJoint: the gate admitted a move, but the joint placement step of
	// a MultiController held the flow, so that protected flows do not herd
	// (no switch that beats the current one had budget left this step).
	// It is not an error: the gate admits the move again at a later step
	// while the flow still wants it.
	ReasonJoint Reason = "joint"
	// ReasonShadow: the gate admitted a move (Target) and the controller,
	// running in shadow mode (Config.Shadow, MultiConfig.Shadow), did not
	// carry it out: the flow stays where it is, the enforcer is not called.
	// The gate's cooldown runs from the move not made, so that each move
	// the gate wants is reported once, as it would have been carried out.
	ReasonShadow Reason = "shadow"
)

// Held reports whether the controller held the placement whatever the gate
// decided: for bad input or a failure (Failed), because the joint
// placement step of a MultiController held a move the gate admitted
// (ReasonJoint), or because it runs in shadow mode (ReasonShadow). The
// gate's own reasons to stay (ReasonStay, ReasonMargin, ReasonVotes,
// ReasonCooldown, ReasonReserve, ReasonGap) and ReasonBaseline are not
// holds.
func (r Reason) Held() bool {
	return r == ReasonJoint || r == ReasonShadow || r.Failed()
}

// Failed reports whether the reason is one of the error reasons, for which
// the controller held the placement because of bad input or a failure; the
// Decision's Err says which.
func (r Reason) Failed() bool {
	switch r {
	case ReasonTelemetry, ReasonInvalid, ReasonStale, ReasonEncoder, ReasonPolicy, ReasonEnforcer:
		return true
	}
	return false
}

// Decision records one step of the control loop and why it ended as it did,
// so operators can log and audit every reroute and every hold.
//
// A Decision handed to an observer shares Scores with the controller, which
// reuses it on the next step; call Clone to keep it.
//
// In JSON, Err is the string "err" (absent when nil); a Decision read back
// from JSON has an Err made from that string, which no longer matches the
// original error's sentinels with errors.Is.
type Decision struct {
	// Seq numbers the steps of a controller from 1.
	Seq uint64 `json:"seq"`
	// Time is when the step ran (the controller's clock).
	Time time.Time `json:"time"`
	// Flow is the protected flow.
	Flow FlowID `json:"flow"`
	// Current is the switch index k* carrying the flow when the step began.
	Current int `json:"current"`
	// Scores holds the policy's score (Q-value) per switch; empty when the
	// step ended before the policy ran.
	Scores []float64 `json:"scores,omitempty"`
	// Best is argmax of Scores (k_best), or -1 if the policy did not run.
	Best int `json:"best"`
	// Margin is ΔQ = Scores[Best] − Scores[Current].
	Margin float64 `json:"margin"`
	// Votes is how many consecutive steps Best has won with ΔQ > δ.
	Votes int `json:"votes"`
	// Cooldown is the time left before another reroute may happen.
	Cooldown time.Duration `json:"cooldown"`
	// Throughput is the protected flow's throughput in the step's sample
	// (Observation.Flow.Throughput), bytes per second, 0 before a sample
	// was read; a Gate may read it (policy.DistressConfig).
	Throughput float64 `json:"throughput,omitempty"`
	// AppLimited is the share of the sample's interval during which the
	// flow's sender was application-limited (Observation.Flow.AppLimited;
	// 0 when the source cannot tell); a Gate may read it.
	AppLimited float64 `json:"app_limited,omitempty"`
	// Load is the current switch's transmit rate in the step's sample
	// over the token-bucket rate C (SwitchSample.TxRate /
	// Topology.BucketRate): above 1 the switch's reserve drains, below it
	// refills. 0 before a sample was read; a Gate may read it
	// (policy.GateConfig.Reserve).
	Load float64 `json:"load,omitempty"`
	// Forecast is the policy's forecast of the flow's next sample if it
	// stays (Forecaster); Forecast.OK is false when the policy made none.
	// A Gate may read it (policy.DistressConfig's Forecast).
	Forecast FlowForecast `json:"forecast,omitzero"`
	// Dominated marks, per switch, a destination that another switch beats
	// on every congestion measure of the step's sample at once: some
	// switch j, neither it nor the current one, has TxRate, OverflowRate,
	// FlowCount, ElephantRate and QueueBytes each at most switch k's, and
	// one of them lower; a cordoned switch dominates none (see
	// DominatedSwitches). The current switch is never marked. Empty when the step ended before a sample was read; a
	// Gate may read it (policy.GateConfig.Pareto).
	Dominated []bool `json:"dominated,omitempty"`
	// Relieves marks, per switch, a destination that reads less loaded
	// than the current switch on the step's sample: TxRate, OverflowRate,
	// FlowCount, ElephantRate and QueueBytes each at most the current
	// switch's and one of them lower; a cordoned switch is never marked,
	// nor is the current one (see RelievingSwitches). Empty when the step
	// ended before a sample was read; a Gate may read it
	// (policy.GateConfig.Idle).
	Relieves []bool `json:"relieves,omitempty"`
	// LastReroute is when the flow was last moved, zero if never; in
	// shadow mode, when the gate last admitted a move (ReasonShadow).
	LastReroute time.Time `json:"last_reroute"`
	// Target is the switch the gate admitted, or -1 when holding (in shadow
	// mode, the switch the flow would have moved to: ReasonShadow). In a
	// MultiController it is the switch the joint placement step assigned,
	// which may be another than the gate's when the gate's had no budget.
	Target int `json:"target"`
	// Rerouted reports that the enforcer moved the flow to Target.
	Rerouted bool `json:"rerouted"`
	// Recheckable tells the gate, before Admit, that the controller can
	// take a reading between its steps and recheck a move the gate defers
	// (its Telemetry is a Peeker and its Gate a Rechecker).
	Recheckable bool `json:"recheckable,omitempty"`
	// Recheck, on a step, is how long after Time the gate asks to recheck
	// a move it deferred (Rechecker); 0 for none. A controller rechecks
	// only when that comes before its next step.
	Recheck time.Duration `json:"recheck,omitempty"`
	// Rechecking marks the decision of a recheck (Controller.Recheck), not
	// of a step: Seq is the step's whose deferred move it decides, Time
	// when the recheck ran, and Load the current switch's load over the
	// time since the step's sample.
	Rechecking bool `json:"rechecking,omitempty"`
	// Reason says why the step ended this way.
	Reason Reason `json:"reason"`
	// Err is the error behind a held placement, nil otherwise. It is
	// marshalled as its message (see MarshalJSON).
	Err error `json:"-"`
	// Latency is the wall time the step took, telemetry to enforcement.
	Latency time.Duration `json:"latency"`
}

// decisionFields is Decision without its methods, for its JSON methods.
type decisionFields Decision

// decisionJSON is Decision as JSON: Err as its message.
type decisionJSON struct {
	decisionFields
	Err string `json:"err,omitempty"`
}

// MarshalJSON encodes d with its fields' json tags and Err as the string
// "err", omitted when Err is nil.
func (d Decision) MarshalJSON() ([]byte, error) {
	j := decisionJSON{decisionFields: decisionFields(d)}
	if d.Err != nil {
		j.Err = d.Err.Error()
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON encodes; a non-empty "err"
// becomes an Err with that message.
func (d *Decision) UnmarshalJSON(data []byte) error {
	var j decisionJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("proflow: decision: %w", err)
	}
	*d = Decision(j.decisionFields)
	if j.Err != "" {
		d.Err = errors.New(j.Err)
	}
	return nil
}

// Clone returns a copy of d that does not share Scores, Dominated or
// Relieves.
func (d Decision) Clone() Decision {
	d.Scores = append([]float64(nil), d.Scores...)
	if d.Dominated != nil {
		d.Dominated = append([]bool(nil), d.Dominated...)
	}
	if d.Relieves != nil {
		d.Relieves = append([]bool(nil), d.Relieves...)
	}
	return d
}

// reset prepares d for a new step, keeping the Scores storage.
func (d *Decision) reset() {
	scores, dominated, relieves := d.Scores[:0], d.Dominated[:0], d.Relieves[:0]
	*d = Decision{Scores: scores, Dominated: dominated, Relieves: relieves, Best: -1, Target: -1}
}

// DominatedSwitches writes into dst[k], for every switch k of sw, whether
// destination k is dominated: some switch j other than k and current, and
// not marked in exclude, has each of TxRate, OverflowRate, FlowCount,
// ElephantRate and QueueBytes at most k's and at least one of them lower.
// exclude (nil: none) marks the switches no flow may be moved to, such as
// cordoned ones, which therefore dominate no other. dst[current] is false.
// It returns dst resized to len(sw) (grown when its capacity is short) and
// does not allocate otherwise; a current outside sw only exempts no switch.
func DominatedSwitches(dst []bool, sw []SwitchSample, current int, exclude []bool) []bool {
	if cap(dst) < len(sw) {
		dst = make([]bool, len(sw))
	}
	dst = dst[:len(sw)]
	for k := range sw {
		dst[k] = false
		if k == current {
			continue
		}
		for j := range sw {
			if j != k && j != current && !(j < len(exclude) && exclude[j]) && dominates(&sw[j], &sw[k]) {
				dst[k] = true
				break
			}
		}
	}
	return dst
}

// RelievingSwitches writes into dst[k], for every switch k of sw, whether
// destination k relieves the current switch: it has each of TxRate,
// OverflowRate, FlowCount, ElephantRate and QueueBytes at most the current
// switch's and at least one of them lower. exclude (nil: none) marks the
// switches no flow may be moved to, such as cordoned ones, which are never
// marked; nor is dst[current]. It returns dst resized to len(sw) (grown
// when its capacity is short) and does not allocate otherwise; a current
// outside sw marks no switch.
func RelievingSwitches(dst []bool, sw []SwitchSample, current int, exclude []bool) []bool {
	if cap(dst) < len(sw) {
		dst = make([]bool, len(sw))
	}
	dst = dst[:len(sw)]
	for k := range sw {
		dst[k] = current >= 0 && current < len(sw) && k != current &&
			!(k < len(exclude) && exclude[k]) && dominates(&sw[k], &sw[current])
	}
	return dst
}

// dominates reports whether a is at most b on every congestion measure and
// lower on one.
func dominates(a, b *SwitchSample) bool {
	pa := [...]float64{a.TxRate, a.OverflowRate, a.FlowCount, a.ElephantRate, a.QueueBytes}
	pb := [...]float64{b.TxRate, b.OverflowRate, b.FlowCount, b.ElephantRate, b.QueueBytes}
	lower := false
	for i := range pa {
		if pa[i] > pb[i] {
			return false
		}
		if pa[i] < pb[i] {
			lower = true
		}
	}
	return lower
}
