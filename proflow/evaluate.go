package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/progress"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// DefaultModel is the committed default agent, relative to the repository root.
const defaultModel = "models/default.safetensors"

func evaluateCommand() command {
	return command{
		name:    "evaluate",
		summary: "run policies × scenarios × repeats on the simulated fabric; write a report, CSVs and figures",
		run:     runEvaluate,
	}
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runEvaluate(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("evaluate", "evaluate [-policies static,reactive,crowd,agent] [-scenarios S1-S10] [-out DIR]")
	policies := fs.String("policies", "static,reactive,crowd,throughput-drop,agent", "comma-separated policies: static, reactive, crowd, throughput-drop, latency-threshold, oracle (reads the scenario: the ceiling, not deployable), agent (needs -model)")
	drop := fs.String("drop", dropCalibrate, `throughput-drop's settings: "calibrate" (on the profile's congestion-free traffic, as proflow calibrate does) or a ThroughputDropConfig JSON `+"`FILE`")
	latency := fs.String("latency", dropCalibrate, `latency-threshold's settings: "calibrate" (on the profile's congestion-free traffic of every kind of flow, as proflow calibrate does) or a LatencyThresholdConfig JSON `+"`FILE`")
	model := fs.String("model", defaultModel, "model file of the agent")
	gatePath := fs.String("gate", "", "GateConfig JSON `FILE` for the agent (default: the gate the model records)")
	scenarios := fs.String("scenarios", "S1-S10", `scenarios: "all" built-ins, "kinds" (the built-ins with a protected flow of another kind than bulk: O*, Q*, R*, T*, V*), "heldout" (the held-out family of the profile's size: H1..H64 at 4x3, H6x3-1..H6x3-64 at 6x3), "heldout-kinds" (K1..K64), "dev" (the development family of the profile's size, D1..D64 at 4x3, D6x3-1..D6x3-64 at 6x3, which choices may look at), "dev2" (the second development family, E1..E64 at 4x3, E6x3-1..E6x3-64 at 6x3), "dev-kinds" (the development kinds family J1..J64, which choices may look at), a list "S1,S5,H3" or a range "S1-S10", "H1-H64", "K1-K64", "H6x3-1-H6x3-64" (with -scenario-file and no -scenarios: none)`)
	var files listFlag
	fs.Var(&files, "scenario-file", "a scenario `FILE.json` of your own (repeatable)")
	alone := fs.Bool("alone", false, "run each scenario with its congesters removed, named NAME-alone: what the protected flows miss with nothing else on the fabric, the floor no placement can go below")
	repeats := fs.Int("repeats", 3, "repeats per scenario and policy")
	seed := fs.Uint64("seed", 1, "base seed (repeat r of a scenario uses the same traffic seed for every policy)")
	parallel := fs.Int("parallel", runtime.NumCPU(), "episodes simulated at once")
	out := fs.String("out", "out/evaluate", "directory for report.md, CSV files and PNG figures")
	traces := fs.Bool("traces", false, "also write every episode's trace under OUT/traces (an episode with several protected flows: its per-flow series as JSON)")
	joint := fs.String("joint", strings.Join(eval.JointModes(), ","), "joint placement modes for scenarios with several protected flows (M1-M4): independent (each flow where its gate sends it), joint (Greedy: moves share each switch's headroom)")
	baseline := fs.String("baseline", defaultBaseline, "policy the others are compared with; without -baseline, when "+defaultBaseline+" is not among -policies: the first of static, reactive, crowd listed, else none")
	title := fs.String("title", "proflow evaluation on the simulated fabric", "report title")
	prof := profileFlag(fs)
	lim := sim.DefaultLimits()
	fs.DurationVar(&lim.MaxWindow, "max-window", lim.MaxWindow, "longest window a -scenario-file may ask for (a research override of the scenario limits)")
	fs.IntVar(&lim.MaxCongesters, "max-congesters", lim.MaxCongesters, "most congester entries a -scenario-file may list")
	fs.IntVar(&lim.MaxTotalStreams, "max-streams", lim.MaxTotalStreams, "most TCP streams a -scenario-file may run in all")
	if err := parseFlags(fs, "evaluate", args); err != nil {
		return err
	}
	// Every flag is checked before anything is simulated or created.
	if err := checkAtLeastOne("evaluate", flagInt{"repeats", *repeats}, flagInt{"parallel", *parallel}); err != nil {
		return err
	}
	names := splitList(*policies)
	if len(names) == 0 {
		return badFlag("evaluate", "policies", fmt.Sprintf("%q", *policies), "a comma-separated list of "+strings.Join(evalPolicies, ", "))
	}
	for i, name := range names {
		if !slices.Contains(evalPolicies, name) {
			return badFlag("evaluate", "policies", *policies, fmt.Sprintf("a comma-separated list of %s (%q is none of them)", strings.Join(evalPolicies, ", "), name))
		}
		if slices.Contains(names[:i], name) {
			return badFlag("evaluate", "policies", *policies, fmt.Sprintf("each policy once (%s is listed twice)", name))
		}
	}
	baselineSet, scenariosSet := false, false
	fs.Visit(func(f *flag.Flag) {
		baselineSet = baselineSet || f.Name == "baseline"
		scenariosSet = scenariosSet || f.Name == "scenarios"
	})
	if len(files) > 0 && !scenariosSet {
		*scenarios = "" // -scenario-file alone runs only the named files
	}
	if !baselineSet && !slices.Contains(names, *baseline) {
		if *baseline = fallbackBaseline(names); len(names) > 1 {
			fmt.Fprintf(e.stderr, "evaluate: no -baseline and %s is not among -policies: comparing with %s\n", defaultBaseline, cmp.Or(*baseline, "none"))
		}
	}
	if *baseline != "" && !slices.Contains(names, *baseline) {
		return badFlag("evaluate", "baseline", *baseline, fmt.Sprintf("one of the -policies %s, the policy the others are compared with (add it to -policies or pick another -baseline)", strings.Join(names, ",")))
	}
	cfg, err := prof.load("evaluate")
	if err != nil {
		return err
	}
	if err := lim.Validate(); err != nil {
		return fmt.Errorf("evaluate: scenario limits: %w: %w", err, errUsage)
	}
	scs, err := selectScenarios(*scenarios, files, cfg, lim)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if *alone {
		for i, sc := range scs {
			scs[i] = withoutCongesters(sc)
		}
	}
	modes := splitList(*joint)
	for i, m := range modes {
		if _, err := eval.NewJointPlacer(m); err != nil || slices.Contains(modes[:i], m) {
			return badFlag("evaluate", "joint", *joint, fmt.Sprintf("a comma-separated list of %s, each once", strings.Join(eval.JointModes(), ", ")))
		}
	}
	var multi []*sim.Scenario
	scs = slices.DeleteFunc(scs, func(sc *sim.Scenario) bool {
		if eval.MultiFlow(sc) {
			multi = append(multi, sc)
			return true
		}
		return false
	})
	if len(multi) > 0 && len(modes) == 0 {
		return badFlag("evaluate", "joint", *joint, "at least one joint mode for the scenarios with several protected flows")
	}
	var specs []eval.PolicySpec
	var notes []string
	for _, name := range names {
		var spec eval.PolicySpec
		if name == "agent" {
			var gate policy.GateConfig
			if *gatePath != "" {
				if gate, err = eval.LoadGateConfig(*gatePath); err != nil {
					return badFlag("evaluate", "gate", *gatePath, fmt.Sprintf("a GateConfig JSON file (%v)", err))
				}
			}
			spec, err = eval.AgentPolicy("agent", *model, gate, cfg.Topology())
			if err != nil {
				return fmt.Errorf("evaluate: -model %s: %w (build one with make model, or leave agent out of -policies)", *model, err)
			}
			if note := eval.ProfileMismatch(name+" ("+*model+")", *spec.Model, cfg); note != "" {
				notes = append(notes, note)
				fmt.Fprintln(e.stderr, "evaluate:", note)
			}
			if spec.Note != "" {
				notes = append(notes, spec.Note)
				fmt.Fprintln(e.stderr, "evaluate:", spec.Note)
			}
		} else if name == eval.ThroughputDropName {
			var note string
			if spec, note, err = throughputDropSpec(ctx, "evaluate", *drop, cfg, *parallel); err != nil {
				return err
			}
			notes = append(notes, note)
		} else if name == eval.LatencyThresholdName {
			var note string
			if spec, note, err = latencyThresholdSpec(ctx, "evaluate", *latency, cfg, *parallel); err != nil {
				return err
			}
			notes = append(notes, note)
		} else if spec, err = eval.ReferencePolicy(name); err != nil {
			return fmt.Errorf("evaluate: -policies: %w: %w", err, errUsage)
		}
		specs = append(specs, spec)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("evaluate: -out: %w", err)
	}
	traceDir := ""
	if *traces {
		traceDir = filepath.Join(*out, "traces")
		if err := os.MkdirAll(traceDir, 0o755); err != nil {
			return fmt.Errorf("evaluate: -traces: %w", err)
		}
	}
	opt := eval.DefaultOptions()
	opt.Baseline, opt.Seed = *baseline, *seed
	notes = append([]string{fmt.Sprintf("Simulator profile %s (%s).", cfg.Name, cfg.Digest())}, notes...)
	if note := reactiveNote(names, cfg.BucketRate); note != "" {
		notes = append(notes, note)
	}
	start := time.Now()
	var msum *eval.MultiSummary
	if len(multi) > 0 {
		mopt := opt // their own window too, not the paper's 120 s
		mopt.Window, mopt.Windows = scenarioWindows(multi)
		if msum, err = runMultiEvaluate(ctx, e, eval.MultiSweep{Scenarios: multi, Policies: specs, Modes: modes, Repeats: *repeats,
			Seed: *seed, Config: cfg, Parallelism: *parallel}, mopt, traceDir); err != nil {
			return err
		}
	}
	generatedBy := "proflow evaluate " + strings.Join(args, " ")
	if len(scs) == 0 {
		report, err := writeMultiReport(*out, generatedBy, *title, notes, msum)
		if err != nil {
			return fmt.Errorf("evaluate: %w", err)
		}
		if err := msum.WriteMarkdown(e.stdout, *title, notes); err != nil {
			return fmt.Errorf("evaluate: print report: %w", err)
		}
		fmt.Fprintf(e.stderr, "evaluate: %d episodes in %v; report %s, figure %s\n", len(msum.Cells)*(*repeats),
			time.Since(start).Round(time.Millisecond), report, eval.FigMulti)
		return nil
	}
	sw := eval.Sweep{Scenarios: scs, Policies: specs, Repeats: *repeats, Seed: *seed, Config: cfg, Parallelism: *parallel, TraceDir: traceDir}
	total := len(scs) * len(specs) * *repeats
	// The bar counts simulated seconds, so that a few long episodes still
	// show progress.
	bar := progress.New(e.stderr, "evaluate (simulated s)", 1)
	sw.SimProgress = func(done, total time.Duration) {
		bar.SetTotal(int(total.Seconds()))
		bar.Set(int(done.Seconds()))
	}
	eps, err := sw.Run(ctx)
	bar.Finish()
	var traceErr error
	switch {
	case err != nil && len(eps) == total:
		// Every episode ran; only writing traces failed. Report it at the
		// end, after the report and figures are written.
		traceErr = fmt.Errorf("evaluate: -traces: %w", err)
	case err != nil:
		return fmt.Errorf("evaluate: run %d episodes: %w", total, err)
	}
	// The window is the scenarios' own (a scaled scenario's is 40 or 60 s),
	// not the paper's 120 s.
	sopt := opt
	sopt.Window, sopt.Windows = scenarioWindows(scs)
	sopt.Quiet = eval.QuietScenarios(scs)
	sum, err := eval.Summarize(eps, sopt)
	if err != nil {
		return fmt.Errorf("evaluate: summarize: %w", err)
	}
	sum.Notes = notes
	report, err := writeReportWith(*out, generatedBy, *title, sum, msum)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if err := sum.WriteMarkdown(e.stdout, *title); err != nil {
		return fmt.Errorf("evaluate: print report: %w", err)
	}
	if msum != nil {
		if err := msum.WriteMarkdown(e.stdout, "", nil); err != nil {
			return fmt.Errorf("evaluate: print report: %w", err)
		}
		total += len(msum.Cells) * (*repeats)
	}
	figs := sum.Figures()
	if msum != nil {
		figs = append(figs, eval.FigMulti)
	}
	fmt.Fprintf(e.stderr, "evaluate: %d episodes in %v; report %s, figures %s\n", total,
		time.Since(start).Round(time.Millisecond), report, strings.Join(figs, ", "))
	return traceErr
}

// runMultiEvaluate runs the scenarios with several protected flows under
// the MultiController in every joint mode, with a progress bar of its own,
// keeps each episode's series under traceDir when set, and summarises them.
func runMultiEvaluate(ctx context.Context, e *env, sw eval.MultiSweep, opt eval.Options, traceDir string) (*eval.MultiSummary, error) {
	bar := progress.New(e.stderr, "evaluate many flows (simulated s)", 1)
	sw.SimProgress = func(done, total time.Duration) {
		bar.SetTotal(int(total.Seconds()))
		bar.Set(int(done.Seconds()))
	}
	eps, err := sw.Run(ctx)
	bar.Finish()
	if err != nil {
		return nil, fmt.Errorf("evaluate: run the scenarios with several protected flows: %w", err)
	}
	if traceDir != "" {
		for _, ep := range eps {
			path := filepath.Join(traceDir, fmt.Sprintf("%s-%s-%s-r%d.json", ep.Scenario, ep.Policy, ep.Mode, ep.Repeat))
			if err := fileutil.WriteAtomic(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(ep) }); err != nil {
				return nil, fmt.Errorf("evaluate: -traces: %w", err)
			}
		}
	}
	sum, err := eval.SummarizeMulti(eps, opt)
	if err != nil {
		return nil, fmt.Errorf("evaluate: summarize the scenarios with several protected flows: %w", err)
	}
	return sum, nil
}

// writeMultiReport writes the report of an evaluation of scenarios with
// several protected flows only: report.md, its CSV files and its figure.
func writeMultiReport(dir, generatedBy, title string, notes []string, msum *eval.MultiSummary) (string, error) {
	report, err := writeMarkdown(dir, generatedBy, func(w io.Writer) error { return msum.WriteMarkdown(w, title, notes) })
	if err != nil {
		return "", err
	}
	return report, writeMultiData(dir, msum)
}

// writeMarkdown writes dir/report.md: a comment naming the command that
// made it, when generatedBy is set, then body.
func writeMarkdown(dir, generatedBy string, body func(io.Writer) error) (string, error) {
	report := filepath.Join(dir, "report.md")
	err := fileutil.WriteAtomic(report, func(w io.Writer) error {
		if generatedBy != "" {
			if _, err := fmt.Fprintf(w, "<!-- generated by: %s -->\n", generatedBy); err != nil {
				return err
			}
		}
		return body(w)
	})
	if err != nil {
		return "", fmt.Errorf("write %s: %w", report, err)
	}
	return report, nil
}

// writeMultiData writes a many-flow summary's CSV files and figure into dir.
func writeMultiData(dir string, msum *eval.MultiSummary) error {
	if err := msum.WriteCSV(dir); err != nil {
		return fmt.Errorf("write CSV files: %w", err)
	}
	if err := msum.WritePlots(dir); err != nil {
		return fmt.Errorf("write figures: %w", err)
	}
	return nil
}

// scenarioWindows returns the longest evaluation window of scs in seconds
// and, when their windows differ, each scenario's by name.
func scenarioWindows(scs []*sim.Scenario) (float64, map[string]float64) {
	longest, all := 0.0, map[string]float64{}
	for _, sc := range scs {
		w := (sc.Length() - sc.Start()).Seconds()
		all[sc.Name] = w
		longest = max(longest, w)
	}
	for _, w := range all {
		if w != longest {
			return longest, all
		}
	}
	return longest, nil
}

// reactiveNote returns the report's note on the reactive threshold when
// reactive is among names and the buckets do not run at the paper's rate
// (where the threshold is App. E's 27,000 and no note is needed), else "".
func reactiveNote(names []string, bucketRate float64) string {
	th := policy.ReactiveConfigFor(bucketRate).Threshold
	if !slices.Contains(names, "reactive") || th == policy.DefaultReactiveConfig().Threshold {
		return ""
	}
	return fmt.Sprintf("Reactive threshold ξ_th = %.0f overlimits/s: App. E's 27,000 at 200 Mbit/s scaled by the bucket rate (%g Mbit/s; policy.ReactiveConfigFor).",
		th, bucketRate*8/1e6)
}

// evalPolicies are the policies evaluate accepts in -policies.
var evalPolicies = []string{"static", "reactive", "crowd", eval.ThroughputDropName, eval.LatencyThresholdName, eval.OracleName, "agent"}

// defaultBaseline is the -baseline of evaluate.
const defaultBaseline = "reactive"

// fallbackBaseline returns the policy to compare the others with when no
// -baseline was given and the default is not evaluated: the first deployable
// reference policy (static, reactive or crowd; not the oracle) among names,
// or none ("") when there is none or nothing else to compare with it.
func fallbackBaseline(names []string) string {
	if len(names) < 2 {
		return ""
	}
	for _, n := range names {
		if n == "static" || n == "reactive" || n == "crowd" {
			return n
		}
	}
	return ""
}

// writeReport writes a summary's report.md (headed by a comment naming the
// command that made it, when generatedBy is set), CSV files and PNG
// figures into dir, and returns the report's path.
func writeReport(dir, generatedBy, title string, sum *eval.Summary) (string, error) {
	return writeReportWith(dir, generatedBy, title, sum, nil)
}

// writeReportWith is writeReport with, when msum is set, the many-flow
// section after the report, and its CSV files and figure.
func writeReportWith(dir, generatedBy, title string, sum *eval.Summary, msum *eval.MultiSummary) (string, error) {
	report, err := writeMarkdown(dir, generatedBy, func(w io.Writer) error {
		if err := sum.WriteMarkdown(w, title); err != nil || msum == nil {
			return err
		}
		return msum.WriteMarkdown(w, "", nil)
	})
	if err != nil {
		return "", err
	}
	if err := writeReportData(dir, sum); err != nil {
		return "", err
	}
	if msum != nil {
		return report, writeMultiData(dir, msum)
	}
	return report, nil
}

// writeReportData writes a summary's CSV files and PNG figures into dir.
func writeReportData(dir string, sum *eval.Summary) error {
	if err := sum.WriteCSV(dir); err != nil {
		return fmt.Errorf("write CSV files: %w", err)
	}
	if err := sum.WritePlots(dir); err != nil {
		return fmt.Errorf("write figures: %w", err)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// selectScenarios resolves "all" (the built-ins), "kinds" (the built-ins
// whose protected flow is not bulk), "heldout" (the held-out family of
// cfg's size: H1..H64 at 4×3, H6x3-1..H6x3-64 at 6×3; southbound/sim's
// package documentation), "heldout-kinds" (the
// held-out kinds family K1..K64), "dev" (the development family of cfg's
// size: D1..D64 at 4×3, D6x3-1..D6x3-64 at 6×3), "dev2" (the second
// development family: E1..E64, E6x3-1..E6x3-64), "dev-kinds" (the
// development kinds family J1..J64), a comma list and "S1-S10", "H1-H64" or
// "K1-K64" style ranges (both ends in the same list), then adds the user's
// files. A name or range that is neither built in nor held out,
// or an empty selection, is a usage error. On a profile at another link
// speed (Config.RateFactor) the named scenarios' rates are scaled with it;
// the user's files are taken as written.
func selectScenarios(sel string, files []string, cfg sim.Config, lim sim.Limits) ([]*sim.Scenario, error) {
	var names []string
	builtins, family, kinds := sim.BuiltinScenarios(), sim.FamilyScenarios(), sim.KindsFamilyScenarios()
	dev, dev2, devKinds := sim.DevFamilyScenarios(), sim.SecondDevFamilyScenarios(), sim.DevKindsFamilyScenarios()
	sized, errSized := sim.FamilyScenariosFor(cfg)
	lists := [][]string{builtins, family, kinds, dev, dev2, devKinds}
	if errSized == nil {
		// The same sizes as sized.
		sizedDev, _ := sim.DevFamilyScenariosFor(cfg)
		sizedDev2, _ := sim.SecondDevFamilyScenariosFor(cfg)
		lists = append(lists, sized, sizedDev, sizedDev2)
		dev, dev2 = sizedDev, sizedDev2
	}
	for _, item := range splitList(sel) {
		switch {
		case slices.ContainsFunc(lists, func(l []string) bool { return slices.Contains(l, item) }):
			names = append(names, item)
		case item == "heldout" && errSized != nil:
			return nil, fmt.Errorf("-scenarios heldout: profile %s: %w: %w", cfg.Name, errSized, errUsage)
		case item == "heldout":
			names = append(names, sized...)
		case item == "all":
			names = append(names, builtins...)
		case item == "kinds":
			for _, n := range builtins {
				if sc, err := sim.BuiltinScenario(n); err == nil && len(sc.Protected) == 0 && !sc.ProtectedKind.IsBulk() {
					names = append(names, n)
				}
			}
		case item == "heldout-kinds":
			names = append(names, kinds...)
		case item == "dev-kinds":
			names = append(names, devKinds...)
		case (item == "dev" || item == "dev2") && errSized != nil:
			return nil, fmt.Errorf("-scenarios %s: profile %s: %w: %w", item, cfg.Name, errSized, errUsage)
		case item == "dev":
			names = append(names, dev...)
		case item == "dev2":
			names = append(names, dev2...)
		case strings.Contains(item, "-"):
			span := scenarioRange(item, lists)
			if span == nil {
				return nil, fmt.Errorf("-scenarios: range %q, want two built-in names in order (built-ins: %s) or two held-out ones (%s..%s or %s..%s, or of the profile's size such as H6x3-1..H6x3-64): %w", item, strings.Join(builtins, " "), family[0], family[len(family)-1], kinds[0], kinds[len(kinds)-1], errUsage)
			}
			names = append(names, span...)
		default:
			names = append(names, item)
		}
	}
	var out []*sim.Scenario
	for _, n := range names {
		sc, err := sim.LookupScenario(n)
		if err == nil {
			// Named scenarios are written for the unscaled fabric.
			sc, err = sc.ScaleRates(cfg.RateFactor())
		}
		if err != nil {
			return nil, fmt.Errorf("-scenarios %s: %w: %w", sel, err, errUsage)
		}
		out = append(out, sc)
	}
	for _, path := range files {
		sc, err := sim.LoadScenarioWithLimits(path, cfg, lim)
		if err != nil {
			return nil, fmt.Errorf("-scenario-file %s: %w", path, err)
		}
		out = append(out, sc)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-scenarios %q and no -scenario-file: no scenarios selected, want at least one: %w", sel, errUsage)
	}
	return out, nil
}

// scenarioRange returns the names from one name to another, "S1-S10" or
// "H6x3-1-H6x3-64", in one of lists, or nil: the item may split at any of
// its dashes, since sized family names hold one.
func scenarioRange(item string, lists [][]string) []string {
	for at, r := range item {
		if r != '-' {
			continue
		}
		from, to := item[:at], item[at+1:]
		for _, list := range lists {
			if i, j := indexOf(list, from), indexOf(list, to); i >= 0 && j >= i {
				return list[i : j+1]
			}
		}
	}
	return nil
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if strings.EqualFold(v, x) {
			return i
		}
	}
	return -1
}

// withoutCongesters returns a copy of sc with no congester, named
// NAME-alone (evaluate -alone): the protected flows alone on the fabric.
func withoutCongesters(sc *sim.Scenario) *sim.Scenario {
	c := *sc
	c.Name, c.Congesters = sc.Name+"-alone", nil
	c.Description = "the protected flows of " + sc.Name + " alone, its congesters removed"
	return &c
}
