package main

import (
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

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/progress"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

func profileCommand() command {
	return command{
		name:    "profile",
		summary: "show a simulator profile, check it against the paper's observables, or fit one by a grid search",
		run:     runProfile,
	}
}

// profileFlags are the flags every simulating command shares: the
// profile, and the fabric size and rate factor that resize and speed it up.
type profileFlags struct {
	profile, fabric *string
	rateFactor      *float64
}

// profileFlag adds -profile, -fabric and -rate-factor.
func profileFlag(fs *flag.FlagSet) *profileFlags {
	return &profileFlags{
		profile: fs.String("profile", sim.DefaultProfile, "simulated world: "+strings.Join(sim.Profiles(), ", ")+", or a profile JSON file (proflow profile show prints one); a name may carry a size and a rate factor, testbed-6x3@x2"),
		fabric:  fs.String("fabric", "", "fabric size `SxL`: S aggregation switches and L congestion leaves, for example 16x3 (default: the profile's; sim.Config.WithFabric)"),
		rateFactor: fs.Float64("rate-factor", 1, "run the profile at this many times its link speed: rates, buckets and queues scaled, times kept, "+
			"and the named scenarios' stream caps and flow rates with them (sim.Config.ScaleRates)"),
	}
}

// loadProfile resolves a -profile value, as a usage error naming the flag.
func loadProfile(cmd, value string) (sim.Config, error) {
	cfg, err := sim.LoadProfile(value)
	if err != nil {
		return sim.Config{}, fmt.Errorf("%s: -profile %s: %w: %w", cmd, value, err, errUsage)
	}
	return cfg, nil
}

// load resolves the flags into a profile, as a usage error naming the
// flag at fault.
func (p *profileFlags) load(cmd string) (sim.Config, error) {
	cfg, err := loadProfile(cmd, *p.profile)
	if err != nil {
		return sim.Config{}, err
	}
	if *p.fabric != "" {
		s, l, err := sim.ParseFabricSize(*p.fabric)
		if err == nil {
			cfg, err = cfg.WithFabric(s, l)
		}
		if err != nil {
			return sim.Config{}, fmt.Errorf("%s: -fabric %s: %w: %w", cmd, *p.fabric, err, errUsage)
		}
	}
	if cfg, err = cfg.ScaleRates(*p.rateFactor); err != nil {
		return sim.Config{}, fmt.Errorf("%s: -rate-factor %v: %w: %w", cmd, *p.rateFactor, err, errUsage)
	}
	return cfg, nil
}

func runProfile(ctx context.Context, e *env, args []string) error {
	usage := "profile show|check|fit [flags]"
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs := e.newFlags("profile", usage)
		if err := parseFlags(fs, "profile", args); err != nil {
			return err
		}
		fs.Usage()
		return fmt.Errorf("profile: want a subcommand: show, check or fit: %w", errUsage)
	}
	switch args[0] {
	case "show":
		return runProfileShow(e, args[1:])
	case "check":
		return runProfileCheck(ctx, e, args[1:])
	case "fit":
		return runProfileFit(ctx, e, args[1:])
	}
	return fmt.Errorf("profile: unknown subcommand %q, want show, check or fit: %w", args[0], errUsage)
}

func runProfileShow(e *env, args []string) error {
	fs := e.newFlags("profile show", "profile show [-profile testbed|datacenter|FILE.json]")
	prof := profileFlag(fs)
	if err := parseFlags(fs, "profile show", args); err != nil {
		return err
	}
	cfg, err := prof.load("profile show")
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("profile show: %w", err)
	}
	fmt.Fprintf(e.stdout, "%s\n", b)
	fmt.Fprintf(e.stderr, "profile %s, digest %s\n", cfg.Name, cfg.Digest())
	return nil
}

// checkFlags are the settings profile check and profile fit share.
type checkFlags struct {
	repeats, parallel *int
	seed              *uint64
	seeds             *string
}

func addCheckFlags(fs *flag.FlagSet, repeats int, seeds string) checkFlags {
	return checkFlags{
		repeats:  fs.Int("repeats", repeats, "repeats of each scenario in the policy sweep"),
		parallel: fs.Int("parallel", runtime.NumCPU(), "episodes simulated at once"),
		seed:     fs.Uint64("seed", 1, "base seed of the policy sweep"),
		seeds:    fs.String("seeds", seeds, "comma-separated seeds of the static measurements (alone, precursor, recovery)"),
	}
}

func (c checkFlags) check(cmd string, cfg sim.Config) (eval.ProfileCheck, error) {
	if err := checkAtLeastOne(cmd, flagInt{"repeats", *c.repeats}, flagInt{"parallel", *c.parallel}); err != nil {
		return eval.ProfileCheck{}, err
	}
	var seeds []uint64
	for _, s := range splitList(*c.seeds) {
		var v uint64
		if _, err := fmt.Sscan(s, &v); err != nil {
			return eval.ProfileCheck{}, badFlag(cmd, "seeds", *c.seeds, "comma-separated unsigned integers")
		}
		seeds = append(seeds, v)
	}
	if len(seeds) == 0 {
		return eval.ProfileCheck{}, badFlag(cmd, "seeds", *c.seeds, "at least one seed")
	}
	return eval.ProfileCheck{Config: cfg, Seeds: seeds, Repeats: *c.repeats, Seed: *c.seed, Parallelism: *c.parallel}, nil
}

func runProfileCheck(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("profile check", "profile check [-profile testbed|datacenter|FILE.json] [-repeats 3] [-out FILE.md]")
	prof := profileFlag(fs)
	cf := addCheckFlags(fs, 3, "1,2,3,4,5")
	out := fs.String("out", "", "also write the table to this Markdown file")
	if err := parseFlags(fs, "profile check", args); err != nil {
		return err
	}
	cfg, err := prof.load("profile check")
	if err != nil {
		return err
	}
	pc, err := cf.check("profile check", cfg)
	if err != nil {
		return err
	}
	bar := progress.New(e.stderr, "profile check "+cfg.Name, 1)
	pc.Progress = func(done, total int) { bar.SetTotal(total); bar.Set(done) }
	obs, err := pc.Measure(ctx)
	bar.Finish()
	if err != nil {
		return fmt.Errorf("profile check: %w", err)
	}
	vs := obs.Judge(eval.TestbedTargets())
	if *out != "" {
		if err := fileutil.WriteAtomic(*out, func(w io.Writer) error { return eval.WriteVerdicts(w, obs, vs) }); err != nil {
			return fmt.Errorf("profile check: -out: %w", err)
		}
	}
	return eval.WriteVerdicts(e.stdout, obs, vs)
}

// varyFlag is one -vary FIELD=V1,V2,… of profile fit.
type varyFlag struct {
	field  string
	values []json.RawMessage
}

type varyFlags []varyFlag

func (v *varyFlags) String() string { return fmt.Sprint(len(*v), " settings") }

// Set parses FIELD=V1,V2,…: each value a JSON literal (a number, true,
// false) or else a string ("50ms").
func (v *varyFlags) Set(s string) error {
	field, list, ok := strings.Cut(s, "=")
	if !ok || field == "" || list == "" {
		return fmt.Errorf("%q, want FIELD=V1,V2,… (a profile JSON field and its values)", s)
	}
	f := varyFlag{field: field}
	for _, val := range strings.Split(list, ",") {
		raw := json.RawMessage(val)
		if !json.Valid(raw) {
			b, _ := json.Marshal(val)
			raw = b
		}
		f.values = append(f.values, raw)
	}
	*v = append(*v, f)
	return nil
}

func runProfileFit(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("profile fit", "profile fit [-profile testbed] -vary FIELD=V1,V2,… [-vary …] [-out DIR]")
	prof := profileFlag(fs)
	var vary varyFlags
	fs.Var(&vary, "vary", "a profile field and the values to try, `FIELD=V1,V2,…` (repeatable; every combination is tried)")
	cf := addCheckFlags(fs, 1, "1,2")
	out := fs.String("out", "out/profile-fit", "directory for results.md and best.json")
	maxRuns := fs.Int("max", 200, "refuse a grid of more combinations than this")
	if err := parseFlags(fs, "profile fit", args); err != nil {
		return err
	}
	base, err := prof.load("profile fit")
	if err != nil {
		return err
	}
	if len(vary) == 0 {
		return badFlag("profile fit", "vary", "(none)", "at least one FIELD=V1,V2,… to search")
	}
	grid := [][]string{{}}
	for _, v := range vary {
		var next [][]string
		for _, g := range grid {
			for _, val := range v.values {
				next = append(next, append(slices.Clone(g), fmt.Sprintf("%q:%s", v.field, val)))
			}
		}
		grid = next
	}
	if len(grid) > *maxRuns {
		return badFlag("profile fit", "vary", fmt.Sprintf("(%d combinations)", len(grid)), fmt.Sprintf("at most -max %d combinations", *maxRuns))
	}
	configs := make([]sim.Config, len(grid))
	for i, g := range grid {
		cfg := base
		patch := "{" + strings.Join(g, ",") + "}"
		if err := json.Unmarshal([]byte(patch), &cfg); err != nil {
			return badFlag("profile fit", "vary", patch, fmt.Sprintf("profile fields and values (%v)", err))
		}
		if err := cfg.Validate(); err != nil {
			return badFlag("profile fit", "vary", patch, fmt.Sprintf("a valid profile (%v)", err))
		}
		cfg.Name = base.Name + "-fit"
		configs[i] = cfg
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("profile fit: -out: %w", err)
	}
	type result struct {
		patch string
		score float64
		cfg   sim.Config
		vs    []eval.Verdict
	}
	results := make([]result, len(configs))
	bar := progress.New(e.stderr, "profile fit", len(configs))
	for i, cfg := range configs {
		pc, err := cf.check("profile fit", cfg)
		if err != nil {
			return err
		}
		obs, err := pc.Measure(ctx)
		if err != nil {
			bar.Finish()
			return fmt.Errorf("profile fit: {%s}: %w", strings.Join(grid[i], ","), err)
		}
		vs := obs.Judge(eval.TestbedTargets())
		results[i] = result{patch: "{" + strings.Join(grid[i], ",") + "}", score: eval.Score(vs), cfg: cfg, vs: vs}
		bar.Set(i + 1)
	}
	bar.Finish()
	slices.SortStableFunc(results, func(a, b result) int {
		switch {
		case a.score < b.score:
			return -1
		case a.score > b.score:
			return 1
		}
		return 0
	})
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- generated by: proflow profile fit %s -->\nBase profile %s; %d combinations, best first.\n\n| score | settings | misses |\n|---|---|---|\n",
		strings.Join(args, " "), base.Name, len(results))
	for _, r := range results {
		var miss []string
		for _, v := range r.vs {
			if v.Scored && !v.OK {
				miss = append(miss, fmt.Sprintf("%s %s", v.Observable, v.Measured))
			}
		}
		fmt.Fprintf(&b, "| %.3f | `%s` | %s |\n", r.score, r.patch, strings.ReplaceAll(strings.Join(miss, "; "), "|", "/"))
	}
	report := filepath.Join(*out, "results.md")
	if err := fileutil.WriteAtomic(report, func(w io.Writer) error { _, err := io.WriteString(w, b.String()); return err }); err != nil {
		return fmt.Errorf("profile fit: write %s: %w", report, err)
	}
	best, err := json.MarshalIndent(results[0].cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("profile fit: %w", err)
	}
	bestPath := filepath.Join(*out, "best.json")
	if err := fileutil.WriteAtomic(bestPath, func(w io.Writer) error { _, err := w.Write(append(best, '\n')); return err }); err != nil {
		return fmt.Errorf("profile fit: write %s: %w", bestPath, err)
	}
	fmt.Fprint(e.stdout, b.String())
	fmt.Fprintf(e.stderr, "profile fit: %s, best profile %s\n", report, bestPath)
	return nil
}
