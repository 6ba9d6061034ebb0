package training

import (
	"fmt"

	"github.com/proflow-sdn/proflow/telemetry"
)

// PermuteState writes into dst the state src with the aggregation switches
// renamed by perm: switch k of src becomes switch perm[k] of dst, its block
// of x_agg and its placement one-hot entry moving with it; the leaf and flow
// features stay. The fabric is symmetric in its aggregation switches (every
// one connects every leaf through an identical bucket), so a transition
// relabelled this way, with its actions mapped through perm too, is as real
// as the original: trainers use it to keep the networks from learning the
// corpus's accidental preferences for one switch (TrainConfig.PermuteSwitches).
// dst and src must not overlap.
func PermuteState(enc telemetry.EncoderConfig, dst, src []float32, perm []int) error {
	n, dim := enc.NumSwitches, enc.Dim()
	if len(dst) != dim || len(src) != dim {
		return fmt.Errorf("training: permute state: %d and %d values, want %d", len(dst), len(src), dim)
	}
	if err := checkPerm(perm, n); err != nil {
		return err
	}
	copy(dst, src)
	p := enc.PlacementOffset()
	for k, to := range perm {
		copy(dst[enc.AggOffset(to):][:enc.SwitchWidth()], src[enc.AggOffset(k):][:enc.SwitchWidth()])
		dst[p+to] = src[p+k]
	}
	return nil
}

func checkPerm(perm []int, n int) error {
	if len(perm) != n {
		return fmt.Errorf("training: permutation %v of %d switches, want %d", perm, len(perm), n)
	}
	seen := make([]bool, n)
	for _, k := range perm {
		if k < 0 || k >= n || seen[k] {
			return fmt.Errorf("training: %v is not a permutation of 0..%d", perm, n-1)
		}
		seen[k] = true
	}
	return nil
}
