package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// dropCalibrate is the -drop (and -latency) value that calibrates the
// throughput-drop (latency-threshold) policy on the profile's own
// congestion-free traffic.
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
		var err error
		if dc, err = readConfigFlag(cmd, "drop", value, "ThroughputDropConfig", policy.ReadThroughputDropConfig); err != nil {
			return eval.PolicySpec{}, "", err
		}
		note = fmt.Sprintf("%s settings from %s: fraction %g, %d samples, cooldown %v.", eval.ThroughputDropName, value, dc.Fraction, dc.Consecutive, dc.Cooldown)
	}
	spec, err := eval.ThroughputDropPolicy(dc)
	return spec, note, err
}

// latencyThresholdSpec is throughputDropSpec for the latency-threshold
// policy (flag -latency): its settings from a LatencyThresholdConfig JSON
// file, or (value "calibrate") from eval.CalibrateLatencyThreshold on the
// profile's congestion-free traffic of every kind of flow.
func latencyThresholdSpec(ctx context.Context, cmd, value string, cfg sim.Config, parallel int) (eval.PolicySpec, string, error) {
	var lc policy.LatencyThresholdConfig
	var note string
	if value == dropCalibrate {
		r, err := eval.CalibrateLatencyThreshold(ctx, cfg, calibrationEpisodes, calibrationSeed, parallel, eval.DefaultLatencyOptions())
		if err != nil {
			return eval.PolicySpec{}, "", fmt.Errorf("%s: calibrate %s on profile %s: %w", cmd, eval.LatencyThresholdName, cfg.Name, err)
		}
		lc = r.Config
		note = fmt.Sprintf("%s calibrated on profile %s's congestion-free traffic of every kind (proflow calibrate): ratio %g, completion ratio %g, %d samples, cooldown %v.",
			eval.LatencyThresholdName, cfg.Name, lc.Ratio, lc.CompletionRatio, lc.Consecutive, lc.Cooldown)
	} else {
		var err error
		if lc, err = readConfigFlag(cmd, "latency", value, "LatencyThresholdConfig", policy.ReadLatencyThresholdConfig); err != nil {
			return eval.PolicySpec{}, "", err
		}
		note = fmt.Sprintf("%s settings from %s: ratio %g, completion ratio %g, %d samples, cooldown %v.",
			eval.LatencyThresholdName, value, lc.Ratio, lc.CompletionRatio, lc.Consecutive, lc.Cooldown)
	}
	spec, err := eval.LatencyThresholdPolicy(lc)
	return spec, note, err
}

// calibratedSpec is the signature of throughputDropSpec and
// latencyThresholdSpec.
type calibratedSpec func(ctx context.Context, cmd, value string, cfg sim.Config, parallel int) (eval.PolicySpec, string, error)

// calibratedPolicy returns how to build the reference policy name when its
// settings come from a calibration (throughput-drop, latency-threshold), or
// nil for the others.
func calibratedPolicy(name string) calibratedSpec {
	switch name {
	case eval.ThroughputDropName:
		return throughputDropSpec
	case eval.LatencyThresholdName:
		return latencyThresholdSpec
	}
	return nil
}

// readConfigFlag reads the JSON configuration file path given to flag of
// cmd with read; what names its type in the usage error of a file that
// cannot be read or decoded.
func readConfigFlag[T any](cmd, flag, path, what string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	data, err := fileutil.ReadFile(path, 1<<16)
	if err != nil {
		return zero, badFlag(cmd, flag, path, fmt.Sprintf("%q or a %s JSON file (%v)", dropCalibrate, what, err))
	}
	c, err := read(bytes.NewReader(data))
	if err != nil {
		return zero, badFlag(cmd, flag, path, fmt.Sprintf("a %s JSON file (%v)", what, err))
	}
	return c, nil
}
