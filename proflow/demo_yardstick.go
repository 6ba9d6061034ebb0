package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/proflow-sdn/proflow/policy/eval"
)

// defaultFamilySeed is the demo's base seed for the held-out family: no
// development run used it.
const defaultFamilySeed = 5000

// everyProfileText explains the demo's "Every profile, S1–S10" table.
const everyProfileText = "One line per policy and profile: the mean of the per-scenario means over S1–S10 (the paper's Table V), " +
	"the gain over reactive (the paper's baseline) with its scenario-bootstrap interval, the mean lead over reactive's first reroute, " +
	"and the means over the scenarios of the SLO-violation seconds (flow below 80% of its baseline) and of the moves per episode. " +
	"Each profile's full report is in its folder."

// yardstickText heads the demo's table of the agent against the strongest
// deployable baseline.
const yardstickText = "## Every profile: the agent against the strongest deployable baseline\n\n" +
	"The yardstick is the strongest deployable policy (static, reactive, crowd, throughput-drop, latency-threshold) of each scenario, not the paper's reactive " +
	"baseline. Per profile and scenario set: the agent's mean and the strongest's (a per-scenario envelope) with the gain's scenario-bootstrap " +
	"interval; the best single rule over the set and the gain over it; per-scenario verdicts (paired by seed, t interval); the scenarios where " +
	"the agent's mean is more than 2% below the strongest's; the share of the oracle's lead over the strongest the agent closes; and the mean " +
	"SLO-violation seconds and moves per episode of the agent and of the best rule. The held-out family is the yardstick no choice looked at.\n\n"

// yardstickHeader is the header of that table.
const yardstickHeader = "| profile | scenarios | repeats, seed | agent (MB/s) | strongest (MB/s) | gain | gain CI | best rule | gain over it | CI | better / tie / worse | worse by > 2% | gap closed | SLO s agent / rule | moves agent / rule |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"

// writeYardstick writes the table row of one profile and scenario set.
func writeYardstick(b *strings.Builder, profile, set string, repeats int, seed uint64, s *eval.Summary) {
	c, ok := s.StrongestComparison("agent")
	if !ok {
		fmt.Fprintf(b, "| %s | %s | %d, %d | no agent | | | | | | | | | | | | |\n", profile, set, repeats, seed)
		return
	}
	worse := "none"
	if len(c.WorseByMore) > 0 {
		worse = strings.Join(c.WorseByMore, ", ")
	}
	gap := "–"
	if !math.IsNaN(c.GapClosed) {
		gap = fmt.Sprintf("%.0f%% (%d)", 100*c.GapClosed, len(c.GapScenarios))
	}
	slo := func(p string) float64 { return cellMean(s, p, func(c eval.Cell) float64 { return c.SLOSeconds }) }
	moves := func(p string) float64 { return cellMean(s, p, func(c eval.Cell) float64 { return c.Moves }) }
	fmt.Fprintf(b, "| %s | %s | %d, %d | %.2f | %.2f | %.3f× | [%.3f×, %.3f×] | %s | %.3f× | [%.3f×, %.3f×] | %d / %d / %d | %s | %s | %.1f / %.1f | %.2f / %.2f |\n",
		profile, set, repeats, seed, c.CandidateMean/1e6, c.StrongestMean/1e6, c.Gain, c.GainLo, c.GainHi,
		c.BestOverall, c.GainOverBest, c.GainOverBestLo, c.GainOverBestHi, c.Better, c.Ties, c.Worse, worse, gap,
		slo("agent"), slo(c.BestOverall), moves("agent"), moves(c.BestOverall))
}

// kindTableText heads the demo's per-kind table.
const kindTableText = "## Every profile, per flow kind: the agent against the deployable rules on the kind's objective\n\n" +
	"On the held-out kinds family (request/response, rate-limited and on/off protected flows; no choice looked at it): per profile and kind, " +
	"the agent's SLO-violation seconds (the time its flow missed its objective: completion p99 above base RTT + 10 ms for rr, goodput below 90% of the demand for rate and onoff), " +
	"the best single deployable rule's over the same scenarios and the ratio with its scenario-bootstrap interval (at most 0.50× is half), " +
	"the per-scenario strongest rule's (an envelope) and the oracle's (the best a policy that reads the scenario does), the mean latency p99 and goodput, " +
	"per-scenario verdicts against the strongest, and the agent's moves per episode in the traps where the oracle stays (harmless congestion, or none) and in the quiet ones (no congester: the flow's own demand drops).\n\n"

// kindTableHeader is the header of that table.
const kindTableHeader = "| profile | scenarios | repeats, seed | kind | agent SLO (s) | best rule | its SLO (s) | ratio | CI | strongest SLO (s) | oracle SLO (s) | p99 agent / rule (ms) | goodput agent / rule (MB/s) | better / tie / worse | trap moves | quiet moves |\n" +
	"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"

// writeKindTable writes one row per kind of the agent's KindYardsticks.
func writeKindTable(b *strings.Builder, profile, set string, repeats int, seed uint64, s *eval.Summary) {
	n := 0
	for _, y := range s.KindYardsticks {
		if y.Candidate != "agent" {
			continue
		}
		n++
		moves := func(m float64, n int) string {
			if n == 0 {
				return "– (0)"
			}
			return fmt.Sprintf("%.2f (%d)", m, n)
		}
		fmt.Fprintf(b, "| %s | %s (%d) | %d, %d | %s | %.1f | %s | %.1f | %s | %s | %.1f | %.1f | %.0f / %.0f | %.2f / %.2f | %d / %d / %d | %s | %s |\n",
			profile, set, len(y.Scenarios), repeats, seed, y.Kind, y.CandidateSLO, y.BestRule, y.BestRuleSLO, eval.RatioString(y.Ratio), eval.RatioCIString(y.RatioLo, y.RatioHi), y.StrongestSLO, y.OracleSLO,
			1e3*y.CandidateP99, 1e3*y.BestRuleP99, y.CandidateGoodput/1e6, y.BestRuleGoodput/1e6, y.Better, y.Ties, y.Worse,
			moves(y.TrapMoves, len(y.Traps)), moves(y.QuietMoves, len(y.Quiet)))
	}
	if n == 0 {
		fmt.Fprintf(b, "| %s | %s | %d, %d | no agent | | | | | | | | | | | |\n", profile, set, repeats, seed)
	}
}

// cellMean is the mean over a policy's cells of one of their values.
func cellMean(s *eval.Summary, p string, v func(eval.Cell) float64) float64 {
	var xs []float64
	for _, sc := range s.Scenarios {
		if c, ok := s.Cell(sc, p); ok {
			xs = append(xs, v(c))
		}
	}
	return meanOf(xs)
}

// meanOf is the mean of xs; NaN when empty.
func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// isPaperScenario reports whether a scenario is one of the paper's S1–S12
// or their variants (S11b…, S12b…).
func isPaperScenario(name string) bool { return strings.HasPrefix(name, "S") }

// subsetSummary summarises again the episodes of s whose scenario keep
// accepts, with s's options.
func subsetSummary(s *eval.Summary, keep func(string) bool) (*eval.Summary, error) {
	eps := slices.DeleteFunc(s.AllEpisodes(), func(ep *eval.Episode) bool { return !keep(ep.Scenario) })
	sub, err := eval.Summarize(eps, s.Options)
	if err != nil {
		return nil, err
	}
	sub.Notes = s.Notes
	return sub, nil
}
