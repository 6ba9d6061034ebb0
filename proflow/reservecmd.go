package main

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proflow-sdn/proflow/telemetry/trace"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func reserveCommand() command {
	return command{
		name:    "reserve",
		summary: "measure, from traces of flows that stayed on a crowded switch, the depth and rate of the reserve that runs out when they collapse: the gate's drain settings (policy.DrainConfig)",
		run:     runReserve,
	}
}

// collapseRun is what a trace shows up to its protected flow's collapse:
// the steps on the flow's switch, each as the interval's length and the
// switch's load (transmit rate over the bucket rate), the collapse sample
// last.
type collapseRun struct {
	dt   []float64
	load []float64
}

// deficit returns the run's reserve deficit at its collapse sample for a
// reserve served at rate times the bucket rate, in seconds of that rate:
// the integral of load − rate clipped at 0, as policy.Gate keeps it.
func (c *collapseRun) deficit(rate float64) float64 {
	d := 0.0
	for i := range c.dt {
		d = max(0, d+(c.load[i]-rate)*c.dt[i])
	}
	return d
}

// findCollapse reads one trace: the first sample after the evaluation
// window opened (the trace's start when it records none) whose throughput
// is below fraction × the mean of the samples of the history before it,
// all on the same switch. It returns nil when the flow never collapsed or
// moved first (a move restarts the reserve, and the rule that moved it
// decided when).
func findCollapse(ep *trace.Episode, fraction float64, history time.Duration) (*collapseRun, error) {
	rate := ep.Meta.Topology.BucketRate
	if !(rate > 0) {
		return nil, fmt.Errorf("topology bucket rate %v, want > 0", rate)
	}
	zero := ep.Meta.CongestionStart
	if zero.IsZero() {
		zero = ep.Meta.Start
	}
	n := int(math.Round(history.Seconds() / time.Duration(ep.Meta.Interval).Seconds()))
	if n < 1 {
		n = 1
	}
	run := &collapseRun{}
	var thr []float64 // throughput of the steps on the current switch
	var prev time.Time
	cur := ep.Meta.InitialSwitch
	for i := range ep.Steps {
		s := &ep.Steps[i]
		if s.Obs == nil {
			continue
		}
		if s.Switch != cur {
			return nil, nil // moved before it collapsed
		}
		if k := s.Switch; k < 0 || k >= len(s.Obs.Switches) {
			return nil, fmt.Errorf("step %d: switch %d, want 0..%d", s.Seq, k, len(s.Obs.Switches)-1)
		}
		dt := 0.0
		if !prev.IsZero() {
			dt = s.Time.Sub(prev).Seconds()
		}
		prev = s.Time
		run.dt = append(run.dt, dt)
		run.load = append(run.load, s.Obs.Switches[s.Switch].TxRate/rate)
		if t := s.Time.Sub(zero).Seconds(); t > 0 && len(thr) >= n {
			mean := 0.0
			for _, v := range thr[len(thr)-n:] {
				mean += v
			}
			mean /= float64(n)
			if mean > 0 && s.Throughput < fraction*mean {
				return run, nil
			}
		}
		thr = append(thr, s.Throughput)
		if _, _, ok := s.Moved(); ok {
			return nil, nil
		}
	}
	return nil, nil
}

// reserveFit is the result of proflow reserve at one rate.
type reserveFit struct {
	rate                      float64
	least, median, most, span float64
}

// fitReserve returns, per rate, the spread of the deficits at collapse,
// and the index of the rate with the least spread (the first of equals).
func fitReserve(runs []*collapseRun, rates []float64) ([]reserveFit, int) {
	fits := make([]reserveFit, len(rates))
	best := 0
	for i, r := range rates {
		ds := make([]float64, len(runs))
		for j, c := range runs {
			ds[j] = c.deficit(r)
		}
		slices.Sort(ds)
		f := reserveFit{rate: r, least: ds[0], most: ds[len(ds)-1], median: ds[len(ds)/2]}
		f.span = f.most - f.least
		fits[i] = f
		if f.span < fits[best].span {
			best = i
		}
	}
	return fits, best
}

// parseRates reads -rates, FROM:TO:STEP, multiples of the bucket rate.
func parseRates(s string) ([]float64, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("-rates %q, want FROM:TO:STEP (multiples of the bucket rate, for example 1:1.1:0.01)", s)
	}
	var v [3]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("-rates %q: %q is not a finite number, want FROM:TO:STEP", s, p)
		}
		v[i] = f
	}
	from, to, step := v[0], v[1], v[2]
	if !(from > 0) || !(to >= from) || !(step > 0) || (to-from)/step > 1000 {
		return nil, fmt.Errorf("-rates %q, want 0 < FROM <= TO and 0 < STEP, at most 1000 steps", s)
	}
	var rates []float64
	for i := 0; ; i++ {
		r := from + float64(i)*step
		if r > to+step/2 {
			break
		}
		rates = append(rates, math.Round(r*1e6)/1e6)
	}
	return rates, nil
}

// traceFiles expands the arguments: a folder stands for the traces in it
// and in its traces/ folder (what evaluate -traces writes).
func traceFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		found, err := listTraces(a)
		if err != nil {
			return nil, err
		}
		sub := filepath.Join(a, "traces")
		if st, err := os.Stat(sub); err == nil && st.IsDir() {
			m, err := listTraces(sub)
			if err != nil {
				return nil, err
			}
			found = append(found, m...)
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no trace (*.jsonl, *.jsonl.gz) in it or in its traces/ folder", a)
		}
		files = append(files, found...)
	}
	return files, nil
}

// runReserve measures the reserve a gate's Drain should model.
func runReserve(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("reserve", "reserve -in TRACE|DIR[,…] [-rates FROM:TO:STEP] [-fraction F] [-history D] [-plot FILE]")
	in := fs.String("in", "", "comma-separated trace files or folders (a folder: its traces and those in its traces/ folder, as evaluate -traces -out DIR writes them); required")
	ratesFlag := fs.String("rates", "1:1.1:0.01", "the reserve rates tried, FROM:TO:STEP in multiples of the bucket rate")
	fraction := fs.Float64("fraction", 0.5, "a collapse is a sample below this fraction of the mean throughput of the history before it, in (0, 1)")
	history := fs.Duration("history", 8*time.Second, "how much of the flow's throughput before a sample its collapse is judged against")
	plotPath := fs.String("plot", "", "also draw the deficits at collapse against the rate into this PNG file")
	if err := parseFlags(fs, "reserve", args); err != nil {
		return err
	}
	rates, err := parseRates(*ratesFlag)
	if err != nil {
		return fmt.Errorf("reserve: %w: %w", err, errUsage)
	}
	switch {
	case !(*fraction > 0 && *fraction < 1):
		return fmt.Errorf("reserve: -fraction %v, want a number in (0, 1): %w", *fraction, errUsage)
	case *history <= 0:
		return fmt.Errorf("reserve: -history %v, want > 0: %w", *history, errUsage)
	case strings.TrimSpace(*in) == "":
		return fmt.Errorf("reserve: -in is required, want trace files or folders (evaluate -policies static -traces -out DIR): %w", errUsage)
	}
	files, err := traceFiles(strings.Split(*in, ","))
	if err != nil {
		return fmt.Errorf("reserve: %w", err)
	}
	var runs []*collapseRun
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		ep, err := trace.ReadFile(f)
		if err != nil {
			return fmt.Errorf("reserve: %w", err)
		}
		c, err := findCollapse(ep, *fraction, *history)
		if err != nil {
			return fmt.Errorf("reserve: %s: %w", f, err)
		}
		if c != nil {
			runs = append(runs, c)
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("reserve: none of the %d traces shows a flow collapsing on the switch it started on, want traces of flows left on a crowded switch (evaluate -policies static -traces)", len(files))
	}
	fits, best := fitReserve(runs, rates)
	if err := writeReserve(e.stdout, len(files), runs, fits, best); err != nil {
		return err
	}
	if *plotPath != "" {
		if err := makeOutputDirs("reserve", [2]string{"plot", *plotPath}); err != nil {
			return err
		}
		return plotReserve(*plotPath, runs, fits, best)
	}
	return nil
}

// writeReserve prints the table of fits and the drain settings they give.
func writeReserve(w io.Writer, files int, runs []*collapseRun, fits []reserveFit, best int) error {
	fmt.Fprintf(w, "%d of %d traces show a collapse; the deficit at collapse in seconds of the bucket rate, by the rate the reserve is served at (multiples of the bucket rate):\n", len(runs), files)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate\tleast\tmedian\tmost\tspread\t\t")
	for i, f := range fits {
		mark := ""
		if i == best {
			mark = "least spread"
		}
		fmt.Fprintf(tw, "%.3f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t\n", f.rate, f.least, f.median, f.most, f.span, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b := fits[best]
	depth := math.Floor(b.least*10) / 10
	_, err := fmt.Fprintf(w, "drain: rate %.3f (the least spread), depth %.1f (the least deficit at collapse under it, rounded down to 0.1 s): {\"depth\": %.1f, \"rate\": %.3f}\n", b.rate, depth, depth, b.rate)
	return err
}

// plotReserve draws every collapse's deficit against the rate its reserve
// is taken to be served at, with the least and the most as lines and the
// fitted rate and depth marked: the rate where the deficits bunch is the
// reserve's.
func plotReserve(path string, runs []*collapseRun, fits []reserveFit, best int) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Deficit at collapse of %d flows, by the reserve's rate", len(runs))
	p.X.Label.Text = "rate the reserve is served at (multiples of the bucket rate)"
	p.Y.Label.Text = "deficit at collapse (seconds of the bucket rate)"
	p.Add(plotter.NewGrid())
	var pts, least, most plotter.XYs
	for _, f := range fits {
		for _, c := range runs {
			pts = append(pts, plotter.XY{X: f.rate, Y: c.deficit(f.rate)})
		}
		least = append(least, plotter.XY{X: f.rate, Y: f.least})
		most = append(most, plotter.XY{X: f.rate, Y: f.most})
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return fmt.Errorf("reserve: plot %s: %w", path, err)
	}
	sc.Color, sc.Radius = color.NRGBA{0x1f, 0x77, 0xb4, 0x90}, vg.Points(1.5)
	p.Add(sc)
	p.Legend.Add("one collapse", sc)
	for _, l := range []struct {
		xy    plotter.XYs
		name  string
		color color.RGBA
	}{{least, "least", color.RGBA{0x2c, 0xa0, 0x2c, 0xff}}, {most, "most", color.RGBA{0xd6, 0x27, 0x28, 0xff}}} {
		line, err := plotter.NewLine(l.xy)
		if err != nil {
			return fmt.Errorf("reserve: plot %s: %w", path, err)
		}
		line.Color, line.Width = l.color, vg.Points(1.2)
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	b := fits[best]
	mark, err := plotter.NewScatter(plotter.XYs{{X: b.rate, Y: math.Floor(b.least*10) / 10}})
	if err != nil {
		return fmt.Errorf("reserve: plot %s: %w", path, err)
	}
	mark.Shape, mark.Color, mark.Radius = draw.CrossGlyph{}, color.Black, vg.Points(5)
	p.Add(mark)
	p.Legend.Add(fmt.Sprintf("fit: rate %.3f, depth %.1f", b.rate, math.Floor(b.least*10)/10), mark)
	var ticks []plot.Tick
	for i, f := range fits {
		if i%max(1, len(fits)/10) == 0 || i == len(fits)-1 {
			ticks = append(ticks, plot.Tick{Value: f.rate, Label: strconv.FormatFloat(f.rate, 'f', -1, 64)})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, f := range fits {
		lo, hi = math.Min(lo, f.least), math.Max(hi, f.most)
	}
	span := math.Max(hi-lo, 0.1)
	p.Y.Min, p.Y.Max = lo-0.05*span, hi+0.45*span // headroom: the legend sits above the data
	p.Legend.Top = true
	if err := writePNG(path, p, 7*vg.Inch, 4.5*vg.Inch); err != nil {
		return fmt.Errorf("reserve: plot %s: %w", path, err)
	}
	return nil
}
