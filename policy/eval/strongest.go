package eval

import (
	"fmt"
	"math"
	"slices"
)

// ThroughputDropName names the throughput-drop reference policy
// (policy.ThroughputDrop) in sweeps and reports.
const ThroughputDropName = "throughput-drop"

// DeployablePolicies returns the names of the non-learned policies an
// operator can deploy without training anything: static, reactive, crowd,
// throughput-drop and latency-threshold. The strongest of them in a
// scenario is the yardstick of the learned agent there. The oracle reads
// the scenario and is not deployable.
func DeployablePolicies() []string {
	return []string{"static", "reactive", "crowd", ThroughputDropName, LatencyThresholdName}
}

// StrongestWorseBy is how far below the strongest deployable policy's mean a
// candidate may fall in a scenario before the report flags it (2%).
const StrongestWorseBy = 0.02

// StrongestCell names the deployable policy with the highest mean
// throughput in one scenario.
type StrongestCell struct {
	Scenario string  `json:"scenario"`
	Policy   string  `json:"policy"`
	Mean     float64 `json:"mean"` // bytes/s
}

// StrongestDiff is a candidate's difference from the strongest deployable
// policy of one scenario (a ScenarioDiff against that policy) and the
// difference relative to its mean.
type StrongestDiff struct {
	ScenarioDiff
	// Baseline is the strongest deployable policy of the scenario.
	Baseline string `json:"baseline"`
	// CandidateMean and BaselineMean are the two policies' cell means, bytes/s.
	CandidateMean float64 `json:"candidate_mean"`
	BaselineMean  float64 `json:"baseline_mean"`
	// Rel is (CandidateMean − BaselineMean) / BaselineMean.
	Rel float64 `json:"rel"`
}

// StrongestComparison sets a candidate policy against the strongest
// deployable policy of every scenario both ran.
type StrongestComparison struct {
	Candidate string   `json:"candidate"`
	Scenarios []string `json:"scenarios"`
	// CandidateMean is the mean over the scenarios of the candidate's cell
	// means; StrongestMean the same of each scenario's strongest
	// deployable policy (a per-scenario envelope: no single rule reaches
	// it).
	CandidateMean float64 `json:"candidate_mean"`
	StrongestMean float64 `json:"strongest_mean"`
	// Gain is CandidateMean/StrongestMean with its scenario-bootstrap
	// interval.
	Gain   float64 `json:"gain"`
	GainLo float64 `json:"gain_lo"`
	GainHi float64 `json:"gain_hi"`
	// BestOverall is the single deployable policy with the highest mean
	// over the scenarios, BestOverallMean that mean; GainOverBest the
	// candidate's ratio to it with its interval.
	BestOverall     string  `json:"best_overall"`
	BestOverallMean float64 `json:"best_overall_mean"`
	GainOverBest    float64 `json:"gain_over_best"`
	GainOverBestLo  float64 `json:"gain_over_best_lo"`
	GainOverBestHi  float64 `json:"gain_over_best_hi"`
	// PerScenario holds the difference in each scenario.
	PerScenario []StrongestDiff `json:"per_scenario"`
	// Better, Ties, Worse and None count the verdicts.
	Better int `json:"better"`
	Ties   int `json:"ties"`
	Worse  int `json:"worse"`
	None   int `json:"none"`
	// WorseByMore lists the scenarios where the candidate's mean is more
	// than StrongestWorseBy below the strongest's.
	WorseByMore []string `json:"worse_by_more"`
	// GapScenarios are the scenarios where the oracle's mean is above the
	// strongest deployable policy's; GapClosed is the share of that gap
	// the candidate closes there, Σ(candidate − strongest) / Σ(oracle −
	// strongest) (NaN without the oracle or such scenarios).
	GapScenarios []string `json:"gap_scenarios"`
	GapClosed    float64  `json:"gap_closed"`
}

// EnvelopeShortfall is one policy measured as the agent is measured
// against the strongest deployable baseline, with itself left out of the
// envelope: in each scenario, its mean throughput against the highest of
// the other deployable policies'. It says how often each policy, learned
// or not, is more than StrongestWorseBy behind the best rule of a
// scenario picked with hindsight.
type EnvelopeShortfall struct {
	Policy string `json:"policy"`
	// Scenarios counts the scenarios where the policy and another
	// deployable policy ran.
	Scenarios int `json:"scenarios"`
	// Behind lists the scenarios where its mean is more than
	// StrongestWorseBy below the best other deployable policy's.
	Behind []string `json:"behind"`
	// Worst is the lowest (mean − best other)/best other over the
	// scenarios, in WorstScenario.
	Worst         float64 `json:"worst"`
	WorstScenario string  `json:"worst_scenario"`
}

// envelopes fills Envelopes.
func (s *Summary) envelopes() {
	deployable := func(p string) bool { return slices.Contains(s.Options.Deployable, p) }
	n := 0
	for _, p := range s.Policies {
		if deployable(p) {
			n++
		}
	}
	if n < 2 {
		return
	}
	for _, p := range s.Policies {
		e := EnvelopeShortfall{Policy: p, Worst: math.Inf(1)}
		for _, sc := range s.Scenarios {
			c, ok := s.Cell(sc, p)
			if !ok {
				continue
			}
			best := math.Inf(-1)
			for _, o := range s.Policies {
				if oc, ok := s.Cell(sc, o); ok && o != p && deployable(o) {
					best = max(best, oc.MeanThroughput)
				}
			}
			if math.IsInf(best, -1) || best <= 0 {
				continue
			}
			e.Scenarios++
			rel := (c.MeanThroughput - best) / best
			if rel < -StrongestWorseBy {
				e.Behind = append(e.Behind, sc)
			}
			if rel < e.Worst {
				e.Worst, e.WorstScenario = rel, sc
			}
		}
		if e.Scenarios > 0 {
			s.Envelopes = append(s.Envelopes, e)
		}
	}
}

// strongest fills Strongest, StrongestComparisons and Envelopes.
func (s *Summary) strongest() error {
	s.envelopes()
	opt := s.Options
	deployable := func(p string) bool { return slices.Contains(opt.Deployable, p) }
	for _, sc := range s.Scenarios {
		best := StrongestCell{Scenario: sc, Mean: math.Inf(-1)}
		for _, p := range s.Policies {
			if c, ok := s.Cell(sc, p); ok && deployable(p) && c.MeanThroughput > best.Mean {
				best.Policy, best.Mean = p, c.MeanThroughput
			}
		}
		if best.Policy != "" {
			s.Strongest = append(s.Strongest, best)
		}
	}
	if len(s.Strongest) == 0 {
		return nil
	}
	for _, p := range s.Policies {
		if deployable(p) {
			continue
		}
		c, err := s.compareStrongest(p)
		if err != nil {
			return fmt.Errorf("eval: compare %s with the strongest deployable policy: %w", p, err)
		}
		if len(c.Scenarios) > 0 {
			s.StrongestComparisons = append(s.StrongestComparisons, c)
		}
	}
	return nil
}

// StrongestOf returns the strongest deployable policy of a scenario.
func (s *Summary) StrongestOf(scenario string) (StrongestCell, bool) {
	for _, c := range s.Strongest {
		if c.Scenario == scenario {
			return c, true
		}
	}
	return StrongestCell{}, false
}

// StrongestComparison returns the comparison of a candidate with the
// strongest deployable policies.
func (s *Summary) StrongestComparison(candidate string) (StrongestComparison, bool) {
	for _, c := range s.StrongestComparisons {
		if c.Candidate == candidate {
			return c, true
		}
	}
	return StrongestComparison{}, false
}

func (s *Summary) compareStrongest(candidate string) (StrongestComparison, error) {
	opt := s.Options
	cmp := StrongestComparison{Candidate: candidate, GapClosed: math.NaN()}
	var a, b []float64
	var gapCand, gapOracle float64
	for _, st := range s.Strongest {
		cc, ok := s.Cell(st.Scenario, candidate)
		if !ok {
			continue
		}
		cmp.Scenarios = append(cmp.Scenarios, st.Scenario)
		a, b = append(a, cc.MeanThroughput), append(b, st.Mean)
		d, err := s.scenarioDiff(st.Scenario, candidate, st.Policy)
		if err != nil {
			return cmp, err
		}
		sd := StrongestDiff{ScenarioDiff: d, Baseline: st.Policy, CandidateMean: cc.MeanThroughput, BaselineMean: st.Mean,
			Rel: (cc.MeanThroughput - st.Mean) / st.Mean}
		cmp.PerScenario = append(cmp.PerScenario, sd)
		switch d.Verdict {
		case VerdictBetter:
			cmp.Better++
		case VerdictWorse:
			cmp.Worse++
		case VerdictTie:
			cmp.Ties++
		default:
			cmp.None++
		}
		if sd.Rel < -StrongestWorseBy {
			cmp.WorseByMore = append(cmp.WorseByMore, st.Scenario)
		}
		if oc, ok := s.Cell(st.Scenario, OracleName); ok && oc.MeanThroughput > st.Mean {
			cmp.GapScenarios = append(cmp.GapScenarios, st.Scenario)
			gapCand += cc.MeanThroughput - st.Mean
			gapOracle += oc.MeanThroughput - st.Mean
		}
	}
	if len(cmp.Scenarios) == 0 {
		return cmp, nil
	}
	if gapOracle > 0 {
		cmp.GapClosed = gapCand / gapOracle
	}
	cmp.CandidateMean, cmp.StrongestMean = mean(a), mean(b)
	cmp.Gain = cmp.CandidateMean / cmp.StrongestMean
	rng := comparisonRNG(opt.Seed, "strongest/"+candidate)
	var err error
	if cmp.GainLo, cmp.GainHi, err = bootstrapRatioCI(a, b, opt.Confidence, opt.Resamples, rng); err != nil {
		return cmp, fmt.Errorf("gain interval over scenarios %v: %w", cmp.Scenarios, err)
	}
	// The single best deployable policy over the same scenarios.
	cmp.BestOverallMean = math.Inf(-1)
	for _, p := range s.Policies {
		if !slices.Contains(opt.Deployable, p) {
			continue
		}
		var ms []float64
		for _, sc := range cmp.Scenarios {
			if c, ok := s.Cell(sc, p); ok {
				ms = append(ms, c.MeanThroughput)
			}
		}
		if len(ms) == len(cmp.Scenarios) && mean(ms) > cmp.BestOverallMean {
			cmp.BestOverall, cmp.BestOverallMean = p, mean(ms)
		}
	}
	cmp.GainOverBest, cmp.GainOverBestLo, cmp.GainOverBestHi = math.NaN(), math.NaN(), math.NaN()
	if cmp.BestOverall != "" {
		var best []float64
		for _, sc := range cmp.Scenarios {
			c, _ := s.Cell(sc, cmp.BestOverall)
			best = append(best, c.MeanThroughput)
		}
		cmp.GainOverBest = cmp.CandidateMean / cmp.BestOverallMean
		if cmp.GainOverBestLo, cmp.GainOverBestHi, err = bootstrapRatioCI(a, best, opt.Confidence, opt.Resamples, comparisonRNG(opt.Seed, "best/"+candidate)); err != nil {
			return cmp, fmt.Errorf("gain interval over %s across scenarios %v: %w", cmp.BestOverall, cmp.Scenarios, err)
		}
	} else {
		cmp.BestOverallMean = math.NaN()
	}
	return cmp, nil
}

// AllEpisodes returns the summarised episodes, scenario-major in the order
// of Scenarios and Policies, each group in its input order.
func (s *Summary) AllEpisodes() []*Episode {
	var eps []*Episode
	for _, sc := range s.Scenarios {
		for _, p := range s.Policies {
			eps = append(eps, s.Episodes[[2]string{sc, p}]...)
		}
	}
	return eps
}
