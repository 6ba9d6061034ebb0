package ovsfabric

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// MoveMatrix runs MoveCost over congestion controls × round trips ×
// cases, one fabric per cell, Repeats moves in each (a move is a repeat:
// the flow goes on to the next switch), and writes movecost.csv (a row
// per move), movecost.md (median and range per cell) and movecost.png
// (recovery time per cell) into Dir.
type MoveMatrix struct {
	// Base is the template of every cell (fabric, listen address,
	// warm-up, observation, collapse, reserve lead, pace); its Fabric's
	// CongestionControl and RTT and its Case and Moves are set per cell.
	Base MoveCost
	// CCs, RTTs and Cases span the matrix (an RTT of 0: no delay line).
	CCs   []string
	RTTs  []time.Duration
	Cases []string
	// Repeats is the moves per cell (default 5).
	Repeats int
	// Dir receives the files ("" writes none).
	Dir string
	// Sim, when not empty, is the same matrix on the simulator
	// (sim.MoveMatrix), shown beside the real cells in movecost.md.
	Sim []sim.MoveCell
	// Out receives each cell's lines and the table; nil discards them.
	Out io.Writer
}

// MoveCell is one cell of a MoveMatrix: its moves.
type MoveCell struct {
	CC      string
	RTT     time.Duration
	Case    string
	Results []MoveResult
	// Observe is how long each move was watched.
	Observe time.Duration
}

// Run measures every cell, one after another, and writes the files. A
// failed cell ends the run (after its fabric is down) with the cells so
// far written.
func (x MoveMatrix) Run(ctx context.Context) ([]MoveCell, error) {
	if x.Repeats <= 0 {
		x.Repeats = 5
	}
	out := x.Out
	if out == nil {
		out = io.Discard
	}
	var cells []MoveCell
	var runErr error
loop:
	for _, cc := range x.CCs {
		for _, rtt := range x.RTTs {
			for _, c := range x.Cases {
				m := x.Base
				m.Fabric.CongestionControl, m.Fabric.RTT, m.Case, m.Moves, m.Out = cc, rtt, c, x.Repeats, out
				fmt.Fprintf(out, "\n== cell cc=%s rtt=%v case=%s (%s)\n", cc, rtt, c, time.Now().Format(time.TimeOnly))
				res, err := m.Run(ctx)
				cells = append(cells, MoveCell{CC: cc, RTT: rtt, Case: c, Results: res, Observe: m.withDefaults().Observe})
				if err != nil {
					runErr = fmt.Errorf("ovsfabric: move matrix: cell %s/%v/%s: %w", cc, rtt, c, err)
					break loop
				}
			}
		}
	}
	if x.Dir != "" {
		if err := x.write(cells); err != nil {
			return cells, err
		}
	}
	if err := WriteMoveMatrix(out, cells, x.Sim); err != nil {
		return cells, err
	}
	return cells, runErr
}

func (x MoveMatrix) write(cells []MoveCell) error {
	if err := os.MkdirAll(x.Dir, 0o755); err != nil {
		return fmt.Errorf("ovsfabric: move matrix: %w", err)
	}
	for name, fn := range map[string]func(io.Writer) error{
		"movecost.csv": func(w io.Writer) error { return WriteMoveMatrixCSV(w, cells) },
		"movecost.md":  func(w io.Writer) error { return WriteMoveMatrix(w, cells, x.Sim) },
	} {
		if err := writeFile(filepath.Join(x.Dir, name), fn); err != nil {
			return err
		}
	}
	return PlotMoveMatrix(filepath.Join(x.Dir, "movecost.png"), cells, x.Sim)
}

func writeFile(path string, fn func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("ovsfabric: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("ovsfabric: %w", cerr)
		}
	}()
	if err := fn(f); err != nil {
		return fmt.Errorf("ovsfabric: write %s: %w", path, err)
	}
	return nil
}

// WriteMoveMatrixCSV writes a row per move.
func WriteMoveMatrixCSV(w io.Writer, cells []MoveCell) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"cc", "rtt_ms", "case", "move", "from", "to", "criterion", "healthy_bps", "before_bps", "backoff",
		"recovery_s", "retrans", "dsacks", "reordering", "table_misses", "srtt_ms", "minrtt_ms", "ca_state", "rto_retransmits", "in_rto"})
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
	for _, c := range cells {
		for _, r := range c.Results {
			rec := "-1"
			if r.Recovery >= 0 {
				rec = strconv.FormatFloat(r.Recovery.Seconds(), 'f', 3, 64)
			}
			_ = cw.Write([]string{c.CC, ms(c.RTT), c.Case, strconv.Itoa(r.Move), strconv.Itoa(r.From), strconv.Itoa(r.To), r.Criterion,
				strconv.FormatFloat(r.Healthy*8, 'f', 0, 64), strconv.FormatFloat(r.Before*8, 'f', 0, 64), strconv.Itoa(r.Backoff), rec,
				strconv.Itoa(r.Retrans), strconv.Itoa(r.DSACKs), strconv.Itoa(r.Reordering), strconv.FormatInt(r.Misses, 10), ms(r.RTT), ms(r.MinRTT),
				r.AtMove.CAState, strconv.FormatUint(uint64(r.AtMove.Retransmits), 10), strconv.FormatBool(r.InRTO())})
		}
	}
	cw.Flush()
	return cw.Error()
}

// Spread is the median and range of a cell's values.
type Spread struct{ Median, Min, Max float64 }

// spreadOf returns the median and range of v (NaN when empty).
func spreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{math.NaN(), math.NaN(), math.NaN()}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{m, s[0], s[len(s)-1]}
}

func (s Spread) String() string {
	if math.IsNaN(s.Median) {
		return "–"
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
	if s.Min == s.Max {
		return f(s.Median)
	}
	return f(s.Median) + " [" + f(s.Min) + ", " + f(s.Max) + "]"
}

// recoverySeconds returns the recovery times of the moves in seconds, a
// move that never recovered counted as observe (so it pulls the median
// up), and how many did not.
func recoverySeconds(rs []MoveResult, observe time.Duration) (v []float64, never int) {
	for _, r := range rs {
		if r.Recovery < 0 {
			never++
			v = append(v, observe.Seconds())
			continue
		}
		v = append(v, r.Recovery.Seconds())
	}
	return v, never
}

// WriteMoveMatrix writes the Markdown table of the cells: median [range]
// of recovery time (s), the moves made in RTO backoff by the sender's
// TCP_INFO (MoveResult.InRTO), retransmissions, DSACKs, reordering and
// table misses, with the simulator's median recovery beside it under each
// of sim.MoveModels (H-move, the window halved, the measured model) and
// each one's gap when sims holds the cell.
func WriteMoveMatrix(w io.Writer, cells []MoveCell, sims []sim.MoveCell) error {
	fmt.Fprintln(w, "\n| cc | RTT | case | moves (criterion met) | at the move (TCP_INFO): loss state / backed off | recovery to 90% (s) | not recovered | retrans | DSACKs | reordering | table misses | sim H-move (s) | sim window ×0.5 (s) | sim measured (s) | gap H-move / ×0.5 / measured |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range cells {
		rec, never := recoverySeconds(c.Results, c.Observe)
		var re, ds, ro, mi []float64
		met, inLoss, inRTO := 0, 0, 0
		for _, r := range c.Results {
			re, ds, ro, mi = append(re, float64(r.Retrans)), append(ds, float64(r.DSACKs)), append(ro, float64(r.Reordering)), append(mi, float64(r.Misses))
			if r.Criterion == CriterionMet {
				met++
			}
			if r.InLoss() {
				inLoss++
			}
			if r.InRTO() {
				inRTO++
			}
		}
		real := spreadOf(rec)
		on, off, fit := simMedian(sims, c.RTT, c.Case, sim.MoveModelHMove), simMedian(sims, c.RTT, c.Case, sim.MoveModelWindow), simMedian(sims, c.RTT, c.Case, sim.MoveModelMeasured)
		fmt.Fprintf(w, "| %s | %v | %s | %d (%d) | %d / %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |\n", c.CC, c.RTT, c.Case, len(c.Results), met, inLoss, inRTO,
			real, never, spreadOf(re), spreadOf(ds), spreadOf(ro), spreadOf(mi), on, off, fit, gap(on.Median, real.Median), gap(off.Median, real.Median), gap(fit.Median, real.Median))
	}
	fmt.Fprintln(w, "\nRecovery: from the move to the start of the first 500 ms at ≥ 90% of the healthy level; a move that never recovered within the observation counts as the observation's length, a lower bound (see not recovered). At the move: how many moves found the sender's TCP_INFO in the loss state (a timeout fired, its recovery not over) and how many of those with the timer still backed off. Gap: (sim − real) / real of the medians.")
	return nil
}

// simMedian returns the simulator's recovery spread for a cell under move
// model model (NaN when sims does not hold it).
func simMedian(sims []sim.MoveCell, rtt time.Duration, c string, model string) Spread {
	for _, s := range sims {
		if s.Requested == rtt && s.Case == c && s.Model == model {
			var v []float64
			for _, r := range s.Recovery {
				if r < 0 {
					r = s.Observe
				}
				v = append(v, r.Seconds())
			}
			return spreadOf(v)
		}
	}
	return spreadOf(nil)
}

func gap(simv, real float64) string {
	if math.IsNaN(simv) || math.IsNaN(real) {
		return "–"
	}
	if real == 0 {
		if simv == 0 {
			return "0%"
		}
		return "∞"
	}
	return fmt.Sprintf("%+.0f%%", 100*(simv-real)/real)
}

// PlotMoveMatrix draws each (cc, RTT)'s median recovery time per case,
// with its range, into a PNG file, and the simulator's median under the
// measured move model for the same RTT (dashed) where sims holds it.
func PlotMoveMatrix(path string, cells []MoveCell, sims []sim.MoveCell) error {
	p := plot.New()
	p.Title.Text = "Time to recover 90% of the healthy level after a move (median, range)"
	p.X.Label.Text = "case (0 a healthy, 1 b reserve, 2 c degraded, 3 d collapsed)"
	p.Y.Label.Text = "recovery (s)"
	type key struct {
		cc  string
		rtt time.Duration
	}
	var keys []key
	for _, c := range cells {
		if k := (key{c.CC, c.RTT}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for i, k := range keys {
		var pts, simPts plotter.XYs
		var errs plotter.YErrors
		for _, c := range cells {
			if c.CC != k.cc || c.RTT != k.rtt || len(c.Results) == 0 {
				continue
			}
			rec, _ := recoverySeconds(c.Results, c.Observe)
			s := spreadOf(rec)
			x := float64(slices.Index(MoveCases, c.Case)) + 0.05*float64(i)
			pts = append(pts, plotter.XY{X: x, Y: s.Median})
			if sm := simMedian(sims, c.RTT, c.Case, sim.MoveModelMeasured); !math.IsNaN(sm.Median) {
				simPts = append(simPts, plotter.XY{X: x, Y: sm.Median})
			}
			errs = append(errs, struct{ Low, High float64 }{s.Median - s.Min, s.Max - s.Median})
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("ovsfabric: move matrix plot: %w", err)
		}
		col := plotutil.Color(i)
		l.Color, sc.Color = col, col
		eb := &plotter.YErrorBars{XYs: pts, YErrors: errs}
		eb.Color = col
		p.Add(l, sc, eb)
		p.Legend.Add(fmt.Sprintf("%s, RTT %v", k.cc, k.rtt), l, sc)
		if len(simPts) > 0 {
			sl, err := plotter.NewLine(simPts)
			if err != nil {
				return fmt.Errorf("ovsfabric: move matrix plot: %w", err)
			}
			sl.Color, sl.Dashes = col, []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(sl)
			p.Legend.Add(fmt.Sprintf("simulator (CUBIC, measured move model), RTT %v", k.rtt), sl)
		}
	}
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("ovsfabric: move matrix plot: %w", err)
	}
	return nil
}

// SimSpec returns the simulator's side of the matrix (sim.MoveMatrix):
// the testbed profile with the fabric's bucket (rate and burst: sim's
// MoveMatrixSpec.BucketRate), the same round trips, cases, repeats and
// timings.
func (x MoveMatrix) SimSpec() (sim.MoveMatrixSpec, error) {
	c := x.Base.Fabric.withDefaults()
	rate, err := ParseRate(c.BucketRate)
	if err != nil {
		return sim.MoveMatrixSpec{}, fmt.Errorf("ovsfabric: move matrix: %w", err)
	}
	burst, err := parseSize(c.BucketBurst)
	if err != nil {
		return sim.MoveMatrixSpec{}, fmt.Errorf("ovsfabric: move matrix: bucket burst: %w", err)
	}
	m := x.Base.withDefaults()
	return sim.MoveMatrixSpec{Base: sim.TestbedConfig(), BucketRate: rate, BucketBurst: burst, FlowRate: m.RateBytesPerSec, RTTs: x.RTTs, Cases: x.Cases,
		Repeats: cmpOr(x.Repeats, 5), Warmup: m.Warmup, Observe: m.Observe, ReserveLead: m.ReserveLead, Collapse: m.Collapse}, nil
}

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// parseSize parses a tc size ("32kb", "1mb", "1500b", "1500") into bytes.
func parseSize(s string) (float64, error) {
	mult := 1.0
	num := s
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"kb", 1024}, {"k", 1024}, {"mb", 1 << 20}, {"m", 1 << 20}, {"b", 1}} {
		if n, ok := strings.CutSuffix(strings.ToLower(s), u.suffix); ok {
			num, mult = n, u.m
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("size %q, want a positive number of bytes with an optional b, kb or mb", s)
	}
	return v * mult, nil
}
