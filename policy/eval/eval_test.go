package eval

import (
	"bytes"
	"errors"
	"image/png"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// episode builds an episode sampled every second over [-5, 120) whose
// throughput is `before` until `drop` and `after` from then on, with the
// given reroute times.
func episode(sc, pol string, rep int, before, after, drop float64, reroutes ...float64) *Episode {
	e := &Episode{Scenario: sc, Policy: pol, Repeat: rep, Seed: uint64(rep), Baseline: before}
	// One sample a second, each for the second that ends at it: the
	// window's are those at 1 … 120 s, and the flow runs at after from
	// the second that starts at drop.
	for t := -4.0; t <= 120; t++ {
		e.T = append(e.T, t)
		v := before
		if t > drop {
			v = after
		}
		e.Throughput = append(e.Throughput, v)
		e.Overflow = append(e.Overflow, 20000+100*t)
	}
	for i, at := range reroutes {
		e.Reroutes = append(e.Reroutes, Reroute{At: at, From: i, To: i + 1, Overflow: 20000 + 100*at})
	}
	return e
}

// TestLeadNeedsADegradation: where the reference policy never degrades
// there is no lead (it used to be measured from the window's end), and a
// report names switches from the episodes and prints no baseline line when
// nothing is compared.
func TestLeadNeedsADegradation(t *testing.T) {
	eps := []*Episode{
		episode("S9", "static", 0, 20e6, 20e6, 500),
		episode("S9", "agent", 0, 20e6, 20e6, 500, 10),
	}
	eps[1].Switches = []string{"agg1", "agg2", "agg3", "agg4"}
	opt := DefaultOptions()
	opt.Baseline = ""
	s, err := Summarize(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.Cell("S9", "agent")
	if !math.IsNaN(c.Lead) {
		t.Errorf("lead %v where static never degrades, want none (NaN)", c.Lead)
	}
	if c.Destinations != "agg2 ×1" || c.Reroutes != 1 {
		t.Errorf("destinations %q, reroutes %d, want agg2 ×1 and 1", c.Destinations, c.Reroutes)
	}
	var b strings.Builder
	if err := s.WriteMarkdown(&b, "t"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Baseline policy") {
		t.Errorf("a report without a comparison names a baseline policy:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "| 1 | agg2 ×1 |") {
		t.Errorf("report lacks the reroute count and destination:\n%s", b.String())
	}
}

func TestSummarizeCells(t *testing.T) {
	eps := []*Episode{
		// S1: static degrades in the second after 20 s (its sample at
		// 21 s) and stays low.
		episode("S1", "static", 0, 20e6, 4e6, 20),
		episode("S1", "static", 1, 20e6, 4e6, 30),
		// reactive rerouted after degrading, at 40 and 50 s.
		episode("S1", "reactive", 0, 20e6, 8e6, 20, 40),
		episode("S1", "reactive", 1, 20e6, 8e6, 20, 50, 90),
		// the agent moved early and never degraded.
		episode("S1", "agent", 0, 20e6, 20e6, 200, 10),
		episode("S1", "agent", 1, 20e6, 20e6, 200, 12),
	}
	s, err := Summarize(eps, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	// Static means: (20*20+100*4)/120 and (30*20+90*4)/120 MB/s.
	m0, m1 := (20*20e6+100*4e6)/120, (30*20e6+90*4e6)/120
	r := (20*20e6 + 100*8e6) / 120.0
	want := []Cell{
		{Scenario: "S1", Policy: "static", Repeats: 2, MeanThroughput: (m0 + m1) / 2, MinThroughput: m0, MaxThroughput: m1,
			FirstReroute: nan, SecondReroute: nan, OverflowAtReroute: nan, Degraded: 2, Degradation: 26, Lead: nan,
			SLOSeconds: (100 + 90) / 2, Kind: "bulk", LatencyP50: nan, LatencyP99: nan, KindSLOSeconds: nan},
		{Scenario: "S1", Policy: "reactive", Repeats: 2, MeanThroughput: r, MinThroughput: r, MaxThroughput: r,
			Fired: 2, FirstReroute: 45, SecondFired: 1, SecondReroute: 90, OverflowAtReroute: 24500,
			Degraded: 2, Degradation: 21, Lead: 26 - 45, Reroutes: 3, Destinations: "#1 ×2, #2 ×1",
			Moves: 1.5, SLOSeconds: 100, Kind: "bulk", LatencyP50: nan, LatencyP99: nan, KindSLOSeconds: nan},
		{Scenario: "S1", Policy: "agent", Repeats: 2, MeanThroughput: 20e6, MinThroughput: 20e6, MaxThroughput: 20e6,
			Fired: 2, FirstReroute: 11, SecondReroute: nan, OverflowAtReroute: 21100, Degradation: nan, Lead: 26 - 11,
			Reroutes: 2, Destinations: "#1 ×2", Moves: 1, Kind: "bulk", LatencyP50: nan, LatencyP99: nan, KindSLOSeconds: nan},
	}
	if diff := cmp.Diff(want, s.Cells, cmpopts.EquateNaNs(), cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	c, ok := s.Comparison("agent")
	if !ok {
		t.Fatal("no comparison for agent")
	}
	if c.Lead != 45-11 || len(c.LeadScenarios) != 1 {
		t.Errorf("lead %v over %v, want 34 over [S1]", c.Lead, c.LeadScenarios)
	}
	if got, want := c.Gain, 20e6/r; math.Abs(got-want) > 1e-12 {
		t.Errorf("gain %v, want %v", got, want)
	}
	// Static and reactive are deployable; reactive is the stronger, and the
	// agent is compared with it.
	if st, ok := s.StrongestOf("S1"); !ok || st.Policy != "reactive" || st.Mean != r {
		t.Errorf("strongest of S1: %+v, want reactive at %v", st, r)
	}
	sc, ok := s.StrongestComparison("agent")
	if !ok || len(sc.PerScenario) != 1 || sc.PerScenario[0].Baseline != "reactive" || sc.BestOverall != "reactive" ||
		math.Abs(sc.Gain-20e6/r) > 1e-12 || math.Abs(sc.PerScenario[0].Rel-(20e6-r)/r) > 1e-12 {
		t.Errorf("agent against the strongest: %+v", sc)
	}
	if _, ok := s.StrongestComparison("reactive"); ok {
		t.Error("a deployable policy is compared with the strongest deployable one")
	}
	// Every policy against the best of the other deployable ones: static
	// against reactive (26.7% behind), reactive against static, the agent
	// against reactive.
	wantEnv := []EnvelopeShortfall{
		{Policy: "static", Scenarios: 1, Behind: []string{"S1"}, Worst: ((m0+m1)/2 - r) / r, WorstScenario: "S1"},
		{Policy: "reactive", Scenarios: 1, Worst: (r - (m0+m1)/2) / ((m0 + m1) / 2), WorstScenario: "S1"},
		{Policy: "agent", Scenarios: 1, Worst: (20e6 - r) / r, WorstScenario: "S1"},
	}
	if diff := cmp.Diff(wantEnv, s.Envelopes, cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("envelopes (-want +got):\n%s", diff)
	}
	var rep strings.Builder
	if err := s.WriteMarkdown(&rep, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.String(), "| static | 1 | 1 | -26.7% (S1) |") {
		t.Errorf("report lacks static's row against the best of the others:\n%s", rep.String())
	}
}

func TestComparisonStatistics(t *testing.T) {
	// Four scenarios; the candidate beats the baseline by 1, 1, 2, 2 MB/s.
	var eps []*Episode
	base := []float64{4e6, 6e6, 8e6, 10e6}
	gain := []float64{1e6, 1e6, 2e6, 2e6}
	for i, sc := range []string{"S1", "S2", "S3", "S4"} {
		eps = append(eps, episode(sc, "reactive", 0, base[i], base[i], 500, 40+float64(i)))
		eps = append(eps, episode(sc, "agent", 0, base[i]+gain[i], base[i]+gain[i], 500, 10))
	}
	s, err := Summarize(eps, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.Comparison("agent")
	// Paired differences 1,1,2,2 MB/s: mean 1.5, sd 0.57735, t = 5.19615 on
	// 3 degrees of freedom, two-sided p = 0.013846.
	if math.Abs(c.MeanDiff-1.5e6) > 1e-6 || math.Abs(c.T-5.196152) > 1e-5 || math.Abs(c.P-0.013846) > 1e-5 {
		t.Errorf("paired t: diff %v, t %v, p %v; want 1.5e6, 5.196152, 0.013846", c.MeanDiff, c.T, c.P)
	}
	// Leads 30, 31, 32, 33 s: mean 31.5, sd 1.29099, t(0.975, 3) = 3.182446.
	half := 3.182446 * 1.290994 / 2
	if math.Abs(c.Lead-31.5) > 1e-9 || math.Abs(c.LeadLo-(31.5-half)) > 1e-4 || math.Abs(c.LeadHi-(31.5+half)) > 1e-4 {
		t.Errorf("lead %v [%v, %v], want 31.5 ± %v", c.Lead, c.LeadLo, c.LeadHi, half)
	}
	if !(c.GainLo <= c.Gain && c.Gain <= c.GainHi) || c.GainLo <= 1 {
		t.Errorf("gain %v with CI [%v, %v]: want the CI around the gain and above 1", c.Gain, c.GainLo, c.GainHi)
	}
}

func TestBootstrapOfExactRatio(t *testing.T) {
	a := []float64{2, 4, 6, 8}
	b := []float64{1, 2, 3, 4}
	lo, hi, err := bootstrapRatioCI(a, b, 0.95, 1000, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if lo != 2 || hi != 2 {
		t.Errorf("CI [%v, %v], want [2, 2] when every scenario has ratio 2", lo, hi)
	}
}

// A resample whose baseline sums to zero while the candidate's does not is
// an unbounded ratio, not one to leave out: when it is frequent the upper
// end of the interval is +∞, and its text says so.
func TestBootstrapRatioZeroBaseline(t *testing.T) {
	a := make([]float64, 21) // the candidate misses 1 s in every scenario
	b := make([]float64, 21) // the rule 21 s in one scenario only
	for i := range a {
		a[i] = 1
	}
	b[20] = 21
	lo, hi, err := bootstrapRatioCI(a, b, 0.95, 10000, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if !(lo > 0 && lo < 1) || !math.IsInf(hi, 1) {
		t.Errorf("CI [%v, %v], want a finite lower end below the ratio of means 1 and +Inf above", lo, hi)
	}
	if got := RatioCIString(lo, hi); !strings.HasSuffix(got, ", ∞]") {
		t.Errorf("RatioCIString = %q, want the upper end written ∞", got)
	}
	// Both zero in every resample: no ratio at all.
	if lo, hi, _ := bootstrapRatioCI([]float64{0, 0}, []float64{0, 0}, 0.95, 100, rand.New(rand.NewPCG(1, 2))); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("CI of 0/0 = [%v, %v], want none (NaN)", lo, hi)
	}
	if q := quantile([]float64{1, math.Inf(1), math.Inf(1)}, 1); !math.IsInf(q, 1) {
		t.Errorf("quantile at 1 of {1, ∞, ∞} = %v, want +Inf", q)
	}
}

func TestValidateNamesTheProblem(t *testing.T) {
	good := func() *Episode { return episode("S1", "static", 0, 1, 1, 0) }
	for _, tc := range []struct {
		name   string
		mutate func(*Episode)
		want   string
	}{
		{"no policy", func(e *Episode) { e.Policy = "" }, "scenario and policy names are required"},
		{"lengths", func(e *Episode) { e.Overflow = e.Overflow[1:] }, "want equal lengths"},
		{"baseline", func(e *Episode) { e.Baseline = 0 }, "baseline throughput 0"},
		{"time order", func(e *Episode) { e.T[3] = e.T[2] }, "sample 3 at -2s does not follow -2s"},
		{"nan", func(e *Episode) { e.Throughput[4] = math.NaN() }, "sample 4 holds NaN"},
		{"reroute order", func(e *Episode) { e.Reroutes = []Reroute{{At: 5}, {At: 4}} }, "reroute 1 at 4s precedes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := good()
			tc.mutate(e)
			_, err := Summarize([]*Episode{e}, DefaultOptions())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestReportAndPlots(t *testing.T) {
	var eps []*Episode
	for i, sc := range []string{"S1", "S2", "S3"} {
		for rep := 0; rep < 3; rep++ {
			d := float64(rep)
			eps = append(eps,
				episode(sc, "static", rep, 20e6, 4e6, 15+d),
				episode(sc, "reactive", rep, 20e6, 8e6, 15+d, 40+d+float64(i)),
				episode(sc, "agent", rep, 20e6, 19e6, 60+d, 10+d))
		}
	}
	s, err := Summarize(eps, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md, "test report"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# test report", "| S2 |", "| agent | 3 |", "## Reroutes"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, md.String())
		}
	}
	dir := t.TempDir()
	if err := s.WriteCSV(dir); err != nil {
		t.Fatal(err)
	}
	cells, err := os.ReadFile(filepath.Join(dir, "cells.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(cells), "\n"); n != 1+9 {
		t.Errorf("cells.csv has %d lines, want a header and 9 cells", n)
	}
	if err := s.WritePlots(dir); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Figures(), []string{FigThroughput, FigMeans, FigReroutes, FigOverflow, FigDiffs}; !slices.Equal(got, want) {
		t.Errorf("figures %v, want %v (a baseline ran, so the differences too)", got, want)
	}
	for _, name := range s.Figures() {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 250 {
			t.Errorf("%s is %v, want a readable size", name, b)
		}
	}
	if os.Getenv("EVAL_KEEP_PLOTS") != "" {
		t.Logf("plots in %s", dir)
		for _, name := range s.Figures() {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			os.WriteFile(filepath.Join(os.Getenv("EVAL_KEEP_PLOTS"), name), b, 0o644)
		}
	}
}

func TestSummarizeRefusesEpisodeWithoutWindowSamples(t *testing.T) {
	late := episode("S2", "agent", 3, 20e6, 20e6, 500)
	for i := range late.T {
		late.T[i] += 200 // every sample after the 120 s window
	}
	eps := []*Episode{episode("S2", "reactive", 3, 20e6, 8e6, 20, 30), late}
	_, err := Summarize(eps, DefaultOptions())
	if err == nil {
		t.Fatal("Summarize accepted an episode without a sample in the window")
	}
	for _, want := range []string{"S2/agent/3", "no sample in the evaluation window (0s, 120s]", "samples span [196s, 320s]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Summarize = %q, want it to contain %q", err, want)
		}
	}
	if _, err := Summarize([]*Episode{eps[0], nil}, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "episode 1 of 2 is nil") {
		t.Errorf("Summarize with a nil episode = %v, want an error naming it", err)
	}
}

func TestStatsRefuseNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	good := []float64{1, 2, 3}
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"bootstrap NaN candidate", func() error {
			_, _, err := bootstrapRatioCI([]float64{1, math.NaN(), 3}, good, 0.95, 10, rng)
			return err
		}, "candidate[1] is NaN"},
		{"bootstrap +Inf baseline", func() error {
			_, _, err := bootstrapRatioCI(good, []float64{1, 2, math.Inf(1)}, 0.95, 10, rng)
			return err
		}, "baseline[2] is +Inf"},
		{"bootstrap lengths", func() error {
			_, _, err := bootstrapRatioCI(good, good[:2], 0.95, 10, rng)
			return err
		}, "want equal lengths"},
		{"paired t NaN", func() error {
			_, err := pairedTTest(good, []float64{math.NaN(), 1, 1})
			return err
		}, "baseline[0] is NaN"},
		{"t interval -Inf", func() error {
			_, _, _, err := tInterval([]float64{1, math.Inf(-1)}, 0.95)
			return err
		}, "values[1] is -Inf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := pairedTTest(good, []float64{0, 1, 3}); err != nil {
		t.Errorf("pairedTTest of finite values: %v", err)
	}
}

func TestSummarizeRefusesUnknownBaseline(t *testing.T) {
	eps := []*Episode{
		episode("S1", "static", 0, 20e6, 4e6, 20),
		episode("S1", "agent", 0, 20e6, 20e6, 200, 10),
	}
	opt := DefaultOptions() // baseline "reactive", which did not run
	_, err := Summarize(eps, opt)
	if err == nil || !strings.Contains(err.Error(), `baseline policy "reactive"`) || !strings.Contains(err.Error(), `["static" "agent"]`) {
		t.Errorf("Summarize = %v, want an error naming the baseline and the policies present", err)
	}
	// One policy: nothing to compare, whatever the baseline.
	s, err := Summarize(eps[1:], opt)
	if err != nil || len(s.Comparisons) != 0 {
		t.Errorf("Summarize of one policy = %v with %d comparisons, want no error and none", err, len(s.Comparisons))
	}
	// No baseline: no comparisons.
	opt.Baseline = ""
	if s, err = Summarize(eps, opt); err != nil || len(s.Comparisons) != 0 {
		t.Errorf("Summarize without a baseline = %v with %d comparisons, want no error and none", err, len(s.Comparisons))
	}
	opt.Baseline = "static"
	if s, err = Summarize(eps, opt); err != nil || len(s.Comparisons) != 1 {
		t.Errorf("Summarize with baseline static = %v with %d comparisons, want no error and 1", err, len(s.Comparisons))
	}
}

func TestOptionsValidateRefusesUnboundedWindow(t *testing.T) {
	for _, w := range []float64{math.Inf(1), math.NaN(), 0, -1} {
		opt := DefaultOptions()
		opt.Window = w
		if err := opt.Validate(); err == nil || !strings.Contains(err.Error(), "want a finite number > 0") {
			t.Errorf("Validate with window %v = %v, want an error", w, err)
		}
	}
}

// TestComparisonIndependentOfOtherPolicies checks that a comparison's
// bootstrap interval does not change when other policies are added.
func TestComparisonIndependentOfOtherPolicies(t *testing.T) {
	var eps []*Episode
	base := []float64{4e6, 6e6, 8e6, 10e6, 7e6}
	gain := []float64{1e6, 3e6, 2e6, 0.5e6, 4e6}
	for i, sc := range []string{"S1", "S2", "S3", "S4", "S5"} {
		eps = append(eps,
			episode(sc, "reactive", 0, base[i], base[i], 500, 40),
			episode(sc, "agent", 0, base[i]+gain[i], base[i]+gain[i], 500, 10))
	}
	opt := DefaultOptions()
	opt.Resamples = 500
	alone, err := Summarize(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	var more []*Episode
	for i, sc := range []string{"S1", "S2", "S3", "S4", "S5"} {
		more = append(more, episode(sc, "alpha", 0, base[i]*1.5, base[i]*0.7, 30, 20))
	}
	more = append(more, eps...)
	with, err := Summarize(more, opt)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := alone.Comparison("agent")
	b, ok := with.Comparison("agent")
	if !ok {
		t.Fatal("no comparison for agent")
	}
	if diff := cmp.Diff(a, b, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("agent's comparison changed when another policy was added (-alone +with):\n%s", diff)
	}
	if !(a.GainLo < a.GainHi) {
		t.Errorf("gain interval [%v, %v] is degenerate; the test needs spread to mean anything", a.GainLo, a.GainHi)
	}
}

// TestPlotsReplaceFilesAtomically holds the old figure open while it is
// rewritten: an atomic replacement leaves the open file intact.
func TestPlotsReplaceFilesAtomically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "false-alarms.png")
	th := &ThresholdReport{Episodes: 2, Curve: []ThresholdPoint{{1, 1}, {2, 0.5}, {3, 0}}, Lowest: 3}
	if err := PlotThreshold(path, th); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	th.Curve = append(th.Curve, ThresholdPoint{4, 0}, ThresholdPoint{5, 0})
	th.Episodes = 7
	if err := PlotThreshold(path, th); err != nil {
		t.Fatal(err)
	}
	held, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(held, old) {
		t.Error("the figure was rewritten in place: a reader of the old file saw it change")
	}
	now, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(now, old) {
		t.Error("the figure was not replaced")
	}
	if _, err := png.Decode(bytes.NewReader(now)); err != nil {
		t.Errorf("new figure: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("%d files in the directory, want 1 (no temporary file)", len(entries))
	}
	if err := PlotThreshold(path, nil); err == nil {
		t.Error("PlotThreshold(nil) succeeded")
	}
}

func TestSweepRefusesDuplicateNames(t *testing.T) {
	s1, err := sim.BuiltinScenario("S1")
	if err != nil {
		t.Fatal(err)
	}
	static, err := ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sw   Sweep
		want string
	}{
		{"policies", Sweep{Scenarios: []*sim.Scenario{s1}, Policies: []PolicySpec{static, static}, Repeats: 1},
			`policy name "static" used at index 0 and 1`},
		{"scenarios", Sweep{Scenarios: []*sim.Scenario{s1, s1}, Policies: []PolicySpec{static}, Repeats: 1},
			`scenario name "S1" used at index 0 and 1`},
		{"nil scenario", Sweep{Scenarios: []*sim.Scenario{nil}, Policies: []PolicySpec{static}, Repeats: 1},
			"scenario 0 is nil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			eps, err := c.sw.Run(t.Context())
			if err == nil || !strings.Contains(err.Error(), c.want) || eps != nil {
				t.Errorf("Run = %d episodes, %v; want none and an error containing %q", len(eps), err, c.want)
			}
		})
	}
}

func TestSweepKeepsEpisodesWhenTracesCannotBeWritten(t *testing.T) {
	s1, err := sim.BuiltinScenario("S1")
	if err != nil {
		t.Fatal(err)
	}
	static, err := ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	sw := Sweep{Scenarios: []*sim.Scenario{s1}, Policies: []PolicySpec{static}, Repeats: 2, Seed: 1, TraceDir: missing}
	eps, err := sw.Run(t.Context())
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Run = %v, want the trace write errors naming %s", err, missing)
	}
	if len(eps) != 2 {
		t.Fatalf("Run returned %d episodes, want both simulated ones", len(eps))
	}
	for i, e := range eps {
		if e == nil || e.Scenario != "S1" || e.Policy != "static" || e.Repeat != i || len(e.T) == 0 {
			t.Errorf("episode %d = %+v, want S1/static/%d with samples", i, e, i)
		}
	}
}

// TestScenarioDiffPairsBySeed: the per-scenario difference pairs repeats
// by seed (not by order), and its verdict follows the interval: a constant
// lead is better, a constant loss worse, a sign that flips between repeats
// a tie; a repeat the baseline did not run is left out.
func TestScenarioDiffPairsBySeed(t *testing.T) {
	var eps []*Episode
	for rep := range 4 {
		// Baseline throughput differs per seed; the candidate is 1 MB/s above
		// it in S1, 1 MB/s below in S2, and ±2 MB/s alternately in S3.
		b := 10e6 + float64(rep)*3e6
		eps = append(eps,
			episode("S1", "reactive", rep, b, b, 500),
			episode("S2", "reactive", rep, b, b, 500),
			episode("S3", "reactive", rep, b, b, 500))
	}
	for _, rep := range []int{3, 2, 1, 0, 7} { // reversed, and seed 7 unpaired
		b := 10e6 + float64(rep)*3e6
		sign := float64(1 - 2*(rep%2))
		eps = append(eps,
			episode("S1", "agent", rep, b+1e6, b+1e6, 500),
			episode("S2", "agent", rep, b-1e6, b-1e6, 500),
			episode("S3", "agent", rep, b+2e6*sign, b+2e6*sign, 500))
	}
	s, err := Summarize(eps, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c, ok := s.Comparison("agent")
	if !ok {
		t.Fatal("no comparison for agent")
	}
	want := map[string]struct {
		diff    float64
		verdict string
	}{"S1": {1e6, VerdictBetter}, "S2": {-1e6, VerdictWorse}, "S3": {0, VerdictTie}}
	if len(c.PerScenario) != len(want) {
		t.Fatalf("per-scenario differences %+v, want one for each of S1, S2, S3", c.PerScenario)
	}
	for _, d := range c.PerScenario {
		w := want[d.Scenario]
		if d.Pairs != 4 || math.Abs(d.Diff-w.diff) > 1 || d.Verdict != w.verdict {
			t.Errorf("%s: %d pairs, Δ %v, verdict %q; want 4 pairs, Δ %v, %q", d.Scenario, d.Pairs, d.Diff, d.Verdict, w.diff, w.verdict)
		}
		if w.verdict == VerdictTie && !(d.DiffLo < 0 && d.DiffHi > 0) {
			t.Errorf("%s: interval [%v, %v], want it to hold 0", d.Scenario, d.DiffLo, d.DiffHi)
		}
	}
	var md strings.Builder
	if err := s.WriteMarkdown(&md, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| S2 | agent | 4 | -1.00 | [-1.00, -1.00] | worse |") {
		t.Errorf("report lacks S2's per-scenario row:\n%s", md.String())
	}
}

// TestScenarioDiffSkipsSharedSeeds: two episodes of one policy on the same
// seed (traces merged from two runs) cannot be paired, so they give no
// difference rather than a made-up one; a scenario with no pair is n/a.
func TestScenarioDiffSkipsSharedSeeds(t *testing.T) {
	eps := []*Episode{
		episode("S1", "reactive", 0, 10e6, 10e6, 500),
		episode("S1", "reactive", 0, 20e6, 20e6, 500),
		episode("S1", "agent", 0, 15e6, 15e6, 500),
		episode("S1", "agent", 0, 15e6, 15e6, 500),
		episode("S2", "reactive", 1, 10e6, 10e6, 500),
		episode("S2", "agent", 2, 12e6, 12e6, 500),
	}
	s, err := Summarize(eps, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.Comparison("agent")
	for _, d := range c.PerScenario {
		if d.Pairs != 0 || d.Verdict != VerdictNone || !math.IsNaN(d.Diff) {
			t.Errorf("%s: %d pairs, Δ %v, %q; want no pair, Δ NaN, %q", d.Scenario, d.Pairs, d.Diff, d.Verdict, VerdictNone)
		}
	}
}

// Without the reference policy in a scenario there is no lead: the policy's
// own onset is not when the flow would have degraded without it.
func TestLeadWithoutReference(t *testing.T) {
	eps := []*Episode{
		episode("S1", "reactive", 0, 20e6, 8e6, 20, 20.5),
		episode("S1", "agent", 0, 20e6, 20e6, 200, 10),
	}
	s, err := Summarize(eps, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"reactive", "agent"} {
		c, _ := s.Cell("S1", p)
		if !math.IsNaN(c.Lead) || !c.NoReference {
			t.Errorf("%s: lead %v, no reference %v; want NaN and true", p, c.Lead, c.NoReference)
		}
	}
	var md strings.Builder
	if err := s.WriteMarkdown(&md, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| S1 | reactive | 20.5 (1/1) | – (0) | no reference |") {
		t.Errorf("report does not say there is no reference:\n%s", md.String())
	}
}
