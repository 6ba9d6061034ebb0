package eval

import (
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// FigFloor is the file name of the floor's figure (WriteFloorPlot).
const FigFloor = "floor.png"

// WriteFloor writes the floor as Markdown: per kind, the floor against the
// best single rule (FloorKinds), then per scenario what never moving, the
// best single move, the rules and the candidates reach. switches names the
// switches FloorMove.To indexes; candidates lists the candidates' names in
// their column order.
func WriteFloor(w io.Writer, rows []FloorRow, kinds []FloorKind, switches, candidates []string) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	ratio := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return strconv.FormatFloat(v, 'f', 2, 64) + "×"
	}
	fmt.Fprintf(w, "| kind | scenarios | best single rule | its SLO (s) | half of it (s) | hindsight single move (s) | ratio | CI | best measured (s) |")
	for _, c := range candidates {
		fmt.Fprintf(w, " %s (s) | %s ratio |", c, c)
	}
	fmt.Fprintf(w, "\n|---|---|---|---|---|---|---|---|---|")
	for range candidates {
		fmt.Fprintf(w, "---|---|")
	}
	fmt.Fprintln(w)
	for _, k := range kinds {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | [%s, %s] | %s |", k.Kind, k.Scenarios, k.BestRule, f(k.BestRuleSLO), f(k.BestRuleSLO/2),
			f(k.Hindsight), ratio(k.Ratio), ratio(k.Lo), ratio(k.Hi), f(k.Best))
		for _, c := range candidates {
			v, r := math.NaN(), math.NaN()
			if cv, ok := k.Candidates[c]; ok {
				v = cv
				if k.BestRuleSLO > 0 {
					r = cv / k.BestRuleSLO
				}
			}
			fmt.Fprintf(w, " %s | %s |", f(v), ratio(r))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n| scenario | kind | never (s) | hindsight move | its SLO (s) | best rule | its SLO (s) | best measured (s) |")
	for _, c := range candidates {
		fmt.Fprintf(w, " %s (s) |", c)
	}
	fmt.Fprintf(w, "\n|---|---|---|---|---|---|---|---|")
	for range candidates {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		move := scheduleText(switches, Schedule{At: r.Hindsight.At, To: r.Hindsight.To})
		best, bestSLO := "", math.Inf(1)
		for _, n := range slices.Sorted(maps.Keys(r.Rules)) {
			if r.Rules[n] < bestSLO {
				best, bestSLO = n, r.Rules[n]
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |", r.Scenario, r.Kind, f(r.Never), move, f(r.Hindsight.SLO), best, f(bestSLO), f(r.Best))
		for _, c := range candidates {
			v, ok := r.Candidates[c]
			if !ok {
				v = math.NaN()
			}
			fmt.Fprintf(w, " %s |", f(v))
		}
		fmt.Fprintln(w)
	}
	return nil
}

// FloorCSV returns the rows as CSV records: one per scenario and policy
// (never, hindsight, each rule, each candidate) with its SLO seconds.
func FloorCSV(rows []FloorRow) [][]string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	out := [][]string{{"scenario", "kind", "policy", "slo_s", "move_at_s", "move_to"}}
	for _, r := range rows {
		out = append(out, []string{r.Scenario, r.Kind, "never", g(r.Never), "", ""})
		h := []string{r.Scenario, r.Kind, "hindsight", g(r.Hindsight.SLO), "", ""}
		if r.Hindsight.To >= 0 {
			h[4], h[5] = g(r.Hindsight.At), strconv.Itoa(r.Hindsight.To)
		}
		out = append(out, h)
		for _, n := range slices.Sorted(maps.Keys(r.Rules)) {
			out = append(out, []string{r.Scenario, r.Kind, n, g(r.Rules[n]), "", ""})
		}
		for _, n := range slices.Sorted(maps.Keys(r.Candidates)) {
			out = append(out, []string{r.Scenario, r.Kind, n, g(r.Candidates[n]), "", ""})
		}
	}
	return out
}

// WriteFloorPlot draws, per kind, the mean SLO seconds of the best single
// rule, half of it, the hindsight single move, the best measured and each
// candidate, as grouped bars, into the PNG file path.
func WriteFloorPlot(path string, kinds []FloorKind, candidates []string) error {
	p := plot.New()
	p.Title.Text = "What any policy moving at most once can do, picked with hindsight"
	p.Y.Label.Text = "SLO seconds per episode (mean over scenarios)"
	p.X.Label.Text = "kind of protected flow"
	p.Add(plotter.NewGrid())
	type series struct {
		name string
		c    color.Color
		v    func(FloorKind) float64
	}
	all := []series{
		{"best single rule", color.RGBA{0x7f, 0x7f, 0x7f, 0xff}, func(k FloorKind) float64 { return k.BestRuleSLO }},
		{"half the best rule", color.RGBA{0xc7, 0xc7, 0xc7, 0xff}, func(k FloorKind) float64 { return k.BestRuleSLO / 2 }},
		{"hindsight single move", color.RGBA{0x8c, 0x56, 0x4b, 0xff}, func(k FloorKind) float64 { return k.Hindsight }},
		{"best measured", color.RGBA{0xe3, 0x77, 0xc2, 0xff}, func(k FloorKind) float64 { return k.Best }},
	}
	for i, c := range candidates {
		all = append(all, series{c, policyColor(c, i), func(k FloorKind) float64 {
			if v, ok := k.Candidates[c]; ok {
				return v
			}
			return 0
		}})
	}
	n := float64(len(all))
	width := vg.Points(math.Max(6, 90/n))
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Kind
	}
	for j, s := range all {
		vals := make(plotter.Values, len(kinds))
		for i, k := range kinds {
			vals[i] = s.v(k)
		}
		if err := addBars(p, s.name, vals, errBars{}, width, vg.Length(float64(j)-(n-1)/2)*width, s.c); err != nil {
			return err
		}
	}
	p.NominalX(names...)
	p.Legend.Top = true
	p.Y.Min = 0
	p.Y.Max *= 1.8 // room for the legend's rows above the bars
	return writeGrid(path, [][]*plot.Plot{{p}}, vg.Length(5+2*len(kinds))*vg.Inch, 5*vg.Inch)
}
