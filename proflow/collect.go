package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/progress"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
	"github.com/proflow-sdn/proflow/training"
)

func collectCommand() command {
	return command{
		name:    "collect",
		summary: "collect a training corpus on the simulated fabric with the strategies of Table I (or convert recorded traces)",
		run:     runCollect,
	}
}

func runCollect(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("collect", "collect [-episodes 779] [-seed 1] [-out corpus.dataset] [-traces DIR] [-shares FILE] | collect -from-traces DIR -out corpus.dataset")
	episodes := fs.Int("episodes", training.DefaultCollectEpisodes, "number of episodes")
	seed := fs.Uint64("seed", 1, "seed of every plan and episode")
	prof := profileFlag(fs)
	out := fs.String("out", "corpus.dataset", "dataset file to write (training.Dataset, safetensors)")
	traces := fs.String("traces", "", "also write every episode's trace into this directory")
	sharesPath := fs.String("shares", "", `JSON file of strategy shares, e.g. {"A": 0.1, "F_EARLY": 0.2} (default: the built-in shares)`)
	parallel := fs.Int("parallel", runtime.NumCPU(), "episodes simulated at once")
	fromTraces := fs.String("from-traces", "", "instead of simulating, convert the traces (*.jsonl, *.jsonl.gz) in this directory, e.g. recorded on a real fabric")
	list := fs.Bool("list", false, "list the strategies and their default shares, then exit")
	kindsFlag := fs.String("kinds", "", `shares of the protected flow's kinds, e.g. "bulk=0.4,rr=0.2,rate=0.2,onoff=0.2" (default: bulk only, the paper's corpus)`)
	layout := fs.String("layout", telemetry.StateLayout, "state layout of the dataset: "+telemetry.StateLayout+" (the paper's), "+telemetry.StateLayoutV2+" (adds uplink backlogs and the flow's latency), "+telemetry.StateLayoutV3+" (adds each switch's reserve deficit to v2), "+telemetry.StateLayoutV4+" (adds each switch's vacated flows to v2), "+telemetry.StateLayoutV5+" (adds both to v2), "+telemetry.StateLayoutV6+" (adds the reserve deficit of the flow's own switch to v2), "+telemetry.StateLayoutV7+" (adds each switch's reserve drain rate to v6) or "+telemetry.StateLayoutV8+" (adds the drain rate of the flow's own switch to v6)")
	if err := parseFlags(fs, "collect", args); err != nil {
		return err
	}
	// CollectConfig reads 0 episodes as its default and parallelism below 1
	// as 1; on the command line they are mistakes.
	if err := checkAtLeastOne("collect", flagInt{"episodes", *episodes}, flagInt{"parallel", *parallel}); err != nil {
		return err
	}
	if *list {
		sh := training.DefaultShares()
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "strategy\tshare\tdescription")
		for _, st := range training.Strategies() {
			fmt.Fprintf(tw, "%s\t%.2f\t%s\n", st, sh[string(st)], st.Description())
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("collect: -list: %w", err)
		}
		return nil
	}
	if err := makeOutputDirs("collect", [2]string{"out", *out}); err != nil {
		return err
	}
	if *fromTraces != "" {
		return collectFromTraces(e, *fromTraces, *out, *layout)
	}
	simCfg, err := prof.load("collect")
	if err != nil {
		return err
	}
	cfg := training.CollectConfig{Episodes: *episodes, Seed: *seed, Parallelism: *parallel, OutDir: *traces, Sim: simCfg, Layout: *layout}
	if *kindsFlag != "" {
		kinds, err := parseKinds(*kindsFlag)
		if err != nil {
			return fmt.Errorf("collect: -kinds: %w", err)
		}
		cfg.Kinds = kinds
	}
	if *sharesPath != "" {
		// A regular file of at most 64 KiB: a FIFO would block, /dev/zero
		// would be read until memory runs out.
		data, err := fileutil.ReadFile(*sharesPath, 1<<16)
		if err != nil {
			return fmt.Errorf("collect: -shares: %w", err)
		}
		if cfg.Shares, err = training.ReadShares(data); err != nil {
			return fmt.Errorf("collect: -shares %s: %w", *sharesPath, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	bar := progress.New(e.stderr, "collect", *episodes)
	cfg.Progress = func(done, _ int) { bar.Set(done) }
	start := time.Now()
	col, err := training.Collect(ctx, cfg)
	bar.Finish()
	if err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	elapsed := time.Since(start)
	if err := saveDataset(col.Dataset, *out); err != nil {
		return err
	}
	printCollection(e, col)
	fmt.Fprintf(e.stdout, "dataset: %v\n", col.Dataset.Stats())
	fmt.Fprintf(e.stdout, "corpus: %s\n", col.Dataset.Corpus)
	fmt.Fprintf(e.stdout, "wrote %s: %d episodes in %v\n", *out, len(col.Episodes), elapsed.Round(time.Millisecond))
	return nil
}

func saveDataset(ds *training.Dataset, path string) error {
	if err := ds.Save(path); err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	return nil
}

// printCollection writes one line per strategy: episodes, reroutes and the
// median time of the first reroute after the episode start.
func printCollection(e *env, col *training.Collection) {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tepisodes\trerouted\tmedian reroute (s)\ttransitions\t")
	for i, st := range training.Strategies() {
		if col.Counts[i] == 0 {
			continue
		}
		var firsts []float64
		n := 0
		for _, ep := range col.Episodes {
			if ep.Strategy != st {
				continue
			}
			n += ep.Transitions
			if len(ep.Reroutes) > 0 {
				firsts = append(firsts, ep.Reroutes[0].Seconds())
			}
		}
		med := "–"
		if len(firsts) > 0 {
			slices.Sort(firsts)
			med = fmt.Sprintf("%.1f", firsts[len(firsts)/2])
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t\n", st, col.Counts[i], len(firsts), med, n)
	}
	tw.Flush()
}

// collectFromTraces converts recorded traces into a dataset.
func collectFromTraces(e *env, dir, out, layout string) error {
	paths, err := listTraces(dir)
	if err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	if len(paths) == 0 {
		return fmt.Errorf("collect: no traces (*.jsonl, *.jsonl.gz) in %s", dir)
	}
	var trs []*trace.Episode
	for _, p := range paths {
		tr, err := trace.ReadFile(p)
		if err != nil {
			return fmt.Errorf("collect: %w", err)
		}
		if len(trs) > 0 && !sameTopology(trs[0], tr) {
			return fmt.Errorf("collect: %s has topology %+v, but %s has %+v: want one fabric", p, tr.Meta.Topology, paths[0], trs[0].Meta.Topology)
		}
		trs = append(trs, tr)
	}
	enc := telemetry.DefaultEncoderConfig(trs[0].Meta.Topology).WithLayout(layout)
	if err := enc.Validate(); err != nil {
		return fmt.Errorf("collect: -layout: %w", err)
	}
	corpus := fmt.Sprintf("proflow collect -from-traces %s: %d traces", dir, len(trs))
	ds, err := training.DatasetFromTraces(trs, enc, training.DefaultRewardConfig(), training.TraceOptions{}, corpus)
	if err != nil {
		return fmt.Errorf("collect: %w", err)
	}
	if err := saveDataset(ds, out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "dataset: %v\nwrote %s from %d traces\n", ds.Stats(), out, len(trs))
	return nil
}

func sameTopology(a, b *trace.Episode) bool {
	ta, tb := a.Meta.Topology, b.Meta.Topology
	return slices.Equal(ta.Switches, tb.Switches) && slices.Equal(ta.Leaves, tb.Leaves) && ta.BucketRate == tb.BucketRate
}

// parseKinds reads -kinds: comma-separated name=share pairs.
func parseKinds(s string) (map[string]float64, error) {
	kinds := map[string]float64{}
	for _, item := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("%q, want name=share pairs such as bulk=0.5,rr=0.5", item)
		}
		share, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("share of %s: %q, want a number", name, v)
		}
		if _, dup := kinds[name]; dup {
			return nil, fmt.Errorf("kind %s given twice", name)
		}
		kinds[name] = share
	}
	return kinds, nil
}
