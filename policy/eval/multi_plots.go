package eval

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// modeColor colours the joint modes: independent grey, joint the agent's navy.
func modeColor(mode string, i int) color.Color {
	switch mode {
	case JointIndependent:
		return color.RGBA{R: 0x9a, G: 0x9a, B: 0x9a, A: 0xff}
	case JointGreedy:
		return color.RGBA{R: 0x00, G: 0x1f, B: 0x5c, A: 0xff}
	}
	return policyColor(mode, i)
}

// WritePlots writes FigMulti into dir: a column per scenario, the sum of
// the per-flow means on top and the minimum-flow mean below, bars per
// policy and joint mode with min–max error bars over repeats.
func (s *MultiSummary) WritePlots(dir string) error {
	path := filepath.Join(dir, FigMulti)
	rows := [2][]*plot.Plot{}
	for _, sc := range s.Scenarios {
		for r, what := range [2]string{"sum", "min"} {
			p, err := s.modeBars(sc, what)
			if err != nil {
				return fmt.Errorf("eval: plot %s: %w", FigMulti, err)
			}
			rows[r] = append(rows[r], p)
		}
	}
	w := vg.Length(math.Max(6, 3.5*float64(len(s.Scenarios)))) * vg.Inch
	if err := writeGrid(path, rows[:], w, 7*vg.Inch); err != nil {
		return fmt.Errorf("eval: plot %s: %w", FigMulti, err)
	}
	return nil
}

// modeBars is one panel: what ("sum" or "min") per policy, a bar per mode.
func (s *MultiSummary) modeBars(sc, what string) (*plot.Plot, error) {
	p := plot.New()
	if what == "sum" {
		p.Title.Text = sc + ": sum of per-flow means"
		p.Y.Label.Text = "sum (MB/s)"
	} else {
		p.Title.Text = sc + ": worst flow's mean"
		p.Y.Label.Text = "min flow (MB/s)"
	}
	p.Add(plotter.NewGrid())
	n := float64(len(s.Modes))
	width := vg.Points(math.Max(6, 40/n))
	for j, m := range s.Modes {
		vals := make(plotter.Values, len(s.Policies))
		var eb errBars
		for i, pol := range s.Policies {
			c, ok := s.Cell(sc, pol, m)
			if !ok {
				continue
			}
			v, lo, hi := c.Sum, c.SumLo, c.SumHi
			if what == "min" {
				v, lo, hi = c.Min, c.MinLo, c.MinHi
			}
			vals[i] = v / 1e6
			eb.XYs = append(eb.XYs, plotter.XY{X: float64(i), Y: v / 1e6})
			eb.YErrors = append(eb.YErrors, struct{ Low, High float64 }{(v - lo) / 1e6, (hi - v) / 1e6})
		}
		if err := addBars(p, m, vals, eb, width, vg.Length(float64(j)-(n-1)/2)*width, modeColor(m, j)); err != nil {
			return nil, err
		}
	}
	p.NominalX(s.Policies...)
	p.Y.Min = 0
	headroom(p)
	p.Legend.Top = true
	return p, nil
}
