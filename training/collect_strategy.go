package training

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Strategy names one of the data-collection strategies of the paper's
// Table I (App. C, §V-A c). Each one says where the protected flow starts,
// where the congesters send, and whether and when the data-collection runner
// reroutes the flow; PlanEpisode turns it into a Plan.
type Strategy string

// The strategies of Table I.
const (
	// StrategyA: the protected flow on the most-loaded switch; the runner
	// reroutes to the cleanest switch once the overflow is confirmed above a
	// threshold. Teaches escape from a congested switch.
	StrategyA Strategy = "A"
	// StrategyALong: A with an extended dwell (40–60 s) after the
	// confirmation before rerouting.
	StrategyALong Strategy = "A_LONG"
	// StrategyAShort: A's placement, the reroute issued early (5–20 s after
	// congestion starts), the flow's switch balanced over all switches.
	StrategyAShort Strategy = "A_SHORT"
	// StrategyB: the flow on a random switch, congesters anywhere, a reroute
	// to a random switch at a random time. Placement and timing diversity.
	StrategyB Strategy = "B"
	// StrategyC: the flow on the cleanest switch (no congester joins it); no
	// reroute. Staying on a clean switch pays.
	StrategyC Strategy = "C"
	// StrategyD: the flow starts clean; 2–3 congesters arrive elsewhere and
	// are then moved onto its switch; the runner reroutes once the overflow
	// rises. The precursor window.
	StrategyD Strategy = "D"
	// StrategyDShort: D with the reroute 10–20 s after the congesters moved.
	StrategyDShort Strategy = "D_SHORT"
	// StrategyDLong: D with the reroute 30–50 s after the congesters moved.
	StrategyDLong Strategy = "D_LONG"
	// StrategyE: a pile-up on the flow's switch — every congester host but
	// the elephant trap's, when one is drawn (then the trap's elephant runs
	// on another switch); full-rate, capped or mixed; reroute after 20–40 s.
	StrategyE Strategy = "E"
	// StrategyFStay: every congester host on the flow's switch (full-rate,
	// capped or mixed; sometimes leaving and coming back); no reroute.
	StrategyFStay Strategy = "F_STAY"
	// StrategyFLate: E's pile-up; reroute after 40–60 s.
	StrategyFLate Strategy = "F_LATE"
	// StrategyFEarly: E's pile-up; reroute after 5–20 s, the flow's switch
	// balanced over all switches.
	StrategyFEarly Strategy = "F_EARLY"
	// StrategyGClean: all congesters on other switches; no reroute.
	StrategyGClean Strategy = "G_CLEAN"
	// StrategyHPartial: 1–3 congesters on the flow's switch; no reroute.
	StrategyHPartial Strategy = "H_PARTIAL"
	// StrategyHEarly is proflow's, not the paper's: H_PARTIAL's 1–3
	// congesters on the flow's switch, rerouted 3–10 s after they arrive.
	// On the testbed profile one full-rate congester host collapses the
	// flow as fast as five (its reserve drains at the sink link's rate), and
	// with the paper's strategies alone the agent learned to leave a partial
	// crowd only after the collapse (training/doc.go). Share 0 turns it off.
	StrategyHEarly Strategy = "H_EARLY"
	// StrategyJTrap is proflow's, not the paper's: S12's destination trap
	// at every position. A full-rate elephant sends through a random other
	// switch from the first seconds, 1–3 full-rate congesters crowd the
	// flow's switch, the remaining hosts send capped streams (6 at 1
	// Mbit/s) through the other switches, and the runner reroutes 5–20 s
	// after the crowd arrives to a random other switch — the elephant's or
	// a capped one. With the paper's strategies a crowd's destinations are
	// mostly idle, and the agent learned to wait for the collapse where
	// every candidate carried flows (training/doc.go). Share 0.16 of 1.16.
	StrategyJTrap Strategy = "J_TRAP"
	// StrategyKQuiet is proflow's, not the paper's: no congester anywhere;
	// the runner reroutes to a random other switch at a random time in
	// half the episodes and stays in the other half. With CollectConfig.Kinds
	// the protected flow's own demand usually changes mid-episode (a
	// request rate that falls, bursts that start): its throughput falls
	// with nothing on the fabric, and a move only costs it its window. The
	// congested strategies never show a drop of that kind, and an agent
	// trained on them alone moved in the demand-drop traps (training/doc.go).
	// Share 0 by default.
	StrategyKQuiet Strategy = "K_QUIET"
	// StrategyLBrief is proflow's, not the paper's: E's pile-up on the
	// flow's switch (full-rate, capped or mixed) that leaves together 3–15
	// s after it has arrived; the runner reroutes to a random other switch
	// 2–16 s after congestion start in two episodes of three (before or
	// after the crowd leaves) and stays in the third. The pile-ups of the
	// other strategies stay 20 s or more, and the twins of the built-in
	// scenarios (proflow bound) showed an agent trained on them moving
	// before a crowd had been there long enough to matter
	// (training/doc.go). Share 0 by default.
	StrategyLBrief Strategy = "L_BRIEF"
	// StrategyMFamily is proflow's, not the paper's: a scenario drawn by
	// the held-out family's generator from seeds of its own
	// (sim.DrawFamilyScenario: the family's design of crowds, elephants,
	// capped crowds and mixtures; full, partial and no overlap; arrivals
	// together, ramped, rolling, in bursts and brief; destination traps),
	// never an H or K member's traffic. The runner stays in a third of the
	// episodes and otherwise reroutes at a random time in the first 60 s
	// of congestion, to the cleanest switch or to a random other one. The
	// other strategies sample the paper's patterns one at a time; this one
	// samples the space the held-out family is drawn from, as its
	// generator weighs it (training/doc.go). Share 0 by default.
	StrategyMFamily Strategy = "M_FAMILY"
	// StrategyNRolling is proflow's, not the paper's: S6's rolling crowd
	// at every position and order. Two or more congester hosts (full-rate,
	// capped or mixed; together or ramped) crowd one switch, the flow's in
	// half the episodes, and every 20–40 s the whole crowd moves on to the
	// next switch of a random cyclic order, so the switch it has just left
	// is the last it comes back to. The runner stays in a third of the
	// episodes and otherwise reroutes 2–80 s after congestion start to a
	// random other switch: the one the crowd has left, the one it reaches
	// next, or one between. In the other strategies a crowd rolls only in
	// B, host by host from random switches, in about one episode of a
	// hundred, and fits of one recipe disagreed on S6 (training/doc.go).
	// Share 0 by default.
	StrategyNRolling Strategy = "N_ROLLING"
	// StrategyOSolo is proflow's, not the paper's: one congester host (full
	// rate in two episodes of three, else capped) visits the flow's switch
	// in one to three bursts of 3–10 s, 20–40 s apart, the first at
	// congestion start, each gone before a full-rate host would have
	// drained the flow's reserve (about 10.5 s on the testbed profile);
	// each other congester host sends through a random other switch in
	// half the episodes. The runner stays in half the episodes and
	// otherwise reroutes to a random other switch at a random time in the
	// first 60 s of congestion, during a burst or between two. In the
	// other strategies one host on the flow's switch stays 20 s or more,
	// and a runner that moves while a lone neighbour visits is rare, so
	// what such a move costs against staying is left to each fit's
	// extrapolation. Neither these bursts nor the 5–20 s of its first
	// trial made a recipe that passed (training/doc.go). Share 0 by
	// default.
	StrategyOSolo Strategy = "O_SOLO"
	// StrategyGAside is proflow's, not the paper's: G_CLEAN's traffic,
	// every congester host on switches other than the flow's (full-rate,
	// capped or mixed), with a reroute to a random other switch at a random
	// time in the first 60 s of congestion in half the episodes. In
	// G_CLEAN the flow never moves, so what a move costs while a crowd
	// loads the fabric elsewhere is left to each fit's extrapolation, while
	// the D strategies show such a crowd moving onto the flow's switch in
	// every episode; the committed model moved for an elephant that never
	// came (D40, training/doc.go). Share 0 by default.
	StrategyGAside Strategy = "G_ASIDE"
)

// Strategies returns every strategy in the order of Table I.
func Strategies() []Strategy {
	return []Strategy{StrategyA, StrategyALong, StrategyAShort, StrategyB, StrategyC, StrategyD, StrategyDShort,
		StrategyDLong, StrategyE, StrategyFStay, StrategyFLate, StrategyFEarly, StrategyGClean, StrategyHPartial, StrategyHEarly, StrategyJTrap, StrategyKQuiet, StrategyLBrief, StrategyMFamily, StrategyNRolling, StrategyOSolo, StrategyGAside}
}

// ParseStrategy returns the strategy named s.
func ParseStrategy(s string) (Strategy, error) {
	for _, st := range Strategies() {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("training: unknown collection strategy %q, want one of %v", s, Strategies())
}

// Description says in one line what the strategy does and teaches.
func (s Strategy) Description() string {
	switch s {
	case StrategyA:
		return "flow on the most-loaded switch; reroute to the cleanest once overflow is confirmed above threshold"
	case StrategyALong:
		return "as A, with a 40–60 s dwell after the confirmation"
	case StrategyAShort:
		return "A's placement; early reroute 5–20 s after congestion starts; flow's switch balanced"
	case StrategyB:
		return "flow and congesters on random switches; reroute to a random switch at a random time"
	case StrategyC:
		return "flow on the cleanest switch; no reroute"
	case StrategyD:
		return "flow clean; 2–3 congesters moved onto it; reroute once overflow rises (precursor window)"
	case StrategyDShort:
		return "as D, reroute 10–20 s after the congesters moved"
	case StrategyDLong:
		return "as D, reroute 30–50 s after the congesters moved"
	case StrategyE:
		return "pile-up: every congester on the flow's switch but an elephant trap's, if drawn (full-rate, capped or mixed); reroute after 20–40 s"
	case StrategyFStay:
		return "every congester on the flow's switch (full-rate, capped or mixed; sometimes leaving and returning); no reroute"
	case StrategyFLate:
		return "E's pile-up (one congester may be an elephant trap elsewhere; capped or mixed at times); reroute after 40–60 s"
	case StrategyFEarly:
		return "E's pile-up (one congester may be an elephant trap elsewhere; capped or mixed at times); reroute after 5–20 s; flow's switch balanced"
	case StrategyGClean:
		return "all congesters on other switches; no reroute"
	case StrategyHPartial:
		return "1–3 congesters on the flow's switch; no reroute"
	case StrategyHEarly:
		return "1–3 congesters on the flow's switch; reroute 3–10 s after they arrive (proflow's, not Table I's)"
	case StrategyJTrap:
		return "an elephant on another switch, a crowd on the flow's, capped hosts elsewhere; reroute 5–20 s after the crowd to a random other switch (proflow's, not Table I's)"
	case StrategyLBrief:
		return "a pile-up on the flow's switch that leaves 3–15 s after arriving; reroute 2–16 s after congestion start in two episodes of three"
	case StrategyMFamily:
		return "a draw of the held-out family's generator (never a held-out member); stay in a third of the episodes, else reroute in the first 60 s to the cleanest or a random other switch (proflow's, not Table I's)"
	case StrategyNRolling:
		return "a crowd rolling through the switches in a random cyclic order every 20–40 s (S6 at every position); stay in a third of the episodes, else reroute 2–80 s after congestion start to a random other switch (proflow's, not Table I's)"
	case StrategyOSolo:
		return "one congester host (full-rate or capped) visiting the flow's switch in 1–3 bursts of 3–10 s; stay in half the episodes, else reroute in the first 60 s to a random other switch (proflow's, not Table I's)"
	case StrategyKQuiet:
		return "no congestion; the flow's own demand may change; reroute at a random time in half the episodes (proflow's, not Table I's)"
	case StrategyGAside:
		return "all congesters on other switches (G_CLEAN's); reroute to a random other switch in the first 60 s in half the episodes (proflow's, not Table I's)"
	}
	return "unknown strategy"
}

// DefaultShares returns the share of the corpus each strategy gets by
// default (relative weights: Table I's sum to 1, and proflow's J_TRAP adds
// 0.16, so it gets 0.16/1.16 of the corpus). The paper reports no
// per-strategy counts; these weigh the strategies that carry the precursor
// signal and timing diversity (B, the early reroutes A_SHORT and F_EARLY,
// and the D family) a little above the rest. H_EARLY, proflow's own, has
// share 0 by default: it did not help (training/doc.go); -shares turns it
// on. J_TRAP's share was chosen on the built-in scenarios (training/doc.go).
func DefaultShares() map[string]float64 {
	return map[string]float64{
		string(StrategyA): 0.08, string(StrategyALong): 0.05, string(StrategyAShort): 0.08,
		string(StrategyB): 0.12, string(StrategyC): 0.08,
		string(StrategyD): 0.08, string(StrategyDShort): 0.07, string(StrategyDLong): 0.06,
		string(StrategyE): 0.07, string(StrategyFStay): 0.06, string(StrategyFLate): 0.05, string(StrategyFEarly): 0.08,
		string(StrategyGClean): 0.06, string(StrategyHPartial): 0.06, string(StrategyHEarly): 0, string(StrategyJTrap): 0.16,
	}
}

// Trigger says what makes a scripted runner reroute.
type Trigger string

// Triggers of a Script.
const (
	// TriggerNone: the runner never reroutes.
	TriggerNone Trigger = "none"
	// TriggerTime: the runner reroutes at the first step at or after Script.At.
	TriggerTime Trigger = "time"
	// TriggerOverflow: from Script.At on, the runner watches the overflow
	// rate of the flow's switch; once it has been above Script.Threshold on
	// Script.Consecutive consecutive samples (the confirmation) it waits
	// Script.Dwell and reroutes.
	TriggerOverflow Trigger = "overflow"
)

// Script is the scripted data-collection runner of one episode: at most one
// reroute, fired by time or by confirmed overflow, to a destination chosen
// by a fixed rule. Times are offsets from the start of the episode.
type Script struct {
	Trigger Trigger `json:"trigger"`
	// At is the reroute time (TriggerTime) or the time from which the
	// overflow is watched (TriggerOverflow).
	At time.Duration `json:"at"`
	// Threshold (bytes/s, strict) and Consecutive (samples) define the
	// overflow confirmation of TriggerOverflow.
	Threshold   float64 `json:"threshold,omitempty"`
	Consecutive int     `json:"consecutive,omitempty"`
	// Dwell is the wait between the confirmation and the reroute.
	Dwell time.Duration `json:"dwell,omitempty"`
	// To is the destination switch index, or -1 for the cleanest switch at
	// the time of the reroute: the lowest overflow rate (in 5,000 B/s
	// bins), then the fewest flows, then the lowest transmit rate, then the
	// earliest in Preference.
	To int `json:"to"`
	// Preference breaks ties between equally clean switches (a random
	// permutation of the switches, so balanced destinations stay balanced).
	Preference []int `json:"preference,omitempty"`
}

// Validate checks the script for a fabric of n switches.
func (s Script) Validate(n int) error {
	var errs []error
	switch s.Trigger {
	case TriggerNone, TriggerTime:
	case TriggerOverflow:
		if !(s.Threshold >= 0) || math.IsInf(s.Threshold, 0) || s.Consecutive < 1 {
			errs = append(errs, fmt.Errorf("overflow trigger with threshold %v B/s and %d samples, want a threshold >= 0 and at least one sample", s.Threshold, s.Consecutive))
		}
	default:
		errs = append(errs, fmt.Errorf("trigger %q, want none, time or overflow", s.Trigger))
	}
	if s.At < 0 || s.Dwell < 0 {
		errs = append(errs, fmt.Errorf("at %v and dwell %v, want non-negative", s.At, s.Dwell))
	}
	if s.To < -1 || s.To >= n {
		errs = append(errs, fmt.Errorf("destination %d, want -1 (cleanest) or 0..%d", s.To, n-1))
	}
	for _, k := range s.Preference {
		if k < 0 || k >= n {
			errs = append(errs, fmt.Errorf("preference %v names switch %d, want 0..%d", s.Preference, k, n-1))
			break
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("training: invalid script: %w", err)
	}
	return nil
}

// ScriptedPolicy runs a Script as a proflow.Policy, so that a controller
// drives the data-collection episodes exactly as it drives any policy. Pair
// it with policy.Immediate(): when the script fires, the destination scores
// 1 and every other switch 0; otherwise the current switch scores 1. It
// reads raw observations: it is a data-collection runner, not a learned
// policy. It implements proflow.Resetter and is not safe for concurrent use.
type ScriptedPolicy struct {
	s         Script
	start     time.Time
	streak    int
	confirmed time.Time
	fired     bool
}

var (
	_ proflow.Policy   = (*ScriptedPolicy)(nil)
	_ proflow.Resetter = (*ScriptedPolicy)(nil)
)

// NewScriptedPolicy returns the runner of s for an episode that starts at
// start, on a fabric of n switches.
func NewScriptedPolicy(s Script, start time.Time, n int) (*ScriptedPolicy, error) {
	if err := s.Validate(n); err != nil {
		return nil, err
	}
	return &ScriptedPolicy{s: s, start: start}, nil
}

// Reset forgets the confirmation and the reroute.
func (p *ScriptedPolicy) Reset() { p.streak, p.confirmed, p.fired = 0, time.Time{}, false }

// Fired reports whether the script has rerouted.
func (p *ScriptedPolicy) Fired() bool { return p.fired }

// Score applies the script.
func (p *ScriptedPolicy) Score(scores []float64, in *proflow.Input) error {
	if in == nil || in.Obs == nil {
		return errors.New("training: scripted policy: nil input or observation")
	}
	n := len(scores)
	if in.Current < 0 || in.Current >= n || len(in.Obs.Switches) != n {
		return fmt.Errorf("training: scripted policy: current switch %d, %d scores, %d switch samples", in.Current, n, len(in.Obs.Switches))
	}
	clear(scores)
	scores[in.Current] = 1
	if p.fired || p.s.Trigger == TriggerNone {
		return nil
	}
	since := in.Time.Sub(p.start)
	if since < p.s.At {
		return nil
	}
	if p.s.Trigger == TriggerOverflow {
		if p.confirmed.IsZero() {
			if in.Obs.Switches[in.Current].OverflowRate > p.s.Threshold {
				p.streak++
			} else {
				p.streak = 0
			}
			if p.streak < p.s.Consecutive {
				return nil
			}
			p.confirmed = in.Time
		}
		if in.Time.Sub(p.confirmed) < p.s.Dwell {
			return nil
		}
	}
	dest := p.s.To
	if dest < 0 || dest == in.Current {
		dest = cleanest(in.Obs, in.Current, p.s.Preference)
	}
	p.fired = true
	scores[in.Current] = 0
	scores[dest] = 1
	return nil
}

// cleanest returns the least-loaded switch other than cur (see Script.To).
func cleanest(obs *proflow.Observation, cur int, pref []int) int {
	rank := func(k int) int {
		if i := slices.Index(pref, k); i >= 0 {
			return i
		}
		return len(pref) + k
	}
	best := -1
	for k, s := range obs.Switches {
		if k == cur {
			continue
		}
		if best < 0 {
			best = k
			continue
		}
		b := obs.Switches[best]
		bo, so := math.Floor(b.OverflowRate/5000), math.Floor(s.OverflowRate/5000)
		switch {
		case so != bo:
			if so < bo {
				best = k
			}
		case s.FlowCount != b.FlowCount:
			if s.FlowCount < b.FlowCount {
				best = k
			}
		case math.Abs(s.TxRate-b.TxRate) > 0.05*max(s.TxRate, b.TxRate):
			if s.TxRate < b.TxRate {
				best = k
			}
		case rank(k) < rank(best):
			best = k
		}
	}
	return best
}

// Plan is one collection episode: its traffic and its scripted runner.
type Plan struct {
	// Strategy is the strategy the plan was drawn from; Index numbers the
	// plans of that strategy in a corpus.
	Strategy Strategy `json:"strategy"`
	Index    int      `json:"index"`
	// Seed drives the simulated episode.
	Seed uint64 `json:"seed"`
	// Scenario is the traffic.
	Scenario *sim.Scenario `json:"scenario"`
	// Script is the runner.
	Script Script `json:"script"`
	// Window is when the scripted reroute is due, as offsets from the start
	// of the episode: a time-triggered reroute happens in [Window[0],
	// Window[1]] (one interval after At at the latest); an overflow-triggered
	// one no earlier than Window[0]. Zero for TriggerNone.
	Window [2]time.Duration `json:"window"`
}

// Options of the traffic generator. The probabilities are per episode.
const (
	// probCapped is the probability that the congesters are bandwidth-capped
	// (a C1/C2-like crowd: many flows, little overflow), and probMixed that
	// each congester is capped with probability one half, in the strategies
	// whose script does not wait for overflow.
	probCapped = 0.2
	probMixed  = 0.1
	// probRamp: congesters arrive one at a time (S8, C2).
	probRamp = 0.2
	// probTrap: one congester is an elephant on another switch from the
	// start of the episode (the S12 destination trap).
	probTrap = 0.15
	// probBurst: the congesters on the flow's switch leave and come back
	// (S9), in the strategies that do not reroute.
	probBurst = 0.15
	// probRolling: in B, the congesters move to the next switch every
	// 20–40 s (S6).
	probRolling = 0.15
)

// planner draws the traffic of one episode.
type planner struct {
	rng   *rand.Rand
	cfg   sim.Config
	n     int           // switches
	hosts []string      // congester hosts not yet used, shuffled
	t0    time.Duration // congestion start
	end   time.Duration // episode length
	sc    *sim.Scenario
	k     int // the protected flow's switch
}

// congesterHosts returns the hosts that can congest: the hosts of the
// congestion leaves, except the protected flow's ends and the sink.
func congesterHosts(cfg sim.Config) []string {
	var out []string
	for _, l := range cfg.CongestionLeaves {
		for j := range cfg.HostsPerLeaf {
			h := "h" + strconv.Itoa(l*cfg.HostsPerLeaf+j+1)
			if h != cfg.ProtectedSrc && h != cfg.ProtectedDst && h != cfg.CongestionSink {
				out = append(out, h)
			}
		}
	}
	return out
}

func switchName(k int) string { return "agg" + strconv.Itoa(k+1) }

// uniform returns a duration drawn uniformly from [lo, hi] seconds, rounded
// to 100 ms.
func (p *planner) uniform(lo, hi float64) time.Duration {
	s := lo + p.rng.Float64()*(hi-lo)
	return time.Duration(math.Round(s*10)) * 100 * time.Millisecond
}

// other returns a random switch other than the flow's.
func (p *planner) other() int {
	k := p.rng.IntN(p.n - 1)
	if k >= p.k {
		k++
	}
	return k
}

func (p *planner) take() (string, bool) {
	if len(p.hosts) == 0 {
		return "", false
	}
	h := p.hosts[0]
	p.hosts = p.hosts[1:]
	return h, true
}

// load is how a congester sends: full rate with some streams, or capped.
type load struct {
	streams int
	cap     sim.Rate
}

// loadMode is the episode's choice between full-rate, capped and mixed congesters.
type loadMode int

const (
	loadFull loadMode = iota
	loadCapped
	loadMixed
)

func (p *planner) mode(capOK bool) loadMode {
	if !capOK {
		return loadFull
	}
	switch u := p.rng.Float64(); {
	case u < probCapped:
		return loadCapped
	case u < probCapped+probMixed:
		return loadMixed
	}
	return loadFull
}

func (p *planner) load(m loadMode) load {
	if m == loadCapped || (m == loadMixed && p.rng.IntN(2) == 0) {
		caps := []float64{0.5, 1, 1, 1, 2}
		return load{streams: 4 + p.rng.IntN(5), cap: sim.Rate(caps[p.rng.IntN(len(caps))] * 1e6 / 8)}
	}
	streams := []int{8, 8, 8, 4, 6, 12, 16}
	return load{streams: streams[p.rng.IntN(len(streams))]}
}

// arrivals returns n arrival times from t: together (within a second) or,
// with probRamp, one every 5–25 s.
func (p *planner) arrivals(n int, t time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	ramp := p.rng.Float64() < probRamp
	gap := p.uniform(5, 25)
	for i := range out {
		if ramp {
			out[i] = t + time.Duration(i)*gap
		} else {
			out[i] = t + p.uniform(0, 1)
		}
	}
	return out
}

// add places a congester; it is dropped when it would arrive after the
// last 10 s of the episode.
func (p *planner) add(host string, sw int, arrive time.Duration, l load) *sim.Congester {
	if arrive > p.end-10*time.Second {
		return nil
	}
	p.sc.Congesters = append(p.sc.Congesters, sim.Congester{Host: host, Streams: l.streams, StreamCap: l.cap,
		Arrive: sim.Duration(arrive), Switch: switchName(sw)})
	return &p.sc.Congesters[len(p.sc.Congesters)-1]
}

// pile puts n congesters on switch sw from the congestion start, with the
// episode's arrival pattern and load mode; with burst they leave after
// 20–40 s and come back 20–40 s later.
func (p *planner) pile(n, sw int, m loadMode, burst bool) {
	at := p.arrivals(n, p.t0)
	leave := p.t0 + p.uniform(20, 40)
	back := leave + p.uniform(20, 40)
	for i := range n {
		h, ok := p.take()
		if !ok {
			return
		}
		l := p.load(m)
		if !burst || at[i] >= leave-time.Second {
			p.add(h, sw, at[i], l)
			continue
		}
		if c := p.add(h, sw, at[i], l); c != nil {
			c.Depart = sim.Duration(leave)
			if back < p.end-10*time.Second {
				p.add(h, sw, back, l)
			}
		}
	}
}

// elsewhere puts each remaining congester, with probability prob, on a
// random switch other than the flow's, arriving around the congestion start.
func (p *planner) elsewhere(prob float64, m loadMode, limit int) {
	counts := make([]int, p.n)
	for len(p.hosts) > 0 {
		h, _ := p.take()
		if p.rng.Float64() >= prob {
			continue
		}
		k := p.other()
		if limit > 0 && counts[k] >= limit {
			continue
		}
		counts[k]++
		p.add(h, k, p.t0+p.uniform(0, 2), p.load(m))
	}
}

// rolling puts a crowd of two or more congesters (one where the fabric has
// only one) on a switch, the flow's in half the episodes, and moves it as a
// whole every 20–40 s to the next switch of a random cyclic order of all
// the switches. A congester that arrives late (a ramp) joins the crowd
// where it is then.
func (p *planner) rolling(m loadMode) {
	order := p.rng.Perm(p.n)
	start := p.k
	if p.rng.IntN(2) == 0 {
		start = p.other()
	}
	i := slices.Index(order, start)
	order = slices.Concat(order[i:], order[:i]) // the cycle starts at the crowd's first switch
	period := p.uniform(20, 40)
	n := len(p.hosts)
	if n > 2 {
		n = 2 + p.rng.IntN(n-1)
	}
	at := p.arrivals(n, p.t0)
	for j := range n {
		h, _ := p.take()
		step := max(0, int((at[j]-p.t0)/period)) // crowd moves before the arrival
		c := p.add(h, order[step%p.n], at[j], p.load(m))
		if c == nil {
			continue
		}
		for s := step + 1; ; s++ {
			t := p.t0 + time.Duration(s)*period
			if t >= p.end-5*time.Second {
				break
			}
			c.Moves = append(c.Moves, sim.Move{At: sim.Duration(t), Switch: switchName(order[s%p.n])})
		}
	}
}

// solo sends one congester host (full rate in two episodes of three, else
// capped) through the flow's switch in one to three bursts of 3–10 s, 20–40
// s apart, the first at congestion start (a later one only where it ends 5
// s before the episode does), and each other host, in half the
// episodes, through a random other switch with the same load mode.
func (p *planner) solo() {
	m := loadFull
	if p.rng.IntN(3) == 0 {
		m = loadCapped
	}
	h, _ := p.take()
	l := p.load(m)
	at := p.t0
	for i := range 1 + p.rng.IntN(3) {
		d := p.uniform(3, 10)
		if i > 0 && at+d > p.end-5*time.Second {
			break // no burst is cut short by the end of the episode
		}
		if c := p.add(h, p.k, at, l); c != nil {
			c.Depart = sim.Duration(at + d)
		}
		at += d + p.uniform(20, 40)
	}
	if p.rng.IntN(2) == 0 {
		p.elsewhere(1, m, 0)
	}
}

// trap, with probTrap, makes one congester a full-rate elephant on another
// switch from the first seconds of the episode (S12). It is skipped when it
// would take the last congester host, which the strategy itself needs.
func (p *planner) trap() {
	if p.rng.Float64() >= probTrap {
		return
	}
	if len(p.hosts) < 2 {
		return
	}
	if h, ok := p.take(); ok {
		p.add(h, p.other(), p.uniform(0, 5), load{streams: 8})
	}
}

// PlanEpisode draws the index-th episode of strategy st for the fabric cfg
// from seed: the scenario (validated against cfg) and the script. The same
// arguments always give the same plan.
func PlanEpisode(st Strategy, index int, seed uint64, cfg sim.Config) (Plan, error) {
	if _, err := ParseStrategy(string(st)); err != nil {
		return Plan{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Plan{}, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x636f6c6c656374))
	p := &planner{rng: rng, cfg: cfg, n: cfg.Switches, hosts: congesterHosts(cfg)}
	if len(p.hosts) == 0 {
		return Plan{}, fmt.Errorf("training: plan %s: the fabric has no congester hosts", st)
	}
	rng.Shuffle(len(p.hosts), func(i, j int) { p.hosts[i], p.hosts[j] = p.hosts[j], p.hosts[i] })
	p.t0 = p.uniform(12, 20)
	p.end = p.t0 + 110*time.Second
	p.k = rng.IntN(p.n)
	if st == StrategyAShort || st == StrategyFEarly {
		p.k = index % p.n // balanced over the switches
	}
	p.sc = &sim.Scenario{
		Name:            fmt.Sprintf("%s-%d", st, index),
		Description:     "collection: " + st.Description(),
		CongestionStart: sim.Duration(p.t0),
		Window:          sim.Duration(p.end - p.t0),
	}
	pref := rng.Perm(p.n)
	script := Script{Trigger: TriggerNone, To: -1, Preference: pref}
	var window [2]time.Duration
	timed := func(at time.Duration) {
		script.Trigger, script.At = TriggerTime, min(at, p.end-5*time.Second)
		window = [2]time.Duration{script.At, script.At + cfg.Interval}
	}
	overflow := func(from, dwell time.Duration) {
		script.Trigger, script.At = TriggerOverflow, from
		script.Threshold, script.Consecutive, script.Dwell = 25000+5000*rng.Float64(), 3, dwell
		window = [2]time.Duration{from + dwell, p.end}
	}
	all := len(p.hosts)

	switch st {
	case StrategyA, StrategyALong, StrategyAShort:
		m := p.mode(st == StrategyAShort)
		p.trap()
		on := min(len(p.hosts), 3+rng.IntN(3))
		p.pile(on, p.k, m, false)
		p.elsewhere(0.7, m, on-1)
		switch st {
		case StrategyA:
			overflow(p.t0, 0)
		case StrategyALong:
			overflow(p.t0, p.uniform(40, 60))
		default:
			timed(p.t0 + p.uniform(5, 20))
		}
	case StrategyB:
		m := p.mode(true)
		p.trap()
		n := 1 + rng.IntN(len(p.hosts))
		at := p.arrivals(n, p.t0)
		rolling := rng.Float64() < probRolling
		period := p.uniform(20, 40)
		for i := range n {
			h, _ := p.take()
			k := rng.IntN(p.n)
			c := p.add(h, k, at[i], p.load(m))
			if c == nil || !rolling {
				continue
			}
			for t := at[i] + period; t < p.end-5*time.Second; t += period {
				k = (k + 1) % p.n
				c.Moves = append(c.Moves, sim.Move{At: sim.Duration(t), Switch: switchName(k)})
			}
		}
		timed(p.uniform(8, (p.end - 15*time.Second).Seconds()))
		script.To = p.other()
	case StrategyC:
		m := p.mode(true)
		n := 1 + rng.IntN(len(p.hosts))
		p.hosts = p.hosts[:n]
		p.elsewhere(1, m, 0)
	case StrategyD, StrategyDShort, StrategyDLong:
		m := p.mode(st != StrategyD)
		p.trap()
		movers := min(len(p.hosts), 2+rng.IntN(2))
		move := p.t0 + p.uniform(5, 25)
		for range movers {
			h, _ := p.take()
			if c := p.add(h, p.other(), p.t0+p.uniform(0, 2), p.load(m)); c != nil {
				c.Moves = []sim.Move{{At: sim.Duration(move), Switch: switchName(p.k)}}
			}
		}
		p.elsewhere(0.5, m, 0)
		switch st {
		case StrategyD:
			overflow(move, 0)
		case StrategyDShort:
			timed(move + p.uniform(10, 20))
		default:
			timed(move + p.uniform(30, 50))
		}
	case StrategyE, StrategyFStay, StrategyFLate, StrategyFEarly:
		m := p.mode(true)
		if st != StrategyFStay {
			p.trap()
		}
		p.pile(len(p.hosts), p.k, m, st == StrategyFStay && rng.Float64() < probBurst)
		switch st {
		case StrategyE:
			timed(p.t0 + p.uniform(20, 40))
		case StrategyFLate:
			timed(p.t0 + p.uniform(40, 60))
		case StrategyFEarly:
			timed(p.t0 + p.uniform(5, 20))
		}
	case StrategyLBrief:
		m := p.mode(true)
		leave := p.t0 + 2*time.Second + p.uniform(3, 15)
		for len(p.hosts) > 0 {
			h, _ := p.take()
			if c := p.add(h, p.k, p.t0+p.uniform(0, 2), p.load(m)); c != nil {
				c.Depart = sim.Duration(leave)
			}
		}
		if rng.IntN(3) < 2 {
			timed(p.t0 + p.uniform(2, 16))
			script.To = p.other()
		}
	case StrategyKQuiet:
		p.hosts = nil
		if rng.IntN(2) == 0 {
			timed(p.t0 + p.uniform(0, 90))
		}
	case StrategyGClean, StrategyGAside:
		m := p.mode(true)
		if rng.IntN(2) == 0 {
			k := p.other()
			for _, at := range p.arrivals(len(p.hosts), p.t0) {
				h, _ := p.take()
				p.add(h, k, at, p.load(m))
			}
		} else {
			p.elsewhere(1, m, 0)
		}
		if st == StrategyGAside && rng.IntN(2) == 0 {
			timed(p.t0 + p.uniform(0, 60))
			script.To = p.other()
		}
	case StrategyJTrap:
		h, _ := p.take()
		trap := p.other()
		p.add(h, trap, p.uniform(0, 5), load{streams: 8})
		on := max(1, min(len(p.hosts)-1, 1+rng.IntN(3)))
		p.pile(on, p.k, loadFull, false)
		for len(p.hosts) > 0 {
			h, _ := p.take()
			k := p.other()
			if k == trap && p.n > 2 {
				for k == trap {
					k = p.other()
				}
			}
			p.add(h, k, p.t0+p.uniform(0, 2), load{streams: 6, cap: sim.Rate(1e6 / 8)})
		}
		timed(p.t0 + p.uniform(5, 20))
		script.To = p.other()
	case StrategyMFamily:
		sc, err := sim.DrawFamilyScenario(cfg, rng.Uint64(), rng.IntN(sim.FamilySize))
		if err != nil {
			return Plan{}, fmt.Errorf("training: plan %s #%d: %w", st, index, err)
		}
		k, err := cfg.Topology().SwitchIndex(sc.ProtectedSwitch)
		if err != nil {
			return Plan{}, fmt.Errorf("training: plan %s #%d: %w", st, index, err)
		}
		sc.Name = p.sc.Name
		sc.Description = p.sc.Description + "; " + sc.Description
		p.sc, p.k = sc, k
		p.t0 = time.Duration(sc.CongestionStart)
		p.end = p.t0 + time.Duration(sc.Window)
		switch rng.IntN(3) {
		case 0: // stay
		case 1:
			timed(p.t0 + p.uniform(0, 60))
		default:
			timed(p.t0 + p.uniform(0, 60))
			script.To = p.other()
		}
	case StrategyNRolling:
		p.rolling(p.mode(true))
		if rng.IntN(3) > 0 {
			timed(p.t0 + p.uniform(2, 80))
			script.To = p.other()
		}
	case StrategyOSolo:
		p.solo()
		if rng.IntN(2) == 0 {
			timed(p.t0 + p.uniform(0, 60))
			script.To = p.other()
		}
	case StrategyHPartial, StrategyHEarly:
		m := p.mode(true)
		on := 1 + rng.IntN(min(3, all))
		p.pile(on, p.k, m, st == StrategyHPartial && rng.Float64() < probBurst)
		p.elsewhere(0.5, m, 0)
		if st == StrategyHEarly {
			timed(p.t0 + p.uniform(3, 10))
		}
	}
	p.sc.ProtectedSwitch = switchName(p.k)
	if err := p.sc.Validate(cfg); err != nil {
		return Plan{}, fmt.Errorf("training: plan %s #%d: %w", st, index, err)
	}
	if err := script.Validate(p.n); err != nil {
		return Plan{}, fmt.Errorf("training: plan %s #%d: %w", st, index, err)
	}
	return Plan{Strategy: st, Index: index, Seed: seed, Scenario: p.sc, Script: script, Window: window}, nil
}
