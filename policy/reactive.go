package policy

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/proflow-sdn/proflow"
)

// ReactiveConfig holds the settings of the reactive reference policy. Start
// from DefaultReactiveConfig.
type ReactiveConfig struct {
	// Threshold is ξ_th in bytes/s: the policy counts samples whose overflow
	// rate on the current switch is strictly above it.
	Threshold float64 `json:"threshold_bytes_per_sec"`
	// Consecutive is how many strictly consecutive samples above Threshold
	// fire a reroute.
	Consecutive int `json:"consecutive"`
	// Cooldown is how long after a move the policy does not fire again.
	Cooldown time.Duration `json:"cooldown"`
}

// DefaultReactiveConfig returns the paper's reactive baseline: ξ_th =
// 27,000 B/s (the lowest threshold with no false alarm on the protected
// flow's own overflow, App. E), three consecutive samples (1.5 s at 500 ms;
// the paper's "three consecutive samples"), and a 30 s cooldown (the paper
// allows a second reroute after a cooldown without giving its length).
func DefaultReactiveConfig() ReactiveConfig {
	return ReactiveConfig{Threshold: 27000, Consecutive: 3, Cooldown: 30 * time.Second}
}

// PaperBucketRate is the token-bucket rate C of the paper's testbed, in
// bytes/s (200 Mbit/s): the rate App. E calibrated the reactive threshold
// at.
const PaperBucketRate = 200e6 / 8

// ReactiveConfigFor returns DefaultReactiveConfig for a fabric whose
// buckets run at bucketRate bytes/s: the threshold scaled by the bucket
// rate, ξ_th = 27,000 × bucketRate / PaperBucketRate, the rest unchanged.
//
// Why: ξ counts tc overlimits, about a fixed number per packet a dry bucket
// holds back, so a bucket's overlimits per second scale with the packets
// per second it passes, i.e. with its rate. App. E's 27,000 at 200 Mbit/s
// is 1,350 at 10 Mbit/s (the Open vSwitch fabric and the simulator's ovs
// profile, where a dry bucket counts ~2,900 and ~1,700 overlimits/s, far
// below 27,000). The grid proflow calibrate searches is scaled by the same
// ratio. At the paper's rate (the testbed and datacenter profiles) the
// result is DefaultReactiveConfig exactly; a bucketRate that is not a
// positive finite rate also gives it.
func ReactiveConfigFor(bucketRate float64) ReactiveConfig {
	c := DefaultReactiveConfig()
	if bucketRate > 0 && !math.IsInf(bucketRate, 0) && bucketRate != PaperBucketRate {
		c.Threshold *= bucketRate / PaperBucketRate
	}
	return c
}

// Validate reports every problem of the configuration at once.
func (c ReactiveConfig) Validate() error {
	var errs []error
	if !(c.Threshold >= 0) || math.IsInf(c.Threshold, 0) {
		errs = append(errs, fmt.Errorf("threshold %v bytes/s, want a finite number >= 0", c.Threshold))
	}
	if c.Consecutive < 1 {
		errs = append(errs, fmt.Errorf("consecutive %d samples, want >= 1", c.Consecutive))
	}
	if c.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("cooldown %v, want >= 0", c.Cooldown))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("policy: invalid reactive config: %w", err)
	}
	return nil
}

// Reactive is the reactive reference policy of the paper (§V-A e, App. E):
// it reroutes once the token bucket of the protected flow's switch has been
// overflowing for a while.
//
// # Rule
//
// At every step it reads ξ_k*, the overflow rate of the current switch
// (Observation.Switches[Current].OverflowRate). It fires when ξ_k* >
// Threshold (strictly) on Consecutive strictly consecutive samples: one
// sample at or below the threshold restarts the count.
//
// When it fires, the destination is the switch with the lowest overflow rate;
// ties go to the lowest transmit rate, then to the lowest index; the current
// switch is never the destination (the paper does not state a destination
// rule; this one picks the switch whose bucket is least stressed). The
// destination scores 1 and every other switch 0. When it does not fire, the
// current switch scores 1 and the others 0. Pair it with Immediate, which
// admits exactly the switches that score higher than the current one.
//
// # Cooldown
//
// The policy sees a move as a change of Input.Current between two steps. It
// dates the move at the earlier of those steps (the step whose gate admitted
// it, Decision.LastReroute), restarts the count, and does not fire until
// Input.Time is at least Cooldown past the move. Samples above the threshold
// still count during the cooldown, so a sustained overflow on the new switch
// fires as soon as the cooldown ends.
//
// # Parameters
//
//	Threshold    ξ_th, bytes/s, strict               default 27000 at the
//	             paper's 200 Mbit/s buckets; ReactiveConfigFor scales it
//	             by the bucket rate (1,350 at 10 Mbit/s)
//	Consecutive  samples in a row above ξ_th         default 3 (1.5 s at 500 ms)
//	Cooldown     no second reroute before this       default 30 s
//
// Reactive implements proflow.Resetter. It is not safe for concurrent use.
type Reactive struct {
	cfg ReactiveConfig
	t   trigger
}

var (
	_ proflow.Policy   = (*Reactive)(nil)
	_ proflow.Resetter = (*Reactive)(nil)
)

// NewReactive returns a reactive policy with the given settings, or their
// validation error.
func NewReactive(cfg ReactiveConfig) (*Reactive, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Reactive{cfg: cfg, t: newTrigger(cfg.Consecutive, cfg.Cooldown)}, nil
}

// Config returns the policy's settings.
func (r *Reactive) Config() ReactiveConfig { return r.cfg }

// Reset forgets the sample count and the last move.
func (r *Reactive) Reset() { r.t.reset() }

// Score applies the rule to in.Obs and writes the scores.
func (r *Reactive) Score(scores []float64, in *proflow.Input) error {
	if err := checkInput("reactive", scores, in, true); err != nil {
		return err
	}
	sw := in.Obs.Switches
	fire := r.t.step(in.Time, in.Current, sw[in.Current].OverflowRate > r.cfg.Threshold)
	dest := -1
	if fire {
		for k, s := range sw {
			if k == in.Current || isCordoned(in.Cordoned, k) {
				continue
			}
			if dest < 0 || s.OverflowRate < sw[dest].OverflowRate ||
				(s.OverflowRate == sw[dest].OverflowRate && s.TxRate < sw[dest].TxRate) {
				dest = k
			}
		}
	}
	writeScores(scores, in.Current, dest)
	return nil
}

// writeScores gives 1 to dest, or to current when dest is -1, and 0 to the rest.
func writeScores(scores []float64, current, dest int) {
	clear(scores)
	if dest < 0 {
		dest = current
	}
	scores[dest] = 1
}
