package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/training"
)

// Files written by probe.
const (
	probeCSV         = "probe.csv"
	probeCrowdPNG    = "probe-crowd.png"
	probeOverflowPNG = "probe-overflow.png"
)

func probeCommand() command {
	return command{
		name:    "probe",
		summary: "Q-network signal analysis (Fig. 8): decision margin over the crowd and overflow sweeps; CSV, plots, flip points",
		run:     runProbe,
	}
}

func runProbe(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("probe", "probe [-model FILE] [-out DIR]")
	model := fs.String("model", defaultModel, "model file of the agent")
	out := fs.String("out", "out/probe", "directory for probe.csv and the plots")
	margin := fs.Float64("margin", policy.DefaultGateConfig().Margin, "gate margin δ: a point flips the decision when its margin exceeds it")
	crowdOverflow := fs.Float64("crowd-overflow", 5000, "overflow rate on k* held during the crowd sweep, bytes/s")
	overflowCount := fs.Float64("overflow-flows", 2, "flow count on k* held during the overflow sweep (flow-table entries)")
	crowdThreshold := fs.Float64("crowd-threshold", policy.DefaultCrowdConfig().Threshold, "crowd threshold T marked on the crowd plot, flows")
	reactiveThreshold := fs.Float64("reactive-threshold", policy.DefaultReactiveConfig().Threshold, "reactive threshold ξ_th marked on the overflow plot, bytes/s")
	seed := fs.Uint64("seed", 1, "seed of the simulated runs that measure the flow alone on each switch")
	prof := profileFlag(fs)
	if err := parseFlags(fs, "probe", args); err != nil {
		return err
	}
	var bad []error
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"margin", *margin}, {"crowd-overflow", *crowdOverflow}, {"overflow-flows", *overflowCount},
		{"crowd-threshold", *crowdThreshold}, {"reactive-threshold", *reactiveThreshold},
	} {
		if err := checkNonNegative("probe", f.name, f.v); err != nil {
			bad = append(bad, err)
		}
	}
	if err := errors.Join(bad...); err != nil {
		return err
	}
	m, meta, err := qnet.Load(*model)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	simCfg, err := prof.load("probe")
	if err != nil {
		return err
	}
	// A universal model is probed on the profile's fabric, whatever its
	// size; a per-fabric model only on its own.
	enc := meta.Encoder
	switch {
	case meta.Universal():
		enc = telemetry.DefaultEncoderConfig(simCfg.Topology())
	case simCfg.Switches != meta.NumSwitches || len(simCfg.CongestionLeaves) != meta.NumLeaves:
		return fmt.Errorf("probe: the model is for %d switches and %d congestion leaves, the simulated fabric that measures the flow alone has %d and %d",
			meta.NumSwitches, meta.NumLeaves, simCfg.Switches, len(simCfg.CongestionLeaves))
	}
	agent, err := policy.NewAgent(m, meta, enc)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	alone, bases, err := training.AloneObservations(simCfg, *seed, max(10*time.Second, simCfg.ControllerWarmup+2*time.Second), 10*time.Second)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	cfg := training.DefaultProbeConfig(*margin)
	cfg.Alone, cfg.Baselines = alone, bases
	cfg.CrowdOverflow, cfg.OverflowCount = *crowdOverflow, *overflowCount
	res, err := training.Probe(agent, agent.EncoderConfig(), cfg)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	names := simCfg.Topology().Switches
	if err := writeProbeCSV(filepath.Join(*out, probeCSV), res, names); err != nil {
		return err
	}
	lines := probeLines{margin: *margin, crowd: *crowdThreshold, reactive: *reactiveThreshold, crowdOverflow: *crowdOverflow, overflowCount: *overflowCount}
	if err := plotProbe(filepath.Join(*out, probeCrowdPNG), res, training.SweepCrowd, names, lines); err != nil {
		return err
	}
	if err := plotProbe(filepath.Join(*out, probeOverflowPNG), res, training.SweepOverflow, names, lines); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "model %s (corpus: %s)\n", *model, meta.Corpus)
	for k, b := range bases {
		fmt.Fprintf(e.stdout, "flow alone on %s: φ0 %.2f MB/s, ξ̄ %.0f B/s, n̄ %.0f\n", names[k], b.Throughput/1e6, b.Overflow, b.FlowCount)
	}
	writeFlips(e.stdout, res, names, lines)
	fmt.Fprintf(e.stdout, "wrote %s, %s, %s\n", filepath.Join(*out, probeCSV), filepath.Join(*out, probeCrowdPNG), filepath.Join(*out, probeOverflowPNG))
	return nil
}

// probeLines are the reference values drawn on the plots and printed.
type probeLines struct {
	margin, crowd, reactive      float64
	crowdOverflow, overflowCount float64
}

// writeFlips prints the flip point of each sweep and switch.
func writeFlips(w io.Writer, res *training.ProbeResult, names []string, l probeLines) {
	fmt.Fprintf(w, "flip points (first x with margin max_{k≠k*} Q − Q(k*) > δ = %g):\n", l.margin)
	for _, sweep := range []string{training.SweepCrowd, training.SweepOverflow} {
		for k, name := range names {
			f, ok := res.Flip(sweep, k)
			if !ok {
				continue
			}
			x := "never"
			switch {
			case math.IsNaN(f.X):
			case sweep == training.SweepCrowd:
				x = fmt.Sprintf("%g flows", f.X)
			default:
				x = fmt.Sprintf("%g B/s", f.X)
			}
			held := fmt.Sprintf("ξ held at %g B/s; crowd threshold T = %g", l.crowdOverflow, l.crowd)
			if sweep == training.SweepOverflow {
				held = fmt.Sprintf("n held at %g; reactive threshold ξ_th = %g B/s", l.overflowCount, l.reactive)
			}
			fmt.Fprintf(w, "  %-8s k* = %s: %s (%s)\n", sweep, name, x, held)
		}
	}
}

func writeProbeCSV(path string, res *training.ProbeResult, names []string) error {
	head := []string{"sweep", "switch", "x", "margin", "best"}
	for _, n := range names {
		head = append(head, "q_"+n)
	}
	rows := [][]string{head}
	ftoa := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, p := range res.Points {
		best := ""
		if p.Best >= 0 {
			best = names[p.Best]
		}
		row := []string{p.Sweep, names[p.Switch], ftoa(p.X), ftoa(p.Margin), best}
		for _, q := range p.Scores {
			row = append(row, ftoa(q))
		}
		rows = append(rows, row)
	}
	if err := fileutil.WriteCSV(path, rows); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	return nil
}
