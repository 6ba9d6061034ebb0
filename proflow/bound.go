package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
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

func boundCommand() command {
	return command{
		name:    "bound",
		summary: "the least shortfall behind the per-scenario best rule that any single-move policy must accept on a scenario and its twins (the same until a time, then ended or frozen)",
		run:     runBound,
	}
}

func runBound(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("bound", "bound -scenarios S1,S5 [-at 10s,12s,14s] [-twins end,freeze] [-policies agent] [-repeats 2] [-seed N] [-out DIR]")
	sf := newSearchFlags(fs, "bound", "S1", `"S1,S5", "S1-S4", "H3"`, "agent", "the twins share each repeat's seed", "bound.md, bound.csv and bound.png")
	at := fs.String("at", "10s,12s,14s", "times after congestion start at which each twin stops being the same as its scenario, comma-separated")
	twins := fs.String("twins", "end,freeze", `kinds of twin: end (every congester leaves then: sim.Scenario.EndedAt), freeze (every congester stays where it is then: sim.Scenario.FrozenAt)`)
	if err := sf.parse(fs, "bound", args); err != nil {
		return err
	}
	scenarios, files, candidates, model, gatePath := sf.scenarios, sf.files, sf.candidates, sf.model, sf.gatePath
	repeats, seed, parallel, out, prof := sf.repeats, sf.seed, sf.parallel, sf.out, sf.prof
	var times []time.Duration
	for _, s := range splitList(*at) {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return badFlag("bound", "at", *at, fmt.Sprintf("a comma-separated list of durations of 0s or more (%q is not one)", s))
		}
		times = append(times, d)
	}
	kinds := splitList(*twins)
	if len(times) == 0 || len(kinds) == 0 {
		return badFlag("bound", "at", *at, "at least one time, and at least one kind of -twins")
	}
	for i, k := range kinds {
		if (k != "end" && k != "freeze") || slices.Contains(kinds[:i], k) {
			return badFlag("bound", "twins", *twins, "a comma-separated list of end, freeze, each once")
		}
	}
	cfg, err := prof.load("bound")
	if err != nil {
		return err
	}
	scs, err := selectScenarios(*scenarios, files, cfg, sim.DefaultLimits())
	if err != nil {
		return fmt.Errorf("bound: %w", err)
	}
	var pairs []eval.Twin
	var skipped []string
	for _, sc := range scs {
		if eval.MultiFlow(sc) {
			return badFlag("bound", "scenarios", *scenarios, fmt.Sprintf("scenarios with one protected flow (%s has several)", sc.Name))
		}
		for _, d := range times {
			for _, k := range kinds {
				twin := sc.EndedAt
				if k == "freeze" {
					twin = sc.FrozenAt
				}
				b, err := twin(d)
				if err != nil {
					return badFlag("bound", "at", *at, err.Error())
				}
				if reflect.DeepEqual(b.Congesters, sc.Congesters) {
					skipped = append(skipped, b.Name)
					continue
				}
				pairs = append(pairs, eval.Twin{A: sc, B: b, Diverge: d, Kind: k})
			}
		}
	}
	if len(pairs) == 0 {
		return fmt.Errorf("bound: every twin is the scenario itself (%s): pick other -at times or -twins", strings.Join(skipped, ", "))
	}
	ruleNames := eval.DeployablePolicies()
	rules, notes, err := deployableRules(ctx, "bound", cfg, *parallel)
	if err != nil {
		return err
	}
	cands, err := candidatePolicies("bound", *candidates, *model, *gatePath, cfg, rules)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("bound: -out: %w", err)
	}
	start := time.Now()
	bar := progress.New(e.stderr, "bound (episodes)", 0)
	bounds, err := eval.Bound(ctx, eval.BoundSpec{Twins: pairs, Rules: rules, Candidates: cands, Repeats: *repeats, Seed: *seed, Config: cfg, Parallelism: *parallel,
		Progress: func(done, total int) { bar.SetTotal(total); bar.Set(done) }})
	if err != nil {
		return fmt.Errorf("bound: %w", err)
	}
	bar.Finish()
	fans := eval.FanBound(bounds)
	generatedBy := "proflow bound " + strings.Join(args, " ")
	write := func(w io.Writer) error {
		fmt.Fprintf(w, "# What any policy can do on a scenario and its twins\n\n")
		fmt.Fprintf(w, "Profile %s (%s), repeats %d, base seed %d. A twin is the scenario until a time after congestion start, then its "+
			"congesters all leave (end) or all stay where they are (freeze); a controller sees the same in both until then, so every policy does the same in both until then. "+
			"Every single-move schedule (never, or one move at any decision time to any other switch) runs on both; the yardstick in each is the best of %s. "+
			"The least worst-case shortfall is the smaller of: the best move made by that time, judged by the worse of the two; and not moving by then, "+
			"with the best later schedule of each picked with hindsight. Above 2%%, every policy that moves at most once is more than 2%% behind the best rule in one of the two.\n\n",
			cfg.Name, cfg.Digest(), *repeats, *seed, strings.Join(ruleNames, ", "))
		fmt.Fprintf(w, "## Each scenario against all its twins at once\n\n"+
			"A policy makes one choice in the scenario, and that choice plays out in every twin still the same when it moves; a twin that left before "+
			"the move lets the policy do its best from then on. Whatever time it gives up waiting, the congestion may leave right after it moved, or "+
			"stay while it waits: the least worst-case shortfall is what the best single-move policy must accept over the scenario and these twins.\n\n")
		if err := eval.WriteFans(w, fans); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n## Each twin on its own\n\n")
		if err := eval.WriteBound(w, bounds); err != nil {
			return err
		}
		if len(skipped) > 0 {
			fmt.Fprintf(w, "\nNot run, the same as their scenario: %s.\n", strings.Join(skipped, ", "))
		}
		for _, n := range notes {
			fmt.Fprintf(w, "\n> %s\n", n)
		}
		return nil
	}
	report := filepath.Join(*out, "bound.md")
	fig := filepath.Join(*out, eval.FigBound)
	if err := writeSearchFiles("bound", report, generatedBy, write, eval.BoundCSV(bounds), fig,
		func() error { return eval.WriteBoundPlot(fig, fans) }); err != nil {
		return err
	}
	if err := write(e.stdout); err != nil {
		return fmt.Errorf("bound: print: %w", err)
	}
	fmt.Fprintf(e.stderr, "bound: %d scenarios, %d twins in %v; report %s, figure %s\n", len(fans), len(pairs), time.Since(start).Round(time.Millisecond), report, fig)
	return nil
}

// deployableRules builds the deployable rules (eval.DeployablePolicies),
// calibrating throughput-drop and latency-threshold on the profile's
// congestion-free traffic, for command cmd; it returns the calibrations'
// notes beside them.
func deployableRules(ctx context.Context, cmd string, cfg sim.Config, parallel int) ([]eval.PolicySpec, []string, error) {
	var rules []eval.PolicySpec
	var notes []string
	for _, n := range eval.DeployablePolicies() {
		var spec eval.PolicySpec
		var err error
		if build := calibratedPolicy(n); build != nil {
			var note string
			spec, note, err = build(ctx, cmd, dropCalibrate, cfg, parallel)
			notes = append(notes, note)
		} else {
			spec, err = eval.ReferencePolicy(n)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", cmd, err)
		}
		rules = append(rules, spec)
	}
	return rules, notes, nil
}

// candidatePolicies builds the policies of a -policies list for command
// cmd: agent (from model behind the gate file gatePath, or the gate the
// model records when it is ""), the oracle, or one of rules (the
// deployable rules, in the order of eval.DeployablePolicies), which a
// candidate then shares.
func candidatePolicies(cmd, list, model, gatePath string, cfg sim.Config, rules []eval.PolicySpec) ([]eval.PolicySpec, error) {
	ruleNames := eval.DeployablePolicies()
	var cands []eval.PolicySpec
	for _, n := range splitList(list) {
		var spec eval.PolicySpec
		var err error
		switch n {
		case "agent":
			var gate policy.GateConfig
			if gatePath != "" {
				if gate, err = eval.LoadGateConfig(gatePath); err != nil {
					return nil, badFlag(cmd, "gate", gatePath, fmt.Sprintf("a GateConfig JSON file (%v)", err))
				}
			}
			spec, err = eval.AgentPolicy("agent", model, gate, cfg.Topology())
		case eval.OracleName:
			spec = eval.OraclePolicy()
		default:
			i := slices.Index(ruleNames, n)
			if i < 0 {
				return nil, badFlag(cmd, "policies", list, fmt.Sprintf("a comma-separated list of agent, %s or the deployable rules %s (%q is none of them)",
					eval.OracleName, strings.Join(ruleNames, ", "), n))
			}
			spec = rules[i]
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cmd, err)
		}
		cands = append(cands, spec)
	}
	return cands, nil
}

// searchFlags are the flags bound and floor share beside their own.
type searchFlags struct {
	scenarios  *string
	files      listFlag
	candidates *string
	model      *string
	gatePath   *string
	repeats    *int
	seed       *uint64
	parallel   *int
	out        *string
	prof       *profileFlags
}

// newSearchFlags registers the shared flags of command cmd on fs:
// -scenarios (default defScenarios, examples naming forms it takes),
// -scenario-file, -policies (default defCandidates), -model, -gate,
// -repeats (seedNote saying how repeats share seeds), -seed, -parallel,
// -out (out/CMD, writing files) and the profile flags.
func newSearchFlags(fs *flag.FlagSet, cmd, defScenarios, examples, defCandidates, seedNote, files string) *searchFlags {
	sf := &searchFlags{}
	sf.scenarios = fs.String("scenarios", defScenarios, "scenarios, as for evaluate ("+examples+")")
	fs.Var(&sf.files, "scenario-file", "a scenario `FILE.json` of your own (repeatable; with no -scenarios, only these)")
	sf.candidates = fs.String("policies", defCandidates, "policies to set beside the "+cmd+", comma-separated: agent, oracle, the deployable rules (static, reactive, crowd, throughput-drop, latency-threshold), or none (\"\")")
	sf.model = fs.String("model", defaultModel, "model file of the agent")
	sf.gatePath = fs.String("gate", "", "GateConfig JSON `FILE` for the agent (default: the gate the model records)")
	sf.repeats = fs.Int("repeats", 2, "repeats per scenario and policy ("+seedNote+")")
	sf.seed = fs.Uint64("seed", 1, "base seed")
	sf.parallel = fs.Int("parallel", runtime.NumCPU(), "episodes simulated at once")
	sf.out = fs.String("out", "out/"+cmd, "directory for "+files)
	sf.prof = profileFlag(fs)
	return sf
}

// parse parses args for command cmd, runs only the -scenario-file
// scenarios when -scenarios is not given beside them, and checks that
// -repeats and -parallel are at least 1.
func (sf *searchFlags) parse(fs *flag.FlagSet, cmd string, args []string) error {
	if err := parseFlags(fs, cmd, args); err != nil {
		return err
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "scenarios" })
	if len(sf.files) > 0 && !set {
		*sf.scenarios = ""
	}
	return checkAtLeastOne(cmd, flagInt{"repeats", *sf.repeats}, flagInt{"parallel", *sf.parallel})
}

// writeSearchFiles writes what bound and floor leave in their -out
// directory for command cmd: the report (a generated-by line, then
// write's Markdown), the CSV beside it (its name the report's, .csv) and
// the figure fig, drawn by plot.
func writeSearchFiles(cmd, report, generatedBy string, write func(io.Writer) error, records [][]string, fig string, plot func() error) error {
	if err := fileutil.WriteAtomic(report, func(w io.Writer) error {
		fmt.Fprintf(w, "<!-- generated by: %s -->\n", generatedBy)
		return write(w)
	}); err != nil {
		return fmt.Errorf("%s: write %s: %w", cmd, report, err)
	}
	csvPath := strings.TrimSuffix(report, ".md") + ".csv"
	if err := fileutil.WriteCSV(csvPath, records); err != nil {
		return fmt.Errorf("%s: write %s: %w", cmd, filepath.Base(csvPath), err)
	}
	if err := plot(); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}
