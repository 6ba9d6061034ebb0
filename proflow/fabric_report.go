package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// fabricReportFlags are the flags of fabric report.
type fabricReportFlags struct {
	traces, baseline, out, title string
}

// fabricReportFlagSet returns fabric report's flag set and the settings it
// fills.
func fabricReportFlagSet(e *env) (*flag.FlagSet, *fabricReportFlags) {
	sub := fabricSubs[slices.IndexFunc(fabricSubs, func(s fabricSub) bool { return s.name == "report" })]
	fset := e.newFlags("fabric report", "fabric report [flags]\n\n"+sub.summary)
	f := &fabricReportFlags{}
	fset.StringVar(&f.traces, "traces", "", "comma-separated `DIRS` whose *.jsonl.gz traces (fabric run -traces, fabric evaluate's OUT/traces) are summarized, subfolders included")
	fset.StringVar(&f.baseline, "baseline", "reactive", "policy the others are compared with (one of the traces' policies)")
	fset.StringVar(&f.out, "out", "out/fabric-report", "directory for report.md, CSV files and PNG figures")
	fset.StringVar(&f.title, "title", "proflow evaluation on the Open vSwitch fabric (from traces)", "report title")
	return fset, f
}

// fabricReport runs fabric report: the evaluation's report of recorded
// real episodes, against any baseline, over the shortest window of the
// episodes (no root, no fabric).
func fabricReport(e *env, args []string) error {
	const cmdName = "fabric report"
	fset, f := fabricReportFlagSet(e)
	if err := parseFlags(fset, cmdName, args); err != nil {
		return err
	}
	if f.traces == "" {
		return fmt.Errorf("%s: -traces is empty, want one or more directories of traces: %w", cmdName, errUsage)
	}
	var eps []*eval.Episode
	window := 0.0
	for _, dir := range strings.Split(f.traces, ",") {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl.gz") {
				return err
			}
			tr, err := trace.ReadFile(path)
			if err != nil {
				return err
			}
			ep, err := eval.FromTrace(tr, 0)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if w := tr.Meta.End.Sub(tr.Meta.CongestionStart).Seconds(); window == 0 || w < window {
				window = w
			}
			eps = append(eps, ep)
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: -traces %s: %w", cmdName, dir, err)
		}
	}
	if len(eps) == 0 {
		return fmt.Errorf("%s: no *.jsonl.gz trace under %s, want at least one: %w", cmdName, f.traces, errUsage)
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("%s: -out: %w", cmdName, err)
	}
	opt := eval.DefaultOptions()
	opt.Baseline, opt.Window = f.baseline, window
	sum, err := eval.Summarize(eps, opt)
	if err != nil {
		return fmt.Errorf("%s: summarize: %w", cmdName, err)
	}
	sum.Notes = append(sum.Notes, fmt.Sprintf("Summarized from %d traces under %s; window %.1f s (the shortest episode's).", len(eps), f.traces, window))
	report, err := writeReport(f.out, "proflow fabric report "+strings.Join(args, " "), f.title, sum)
	if err != nil {
		return fmt.Errorf("%s: %w", cmdName, err)
	}
	if err := sum.WriteMarkdown(e.stdout, f.title); err != nil {
		return fmt.Errorf("%s: print report: %w", cmdName, err)
	}
	fmt.Fprintf(e.stderr, "%s: %d episodes; report %s\n", cmdName, len(eps), report)
	return nil
}
