package main

import (
	"context"
	"fmt"
	"io"
	"math"
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

func demoCommand() command {
	return command{
		name:    "demo",
		summary: "the main job: every policy on the built-in scenarios (the paper's and one of each protected-flow kind) of the testbed profile, the datacenter profile beside it",
		run:     runDemo,
	}
}

// modelFor returns the committed agent of a profile: models/default for
// the testbed, models/NAME for any other.
func modelFor(profile string) string {
	if profile == sim.ProfileTestbed {
		return defaultModel
	}
	return filepath.Join("models", profile+".safetensors")
}

// headlineScenarios are the scenarios of the paper's Table V, over which
// the demo's summary lines compare policies.
var headlineScenarios = []string{"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "S10"}

// demoScenarios are the built-ins the demo runs: the paper's S1–S12 with
// their variants, C1, C2, N1 and N2, and the first scenario of each
// protected-flow kind (O1, R1, T1, V1). The other kind scenarios
// (evaluate -scenarios kinds) would about double its run time. The
// range's scenarios with several protected flows, M1–M4, are left out
// (selectDemoScenarios): the demo runs one flow's controller, and evaluate
// runs them under a MultiController.
const demoScenarios = "S1-N2,O1,R1,T1,V1"

// selectDemoScenarios returns demoScenarios on cfg without the scenarios
// that protect several flows.
func selectDemoScenarios(cfg sim.Config) ([]*sim.Scenario, error) {
	scs, err := selectScenarios(demoScenarios, nil, cfg, sim.DefaultLimits())
	return slices.DeleteFunc(scs, eval.MultiFlow), err
}

func runDemo(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("demo", "demo [-profiles testbed,datacenter] [-out DIR]")
	profiles := fs.String("profiles", sim.ProfileTestbed+","+sim.ProfileDatacenter, "comma-separated profiles; the first gets the full report, every other a summary line per policy (each profile's full report is under OUT/PROFILE)")
	repeats := fs.Int("repeats", 3, "repeats per scenario and policy")
	seed := fs.Uint64("seed", 1, "base seed")
	famRepeats := fs.Int("family-repeats", 2, "repeats per scenario and policy on the held-out family H1–H64 (0: leave the family out)")
	famSeed := fs.Uint64("family-seed", defaultFamilySeed, "base seed of the held-out families' episodes")
	kindRepeats := fs.Int("kinds-repeats", 2, "repeats per scenario and policy on the held-out kinds family K1–K64 (0: leave it out)")
	parallel := fs.Int("parallel", runtime.NumCPU(), "episodes simulated at once")
	out := fs.String("out", "out/demo", "directory for report.md, CSV files and PNG figures")
	if err := parseFlags(fs, "demo", args); err != nil {
		return err
	}
	if err := checkAtLeastOne("demo", flagInt{"repeats", *repeats}, flagInt{"parallel", *parallel}); err != nil {
		return err
	}
	if *famRepeats < 0 {
		return badFlag("demo", "family-repeats", fmt.Sprint(*famRepeats), "a number of repeats >= 0")
	}
	if *kindRepeats < 0 {
		return badFlag("demo", "kinds-repeats", fmt.Sprint(*kindRepeats), "a number of repeats >= 0")
	}
	names := splitList(*profiles)
	if len(names) == 0 {
		return badFlag("demo", "profiles", *profiles, "at least one profile")
	}
	var cfgs []sim.Config
	for _, n := range names {
		cfg, err := sim.LoadProfile(n)
		if err != nil {
			return fmt.Errorf("demo: -profiles %s: %w: %w", n, err, errUsage)
		}
		cfgs = append(cfgs, cfg)
	}
	scs, err := selectDemoScenarios(cfgs[0])
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	var family []*sim.Scenario
	if *famRepeats > 0 {
		if family, err = selectScenarios("heldout", nil, cfgs[0], sim.DefaultLimits()); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	var kindsFamily []*sim.Scenario
	if *kindRepeats > 0 {
		if kindsFamily, err = selectScenarios("heldout-kinds", nil, cfgs[0], sim.DefaultLimits()); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	start := time.Now()
	var main strings.Builder
	var others, yardstick, kinds strings.Builder
	var figs []string
	others.WriteString("| profile | policy | mean S1–S10 (MB/s) | gain over reactive | gain CI | lead over reactive (s) | SLO (s) | moves |\n|---|---|---|---|---|---|---|---|\n")
	yardstick.WriteString(yardstickHeader)
	kinds.WriteString(kindTableHeader)
	for i, cfg := range cfgs {
		// The policies of a profile (throughput-drop calibrated, the
		// model loaded) once, for the built-ins and the family alike.
		specs, notes, err := demoPolicies(ctx, e, cfg, *parallel)
		if err != nil {
			return err
		}
		sum, headline, err := demoProfile(ctx, e, cfg, scs, specs, notes, *repeats, *seed, *parallel, filepath.Join(*out, cfg.Name))
		if err != nil {
			return err
		}
		paper, err := subsetSummary(sum, isPaperScenario)
		if err != nil {
			return fmt.Errorf("demo: profile %s: %w", cfg.Name, err)
		}
		writeYardstick(&yardstick, cfg.Name, "S1–S12 and variants", *repeats, *seed, paper)
		if len(family) > 0 {
			fam, err := demoFamily(ctx, e, cfg, family, specs, notes, *famRepeats, *famSeed, *parallel, filepath.Join(*out, cfg.Name, "heldout"))
			if err != nil {
				return err
			}
			writeYardstick(&yardstick, cfg.Name, "held-out family H1–H64", *famRepeats, *famSeed, fam)
		}
		if len(kindsFamily) > 0 {
			kf, err := demoSet(ctx, e, cfg, kindsFamily, specs, notes, *kindRepeats, *famSeed, *parallel, filepath.Join(*out, cfg.Name, "heldout-kinds"),
				"held-out kinds family K1–K64", "held-out kinds")
			if err != nil {
				return err
			}
			writeKindTable(&kinds, cfg.Name, "K1–K64", *kindRepeats, *famSeed, kf)
		}
		title := fmt.Sprintf("proflow on the simulated fabric, profile %s", cfg.Name)
		if i == 0 {
			fmt.Fprintf(&main, "# proflow demo\n\nEvery policy on the built-in scenarios of the paper and one of each protected-flow kind (%s) on the simulated fabric, profile %s first (its full report below), then every profile's summary.\n\n", demoScenarios, cfg.Name)
			writeBesidePaper(&main, cfg.Name, headline)
			if err := sum.WriteMarkdown(&main, title); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			if err := writeReportData(*out, sum); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			figs = sum.Figures()
		}
		writeSummaryLines(&others, cfg.Name, headline)
	}
	report := filepath.Join(*out, "report.md")
	err = fileutil.WriteAtomic(report, func(w io.Writer) error {
		if _, err := fmt.Fprintf(w, "<!-- generated by: proflow demo %s -->\n%s", strings.Join(args, " "), main.String()); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "## Every profile, S1–S10\n\n%s\n\n%s\n", everyProfileText, others.String()); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s%s\n", yardstickText, yardstick.String()); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "%s%s\n", kindTableText, kinds.String())
		return err
	})
	if err != nil {
		return fmt.Errorf("demo: write %s: %w", report, err)
	}
	fmt.Fprint(e.stdout, main.String())
	fmt.Fprintf(e.stdout, "## Every profile, S1–S10\n\n%s\n\n%s\n", everyProfileText, others.String())
	fmt.Fprintf(e.stdout, "%s%s\n", yardstickText, yardstick.String())
	fmt.Fprintf(e.stdout, "%s%s\n", kindTableText, kinds.String())
	fmt.Fprintf(e.stderr, "demo: %d profiles in %v; report %s, figures %s in %s\n", len(cfgs),
		time.Since(start).Round(time.Millisecond), report, strings.Join(figs, ", "), *out)
	return nil
}

// demoProfile evaluates every policy (the agent when the profile's model
// exists) on one profile, writes its full report into dir, and returns the
// summary over every scenario and the one over S1–S10.
func demoProfile(ctx context.Context, e *env, cfg sim.Config, scs []*sim.Scenario, specs []eval.PolicySpec, notes []string, repeats int, seed uint64, parallel int, dir string) (*eval.Summary, *eval.Summary, error) {
	sum, err := demoRun(ctx, e, cfg, scs, specs, notes, repeats, seed, parallel, cfg.Name)
	if err != nil {
		return nil, nil, err
	}
	headline, err := eval.Summarize(slices.DeleteFunc(slices.Clone(sum.AllEpisodes()), func(ep *eval.Episode) bool {
		return !slices.Contains(headlineScenarios, ep.Scenario)
	}), sum.Options)
	if err != nil {
		return nil, nil, fmt.Errorf("demo: profile %s: %w", cfg.Name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	if _, err := writeReport(dir, "", fmt.Sprintf("proflow on the simulated fabric, profile %s", cfg.Name), sum); err != nil {
		return nil, nil, fmt.Errorf("demo: %w", err)
	}
	return sum, headline, nil
}

// demoFamily evaluates every policy on the held-out family and writes its
// report into dir.
func demoFamily(ctx context.Context, e *env, cfg sim.Config, family []*sim.Scenario, specs []eval.PolicySpec, notes []string, repeats int, seed uint64, parallel int, dir string) (*eval.Summary, error) {
	return demoSet(ctx, e, cfg, family, specs, notes, repeats, seed, parallel, dir, "held-out family H1–H64", "held-out")
}

// demoSet evaluates every policy on a held-out scenario set (named set in
// the notes and the title, label in the progress line) and writes its
// report into dir.
func demoSet(ctx context.Context, e *env, cfg sim.Config, scs []*sim.Scenario, specs []eval.PolicySpec, notes []string, repeats int, seed uint64, parallel int, dir, set, label string) (*eval.Summary, error) {
	notes = append(slices.Clone(notes), fmt.Sprintf("The %s (southbound/sim, \"Held-out family\"; no profile, reward, gate or model choice looked at it), base seed %d.", set, seed))
	sum, err := demoRun(ctx, e, cfg, scs, specs, notes, repeats, seed, parallel, cfg.Name+" "+label)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	if _, err := writeReport(dir, "", fmt.Sprintf("proflow on the %s, profile %s", set, cfg.Name), sum); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return sum, nil
}

// demoPolicies returns the demo's policies on a profile: static, reactive,
// crowd, throughput-drop and latency-threshold (both calibrated on the
// profile's congestion-free traffic), the oracle and, when the profile's
// model exists, the agent; and the report's notes.
func demoPolicies(ctx context.Context, e *env, cfg sim.Config, parallel int) ([]eval.PolicySpec, []string, error) {
	var specs []eval.PolicySpec
	notes := []string{fmt.Sprintf("Simulator profile %s (%s).", cfg.Name, cfg.Digest())}
	for _, name := range []string{"static", "reactive", "crowd", eval.ThroughputDropName, eval.LatencyThresholdName, eval.OracleName} {
		var spec eval.PolicySpec
		var err error
		if build := calibratedPolicy(name); build != nil {
			var note string
			if spec, note, err = build(ctx, "demo", dropCalibrate, cfg, parallel); err != nil {
				return nil, nil, err
			}
			notes = append(notes, note)
		} else if spec, err = eval.ReferencePolicy(name); err != nil {
			return nil, nil, fmt.Errorf("demo: %w", err)
		}
		specs = append(specs, spec)
	}
	model := modelFor(cfg.Name)
	if _, err := os.Stat(model); err == nil {
		spec, err := eval.AgentPolicy("agent", model, policy.GateConfig{}, cfg.Topology())
		if err != nil {
			return nil, nil, fmt.Errorf("demo: profile %s: %w", cfg.Name, err)
		}
		if note := eval.ProfileMismatch("agent ("+model+")", *spec.Model, cfg); note != "" {
			notes = append(notes, note)
			fmt.Fprintln(e.stderr, "demo:", note)
		}
		specs = append(specs, spec)
	} else {
		notes = append(notes, fmt.Sprintf("No agent: %s does not exist (make model PROFILE=%s builds it).", model, cfg.Name))
	}
	return specs, notes, nil
}

// demoRun runs the policies on the scenarios and summarises the episodes.
func demoRun(ctx context.Context, e *env, cfg sim.Config, scs []*sim.Scenario, specs []eval.PolicySpec, notes []string, repeats int, seed uint64, parallel int, label string) (*eval.Summary, error) {
	sw := eval.Sweep{Scenarios: scs, Policies: specs, Repeats: repeats, Seed: seed, Config: cfg, Parallelism: parallel}
	total := len(scs) * len(specs) * repeats
	bar := progress.New(e.stderr, "demo "+label, total)
	sw.Progress = func(done, _ int) { bar.Set(done) }
	eps, err := sw.Run(ctx)
	bar.Finish()
	if err != nil {
		return nil, fmt.Errorf("demo: profile %s: %w", cfg.Name, err)
	}
	opt := eval.DefaultOptions()
	opt.Seed, opt.Quiet = seed, eval.QuietScenarios(scs)
	sum, err := eval.Summarize(eps, opt)
	if err != nil {
		return nil, fmt.Errorf("demo: profile %s: %w", cfg.Name, err)
	}
	sum.Notes = notes
	return sum, nil
}

// writeSummaryLines writes one table row per policy of a profile.
func writeSummaryLines(b *strings.Builder, profile string, s *eval.Summary) {
	for _, p := range s.Policies {
		gain, ci, lead := "–", "–", "–"
		if c, ok := s.Comparison(p); ok {
			gain = fmt.Sprintf("%.2f×", c.Gain)
			ci = fmt.Sprintf("[%.2f×, %.2f×]", c.GainLo, c.GainHi)
			if len(c.LeadScenarios) > 0 {
				lead = fmt.Sprintf("%.1f", c.Lead)
			}
		} else if p == s.Options.Baseline {
			gain = "1.00×"
		}
		var slo, moves []float64
		for _, sc := range s.Scenarios {
			if c, ok := s.Cell(sc, p); ok {
				slo, moves = append(slo, c.SLOSeconds), append(moves, c.Moves)
			}
		}
		fmt.Fprintf(b, "| %s | %s | %.2f | %s | %s | %s | %.1f | %.2f |\n", profile, p, s.PolicyMean(p)/1e6, gain, ci, lead, meanOf(slo), meanOf(moves))
	}
}

// paperTableV holds the paper's Table V (App. H): the protected flow's mean
// throughput per scenario, MB/s, for static, reactive and the agent.
var paperTableV = map[string][3]float64{
	"S1": {4.63, 8.38, 14.99}, "S2": {2.16, 10.77, 14.60}, "S3": {2.94, 8.01, 14.51}, "S4": {2.96, 11.25, 14.96},
	"S5": {3.70, 11.54, 14.98}, "S6": {12.19, 12.05, 14.94}, "S7": {4.70, 6.89, 6.83}, "S8": {4.97, 11.29, 13.74},
	"S9": {6.36, 7.98, 14.69}, "S10": {3.52, 11.02, 15.07},
}

// writeBesidePaper writes the paper's Table V beside the profile's static,
// reactive and agent means per scenario of S1–S10, and the gains over
// reactive.
func writeBesidePaper(b *strings.Builder, profile string, s *eval.Summary) {
	fmt.Fprintf(b, "## Beside the paper's Table V (profile %s)\n\n", profile)
	b.WriteString("Mean throughput of the protected flow, MB/s: the paper's testbed (App. H, Table V) and this profile, S1–S10, 3 repeats each.\n\n")
	b.WriteString("| scenario | paper static | paper reactive | paper agent | static | reactive | agent | oracle |\n|---|---|---|---|---|---|---|---|\n")
	cell := func(sc, p string) string {
		if c, ok := s.Cell(sc, p); ok {
			return fmt.Sprintf("%.2f", c.MeanThroughput/1e6)
		}
		return "–"
	}
	var paper [3]float64
	for _, sc := range headlineScenarios {
		v := paperTableV[sc]
		for i := range paper {
			paper[i] += v[i] / float64(len(headlineScenarios))
		}
		fmt.Fprintf(b, "| %s | %.2f | %.2f | %.2f | %s | %s | %s | %s |\n", sc, v[0], v[1], v[2],
			cell(sc, "static"), cell(sc, "reactive"), cell(sc, "agent"), cell(sc, eval.OracleName))
	}
	mean := func(p string) string {
		m := s.PolicyMean(p) // s holds S1–S10 only
		if math.IsNaN(m) {
			return "–"
		}
		return fmt.Sprintf("**%.2f**", m/1e6)
	}
	fmt.Fprintf(b, "| **mean** | **%.2f** | **%.2f** | **%.2f** | %s | %s | %s | %s |\n\n", paper[0], paper[1], paper[2],
		mean("static"), mean("reactive"), mean("agent"), mean(eval.OracleName))
	b.WriteString("Gain over reactive, S1–S10 (scenario bootstrap interval): paper agent 1.40× [1.28×, 1.56×]")
	for _, p := range []string{"agent", eval.OracleName, "crowd"} {
		if c, ok := s.Comparison(p); ok {
			fmt.Fprintf(b, "; %s %.2f× [%.2f×, %.2f×]", p, c.Gain, c.GainLo, c.GainHi)
			if len(c.LeadScenarios) > 0 {
				fmt.Fprintf(b, ", lead %.1f s [%.1f, %.1f] (n = %d)", c.Lead, c.LeadLo, c.LeadHi, len(c.LeadScenarios))
			}
		}
	}
	b.WriteString(" (paper lead 34.2 s [26.8, 41.5], n = 8).\n\n")
}
