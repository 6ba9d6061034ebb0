package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// dropCalibrate is the -drop value that calibrates the throughput-drop
// policy on the profile's own congestion-free traffic.
const dropCalibrate = "calibrate"

// calibrationEpisodes and calibrationSeed are proflow calibrate's defaults:
// -episodes and -seed.
const (
	calibrationEpisodes = 40
	calibrationSeed     = 1
)

// throughputDropSpec returns the throughput-drop policy for profile cfg
// and a note for the report saying where its settings came from: from a
// ThroughputDropConfig JSON file, or (value "calibrate") from
// eval.CalibrateThroughputDrop on the profile's congestion-free traffic
// with proflow calibrate's default episodes and seed, never from the
// scenarios being evaluated.
func throughputDropSpec(ctx context.Context, cmd, value string, cfg sim.Config, parallel int) (eval.PolicySpec, string, error) {
	var dc policy.ThroughputDropConfig
	var note string
	if value == dropCalibrate {
		r, err := eval.CalibrateThroughputDrop(ctx, cfg, calibrationEpisodes, calibrationSeed, parallel, eval.DefaultDropOptions())
		if err != nil {
			return eval.PolicySpec{}, "", fmt.Errorf("%s: calibrate %s on profile %s: %w", cmd, eval.ThroughputDropName, cfg.Name, err)
		}
		dc = r.Config
		note = fmt.Sprintf("%s calibrated on profile %s's congestion-free traffic (proflow calibrate): fraction %g, %d samples, cooldown %v (the slowest recovery from a move on idle paths, %.1f s).",
			eval.ThroughputDropName, cfg.Name, dc.Fraction, dc.Consecutive, dc.Cooldown, r.Recovery)
	} else {
		data, err := fileutil.ReadFile(value, 1<<16)
		if err != nil {
			return eval.PolicySpec{}, "", badFlag(cmd, "drop", value, fmt.Sprintf("%q or a ThroughputDropConfig JSON file (%v)", dropCalibrate, err))
		}
		if dc, err = policy.ReadThroughputDropConfig(bytes.NewReader(data)); err != nil {
			return eval.PolicySpec{}, "", badFlag(cmd, "drop", value, fmt.Sprintf("a ThroughputDropConfig JSON file (%v)", err))
		}
		note = fmt.Sprintf("%s settings from %s: fraction %g, %d samples, cooldown %v.", eval.ThroughputDropName, value, dc.Fraction, dc.Consecutive, dc.Cooldown)
	}
	spec, err := eval.ThroughputDropPolicy(dc)
	return spec, note, err
}
