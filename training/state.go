package training

import (
	"fmt"

	"github.com/proflow-sdn/proflow/telemetry"
)

// ClampState projects a predicted state onto the values the encoder can
// produce with the protected flow on switch current: every feature is
// clipped to its range (as the encoder clips it, App. A: signed overflow in
// [−1, 1] and flow count in [−0.5, 1] on the current switch, [0, 1]
// elsewhere; rates of change in [−1, 1]; everything else in [0, 1]) and the
// placement one-hot is set to current exactly. It returns an error, leaving s untouched, when len(s) is
// not enc.Dim() or current is not a switch index.
func ClampState(enc telemetry.EncoderConfig, s []float32, current int) error {
	if len(s) != enc.Dim() {
		return fmt.Errorf("training: clamp state: %d values, want %d", len(s), enc.Dim())
	}
	if current < 0 || current >= enc.NumSwitches {
		return fmt.Errorf("training: clamp state: switch %d out of range, want 0..%d", current, enc.NumSwitches-1)
	}
	for k := range enc.NumSwitches {
		x := s[enc.AggOffset(k):][:enc.SwitchWidth()]
		clip32(&x[telemetry.FeatureTxRate], 0, 1)
		clip32(&x[telemetry.FeatureTxRateChange], -1, 1)
		if k == current {
			clip32(&x[telemetry.FeatureOverflow], -1, 1)
			clip32(&x[telemetry.FeatureFlowCount], -0.5, 1)
		} else {
			clip32(&x[telemetry.FeatureOverflow], 0, 1)
			clip32(&x[telemetry.FeatureFlowCount], 0, 1)
		}
		clip32(&x[telemetry.FeatureElephant], 0, 1)
		for f := telemetry.FeatureQueue; f < len(x); f++ {
			clip32(&x[f], 0, 1) // backlog, deficit, vacated flows
		}
	}
	for l := range enc.NumLeaves {
		x := s[enc.LeafOffset(l):][:telemetry.LeafFeatures]
		clip32(&x[telemetry.FeatureLeafIngress], 0, 1)
		clip32(&x[telemetry.FeatureLeafTxRate], 0, 1)
	}
	h := s[enc.PlacementOffset():][:enc.NumSwitches]
	clear(h)
	h[current] = 1
	x := s[enc.FlowOffset():][:enc.FlowWidth()]
	clip32(&x[telemetry.FeatureThroughput], 0, 1)
	clip32(&x[telemetry.FeatureCongestionRate], 0, 1)
	clip32(&x[telemetry.FeatureThroughputChange], -1, 1)
	clip32(&x[telemetry.FeatureDrop], 0, 1)
	if len(x) > telemetry.FeatureAppLimited {
		clip32(&x[telemetry.FeatureLatency], 0, 1)
		clip32(&x[telemetry.FeatureAppLimited], 0, 1)
	}
	if len(x) > telemetry.FeatureOwnDeficit {
		clip32(&x[telemetry.FeatureOwnDeficit], 0, 1)
	}
	if len(x) > telemetry.FeatureOwnExcess {
		clip32(&x[telemetry.FeatureOwnExcess], 0, 1)
	}
	return nil
}

// Placement returns the switch whose placement one-hot entry is 1 in s, or
// an error if s is not a state of enc's layout with a valid one-hot.
func Placement(enc telemetry.EncoderConfig, s []float32) (int, error) {
	if len(s) != enc.Dim() {
		return -1, fmt.Errorf("training: placement: %d values, want %d", len(s), enc.Dim())
	}
	k := -1
	for i, v := range s[enc.PlacementOffset():][:enc.NumSwitches] {
		switch {
		case v == 1 && k < 0:
			k = i
		case v != 0:
			return -1, fmt.Errorf("training: placement one-hot %v is not one-hot", s[enc.PlacementOffset():][:enc.NumSwitches])
		}
	}
	if k < 0 {
		return -1, fmt.Errorf("training: placement one-hot %v has no entry set", s[enc.PlacementOffset():][:enc.NumSwitches])
	}
	return k, nil
}

// clip32 limits *x to [lo, hi], mapping NaN to lo.
func clip32(x *float32, lo, hi float32) {
	switch v := *x; {
	case v > hi:
		*x = hi
	case v >= lo:
	default: // below lo, or NaN
		*x = lo
	}
}
