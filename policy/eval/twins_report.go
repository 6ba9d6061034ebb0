package eval

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// FigBound is the figure WriteBoundPlot writes.
const FigBound = "bound.png"

// BoundLine is the "more than 2% behind the per-scenario best rule" line
// of the yardstick, as a shortfall.
const BoundLine = 0.02

// switchOf names a schedule's switch, "never" for not moving.
func (tb TwinBound) switchOf(s Schedule) string {
	if s.To < 0 {
		return "never"
	}
	if s.To < len(tb.Switches) {
		return tb.Switches[s.To]
	}
	return "#" + strconv.Itoa(s.To)
}

// scheduleText writes a schedule as "agg2 at 4.5 s", or "never".
func (tb TwinBound) scheduleText(s Schedule) string {
	if s.To < 0 {
		return "never"
	}
	return fmt.Sprintf("%s at %.1f s", tb.switchOf(s), s.At)
}

// WriteBound writes the bounds as a Markdown table, one row per twin, and
// one line per scenario: the largest least shortfall over its twins, the
// share of its best rule that no single-move policy can be sure to keep.
// Each candidate of the search (BoundSpec.Candidates) gets a column of its
// shortfall in the scenario and the twin.
func WriteBound(w io.Writer, bounds []TwinBound) error {
	pct := func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
	var cands []string
	if len(bounds) > 0 {
		cands = slices.Sorted(maps.Keys(bounds[0].Members[0].Candidates))
	}
	fmt.Fprint(w, "| scenario | twin | same until (s) | best rule: scenario / twin | best move by then | its shortfall: scenario / twin | best later or never: scenario / twin | their shortfall | least worst-case shortfall | every policy > 2% behind in one |")
	for _, c := range cands {
		fmt.Fprintf(w, " %s: scenario / twin |", c)
	}
	fmt.Fprint(w, "\n|---|---|---|---|---|---|---|---|---|---|")
	fmt.Fprintln(w, strings.Repeat("---|", len(cands)))
	worst := map[string]TwinBound{}
	var order []string
	for _, tb := range bounds {
		a, b := tb.Members[0], tb.Members[1]
		forced := "no"
		if tb.Least > BoundLine {
			forced = "**yes**"
		}
		row := fmt.Sprintf("| %s | %s | %.1f | %s / %s | %s | %s / %s | %s / %s | %s / %s | %s | %s |",
			a.Scenario, b.Scenario, tb.Diverge, a.BestRule, b.BestRule, tb.scheduleText(tb.Commit),
			pct(tb.CommitShortfall[0]), pct(tb.CommitShortfall[1]), tb.scheduleText(tb.Wait[0]), tb.scheduleText(tb.Wait[1]),
			pct(tb.WaitShortfall[0]), pct(tb.WaitShortfall[1]), pct(tb.Least), forced)
		for _, c := range cands {
			row += fmt.Sprintf(" %s / %s |", pct(a.Shortfall(a.Candidates[c])), pct(b.Shortfall(b.Candidates[c])))
		}
		if _, err := fmt.Fprintln(w, row); err != nil {
			return err
		}
		if prev, ok := worst[a.Scenario]; !ok || tb.Least > prev.Least {
			if !ok {
				order = append(order, a.Scenario)
			}
			worst[a.Scenario] = tb
		}
	}
	fmt.Fprintln(w)
	for _, sc := range order {
		tb := worst[sc]
		verdict := "some single-move policy stays within 2% of the best rule in the scenario and in every twin tried"
		if tb.Least > BoundLine {
			verdict = fmt.Sprintf("every single-move policy is more than 2%% behind the best rule in %s or in its twin %s", sc, tb.Members[1].Scenario)
		}
		if _, err := fmt.Fprintf(w, "- %s: largest least shortfall %s (twin %s, the same until %.1f s): %s.\n", sc, pct(tb.Least), tb.Members[1].Scenario, tb.Diverge, verdict); err != nil {
			return err
		}
	}
	return nil
}

// BoundCSV returns one row per twin, member and schedule (policy
// "schedule"), then one per candidate (policy its name, no move), with a
// header.
func BoundCSV(bounds []TwinBound) [][]string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	out := [][]string{{"scenario", "twin", "kind", "diverge_s", "member", "best_rule", "best_rule_mean_Bps", "policy", "move_at_s", "move_to", "mean_Bps", "shortfall"}}
	for _, tb := range bounds {
		for _, m := range tb.Members {
			head := []string{tb.Members[0].Scenario, tb.Members[1].Scenario, tb.Kind, f(tb.Diverge), m.Scenario, m.BestRule, f(m.BestRuleMean)}
			for _, s := range m.Schedules {
				at := f(s.At)
				if s.To < 0 {
					at = ""
				}
				out = append(out, append(slices.Clone(head), "schedule", at, tb.switchOf(s), f(s.Mean), f(m.Shortfall(s.Mean))))
			}
			names := slices.Sorted(maps.Keys(m.Candidates))
			for _, c := range names {
				out = append(out, append(slices.Clone(head), c, "", "", f(m.Candidates[c]), f(m.Shortfall(m.Candidates[c]))))
			}
		}
	}
	return out
}

// WriteBoundPlot draws, per scenario, the least worst-case shortfall of
// any single-move policy against the time its twins stay the same as it,
// one line per kind of twin, with the 2% line.
func WriteBoundPlot(path string, bounds []TwinBound) error {
	var order []string
	pts := map[string]map[string]plotter.XYs{}
	var kinds []string
	for _, tb := range bounds {
		sc := tb.Members[0].Scenario
		if _, ok := pts[sc]; !ok {
			order = append(order, sc)
			pts[sc] = map[string]plotter.XYs{}
		}
		kind := tb.Kind
		if kind == "" {
			kind = "twin"
		}
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
		pts[sc][kind] = append(pts[sc][kind], plotter.XY{X: tb.Diverge, Y: 100 * tb.Least})
	}
	if len(order) == 0 {
		return fmt.Errorf("eval: bound plot: no bounds to draw")
	}
	const cols = 3
	var grid [][]*plot.Plot
	for i, sc := range order {
		p := plot.New()
		p.Title.Text = sc
		p.X.Label.Text = "same as the twin until (s after congestion start)"
		p.Y.Label.Text = "least worst-case shortfall (%)"
		lo, hi := math.Inf(1), math.Inf(-1)
		for k, kind := range kinds {
			xy := pts[sc][kind]
			if len(xy) == 0 {
				continue
			}
			slices.SortFunc(xy, func(a, b plotter.XY) int { return int(math.Copysign(1, a.X-b.X)) })
			l, s, err := plotter.NewLinePoints(xy)
			if err != nil {
				return fmt.Errorf("eval: bound plot: %w", err)
			}
			l.Color, s.Color = policyColor(kind, k), policyColor(kind, k)
			p.Add(l, s)
			p.Legend.Add(kind, l, s)
			for _, v := range xy {
				lo, hi = math.Min(lo, v.X), math.Max(hi, v.X)
			}
		}
		line, err := plotter.NewLine(plotter.XYs{{X: lo, Y: 100 * BoundLine}, {X: hi, Y: 100 * BoundLine}})
		if err != nil {
			return fmt.Errorf("eval: bound plot: %w", err)
		}
		line.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
		p.Add(line)
		p.Legend.Add("2% behind", line)
		p.Legend.Top = true
		if i%cols == 0 {
			grid = append(grid, nil)
		}
		grid[len(grid)-1] = append(grid[len(grid)-1], p)
	}
	width := min(len(order), cols)
	for len(grid[len(grid)-1]) < width {
		grid[len(grid)-1] = append(grid[len(grid)-1], nil) // a grid of full rows
	}
	return writeGrid(path, grid, vg.Length(5*width)*vg.Inch, vg.Length(3.5*float64(len(grid)))*vg.Inch)
}
