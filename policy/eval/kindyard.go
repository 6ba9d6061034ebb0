package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// KindYardstick sets a candidate (a policy that is not deployable: the
// agent, the oracle) against the deployable policies on the objective of
// one kind of protected flow: the seconds in the window the flow missed it
// (Cell.KindSLOSeconds), lower better, over the scenarios of that kind.
type KindYardstick struct {
	// Kind is sim.KindRR, sim.KindRate or sim.KindOnOff.
	Kind string `json:"kind"`
	// Candidate is the policy set against the deployable ones.
	Candidate string `json:"candidate"`
	// Scenarios are the scenarios of the kind where the candidate and at
	// least one deployable policy ran.
	Scenarios []string `json:"scenarios"`
	// CandidateSLO is the mean over Scenarios of the candidate's SLO
	// seconds (each a mean over repeats).
	CandidateSLO float64 `json:"candidate_slo_seconds"`
	// BestRule is the deployable policy with the fewest mean SLO seconds
	// over Scenarios, BestRuleSLO that mean; Ratio is CandidateSLO /
	// BestRuleSLO with a scenario-bootstrap interval [RatioLo, RatioHi]
	// (+Inf when the best rule never missed its objective and the
	// candidate did, NaN when neither did).
	BestRule    string  `json:"best_rule"`
	BestRuleSLO float64 `json:"best_rule_slo_seconds"`
	Ratio       float64 `json:"ratio"`
	RatioLo     float64 `json:"ratio_lo"`
	RatioHi     float64 `json:"ratio_hi"`
	// StrongestSLO is the mean over Scenarios of each scenario's fewest
	// SLO seconds among the deployable policies (an envelope no single
	// rule reaches); StrongestRatio is CandidateSLO / StrongestSLO with its
	// interval.
	StrongestSLO   float64 `json:"strongest_slo_seconds"`
	StrongestRatio float64 `json:"strongest_ratio"`
	StrongestLo    float64 `json:"strongest_ratio_lo"`
	StrongestHi    float64 `json:"strongest_ratio_hi"`
	// OracleSLO is the oracle's mean SLO seconds over Scenarios, the best a
	// policy that reads the scenario does (NaN where it did not run in
	// all of them).
	OracleSLO float64 `json:"oracle_slo_seconds"`
	// CandidateP99 and BestRuleP99 are the means over Scenarios of the
	// cells' latency p99, seconds; CandidateGoodput and BestRuleGoodput the
	// means of their mean throughput, bytes/s.
	CandidateP99     float64 `json:"candidate_p99_s"`
	BestRuleP99      float64 `json:"best_rule_p99_s"`
	CandidateGoodput float64 `json:"candidate_goodput_Bps"`
	BestRuleGoodput  float64 `json:"best_rule_goodput_Bps"`
	// Better, Ties and Worse count the scenarios where the candidate's SLO
	// seconds are below, level with or above those of the scenario's
	// strongest deployable policy (the one with the fewest), repeats
	// paired by seed with a t interval; PerScenario holds each.
	Better      int        `json:"better"`
	Ties        int        `json:"ties"`
	Worse       int        `json:"worse"`
	PerScenario []KindDiff `json:"per_scenario"`
	// Traps are the scenarios where the oracle, which reads the scenario,
	// never moves the flow (no congestion on its path: no move is right);
	// TrapMoves is the candidate's mean moves per repeat there (NaN
	// without such scenarios).
	Traps     []string `json:"traps"`
	TrapMoves float64  `json:"trap_moves"`
	// Quiet are the scenarios of Options.Quiet among Scenarios (no
	// congester: the flow's own demand changes, no move is right);
	// QuietMoves is the candidate's mean moves per repeat there (NaN
	// without such scenarios).
	Quiet      []string `json:"quiet"`
	QuietMoves float64  `json:"quiet_moves"`
}

// KindDiff is a candidate's SLO seconds in one scenario against the
// scenario's strongest deployable policy: Diff is the strongest's minus
// the candidate's (positive: the candidate missed its objective less).
type KindDiff struct {
	ScenarioDiff
	Baseline     string  `json:"baseline"`
	CandidateSLO float64 `json:"candidate_slo_seconds"`
	BaselineSLO  float64 `json:"baseline_slo_seconds"`
}

// kindYardsticks fills KindYardsticks.
func (s *Summary) kindYardsticks() error {
	opt := s.Options
	deployable := func(p string) bool { return slices.Contains(opt.Deployable, p) }
	for _, kind := range []string{sim.KindRR, sim.KindRate, sim.KindOnOff} {
		var scenarios []string
		for _, sc := range s.Scenarios {
			for _, p := range s.Policies {
				if c, ok := s.Cell(sc, p); ok && c.Kind == kind && !math.IsNaN(c.KindSLOSeconds) {
					scenarios = append(scenarios, sc)
					break
				}
			}
		}
		if len(scenarios) == 0 {
			continue
		}
		for _, p := range s.Policies {
			if deployable(p) {
				continue
			}
			y, err := s.kindYardstick(kind, p, scenarios)
			if err != nil {
				return fmt.Errorf("eval: %s on the objective of %s flows: %w", p, kind, err)
			}
			if len(y.Scenarios) > 0 {
				s.KindYardsticks = append(s.KindYardsticks, y)
			}
		}
	}
	return nil
}

func (s *Summary) kindYardstick(kind, candidate string, scenarios []string) (KindYardstick, error) {
	opt := s.Options
	y := KindYardstick{Kind: kind, Candidate: candidate, OracleSLO: math.NaN(), TrapMoves: math.NaN(), QuietMoves: math.NaN(),
		Ratio: math.NaN(), RatioLo: math.NaN(), RatioHi: math.NaN(),
		StrongestRatio: math.NaN(), StrongestLo: math.NaN(), StrongestHi: math.NaN()}
	var cand, strongest, oracle, trapMoves, quietMoves []float64
	for _, sc := range scenarios {
		cc, ok := s.Cell(sc, candidate)
		if !ok {
			continue
		}
		best, bestSLO := "", math.Inf(1)
		for _, p := range s.Policies {
			if c, ok := s.Cell(sc, p); ok && slices.Contains(opt.Deployable, p) && c.KindSLOSeconds < bestSLO {
				best, bestSLO = p, c.KindSLOSeconds
			}
		}
		if best == "" {
			continue
		}
		y.Scenarios = append(y.Scenarios, sc)
		cand, strongest = append(cand, cc.KindSLOSeconds), append(strongest, bestSLO)
		d, err := s.scenarioDiffOf(sc, candidate, best, func(e *Episode) float64 { return -e.violationSeconds(opt.Window) })
		if err != nil {
			return y, err
		}
		y.PerScenario = append(y.PerScenario, KindDiff{ScenarioDiff: d, Baseline: best, CandidateSLO: cc.KindSLOSeconds, BaselineSLO: bestSLO})
		switch d.Verdict {
		case VerdictBetter:
			y.Better++
		case VerdictWorse:
			y.Worse++
		case VerdictTie:
			y.Ties++
		}
		if slices.Contains(opt.Quiet, sc) {
			y.Quiet = append(y.Quiet, sc)
			quietMoves = append(quietMoves, cc.Moves)
		}
		if oc, ok := s.Cell(sc, OracleName); ok {
			oracle = append(oracle, oc.KindSLOSeconds)
			if oc.Reroutes == 0 {
				y.Traps = append(y.Traps, sc)
				trapMoves = append(trapMoves, cc.Moves)
			}
		}
	}
	if len(y.Scenarios) == 0 {
		return y, nil
	}
	y.CandidateSLO, y.StrongestSLO = mean(cand), mean(strongest)
	if len(oracle) == len(y.Scenarios) {
		y.OracleSLO = mean(oracle)
	}
	if len(trapMoves) > 0 {
		y.TrapMoves = mean(trapMoves)
	}
	if len(quietMoves) > 0 {
		y.QuietMoves = mean(quietMoves)
	}
	// The single best deployable policy over the same scenarios: the one
	// that ran in all of them with the fewest mean SLO seconds.
	var bestRule []float64
	y.BestRuleSLO = math.Inf(1)
	for _, p := range s.Policies {
		if !slices.Contains(opt.Deployable, p) {
			continue
		}
		var v []float64
		for _, sc := range y.Scenarios {
			if c, ok := s.Cell(sc, p); ok {
				v = append(v, c.KindSLOSeconds)
			}
		}
		if len(v) == len(y.Scenarios) && mean(v) < y.BestRuleSLO {
			y.BestRule, y.BestRuleSLO, bestRule = p, mean(v), v
		}
	}
	y.CandidateP99, y.CandidateGoodput = s.kindMeans(candidate, y.Scenarios)
	if y.BestRule == "" {
		y.BestRuleSLO, y.BestRuleP99, y.BestRuleGoodput = math.NaN(), math.NaN(), math.NaN()
	} else {
		y.BestRuleP99, y.BestRuleGoodput = s.kindMeans(y.BestRule, y.Scenarios)
	}
	// Each interval draws from a random stream of its own, so that neither
	// depends on whether the other was drawn (the best rule's is not where
	// no deployable policy ran in every scenario).
	var err error
	if y.BestRuleSLO > 0 || (y.BestRuleSLO == 0 && y.CandidateSLO > 0) {
		y.Ratio = y.CandidateSLO / y.BestRuleSLO // +Inf: the rule never missed, the candidate did
		rng := comparisonRNG(opt.Seed, "kind/"+kind+"/"+candidate)
		if y.RatioLo, y.RatioHi, err = bootstrapRatioCI(cand, bestRule, opt.Confidence, opt.Resamples, rng); err != nil {
			return y, fmt.Errorf("ratio interval over %v: %w", y.Scenarios, err)
		}
	}
	if y.StrongestSLO > 0 || (y.StrongestSLO == 0 && y.CandidateSLO > 0) {
		y.StrongestRatio = y.CandidateSLO / y.StrongestSLO
		rng := comparisonRNG(opt.Seed, "kind-strongest/"+kind+"/"+candidate)
		if y.StrongestLo, y.StrongestHi, err = bootstrapRatioCI(cand, strongest, opt.Confidence, opt.Resamples, rng); err != nil {
			return y, fmt.Errorf("ratio interval over %v: %w", y.Scenarios, err)
		}
	}
	return y, nil
}

// kindMeans returns a policy's mean latency p99 (seconds, over the cells
// that have one) and mean throughput over scenarios.
func (s *Summary) kindMeans(policy string, scenarios []string) (p99, goodput float64) {
	var lat, thr []float64
	for _, sc := range scenarios {
		if c, ok := s.Cell(sc, policy); ok {
			if !math.IsNaN(c.LatencyP99) {
				lat = append(lat, c.LatencyP99)
			}
			thr = append(thr, c.MeanThroughput)
		}
	}
	return mean(lat), mean(thr)
}

// writeKindYardsticks writes the per-kind section of the report.
func (s *Summary) writeKindYardsticks(b *strings.Builder) {
	if len(s.KindYardsticks) == 0 {
		return
	}
	b.WriteString("## Per flow kind: against the deployable rules on the kind's objective\n\n")
	b.WriteString("For each kind of protected flow, SLO seconds are the time in the window the flow missed its objective (see above), mean over repeats, then over the kind's scenarios; lower is better. " +
		"\"best rule\" is the single deployable policy with the fewest mean SLO seconds over those scenarios; \"strongest\" takes the fewest in each scenario (an envelope no single rule reaches). " +
		"Ratios are the candidate's SLO seconds over theirs, with scenario-bootstrap intervals (at most 0.5× is half). " +
		"Per scenario the candidate is better, tied or worse than that scenario's strongest (repeats paired by seed, t interval). " +
		"p99 is the mean over scenarios of the latency p99; goodput the mean throughput. " +
		"Traps are the scenarios where the oracle never moves (congestion that does not hurt, or none); quiet ones have no congester at all (the flow's own demand changes); moves are the candidate's mean per repeat there.\n\n")
	b.WriteString("| kind | candidate | scenarios | SLO (s) | best rule | its SLO (s) | ratio | CI | strongest SLO (s) | ratio | CI | oracle SLO (s) | p99 (ms) | best rule p99 (ms) | goodput (MB/s) | best rule goodput (MB/s) | better / tie / worse | traps | trap moves | quiet | quiet moves |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, y := range s.KindYardsticks {
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d / %d / %d | %d | %s | %d | %s |\n",
			y.Kind, y.Candidate, len(y.Scenarios), num(y.CandidateSLO, 1), orDash(y.BestRule), num(y.BestRuleSLO, 1),
			RatioString(y.Ratio), RatioCIString(y.RatioLo, y.RatioHi), num(y.StrongestSLO, 1), RatioString(y.StrongestRatio), RatioCIString(y.StrongestLo, y.StrongestHi),
			num(y.OracleSLO, 1), num(1e3*y.CandidateP99, 1), num(1e3*y.BestRuleP99, 1), num(y.CandidateGoodput/1e6, 2), num(y.BestRuleGoodput/1e6, 2),
			y.Better, y.Ties, y.Worse, len(y.Traps), num(y.TrapMoves, 2), len(y.Quiet), num(y.QuietMoves, 2))
	}
	b.WriteString("\n")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// RatioString prints a ratio of SLO seconds as the reports do: "–" when
// it is undefined (neither missed its objective), "∞" when only the
// baseline never missed it, else two decimals and ×.
func RatioString(r float64) string {
	switch {
	case math.IsNaN(r):
		return "–"
	case math.IsInf(r, 1):
		return "∞"
	}
	return fmt.Sprintf("%.2f×", r)
}

// RatioCIString prints a ratio's interval as the reports do: "–" when it
// is undefined, an unbounded end as "∞".
func RatioCIString(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "–"
	}
	end := func(v float64) string {
		if math.IsInf(v, 1) {
			return "∞"
		}
		return fmt.Sprintf("%.2f×", v)
	}
	return "[" + end(lo) + ", " + end(hi) + "]"
}

// kindRows returns kinds.csv: one row per yardstick and scenario.
func (s *Summary) kindRows() [][]string {
	rows := [][]string{{"kind", "candidate", "scenario", "strongest", "strongest_slo_s", "candidate_slo_s", "pairs", "diff_s", "diff_lo_s", "diff_hi_s", "verdict"}}
	for _, y := range s.KindYardsticks {
		for _, d := range y.PerScenario {
			rows = append(rows, []string{y.Kind, y.Candidate, d.Scenario, d.Baseline, f(d.BaselineSLO), f(d.CandidateSLO),
				fmt.Sprint(d.Pairs), f(d.Diff), f(d.DiffLo), f(d.DiffHi), d.Verdict})
		}
	}
	return rows
}

// QuietScenarios returns the names of the scenarios with no congester
// (Options.Quiet).
func QuietScenarios(scs []*sim.Scenario) []string {
	var out []string
	for _, sc := range scs {
		if len(sc.Congesters) == 0 {
			out = append(out, sc.Name)
		}
	}
	return out
}
