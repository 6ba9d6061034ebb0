package policy

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/proflow-sdn/proflow"
)

// GateConfig holds the three conditions of the stability gate (paper §IV-D).
// Start from DefaultGateConfig.
type GateConfig struct {
	// Margin is δ: a candidate must beat the current switch by strictly
	// more than Margin (ΔQ > δ). In the units of the policy's scores.
	Margin float64 `json:"margin"`
	// Votes is W: the same candidate must win W consecutive steps.
	Votes int `json:"votes"`
	// Cooldown is the time after a reroute during which no other reroute
	// is admitted.
	Cooldown time.Duration `json:"cooldown"`
	// Tolerance makes the vote streak robust to near-ties between
	// destinations: while the previous step's candidate scores within
	// Tolerance of the best switch (and still beats the current one by more
	// than Margin), it keeps winning, so two equally clean destinations
	// swapping places by a hair do not restart the count. 0 counts only the
	// exact k_best.
	Tolerance float64 `json:"tolerance"`
	// Distress, when set (not the zero value), lets a candidate through
	// without its Votes once the flow's own throughput
	// (Decision.Throughput) has been low for Distress.Consecutive samples in a row: the vote count
	// filters noise while the flow is fine, and costs seconds of a
	// collapsed flow once it is not (see DistressConfig). The zero value
	// is the paper's gate.
	Distress DistressConfig `json:"distress,omitzero"`
	// Pareto, when set, lets only destinations on the Pareto front of
	// the fabric's congestion be candidates: a switch the step's
	// Decision.Dominated marks (another switch, not the current one, is
	// at most as loaded on every congestion measure and less on one) is
	// passed over for k_best, so it never starts a vote streak; a
	// candidate already counted stays one through a near-tie (Tolerance)
	// as without Pareto, since two switches that read alike are each
	// dominated in turn by noise. It compares switches with each other and
	// holds no threshold. A decision without Dominated (none read) passes
	// every switch. Off is the paper's gate.
	Pareto bool `json:"pareto,omitempty"`
	// Window, when positive, counts a candidate's votes over the last
	// Window of decision time instead of in a row: the move is admitted
	// once the same candidate has won Votes steps within Window, this
	// step among them. A step without a candidate (the current switch
	// best, or ΔQ ≤ Margin) then forgets nothing, and a different
	// candidate does not erase the previous one's votes; a change of the
	// current switch still forgets them all. So a neighbour that returns
	// in bursts shorter than Votes intervals adds up, as it adds up in
	// the switch's reserve, but so do the votes an on/off flow's own idle
	// gaps or a brief neighbour cast (measured in training/doc.go, "Votes
	// remembered across a quiet gap"; off in the committed gates). 0 is
	// the paper's gate (consecutive votes).
	Window time.Duration `json:"window,omitempty"`
	// Reserve, when set, also keeps a candidate's votes across steps
	// without a candidate, but only while the current switch's reserve,
	// drained since the first vote the gate remembers, has not refilled:
	// the gate integrates Decision.Load − 1 over decision time from that
	// vote on (a token bucket of the rate C with no depth, drained while
	// the switch sends above C, refilled below it), and a step without a
	// candidate forgets every vote once the integral is back to zero. So
	// bursts that come back before the switch has earned back what the
	// last one took add up, as they add up in a real bucket, while a flow
	// whose own idle gaps or a neighbour that left let the switch refill
	// counts in a row as without it. As with Window, the count is the
	// candidate's remembered votes, a different candidate does not erase
	// another's, and a change of the current switch forgets them all. It
	// reads only Decision.Load and holds no threshold of its own. But a
	// capped crowd that keeps the switch just above C never lets it
	// refill, and the votes of scattered near-ties then add up too
	// (measured in training/doc.go, "Votes held while the reserve is
	// drained"); behind Drain such a move also waits for the bucket's end,
	// and the two are on together in the testbed gate since session 33
	// ("Remembered votes and the reserve's hold beside the idle waiver").
	// Off is the paper's gate; not together with Window.
	Reserve bool `json:"reserve,omitempty"`
	// Drain, when set (not the zero value), holds a move the votes admit
	// while the current switch's token bucket, by the gate's estimate, lasts longer
	// than Drain.Horizon (see DrainConfig): a crowd the reserve can carry
	// for longer than the horizon may still leave before it hurts the
	// flow, and a move made then costs its reroute for nothing. A move
	// that distress admits is never held, nor one the Idle waiver admits
	// (with nothing in flight it costs the flow nothing). Off is the
	// paper's gate.
	Drain DrainConfig `json:"drain,omitzero"`
	// Gap, when set, times a move the gate admits (by its votes or by
	// distress) to the flow's own idle gaps: while the flow is sending in
	// a burst no longer than its previous one, the move waits, and the
	// first idle sample lets it through, when the connection has nothing
	// in flight and a move costs it nothing: the move held is made there,
	// to the destination held, if that still scores at least the current
	// switch and no cooldown runs, whatever the votes of the idle sample
	// (a flow that sends nothing reads a destination as barely better),
	// and is dropped otherwise (a move made in a burst costs
	// that burst its window; under the testbed profile's H-move a
	// retransmission timeout). A sample is idle when the flow delivered
	// nothing (Decision.Throughput 0) while application-limited
	// (Decision.AppLimited at least half the interval); a burst is a run
	// of samples that are not idle, and the previous one counts only if
	// idle samples bound it on both sides. A flow never idle (bulk, a
	// constant-bitrate stream, busy request/response) is never held, and
	// a burst longer than the previous one no longer holds the move. It
	// reads only the flow's own samples and holds no threshold of its
	// own. Off is the paper's gate.
	Gap bool `json:"gap,omitempty"`
	// Idle, when set, waives the Votes at an idle sample of the flow (it
	// delivered nothing, Decision.Throughput 0, while application-limited
	// for at least half the interval, Decision.AppLimited, as Gap reads
	// it) for a candidate that reads less loaded than the current switch
	// (Decision.Relieves): the connection has nothing in flight, so a
	// move made then costs it nothing, and the vote count, which keeps
	// noise from costing a move, would only delay it; and with the flow
	// idle, what its switch reads is its neighbours' load, so a
	// destination that reads less of it on every measure is a reason to
	// move that noise in the scores is not (on an empty fabric no switch
	// relieves another, and a candidate there still needs its votes). The
	// margin and the cooldown still hold. A flow that is never idle (bulk,
	// a constant-bitrate stream, busy request/response) decides as without
	// it. It compares the flow's own sample and the switches' and holds no
	// threshold of its own (measured in training/doc.go, "The idle waiver
	// only towards a switch that reads less loaded"). Off is the paper's
	// gate.
	Idle bool `json:"idle,omitempty"`
	// Hold, when set, keeps the vote streak through a step at which the
	// candidate counted still scores above the current switch, but by no
	// more than Margin: such a step is within the jitter Margin filters
	// and neither confirms the move nor contradicts it, so it adds no
	// vote and takes none away. A step at which the current switch scores
	// at least as high as the candidate still resets the streak, as
	// without it. It holds no threshold of its own (measured in
	// training/doc.go, "A step within the margin holds the streak"). Off
	// is the paper's gate: every step without a candidate resets it.
	Hold bool `json:"hold,omitempty"`
}

// DrainConfig says how long the current switch's reserve lasts. The gate
// keeps the deficit D of the switch's reserve in seconds of the bucket
// rate C: the integral of Decision.Load − r over decision time since the
// flow came to the switch (a change of the current switch starts it at 0,
// as a full reserve), clipped at 0, where r is Rate (1 when unset: the
// bucket's own rate). While the switch sends above r C (Load > r) the
// reserve empties in (Depth − D)/(Load − r) seconds at the present load;
// at or below r C it never does, unless D has reached Depth: the reserve
// is then empty by the estimate whatever the load (a dry bucket sends at
// its rate). A move the votes admit waits while that time is longer than
// Horizon. It reads only Decision.Load and the deployment's reserve (its
// depth and rate): no learned value. With Waive, a reserve within Horizon
// of empty also waives the Votes, as distress does.
type DrainConfig struct {
	// Depth is the bucket's depth in seconds of C (its burst in bytes
	// over its rate in bytes a second: the testbed profile's 1,332,500,000
	// B at 25 MB/s is 53.3 s), or less where a limit the bucket does not
	// show runs out first (the testbed gate's 49.5 s at Rate 1.04, the
	// least deficit at which flows collapsed on that profile's development
	// families; proflow reserve measures both from traces), > 0.
	// Drain is off when every field is
	// zero (the zero DrainConfig); a Depth of 0 beside another field set
	// is refused, not read as off.
	Depth float64 `json:"depth"`
	// Rate is the rate, as a multiple of the bucket rate C, at which the
	// reserve that runs out is served: the switch sends up to it without
	// drawing on the reserve and refills the reserve below it. 0 reads as
	// 1, the bucket's own rate; where a limit the bucket does not show
	// runs out first, that limit's rate (the testbed gate's 1.04, fitted
	// with Depth to that profile's development collapses). Never negative.
	Rate float64 `json:"rate,omitempty"`
	// Horizon is how long before the bucket empties a held move goes
	// ahead, > 0: the lead a move needs to land before the flow suffers.
	Horizon time.Duration `json:"horizon"`
	// Waive, when set, also counts a bucket within Horizon of empty as
	// distress: a candidate that beats the current switch by more than
	// Margin is then admitted without its Votes (the cooldown still
	// holds), as DistressConfig.Forecast admits it when the dynamics
	// model sees the flow collapsing. Without it the estimate only holds.
	Waive bool `json:"waive,omitempty"`
	// Recheck, when set (> 0, less than Horizon), defers a move the
	// estimate would let go ahead now, while it still gives the reserve
	// more than Recheck, to one recheck Recheck before the estimate's end
	// (Decision.Recheck): a controller that can take a reading between
	// its steps (Decision.Recheckable) calls Recheck then, and the move
	// goes ahead only if the reserve, advanced over the reading since the
	// step, still runs out within Horizon. A crowd that leaves between two
	// steps is then seen gone before the move instead of one step after
	// it. Without a controller that can recheck, nothing is deferred. A
	// flow in distress, a move the idle waiver admits and a move held for
	// the flow's idle gap are never deferred.
	Recheck time.Duration `json:"recheck,omitempty"`
}

// enabled reports whether Drain is on.
func (c DrainConfig) enabled() bool { return c != DrainConfig{} }

// validate lists the problems of an enabled configuration.
func (c DrainConfig) validate() []error {
	if !c.enabled() {
		return nil
	}
	var errs []error
	if !(c.Depth > 0) || math.IsInf(c.Depth, 0) {
		errs = append(errs, fmt.Errorf("drain depth %v, want a finite number of seconds of the bucket rate > 0", c.Depth))
	}
	if c.Horizon <= 0 {
		errs = append(errs, fmt.Errorf("drain horizon %v, want > 0", c.Horizon))
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		errs = append(errs, fmt.Errorf("drain rate %v, want a finite multiple of the bucket rate > 0 (0 reads as 1)", c.Rate))
	}
	if c.Recheck < 0 || (c.Recheck > 0 && c.Recheck >= c.Horizon) {
		errs = append(errs, fmt.Errorf("drain recheck %v, want 0 (none) or a lead > 0 shorter than the horizon %v", c.Recheck, c.Horizon))
	}
	return errs
}

// rate returns the multiple of the bucket rate the reserve is served at
// (Rate, 1 when unset).
func (c DrainConfig) rate() float64 {
	if c.Rate == 0 {
		return 1
	}
	return c.Rate
}

// DistressConfig says when the protected flow is in distress: its
// throughput φ strictly below Fraction × h for Consecutive samples in a
// row, where h is its healthy level, a moving average h ← h + α(φ − h) of
// the samples that are not low, with α = Smoothing, set by the first
// sample the gate sees. A sample taken during a cooldown (the flow ramps
// up on its new path) or one whose sender was application-limited for
// half the interval or more (Decision.AppLimited: its demand, not the
// network, set its rate, as for an idle request/response flow or a
// stream below its path's capacity) is neither low nor learnt from and
// ends a run of low samples. These are the settings of the throughput-drop
// rule and come from the same calibration on congestion-free traffic
// (DistressFrom, proflow calibrate): the most sensitive setting that never
// fires on the flow alone. The gate still requires a candidate that beats
// the current switch by more than Margin, and the cooldown: distress only
// shortens the wait for a move the policy already prefers, so a flow
// whose own demand falls, with nothing better elsewhere, stays.
type DistressConfig struct {
	// Fraction is f, in (0, 1). Distress is off when every field is zero
	// (the zero DistressConfig); a Fraction of 0 beside another field set
	// is refused, not read as off.
	Fraction float64 `json:"fraction"`
	// Consecutive is how many low samples in a row make distress, >= 1.
	Consecutive int `json:"consecutive"`
	// Smoothing is α of the healthy level's moving average, in (0, 1].
	Smoothing float64 `json:"smoothing"`
	// Forecast, when set, also counts the policy's forecasts
	// (Decision.Forecast, proflow.Forecaster): Consecutive forecasts in a
	// row below Fraction × h make distress too, so a flow a learned
	// dynamics model sees collapsing at the next sample need not wait for
	// two low samples of its own. A forecast counts only outside a
	// cooldown, while neither the step's sample nor the forecast is
	// application-limited for half the interval or more; a step without a
	// forecast ends a run of low ones. It learns nothing: the healthy
	// level comes from the measured samples alone.
	Forecast bool `json:"forecast,omitempty"`
}

// appLimitedShare is the share of an interval, Decision.AppLimited, from
// which the flow's own application set its rate: such a sample is neither
// low nor healthy for the distress rule.
const appLimitedShare = 0.5

// DistressFrom returns the distress settings of a throughput-drop
// calibration: its fraction, debounce and smoothing.
func DistressFrom(c ThroughputDropConfig) DistressConfig {
	return DistressConfig{Fraction: c.Fraction, Consecutive: c.Consecutive, Smoothing: c.Smoothing}
}

// enabled reports whether the distress rule is on.
func (c DistressConfig) enabled() bool { return c != DistressConfig{} }

// validate lists the problems of an enabled configuration.
func (c DistressConfig) validate() []error {
	if !c.enabled() {
		return nil
	}
	errs := dropErrors(c.Fraction, c.Consecutive, c.Smoothing)
	for i, err := range errs {
		errs[i] = fmt.Errorf("distress %w", err)
	}
	return errs
}

// DefaultGateConfig returns the gate settings for a learned agent whose
// Q-values are of order 10–25 (rewards clipped to [−1, 2], discounted with
// γ = 0.95):
//
//   - Margin δ = 0.2: under 1% of a typical Q-value, enough to filter the
//     jitter of the learned margins between switches in quiet states (up to
//     ±0.15 measured on the default model: the probe's quiet offsets, and
//     a pointless second move at ΔQ 0.11–0.13 that δ = 0.1 let through), far
//     below the gap the crowd signal opens (0.5–1.5 for a full crowd).
//   - Votes W = 3: 1.5 s at the 500 ms interval, the same debounce the
//     paper's reactive baseline uses, small next to the 9–18 s at which the
//     agent reroutes.
//   - Cooldown 15 s: a rerouted TCP flow needs 10–15 s to ramp up on its
//     new path (paper, S8), so the next decision waits for the transport
//     to settle; shorter than the reactive baseline's 30 s so a wrong
//     destination (S7) can be corrected within the episode.
//   - Tolerance 0.2, the resolution δ sets: Q differences below it are
//     noise between two destinations as between a destination and the
//     current switch. Without it, a trained agent facing several clean
//     destinations (S4, S8 on the simulated fabric) saw k_best alternate
//     between them by 0.01–0.05 while every one beat the current switch
//     by 0.3–1.5, and the streak restarted for up to 10 s — 6 s of them
//     with the flow collapsed.
//
// The paper gives no values; these are the project's and are configurable.
func DefaultGateConfig() GateConfig {
	return GateConfig{Margin: 0.2, Votes: 3, Cooldown: 15 * time.Second, Tolerance: 0.2}
}

// Validate reports every problem of the configuration at once.
func (c GateConfig) Validate() error {
	var errs []error
	if !(c.Margin >= 0) || math.IsInf(c.Margin, 0) {
		errs = append(errs, fmt.Errorf("margin %v, want a finite number >= 0", c.Margin))
	}
	if c.Votes < 1 {
		errs = append(errs, fmt.Errorf("votes %d, want >= 1", c.Votes))
	}
	if c.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("cooldown %v, want >= 0", c.Cooldown))
	}
	if !(c.Tolerance >= 0) || math.IsInf(c.Tolerance, 0) {
		errs = append(errs, fmt.Errorf("tolerance %v, want a finite number >= 0", c.Tolerance))
	}
	if c.Window < 0 {
		errs = append(errs, fmt.Errorf("window %v, want >= 0 (0 counts consecutive votes)", c.Window))
	}
	if c.Reserve && c.Window > 0 {
		errs = append(errs, fmt.Errorf("reserve with window %v, want one way of remembering votes: window 0 with reserve, or reserve off", c.Window))
	}
	errs = append(errs, c.Distress.validate()...)
	errs = append(errs, c.Drain.validate()...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("policy: invalid gate config: %w", err)
	}
	return nil
}

// Gate is the stability gate of ProFlow (paper §IV-D; docs/method.md). It
// implements proflow.Gate and proflow.Resetter.
//
// # Rule
//
// At every step, k_best = argmax_k Scores[k]; when several switches share the
// maximum, the current switch wins if it is among them, otherwise the lowest
// index. With Pareto set, the argmax runs over the current switch and the
// destinations Decision.Dominated does not mark (a near-tie may still keep
// the previous candidate, below). ΔQ = Scores[k_best] − Scores[k*]. A
// reroute to k_best is admitted only when all three hold:
//
//  1. ΔQ > Margin (strictly; a step where the current switch is best, or
//     ΔQ ≤ Margin, has no candidate);
//  2. the same k_best has been the candidate for Votes consecutive steps:
//     a different candidate restarts the count at 1, a step without a
//     candidate resets it to 0, and so does a change of the current switch
//     (votes are cast against a placement). With Tolerance > 0 the previous
//     candidate stays k_best while it scores within Tolerance of the
//     maximum (a near-tie) and still beats the current switch by more than
//     Margin, so near-equal destinations do not restart the count by
//     swapping places; a kept candidate that no longer clears the margin
//     gives way to the maximum. With Window > 0 the count is instead
//     the candidate's votes over the last Window (Decision.Time), and
//     only a change of the current switch forgets them; with Reserve it
//     is the candidate's votes since the current switch's reserve last
//     refilled (GateConfig.Reserve);
//  3. Decision.Time − Decision.LastReroute ≥ Cooldown, when LastReroute is
//     set. Votes keep counting during the cooldown, so a candidate that kept
//     winning is admitted as soon as the cooldown expires.
//
// With Distress set, condition 2 is waived while the flow is in distress
// (DistressConfig): its throughput, Decision.Throughput, low for
// Distress.Consecutive samples in a row. Conditions 1 and 3 still hold.
// With Drain set, a move conditions 1–3 admit without distress also waits
// while the current switch's reserve lasts longer than Drain.Horizon
// (DrainConfig); the candidate's votes keep counting meanwhile. With
// Drain.Waive, a reserve within Drain.Horizon of empty waives condition 2
// as distress does. With Gap, an admitted move also waits while the flow
// sends in a burst no longer than its previous one (GateConfig.Gap). With
// Idle, condition 2 is waived at an idle sample of the flow for a
// candidate that reads less loaded than the current switch
// (GateConfig.Idle).
// The gate learns the flow's healthy level from the decisions it sees
// and forgets it on Reset; a decision whose Throughput is negative or not
// finite holds the placement with ReasonPolicy and Err set and restarts
// the streaks, keeping the healthy level.
//
// A reroute to the current switch is never admitted.
//
// # Decision fields
//
// Admit fills Best, Margin (ΔQ), Votes (the candidate's streak), Cooldown
// (time left, 0 when none), Target (k_best when admitted, −1 otherwise) and
// Reason: ReasonStay, ReasonMargin, ReasonVotes, ReasonCooldown or
// ReasonReserve or ReasonGap when it holds, and ReasonRerouted when it admits (the
// controller then moves the flow and keeps that reason, or replaces it
// with ReasonEnforcer). A Current that does not index Scores, or a NaN or
// infinite score, holds the placement with ReasonPolicy and Err set, and
// resets the streak (the Drain estimate of the switch's bucket stays).
//
// # Parameters
//
//	Margin     δ, strict lower bound on ΔQ        default 0.2
//	Votes      W, consecutive winning steps       default 3 (1.5 s at 500 ms)
//	Cooldown   quiet time after a reroute         default 15 s
//	Tolerance  near-tie keeping the candidate     default 0.2
//	Distress   waive Votes for a flow in distress default off
//	Pareto     only undominated destinations      default off
//	Window     count votes over a time window     default off (in a row)
//	Reserve    count votes while the reserve is drained  default off (in a row)
//	Drain      hold moves while the reserve lasts  default off
//	Gap        time moves to the flow's idle gaps  default off
//	Idle       waive Votes at an idle sample       default off
//	Hold       keep the streak through a step within the margin  default off
//
// A Gate is not safe for concurrent use.
type Gate struct {
	cfg       GateConfig
	candidate int // the candidate whose streak is counted, -1 for none
	streak    int
	current   int     // Decision.Current at the previous step, -1 before the first
	healthy   float64 // the flow's healthy throughput, 0 before the first sample (Distress)
	low       int     // low samples in a row (Distress)
	lowAhead  int     // low forecasts in a row (Distress.Forecast)
	votes     []vote  // the votes of the last Window, oldest first (Window > 0)
	held      []int   // per switch, the votes remembered (Reserve)
	drain     float64 // seconds of the rate C the current switch sent above it since the first held vote (Reserve)
	last      time.Time
	deficit   float64   // D of the reserve of switch deficitOf, seconds of C (Drain)
	deficitOf int       // the switch deficit is kept for, -1 before the first (Drain)
	deficitAt time.Time // the decision time deficit was last advanced to (Drain)
	burst     int       // samples in the flow's current burst, 0 after an idle sample (Gap)
	bounded   bool      // the current burst began after an idle sample (Gap)
	lastBurst int       // samples in the last burst idle samples bounded, 0 for none (Gap)
	pending   int       // the destination of a move held in a burst, made at the next idle sample; -1 for none (Gap)
	recheck   int       // the destination of a move deferred to a recheck; -1 for none (Drain.Recheck)
}

// vote is one step's candidate and its decision time (GateConfig.Window).
type vote struct {
	at time.Time
	k  int
}

var (
	_ proflow.Gate      = (*Gate)(nil)
	_ proflow.Resetter  = (*Gate)(nil)
	_ proflow.Rechecker = (*Gate)(nil)
)

// NewGate returns a gate with the given settings, or their validation error.
func NewGate(cfg GateConfig) (*Gate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Gate{cfg: cfg, candidate: -1, current: -1, deficitOf: -1, pending: -1, recheck: -1}, nil
}

// Immediate returns a gate that admits every strictly better switch at once:
// δ = 0, W = 1, no cooldown. Use it with the reference policies (Static,
// Reactive, Crowd), which debounce and cool down by themselves.
func Immediate() *Gate {
	return &Gate{cfg: GateConfig{Margin: 0, Votes: 1}, candidate: -1, current: -1, deficitOf: -1, pending: -1, recheck: -1}
}

// Config returns the gate's settings.
func (g *Gate) Config() GateConfig { return g.cfg }

// Reset forgets the vote streak, the flow's healthy level and the
// bucket deficit (a new episode).
func (g *Gate) Reset() {
	g.resetStreak()
	g.healthy = 0
	g.deficit, g.deficitOf, g.deficitAt = 0, -1, time.Time{}
	g.burst, g.bounded, g.lastBurst = 0, false, 0
}

// resetStreak forgets the vote streak and the run of low samples, as a
// step that holds on bad input does; the healthy level stays.
func (g *Gate) resetStreak() {
	g.candidate, g.streak, g.current, g.low, g.lowAhead = -1, 0, -1, 0, 0
	g.pending, g.recheck = -1, -1
	g.votes = g.votes[:0]
	g.forgetHeld()
	g.last = time.Time{}
}

// forgetHeld forgets the votes Reserve remembers and the drain since the
// first of them.
func (g *Gate) forgetHeld() {
	clear(g.held)
	g.drain = 0
}

// holding reports whether Reserve remembers any vote.
func (g *Gate) holding() bool {
	for _, n := range g.held {
		if n > 0 {
			return true
		}
	}
	return false
}

// reserve advances the drain of the current switch's reserve to d.Time
// while votes are held (GateConfig.Reserve); checkInputs has accepted
// d.Load.
func (g *Gate) reserve(d *proflow.Decision, n int) {
	if !g.cfg.Reserve {
		return
	}
	if len(g.held) != n {
		g.held = append(g.held[:0], make([]int, n)...)
		g.drain = 0
	}
	if g.holding() && !g.last.IsZero() {
		g.drain = drained(g.drain, d.Load, 1, d.Time.Sub(g.last).Seconds())
	}
	g.last = d.Time
}

// windowVotes records a vote for k at t, forgets the votes older than
// the window and returns k's votes within it (GateConfig.Window).
func (g *Gate) windowVotes(t time.Time, k int) int {
	g.votes = append(g.votes, vote{at: t, k: k})
	from := t.Add(-g.cfg.Window)
	kept, n := g.votes[:0], 0
	for _, v := range g.votes {
		if !v.at.After(from) {
			continue
		}
		kept = append(kept, v)
		if v.k == k {
			n++
		}
	}
	g.votes = kept
	return n
}

// checkInputs refuses, before the gate changes any of its state, the
// inputs of d that its settings read and that no decision can have: with
// distress, Gap or Idle, a throughput that is negative or not finite, an
// application-limited share outside [0, 1], and (with its forecast) a bad
// forecast; with Reserve or Drain, a bad load.
func (g *Gate) checkInputs(d *proflow.Decision) error {
	if c := g.cfg.Distress; c.enabled() || g.cfg.Gap || g.cfg.Idle {
		if phi := d.Throughput; !(phi >= 0) || math.IsInf(phi, 0) {
			return fmt.Errorf("policy: gate: flow throughput %v, want a finite rate >= 0", phi)
		}
		if !(d.AppLimited >= 0 && d.AppLimited <= 1) {
			return fmt.Errorf("policy: gate: flow app-limited share %v, want a share in [0, 1]", d.AppLimited)
		}
		if f := d.Forecast; c.Forecast && f.OK && !(f.Throughput >= 0 && !math.IsInf(f.Throughput, 0) && f.AppLimited >= 0 && f.AppLimited <= 1) {
			return fmt.Errorf("policy: gate: forecast throughput %v and app-limited share %v, want a finite rate >= 0 and a share in [0, 1]", f.Throughput, f.AppLimited)
		}
	}
	if g.cfg.Reserve || g.cfg.Drain.enabled() {
		return checkLoad(d.Load)
	}
	return nil
}

// distress updates the flow's healthy level and low streak from d, whose
// inputs checkInputs accepted, and reports whether the flow is in
// distress. The first sample it sees seeds the healthy level, whatever
// it is (a rate-limited flow's first sample is its demand).
func (g *Gate) distress(d *proflow.Decision) bool {
	c := g.cfg.Distress
	if !c.enabled() {
		return false
	}
	phi := d.Throughput
	if g.healthy == 0 {
		g.healthy = phi
	}
	level := c.Fraction * g.healthy // the healthy level before this sample teaches it
	switch {
	case d.Cooldown > 0:
		g.low = 0 // the flow ramps up on its new path: neither low nor healthy
	case d.AppLimited >= appLimitedShare:
		g.low = 0 // its application, not the network, set its rate
	case phi < level:
		g.low++
	default:
		g.low = 0
		g.healthy += c.Smoothing * (phi - g.healthy)
	}
	f := d.Forecast
	if c.Forecast && f.OK && d.Cooldown <= 0 && d.AppLimited < appLimitedShare && f.AppLimited < appLimitedShare && f.Throughput < level {
		g.lowAhead++
	} else {
		g.lowAhead = 0
	}
	return g.low >= c.Consecutive || (c.Forecast && g.lowAhead >= c.Consecutive)
}

// noCandidate ends the streak of a step without a candidate; with
// Reserve, the held votes stay while the reserve is still drained.
func (g *Gate) noCandidate() {
	g.candidate, g.streak = -1, 0
	if g.cfg.Reserve && g.drain <= 0 {
		g.forgetHeld()
	}
}

// Admit applies the gate to d (see the type documentation).
func (g *Gate) Admit(d *proflow.Decision) {
	d.Target, d.Best, d.Margin, d.Votes, d.Cooldown, d.Recheck = -1, -1, 0, 0, 0, 0
	g.recheck = -1 // a step ends any recheck the last one asked for
	if !d.LastReroute.IsZero() {
		if since := d.Time.Sub(d.LastReroute); since < g.cfg.Cooldown {
			d.Cooldown = g.cfg.Cooldown - since
		}
	}
	cur := d.Current
	if cur < 0 || cur >= len(d.Scores) {
		g.resetStreak()
		d.Reason = proflow.ReasonPolicy
		d.Err = fmt.Errorf("policy: gate: current switch %d, but there are %d scores", cur, len(d.Scores))
		return
	}
	// eligible reports whether switch k may be k_best: the current switch
	// always, a destination unless Pareto passes it over.
	eligible := func(k int) bool {
		return k == cur || !g.cfg.Pareto || len(d.Dominated) != len(d.Scores) || !d.Dominated[k]
	}
	best := -1 // the lowest index among the eligible maxima
	for k, s := range d.Scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			g.resetStreak()
			d.Reason = proflow.ReasonPolicy
			d.Err = fmt.Errorf("policy: gate: score %v for switch %d: %w", s, k, proflow.ErrBadScores)
			return
		}
		if eligible(k) && (best < 0 || s > d.Scores[best]) {
			best = k
		}
	}
	if d.Scores[cur] == d.Scores[best] {
		best = cur // the current switch wins a tie
	}
	if err := g.checkInputs(d); err != nil {
		g.resetStreak()
		d.Reason, d.Err = proflow.ReasonPolicy, err
		return
	}
	distressed := g.distress(d)
	flowDistressed := distressed                       // the flow's own distress, before Drain.Waive adds the reserve's
	idle := (g.cfg.Gap || g.cfg.Idle) && idleSample(d) // nothing in flight: a move costs the flow nothing
	inBurst := g.gap(idle)                             // Gap: the flow sends in a burst no longer than its last
	g.reserve(d, len(d.Scores))
	g.advanceDeficit(d)
	lasts := g.lasts(d.Load) // Drain: the reserve outlasts the horizon
	if g.cfg.Drain.Waive && !lasts {
		distressed = true // the bucket is within the horizon of empty
	}
	waive := g.cfg.Idle && idle // Idle: the votes are waived towards a switch that relieves this one
	if cur != g.current {
		g.candidate, g.streak = -1, 0
		g.votes = g.votes[:0]
		g.forgetHeld()
		g.pending = -1
	}
	g.current = cur
	if p := g.pending; idle && p >= 0 {
		g.pending = -1 // an idle sample makes the held move or drops it
		if p != cur && p < len(d.Scores) && d.Cooldown <= 0 && d.Scores[p] >= d.Scores[cur] {
			g.candidate, g.streak = -1, 0
			d.Best, d.Margin, d.Target, d.Reason = p, d.Scores[p]-d.Scores[cur], p, proflow.ReasonRerouted
			return
		}
	}
	if c := g.candidate; g.cfg.Tolerance > 0 && best != cur && c >= 0 && c < len(d.Scores) && c != cur &&
		d.Scores[best]-d.Scores[c] <= g.cfg.Tolerance && d.Scores[c]-d.Scores[cur] > g.cfg.Margin {
		best = c // a near-tie keeps the previous candidate while it still clears the margin
	}
	d.Best = best
	d.Margin = d.Scores[best] - d.Scores[cur]

	switch {
	case best == cur:
		g.noCandidate()
		d.Reason = proflow.ReasonStay
		return
	case !(d.Margin > g.cfg.Margin):
		if c := g.candidate; g.cfg.Hold && c >= 0 && c < len(d.Scores) && c != cur && d.Scores[c] > d.Scores[cur] {
			d.Votes = g.streak // within the margin's jitter: held, not counted
			d.Reason = proflow.ReasonMargin
			return
		}
		g.noCandidate()
		d.Reason = proflow.ReasonMargin
		return
	case g.cfg.Reserve:
		g.held[best]++
		g.candidate, g.streak = best, g.held[best]
	case g.cfg.Window > 0:
		g.candidate, g.streak = best, g.windowVotes(d.Time, best)
	case best == g.candidate:
		g.streak++
	default:
		g.candidate, g.streak = best, 1
	}
	d.Votes = g.streak
	waived := waive && relieves(d, best) // Idle: a move that costs the flow nothing
	switch {
	case g.streak < g.cfg.Votes && !distressed && !waived:
		d.Reason = proflow.ReasonVotes
	case d.Cooldown > 0:
		d.Reason = proflow.ReasonCooldown
	case !distressed && !waived && lasts:
		d.Reason = proflow.ReasonReserve
	case inBurst:
		d.Reason = proflow.ReasonGap
		g.pending = best // made at the next idle sample (Gap)
	case d.Recheckable && !flowDistressed && !waived && g.deferMove(d, best):
		d.Reason = proflow.ReasonReserve // until the recheck (Drain.Recheck)
	default:
		d.Target = best
		d.Reason = proflow.ReasonRerouted
	}
}

// deferMove defers the move to best, which the drain estimate lets go ahead
// now, to a recheck Drain.Recheck before the estimate's end, and reports
// whether it did: only with Recheck set, a reserve the estimate does not
// give up yet, and more of it left than Recheck.
func (g *Gate) deferMove(d *proflow.Decision, best int) bool {
	lead := g.cfg.Drain.Recheck
	if lead <= 0 {
		return false
	}
	left := g.left(g.deficit, d.Load)
	if math.IsInf(left, 1) {
		return false // a reserve that lasts is not a move the estimate lets go ahead
	}
	if wait := time.Duration(left*float64(time.Second)) - lead; wait > 0 {
		g.recheck, d.Recheck = best, wait
		return true
	}
	return false
}

// Recheck implements proflow.Rechecker: it decides the move the last
// Admit deferred (Decision.Recheck), from d.Load, the current switch's
// load over the time since that step's sample. It advances a copy of the
// reserve's deficit from the step to d.Time at that load; the move to the
// deferred destination goes ahead (Target, ReasonRerouted) if the reserve
// then runs out within Drain.Horizon at that load, and is dropped
// otherwise (ReasonReserve): the votes the candidate has stay, so the next
// step may move it. It changes no vote, and the deficit the gate keeps
// advances only at steps. Without a deferred move (none, one already
// rechecked, or the flow moved meanwhile) it holds with ReasonStay.
func (g *Gate) Recheck(d *proflow.Decision) {
	d.Target, d.Best, d.Margin, d.Votes, d.Cooldown, d.Recheck = -1, -1, 0, 0, 0, 0
	k := g.recheck
	g.recheck = -1 // one recheck for one deferral
	if k < 0 || d.Current != g.current || d.Current != g.deficitOf {
		d.Reason = proflow.ReasonStay
		return
	}
	if err := checkLoad(d.Load); err != nil {
		d.Reason, d.Err = proflow.ReasonPolicy, err
		return
	}
	d.Best, d.Votes = k, g.streak
	deficit := drained(g.deficit, d.Load, g.cfg.Drain.rate(), d.Time.Sub(g.deficitAt).Seconds())
	if g.lastsFrom(deficit, d.Load) {
		d.Reason = proflow.ReasonReserve
		return
	}
	d.Target, d.Reason = k, proflow.ReasonRerouted
}

// gap follows the flow's bursts and idle gaps (GateConfig.Gap), given
// whether this step's sample is idle, and reports whether a move should
// wait for the next idle sample: the flow is sending in a burst no longer
// than the last burst bounded by idle samples.
func (g *Gate) gap(idle bool) (hold bool) {
	if !g.cfg.Gap {
		return false
	}
	if idle {
		if g.burst > 0 && g.bounded {
			g.lastBurst = g.burst
		}
		g.burst, g.bounded = 0, true
		return false
	}
	g.burst++
	return g.lastBurst > 0 && g.burst <= g.lastBurst
}

// relieves reports whether d marks switch k as reading less loaded than
// the current switch (Decision.Relieves); a decision without the marks
// marks none.
func relieves(d *proflow.Decision, k int) bool {
	return len(d.Relieves) == len(d.Scores) && d.Relieves[k]
}

// idleSample reports whether d is an idle sample of the flow: it
// delivered nothing while application-limited for at least half the
// interval (GateConfig.Gap, GateConfig.Idle).
func idleSample(d *proflow.Decision) bool {
	return d.Throughput == 0 && d.AppLimited >= appLimitedShare
}

// advanceDeficit advances the current switch's bucket deficit to d.Time
// (GateConfig.Drain), from 0 on a switch it was not kept for (the flow
// moved: a full bucket); checkInputs has accepted d.Load.
func (g *Gate) advanceDeficit(d *proflow.Decision) {
	if !g.cfg.Drain.enabled() {
		return
	}
	if d.Current != g.deficitOf {
		g.deficit, g.deficitOf, g.deficitAt = 0, d.Current, d.Time
		return
	}
	if d.Time.After(g.deficitAt) {
		g.deficit = drained(g.deficit, d.Load, g.cfg.Drain.rate(), d.Time.Sub(g.deficitAt).Seconds())
		g.deficitAt = d.Time
	}
}

// checkLoad refuses a Decision.Load that is negative or not finite
// (Reserve, Drain).
func checkLoad(load float64) error {
	if !(load >= 0) || math.IsInf(load, 0) {
		return fmt.Errorf("policy: gate: current switch load %v, want a finite ratio >= 0", load)
	}
	return nil
}

// drained returns a switch's reserve deficit, in seconds of the bucket
// rate C, after dt more seconds at load, for a reserve served at rate
// times C: the integral of load − rate, clipped at 0 (Reserve at rate 1,
// Drain at DrainConfig.Rate). A dt that is not positive changes nothing.
func drained(deficit, load, rate, dt float64) float64 {
	if dt <= 0 {
		return deficit
	}
	return max(0, deficit+(load-rate)*dt)
}

// lasts reports whether, with Drain set, the current switch's bucket
// lasts longer than the horizon at the present load.
func (g *Gate) lasts(load float64) bool {
	if !g.cfg.Drain.enabled() {
		return false
	}
	return g.lastsFrom(g.deficit, load)
}

// lastsFrom reports whether a reserve with deficit lasts longer than the
// horizon at load (Drain, which is set).
func (g *Gate) lastsFrom(deficit, load float64) bool {
	return g.left(deficit, load) > g.cfg.Drain.Horizon.Seconds()
}

// left returns how many seconds a reserve with deficit lasts at load
// (Drain, which is set): 0 once the estimate has emptied it (a dry bucket
// sends at C), +Inf at or below the rate it is served at.
func (g *Gate) left(deficit, load float64) float64 {
	c := g.cfg.Drain
	r := c.rate()
	switch {
	case deficit >= c.Depth:
		return 0
	case load <= r:
		return math.Inf(1)
	}
	return (c.Depth - deficit) / (load - r)
}
