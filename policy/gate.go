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
	Tolerance float64 `json:"tolerance,omitempty"`
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
// index. ΔQ = Scores[k_best] − Scores[k*]. A reroute to k_best is admitted
// only when all three hold:
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
//     gives way to the maximum;
//  3. Decision.Time − Decision.LastReroute ≥ Cooldown, when LastReroute is
//     set. Votes keep counting during the cooldown, so a candidate that kept
//     winning is admitted as soon as the cooldown expires.
//
// A reroute to the current switch is never admitted.
//
// # Decision fields
//
// Admit fills Best, Margin (ΔQ), Votes (the candidate's streak), Cooldown
// (time left, 0 when none), Target (k_best when admitted, −1 otherwise) and
// Reason: ReasonStay, ReasonMargin, ReasonVotes or ReasonCooldown when it
// holds, and ReasonRerouted when it admits (the controller then moves the
// flow and keeps that reason, or replaces it with ReasonEnforcer). A Current
// that does not index Scores, or a NaN or infinite score, holds the placement
// with ReasonPolicy and Err set, and resets the streak.
//
// # Parameters
//
//	Margin     δ, strict lower bound on ΔQ        default 0.2
//	Votes      W, consecutive winning steps       default 3 (1.5 s at 500 ms)
//	Cooldown   quiet time after a reroute         default 15 s
//	Tolerance  near-tie keeping the candidate     default 0.2
//
// A Gate is not safe for concurrent use.
type Gate struct {
	cfg       GateConfig
	candidate int // the candidate whose streak is counted, -1 for none
	streak    int
	current   int // Decision.Current at the previous step, -1 before the first
}

var (
	_ proflow.Gate     = (*Gate)(nil)
	_ proflow.Resetter = (*Gate)(nil)
)

// NewGate returns a gate with the given settings, or their validation error.
func NewGate(cfg GateConfig) (*Gate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Gate{cfg: cfg, candidate: -1, current: -1}, nil
}

// Immediate returns a gate that admits every strictly better switch at once:
// δ = 0, W = 1, no cooldown. Use it with the reference policies (Static,
// Reactive, Crowd), which debounce and cool down by themselves.
func Immediate() *Gate {
	return &Gate{cfg: GateConfig{Margin: 0, Votes: 1}, candidate: -1, current: -1}
}

// Config returns the gate's settings.
func (g *Gate) Config() GateConfig { return g.cfg }

// Reset forgets the vote streak.
func (g *Gate) Reset() { g.candidate, g.streak, g.current = -1, 0, -1 }

// Admit applies the gate to d (see the type documentation).
func (g *Gate) Admit(d *proflow.Decision) {
	d.Target, d.Best, d.Margin, d.Votes, d.Cooldown = -1, -1, 0, 0, 0
	if !d.LastReroute.IsZero() {
		if since := d.Time.Sub(d.LastReroute); since < g.cfg.Cooldown {
			d.Cooldown = g.cfg.Cooldown - since
		}
	}
	cur := d.Current
	if cur < 0 || cur >= len(d.Scores) {
		g.Reset()
		d.Reason = proflow.ReasonPolicy
		d.Err = fmt.Errorf("policy: gate: current switch %d, but there are %d scores", cur, len(d.Scores))
		return
	}
	best := 0 // the lowest index among the maxima
	for k, s := range d.Scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			g.Reset()
			d.Reason = proflow.ReasonPolicy
			d.Err = fmt.Errorf("policy: gate: score %v for switch %d: %w", s, k, proflow.ErrBadScores)
			return
		}
		if s > d.Scores[best] {
			best = k
		}
	}
	if d.Scores[cur] == d.Scores[best] {
		best = cur // the current switch wins a tie
	}
	if cur != g.current {
		g.candidate, g.streak = -1, 0
	}
	g.current = cur
	if c := g.candidate; g.cfg.Tolerance > 0 && best != cur && c >= 0 && c < len(d.Scores) && c != cur &&
		d.Scores[best]-d.Scores[c] <= g.cfg.Tolerance && d.Scores[c]-d.Scores[cur] > g.cfg.Margin {
		best = c // a near-tie keeps the previous candidate while it still clears the margin
	}
	d.Best = best
	d.Margin = d.Scores[best] - d.Scores[cur]

	switch {
	case best == cur:
		g.candidate, g.streak = -1, 0
		d.Reason = proflow.ReasonStay
		return
	case !(d.Margin > g.cfg.Margin):
		g.candidate, g.streak = -1, 0
		d.Reason = proflow.ReasonMargin
		return
	case best == g.candidate:
		g.streak++
	default:
		g.candidate, g.streak = best, 1
	}
	d.Votes = g.streak
	switch {
	case g.streak < g.cfg.Votes:
		d.Reason = proflow.ReasonVotes
	case d.Cooldown > 0:
		d.Reason = proflow.ReasonCooldown
	default:
		d.Target = best
		d.Reason = proflow.ReasonRerouted
	}
}
