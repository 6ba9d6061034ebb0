package eval

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// ThresholdOptions controls the reactive-threshold analysis of the paper's
// App. E.
type ThresholdOptions struct {
	// AloneCount: a sample counts as self-induced overflow only while the
	// flow count of the flow's switch is at most this (2: the protected flow
	// alone, one entry per direction).
	AloneCount float64
	// FullRate: and only once the protected flow runs at this fraction of
	// the bucket rate (App. E: 15e6 B/s of 25e6, i.e. 0.6).
	FullRate float64
	// Consecutive is the reactive rule's number of consecutive samples (3).
	Consecutive int
	// From, To and Step span the candidate thresholds (App. E: 500
	// resolution): finite, From <= To, Step > 0 and resolvable at From
	// (From+Step != From), and at most 1,000,000 thresholds.
	From, To, Step float64
}

// maxCurvePoints bounds the number of candidate thresholds of the App. E
// and App. G curves.
const maxCurvePoints = 1_000_000

// Validate checks the options, naming every field that is wrong.
func (o ThresholdOptions) Validate() error {
	var errs []error
	for _, f := range [...]struct {
		name string
		v    float64
	}{{"AloneCount", o.AloneCount}, {"FullRate", o.FullRate}, {"From", o.From}, {"To", o.To}, {"Step", o.Step}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("%s is %v, want a finite number", f.name, f.v))
		}
	}
	if !math.IsNaN(o.Step) && o.Step <= 0 {
		errs = append(errs, fmt.Errorf("Step is %v, want > 0", o.Step))
	}
	if o.Consecutive < 1 {
		errs = append(errs, fmt.Errorf("Consecutive is %d, want >= 1", o.Consecutive))
	}
	if len(errs) == 0 {
		if err := checkSpan("From", "To", "Step", o.From, o.To, o.Step); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eval: invalid threshold options: %w", err)
	}
	return nil
}

// spanPoints is the number of thresholds from, from+step, … up to to
// (with the 1e-9 tolerance the curves have always used).
func spanPoints(from, to, step float64) float64 {
	return math.Floor((to+1e-9-from)/step) + 1
}

// checkSpan checks finite bounds from <= to spanned by a positive step in
// at most maxCurvePoints thresholds; the names are the fields in errors.
func checkSpan(fromName, toName, stepName string, from, to, step float64) error {
	switch {
	case to < from:
		return fmt.Errorf("%s %v is below %s %v, want %s <= %s", toName, to, fromName, from, fromName, toName)
	case from+step == from:
		return fmt.Errorf("%s %v is too large to step by %s %v (%s+%s == %s)", fromName, from, stepName, step, fromName, stepName, fromName)
	}
	if n := spanPoints(from, to, step); !(n <= maxCurvePoints) {
		return fmt.Errorf("%s %v to %s %v by %s %v spans %v thresholds, want at most %d", fromName, from, toName, to, stepName, step, n, maxCurvePoints)
	}
	return nil
}

// checkTraces refuses nil episodes and steps whose switch index cannot be
// used; what names the set in errors.
func checkTraces(what string, eps []*trace.Episode) error {
	for i, ep := range eps {
		if ep == nil {
			return fmt.Errorf("eval: %s: episode %d is nil", what, i)
		}
		if err := checkSwitches(ep); err != nil {
			return fmt.Errorf("eval: %s: episode %d: %w", what, i, err)
		}
	}
	return nil
}

// DefaultThresholdOptions returns App. E's settings.
func DefaultThresholdOptions() ThresholdOptions {
	return ThresholdOptions{AloneCount: 2, FullRate: 0.6, Consecutive: 3, From: 20000, To: 35000, Step: 500}
}

// ThresholdPoint is one point of the false-alarm curve.
type ThresholdPoint struct {
	Threshold float64 `json:"threshold"`
	// FalseAlarmRate is the fraction of episodes in which the reactive rule
	// would fire on self-induced overflow alone.
	FalseAlarmRate float64 `json:"false_alarm_rate"`
}

// ThresholdReport is the result of the App. E analysis.
type ThresholdReport struct {
	Samples, Episodes int
	// Mean, P95 and Max describe the self-induced overflow distribution.
	Mean, P95, Max float64
	Curve          []ThresholdPoint
	// Lowest is the lowest threshold with zero false alarms (NaN if none
	// in range).
	Lowest float64
}

// AnalyseThreshold runs App. E's analysis on no-congestion episodes: it
// collects the samples where the protected flow runs alone at full rate on
// its switch and, for each candidate threshold, applies the reactive rule
// (Consecutive samples in a row above the threshold) to every episode.
// It refuses invalid options (see ThresholdOptions.Validate) and steps
// whose switch index is outside the topology or the observation.
func AnalyseThreshold(eps []*trace.Episode, opt ThresholdOptions) (*ThresholdReport, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if err := checkTraces("threshold analysis", eps); err != nil {
		return nil, err
	}
	// runs[e] holds the episode's qualifying samples as runs of
	// consecutive steps.
	var runs [][][]float64
	var all []float64
	for _, ep := range eps {
		full := opt.FullRate * ep.Meta.Topology.BucketRate
		var epRuns [][]float64
		var cur []float64
		flush := func() {
			if len(cur) > 0 {
				epRuns = append(epRuns, cur)
				cur = nil
			}
		}
		for i := range ep.Steps {
			st := &ep.Steps[i]
			if st.Obs == nil {
				flush()
				continue
			}
			s := st.Obs.Switches[st.Switch]
			if s.FlowCount > opt.AloneCount || st.Obs.Flow.Throughput < full {
				flush()
				continue
			}
			cur = append(cur, s.OverflowRate)
			all = append(all, s.OverflowRate)
		}
		flush()
		if len(epRuns) > 0 {
			runs = append(runs, epRuns)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("eval: no sample has the protected flow alone at full rate (flow count <= %v, throughput >= %v of the bucket)", opt.AloneCount, opt.FullRate)
	}
	r := &ThresholdReport{Samples: len(all), Episodes: len(runs), Mean: mean(all), P95: quantile(all, 0.95), Lowest: math.NaN()}
	r.Max = quantile(all, 1)
	n := int(spanPoints(opt.From, opt.To, opt.Step))
	for i := range n {
		th := opt.From + float64(i)*opt.Step
		alarms := 0
		for _, epRuns := range runs {
			if firesOn(epRuns, th, opt.Consecutive) {
				alarms++
			}
		}
		rate := float64(alarms) / float64(len(runs))
		r.Curve = append(r.Curve, ThresholdPoint{Threshold: th, FalseAlarmRate: rate})
		if rate == 0 && math.IsNaN(r.Lowest) {
			r.Lowest = th
		}
	}
	return r, nil
}

func firesOn(runs [][]float64, th float64, consecutive int) bool {
	for _, run := range runs {
		n := 0
		for _, v := range run {
			if v > th {
				n++
				if n >= consecutive {
					return true
				}
			} else {
				n = 0
			}
		}
	}
	return false
}

// CountPoint is one candidate crowd threshold T of the App. G analysis.
type CountPoint struct {
	Threshold float64 `json:"threshold"`
	// QuietRate is the fraction of no-congestion episodes in which n_k* > T.
	QuietRate float64 `json:"quiet_rate"`
	// SingleRate is the fraction of single-congester episodes in which n_k* > T.
	SingleRate float64 `json:"single_rate"`
	// CrowdDetected is the fraction of crowd episodes in which n_k* > T
	// after congestion starts, and CrowdDelay the mean delay until then (s).
	CrowdDetected float64 `json:"crowd_detected"`
	CrowdDelay    float64 `json:"crowd_delay"`
}

// CountReport is the result of the App. G analysis.
type CountReport struct {
	Curve []CountPoint
	// Recommended is the lowest T that never fires on quiet or
	// single-congester episodes and detects every crowd (NaN if none).
	Recommended float64
}

// AnalyseCount runs App. G's analysis of the crowd threshold T over three
// sets of episodes: no congestion, a single congester on the flow's switch,
// and crowds (for example S1, S5, S8). The candidate thresholds are from,
// from+1, … up to to: finite, from <= to, and at most 1,000,000 of them.
func AnalyseCount(quiet, single, crowd []*trace.Episode, from, to float64) (*CountReport, error) {
	if len(crowd) == 0 {
		return nil, fmt.Errorf("eval: count analysis needs crowd episodes")
	}
	for _, f := range [...]struct {
		name string
		v    float64
	}{{"from", from}, {"to", to}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return nil, fmt.Errorf("eval: count analysis: %s is %v, want a finite number", f.name, f.v)
		}
	}
	if err := checkSpan("from", "to", "step", from, to, 1); err != nil {
		return nil, fmt.Errorf("eval: count analysis: %w", err)
	}
	for _, set := range [...]struct {
		name string
		eps  []*trace.Episode
	}{{"count analysis: quiet", quiet}, {"count analysis: single-congester", single}, {"count analysis: crowd", crowd}} {
		if err := checkTraces(set.name, set.eps); err != nil {
			return nil, err
		}
	}
	r := &CountReport{Recommended: math.NaN()}
	n := int(spanPoints(from, to, 1))
	for i := range n {
		T := from + float64(i)
		p := CountPoint{Threshold: T, QuietRate: fireRate(quiet, T), SingleRate: fireRate(single, T)}
		var delays []float64
		for _, ep := range crowd {
			if d, ok := firstAbove(ep, T); ok {
				delays = append(delays, d)
			}
		}
		p.CrowdDetected = float64(len(delays)) / float64(len(crowd))
		p.CrowdDelay = mean(delays)
		r.Curve = append(r.Curve, p)
		if math.IsNaN(r.Recommended) && p.QuietRate == 0 && p.SingleRate == 0 && p.CrowdDetected == 1 {
			r.Recommended = T
		}
	}
	return r, nil
}

func fireRate(eps []*trace.Episode, T float64) float64 {
	if len(eps) == 0 {
		return math.NaN()
	}
	n := 0
	for _, ep := range eps {
		if _, ok := firstAbove(ep, T); ok {
			n++
		}
	}
	return float64(n) / float64(len(eps))
}

// firstAbove returns the seconds after congestion start (or after the
// episode start, if unknown) of the first sample with n_k* > T.
func firstAbove(ep *trace.Episode, T float64) (float64, bool) {
	origin := ep.Meta.CongestionStart
	if origin.IsZero() {
		origin = ep.Meta.Start
	}
	for i := range ep.Steps {
		st := &ep.Steps[i]
		if st.Obs == nil || st.Time.Before(origin) {
			continue
		}
		if st.Obs.Switches[st.Switch].FlowCount > T {
			return st.Time.Sub(origin).Seconds(), true
		}
	}
	return 0, false
}

// WriteCalibration writes both analyses as Markdown; cnt may be nil, th
// may not. It returns the first write error.
func WriteCalibration(w io.Writer, th *ThresholdReport, cnt *CountReport) error {
	if w == nil || th == nil {
		return errors.New("eval: write calibration: the writer and the threshold report are required")
	}
	var b strings.Builder
	writeCalibration(&b, th, cnt)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("eval: write calibration: %w", err)
	}
	return nil
}

func writeCalibration(w *strings.Builder, th *ThresholdReport, cnt *CountReport) {
	fmt.Fprintf(w, "# Baseline calibration\n\n## Reactive threshold (App. E)\n\n")
	fmt.Fprintf(w, "Self-induced overflow over %d samples in %d episodes (protected flow alone at full rate): mean %.0f, 95th percentile %.0f, max %.0f overlimits/s.\n\n",
		th.Samples, th.Episodes, th.Mean, th.P95, th.Max)
	fmt.Fprintf(w, "| threshold | false alarms |\n|---|---|\n")
	for _, p := range th.Curve {
		fmt.Fprintf(w, "| %.0f | %.1f%% |\n", p.Threshold, 100*p.FalseAlarmRate)
	}
	if math.IsNaN(th.Lowest) {
		fmt.Fprintf(w, "\nNo threshold in range has zero false alarms.\n")
	} else {
		fmt.Fprintf(w, "\nLowest threshold with zero false alarms: **%.0f**.\n", th.Lowest)
	}
	if cnt == nil {
		return
	}
	fmt.Fprintf(w, "\n## Crowd threshold (App. G)\n\nFires when n_k* > T.\n\n| T | quiet | single congester | crowds detected | mean delay (s) |\n|---|---|---|---|---|\n")
	for _, p := range cnt.Curve {
		fmt.Fprintf(w, "| %.0f | %s | %s | %.0f%% | %s |\n", p.Threshold, pct(p.QuietRate), pct(p.SingleRate), 100*p.CrowdDetected, secs(p.CrowdDelay))
	}
	if math.IsNaN(cnt.Recommended) {
		fmt.Fprintf(w, "\nNo T separates quiet and single-congester episodes from every crowd.\n")
		return
	}
	fmt.Fprintf(w, "\nLowest T that ignores a single congester and catches every crowd: **%.0f**.\n", cnt.Recommended)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

// PlotThreshold writes the false-alarm curve as a PNG.
func PlotThreshold(path string, th *ThresholdReport) error {
	if th == nil {
		return fmt.Errorf("eval: plot %s: threshold report is nil", path)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Reactive false alarms on self-induced overflow (%d episodes)", th.Episodes)
	p.X.Label.Text = "threshold ξ_th (overlimits/s, the paper's \"bytes/s\")"
	p.Y.Label.Text = "episodes with a false alarm (%)"
	p.Add(plotter.NewGrid())
	var xy plotter.XYs
	for _, pt := range th.Curve {
		xy = append(xy, plotter.XY{X: pt.Threshold, Y: 100 * pt.FalseAlarmRate})
	}
	line, points, err := plotter.NewLinePoints(xy)
	if err != nil {
		return err
	}
	line.Color = policyColor("reactive", 0)
	points.Color = policyColor("reactive", 0)
	p.Add(line, points)
	p.Legend.Add("false-alarm rate", line, points)
	if !math.IsNaN(th.Lowest) {
		mark, err := plotter.NewLine(plotter.XYs{{X: th.Lowest, Y: 0}, {X: th.Lowest, Y: 100}})
		if err != nil {
			return err
		}
		mark.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(mark)
		p.Legend.Add(fmt.Sprintf("lowest zero-false-alarm threshold %.0f", th.Lowest), mark)
	}
	p.Y.Min, p.Y.Max = 0, 110
	p.Legend.Top = true
	return writeGrid(path, [][]*plot.Plot{{p}}, 8*vg.Inch, 4*vg.Inch)
}
