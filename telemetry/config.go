package telemetry

import (
	"errors"
	"fmt"
	"math"

	"github.com/proflow-sdn/proflow"
)

// The state layouts the encoder writes (package documentation, "Layout").
// A model file records the layout it was trained on; a model of another
// layout is refused.
const (
	// StateLayout names the paper's layout, [x_agg (5|S|), x_leaf (2|L|),
	// h (|S|), x_flow (4)] with the scaling and clipping of App. A
	// (docs/method.md). An EncoderConfig with an empty Layout writes it.
	StateLayout = "proflow-state-v1"
	// StateLayoutV2 names proflow's second layout, [x_agg (6|S|), x_leaf
	// (2|L|), h (|S|), x_flow (6)]: v1 with each switch's uplink backlog
	// (FeatureQueue), and the protected flow's latency inflation
	// (FeatureLatency) and application-limited share (FeatureAppLimited),
	// appended to their blocks.
	StateLayoutV2 = "proflow-state-v2"
	// StateLayoutV3 names proflow's third layout, [x_agg (7|S|), x_leaf
	// (2|L|), h (|S|), x_flow (6)]: v2 with each switch's reserve deficit
	// (FeatureDeficit), how far a token bucket of DeficitScale bytes at
	// the bucket rate would be drained by what the switch transmitted,
	// appended to its block.
	StateLayoutV3 = "proflow-state-v3"
	// StateLayoutV4 names proflow's fourth layout, [x_agg (7|S|), x_leaf
	// (2|L|), h (|S|), x_flow (6)]: v2 with each switch's vacated flows
	// (FeatureVacated), how many flows have left the switch in the last
	// VacatedSeconds, appended to its block.
	StateLayoutV4 = "proflow-state-v4"
	// StateLayoutV5 names proflow's fifth layout, [x_agg (8|S|), x_leaf
	// (2|L|), h (|S|), x_flow (6)]: v2 with each switch's reserve deficit
	// (FeatureDeficit, as v3) and then its vacated flows (at
	// FeatureVacatedV5, as v4's FeatureVacated) appended to its block.
	// The deficit says how much of a switch's reserve is gone; the
	// vacated flows say whether the crowd that drained it has left.
	StateLayoutV5 = "proflow-state-v5"
	// StateLayoutV6 names proflow's sixth layout, [x_agg (6|S|), x_leaf
	// (2|L|), h (|S|), x_flow (7)]: v2 with the reserve deficit of the
	// switch carrying the flow (FeatureOwnDeficit) appended to x_flow, and
	// no deficit in the switch blocks.
	StateLayoutV6 = "proflow-state-v6"
	// StateLayoutV7 names proflow's seventh layout, [x_agg (7|S|), x_leaf
	// (2|L|), h (|S|), x_flow (7)]: v6 with each switch's reserve drain
	// rate (FeatureExcess, its transmit rate above the bucket rate)
	// appended to its block.
	StateLayoutV7 = "proflow-state-v7"
	// StateLayoutV8 names proflow's eighth layout, [x_agg (6|S|), x_leaf
	// (2|L|), h (|S|), x_flow (8)]: v6 with the reserve drain rate of the
	// switch carrying the flow (FeatureOwnExcess) appended to x_flow, and
	// no drain rate in the switch blocks. The committed default model's
	// layout since session 26 (models/README.md).
	StateLayoutV8 = "proflow-state-v8"
)

// EncoderConfig holds the scaling constants and windows of the default state
// encoder. Start from DefaultEncoderConfig, which derives every constant from
// the topology's bucket rate.
type EncoderConfig struct {
	// NumSwitches is |S| and NumLeaves is |L|.
	NumSwitches int `json:"num_switches"`
	NumLeaves   int `json:"num_leaves"`
	// RateScale is Cρ, the bucket rate in bytes/s; it scales ρ, ρ̇, e, μ and F.
	RateScale float64 `json:"rate_scale"`
	// OverflowScale is Cξ, the overflow rate (bytes/s) that maps to 1.
	OverflowScale float64 `json:"overflow_scale"`
	// FlowCountScale is Cn, the soft saturation of the flow count.
	FlowCountScale float64 `json:"flow_count_scale"`
	// IngressScale is Cλ, the leaf ingress rate (bytes/s) that maps to 1.
	IngressScale float64 `json:"ingress_scale"`
	// ThroughputScale is Cφ, the protected-flow rate (bytes/s) that maps to 1.
	ThroughputScale float64 `json:"throughput_scale"`
	// DropWindow is the number of samples in the rolling maximum φ̄ behind
	// the drop signal d_t.
	DropWindow int `json:"drop_window"`
	// Layout is the state layout written: empty or StateLayout (the
	// paper's), StateLayoutV2, StateLayoutV3, StateLayoutV4,
	// StateLayoutV5, StateLayoutV6, StateLayoutV7 or StateLayoutV8.
	Layout string `json:"layout,omitempty"`
	// QueueScale is Cq, the uplink backlog (bytes) that maps to 1 in
	// FeatureQueue (StateLayoutV2 to V8); it must be 0 in the v1 layout,
	// which has no such feature.
	QueueScale float64 `json:"queue_scale,omitempty"`
	// DeficitScale is CD, the depth in bytes of the virtual token bucket
	// behind FeatureDeficit (filled at RateScale) in StateLayoutV3 and
	// V5, and behind FeatureOwnDeficit in StateLayoutV6 to V8; it must be
	// 0 in the other layouts.
	DeficitScale float64 `json:"deficit_scale,omitempty"`
	// ExcessScale is Cx, the transmit rate above the bucket rate (bytes/s)
	// that maps to 1 in FeatureExcess (StateLayoutV7) and FeatureOwnExcess
	// (StateLayoutV8); it must be 0 in the other layouts.
	ExcessScale float64 `json:"excess_scale,omitempty"`
	// VacatedSeconds is T, the seconds in which the leaky peak behind
	// FeatureVacated falls by FlowCountScale flows in StateLayoutV4 and
	// V5; it must be 0 in the other layouts.
	VacatedSeconds float64 `json:"vacated_seconds,omitempty"`
}

// LayoutName returns the name of the layout c writes: StateLayout when
// Layout is empty.
func (c EncoderConfig) LayoutName() string {
	if c.Layout == "" {
		return StateLayout
	}
	return c.Layout
}

// SwitchWidth returns the number of features per switch in c's layout:
// SwitchFeatures (v1), SwitchFeaturesV2 (v2, v6 and v8), V3, V4, V5 or
// V7.
func (c EncoderConfig) SwitchWidth() int {
	switch c.Layout {
	case StateLayoutV2, StateLayoutV6, StateLayoutV8:
		return SwitchFeaturesV2
	case StateLayoutV7:
		return SwitchFeaturesV7
	case StateLayoutV3:
		return SwitchFeaturesV3
	case StateLayoutV4:
		return SwitchFeaturesV4
	case StateLayoutV5:
		return SwitchFeaturesV5
	}
	return SwitchFeatures
}

// FlowWidth returns the number of features of x_flow in c's layout:
// FlowFeatures (v1), FlowFeaturesV2 (v2 to v5), FlowFeaturesV6 (v6 and
// v7) or FlowFeaturesV8 (v8).
func (c EncoderConfig) FlowWidth() int {
	if c.Layout == StateLayoutV8 {
		return FlowFeaturesV8
	}
	if c.HasOwnDeficit() {
		return FlowFeaturesV6
	}
	if c.HasFlowSignals() {
		return FlowFeaturesV2
	}
	return FlowFeatures
}

// HasFlowSignals reports whether c's layout carries the backlog, latency
// and application-limited features StateLayoutV2 added (v2 to v8 do).
func (c EncoderConfig) HasFlowSignals() bool {
	switch c.Layout {
	case StateLayoutV2, StateLayoutV3, StateLayoutV4, StateLayoutV5, StateLayoutV6, StateLayoutV7, StateLayoutV8:
		return true
	}
	return false
}

// HasVacated reports whether c's layout carries the vacated flows (v4 and
// v5; at VacatedFeature in the switch block).
func (c EncoderConfig) HasVacated() bool {
	return c.Layout == StateLayoutV4 || c.Layout == StateLayoutV5
}

// HasDeficit reports whether c's layout carries FeatureDeficit (v3 and
// v5).
func (c EncoderConfig) HasDeficit() bool {
	return c.Layout == StateLayoutV3 || c.Layout == StateLayoutV5
}

// HasOwnDeficit reports whether c's layout carries FeatureOwnDeficit in
// x_flow (v6 to v8).
func (c EncoderConfig) HasOwnDeficit() bool {
	return c.Layout == StateLayoutV6 || c.Layout == StateLayoutV7 || c.Layout == StateLayoutV8
}

// HasExcess reports whether c's layout carries FeatureExcess in the switch
// blocks (v7).
func (c EncoderConfig) HasExcess() bool { return c.Layout == StateLayoutV7 }

// HasOwnExcess reports whether c's layout carries FeatureOwnExcess in
// x_flow (v8).
func (c EncoderConfig) HasOwnExcess() bool { return c.Layout == StateLayoutV8 }

// VacatedFeature returns the place of the vacated flows in a switch's
// block: FeatureVacated in StateLayoutV4, FeatureVacatedV5 in
// StateLayoutV5, and -1 in the layouts without them.
func (c EncoderConfig) VacatedFeature() int {
	switch c.Layout {
	case StateLayoutV4:
		return FeatureVacated
	case StateLayoutV5:
		return FeatureVacatedV5
	}
	return -1
}

// KnownLayout reports whether name is a state layout this package writes
// (StateLayout or StateLayoutV2 to V8).
func KnownLayout(name string) bool {
	switch name {
	case StateLayout, StateLayoutV2, StateLayoutV3, StateLayoutV4, StateLayoutV5, StateLayoutV6, StateLayoutV7, StateLayoutV8:
		return true
	}
	return false
}

// Layouts returns the names of the layouts this package writes, for
// messages.
func Layouts() string {
	return fmt.Sprintf("%q, %q, %q, %q, %q, %q, %q or %q", StateLayout, StateLayoutV2, StateLayoutV3, StateLayoutV4, StateLayoutV5, StateLayoutV6, StateLayoutV7, StateLayoutV8)
}

// WithLayout returns c writing layout (StateLayout or StateLayoutV2 to
// V8), with the constants that layout adds derived as
// DefaultEncoderConfig derives the others (Cq = C·5 ms, CD = C·60 s, Cx =
// C·ExcessFactor, C = RateScale; T = VacatedDefault) and those it lacks
// zeroed.
// It does not validate: an unknown layout is Validate's error.
func (c EncoderConfig) WithLayout(layout string) EncoderConfig {
	c.Layout, c.QueueScale, c.DeficitScale, c.VacatedSeconds, c.ExcessScale = layout, 0, 0, 0, 0
	switch layout {
	case StateLayout:
		c.Layout = ""
	case StateLayoutV2:
		c.QueueScale = c.RateScale * 5e-3 // 5 ms of the bucket rate
	case StateLayoutV3:
		c.QueueScale = c.RateScale * 5e-3
		c.DeficitScale = c.RateScale * DeficitSeconds
	case StateLayoutV4:
		c.QueueScale = c.RateScale * 5e-3
		c.VacatedSeconds = VacatedDefault
	case StateLayoutV5:
		c.QueueScale = c.RateScale * 5e-3
		c.DeficitScale = c.RateScale * DeficitSeconds
		c.VacatedSeconds = VacatedDefault
	case StateLayoutV6:
		c.QueueScale = c.RateScale * 5e-3
		c.DeficitScale = c.RateScale * DeficitSeconds
	case StateLayoutV7, StateLayoutV8:
		c.QueueScale = c.RateScale * 5e-3
		c.DeficitScale = c.RateScale * DeficitSeconds
		c.ExcessScale = c.RateScale * ExcessFactor
	}
	return c
}

// ExcessFactor is the default Cx of FeatureExcess in units of the bucket
// rate (WithLayout: Cx = C·5): the built-ins' fullest crowd sends its
// switch at about 6 C (S1's 5.7–6.2 C on the testbed profile), so it
// reads 1.
const ExcessFactor = 5

// VacatedDefault is the default T of FeatureVacated (WithLayout): 30 s,
// the period at which S6's crowd moves on, so that a switch a rolling
// crowd left reads vacated until the crowd's next move.
const VacatedDefault = 30

// DeficitSeconds is the default depth of FeatureDeficit's virtual bucket
// in seconds of the bucket rate (WithLayout: CD = C·60 s). The reserves
// behind a collapse on the testbed profile hold 50–53 s of the bucket
// rate (package southbound/sim, H-limit), so a collapse reads 0.8–0.9 and
// the feature does not saturate before it.
const DeficitSeconds = 60

// MaxSwitches and MaxLeaves bound EncoderConfig.NumSwitches and NumLeaves
// (Validate), far above any fabric the project runs (the simulator's
// fabrics have at most 64 switches and 250 leaves), so that Dim and the
// offsets of the state vector cannot overflow: a file declaring 2^62
// switches is refused, not read with a state dimension wrapped round.
const (
	MaxSwitches = 1 << 16
	MaxLeaves   = 1 << 16
)

// Validate checks the sizes (2..MaxSwitches switches, at least two as a
// Topology needs; 0..MaxLeaves leaves), that every scaling constant is
// positive and finite and that the drop window holds at least one sample.
func (c EncoderConfig) Validate() error {
	var errs []error
	if c.NumSwitches < 2 || c.NumSwitches > MaxSwitches {
		errs = append(errs, fmt.Errorf("num_switches %d, want 2..%d", c.NumSwitches, MaxSwitches))
	}
	if c.NumLeaves < 0 || c.NumLeaves > MaxLeaves {
		errs = append(errs, fmt.Errorf("num_leaves %d, want 0..%d", c.NumLeaves, MaxLeaves))
	}
	for _, f := range [...]struct {
		name string
		v    float64
	}{
		{"rate_scale", c.RateScale}, {"overflow_scale", c.OverflowScale}, {"flow_count_scale", c.FlowCountScale},
		{"ingress_scale", c.IngressScale}, {"throughput_scale", c.ThroughputScale},
	} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("%s %v, want a positive finite number", f.name, f.v))
		}
	}
	if c.DropWindow < 1 {
		errs = append(errs, fmt.Errorf("drop_window %d samples, want >= 1", c.DropWindow))
	}
	positive := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%s %v, want a positive finite number in layout %s", name, v, c.Layout))
		}
	}
	absent := func(name string, v float64, what string) {
		if v != 0 {
			errs = append(errs, fmt.Errorf("%s %v in layout %s, want 0 (the layout has no %s feature)", name, v, c.LayoutName(), what))
		}
	}
	if !c.HasVacated() {
		absent("vacated_seconds", c.VacatedSeconds, "vacated")
	}
	if c.HasExcess() || c.HasOwnExcess() {
		positive("excess_scale", c.ExcessScale)
	} else {
		absent("excess_scale", c.ExcessScale, "excess")
	}
	switch c.Layout {
	case "", StateLayout:
		absent("queue_scale", c.QueueScale, "queue")
		absent("deficit_scale", c.DeficitScale, "deficit")
	case StateLayoutV2:
		positive("queue_scale", c.QueueScale)
		absent("deficit_scale", c.DeficitScale, "deficit")
	case StateLayoutV3:
		positive("queue_scale", c.QueueScale)
		positive("deficit_scale", c.DeficitScale)
	case StateLayoutV4:
		positive("queue_scale", c.QueueScale)
		absent("deficit_scale", c.DeficitScale, "deficit")
		positive("vacated_seconds", c.VacatedSeconds)
	case StateLayoutV5:
		positive("queue_scale", c.QueueScale)
		positive("deficit_scale", c.DeficitScale)
		positive("vacated_seconds", c.VacatedSeconds)
	case StateLayoutV6, StateLayoutV7, StateLayoutV8:
		positive("queue_scale", c.QueueScale)
		positive("deficit_scale", c.DeficitScale)
	default:
		errs = append(errs, fmt.Errorf("layout %q, want %s (or empty)", c.Layout, Layouts()))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: invalid encoder config: %w", err)
	}
	return nil
}

// Dim returns the state dimension, 6|S|+2|L|+4 in the v1 layout,
// 7|S|+2|L|+6 in v2, 8|S|+2|L|+6 in v3 and v4, 9|S|+2|L|+6 in v5,
// 7|S|+2|L|+7 in v6, 8|S|+2|L|+7 in v7 and 7|S|+2|L|+8 in v8: the
// layout's last block, x_flow, ends the vector.
func (c EncoderConfig) Dim() int { return c.FlowOffset() + c.FlowWidth() }

// DefaultEncoderConfig derives the scaling constants from the topology (see
// the package documentation for the reasoning behind each default).
func DefaultEncoderConfig(t proflow.Topology) EncoderConfig {
	c := t.BucketRate
	return EncoderConfig{
		NumSwitches:     t.NumSwitches(),
		NumLeaves:       t.NumLeaves(),
		RateScale:       c,
		OverflowScale:   c * 2e-3, // 50,000 B/s for a 200 Mbit/s bucket
		FlowCountScale:  12,       // f_p plus five congesters, two entries each
		IngressScale:    2 * c,    // two hosts per leaf at full rate
		ThroughputScale: c,
		DropWindow:      10, // 5 s at 500 ms
	}
}
