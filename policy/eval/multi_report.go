package eval

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// FigMulti is the figure WritePlots of a MultiSummary writes: per scenario,
// the sum and the minimum-flow mean per policy and joint mode.
const FigMulti = "many-flows.png"

// MultiCell summarises the repeats of one policy in one joint mode on one
// multi-flow scenario. Rates are bytes/s; "[lo, hi]" fields are the range
// over repeats.
type MultiCell struct {
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	Mode     string `json:"mode"`
	Repeats  int    `json:"repeats"`
	// FlowMeans holds each flow's mean goodput over the window, averaged
	// over repeats, in the scenario's order.
	FlowMeans []float64 `json:"flow_means"`
	// Sum is the sum of the per-flow means, Min the smallest per-flow mean
	// (the worst-served flow), Jain Jain's fairness index of the per-flow
	// means: each the mean over repeats, with its range.
	Sum    float64 `json:"sum"`
	SumLo  float64 `json:"sum_lo"`
	SumHi  float64 `json:"sum_hi"`
	Min    float64 `json:"min"`
	MinLo  float64 `json:"min_lo"`
	MinHi  float64 `json:"min_hi"`
	Jain   float64 `json:"jain"`
	JainLo float64 `json:"jain_lo"`
	JainHi float64 `json:"jain_hi"`
	// Herding is the largest number of protected flows moved onto one
	// switch in one step, over the episodes and repeats.
	Herding int `json:"herding"`
	// OverBudget is the largest number of flows moved onto one switch in
	// one step beyond its budget in flows: ⌈(C − ρ_k) / demand⌉, with the
	// headroom from the observation the controller acted on and the mean
	// demand max(φ, φ0) of the flows moved there (0 for a switch without
	// headroom). 0 means no step herded beyond what the switch could take.
	OverBudget int `json:"over_budget"`
	// Reroutes counts the moves over all repeats (whole episodes);
	// JointHeld the admitted moves the joint step held.
	Reroutes  int `json:"reroutes"`
	JointHeld int `json:"joint_held"`
}

// JointComparison compares JointGreedy with JointIndependent for one
// policy on one scenario (or, with Scenario "all", over every scenario).
type JointComparison struct {
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	// N is the number of pairs: repeats (one scenario) or scenarios (all).
	N int `json:"n"`
	// SumRatio and MinRatio are joint's mean sum and mean minimum over
	// independent's, with bootstrap intervals over the pairs (repeats
	// share a seed in both modes; "all" pairs the per-scenario means).
	SumRatio float64 `json:"sum_ratio"`
	SumLo    float64 `json:"sum_lo"`
	SumHi    float64 `json:"sum_hi"`
	MinRatio float64 `json:"min_ratio"`
	MinLo    float64 `json:"min_lo"`
	MinHi    float64 `json:"min_hi"`
}

// WorseBy is how far below independent placement a joint ratio may lie
// before a report marks it worse (issue 13: never worse by more than 2%).
const WorseBy = 0.02

// Worse reports whether joint placement's sum or minimum is more than
// WorseBy below independent placement's.
func (c JointComparison) Worse() bool { return c.SumRatio < 1-WorseBy || c.MinRatio < 1-WorseBy }

// MultiSummary is the evaluation of multi-flow episodes.
type MultiSummary struct {
	Options   Options  `json:"options"`
	Scenarios []string `json:"scenarios"` // in first-seen order
	Policies  []string `json:"policies"`
	Modes     []string `json:"modes"`
	// Flows names each scenario's protected flows ("h1:5001→h8:5201").
	Flows       map[string][]string `json:"flows"`
	Cells       []MultiCell         `json:"cells"` // scenario, policy, mode
	Comparisons []JointComparison   `json:"comparisons"`
	// Episodes are the inputs by scenario, policy and mode.
	Episodes map[[3]string][]*MultiEpisode `json:"-"`
}

// Cell returns the cell of a scenario, policy and mode.
func (s *MultiSummary) Cell(scenario, policy, mode string) (MultiCell, bool) {
	for _, c := range s.Cells {
		if c.Scenario == scenario && c.Policy == policy && c.Mode == mode {
			return c, true
		}
	}
	return MultiCell{}, false
}

// Comparison returns the joint-vs-independent comparison of a policy on a
// scenario ("all" for the one over every scenario).
func (s *MultiSummary) Comparison(scenario, policy string) (JointComparison, bool) {
	for _, c := range s.Comparisons {
		if c.Scenario == scenario && c.Policy == policy {
			return c, true
		}
	}
	return JointComparison{}, false
}

// SummarizeMulti computes the cells and, where both JointIndependent and
// JointGreedy ran, the comparisons. It refuses invalid episodes, an
// episode without a sample in the window, and episodes of one scenario
// that protect different flows.
func SummarizeMulti(eps []*MultiEpisode, opt Options) (*MultiSummary, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if len(eps) == 0 {
		return nil, errors.New("eval: no multi-flow episodes to summarise")
	}
	s := &MultiSummary{Options: opt, Flows: map[string][]string{}, Episodes: map[[3]string][]*MultiEpisode{}}
	for i, e := range eps {
		if e == nil {
			return nil, fmt.Errorf("eval: multi-flow episode %d of %d is nil", i, len(eps))
		}
		if err := e.Validate(); err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(e.T, func(t float64) bool { return inWindow(t, opt.Window) }) {
			return nil, fmt.Errorf("%s: no sample in the evaluation window (0s, %vs]", e.id(), opt.Window)
		}
		names := make([]string, len(e.Flows))
		for j, f := range e.Flows {
			names[j] = flowName(f.ID.Src.String(), f.ID.SrcPort, f.ID.Dst.String(), f.ID.DstPort)
		}
		if prev, ok := s.Flows[e.Scenario]; ok && !slices.Equal(prev, names) {
			return nil, fmt.Errorf("%s: protects %v, another episode of the scenario %v", e.id(), names, prev)
		} else if !ok {
			s.Scenarios = append(s.Scenarios, e.Scenario)
			s.Flows[e.Scenario] = names
		}
		if !slices.Contains(s.Policies, e.Policy) {
			s.Policies = append(s.Policies, e.Policy)
		}
		if !slices.Contains(s.Modes, e.Mode) {
			s.Modes = append(s.Modes, e.Mode)
		}
		k := [3]string{e.Scenario, e.Policy, e.Mode}
		s.Episodes[k] = append(s.Episodes[k], e)
	}
	// Report modes in their canonical order, any others after.
	slices.SortStableFunc(s.Modes, func(a, b string) int { return modeRank(a) - modeRank(b) })
	for _, sc := range s.Scenarios {
		for _, p := range s.Policies {
			for _, m := range s.Modes {
				if group := s.Episodes[[3]string{sc, p, m}]; len(group) > 0 {
					s.Cells = append(s.Cells, summariseMultiCell(sc, p, m, group, opt.Window))
				}
			}
		}
	}
	for _, p := range s.Policies {
		var all [4][]float64 // joint sum, indep sum, joint min, indep min: per-scenario means
		for _, sc := range s.Scenarios {
			c, ok, err := s.compare(sc, p)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			s.Comparisons = append(s.Comparisons, c)
			jc, _ := s.Cell(sc, p, JointGreedy)
			ic, _ := s.Cell(sc, p, JointIndependent)
			all[0], all[1] = append(all[0], jc.Sum), append(all[1], ic.Sum)
			all[2], all[3] = append(all[2], jc.Min), append(all[3], ic.Min)
		}
		if len(all[0]) > 1 {
			c, err := s.ratios("all", p, all[0], all[1], all[2], all[3])
			if err != nil {
				return nil, err
			}
			s.Comparisons = append(s.Comparisons, c)
		}
	}
	return s, nil
}

func modeRank(m string) int {
	if i := slices.Index(JointModes(), m); i >= 0 {
		return i
	}
	return len(JointModes())
}

// flowName names a flow in reports by its hosts' addresses and ports.
func flowName(src string, sp uint16, dst string, dp uint16) string {
	return fmt.Sprintf("%s:%d→%s:%d", src, sp, dst, dp)
}

func summariseMultiCell(sc, p, m string, eps []*MultiEpisode, window float64) MultiCell {
	c := MultiCell{Scenario: sc, Policy: p, Mode: m, Repeats: len(eps), FlowMeans: make([]float64, len(eps[0].Flows))}
	var sums, mins, jains []float64
	for _, e := range eps {
		for i, x := range e.FlowMeans(window) {
			c.FlowMeans[i] += x / float64(len(eps))
		}
		mm := e.Metrics(window)
		sums, mins, jains = append(sums, mm.Sum), append(mins, mm.Min), append(jains, mm.Jain)
		c.Herding = max(c.Herding, mm.Herding)
		c.OverBudget = max(c.OverBudget, mm.OverBudget)
		c.Reroutes += mm.Reroutes
		c.JointHeld += e.JointHeld
	}
	c.Sum, c.SumLo, c.SumHi = mean(sums), slices.Min(sums), slices.Max(sums)
	c.Min, c.MinLo, c.MinHi = mean(mins), slices.Min(mins), slices.Max(mins)
	c.Jain, c.JainLo, c.JainHi = mean(jains), slices.Min(jains), slices.Max(jains)
	return c
}

// compare pairs the joint and independent episodes of a scenario and
// policy by repeat; ok is false when either mode did not run.
func (s *MultiSummary) compare(sc, p string) (JointComparison, bool, error) {
	joint := s.Episodes[[3]string{sc, p, JointGreedy}]
	indep := s.Episodes[[3]string{sc, p, JointIndependent}]
	if len(joint) == 0 || len(indep) == 0 {
		return JointComparison{}, false, nil
	}
	byRepeat := map[int]*MultiEpisode{}
	for _, e := range indep {
		byRepeat[e.Repeat] = e
	}
	var js, is, jm, im []float64
	for _, e := range joint {
		o, ok := byRepeat[e.Repeat]
		if !ok {
			continue
		}
		if o.Seed != e.Seed {
			return JointComparison{}, false, fmt.Errorf("%s: seed %d, but the independent episode of repeat %d has seed %d, want the same traffic", e.id(), e.Seed, e.Repeat, o.Seed)
		}
		a, b := e.Metrics(s.Options.Window), o.Metrics(s.Options.Window)
		js, is, jm, im = append(js, a.Sum), append(is, b.Sum), append(jm, a.Min), append(im, b.Min)
	}
	if len(js) == 0 {
		return JointComparison{}, false, nil
	}
	c, err := s.ratios(sc, p, js, is, jm, im)
	return c, err == nil, err
}

// ratios computes a comparison from paired values, with its own bootstrap
// generator (seeded by Options.Seed, the scenario and the policy).
func (s *MultiSummary) ratios(sc, p string, js, is, jm, im []float64) (JointComparison, error) {
	opt := s.Options
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s", sc, p)
	rng := rand.New(rand.NewPCG(opt.Seed, h.Sum64()))
	c := JointComparison{Scenario: sc, Policy: p, N: len(js), SumRatio: mean(js) / mean(is), MinRatio: mean(jm) / mean(im)}
	var err error
	if c.SumLo, c.SumHi, err = bootstrapRatioCI(js, is, opt.Confidence, opt.Resamples, rng); err != nil {
		return c, fmt.Errorf("eval: joint vs independent, %s on %s, sum: %w", p, sc, err)
	}
	if c.MinLo, c.MinHi, err = bootstrapRatioCI(jm, im, opt.Confidence, opt.Resamples, rng); err != nil {
		return c, fmt.Errorf("eval: joint vs independent, %s on %s, minimum: %w", p, sc, err)
	}
	return c, nil
}

// WriteMarkdown writes the many-flow section of a report. With a title it
// is a report of its own, headed by the title and the notes; without, a
// section to append to Summary.WriteMarkdown's report.
func (s *MultiSummary) WriteMarkdown(w io.Writer, title string, notes []string) error {
	var b strings.Builder
	o := s.Options
	if title != "" {
		fmt.Fprintf(&b, "# %s\n\n", title)
		for _, n := range notes {
			fmt.Fprintf(&b, "> %s\n\n", n)
		}
	}
	b.WriteString("## Many protected flows\n\n")
	fmt.Fprintf(&b, "Scenarios %s protect several flows at once, run by a MultiController: every flow has its own encoder, baseline, policy and gate "+
		"(the agent's weights shared, its recorded gate per flow). Mode %s moves every flow where its gate admits it (proflow.Independent); "+
		"mode %s shares each switch's headroom among the moves of a step (proflow.Greedy). Both modes run the same policies on the same seeds. "+
		"Window: %g s after congestion start; throughput in MB/s (10^6 bytes/s), each flow's true goodput. "+
		"Sum and min are the sum and the smallest of the per-flow means; Jain = (Σx)²/(n·Σx²) over them. "+
		"Herding: the most protected flows moved onto one switch in one step (max over the episode and repeats); "+
		"over budget: the most flows moved onto one switch in one step beyond ⌈(C − ρ_k)/demand⌉ (headroom in the observation acted on, demand max(φ, φ0)); "+
		"reroutes: all moves over all repeats; joint holds: moves the joint step held. Values: mean [min–max] over repeats.\n\n",
		strings.Join(s.Scenarios, ", "), JointIndependent, JointGreedy, o.Window)
	b.WriteString("| scenario | policy | mode | flows | sum (MB/s) | min flow (MB/s) | Jain | herding | over budget | reroutes | joint holds |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range s.Cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s [%s–%s] | %s [%s–%s] | %s [%s–%s] | %d | %d | %d | %d |\n",
			c.Scenario, c.Policy, c.Mode, len(c.FlowMeans), mbps(c.Sum), mbps(c.SumLo), mbps(c.SumHi),
			mbps(c.Min), mbps(c.MinLo), mbps(c.MinHi), num(c.Jain, 3), num(c.JainLo, 3), num(c.JainHi, 3),
			c.Herding, c.OverBudget, c.Reroutes, c.JointHeld)
	}
	b.WriteString("\n")

	b.WriteString("### Mean throughput per protected flow\n\n")
	b.WriteString("Each flow's mean over the window, averaged over repeats, in the scenario's order (MB/s).\n\n")
	b.WriteString("| scenario | policy | mode | per flow |\n|---|---|---|---|\n")
	for _, c := range s.Cells {
		vals := make([]string, len(c.FlowMeans))
		for i, v := range c.FlowMeans {
			vals[i] = mbps(v)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Scenario, c.Policy, c.Mode, strings.Join(vals, ", "))
	}
	b.WriteString("\n")

	if len(s.Comparisons) > 0 {
		fmt.Fprintf(&b, "### Joint vs independent placement\n\n")
		fmt.Fprintf(&b, "Ratio %s/%s of the mean sum and of the mean minimum-flow throughput, with a %g%% bootstrap interval "+
			"over the repeats (paired by seed) or, on the row \"all\", over the scenarios (per-scenario means). "+
			"\"worse\" marks a ratio more than %g%% below 1.\n\n", JointGreedy, JointIndependent, 100*o.Confidence, 100*WorseBy)
		b.WriteString("| scenario | policy | n | sum ratio | sum CI | min ratio | min CI | |\n|---|---|---|---|---|---|---|---|\n")
		for _, c := range s.Comparisons {
			mark := ""
			if c.Worse() {
				mark = "worse"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | [%s, %s] | %s | [%s, %s] | %s |\n", c.Scenario, c.Policy, c.N,
				ratio(c.SumRatio), ratio(c.SumLo), ratio(c.SumHi), ratio(c.MinRatio), ratio(c.MinLo), ratio(c.MinHi), mark)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV writes multi-cells.csv, multi-flows.csv (one row per episode
// and flow) and multi-comparisons.csv into dir.
func (s *MultiSummary) WriteCSV(dir string) error {
	cells := [][]string{{"scenario", "policy", "mode", "repeats", "flows", "sum_Bps", "sum_lo_Bps", "sum_hi_Bps", "min_Bps", "min_lo_Bps", "min_hi_Bps",
		"jain", "jain_lo", "jain_hi", "herding", "over_budget", "reroutes", "joint_held"}}
	for _, c := range s.Cells {
		cells = append(cells, []string{c.Scenario, c.Policy, c.Mode, strconv.Itoa(c.Repeats), strconv.Itoa(len(c.FlowMeans)),
			f(c.Sum), f(c.SumLo), f(c.SumHi), f(c.Min), f(c.MinLo), f(c.MinHi), f(c.Jain), f(c.JainLo), f(c.JainHi),
			strconv.Itoa(c.Herding), strconv.Itoa(c.OverBudget), strconv.Itoa(c.Reroutes), strconv.Itoa(c.JointHeld)})
	}
	flows := [][]string{{"scenario", "policy", "mode", "repeat", "seed", "flow", "name", "weight", "mean_throughput_Bps", "reroutes"}}
	for _, c := range s.Cells {
		for _, e := range s.Episodes[[3]string{c.Scenario, c.Policy, c.Mode}] {
			for i, x := range e.FlowMeans(s.Options.Window) {
				n := 0
				for _, r := range e.Reroutes {
					if r.Flow == i {
						n++
					}
				}
				flows = append(flows, []string{c.Scenario, c.Policy, c.Mode, strconv.Itoa(e.Repeat), strconv.FormatUint(e.Seed, 10),
					strconv.Itoa(i), s.Flows[c.Scenario][i], f(e.Flows[i].EffectiveWeight()), f(x), strconv.Itoa(n)})
			}
		}
	}
	cmps := [][]string{{"scenario", "policy", "n", "sum_ratio", "sum_lo", "sum_hi", "min_ratio", "min_lo", "min_hi", "worse"}}
	for _, c := range s.Comparisons {
		cmps = append(cmps, []string{c.Scenario, c.Policy, strconv.Itoa(c.N), f(c.SumRatio), f(c.SumLo), f(c.SumHi),
			f(c.MinRatio), f(c.MinLo), f(c.MinHi), strconv.FormatBool(c.Worse())})
	}
	for _, t := range []struct {
		name string
		rows [][]string
	}{{"multi-cells.csv", cells}, {"multi-flows.csv", flows}, {"multi-comparisons.csv", cmps}} {
		if err := writeCSV(filepath.Join(dir, t.name), t.rows); err != nil {
			return err
		}
	}
	return nil
}
