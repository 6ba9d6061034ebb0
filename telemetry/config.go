package telemetry

import (
	"errors"
	"fmt"
	"math"

	"github.com/proflow-sdn/proflow"
)

// StateLayout names the layout of the state vector the default encoder
// writes: [x_agg (5|S|), x_leaf (2|L|), h (|S|), x_flow (4)] with the
// scaling and clipping of the paper's App. A (docs/method.md). A model
// file records it; a model trained on another layout is refused.
const StateLayout = "proflow-state-v1"

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
}

// Validate checks the sizes (at least two switches, as a Topology needs; no
// negative leaf count), that every scaling constant is positive and finite
// and that the drop window holds at least one sample.
func (c EncoderConfig) Validate() error {
	var errs []error
	if c.NumSwitches < 2 {
		errs = append(errs, fmt.Errorf("num_switches %d, want >= 2", c.NumSwitches))
	}
	if c.NumLeaves < 0 {
		errs = append(errs, fmt.Errorf("num_leaves %d, want >= 0", c.NumLeaves))
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
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: invalid encoder config: %w", err)
	}
	return nil
}

// Dim returns the state dimension 6|S|+2|L|+4: the layout's last block,
// x_flow, ends the vector.
func (c EncoderConfig) Dim() int { return c.FlowOffset() + FlowFeatures }

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
