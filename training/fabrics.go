package training

import (
	"errors"
	"fmt"

	"github.com/proflow-sdn/proflow/telemetry"
)

// Errors of CheckFabrics, matched with errors.Is.
var (
	// ErrScalingMismatch: two datasets are encoded with different layouts
	// or scalings (telemetry.EncoderConfig.ScalingMismatch), so one
	// universal model cannot read both.
	ErrScalingMismatch = errors.New("datasets encoded with different scalings")
	// ErrSameFabric: two datasets are of the same fabric size; a trainer
	// keeps one dynamics model per size, so merge them into one dataset.
	ErrSameFabric = errors.New("two datasets of the same fabric size")
	// ErrNotUniversal: several datasets were given to a Q-network that is
	// not universal, whose |S| outputs fit one fabric size.
	ErrNotUniversal = errors.New("several fabrics need a universal Q-network")
)

// FabricName names the fabric size of states encoded with enc, "4x3": the
// aggregation switches |S| and the congestion leaves |L|, as
// sim.Config.WithFabric names a resized profile.
func FabricName(enc telemetry.EncoderConfig) string {
	return fmt.Sprintf("%dx%d", enc.NumSwitches, enc.NumLeaves)
}

// CheckFabrics checks that one training run can learn from datasets
// encoded with encs, in that order: at least one; several only when
// universal (ErrNotUniversal); then no fabric size twice (ErrSameFabric) and,
// for a universal run, every encoder scaled like the first, with the fabric
// size and the bucket rate factored out (ErrScalingMismatch, naming the
// field and both values).
func CheckFabrics(encs []telemetry.EncoderConfig, universal bool) error {
	if len(encs) == 0 {
		return errors.New("training: no datasets, want at least one")
	}
	if len(encs) > 1 && !universal {
		return fmt.Errorf("training: %d datasets (%s): %w (universal: true), a per-fabric Q-network has |S| outputs for one size",
			len(encs), fabricNames(encs), ErrNotUniversal)
	}
	for i, e := range encs {
		if err := e.Validate(); err != nil {
			return fmt.Errorf("training: dataset %d: %w", i+1, err)
		}
		for j := range i {
			if encs[j].NumSwitches == e.NumSwitches && encs[j].NumLeaves == e.NumLeaves {
				return fmt.Errorf("training: datasets %d and %d are both of fabric %s: %w (one dynamics model per size): merge them",
					j+1, i+1, FabricName(e), ErrSameFabric)
			}
		}
		if i == 0 || !universal {
			continue
		}
		if field, mine, first, ok := e.ScalingMismatch(encs[0]); !ok {
			return fmt.Errorf("training: dataset %d (fabric %s) has %s %s, dataset 1 (fabric %s) %s: %w; collect both with the same layout and profile",
				i+1, FabricName(e), field, mine, FabricName(encs[0]), first, ErrScalingMismatch)
		}
	}
	return nil
}

func fabricNames(encs []telemetry.EncoderConfig) string {
	var s string
	for i, e := range encs {
		if i > 0 {
			s += ", "
		}
		s += FabricName(e)
	}
	return s
}
