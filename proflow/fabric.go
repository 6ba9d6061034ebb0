package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

func fabricCommand() command {
	return command{
		name:    "fabric",
		summary: "build, run, evaluate on or remove the Open vSwitch leaf/aggregation fabric (root; up|down|run|evaluate|movecost), scale scenarios to it (scale) or report recorded episodes (report)",
		run:     runFabric,
	}
}

// fabricSub is one of fabric's sub-commands and what it does.
type fabricSub struct{ name, summary string }

// fabricSubs are fabric's sub-commands, in the order fabric -h lists them.
var fabricSubs = []fabricSub{
	{"up", "build the fabric and wait; Ctrl-C tears it down"},
	{"down", "remove what a fabric left behind: namespaces, links, bridges, OVS daemons, the run directory"},
	{"run", "build the fabric, run one scenario of the simulator (scaled to the fabric) under one policy, print its report and tear the fabric down"},
	{"evaluate", "run policies × scenarios × repeats on the fabric, one episode at a time; write the simulated evaluation's report.md, CSV files, PNG figures and every trace"},
	{"movecost", "build the fabric and measure what moving the protected flow costs it, move after move: time back to 90% of its healthy level, retransmissions, DSACKs and reordering of its sender (case a: healthy between idle switches; case d: after a crowd starved it)"},
	{"scale", "write scenarios as the fabric runs them (times ÷ -time-factor, every stream capped at its paced rate), for proflow evaluate -profile ovs -scenario-file: the simulated twin of a real episode"},
	{"report", "write the evaluation's report (report.md, CSV files, figures) of recorded real episodes, for example several fabric evaluate runs together or against another -baseline"},
}

// fabricScaleFlags are the flags of fabric scale.
type fabricScaleFlags struct {
	scenarios, bucket, out string
	timeFactor             float64
	duration               time.Duration
}

// fabricMoveFlags are the flags of fabric movecost beyond the fabric's.
type fabricMoveFlags struct {
	cases, rtts, out                string
	moves                           int
	warmup, observe, collapse, lead time.Duration
	rate                            float64
	sim, simOnly                    bool
}

// fabricEvalFlags are the flags of fabric evaluate beyond the fabric's.
type fabricEvalFlags struct {
	policies, scenarios, out, baseline, title string
	files                                     listFlag
	repeats                                   int
}

func runFabric(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && isHelpFlag(args[0]) {
		fmt.Fprint(e.stderr, "Usage: proflow fabric up|down|run|evaluate|movecost [flags] (as root), proflow fabric scale|report [flags]\n\n")
		for _, s := range fabricSubs {
			fs, _, _, _ := fabricFlags(e, s.name, s.summary)
			switch s.name {
			case "scale":
				fs, _ = fabricScaleFlagSet(e)
			case "report":
				fs, _ = fabricReportFlagSet(e)
			}
			fs.Usage()
			fmt.Fprintln(e.stderr)
		}
		return flag.ErrHelp
	}
	i := slices.IndexFunc(fabricSubs, func(s fabricSub) bool { return len(args) > 0 && s.name == args[0] })
	if i < 0 {
		got := "none"
		if len(args) > 0 {
			got = fmt.Sprintf("%q", args[0])
		}
		return fmt.Errorf("fabric: sub-command %s, want up, down, run, evaluate, movecost, scale or report (proflow fabric -h for their flags): %w", got, errUsage)
	}
	sub := args[0]
	switch sub {
	case "scale":
		return fabricScale(e, args[1:])
	case "report":
		return fabricReport(e, args[1:])
	}
	fs, flags, ev, mv := fabricFlags(e, sub, fabricSubs[i].summary)
	if err := parseFlags(fs, "fabric "+sub, args[1:]); err != nil {
		return err
	}
	fcfg := flags.Config(e.stderr)
	switch sub {
	case "down":
		if err := ovsfabric.Down(ctx, fcfg); err != nil {
			return fmt.Errorf("fabric down: %w", err)
		}
		return nil
	case "up":
		f, err := ovsfabric.Up(ctx, fcfg)
		if err != nil {
			return fmt.Errorf("fabric up: %w", err)
		}
		// A failed print (stdout closed) has cancelled ctx too (main): the
		// fabric comes down at once and the command fails.
		_, perr := fmt.Fprintf(e.stdout, "fabric up (controller expected at %s); Ctrl-C tears it down (a second Ctrl-C kills proflow at once; then run proflow fabric down)\n", flags.Listen)
		if perr == nil {
			<-ctx.Done()
		}
		tctx, cancel := ovsfabric.TeardownContext(ctx)
		defer cancel()
		if err := f.Down(tctx); err != nil {
			return fmt.Errorf("fabric up: tear down: %w", err)
		}
		if perr != nil {
			return fmt.Errorf("fabric up: %w", perr)
		}
		return nil
	case "movecost":
		return fabricMoveCost(ctx, e, flags, mv, fcfg)
	case "evaluate":
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		return fabricEvaluate(ctx, e, args[1:], given, flags, ev, fcfg)
	}
	x, err := flags.Experiment(fcfg, e.stdout)
	if err != nil {
		return fmt.Errorf("fabric run: %w: %w", err, errUsage)
	}
	if _, err := x.Run(ctx); err != nil {
		return fmt.Errorf("fabric run: %w", err)
	}
	if x.TraceFile != "" {
		fmt.Fprintf(e.stderr, "fabric run: trace %s\n", x.TraceFile)
	}
	return nil
}

// fabricFlags returns the flag set of fabric's sub-command sub, holding only
// the flags sub takes, and the settings it fills (evaluate's own in the
// third result, movecost's in the fourth).
func fabricFlags(e *env, sub, summary string) (*flag.FlagSet, *ovsfabric.CommandFlags, *fabricEvalFlags, *fabricMoveFlags) {
	fs := e.newFlags("fabric "+sub, "fabric "+sub+" [flags]\n\n"+summary)
	flags := new(ovsfabric.CommandFlags)
	flags.Register(fs, sub)
	ev := new(fabricEvalFlags)
	if sub == "evaluate" {
		fs.StringVar(&ev.policies, "policies", "static,reactive,crowd,agent", "comma-separated policies: "+strings.Join(ovsfabric.Policies, ", ")+" (agent: -model)")
		fs.StringVar(&ev.scenarios, "scenarios", "S1-S10", `built-in scenarios: "all", a list "S1,S5,C1" or a range "S1-S10" (with -scenario-file and no -scenarios: none)`)
		fs.Var(&ev.files, "scenario-file", "a scenario `FILE.json` of your own (repeatable)")
		fs.IntVar(&ev.repeats, "repeats", 1, "repeats per scenario and policy")
		fs.StringVar(&ev.out, "out", "out/fabric-evaluate", "directory for report.md, CSV files, PNG figures and traces/")
		fs.StringVar(&ev.baseline, "baseline", defaultBaseline, "policy the others are compared with; without -baseline, when "+defaultBaseline+" is not among -policies: the first of static, reactive, crowd listed, else none")
		fs.StringVar(&ev.title, "title", "proflow evaluation on the Open vSwitch fabric", "report title")
	}
	mv := new(fabricMoveFlags)
	if sub == "movecost" {
		cases := "a: moved healthy between idle switches; b: healthy, ReserveLead after a crowd (h2–h6 → h7) arrived, the bucket's reserve not yet spent; c: degraded (under 70% of healthy, no RTO backoff); d: collapsed (in RTO backoff); a comma-separated list runs each"
		fs.StringVar(&mv.cases, "cases", ovsfabric.MoveHealthy, cases)
		fs.StringVar(&mv.cases, "case", ovsfabric.MoveHealthy, "same as -cases")
		fs.StringVar(&mv.rtts, "rtts", "", "comma-separated round trips, one fabric each (0: no delay line; empty: -rtt); -cc takes a comma-separated list likewise")
		fs.IntVar(&mv.moves, "repeats", 5, "moves (repeats) per cell, each to the next switch")
		fs.IntVar(&mv.moves, "moves", 5, "same as -repeats")
		fs.DurationVar(&mv.warmup, "warmup", 8*time.Second, "the protected flow alone before its healthy level is taken (over the last half)")
		fs.DurationVar(&mv.observe, "observe", 20*time.Second, "how long each move is watched")
		fs.DurationVar(&mv.collapse, "collapse", 15*time.Second, "cases c and d: the longest wait for the case's condition")
		fs.DurationVar(&mv.lead, "reserve-lead", time.Second, "case b: how long after the crowd arrives the flow is moved")
		fs.Float64Var(&mv.rate, "rate", 0, "pace the protected flow at `BYTES` per second (0: as fast as TCP goes)")
		fs.StringVar(&mv.out, "out", "", "directory for movecost.csv, movecost.md and movecost.png (empty: print only)")
		fs.BoolVar(&mv.sim, "sim", false, "also run the same matrix (CUBIC) on the simulator's testbed profile, under each move model (H-move, the window halved, the measured model of sim.MeasuredMoves), and print its recovery beside the real one")
		fs.BoolVar(&mv.simOnly, "sim-only", false, "run the simulator's matrix only (no fabric, no root)")
	}
	return fs, flags, ev, mv
}

// fabricEvaluate runs fabric evaluate: a Sweep on the fabric, then the
// report of the simulated evaluation (eval.Summarize and its writers).
// given holds the names of the flags on the command line.
func fabricEvaluate(ctx context.Context, e *env, args []string, given map[string]bool, flags *ovsfabric.CommandFlags, ev *fabricEvalFlags, fcfg ovsfabric.Config) error {
	const cmdName = "fabric evaluate"
	if err := checkAtLeastOne(cmdName, flagInt{"repeats", ev.repeats}); err != nil {
		return err
	}
	names := splitList(ev.policies)
	for i, n := range names {
		if !slices.Contains(ovsfabric.Policies, n) || slices.Contains(names[:i], n) {
			return badFlag(cmdName, "policies", ev.policies, fmt.Sprintf("a comma-separated list of %s, each once", strings.Join(ovsfabric.Policies, ", ")))
		}
	}
	if len(names) == 0 {
		return badFlag(cmdName, "policies", ev.policies, "at least one of "+strings.Join(ovsfabric.Policies, ", "))
	}
	if len(ev.files) > 0 && !given["scenarios"] {
		ev.scenarios = "" // -scenario-file alone runs only the named files
	}
	if !given["baseline"] && !slices.Contains(names, ev.baseline) {
		ev.baseline = fallbackBaseline(names)
	}
	if ev.baseline != "" && !slices.Contains(names, ev.baseline) {
		return badFlag(cmdName, "baseline", ev.baseline, "one of the -policies "+strings.Join(names, ","))
	}
	scale, err := flags.Scale()
	if err != nil {
		return fmt.Errorf("%s: %w: %w", cmdName, err, errUsage)
	}
	scs, err := selectScenarios(ev.scenarios, ev.files, scale.Sim, sim.DefaultLimits())
	if err != nil {
		return fmt.Errorf("%s: %w", cmdName, err)
	}
	sw := ovsfabric.Sweep{Scenarios: scs, Repeats: ev.repeats, Seed: flags.Seed, TraceDir: filepath.Join(ev.out, "traces"),
		Experiment: ovsfabric.Experiment{Fabric: fcfg, Listen: flags.Listen, Scale: scale, Warmup: flags.Warmup, Window: flags.Duration, Logger: fcfg.Logger}}
	if flags.Verbose {
		sw.Experiment.Out = e.stderr
	}
	for _, n := range names {
		p, err := ovsfabric.PolicyNamed(n, flags.Model, flags.Gate, scale.Topology())
		if err != nil {
			return fmt.Errorf("%s: %w: %w", cmdName, err, errUsage)
		}
		sw.Policies = append(sw.Policies, p)
	}
	window, err := sw.Window()
	if err != nil {
		return fmt.Errorf("%s: %w: %w", cmdName, err, errUsage)
	}
	if err := os.MkdirAll(sw.TraceDir, 0o755); err != nil {
		return fmt.Errorf("%s: -out: %w", cmdName, err)
	}
	start := time.Now()
	sw.Progress = func(p ovsfabric.SweepProgress) {
		ep := p.Episode
		fmt.Fprintf(e.stderr, "%s: [%d/%d] %s %s r%d: f_p %.2f Mbit/s in the window (baseline %.2f), %d reroutes, %v\n", cmdName, p.Done, p.Total,
			ep.Scenario, ep.Policy, ep.Repeat, meanAfter(ep.T, ep.Throughput)*8/1e6, ep.Baseline*8/1e6, len(ep.Reroutes), p.Took.Round(time.Second))
	}
	eps, err := sw.Run(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w (traces of the %d episodes done are in %s)", cmdName, err, len(eps), sw.TraceDir)
	}
	opt := eval.DefaultOptions()
	opt.Baseline, opt.Seed, opt.Window = ev.baseline, flags.Seed, window.Seconds()
	sum, err := eval.Summarize(eps, opt)
	if err != nil {
		return fmt.Errorf("%s: summarize: %w", cmdName, err)
	}
	sum.Notes = append(sum.Notes, fmt.Sprintf("Open vSwitch fabric: bucket %s, tbf burst %.0f B, queue %.0f B; scenarios of simulator profile %s (%s) with times ÷ %g (window %v) and rates × %g (ovsfabric.Scale).",
		fcfg.BucketRate, scale.BucketBurstBytes(), scale.BucketLimitBytes(), scale.Sim.Name, scale.Sim.Digest(), scale.TimeFactor, window, scale.RateRatio()))
	if note := reactiveNote(names, scale.Topology().BucketRate); note != "" {
		sum.Notes = append(sum.Notes, note)
	}
	report, err := writeReport(ev.out, "proflow fabric evaluate "+strings.Join(args, " "), ev.title, sum)
	if err != nil {
		return fmt.Errorf("%s: %w", cmdName, err)
	}
	if err := sum.WriteMarkdown(e.stdout, ev.title); err != nil {
		return fmt.Errorf("%s: print report: %w", cmdName, err)
	}
	fmt.Fprintf(e.stderr, "%s: %d episodes in %v; report %s, traces %s\n", cmdName, len(eps), time.Since(start).Round(time.Second), report, sw.TraceDir)
	return nil
}

// meanAfter returns the mean of ys over the samples at t >= 0 (the
// evaluation window), or 0.
func meanAfter(t, ys []float64) float64 {
	sum, n := 0.0, 0
	for i, v := range ys {
		if t[i] >= 0 {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// fabricScaleFlagSet returns fabric scale's flag set and the settings it
// fills.
func fabricScaleFlagSet(e *env) (*flag.FlagSet, *fabricScaleFlags) {
	sub := fabricSubs[slices.IndexFunc(fabricSubs, func(s fabricSub) bool { return s.name == "scale" })]
	fs := e.newFlags("fabric scale", "fabric scale [flags]\n\n"+sub.summary)
	f := &fabricScaleFlags{}
	fs.StringVar(&f.scenarios, "scenarios", "S1,S5,S11,C1", `built-in scenarios: "all", a list "S1,S5,C1" or a range "S1-S10"`)
	fs.StringVar(&f.bucket, "bucket", "10mbit", "the fabric's tc tbf `RATE` (fabric run -bucket)")
	fs.Float64Var(&f.timeFactor, "time-factor", ovsfabric.DefaultTimeFactor, "divide every time of the scenario by `F` (fabric run -time-factor)")
	fs.DurationVar(&f.duration, "duration", 0, "evaluation window (0: the scenario's window ÷ -time-factor; fabric run and evaluate -duration; congesters arriving at or after its end are left out, as the fabric leaves them out)")
	fs.StringVar(&f.out, "out", "out/fabric-scale", "`DIR` for one SCENARIO.json a scenario")
	return fs, f
}

// fabricScale runs fabric scale: the scenarios as the fabric runs them,
// one JSON file each.
func fabricScale(e *env, args []string) error {
	const cmdName = "fabric scale"
	fs, f := fabricScaleFlagSet(e)
	if err := parseFlags(fs, cmdName, args); err != nil {
		return err
	}
	flags := ovsfabric.CommandFlags{Bucket: f.bucket, TimeFactor: f.timeFactor}
	scale, err := flags.Scale()
	if err != nil {
		return fmt.Errorf("%s: %w: %w", cmdName, err, errUsage)
	}
	scs, err := selectScenarios(f.scenarios, nil, scale.Sim, sim.DefaultLimits())
	if err != nil {
		return fmt.Errorf("%s: %w", cmdName, err)
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("%s: -out: %w", cmdName, err)
	}
	for _, sc := range scs {
		scaled, err := scale.Scenario(sc)
		if err != nil {
			return fmt.Errorf("%s: %w", cmdName, err)
		}
		if f.duration > 0 {
			// The fabric drops what happens at or after the episode's end
			// (ovsfabric.Plan.Retime); so does the scenario it writes.
			scaled.Window = sim.Duration(f.duration)
			end := scaled.CongestionStart + scaled.Window
			scaled.Congesters = slices.DeleteFunc(scaled.Congesters, func(c sim.Congester) bool { return c.Arrive >= end })
		}
		b, err := json.MarshalIndent(scaled, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: scenario %s: %w", cmdName, sc.Name, err)
		}
		path := filepath.Join(f.out, sc.Name+".json")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("%s: %w", cmdName, err)
		}
		fmt.Fprintln(e.stdout, path)
	}
	return nil
}

// fabricMoveCost runs fabric movecost: the matrix of -cc × -rtts × -cases
// on the fabric (ovsfabric.MoveMatrix), with the simulator's beside it
// under -sim.
func fabricMoveCost(ctx context.Context, e *env, flags *ovsfabric.CommandFlags, mv *fabricMoveFlags, fcfg ovsfabric.Config) error {
	const cmdName = "fabric movecost"
	if err := checkAtLeastOne(cmdName, flagInt{"repeats", mv.moves}); err != nil {
		return err
	}
	ccs := splitList(flags.CC)
	if len(ccs) == 0 {
		ccs = []string{""}
	}
	rtts := []time.Duration{fcfg.RTT}
	if mv.rtts != "" {
		rtts = nil
		for _, s := range splitList(mv.rtts) {
			d, err := time.ParseDuration(s)
			if s == "0" {
				d, err = 0, nil
			}
			if err != nil || d < 0 {
				return badFlag(cmdName, "rtts", mv.rtts, "a comma-separated list of durations ≥ 0, e.g. 0,5ms,50ms")
			}
			rtts = append(rtts, d)
		}
	}
	cases := splitList(mv.cases)
	for _, c := range cases {
		if !slices.Contains(ovsfabric.MoveCases, c) {
			return badFlag(cmdName, "cases", mv.cases, "a comma-separated list of "+strings.Join(ovsfabric.MoveCases, ", "))
		}
	}
	base := ovsfabric.MoveCost{Fabric: fcfg, Listen: flags.Listen, Warmup: mv.warmup, Observe: mv.observe,
		Collapse: mv.collapse, ReserveLead: mv.lead, RateBytesPerSec: mv.rate}
	x := ovsfabric.MoveMatrix{Base: base, CCs: ccs, RTTs: rtts, Cases: cases, Repeats: mv.moves, Dir: mv.out, Out: e.stdout}
	if mv.sim || mv.simOnly {
		spec, err := x.SimSpec()
		if err != nil {
			return fmt.Errorf("%s: %w", cmdName, err)
		}
		cells, err := sim.MoveMatrix(ctx, spec)
		if err != nil {
			return fmt.Errorf("%s: %w", cmdName, err)
		}
		x.Sim = cells
		if err := sim.WriteMoveMatrix(e.stdout, cells); err != nil {
			return fmt.Errorf("%s: %w", cmdName, err)
		}
	}
	if mv.simOnly {
		return nil
	}
	if _, err := x.Run(ctx); err != nil {
		return fmt.Errorf("%s: %w", cmdName, err)
	}
	return nil
}
