package main

import (
	"fmt"
	"image/color"
	"math"

	"github.com/proflow-sdn/proflow/training"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// probePalette colours the k* lines.
var probePalette = []color.RGBA{
	{0x00, 0x1f, 0x5c, 0xff}, {0x1f, 0x77, 0xb4, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
}

// plotProbe draws one sweep: the decision margin against the swept value,
// one line per k*, with the gate margin δ as a horizontal line and the
// reference policy's threshold as a vertical one.
func plotProbe(path string, res *training.ProbeResult, sweep string, names []string, l probeLines) error {
	p := plot.New()
	p.Y.Label.Text = "decision margin max_{k≠k*} Q(s,k) − Q(s,k*)"
	var ref float64
	var refLabel string
	switch sweep {
	case training.SweepCrowd:
		p.Title.Text = fmt.Sprintf("Crowd sweep: flow count on k*, overflow held at %g B/s", l.crowdOverflow)
		p.X.Label.Text = "flow count on k*, n_k* (flow-table entries)"
		ref, refLabel = l.crowd, fmt.Sprintf("crowd threshold T = %g flows", l.crowd)
	default:
		p.Title.Text = fmt.Sprintf("Overflow sweep: overflow rate on k*, flow count held at %g", l.overflowCount)
		p.X.Label.Text = "overflow rate on k*, ξ_k* (bytes/s)"
		ref, refLabel = l.reactive, fmt.Sprintf("reactive threshold ξ_th = %g B/s", l.reactive)
	}
	p.Add(plotter.NewGrid())
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := l.margin, l.margin
	for k, name := range names {
		var xy plotter.XYs
		for _, pt := range res.Points {
			if pt.Sweep == sweep && pt.Switch == k {
				xy = append(xy, plotter.XY{X: pt.X, Y: pt.Margin})
				xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
				ymin, ymax = math.Min(ymin, pt.Margin), math.Max(ymax, pt.Margin)
			}
		}
		if len(xy) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return fmt.Errorf("probe: plot %s: %w", path, err)
		}
		c := probePalette[k%len(probePalette)]
		line.Color, line.Width = c, vg.Points(1.2)
		points.Color, points.Radius = c, vg.Points(1.5)
		p.Add(line, points)
		p.Legend.Add("k* = "+name, line, points)
	}
	if math.IsInf(xmin, 0) {
		return fmt.Errorf("probe: plot %s: no %s points", path, sweep)
	}
	span := math.Max(ymax-ymin, 0.1)
	ymin, ymax = ymin-0.05*span, ymax+0.75*span // headroom: the legend sits above the data
	delta, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: l.margin}, {X: xmax, Y: l.margin}})
	if err != nil {
		return fmt.Errorf("probe: plot %s: gate margin line: %w", path, err)
	}
	delta.Color = color.Gray{Y: 0x40}
	delta.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(delta)
	p.Legend.Add(fmt.Sprintf("gate margin δ = %g", l.margin), delta)
	if ref >= xmin && ref <= xmax {
		v, err := plotter.NewLine(plotter.XYs{{X: ref, Y: ymin}, {X: ref, Y: ymax}})
		if err != nil {
			return fmt.Errorf("probe: plot %s: threshold line: %w", path, err)
		}
		v.Color = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
		v.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		v.Width = vg.Points(1.2)
		p.Add(v)
		p.Legend.Add(refLabel, v)
	}
	p.X.Min, p.X.Max = xmin, xmax
	p.Y.Min, p.Y.Max = ymin, ymax
	p.Legend.Top = true
	p.Legend.Left = true
	if err := writePNG(path, p, 7*vg.Inch, 4.5*vg.Inch); err != nil {
		return fmt.Errorf("probe: plot %s: %w", path, err)
	}
	return nil
}
