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

// switchOf names a schedule's switch among switches, "never" for not
// moving.
func switchOf(switches []string, s Schedule) string {
	if s.To < 0 {
		return "never"
	}
	if s.To < len(switches) {
		return switches[s.To]
	}
	return "#" + strconv.Itoa(s.To)
}

// scheduleText writes a schedule as "agg2 at 4.5 s", or "never".
func scheduleText(switches []string, s Schedule) string {
	if s.To < 0 {
		return "never"
	}
	return fmt.Sprintf("%s at %.1f s", switchOf(switches, s), s.At)
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
			a.Scenario, b.Scenario, tb.Diverge, a.BestRule, b.BestRule, scheduleText(tb.Switches, tb.Commit),
			pct(tb.CommitShortfall[0]), pct(tb.CommitShortfall[1]), scheduleText(tb.Switches, tb.Wait[0]), scheduleText(tb.Switches, tb.Wait[1]),
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

// WriteFans writes one row per scenario: the least worst-case shortfall
// over the scenario and all its twins that a single-move policy can have,
// the schedule that has it and where it is worst, and each candidate's
// worst-case shortfall over the same scenarios.
func WriteFans(w io.Writer, fans []Fan) error {
	pct := func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
	var cands []string
	if len(fans) > 0 {
		cands = slices.Sorted(maps.Keys(fans[0].Candidates))
	}
	fmt.Fprint(w, "| scenario | twins | least worst-case shortfall of any single-move policy | its schedule | worst in | every policy > 2% behind somewhere |")
	for _, c := range cands {
		fmt.Fprintf(w, " %s: worst-case shortfall (in) |", c)
	}
	fmt.Fprint(w, "\n|---|---|---|---|---|---|")
	fmt.Fprintln(w, strings.Repeat("---|", len(cands)))
	for _, f := range fans {
		forced := "no"
		if f.Best.Worst > BoundLine {
			forced = "**yes**"
		}
		row := fmt.Sprintf("| %s | %d | %s | %s | %s | %s |", f.Scenario, f.Twins, pct(f.Best.Worst), scheduleText(f.Switches, f.Best.Schedule), f.Best.WorstIn, forced)
		for _, c := range cands {
			row += fmt.Sprintf(" %s (%s) |", pct(f.Candidates[c].Worst), f.Candidates[c].WorstIn)
		}
		if _, err := fmt.Fprintln(w, row); err != nil {
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
				out = append(out, append(slices.Clone(head), "schedule", at, switchOf(tb.Switches, s), f(s.Mean), f(m.Shortfall(s.Mean))))
			}
			names := slices.Sorted(maps.Keys(m.Candidates))
			for _, c := range names {
				out = append(out, append(slices.Clone(head), c, "", "", f(m.Candidates[c]), f(m.Shortfall(m.Candidates[c]))))
			}
		}
	}
	return out
}

// WriteBoundPlot draws, per scenario, the ski-rental curve of its fan:
// for each move time, the worst shortfall behind the best rule over the
// scenario and its twins (the best destination at that time), beside the
// shortfall in the scenario alone, never moving as a dashed level, each
// candidate's worst-case shortfall as a dotted level, and the 2% line;
// moves up to 20 s after the last twin diverges.
func WriteBoundPlot(path string, fans []Fan) error {
	if len(fans) == 0 {
		return fmt.Errorf("eval: bound plot: no fans to draw")
	}
	const cols = 3
	var grid [][]*plot.Plot
	for i, f := range fans {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s and %d twins", f.Scenario, f.Twins)
		p.X.Label.Text = "move at (s after congestion start)"
		p.Y.Label.Text = "shortfall behind the best rule (%)"
		worst, own := map[float64]float64{}, map[float64]float64{}
		var times []float64
		never := math.NaN()
		for _, pt := range f.Curve {
			if pt.Schedule.To < 0 {
				never = 100 * pt.Worst
				continue
			}
			t := pt.Schedule.At
			if t > f.LastDiverge+20 {
				continue
			}
			if _, ok := worst[t]; !ok {
				times = append(times, t)
				worst[t], own[t] = math.Inf(1), math.Inf(1)
			}
			worst[t], own[t] = math.Min(worst[t], 100*pt.Worst), math.Min(own[t], 100*pt.Own)
		}
		slices.Sort(times)
		if len(times) == 0 {
			return fmt.Errorf("eval: bound plot: %s has no move", f.Scenario)
		}
		lo, hi := times[0], times[len(times)-1]
		for k, series := range []struct {
			name string
			v    map[float64]float64
		}{{"worst over scenario and twins", worst}, {"in the scenario alone", own}} {
			xy := make(plotter.XYs, len(times))
			for j, t := range times {
				xy[j] = plotter.XY{X: t, Y: series.v[t]}
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return fmt.Errorf("eval: bound plot: %w", err)
			}
			l.Color = policyColor(series.name, k)
			l.Width = vg.Points(1.5 - float64(k)/2)
			p.Add(l)
			p.Legend.Add(series.name, l)
		}
		// level draws a horizontal line in the colour of policy (its own
		// colour for a named policy, else the palette's c-th).
		level := func(name, policy string, y float64, dashes []vg.Length, c int) error {
			if math.IsNaN(y) {
				return nil
			}
			l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: y}, {X: hi, Y: y}})
			if err != nil {
				return fmt.Errorf("eval: bound plot: %w", err)
			}
			l.Dashes, l.Color = dashes, policyColor(policy, c)
			p.Add(l)
			p.Legend.Add(name, l)
			return nil
		}
		if err := level("never: worst", "", never, []vg.Length{vg.Points(5), vg.Points(3)}, 2); err != nil {
			return err
		}
		// Each candidate in its policy's colour, dotted; one without a
		// colour of its own (the oracle) in the palette's fourth, which no
		// other line here takes.
		for _, c := range slices.Sorted(maps.Keys(f.Candidates)) {
			if err := level(c+": worst", c, 100*f.Candidates[c].Worst, []vg.Length{vg.Points(1), vg.Points(2)}, 3); err != nil {
				return err
			}
		}
		if err := level("2% behind", "", 100*BoundLine, []vg.Length{vg.Points(2), vg.Points(3)}, 4); err != nil {
			return err
		}
		p.Y.Min = math.Min(p.Y.Min, -1)
		p.Y.Max = math.Min(p.Y.Max, 20)
		p.Legend.Top = true
		if i%cols == 0 {
			grid = append(grid, nil)
		}
		grid[len(grid)-1] = append(grid[len(grid)-1], p)
	}
	width := min(len(fans), cols)
	for len(grid[len(grid)-1]) < width {
		grid[len(grid)-1] = append(grid[len(grid)-1], nil) // a grid of full rows
	}
	return writeGrid(path, grid, vg.Length(5*width)*vg.Inch, vg.Length(3.5*float64(len(grid)))*vg.Inch)
}
