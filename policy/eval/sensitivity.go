package eval

import (
	"fmt"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// FigSensitivity is the figure WriteSensitivityPlot writes.
const FigSensitivity = "sensitivity.png"

// Variant is one setting of the testbed profile's free hypothesis values
// (package southbound/sim, "Profile testbed"): how long the counted
// bucket's reserve lasts above the uncounted limit's rate (H-limit), and
// whether a move costs the connection its window and a timeout (H-move).
type Variant struct {
	// Reserve is the counted reserve, seconds: the testbed profile's 66.
	Reserve float64 `json:"reserve_s"`
	// MoveTimeout is H-move (Config.RerouteTimeout).
	MoveTimeout bool `json:"move_timeout"`
}

// Name names the variant in reports: "reserve 45 s, H-move on".
func (v Variant) Name() string {
	on := "off"
	if v.MoveTimeout {
		on = "on"
	}
	return fmt.Sprintf("reserve %g s, H-move %s", v.Reserve, on)
}

// Apply returns the testbed profile cfg changed to the variant: the
// counted bucket's depth set so that, drained at the uncounted limit's
// rate minus its own, it lasts Reserve seconds beyond the uncounted
// bucket's depth (the profile's rule, with 66 s), and RerouteTimeout set.
// The profile keeps its name with the variant appended, and so a digest of
// its own. It refuses a profile without the uncounted limit (H-limit) and
// a reserve that is not a finite number > 0.
func (v Variant) Apply(cfg sim.Config) (sim.Config, error) {
	if !(cfg.UncountedRate > cfg.BucketRate) {
		return sim.Config{}, fmt.Errorf("eval: variant %s: profile %s has no uncounted limit above its bucket rate (H-limit), want the testbed profile", v.Name(), cfg.Name)
	}
	if !(v.Reserve > 0) || math.IsInf(v.Reserve, 0) {
		return sim.Config{}, fmt.Errorf("eval: variant reserve %vs, want a finite number > 0", v.Reserve)
	}
	cfg.BucketBurst = cfg.UncountedBurst + v.Reserve*(cfg.UncountedRate-cfg.BucketRate)
	cfg.RerouteTimeout = v.MoveTimeout
	on := "off"
	if v.MoveTimeout {
		on = "on"
	}
	cfg.Name = fmt.Sprintf("%s-reserve%g-hmove-%s", cfg.Name, v.Reserve, on)
	return cfg, cfg.Validate()
}

// SensitivityRow is one policy on one variant.
type SensitivityRow struct {
	Variant Variant `json:"variant"`
	Policy  string  `json:"policy"`
	// Mean is the mean over the scenarios of the per-scenario means, bytes/s.
	Mean float64 `json:"mean"`
	// GainOverReactive is Mean over reactive's, with its interval (NaN for
	// reactive itself); LeadOverReactive the comparison's lead, seconds.
	GainOverReactive, GainLo, GainHi float64
	LeadOverReactive                 float64
	// GainOverStrongest is the StrongestComparison's gain for a policy
	// that is not deployable (NaN for the deployable ones).
	GainOverStrongest, StrongestLo, StrongestHi float64
	// SLOSeconds and Moves are means over the scenarios.
	SLOSeconds, Moves float64
}

// SensitivityRows returns a row per policy of a variant's summary.
func SensitivityRows(v Variant, s *Summary) []SensitivityRow {
	var rows []SensitivityRow
	for _, p := range s.Policies {
		r := SensitivityRow{Variant: v, Policy: p, Mean: s.PolicyMean(p), GainOverReactive: math.NaN(), GainLo: math.NaN(), GainHi: math.NaN(),
			LeadOverReactive: math.NaN(), GainOverStrongest: math.NaN(), StrongestLo: math.NaN(), StrongestHi: math.NaN()}
		if c, ok := s.Comparison(p); ok {
			r.GainOverReactive, r.GainLo, r.GainHi, r.LeadOverReactive = c.Gain, c.GainLo, c.GainHi, c.Lead
		}
		if c, ok := s.StrongestComparison(p); ok {
			r.GainOverStrongest, r.StrongestLo, r.StrongestHi = c.Gain, c.GainLo, c.GainHi
		}
		var slo, moves []float64
		for _, sc := range s.Scenarios {
			if c, ok := s.Cell(sc, p); ok {
				slo, moves = append(slo, c.SLOSeconds), append(moves, c.Moves)
			}
		}
		r.SLOSeconds, r.Moves = mean(slo), mean(moves)
		rows = append(rows, r)
	}
	return rows
}

// WriteSensitivity writes the rows as a Markdown table.
func WriteSensitivity(w io.Writer, rows []SensitivityRow) error {
	var b strings.Builder
	b.WriteString("| variant | policy | mean (MB/s) | gain over reactive | CI | lead over reactive (s) | gain over strongest | CI | SLO (s) | moves |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | [%s, %s] | %s | %s | [%s, %s] | %s | %s |\n", r.Variant.Name(), r.Policy, mbps(r.Mean),
			ratio(r.GainOverReactive), ratio(r.GainLo), ratio(r.GainHi), secs(r.LeadOverReactive),
			ratio(r.GainOverStrongest), ratio(r.StrongestLo), ratio(r.StrongestHi), secs(r.SLOSeconds), num(r.Moves, 2))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteSensitivityPlot draws each policy's gain over reactive against the
// counted reserve, one panel per H-move setting, with the paper's 1.40×
// as a reference line.
func WriteSensitivityPlot(path string, rows []SensitivityRow) error {
	var panels []*plot.Plot
	for _, moveTimeout := range []bool{true, false} {
		p := plot.New()
		on := "off"
		if moveTimeout {
			on = "on"
		}
		p.Title.Text = "Gain over reactive, H-move " + on
		p.X.Label.Text = "counted reserve (s)"
		p.Y.Label.Text = "mean / reactive's mean"
		var order []string
		pts := map[string]plotter.XYs{}
		for _, r := range rows {
			if r.Variant.MoveTimeout != moveTimeout || math.IsNaN(r.GainOverReactive) {
				continue
			}
			if _, ok := pts[r.Policy]; !ok {
				order = append(order, r.Policy)
			}
			pts[r.Policy] = append(pts[r.Policy], plotter.XY{X: r.Variant.Reserve, Y: r.GainOverReactive})
		}
		if len(order) == 0 {
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, name := range order {
			l, s, err := plotter.NewLinePoints(pts[name])
			if err != nil {
				return fmt.Errorf("eval: sensitivity plot: %w", err)
			}
			l.Color, s.Color = policyColor(name, i), policyColor(name, i)
			l.Dashes = policyDashes(name)
			p.Add(l, s)
			p.Legend.Add(name, l, s)
			for _, xy := range pts[name] {
				lo, hi = math.Min(lo, xy.X), math.Max(hi, xy.X)
			}
		}
		paper, err := plotter.NewLine(plotter.XYs{{X: lo, Y: 1.40}, {X: hi, Y: 1.40}})
		if err != nil {
			return fmt.Errorf("eval: sensitivity plot: %w", err)
		}
		paper.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
		p.Add(paper)
		p.Legend.Add("paper's agent, 1.40×", paper)
		p.Legend.Top, p.Legend.Left = true, true
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return fmt.Errorf("eval: sensitivity plot: no gain over reactive to draw")
	}
	return writeGrid(path, [][]*plot.Plot{panels}, vg.Length(6*len(panels))*vg.Inch, 4*vg.Inch)
}
