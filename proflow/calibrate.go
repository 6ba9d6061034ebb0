package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/progress"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

func calibrateCommand() command {
	return command{
		name:    "calibrate",
		summary: "calibrate the reactive (App. E), crowd (App. G), throughput-drop and latency-threshold baselines on simulated or recorded traces",
		run:     runCalibrate,
	}
}

func runCalibrate(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("calibrate", "calibrate [-quiet DIR -single DIR -crowd DIR] [-episodes N] [-out DIR]")
	quietDir := fs.String("quiet", "", "`DIR` of recorded no-congestion traces, *.jsonl or *.jsonl.gz (default: simulate them)")
	singleDir := fs.String("single", "", "`DIR` of recorded single-congester traces, *.jsonl or *.jsonl.gz (default: simulate S11)")
	crowdDir := fs.String("crowd", "", "`DIR` of recorded crowd traces, *.jsonl or *.jsonl.gz (default: simulate S1, S5, S8)")
	episodes := fs.Int("episodes", 40, "simulated no-congestion episodes (10 per aggregation switch for 40)")
	repeats := fs.Int("repeats", 3, "simulated repeats of each single-congester and crowd scenario")
	seed := fs.Uint64("seed", 1, "base seed of simulated episodes")
	parallel := fs.Int("parallel", runtime.NumCPU(), "episodes simulated at once")
	out := fs.String("out", "out/calibrate", "`DIR` for calibration.md, throughput-drop.json, latency-threshold.json and false-alarms.png (created if missing)")
	prof := profileFlag(fs)
	if err := parseFlags(fs, "calibrate", args); err != nil {
		return err
	}
	if err := checkAtLeastOne("calibrate", flagInt{"episodes", *episodes}, flagInt{"repeats", *repeats}, flagInt{"parallel", *parallel}); err != nil {
		return err
	}
	cfg, err := prof.load("calibrate")
	if err != nil {
		return err
	}
	// load reads the traces in dir (named by flag), or simulates them when
	// dir is empty.
	load := func(flag, dir, what string, simulate func() ([]*trace.Episode, error)) ([]*trace.Episode, error) {
		if dir == "" {
			eps, err := simulate()
			if err != nil {
				return nil, fmt.Errorf("calibrate: simulate %s episodes: %w", what, err)
			}
			return eps, nil
		}
		eps, err := readTraces(dir)
		if err != nil {
			return nil, fmt.Errorf("calibrate: -%s %s: %w", flag, dir, err)
		}
		return eps, nil
	}
	simulateQuiet := func() ([]*trace.Episode, error) {
		return simulateEpisodes(ctx, e, "quiet", eval.QuietEpisodes(cfg, *episodes, *seed, "quiet", nil), *parallel)
	}
	quiet, err := load("quiet", *quietDir, "no-congestion", simulateQuiet)
	if err != nil {
		return err
	}
	thOpt := thresholdOptions(cfg)
	th, err := eval.AnalyseThreshold(quiet, thOpt)
	if err != nil {
		return fmt.Errorf("calibrate: reactive threshold: %w", err)
	}
	if *quietDir != "" {
		// Recorded traces: the profile's own no-congestion episodes beside
		// them, so that a profile can be checked against the fabric it
		// stands for.
		simQuiet, err := simulateQuiet()
		if err != nil {
			return fmt.Errorf("calibrate: simulate no-congestion episodes of profile %s: %w", cfg.Name, err)
		}
		simTh, err := eval.AnalyseThreshold(simQuiet, thOpt)
		if err != nil {
			return fmt.Errorf("calibrate: reactive threshold of profile %s: %w", cfg.Name, err)
		}
		writeSelfOverflowComparison(e.stdout, "recorded "+*quietDir, th, fmt.Sprintf("profile %s (%s)", cfg.Name, cfg.Digest()), simTh)
	}
	single, err := load("single", *singleDir, "single-congester", func() ([]*trace.Episode, error) {
		return simulateBuiltins(ctx, e, cfg, "single", []string{"S11"}, *repeats, *seed, *parallel)
	})
	if err != nil {
		return err
	}
	crowd, err := load("crowd", *crowdDir, "crowd", func() ([]*trace.Episode, error) {
		return simulateBuiltins(ctx, e, cfg, "crowd", []string{"S1", "S5", "S8"}, *repeats, *seed, *parallel)
	})
	if err != nil {
		return err
	}
	cnt, err := eval.AnalyseCount(quiet, single, crowd, 2, 16)
	if err != nil {
		return fmt.Errorf("calibrate: crowd threshold: %w", err)
	}
	// The throughput-drop policy: replayed on the same congestion-free
	// episodes; the recovery from a move comes from the profile's moved
	// episodes (a recorded fabric has none of its own).
	moved, err := simulateEpisodes(ctx, e, "moved", eval.MovedEpisodes(cfg, *episodes, *seed), *parallel)
	if err != nil {
		return fmt.Errorf("calibrate: simulate moved episodes: %w", err)
	}
	drop, err := eval.AnalyseDrop(quiet, moved, eval.DefaultDropOptions())
	if err != nil {
		return fmt.Errorf("calibrate: throughput-drop: %w", err)
	}
	// The latency-threshold policy: the same congestion-free episodes and
	// the profile's own of the other kinds of flow (rate, onoff, rr; a
	// recorded fabric's are bulk), moved ones of every kind likewise.
	quietKinds, err := simulateEpisodes(ctx, e, "quiet kinds", eval.LatencyQuietEpisodes(cfg, *episodes, *seed), *parallel)
	if err != nil {
		return fmt.Errorf("calibrate: simulate no-congestion episodes of every kind: %w", err)
	}
	movedKinds, err := simulateEpisodes(ctx, e, "moved kinds", eval.LatencyMovedEpisodes(cfg, *episodes, *seed), *parallel)
	if err != nil {
		return fmt.Errorf("calibrate: simulate moved episodes of every kind: %w", err)
	}
	lat, err := eval.AnalyseLatency(append(slices.Clone(quiet), quietKinds...), append(slices.Clone(moved), movedKinds...), eval.DefaultLatencyOptions())
	if err != nil {
		return fmt.Errorf("calibrate: latency-threshold: %w", err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("calibrate: -out: %w", err)
	}
	report := filepath.Join(*out, "calibration.md")
	write := func(w io.Writer) error {
		if err := eval.WriteCalibration(w, th, cnt); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		if err := eval.WriteDropCalibration(w, drop); err != nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		return eval.WriteLatencyCalibration(w, lat)
	}
	if err := fileutil.WriteAtomic(report, write); err != nil {
		return fmt.Errorf("calibrate: write %s: %w", report, err)
	}
	for name, c := range map[string]any{"throughput-drop.json": drop.Config, "latency-threshold.json": lat.Config} {
		path := filepath.Join(*out, name)
		if err := fileutil.WriteAtomic(path, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(c)
		}); err != nil {
			return fmt.Errorf("calibrate: write %s: %w", path, err)
		}
	}
	plotPath := filepath.Join(*out, "false-alarms.png")
	if err := eval.PlotThreshold(plotPath, th); err != nil {
		return fmt.Errorf("calibrate: plot %s: %w", plotPath, err)
	}
	if err := write(e.stdout); err != nil {
		return fmt.Errorf("calibrate: print report: %w", err)
	}
	return nil
}

// thresholdOptions returns App. E's options with the candidate thresholds
// scaled to cfg's bucket rate: overlimits per second scale with the
// packets per second a bucket passes (the same grid at 200 Mbit/s; 1,000
// to 1,750 by 25 at 10 Mbit/s), the rule policy.ReactiveConfigFor scales
// the reactive baseline's threshold by.
func thresholdOptions(cfg sim.Config) eval.ThresholdOptions {
	o := eval.DefaultThresholdOptions()
	r := cfg.BucketRate / policy.PaperBucketRate
	o.From, o.To, o.Step = o.From*r, o.To*r, o.Step*r
	return o
}

// writeSelfOverflowComparison prints App. E's self-induced overflow of two
// sets of no-congestion episodes side by side.
func writeSelfOverflowComparison(w io.Writer, nameA string, a *eval.ThresholdReport, nameB string, b *eval.ThresholdReport) {
	fmt.Fprintf(w, "# Self-induced overflow (App. E): recorded traces and the profile side by side\n\n")
	fmt.Fprintf(w, "| episodes of | episodes | samples | mean (/s) | p95 (/s) | max (/s) | lowest threshold without a false alarm (/s) |\n|---|---|---|---|---|---|---|\n")
	for _, r := range []struct {
		name string
		th   *eval.ThresholdReport
	}{{nameA, a}, {nameB, b}} {
		lowest := "none in range"
		if !math.IsNaN(r.th.Lowest) {
			lowest = fmt.Sprintf("%.0f", r.th.Lowest)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.0f | %.0f | %.0f | %s |\n", r.name, r.th.Episodes, r.th.Samples, r.th.Mean, r.th.P95, r.th.Max, lowest)
	}
	fmt.Fprintln(w)
}

func simulateBuiltins(ctx context.Context, e *env, cfg sim.Config, label string, names []string, repeats int, seed uint64, parallel int) ([]*trace.Episode, error) {
	var scs []*sim.Scenario
	for _, n := range names {
		sc, err := sim.BuiltinScenario(n)
		if err != nil {
			return nil, err // names the scenario; load adds the context
		}
		scs = append(scs, sc)
	}
	return simulateStatic(ctx, e, cfg, label, scs, repeats, seed, parallel)
}

// simulateStatic runs scenarios under the static policy, which never
// disturbs the traffic being measured.
func simulateStatic(ctx context.Context, e *env, cfg sim.Config, label string, scs []*sim.Scenario, repeats int, seed uint64, parallel int) ([]*trace.Episode, error) {
	static, err := eval.ReferencePolicy("static")
	if err != nil {
		return nil, fmt.Errorf("static policy: %w", err)
	}
	var specs []sim.EpisodeSpec
	for i, sc := range scs {
		for r := 0; r < repeats; r++ {
			specs = append(specs, sim.EpisodeSpec{Scenario: sc, Seed: eval.EpisodeSeed(seed, fmt.Sprintf("%s/%d", sc.Name, i), r),
				Config: cfg, Policy: "static", NewPolicy: static.New})
		}
	}
	return simulateEpisodes(ctx, e, label, specs, parallel)
}

// simulateEpisodes runs the specs with a progress bar.
func simulateEpisodes(ctx context.Context, e *env, label string, specs []sim.EpisodeSpec, parallel int) ([]*trace.Episode, error) {
	bar := progress.New(e.stderr, "calibrate "+label, len(specs))
	defer bar.Finish()
	eps, err := sim.RunMany(ctx, specs, parallel, func(done, _ int) { bar.Set(done) })
	if err != nil {
		return nil, fmt.Errorf("run %d episodes: %w", len(specs), err)
	}
	return eps, nil
}

func readTraces(dir string) ([]*trace.Episode, error) {
	paths, err := listTraces(dir)
	if err != nil {
		return nil, fmt.Errorf("read traces: %w", err)
	}
	var eps []*trace.Episode
	for _, p := range paths {
		ep, err := trace.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read trace %s: %w", filepath.Base(p), err)
		}
		eps = append(eps, ep)
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("no .jsonl or .jsonl.gz traces in %s", dir)
	}
	return eps, nil
}
