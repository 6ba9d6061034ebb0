package eval

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// rrEpisode is an rr episode whose latency is above its 15 ms SLO for
// `late` of its 1 s samples in the window, with the given moves.
func rrEpisode(sc, pol string, rep int, late int, moves ...float64) *Episode {
	e := episode(sc, pol, rep, 3e6, 3e6, 500, moves...)
	e.Kind, e.SLO = sim.KindRR, 0.015
	n := 0
	for _, t := range e.T {
		v := 0.010
		if t > 0 && n < late { // the window's samples (inWindow)
			v, n = 0.5, n+1
		}
		e.Latency = append(e.Latency, v)
	}
	return e
}

// TestKindYardstick: over two rr scenarios the best rule is the one with
// the fewest SLO seconds over both, the strongest the fewest in each; the
// agent's ratios, verdicts, and its moves in the trap (where the oracle
// stays) are counted, and the report and kinds.csv show them.
func TestKindYardstick(t *testing.T) {
	var eps []*Episode
	for rep := range 3 {
		eps = append(eps,
			// A: crowd moves early, throughput-drop late; the agent as crowd.
			rrEpisode("A", "crowd", rep, 2, 5), rrEpisode("A", "throughput-drop", rep, 20, 30), rrEpisode("A", "static", rep, 100),
			rrEpisode("A", "agent", rep, 2, 5), rrEpisode("A", "oracle", rep, 1, 1),
			// B, a trap: crowd moves and pays, the others stay; the agent moves once.
			rrEpisode("B", "crowd", rep, 30, 5), rrEpisode("B", "throughput-drop", rep, 0), rrEpisode("B", "static", rep, 0),
			rrEpisode("B", "agent", rep, 4, 10), rrEpisode("B", "oracle", rep, 0))
	}
	opt := DefaultOptions()
	opt.Baseline, opt.Quiet = "static", []string{"B", "Z"}
	s, err := Summarize(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	var agent *KindYardstick
	for i := range s.KindYardsticks {
		if y := &s.KindYardsticks[i]; y.Candidate == "agent" && y.Kind == sim.KindRR {
			agent = y
		}
	}
	if agent == nil {
		t.Fatalf("no rr yardstick for the agent in %+v", s.KindYardsticks)
	}
	// Means over A and B: crowd (2+30)/2 = 16, throughput-drop 10, static
	// 50: the best rule is throughput-drop; the strongest 2 in A, 0 in B.
	if agent.BestRule != "throughput-drop" || agent.BestRuleSLO != 10 || agent.StrongestSLO != 1 || agent.CandidateSLO != 3 {
		t.Errorf("best rule %s (%v s), strongest %v s, agent %v s; want throughput-drop (10 s), 1 s, 3 s", agent.BestRule, agent.BestRuleSLO, agent.StrongestSLO, agent.CandidateSLO)
	}
	if math.Abs(agent.Ratio-0.3) > 1e-9 || math.Abs(agent.StrongestRatio-3) > 1e-9 || !(agent.RatioLo <= agent.Ratio && agent.Ratio <= agent.RatioHi) {
		t.Errorf("ratios %v [%v, %v] and %v; want 0.3 inside its interval and 3", agent.Ratio, agent.RatioLo, agent.RatioHi, agent.StrongestRatio)
	}
	if agent.Better != 0 || agent.Ties != 1 || agent.Worse != 1 {
		t.Errorf("better/tie/worse %d/%d/%d, want 0/1/1 (level with crowd in A, 4 s against 0 in B)", agent.Better, agent.Ties, agent.Worse)
	}
	if len(agent.Traps) != 1 || agent.Traps[0] != "B" || agent.TrapMoves != 1 {
		t.Errorf("traps %v, trap moves %v; want [B] and 1", agent.Traps, agent.TrapMoves)
	}
	if len(agent.Quiet) != 1 || agent.Quiet[0] != "B" || agent.QuietMoves != 1 {
		t.Errorf("quiet %v, quiet moves %v; want [B] (Z did not run) and 1", agent.Quiet, agent.QuietMoves)
	}
	var scs []*sim.Scenario
	for _, name := range []string{"S1", "T1", "T2"} {
		sc, err := sim.BuiltinScenario(name)
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	if got := QuietScenarios(scs); len(got) != 2 || got[0] != "T1" || got[1] != "T2" {
		t.Errorf("QuietScenarios(S1, T1, T2) = %v, want [T1 T2]", got)
	}
	var b strings.Builder
	if err := s.WriteMarkdown(&b, "kinds"); err != nil {
		t.Fatal(err)
	}
	if want := "| rr | agent | 2 | 3.0 | throughput-drop | 10.0 | 0.30× |"; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
	dir := t.TempDir()
	if err := s.WriteCSV(dir); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(s.Figures(), FigKinds) {
		t.Errorf("figures %v lack %s", s.Figures(), FigKinds)
	}
	if err := s.WritePlots(dir); err != nil {
		t.Fatal(err)
	}
	if png, err := os.ReadFile(filepath.Join(dir, FigKinds)); err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("%s: %d bytes, %v; want a PNG", FigKinds, len(png), err)
	}
	rows, err := os.ReadFile(filepath.Join(dir, "kinds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "rr,agent,B,throughput-drop,0,4,3,-4,-4,-4,worse\n"; !strings.Contains(string(rows), want) {
		t.Errorf("kinds.csv lacks %q:\n%s", want, rows)
	}
}

// TestKindYardstickRuleNeverMissed: where the best rule never missed its
// objective and the agent did, the ratio is unbounded (∞ in the report),
// not undefined; where neither missed it, it is undefined (–).
func TestKindYardstickRuleNeverMissed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		agentLate int
		want      string
	}{{"agent missed", 3, "∞"}, {"neither missed", 0, "–"}} {
		t.Run(tc.name, func(t *testing.T) {
			var eps []*Episode
			for rep := range 2 {
				eps = append(eps, rrEpisode("A", "static", rep, 0), rrEpisode("A", "agent", rep, tc.agentLate, 5))
			}
			opt := DefaultOptions()
			opt.Baseline = "static"
			s, err := Summarize(eps, opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.KindYardsticks) != 1 {
				t.Fatalf("%d yardsticks, want the agent's rr one", len(s.KindYardsticks))
			}
			y := s.KindYardsticks[0]
			if got := RatioString(y.Ratio); got != tc.want {
				t.Errorf("ratio %v printed %q, want %q", y.Ratio, got, tc.want)
			}
			if got := RatioString(y.StrongestRatio); got != tc.want {
				t.Errorf("strongest ratio %v printed %q, want %q", y.StrongestRatio, got, tc.want)
			}
			if tc.agentLate > 0 && RatioCIString(y.RatioLo, y.RatioHi) != "[∞, ∞]" {
				t.Errorf("interval [%v, %v], want [∞, ∞]", y.RatioLo, y.RatioHi)
			}
		})
	}
}

// Each interval of a kind's yardstick comes from its own random stream:
// the interval against the strongest deployable policies is the same
// whether or not a single best rule (one that ran in every scenario) was
// found and its interval drawn first. Here adding static, which ran
// everywhere and is never the strongest, gives the yardstick a best rule
// and must leave the strongest interval as it was.
func TestKindYardstickIntervalsIndependent(t *testing.T) {
	var eps []*Episode
	for rep := range 2 {
		for i, sc := range []string{"A", "B", "C", "D", "E", "F", "G", "H"} {
			eps = append(eps, rrEpisode(sc, "agent", rep, 3+3*i+rep), rrEpisode(sc, "static", rep, 100))
			if i < 4 {
				eps = append(eps, rrEpisode(sc, "crowd", rep, 2+i))
			} else {
				eps = append(eps, rrEpisode(sc, "throughput-drop", rep, 1+5*i))
			}
		}
	}
	yardstick := func(deployable ...string) KindYardstick {
		t.Helper()
		opt := DefaultOptions()
		opt.Baseline, opt.Deployable, opt.Resamples = "static", deployable, 200
		s, err := Summarize(eps, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, y := range s.KindYardsticks {
			if y.Candidate == "agent" && y.Kind == sim.KindRR {
				return y
			}
		}
		t.Fatalf("no rr yardstick for the agent in %+v", s.KindYardsticks)
		return KindYardstick{}
	}
	without, with := yardstick("crowd", "throughput-drop"), yardstick("crowd", "throughput-drop", "static")
	if without.BestRule != "" || with.BestRule != "static" || !(with.BestRuleSLO > 0) {
		t.Fatalf("best rule %q without static, %q (%v s) with it; want none, then static with SLO seconds > 0", without.BestRule, with.BestRule, with.BestRuleSLO)
	}
	if without.StrongestSLO != with.StrongestSLO || !(without.StrongestLo < without.StrongestHi) {
		t.Fatalf("strongest SLO %v without static, %v with it, interval [%v, %v]; want the same SLO and a proper interval",
			without.StrongestSLO, with.StrongestSLO, without.StrongestLo, without.StrongestHi)
	}
	if with.StrongestLo != without.StrongestLo || with.StrongestHi != without.StrongestHi {
		t.Errorf("strongest ratio interval [%v, %v] without a best rule, [%v, %v] with one; want the same: it must not depend on another interval's draws",
			without.StrongestLo, without.StrongestHi, with.StrongestLo, with.StrongestHi)
	}
}
