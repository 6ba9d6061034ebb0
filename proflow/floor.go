package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/internal/progress"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

func floorCommand() command {
	return command{
		name:    "floor",
		summary: "the fewest SLO seconds any policy moving a request/response, rate or on/off flow at most once can reach on each scenario, picked with hindsight, against the best single rule",
		run:     runFloor,
	}
}

func runFloor(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("floor", "floor -scenarios K1-K64 [-kinds rate] [-every 1s] [-policies agent,oracle] [-repeats 2] [-seed N] [-out DIR]")
	sf := newSearchFlags(fs, "floor", "kinds", `"kinds", "heldout-kinds", "K1-K64", "J3,J7"`, "agent,oracle", "every policy gets evaluate's seeds", "floor.md, floor.csv and floor.png")
	kinds := fs.String("kinds", "rr,rate,onoff", "kinds of protected flow to keep among the scenarios, comma-separated (rr, rate, onoff)")
	every := fs.Duration("every", 0, "spacing of the single moves' times from congestion start (default: the profile's control interval, every decision time; coarser runs fewer episodes and can only raise the floor)")
	if err := sf.parse(fs, "floor", args); err != nil {
		return err
	}
	scenarios, files, candidates, model, gatePath := sf.scenarios, sf.files, sf.candidates, sf.model, sf.gatePath
	repeats, seed, parallel, out, prof := sf.repeats, sf.seed, sf.parallel, sf.out, sf.prof
	if *every < 0 {
		return badFlag("floor", "every", every.String(), "a positive duration, or 0 for every decision time")
	}
	keep := splitList(*kinds)
	for i, k := range keep {
		if (k != sim.KindRR && k != sim.KindRate && k != sim.KindOnOff) || slices.Contains(keep[:i], k) {
			return badFlag("floor", "kinds", *kinds, "a comma-separated list of rr, rate, onoff, each once")
		}
	}
	if len(keep) == 0 {
		return badFlag("floor", "kinds", *kinds, "at least one of rr, rate, onoff")
	}
	cfg, err := prof.load("floor")
	if err != nil {
		return err
	}
	if *every != 0 && *every < cfg.Interval {
		return badFlag("floor", "every", every.String(), fmt.Sprintf("0 or at least the profile's control interval %v (a move lands at a decision time)", cfg.Interval))
	}
	all, err := selectScenarios(*scenarios, files, cfg, sim.DefaultLimits())
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	var scs []*sim.Scenario
	for _, sc := range all {
		if eval.MultiFlow(sc) {
			return badFlag("floor", "scenarios", *scenarios, fmt.Sprintf("scenarios with one protected flow (%s has several)", sc.Name))
		}
		if slices.Contains(keep, sc.PrimaryKind().Name()) {
			scs = append(scs, sc)
		}
	}
	if len(scs) == 0 {
		return badFlag("floor", "scenarios", *scenarios, fmt.Sprintf("at least one scenario protecting a flow of kind %s", strings.Join(keep, ", ")))
	}
	rules, notes, err := deployableRules(ctx, "floor", cfg, *parallel)
	if err != nil {
		return err
	}
	cands, err := candidatePolicies("floor", *candidates, *model, *gatePath, cfg, rules)
	if err != nil {
		return err
	}
	var candNames []string
	for _, c := range cands {
		candNames = append(candNames, c.Name)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("floor: -out: %w", err)
	}
	start := time.Now()
	bar := progress.New(e.stderr, "floor (episodes)", 0)
	rows, err := eval.Floor(ctx, eval.FloorSpec{Scenarios: scs, Rules: rules, Candidates: cands, Every: *every, Repeats: *repeats, Seed: *seed, Config: cfg,
		Parallelism: *parallel, Progress: func(done, total int) { bar.SetTotal(total); bar.Set(done) }})
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	bar.Finish()
	sum := eval.FloorKinds(rows, rand.New(rand.NewPCG(*seed, 0x666c6f6f72)))
	spacing := *every
	if spacing == 0 {
		spacing = cfg.Interval
	}
	generatedBy := "proflow floor " + strings.Join(args, " ")
	write := func(w io.Writer) error {
		fmt.Fprintf(w, "# What any policy moving the flow at most once can do\n\n")
		fmt.Fprintf(w, "Profile %s (%s), repeats %d, base seed %d (evaluate's seeds). On each scenario every single-move schedule ran: never moving, "+
			"and one move to every other switch at every %v from congestion start to the end of the window. The hindsight single move is the one with "+
			"the fewest SLO seconds there, picked knowing the scenario: no policy that moves at most once, learned or not, misses fewer. "+
			"Best measured also counts the rules and candidates, which may move more than once. The yardstick is the single deployable rule (%s) "+
			"with the fewest SLO seconds over the kind's scenarios; a policy meets \"at most half the best rule\" only at or below its half. "+
			"Ratios are over the best rule's SLO seconds, intervals scenario-bootstrap at 95%%.\n\n",
			cfg.Name, cfg.Digest(), *repeats, *seed, spacing, strings.Join(eval.DeployablePolicies(), ", "))
		if err := eval.WriteFloor(w, rows, sum, cfg.Topology().Switches, candNames); err != nil {
			return err
		}
		for _, n := range notes {
			fmt.Fprintf(w, "\n> %s\n", n)
		}
		return nil
	}
	report := filepath.Join(*out, "floor.md")
	fig := filepath.Join(*out, eval.FigFloor)
	if err := writeSearchFiles("floor", report, generatedBy, write, eval.FloorCSV(rows), fig,
		func() error { return eval.WriteFloorPlot(fig, sum, candNames) }); err != nil {
		return err
	}
	if err := write(e.stdout); err != nil {
		return fmt.Errorf("floor: print: %w", err)
	}
	fmt.Fprintf(e.stderr, "floor: %d scenarios in %v; report %s, figure %s\n", len(rows), time.Since(start).Round(time.Millisecond), report, fig)
	return nil
}
