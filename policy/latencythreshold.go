package policy

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/proflow-sdn/proflow"
)

// LatencyThresholdConfig holds the settings of the latency-threshold
// reference policy. Start from DefaultLatencyThresholdConfig, or from what
// proflow calibrate measures on congestion-free traffic.
type LatencyThresholdConfig struct {
	// Ratio is r for round-trip times (FlowSample.RTTP99, else
	// SmoothedRTT): a sample strictly above r × its healthy level is high.
	// A finite number > 1.
	Ratio float64 `json:"ratio"`
	// CompletionRatio is r for request completion times
	// (FlowSample.CompletionP99), which vary more than round trips when
	// healthy. A finite number > 1.
	CompletionRatio float64 `json:"completion_ratio"`
	// Consecutive is how many strictly consecutive high samples fire a
	// reroute (the debounce).
	Consecutive int `json:"consecutive"`
	// Cooldown is how long after a move the policy does not fire again,
	// doubled for every move in a row made before the flow recovered (as
	// ThroughputDrop's).
	Cooldown time.Duration `json:"cooldown"`
}

// DefaultLatencyThresholdConfig returns the settings proflow calibrate
// measures for the testbed profile on congestion-free traffic
// (policy/eval.CalibrateLatencyThreshold: 40 episodes of each kind of
// flow alone, bulk, rate, onoff and rr, and as many in which it is moved
// once between two idle switches): with a debounce of two samples, the
// lowest completion-time ratio that never fires on the flow alone (1.1;
// 1.05 fires in 11 of 160 episodes), then the lowest round-trip ratio
// (1.15; 1.1 fires in 12, bursts at full rate queueing behind themselves),
// and a cooldown of the latest the rule would fire after a move on idle
// paths (7.5 s, request/response traffic), rounded up, plus a second. A
// test (policy/eval) checks that the calibration still gives these
// values. Other fabrics have other latency noise (the datacenter profile
// calibrates to ratio 1.5, completion ratio 1.25 and a 3 s cooldown): run
// proflow calibrate for yours.
func DefaultLatencyThresholdConfig() LatencyThresholdConfig {
	return LatencyThresholdConfig{Ratio: 1.15, CompletionRatio: 1.1, Consecutive: 2, Cooldown: 9 * time.Second}
}

// Validate reports every problem of the configuration at once.
func (c LatencyThresholdConfig) Validate() error {
	var errs []error
	for _, r := range []struct {
		name string
		v    float64
	}{{"ratio", c.Ratio}, {"completion_ratio", c.CompletionRatio}} {
		if !(r.v > 1) || math.IsInf(r.v, 0) {
			errs = append(errs, fmt.Errorf("%s %v, want a finite number > 1", r.name, r.v))
		}
	}
	if c.Consecutive < 1 {
		errs = append(errs, fmt.Errorf("consecutive %d samples, want >= 1", c.Consecutive))
	}
	if c.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("cooldown %v, want >= 0", c.Cooldown))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("policy: invalid latency-threshold config: %w", err)
	}
	return nil
}

// MarshalJSON writes the configuration with the cooldown as a Go
// duration string ("9s").
func (c LatencyThresholdConfig) MarshalJSON() ([]byte, error) {
	type plain LatencyThresholdConfig
	return marshalWithCooldown(plain(c), c.Cooldown)
}

// UnmarshalJSON decodes a JSON object into c. Fields left out keep c's
// values; unknown fields are refused. The cooldown is a Go duration string
// ("9s") or a number of nanoseconds.
func (c *LatencyThresholdConfig) UnmarshalJSON(data []byte) error {
	type plain LatencyThresholdConfig
	return unmarshalWithCooldown(data, (*plain)(c), &c.Cooldown)
}

// ReadLatencyThresholdConfig reads one LatencyThresholdConfig JSON object
// from r (at most 64 KiB): fields left out keep
// DefaultLatencyThresholdConfig's values, unknown fields are refused, and
// the result is validated.
func ReadLatencyThresholdConfig(r io.Reader) (LatencyThresholdConfig, error) {
	c := DefaultLatencyThresholdConfig()
	if err := readConfigJSON(r, "latency-threshold", &c); err != nil {
		return LatencyThresholdConfig{}, err
	}
	if err := c.Validate(); err != nil {
		return LatencyThresholdConfig{}, err
	}
	return c, nil
}

// LatencySignal says which latency of a proflow.FlowSample
// LatencyThreshold reads.
type LatencySignal int

// The latencies a sample may carry, in the order LatencyThreshold prefers
// them.
const (
	// NoLatency: the sample carries none (all zero, unknown).
	NoLatency LatencySignal = iota
	// CompletionLatency is FlowSample.CompletionP99 (request/response
	// traffic).
	CompletionLatency
	// RTTLatency is FlowSample.RTTP99.
	RTTLatency
	// SmoothedRTTLatency is FlowSample.SmoothedRTT.
	SmoothedRTTLatency
	numLatencySignals
)

// String returns the signal's FlowSample JSON name ("none" for NoLatency).
func (s LatencySignal) String() string {
	switch s {
	case CompletionLatency:
		return "completion_p99"
	case RTTLatency:
		return "rtt_p99"
	case SmoothedRTTLatency:
		return "srtt"
	case NoLatency:
		return "none"
	}
	return fmt.Sprintf("LatencySignal(%d)", int(s))
}

// FlowLatency returns the latency LatencyThreshold reads from f, seconds,
// and which it is: CompletionP99 where f has one, else RTTP99, else
// SmoothedRTT; 0 and NoLatency when all three are zero (unknown).
func FlowLatency(f proflow.FlowSample) (float64, LatencySignal) {
	switch {
	case f.CompletionP99 > 0:
		return f.CompletionP99, CompletionLatency
	case f.RTTP99 > 0:
		return f.RTTP99, RTTLatency
	case f.SmoothedRTT > 0:
		return f.SmoothedRTT, SmoothedRTTLatency
	}
	return 0, NoLatency
}

// LatencyThreshold is a reference policy on the protected flow's own
// latency: it reroutes when the flow's latency rises well above the level
// it keeps when healthy. Like ThroughputDrop it reads no switch counter to
// decide when to move, only to decide where; unlike ThroughputDrop it does
// not mistake a fall in the application's own demand (an onoff flow going
// idle, a video dropping its bitrate) for congestion, since a flow that
// asks for less does not wait longer. It is the rule a practitioner would
// deploy for request/response and rate-limited flows, whose throughput
// says little.
//
// # Rule
//
// Each sample's latency ℓ is FlowSample.CompletionP99 where it has one,
// else RTTP99, else SmoothedRTT (FlowLatency). For each of the three it
// keeps h, the healthy level: the lowest value of that kind any sample has
// carried (the first sets it), the latency of the path with nothing
// queued ahead of the flow. A sample with ℓ > r × h of its kind
// (strictly; r is CompletionRatio for completion times, Ratio for round
// trips) is high; Consecutive strictly consecutive high samples fire a
// reroute. A sample without latency (all three zero: unknown) is never
// high and ends the run. The levels are kept across moves: the
// aggregation paths of a fabric have the same base latency.
//
// When it fires, the destination is ThroughputDrop's: the switch with the
// lowest overflow rate ξ, then the fewest flows, then the lowest transmit
// rate, then the lowest index, never the current switch. The destination
// scores 1 and every other switch 0; otherwise the current switch scores
// 1. Pair it with Immediate.
//
// # Cooldown
//
// As for ThroughputDrop: a change of Input.Current is a move dated at the
// previous step; the count restarts and the policy does not fire until
// the cooldown has passed. A move made before the flow recovered from the
// previous one (no sample at or below r × h between them) doubles the
// cooldown, up to 16 × Cooldown; a move after a recovery restores it.
//
// # Parameters
//
//	Ratio            r for round trips, high above r × h, strict   default 1.15
//	CompletionRatio  r for request completion times                default 1.1
//	Consecutive      high samples in a row                         default 2 (1 s at 500 ms)
//	Cooldown         no second reroute before this                 default 9 s, doubled
//	                 for each move in a row before a recovery (at most 16×)
//
// LatencyThreshold implements proflow.Resetter. It is not safe for
// concurrent use.
type LatencyThreshold struct {
	cfg     LatencyThresholdConfig
	t       trigger
	b       backoff
	healthy [numLatencySignals]float64 // h of each signal; 0 before its first sample
}

var (
	_ proflow.Policy   = (*LatencyThreshold)(nil)
	_ proflow.Resetter = (*LatencyThreshold)(nil)
)

// NewLatencyThreshold returns a latency-threshold policy with the given
// settings, or their validation error.
func NewLatencyThreshold(cfg LatencyThresholdConfig) (*LatencyThreshold, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &LatencyThreshold{cfg: cfg, t: newTrigger(cfg.Consecutive, cfg.Cooldown), b: newBackoff()}, nil
}

// Config returns the policy's settings.
func (p *LatencyThreshold) Config() LatencyThresholdConfig { return p.cfg }

// Healthy returns h of signal s, the lowest latency of that kind seen so
// far, seconds; 0 before its first sample and for NoLatency.
func (p *LatencyThreshold) Healthy(s LatencySignal) float64 {
	if s <= NoLatency || s >= numLatencySignals {
		return 0
	}
	return p.healthy[s]
}

// Reset forgets the healthy levels, the sample count and the last move.
func (p *LatencyThreshold) Reset() {
	p.t.reset()
	p.b = newBackoff()
	p.healthy = [numLatencySignals]float64{}
}

// Cooldown returns the cooldown in force: Cooldown, doubled for every move
// in a row made before the flow recovered.
func (p *LatencyThreshold) Cooldown() time.Duration { return p.b.cooldown(p.cfg.Cooldown) }

// ratio returns r of signal s.
func (p *LatencyThreshold) ratio(s LatencySignal) float64 {
	if s == CompletionLatency {
		return p.cfg.CompletionRatio
	}
	return p.cfg.Ratio
}

// Score applies the rule to in.Obs and writes the scores. It refuses a
// latency that is negative or not finite.
func (p *LatencyThreshold) Score(scores []float64, in *proflow.Input) error {
	if err := checkInput("latency-threshold", scores, in, true); err != nil {
		return err
	}
	f := in.Obs.Flow
	for _, v := range []struct {
		name string
		v    float64
	}{{"completion_p99", f.CompletionP99}, {"rtt_p99", f.RTTP99}, {"srtt", f.SmoothedRTT}} {
		if !(v.v >= 0) || math.IsInf(v.v, 0) {
			return fmt.Errorf("policy: latency-threshold: flow %s %v, want a finite latency >= 0 seconds", v.name, v.v)
		}
	}
	p.b.observe(in.Current)
	p.t.cooldown = p.Cooldown()
	for s, v := range [numLatencySignals]float64{CompletionLatency: f.CompletionP99, RTTLatency: f.RTTP99, SmoothedRTTLatency: f.SmoothedRTT} {
		if h := &p.healthy[s]; v > 0 && (*h == 0 || v < *h) {
			*h = v
		}
	}
	high := false
	if lat, s := FlowLatency(f); s != NoLatency {
		high = lat > p.ratio(s)*p.healthy[s]
		if !high {
			p.b.recover()
		}
	}
	dest := -1
	if p.t.step(in.Time, in.Current, high) {
		dest = leastStressedOther(in.Obs.Switches, in.Current, in.Cordoned)
	}
	writeScores(scores, in.Current, dest)
	return nil
}
