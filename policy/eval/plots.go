package eval

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Figure file names written by WritePlots.
const (
	FigThroughput = "throughput.png" // per-scenario throughput panels (paper Fig. 4)
	// FigLatency is the protected flow's latency over time in the same
	// panels, for the scenarios whose flow is not bulk; written when there
	// is one.
	FigLatency  = "latency.png"
	FigMeans    = "mean-throughput.png" // mean throughput bars with min–max error bars (Fig. 5)
	FigReroutes = "reroute-times.png"   // first reroute time per scenario (Fig. 6)
	FigOverflow = "overflow-at-reroute.png"
	// FigDiffs is each scenario's difference from the baseline with its
	// interval (Comparison.PerScenario), written when there is a baseline.
	FigDiffs = "scenario-diffs.png"
	// FigKinds is each policy's mean SLO-violation seconds per kind of
	// protected flow other than bulk, written when the scenarios have one.
	FigKinds = "kinds.png"
)

// policyColor gives the paper's colours to the known policies (Fig. 12:
// static green, reactive blue, crowd orange, agent navy) and a palette to
// any other.
func policyColor(name string, i int) color.Color {
	switch name {
	case "static":
		return color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	case "reactive":
		return color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	case "crowd":
		return color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	case "agent":
		return color.RGBA{R: 0x00, G: 0x1f, B: 0x5c, A: 0xff}
	case ThroughputDropName:
		return color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff}
	case LatencyThresholdName:
		return color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff}
	}
	palette := []color.RGBA{{0xd6, 0x27, 0x28, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}}
	return palette[i%len(palette)]
}

func policyDashes(name string) []vg.Length {
	switch name {
	case "static":
		return []vg.Length{vg.Points(2), vg.Points(2)}
	case "reactive":
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case "crowd":
		return []vg.Length{vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}
	}
	return nil
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// Figures returns the names of the figures WritePlots writes.
func (s *Summary) Figures() []string {
	names := []string{FigThroughput, FigMeans, FigReroutes, FigOverflow}
	if len(s.latencyScenarios()) > 0 {
		names = append(names, FigLatency)
	}
	if len(s.Comparisons) > 0 {
		names = append(names, FigDiffs)
	}
	if len(s.kindsOfScenarios()) > 0 {
		names = append(names, FigKinds)
	}
	return names
}

// WritePlots writes the figures (Figures) into dir.
func (s *Summary) WritePlots(dir string) error {
	draws := map[string]func(string) error{
		FigThroughput: s.plotThroughput,
		FigLatency:    s.plotLatency,
		FigMeans:      s.plotMeans,
		FigReroutes:   s.plotReroutes,
		FigOverflow:   s.plotOverflow,
		FigDiffs:      s.plotDiffs,
		FigKinds:      s.plotKinds,
	}
	for _, name := range s.Figures() {
		if err := draws[name](filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("eval: plot %s: %w", name, err)
		}
	}
	return nil
}

// plotDiffs draws each candidate's per-scenario difference from the
// baseline as a point with its interval, beside a line at zero: a point
// whose bar crosses the line is a tie.
func (s *Summary) plotDiffs(path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Difference from %s per scenario (error bars: %g%% t interval over repeats paired by seed)",
		s.Options.Baseline, 100*s.Options.Confidence)
	p.Y.Label.Text = "candidate − " + s.Options.Baseline + " (MB/s)"
	p.X.Label.Text = "scenario"
	p.Add(plotter.NewGrid())
	index := make(map[string]int, len(s.Scenarios))
	for i, sc := range s.Scenarios {
		index[sc] = i
	}
	n := float64(len(s.Comparisons))
	for j, c := range s.Comparisons {
		shift := (float64(j) - (n-1)/2) * 0.6 / math.Max(n, 1)
		var pts plotter.XYs
		var eb errBars
		for _, d := range c.PerScenario {
			if math.IsNaN(d.Diff) {
				continue
			}
			xy := plotter.XY{X: float64(index[d.Scenario]) + shift, Y: d.Diff / 1e6}
			pts = append(pts, xy)
			if !math.IsNaN(d.DiffLo) {
				eb.XYs = append(eb.XYs, xy)
				eb.YErrors = append(eb.YErrors, struct{ Low, High float64 }{(d.Diff - d.DiffLo) / 1e6, (d.DiffHi - d.Diff) / 1e6})
			}
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		col := policyColor(c.Candidate, j)
		sc.GlyphStyle.Color, sc.GlyphStyle.Radius, sc.GlyphStyle.Shape = col, vg.Points(3), draw.CircleGlyph{}
		p.Add(sc)
		p.Legend.Add(c.Candidate, sc)
		if len(eb.XYs) > 0 {
			bars, err := plotter.NewYErrorBars(eb)
			if err != nil {
				return err
			}
			bars.LineStyle.Color, bars.LineStyle.Width = col, vg.Points(1)
			p.Add(bars)
		}
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.LineStyle.Width = vg.Points(1)
	p.Add(zero)
	p.NominalX(s.Scenarios...)
	p.X.Min, p.X.Max = -0.5, float64(len(s.Scenarios))-0.5
	p.Legend.Top = true
	p.Legend.Left = true
	return writeGrid(path, [][]*plot.Plot{{p}}, vg.Length(math.Max(8, float64(len(s.Scenarios))))*vg.Inch, 4*vg.Inch)
}

// median returns the episode whose mean throughput is the median of the
// group, and the others.
func (s *Summary) median(group []*Episode) (*Episode, []*Episode) {
	sorted := append([]*Episode(nil), group...)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].meanThroughput(s.Options.Window) < sorted[j].meanThroughput(s.Options.Window)
	})
	m := (len(sorted) - 1) / 2
	rest := append(append([]*Episode(nil), sorted[:m]...), sorted[m+1:]...)
	return sorted[m], rest
}

// quantity is what a figure of time series draws for each episode.
type quantity struct {
	label string
	// of returns the episode's samples, one per e.T, in the figure's unit;
	// nil when the episode has none.
	of func(e *Episode) []float64
	// log draws the values on a log axis and leaves out samples <= 0
	// (unknown).
	log bool
}

// throughputMB is the throughput in MB/s (FigThroughput).
var throughputMB = quantity{label: "throughput (MB/s)", of: func(e *Episode) []float64 { return scaled(e.Throughput, 1e-6) }}

// latencyMs is the latency FromTrace records in ms (FigLatency).
var latencyMs = quantity{label: "latency (ms, log)", of: func(e *Episode) []float64 { return scaled(e.Latency, 1e3) }, log: true}

// scaled returns v × k.
func scaled(v []float64, k float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * k
	}
	return out
}

func (s *Summary) plotThroughput(path string) error {
	return s.plotSeries(path, s.Scenarios, throughputMB)
}

// plotLatency draws FigLatency: the panels of plotThroughput for the
// latency of the scenarios whose protected flow is not bulk.
func (s *Summary) plotLatency(path string) error {
	return s.plotSeries(path, s.latencyScenarios(), latencyMs)
}

// latencyScenarios returns the scenarios whose protected flow is not bulk
// and whose episodes recorded a latency.
func (s *Summary) latencyScenarios() []string {
	var out []string
	for _, sc := range s.Scenarios {
		for _, c := range s.Cells {
			if c.Scenario == sc && c.Kind != "" && c.Kind != sim.KindBulk && c.LatencyP50 > 0 {
				out = append(out, sc)
				break
			}
		}
	}
	return out
}

// plotSeries draws one panel per scenario of q over the window, a line per
// policy: its median repeat by mean throughput, a band over the other
// repeats' range and a dashed mark at its first reroute (paper Fig. 4).
func (s *Summary) plotSeries(path string, scenarios []string, q quantity) error {
	cols := min(4, len(scenarios))
	rows := (len(scenarios) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, sc := range scenarios {
		p := plot.New()
		p.Title.Text = sc
		p.X.Label.Text = "time since congestion start (s)"
		p.Y.Label.Text = q.label
		p.X.Min, p.X.Max = 0, s.Options.Window
		p.Add(plotter.NewGrid())
		lo, hi := s.extent(sc, q)
		if q.log {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
			// A decade of headroom above the data for the legend.
			p.Y.Min, p.Y.Max = lo/1.5, hi*10
		} else {
			// Leave headroom above the data for the legend.
			p.Y.Min, p.Y.Max = 0, 1.4*hi
		}
		for j, pol := range s.Policies {
			group := s.Episodes[[2]string{sc, pol}]
			if len(group) == 0 {
				continue
			}
			med, rest := s.median(group)
			col := policyColor(pol, j)
			pts := s.series(med, q)
			if len(pts) == 0 {
				continue
			}
			if band := s.band(pts, rest, q); band != nil {
				band.Color = withAlpha(col, 50)
				band.LineStyle.Width = 0
				p.Add(band)
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			line.Color = col
			line.Width = vg.Points(1.2)
			line.Dashes = policyDashes(pol)
			p.Add(line)
			if i == 0 {
				p.Legend.Add(pol, line)
			}
			if r, ok := med.reroute(0, s.Options.Window); ok {
				mark, err := plotter.NewLine(plotter.XYs{{X: r.At, Y: p.Y.Min}, {X: r.At, Y: p.Y.Max / 1.3}})
				if err != nil {
					return err
				}
				mark.Color = col
				mark.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
				p.Add(mark)
			}
		}
		p.Legend.Top = true
		plots[i/cols][i%cols] = p
	}
	return writeGrid(path, plots, vg.Length(cols)*4*vg.Inch, vg.Length(rows)*3*vg.Inch)
}

// headroom raises the y axis so the legend sits above the data.
func headroom(p *plot.Plot) {
	p.Y.Max *= 1.3
}

// extent returns the lowest and highest value of q a scenario's panel
// shows: the throughput axis reaches the largest baseline too, and a log
// axis only positive values (1 and 10 when there are none).
func (s *Summary) extent(sc string, q quantity) (lo, hi float64) {
	lo, hi = math.Inf(1), 0.0
	for _, pol := range s.Policies {
		for _, e := range s.Episodes[[2]string{sc, pol}] {
			if !q.log {
				hi = math.Max(hi, e.Baseline/1e6)
			}
			for _, pt := range s.series(e, q) {
				lo, hi = math.Min(lo, pt.Y), math.Max(hi, pt.Y)
			}
		}
	}
	if q.log && !(lo <= hi && lo > 0) {
		return 1, 10
	}
	return lo, hi
}

// series returns an episode's values of q over the window, leaving out
// unknown ones on a log axis.
func (s *Summary) series(e *Episode, q quantity) plotter.XYs {
	v := q.of(e)
	var xy plotter.XYs
	for i, t := range e.T {
		if inWindow(t, s.Options.Window) && i < len(v) && (!q.log || v[i] > 0) {
			xy = append(xy, plotter.XY{X: t, Y: v[i]})
		}
	}
	return xy
}

// band returns the min–max envelope of the other repeats around the median
// episode's time line base, or nil when there is no other repeat.
func (s *Summary) band(base plotter.XYs, rest []*Episode, q quantity) *plotter.Polygon {
	if len(rest) == 0 {
		return nil
	}
	lo := make(plotter.XYs, len(base))
	hi := make(plotter.XYs, len(base))
	for i, pt := range base {
		lo[i], hi[i] = plotter.XY{X: pt.X, Y: pt.Y}, plotter.XY{X: pt.X, Y: pt.Y}
		for _, e := range rest {
			v, ok := valueAt(e, q.of(e), pt.X)
			if !ok || (q.log && !(v > 0)) {
				continue
			}
			lo[i].Y = math.Min(lo[i].Y, v)
			hi[i].Y = math.Max(hi[i].Y, v)
		}
	}
	ring := append(lo, reverse(hi)...)
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil
	}
	return poly
}

// valueAt returns the value of v (one per e.T) at the sample nearest to t.
func valueAt(e *Episode, v []float64, t float64) (float64, bool) {
	i := sort.SearchFloat64s(e.T, t)
	switch {
	case i < len(e.T) && i < len(v) && (i == 0 || e.T[i]-t <= t-e.T[i-1]):
		return v[i], true
	case i > 0 && i-1 < len(v):
		return v[i-1], true
	}
	return 0, false
}

func reverse(xy plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, len(xy))
	for i := range xy {
		out[len(xy)-1-i] = xy[i]
	}
	return out
}

// errBars are bar tops with asymmetric error bars.
type errBars struct {
	plotter.XYs
	plotter.YErrors
}

func (s *Summary) groupedBars(title, ylabel string, value func(Cell) (v, lo, hi float64, ok bool)) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.X.Label.Text = "scenario"
	p.Add(plotter.NewGrid())
	n := float64(len(s.Policies))
	width := vg.Points(math.Max(4, 60/n))
	for j, pol := range s.Policies {
		vals := make(plotter.Values, len(s.Scenarios))
		var eb errBars
		for i, sc := range s.Scenarios {
			c, ok := s.Cell(sc, pol)
			if !ok {
				continue
			}
			v, lo, hi, ok := value(c)
			if !ok {
				continue
			}
			vals[i] = v
			if !math.IsNaN(lo) {
				eb.XYs = append(eb.XYs, plotter.XY{X: float64(i), Y: v})
				eb.YErrors = append(eb.YErrors, struct{ Low, High float64 }{v - lo, hi - v})
			}
		}
		if err := addBars(p, pol, vals, eb, width, vg.Length(float64(j)-(n-1)/2)*width, policyColor(pol, j)); err != nil {
			return nil, err
		}
	}
	p.NominalX(s.Scenarios...)
	p.Legend.Top = true
	p.Legend.Left = true
	return p, nil
}

// addBars adds one series of grouped bars at offset, with a legend entry
// and its error bars when eb has any.
func addBars(p *plot.Plot, name string, vals plotter.Values, eb errBars, width, offset vg.Length, c color.Color) error {
	bars, err := plotter.NewBarChart(vals, width)
	if err != nil {
		return err
	}
	bars.Color = c
	bars.LineStyle.Width = 0
	bars.Offset = offset
	p.Add(bars)
	p.Legend.Add(name, bars)
	if len(eb.XYs) > 0 {
		// Shift the error bars onto their bar: bar offsets are in
		// canvas units, so place them through a matching offset.
		yerr, err := plotter.NewYErrorBars(eb)
		if err != nil {
			return err
		}
		yerr.LineStyle.Width = vg.Points(0.8)
		p.Add(offsetErrors{yerr, bars.Offset})
	}
	return nil
}

// offsetErrors draws error bars shifted horizontally by a canvas offset,
// so that they sit on grouped bars.
type offsetErrors struct {
	*plotter.YErrorBars
	offset vg.Length
}

func (o offsetErrors) Plot(c draw.Canvas, p *plot.Plot) {
	c.Rectangle.Min.X += o.offset
	c.Rectangle.Max.X += o.offset
	o.YErrorBars.Plot(c, p)
}

func (s *Summary) plotMeans(path string) error {
	p, err := s.groupedBars("Mean throughput of the protected flow (error bars: min–max over repeats)", "throughput (MB/s)",
		func(c Cell) (float64, float64, float64, bool) {
			return c.MeanThroughput / 1e6, c.MinThroughput / 1e6, c.MaxThroughput / 1e6, true
		})
	if err != nil {
		return err
	}
	p.Y.Min = 0
	headroom(p)
	return writeGrid(path, [][]*plot.Plot{{p}}, vg.Length(math.Max(8, float64(len(s.Scenarios))))*vg.Inch, 4*vg.Inch)
}

func (s *Summary) plotReroutes(path string) error {
	p := plot.New()
	p.Title.Text = "First reroute time per repeat (no mark: never rerouted)"
	p.Y.Label.Text = "time since congestion start (s)"
	p.X.Label.Text = "scenario"
	p.Add(plotter.NewGrid())
	n := float64(len(s.Policies))
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}}
	for j, pol := range s.Policies {
		var pts plotter.XYs
		for i, sc := range s.Scenarios {
			for _, e := range s.Episodes[[2]string{sc, pol}] {
				if r, ok := e.reroute(0, s.Options.Window); ok {
					pts = append(pts, plotter.XY{X: float64(i) + 0.6*(float64(j)-(n-1)/2)/n, Y: r.At})
				}
			}
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = policyColor(pol, j)
		sc.GlyphStyle.Shape = shapes[j%len(shapes)]
		sc.GlyphStyle.Radius = vg.Points(3)
		p.Add(sc)
		p.Legend.Add(pol, sc)
	}
	p.NominalX(s.Scenarios...)
	p.Y.Min, p.Y.Max = 0, s.Options.Window*1.25
	p.Legend.Top = true
	return writeGrid(path, [][]*plot.Plot{{p}}, vg.Length(math.Max(8, float64(len(s.Scenarios))))*vg.Inch, 4*vg.Inch)
}

func (s *Summary) plotOverflow(path string) error {
	p, err := s.groupedBars("Overflow on the old switch at the first reroute (mean over repeats that rerouted)", "overflow ξ (tc overlimits/s; the paper's \"bytes/s\")",
		func(c Cell) (float64, float64, float64, bool) {
			if c.Fired == 0 {
				return 0, 0, 0, false
			}
			return c.OverflowAtReroute, math.NaN(), math.NaN(), true
		})
	if err != nil {
		return err
	}
	p.Y.Min = 0
	headroom(p)
	return writeGrid(path, [][]*plot.Plot{{p}}, vg.Length(math.Max(8, float64(len(s.Scenarios))))*vg.Inch, 4*vg.Inch)
}

func writeGrid(path string, plots [][]*plot.Plot, width, height vg.Length) error {
	img := vgimg.New(width, height)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: len(plots), Cols: len(plots[0]), PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, dc)
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] != nil {
				plots[r][c].Draw(canvases[r][c])
			}
		}
	}
	return fileutil.WriteAtomic(path, func(w io.Writer) error {
		if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	})
}

// kindsOfScenarios returns the kinds of protected flow other than bulk
// among the cells, in the order rr, rate, onoff.
func (s *Summary) kindsOfScenarios() []string {
	var out []string
	for _, k := range []string{sim.KindRR, sim.KindRate, sim.KindOnOff} {
		for _, c := range s.Cells {
			if c.Kind == k {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// plotKinds draws each policy's mean SLO-violation seconds over the
// scenarios of each kind of flow (kindSLOMeans, as the report's table),
// grouped by kind.
func (s *Summary) plotKinds(path string) error {
	kinds := s.kindsOfScenarios()
	p := plot.New()
	p.Title.Text = "Time with the flow missing its kind's objective, mean over the kind's scenarios"
	p.Y.Label.Text = "SLO-violation seconds per episode"
	p.X.Label.Text = "kind of protected flow"
	p.Add(plotter.NewGrid())
	n := float64(len(s.Policies))
	width := vg.Points(math.Max(6, 90/n))
	means := kindSLOMeans(s.Cells)
	for j, pol := range s.Policies {
		vals := make(plotter.Values, len(kinds))
		for i, k := range kinds {
			if m := slices.IndexFunc(means, func(m kindSLOMean) bool { return m.kind == k && m.policy == pol }); m >= 0 {
				vals[i] = means[m].slo
			}
		}
		if err := addBars(p, pol, vals, errBars{}, width, vg.Length(float64(j)-(n-1)/2)*width, policyColor(pol, j)); err != nil {
			return err
		}
	}
	p.NominalX(kinds...)
	p.Legend.Top = true
	p.Y.Min = 0
	headroom(p)
	return writeGrid(path, [][]*plot.Plot{{p}}, vg.Length(3+2*len(kinds))*vg.Inch, 4*vg.Inch)
}
