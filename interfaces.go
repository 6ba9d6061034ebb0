package proflow

import (
	"context"
	"time"
)

// Telemetry reads the fabric. Collect fills obs, which the controller owns
// and reuses between calls, with one sample of every signal; it should write
// into the existing slices (Observation.Resize) rather than allocate.
//
// Collect returns an error when it cannot produce a complete, current sample;
// wrap ErrStale for counters that did not advance. The controller then holds
// the placement and reports the error in the Decision.
type Telemetry interface {
	Collect(ctx context.Context, obs *Observation) error
}

// TelemetryFunc adapts a function to Telemetry.
type TelemetryFunc func(ctx context.Context, obs *Observation) error

// Collect calls f(ctx, obs).
func (f TelemetryFunc) Collect(ctx context.Context, obs *Observation) error { return f(ctx, obs) }

// StateEncoder turns observations into state vectors. It is stateful: it
// remembers the previous observation (for rates of change) and a short
// history (for the rolling throughput maximum), so Encode must be called once
// per observation, in time order. Encoders that use per-episode baselines
// implement Baseliner; encoders with history implement Resetter.
type StateEncoder interface {
	// Dim returns the length of the state vectors Encode writes.
	Dim() int
	// Encode writes the state for obs, with the protected flow on switch
	// current, into dst (len(dst) == Dim()).
	Encode(dst State, obs *Observation, current int) error
}

// Input is what a Policy sees at one step.
type Input struct {
	// Time is the time of the step.
	Time time.Time
	// Obs is the raw observation (reference policies read thresholds on it).
	Obs *Observation
	// State is the encoded state (learned policies read only this).
	State State
	// Current is the switch index k* carrying the protected flow.
	Current int
	// Cordoned marks, by switch index, the switches no flow may be moved
	// to (Config.Cordoned); nil when none is. The controller lowers their
	// scores below the rest after Score in any case; a policy that picks
	// one destination by a rule of its own (the reference policies) skips
	// them, so that it picks the best one that is allowed. Read only.
	Cordoned []bool
}

// Policy scores every aggregation switch as a destination for the protected
// flow: a higher score is a better placement (for the learned agent, the
// Q-value). Score writes one score per switch into scores. Policies may keep
// state between steps (a reactive policy counts consecutive samples) and then
// implement Resetter.
type Policy interface {
	Score(scores []float64, in *Input) error
}

// Forecaster is implemented by a policy that can also forecast the
// protected flow's next sample (a learned policy with a dynamics model:
// policy.Agent with policy.Forecast). After a successful Score that puts
// some switch strictly above the current one (only then can the gate move
// the flow) the controller calls Forecast with the same input and puts
// what it wrote in Decision.Forecast, where a Gate may read it
// (policy.DistressConfig's Forecast); on other steps Decision.Forecast
// stays empty, which spares a quiet step the dynamics model's cost. An
// error holds the placement like a failed Score.
type Forecaster interface {
	// Forecast writes into f the flow's sample expected at the next step
	// if it stays on in.Current, and sets f.OK; it leaves f.OK false when
	// it has no forecast for this input.
	Forecast(f *FlowForecast, in *Input) error
}

// FlowForecast is a policy's forecast of the protected flow's next sample
// if the flow stays where it is (Forecaster).
type FlowForecast struct {
	// OK reports that the other fields hold a forecast.
	OK bool `json:"ok"`
	// Throughput is the forecast throughput, bytes per second.
	Throughput float64 `json:"throughput"`
	// AppLimited is the forecast share of the interval during which the
	// sender will be application-limited (FlowSample.AppLimited).
	AppLimited float64 `json:"app_limited"`
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc func(scores []float64, in *Input) error

// Score calls f(scores, in).
func (f PolicyFunc) Score(scores []float64, in *Input) error { return f(scores, in) }

// Gate is the stability mechanism between the policy and the enforcer (paper
// §IV-D). Admit reads d.Time, d.Current, d.Scores, d.Throughput,
// d.AppLimited and d.LastReroute and fills d.Best, d.Margin, d.Votes,
// d.Cooldown, d.Target (-1 to hold) and d.Reason.
// Gates keep vote streaks and so implement Resetter.
type Gate interface {
	Admit(d *Decision)
}

// Rechecker is an optional Gate capability: a gate that may defer a move
// it would admit at a step to one recheck a little later (it sets
// Decision.Recheck), when a reading taken since the step may show the move
// is not needed. The controller offers rechecks (Decision.Recheckable)
// only when its Telemetry is a Peeker. Recheck reads d.Time, d.Current
// and d.Load (the current switch's load over the time since the step's
// sample) and fills d.Best, d.Votes, d.Target (-1 to hold) and d.Reason
// as Admit does; it must not count a vote.
type Rechecker interface {
	Recheck(d *Decision)
}

// Peeker is an optional Telemetry capability: Peek fills obs with the
// fabric's rates over the time since the last Collect, dated now, without
// ending that sample: the next Collect still covers the whole time since
// the last one. The controller peeks to recheck a move its gate deferred
// (Rechecker). obs carries every switch's sample; flow samples may be the
// last Collect's.
type Peeker interface {
	Peek(ctx context.Context, obs *Observation) error
}

// GateFunc adapts a function to Gate.
type GateFunc func(d *Decision)

// Admit calls f(d).
func (f GateFunc) Admit(d *Decision) { f(d) }

// Enforcer moves the protected flow. Place puts flow on the aggregation
// switch with index sw, for both directions, and returns once the new path is
// in force. It must be idempotent: placing a flow where it already is succeeds
// without disturbing it. On error the old placement must still carry the flow.
type Enforcer interface {
	Place(ctx context.Context, flow FlowID, sw int) error
}

// EnforcerFunc adapts a function to Enforcer.
type EnforcerFunc func(ctx context.Context, flow FlowID, sw int) error

// Place calls f(ctx, flow, sw).
func (f EnforcerFunc) Place(ctx context.Context, flow FlowID, sw int) error { return f(ctx, flow, sw) }

// Locator is an optional Enforcer capability: it reads back where the
// protected flow is placed now (for example from the rules a southbound owns),
// so a restarted controller resumes from the fabric's real state. It returns
// ErrNotPlaced when no override is installed.
type Locator interface {
	Locate(ctx context.Context, flow FlowID) (int, error)
}

// FlowValidator is an optional Enforcer capability: ValidateFlow reports,
// without any I/O, whether the enforcer could ever place flow, so that a
// wrong flow fails when the controller is built instead of at the first
// reroute. It returns an error wrapping ErrNotInFabric when one of the
// flow's hosts is not in the fabric or both hang off the same leaf, and
// other errors for flows the southbound cannot match (an IPv6 flow on an
// IPv4-only pipeline, say). NewController calls it when its Enforcer has it.
type FlowValidator interface {
	ValidateFlow(flow FlowID) error
}

// Baseliner is an optional StateEncoder capability: it receives the
// per-episode baseline once the controller has learned or been given it.
type Baseliner interface {
	SetBaseline(b Baseline) error
}

// Resetter is implemented by stateful encoders, policies and gates. The
// controller calls Reset when it starts and when a new episode begins.
type Resetter interface {
	Reset()
}

// Clock is the controller's source of time, injectable so that simulations
// and tests run on virtual time.
type Clock interface {
	Now() time.Time
	// NewTicker returns a ticker firing every d.
	NewTicker(d time.Duration) Ticker
}

// Ticker delivers ticks on C until Stop.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// NewTicker wraps time.NewTicker.
func (SystemClock) NewTicker(d time.Duration) Ticker { return systemTicker{time.NewTicker(d)} }

type systemTicker struct{ t *time.Ticker }

func (t systemTicker) C() <-chan time.Time { return t.t.C }
func (t systemTicker) Stop()               { t.t.Stop() }
