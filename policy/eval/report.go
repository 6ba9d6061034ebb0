package eval

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/proflow-sdn/proflow/internal/fileutil"
)

// mbps formats a rate in bytes/s as MB/s (10^6 bytes per second), the unit
// of the paper's tables.
func mbps(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v/1e6, 'f', 2, 64)
}

func secs(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func bps(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// windowText describes the evaluation window for the report header: "40 s",
// or with o.Windows holding different windows each scenario's own, in the
// order of scenarios ("each scenario's own (S1, S5: 40 s; mine: 60 s)").
func windowText(o Options, scenarios []string) string {
	var order []float64
	names := map[float64][]string{}
	for _, sc := range scenarios {
		w, ok := o.Windows[sc]
		if !ok {
			w = o.Window
		}
		if _, seen := names[w]; !seen {
			order = append(order, w)
		}
		names[w] = append(names[w], sc)
	}
	if len(order) < 2 {
		if len(order) == 1 {
			return fmt.Sprintf("%g s", order[0])
		}
		return fmt.Sprintf("%g s", o.Window)
	}
	parts := make([]string, len(order))
	for i, w := range order {
		parts[i] = fmt.Sprintf("%s: %g s", strings.Join(names[w], ", "), w)
	}
	return "each scenario's own (" + strings.Join(parts, "; ") + ")"
}

// WriteMarkdown writes the report: the per-scenario throughput table (the
// paper's Table V), reroute timing and overflow at reroute, and the
// dataset-wide comparison with the baseline (Table IV).
func (s *Summary) WriteMarkdown(w io.Writer, title string) error {
	var b strings.Builder
	o := s.Options
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "Window: %s after congestion start. Throughput in MB/s (10^6 bytes/s), times in seconds since congestion start, "+
		"overflow ξ in tc overlimits/s (printed by the paper as bytes/s). ", windowText(o, s.Scenarios))
	if len(s.Comparisons) > 0 {
		fmt.Fprintf(&b, "Baseline policy: %s. ", o.Baseline)
	}
	fmt.Fprintf(&b, "Lead times relative to the %s policy's degradation onset (throughput below %g%% of baseline; none where it never degrades, "+
		"\"no reference\" where %s did not run). ", o.Reference, 100*o.DegradationFraction, o.Reference)
	fmt.Fprintf(&b, "Intervals at %g%%.\n\n", 100*o.Confidence)
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "> %s\n\n", n)
	}

	b.WriteString("## Mean throughput of the protected flow per scenario\n\n")
	b.WriteString("Mean over repeats of each episode's mean throughput in the window; [min–max] across repeats.\n\n")
	b.WriteString("| scenario |")
	for _, p := range s.Policies {
		fmt.Fprintf(&b, " %s |", p)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(s.Policies)))
	b.WriteString("\n")
	for _, sc := range s.Scenarios {
		fmt.Fprintf(&b, "| %s |", sc)
		for _, p := range s.Policies {
			if c, ok := s.Cell(sc, p); ok {
				fmt.Fprintf(&b, " %s [%s–%s] |", mbps(c.MeanThroughput), mbps(c.MinThroughput), mbps(c.MaxThroughput))
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("| **mean** |")
	for _, p := range s.Policies {
		fmt.Fprintf(&b, " **%s** |", mbps(s.PolicyMean(p)))
	}
	b.WriteString("\n\n")

	b.WriteString("## Reroutes\n\n")
	fmt.Fprintf(&b, "First reroute time (repeats that rerouted / repeats), second reroute time, lead time (positive: moved before the flow would degrade; "+
		"– where there is no reference onset), overflow ξ on the old switch at the first reroute, SLO-violation seconds (time in the window with the flow "+
		"below %g%% of its baseline, mean over repeats), moves per repeat, reroutes over all repeats and where they went.\n\n", 100*o.SLOFraction)
	b.WriteString("| scenario | policy | first reroute (s) | second (s) | lead (s) | ξ at reroute (/s) | degraded | SLO (s) | moves | reroutes | destinations |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range s.Cells {
		dest := c.Destinations
		if dest == "" {
			dest = "–"
		}
		lead := secs(c.Lead)
		if c.NoReference {
			lead = "no reference"
		}
		fmt.Fprintf(&b, "| %s | %s | %s (%d/%d) | %s (%d) | %s | %s | %d/%d | %s | %s | %d | %s |\n", c.Scenario, c.Policy,
			secs(c.FirstReroute), c.Fired, c.Repeats, secs(c.SecondReroute), c.SecondFired, lead,
			bps(c.OverflowAtReroute), c.Degraded, c.Repeats, secs(c.SLOSeconds), num(c.Moves, 2), c.Reroutes, dest)
	}
	b.WriteString("\n")
	s.writeKinds(&b)
	s.writeStrongest(&b)
	s.writeKindYardsticks(&b)

	if len(s.Comparisons) > 0 {
		fmt.Fprintf(&b, "## Comparison with %s\n\n", o.Baseline)
		if o.Baseline == "reactive" {
			b.WriteString("Reactive is the paper's baseline (§V-A): it reads only the overflow counter, so its lateness, and with it every gain below, " +
				"is set by how long the bucket's counted reserve lasts (see the sensitivity report, proflow sensitivity). " +
				"The yardstick is the strongest deployable policy, above.\n\n")
		}
		b.WriteString("Gain = ratio of dataset-wide mean throughputs, with a scenario-bootstrap interval; paired t-test across scenarios; " +
			"lead = baseline's first reroute − candidate's, over scenarios where the baseline rerouted on every repeat, with a t interval.\n\n")
		b.WriteString("| candidate | scenarios | mean (MB/s) | baseline mean (MB/s) | gain | gain CI | Δ (MB/s) | t | p | lead (s) | lead CI | lead n |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, c := range s.Comparisons {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | [%s, %s] | %s | %s | %s | %s | [%s, %s] | %d |\n",
				c.Candidate, len(c.Scenarios), mbps(c.CandidateMean), mbps(c.BaselineMean),
				ratio(c.Gain), ratio(c.GainLo), ratio(c.GainHi), mbps(c.MeanDiff),
				num(c.T, 2), pval(c.P), secs(c.Lead), secs(c.LeadLo), secs(c.LeadHi), len(c.LeadScenarios))
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "Per scenario: candidate − %s mean throughput, the mean of the differences of repeats run on the same seed, "+
			"with a t interval; better or worse where the interval excludes 0, tie where it holds 0 (the repeats cannot tell the two apart), "+
			"n/a where no repeat of both ran on one seed.\n\n", o.Baseline)
		b.WriteString("| scenario | candidate | pairs | Δ (MB/s) | Δ CI | verdict |\n|---|---|---|---|---|---|\n")
		for _, c := range s.Comparisons {
			for _, d := range c.PerScenario {
				fmt.Fprintf(&b, "| %s | %s | %d | %s | [%s, %s] | %s |\n", d.Scenario, c.Candidate, d.Pairs,
					mbps(d.Diff), mbps(d.DiffLo), mbps(d.DiffHi), d.Verdict)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2f×", v)
}

func num(v float64, prec int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func pval(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p < 1e-4:
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.4f", p)
}

// WriteCSV writes cells.csv, comparisons.csv, episodes.csv,
// scenario_diffs.csv (Comparison.PerScenario), strongest.csv
// (StrongestComparison.PerScenario) and kinds.csv (KindYardstick.PerScenario)
// into dir.
func (s *Summary) WriteCSV(dir string) error {
	cells := [][]string{{"scenario", "policy", "repeats", "mean_throughput_Bps", "min_throughput_Bps", "max_throughput_Bps",
		"fired", "first_reroute_s", "second_fired", "second_reroute_s", "overflow_at_reroute_Bps", "degraded", "degradation_s", "lead_s", "reroutes", "destinations",
		"moves", "slo_seconds", "kind", "latency_p50_s", "latency_p99_s", "kind_slo_seconds"}}
	for _, c := range s.Cells {
		cells = append(cells, []string{c.Scenario, c.Policy, strconv.Itoa(c.Repeats), f(c.MeanThroughput), f(c.MinThroughput),
			f(c.MaxThroughput), strconv.Itoa(c.Fired), f(c.FirstReroute), strconv.Itoa(c.SecondFired), f(c.SecondReroute),
			f(c.OverflowAtReroute), strconv.Itoa(c.Degraded), f(c.Degradation), f(c.Lead), strconv.Itoa(c.Reroutes), c.Destinations,
			f(c.Moves), f(c.SLOSeconds), c.Kind, f(c.LatencyP50), f(c.LatencyP99), f(c.KindSLOSeconds)})
	}
	cmps := [][]string{{"candidate", "baseline", "scenarios", "candidate_mean_Bps", "baseline_mean_Bps", "gain", "gain_lo", "gain_hi",
		"mean_diff_Bps", "t", "p", "lead_s", "lead_lo_s", "lead_hi_s", "lead_scenarios"}}
	for _, c := range s.Comparisons {
		cmps = append(cmps, []string{c.Candidate, c.Baseline, strings.Join(c.Scenarios, " "), f(c.CandidateMean), f(c.BaselineMean),
			f(c.Gain), f(c.GainLo), f(c.GainHi), f(c.MeanDiff), f(c.T), f(c.P), f(c.Lead), f(c.LeadLo), f(c.LeadHi),
			strings.Join(c.LeadScenarios, " ")})
	}
	eps := [][]string{{"scenario", "policy", "repeat", "seed", "baseline_Bps", "mean_throughput_Bps", "first_reroute_s", "overflow_at_reroute_Bps", "degradation_s"}}
	for _, sc := range s.Scenarios {
		for _, p := range s.Policies {
			for _, e := range s.Episodes[[2]string{sc, p}] {
				first, ovf := math.NaN(), math.NaN()
				if r, ok := e.reroute(0, s.Options.Window); ok {
					first, ovf = r.At, r.Overflow
				}
				onset := math.NaN()
				if t, ok := e.degradation(s.Options.DegradationFraction, s.Options.Window); ok {
					onset = t
				}
				eps = append(eps, []string{sc, p, strconv.Itoa(e.Repeat), strconv.FormatUint(e.Seed, 10), f(e.Baseline),
					f(e.meanThroughput(s.Options.Window)), f(first), f(ovf), f(onset)})
			}
		}
	}
	diffs := [][]string{{"scenario", "candidate", "baseline", "pairs", "diff_Bps", "diff_lo_Bps", "diff_hi_Bps", "verdict"}}
	for _, c := range s.Comparisons {
		for _, d := range c.PerScenario {
			diffs = append(diffs, []string{d.Scenario, c.Candidate, c.Baseline, strconv.Itoa(d.Pairs), f(d.Diff), f(d.DiffLo), f(d.DiffHi), d.Verdict})
		}
	}
	strongest := [][]string{{"scenario", "candidate", "strongest", "strongest_mean_Bps", "candidate_mean_Bps", "rel", "pairs", "diff_Bps", "diff_lo_Bps", "diff_hi_Bps", "verdict"}}
	for _, c := range s.StrongestComparisons {
		for _, d := range c.PerScenario {
			strongest = append(strongest, []string{d.Scenario, c.Candidate, d.Baseline, f(d.BaselineMean), f(d.CandidateMean), f(d.Rel),
				strconv.Itoa(d.Pairs), f(d.Diff), f(d.DiffLo), f(d.DiffHi), d.Verdict})
		}
	}
	for name, rows := range map[string][][]string{"cells.csv": cells, "comparisons.csv": cmps, "episodes.csv": eps, "scenario_diffs.csv": diffs,
		"strongest.csv": strongest, "kinds.csv": s.kindRows()} {
		if err := writeCSV(filepath.Join(dir, name), rows); err != nil {
			return err
		}
	}
	return nil
}

func f(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 8, 64)
}

func writeCSV(path string, rows [][]string) error {
	if err := fileutil.WriteCSV(path, rows); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// writeStrongest writes the section that sets every policy that is not
// deployable against the strongest deployable policy of each scenario.
func (s *Summary) writeStrongest(b *strings.Builder) {
	if len(s.StrongestComparisons) == 0 {
		return
	}
	o := s.Options
	b.WriteString("## Against the strongest deployable baseline\n\n")
	fmt.Fprintf(b, "In each scenario the strongest deployable baseline is the policy among %s with the highest mean throughput there "+
		"(a per-scenario envelope no single rule reaches; its mean over scenarios is \"strongest mean\"); \"best rule\" is the single deployable "+
		"policy with the highest mean over all the scenarios. Gains with scenario-bootstrap intervals. Per scenario: the candidate's difference "+
		"from that scenario's strongest, repeats paired by seed, with a t interval; \"worse by more than %g%%\" counts the scenarios whose mean is "+
		"more than that below the strongest's; \"gap closed\" is Σ(candidate − strongest) / Σ(oracle − strongest) over the scenarios where the oracle "+
		"is ahead of the strongest.\n\n", strings.Join(o.Deployable, ", "), 100*StrongestWorseBy)
	b.WriteString("| candidate | scenarios | mean (MB/s) | strongest mean (MB/s) | gain | gain CI | best rule | its mean (MB/s) | gain over it | CI | better / tie / worse | worse by > 2% | gap closed |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range s.StrongestComparisons {
		worse := "none"
		if len(c.WorseByMore) > 0 {
			worse = strings.Join(c.WorseByMore, ", ")
		}
		gap := "–"
		if !math.IsNaN(c.GapClosed) {
			gap = fmt.Sprintf("%.0f%% (%d scenarios)", 100*c.GapClosed, len(c.GapScenarios))
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | [%s, %s] | %s | %s | %s | [%s, %s] | %d / %d / %d | %s | %s |\n",
			c.Candidate, len(c.Scenarios), mbps(c.CandidateMean), mbps(c.StrongestMean), ratio(c.Gain), ratio(c.GainLo), ratio(c.GainHi),
			c.BestOverall, mbps(c.BestOverallMean), ratio(c.GainOverBest), ratio(c.GainOverBestLo), ratio(c.GainOverBestHi),
			c.Better, c.Ties, c.Worse, worse, gap)
	}
	if len(s.Envelopes) > 0 {
		fmt.Fprintf(b, "\nEvery policy held to the same yardstick, itself left out: in each scenario its mean against the best of the other deployable "+
			"policies; \"behind\" counts the scenarios where it is more than %g%% below that. A per-scenario envelope is a hard bar: a rule picked "+
			"with hindsight in each scenario is what the count is against.\n\n", 100*StrongestWorseBy)
		b.WriteString("| policy | scenarios | more than 2% behind the best of the others | worst shortfall |\n|---|---|---|---|\n")
		for _, e := range s.Envelopes {
			fmt.Fprintf(b, "| %s | %d | %d | %+.1f%% (%s) |\n", e.Policy, e.Scenarios, len(e.Behind), 100*e.Worst, e.WorstScenario)
		}
	}
	b.WriteString("\n| scenario | strongest | its mean (MB/s) | candidate | mean (MB/s) | Δ (MB/s) | Δ CI | Δ/strongest | verdict |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range s.StrongestComparisons {
		for _, d := range c.PerScenario {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | [%s, %s] | %+.1f%% | %s |\n", d.Scenario, d.Baseline, mbps(d.BaselineMean),
				c.Candidate, mbps(d.CandidateMean), mbps(d.Diff), mbps(d.DiffLo), mbps(d.DiffHi), 100*d.Rel, d.Verdict)
		}
	}
	b.WriteString("\n")
}
