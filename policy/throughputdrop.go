package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/jsonend"
)

// ThroughputDropConfig holds the settings of the throughput-drop reference
// policy. Start from DefaultThroughputDropConfig, or from what proflow
// calibrate measures on congestion-free traffic.
type ThroughputDropConfig struct {
	// Fraction is f: a sample whose throughput φ is strictly below f × the
	// healthy level is a low sample. In (0, 1).
	Fraction float64 `json:"fraction"`
	// Consecutive is how many strictly consecutive low samples fire a
	// reroute (the debounce).
	Consecutive int `json:"consecutive"`
	// Cooldown is how long after a move the policy does not fire again and
	// does not learn: the flow ramps up on its new path meanwhile.
	Cooldown time.Duration `json:"cooldown"`
	// Smoothing is α of the healthy level's exponential moving average,
	// per sample, in (0, 1]: h ← h + α(φ − h) on every sample at or above
	// f × h. The first sample the policy sees sets h.
	Smoothing float64 `json:"smoothing"`
}

// DefaultThroughputDropConfig returns the settings proflow calibrate
// measures for the testbed profile on congestion-free traffic (40
// episodes of the flow alone, ten per switch, and 40 in which it is moved
// once between two idle switches; policy/eval.CalibrateThroughputDrop):
// with a debounce of two samples, the highest fraction that never fires
// on the flow alone (0.9; 0.95 fires in 1 of 40), and a cooldown of the
// slowest recovery from a move on idle paths (10.5 s), rounded up, plus a
// second. A test (policy/eval) checks that the calibration still gives
// these values. Other fabrics recover at other speeds (the datacenter
// profile calibrates to a 2 s cooldown): run proflow calibrate for yours.
func DefaultThroughputDropConfig() ThroughputDropConfig {
	return ThroughputDropConfig{Fraction: 0.9, Consecutive: 2, Cooldown: 12 * time.Second, Smoothing: 0.1}
}

// Validate reports every problem of the configuration at once.
func (c ThroughputDropConfig) Validate() error {
	errs := dropErrors(c.Fraction, c.Consecutive, c.Smoothing)
	if c.Cooldown < 0 {
		errs = append(errs, fmt.Errorf("cooldown %v, want >= 0", c.Cooldown))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("policy: invalid throughput-drop config: %w", err)
	}
	return nil
}

// dropErrors lists the problems of a low-throughput detector's settings,
// shared by ThroughputDropConfig and DistressConfig.
func dropErrors(fraction float64, consecutive int, smoothing float64) []error {
	var errs []error
	if !(fraction > 0 && fraction < 1) {
		errs = append(errs, fmt.Errorf("fraction %v, want in (0, 1)", fraction))
	}
	if consecutive < 1 {
		errs = append(errs, fmt.Errorf("consecutive %d samples, want >= 1", consecutive))
	}
	if !(smoothing > 0 && smoothing <= 1) {
		errs = append(errs, fmt.Errorf("smoothing %v, want in (0, 1]", smoothing))
	}
	return errs
}

// MarshalJSON writes the configuration with the cooldown as a Go
// duration string ("12s").
func (c ThroughputDropConfig) MarshalJSON() ([]byte, error) {
	type plain ThroughputDropConfig
	return json.Marshal(struct {
		plain
		Cooldown string `json:"cooldown"`
	}{plain(c), c.Cooldown.String()})
}

// UnmarshalJSON decodes a JSON object into c. Fields left out keep c's
// values; unknown fields are refused. The cooldown is a Go duration string
// ("12s") or a number of nanoseconds.
func (c *ThroughputDropConfig) UnmarshalJSON(data []byte) error {
	type plain ThroughputDropConfig
	v := struct {
		*plain
		Cooldown json.RawMessage `json:"cooldown"`
	}{plain: (*plain)(c)}
	if err := decodeFields(data, &v, "", reflect.TypeFor[ThroughputDropConfig]()); err != nil {
		return err
	}
	return setDuration(&c.Cooldown, "cooldown", v.Cooldown)
}

// ReadThroughputDropConfig reads one ThroughputDropConfig JSON object from
// r (at most 64 KiB): fields left out keep DefaultThroughputDropConfig's
// values, unknown fields are refused, and the result is validated.
func ReadThroughputDropConfig(r io.Reader) (ThroughputDropConfig, error) {
	c := DefaultThroughputDropConfig()
	dec := json.NewDecoder(io.LimitReader(r, 1<<16))
	if err := dec.Decode(&c); err != nil {
		return ThroughputDropConfig{}, fmt.Errorf("policy: throughput-drop config: decode: %w", err)
	}
	if jsonend.End(dec) != nil {
		return ThroughputDropConfig{}, errors.New("policy: throughput-drop config: trailing data after the JSON object, want one object")
	}
	if err := c.Validate(); err != nil {
		return ThroughputDropConfig{}, err
	}
	return c, nil
}

// ThroughputDrop is a reference policy on the protected flow's own signal:
// it reroutes when the flow's throughput falls well below the level it
// keeps when healthy. It reads no switch counter to decide when to move,
// only to decide where, so it needs no threshold fitted to a fabric's
// counters; it is the strongest simple rule a practitioner would deploy
// against bulk transfers (it acts within a sample or two of a collapse).
//
// # Rule
//
// It keeps h, the flow's healthy throughput: set by the first sample it
// sees (the controller calls policies only after its baseline phase, when
// the flow runs at rate), then an exponential moving average (Smoothing)
// over the samples at or above Fraction × h, outside a move's cooldown.
// A sample with φ < Fraction × h (strictly) is low; Consecutive strictly
// consecutive low samples fire a reroute.
//
// When it fires, the destination is the switch with the lowest overflow
// rate ξ (the least stressed bucket), then the fewest flows, then the
// lowest transmit rate, then the lowest index; the current switch is never
// the destination. The destination scores 1 and every other switch 0;
// otherwise the current switch scores 1. Pair it with Immediate.
//
// # Cooldown
//
// As for Reactive: a change of Input.Current is a move dated at the
// previous step; the count restarts and the policy does not fire, nor
// learn h, until the cooldown has passed (the flow recovers from the move
// meanwhile, and its ramp is not its healthy level). A move made before
// the flow recovered from the previous one (no sample at or above
// Fraction × h between them) doubles the cooldown, up to 16 × Cooldown; a
// move after a recovery restores it. The calibration measures recovery
// from moves between idle switches, and a flow that collapsed before it
// moved can take longer to recover (CUBIC restarts from the small window
// it collapsed to): without the doubling the rule would move such a flow
// again and again while it recovers, as route-flap damping stops a
// flapping route.
//
// # Parameters
//
//	Fraction     f, low below f × h, strict       default 0.9
//	Consecutive  low samples in a row             default 2 (1 s at 500 ms)
//	Cooldown     no second reroute before this    default 12 s, doubled
//	             for each move in a row before a recovery (at most 16×)
//	Smoothing    α of h's moving average          default 0.1 per sample
//
// ThroughputDrop implements proflow.Resetter. It is not safe for
// concurrent use.
type ThroughputDrop struct {
	cfg     ThroughputDropConfig
	t       trigger
	b       backoff
	healthy float64 // h; 0 before the first sample
}

var (
	_ proflow.Policy   = (*ThroughputDrop)(nil)
	_ proflow.Resetter = (*ThroughputDrop)(nil)
)

// NewThroughputDrop returns a throughput-drop policy with the given
// settings, or their validation error.
func NewThroughputDrop(cfg ThroughputDropConfig) (*ThroughputDrop, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &ThroughputDrop{cfg: cfg, t: newTrigger(cfg.Consecutive, cfg.Cooldown), b: newBackoff()}, nil
}

// Config returns the policy's settings.
func (p *ThroughputDrop) Config() ThroughputDropConfig { return p.cfg }

// Healthy returns h, the healthy throughput learnt so far, bytes/s; 0
// before the first sample.
func (p *ThroughputDrop) Healthy() float64 { return p.healthy }

// Reset forgets the healthy level, the sample count and the last move.
func (p *ThroughputDrop) Reset() {
	p.t.reset()
	p.healthy, p.b = 0, newBackoff()
}

// Cooldown returns the cooldown in force: Cooldown, doubled for every move
// in a row made before the flow recovered.
func (p *ThroughputDrop) Cooldown() time.Duration { return p.b.cooldown(p.cfg.Cooldown) }

// Score applies the rule to in.Obs and writes the scores. It refuses a
// throughput that is negative or not finite.
func (p *ThroughputDrop) Score(scores []float64, in *proflow.Input) error {
	if err := checkInput("throughput-drop", scores, in, true); err != nil {
		return err
	}
	phi := in.Obs.Flow.Throughput
	if !(phi >= 0) || math.IsInf(phi, 0) {
		return fmt.Errorf("policy: throughput-drop: flow throughput %v, want a finite rate >= 0", phi)
	}
	if p.healthy == 0 {
		p.healthy = phi
	}
	// A move made before the flow recovered from the previous doubles the
	// cooldown; one after a recovery restores it.
	p.b.observe(in.Current)
	p.t.cooldown = p.Cooldown()
	low := phi < p.cfg.Fraction*p.healthy
	fire := p.t.step(in.Time, in.Current, low)
	if !low && !p.t.cooling(in.Time) {
		p.healthy += p.cfg.Smoothing * (phi - p.healthy)
	}
	if !low {
		p.b.recover()
	}
	dest := -1
	if fire {
		dest = leastStressedOther(in.Obs.Switches, in.Current, in.Cordoned)
	}
	writeScores(scores, in.Current, dest)
	return nil
}
