package policy

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/proflow-sdn/proflow"
)

// CrowdConfig holds the settings of the crowd reference policy. Start from
// DefaultCrowdConfig.
type CrowdConfig struct {
	// Threshold is T, in flows (flow-table entries, as
	// proflow.SwitchSample.FlowCount counts them): the policy counts samples
	// whose flow count on the current switch is strictly above it.
	Threshold float64 `json:"threshold_flows"`
	// Consecutive is how many strictly consecutive samples above Threshold
	// fire a reroute.
	Consecutive int `json:"consecutive"`
	// Cooldown is how long after a move the policy does not fire again.
	Cooldown time.Duration `json:"cooldown"`
}

// DefaultCrowdConfig returns the paper's crowd baseline (App. F, G): T = 5,
// between the count of the protected flow plus one congesting host (4) and
// the smallest crowd (6); one sample (the count is discrete and does not
// jitter like the overflow rate); a 30 s cooldown, as for Reactive.
func DefaultCrowdConfig() CrowdConfig {
	return CrowdConfig{Threshold: 5, Consecutive: 1, Cooldown: 30 * time.Second}
}

// Validate reports every problem of the configuration at once.
func (c CrowdConfig) Validate() error {
	var errs []error
	if !(c.Threshold >= 0) || math.IsInf(c.Threshold, 0) {
		errs = append(errs, fmt.Errorf("threshold %v flows, want a finite number >= 0", c.Threshold))
	}
	if c.Consecutive < 1 {
		errs = append(errs, fmt.Errorf("consecutive %d samples, want >= 1", c.Consecutive))
	}
	if c.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("cooldown %v, want >= 0", c.Cooldown))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("policy: invalid crowd config: %w", err)
	}
	return nil
}

// Crowd is the flow-count reference policy of the paper (App. F, G): it
// reroutes when a crowd of flows gathers on the protected flow's switch,
// whatever their rate.
//
// # Rule
//
// At every step it reads n_k*, the flow count of the current switch
// (Observation.Switches[Current].FlowCount). It fires when n_k* > Threshold
// (strictly) on Consecutive strictly consecutive samples.
//
// When it fires, the destination is the switch with the fewest flows; ties
// go to the lowest index; the current switch is never the destination. Like
// the paper's baseline it reads flow counts only, never rates, which is why
// it can walk into a destination that one elephant saturates (S12). The destination scores 1 and every other
// switch 0; otherwise the current switch scores 1. Pair it with Immediate.
//
// # Cooldown
//
// As for Reactive: a change of Input.Current is a move dated at the previous
// step; the count restarts and the policy does not fire until Cooldown has
// passed.
//
// # Parameters
//
//	Threshold    T, flows, strict                default 5
//	Consecutive  samples in a row above T        default 1
//	Cooldown     no second reroute before this   default 30 s
//
// Crowd implements proflow.Resetter. It is not safe for concurrent use.
type Crowd struct {
	cfg CrowdConfig
	t   trigger
}

var (
	_ proflow.Policy   = (*Crowd)(nil)
	_ proflow.Resetter = (*Crowd)(nil)
)

// NewCrowd returns a crowd policy with the given settings, or their
// validation error.
func NewCrowd(cfg CrowdConfig) (*Crowd, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Crowd{cfg: cfg, t: newTrigger(cfg.Consecutive, cfg.Cooldown)}, nil
}

// Config returns the policy's settings.
func (c *Crowd) Config() CrowdConfig { return c.cfg }

// Reset forgets the sample count and the last move.
func (c *Crowd) Reset() { c.t.reset() }

// Score applies the rule to in.Obs and writes the scores.
func (c *Crowd) Score(scores []float64, in *proflow.Input) error {
	if err := checkInput("crowd", scores, in, true); err != nil {
		return err
	}
	sw := in.Obs.Switches
	fire := c.t.step(in.Time, in.Current, sw[in.Current].FlowCount > c.cfg.Threshold)
	dest := -1
	if fire {
		for k, s := range sw {
			if k == in.Current || isCordoned(in.Cordoned, k) {
				continue
			}
			if dest < 0 || s.FlowCount < sw[dest].FlowCount {
				dest = k
			}
		}
	}
	writeScores(scores, in.Current, dest)
	return nil
}
