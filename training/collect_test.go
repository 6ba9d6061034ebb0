package training

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// onSwitch counts the congesters on switch sw at time at (arrived, not
// departed, after their moves).
func onSwitch(sc *sim.Scenario, sw string, at time.Duration) int {
	n := 0
	for _, c := range sc.Congesters {
		if time.Duration(c.Arrive) > at || (c.Depart != 0 && time.Duration(c.Depart) <= at) {
			continue
		}
		cur := c.Switch
		for _, m := range c.Moves {
			if time.Duration(m.At) <= at {
				cur = m.Switch
			}
		}
		if cur == sw {
			n++
		}
	}
	return n
}

func TestPlanEpisode(t *testing.T) {
	cfg := sim.DefaultConfig()
	end := 200 * time.Second
	for _, st := range Strategies() {
		t.Run(string(st), func(t *testing.T) {
			capped, moved := 0, 0
			for j := range 40 {
				seed := planSeed(7, st, j)
				p, err := PlanEpisode(st, j, seed, cfg)
				if err != nil {
					t.Fatal(err)
				}
				again, err := PlanEpisode(st, j, seed, cfg)
				if err != nil || !cmp.Equal(p, again) {
					t.Fatalf("plan %d is not deterministic: %v\n%s", j, err, cmp.Diff(p, again))
				}
				if err := p.Scenario.Validate(cfg); err != nil {
					t.Fatal(err)
				}
				if err := p.Script.Validate(cfg.Switches); err != nil {
					t.Fatal(err)
				}
				sc, k := p.Scenario, p.Scenario.ProtectedSwitch
				switch {
				case st == StrategyKQuiet && len(sc.Congesters) != 0:
					t.Errorf("plan %d has %d congesters, want none", j, len(sc.Congesters))
				case len(sc.Congesters) == 0 && st != StrategyC && st != StrategyKQuiet:
					t.Errorf("plan %d has no congester", j)
				}
				for _, c := range sc.Congesters {
					if c.StreamCap > 0 {
						capped++
						break
					}
				}
				maxOn := 0
				for at := time.Duration(0); at < end; at += time.Second {
					maxOn = max(maxOn, onSwitch(sc, k, at))
				}
				switch st {
				case StrategyC, StrategyGClean, StrategyGAside:
					if maxOn != 0 {
						t.Errorf("plan %d puts %d congesters on the flow's switch, want none", j, maxOn)
					}
				case StrategyE, StrategyFStay, StrategyFLate, StrategyFEarly:
					if maxOn < 4 {
						t.Errorf("plan %d puts at most %d congesters on the flow's switch, want the pile-up (>= 4)", j, maxOn)
					}
					// As Description says: every congester on k* but at
					// most one full-rate elephant trap elsewhere from the
					// first seconds, and none in F_STAY.
					away := 0
					for _, c := range sc.Congesters {
						if c.Switch == k && len(c.Moves) == 0 {
							continue
						}
						away++
						if st == StrategyFStay || c.StreamCap != 0 || len(c.Moves) != 0 || time.Duration(c.Arrive) > 5*time.Second {
							t.Errorf("plan %d: congester %+v off the flow's switch %s is not an elephant trap", j, c, k)
						}
					}
					if away > 1 {
						t.Errorf("plan %d: %d congesters off the flow's switch, want at most the one elephant trap", j, away)
					}
				case StrategyHPartial:
					if maxOn < 1 || maxOn > 3 {
						t.Errorf("plan %d puts %d congesters on the flow's switch, want 1–3", j, maxOn)
					}
				case StrategyA, StrategyALong, StrategyAShort:
					at := p.Scenario.Start() + 90*time.Second
					for _, o := range []string{"agg1", "agg2", "agg3", "agg4"} {
						if o != k && onSwitch(sc, o, at) >= onSwitch(sc, k, at) {
							t.Errorf("plan %d: %s carries %d congesters, the flow's %s %d: want the flow on the most-loaded switch", j, o, onSwitch(sc, o, at), k, onSwitch(sc, k, at))
						}
					}
				case StrategyD, StrategyDShort, StrategyDLong:
					if onSwitch(sc, k, p.Scenario.Start()+time.Second) != 0 || maxOn < 2 {
						t.Errorf("plan %d: %d congesters on the flow's switch at the start, at most %d later; want 0, then 2–3 moved in", j,
							onSwitch(sc, k, p.Scenario.Start()+time.Second), maxOn)
					}
				}
				s := p.Script
				if s.Trigger == TriggerTime {
					moved++
				}
				switch st {
				case StrategyKQuiet, StrategyLBrief, StrategyMFamily, StrategyNRolling, StrategyOSolo, StrategyGAside:
					if s.Trigger != TriggerNone && s.Trigger != TriggerTime {
						t.Errorf("plan %d: trigger %s, want none or time", j, s.Trigger)
					}
				case StrategyC, StrategyFStay, StrategyGClean, StrategyHPartial:
					if s.Trigger != TriggerNone {
						t.Errorf("plan %d: trigger %s, want none", j, s.Trigger)
					}
				case StrategyA, StrategyALong, StrategyD:
					if s.Trigger != TriggerOverflow {
						t.Errorf("plan %d: trigger %s, want overflow", j, s.Trigger)
					}
				default:
					if s.Trigger != TriggerTime {
						t.Errorf("plan %d: trigger %s, want time", j, s.Trigger)
					}
				}
				var lo, hi time.Duration // the strategy's reroute window after congestion start
				switch st {
				case StrategyALong:
					lo, hi = 40*time.Second, 60*time.Second
				case StrategyAShort, StrategyFEarly:
					lo, hi = 5*time.Second, 20*time.Second
				case StrategyE:
					lo, hi = 20*time.Second, 40*time.Second
				case StrategyFLate:
					lo, hi = 40*time.Second, 60*time.Second
				case StrategyMFamily:
					if s.Trigger == TriggerTime {
						lo, hi = 0, 60*time.Second
					}
					if want := fmt.Sprintf("M_FAMILY-%d", j); sc.Name != want || !strings.Contains(sc.Description, "Congesters:") {
						t.Errorf("plan %d: %q, %q; want the name %s and the draw's description", j, sc.Name, sc.Description, want)
					}
				case StrategyNRolling:
					if s.Trigger == TriggerTime {
						lo, hi = 2*time.Second, 80*time.Second
					}
					checkRolling(t, j, sc, cfg.Switches)
				case StrategyOSolo, StrategyGAside:
					if s.Trigger == TriggerTime {
						lo, hi = 0, 60*time.Second
					}
					if st == StrategyOSolo {
						checkSolo(t, j, sc, p.Scenario.Start())
					}
				case StrategyLBrief:
					if s.Trigger == TriggerTime {
						lo, hi = 2*time.Second, 16*time.Second
					}
					// The whole crowd on the flow's switch leaves together,
					// 5–17 s after congestion start.
					for _, c := range sc.Congesters {
						if c.Switch != k || c.Depart == 0 || c.Depart != sc.Congesters[0].Depart {
							t.Errorf("plan %d: congester %+v, want every one on %s, leaving together", j, c, k)
						}
						if d := time.Duration(c.Depart) - p.Scenario.Start(); d < 5*time.Second || d > 17*time.Second {
							t.Errorf("plan %d: the crowd leaves %v after the start, want 5–17 s", j, d)
						}
					}
				}
				if hi > 0 {
					var got time.Duration
					if s.Trigger == TriggerTime {
						got = s.At - p.Scenario.Start()
					} else {
						got = s.Dwell
					}
					if got < lo || got > hi {
						t.Errorf("plan %d: reroute %v after the start (or dwell), want %v–%v", j, got, lo, hi)
					}
				}
				if (st == StrategyAShort || st == StrategyFEarly) && k != switchName(j%cfg.Switches) {
					t.Errorf("plan %d: flow on %s, want %s (balanced)", j, k, switchName(j%cfg.Switches))
				}
			}
			if capped == 0 && st != StrategyA && st != StrategyALong && st != StrategyD && st != StrategyC && st != StrategyKQuiet {
				t.Errorf("none of 40 plans has a capped crowd")
			}
			if (st == StrategyKQuiet || st == StrategyOSolo || st == StrategyGAside) && (moved < 10 || moved > 30) {
				t.Errorf("%d of 40 %s plans reroute, want about half", moved, st)
			}
			if (st == StrategyLBrief || st == StrategyMFamily || st == StrategyNRolling) && (moved < 18 || moved > 36) {
				t.Errorf("%d of 40 %s plans reroute, want about two in three", moved, st)
			}
		})
	}
	if _, err := PlanEpisode("Z", 0, 1, cfg); err == nil {
		t.Error("unknown strategy: no error")
	}
}

// checkSolo requires O_SOLO's lone neighbour: one host on the flow's switch
// in one to three bursts of 3–10 s, the first at congestion start, 20–40 s
// apart and never overlapping, and every other congester on another switch
// with the same load mode (capped or full rate).
func checkSolo(t *testing.T, j int, sc *sim.Scenario, start time.Duration) {
	t.Helper()
	var bursts []sim.Congester
	for _, c := range sc.Congesters {
		if len(c.Moves) != 0 {
			t.Errorf("plan %d: congester %+v moves, want none to", j, c)
		}
		if c.Switch == sc.ProtectedSwitch {
			bursts = append(bursts, c)
		}
	}
	if len(bursts) < 1 || len(bursts) > 3 {
		t.Errorf("plan %d: %d bursts on the flow's switch, want 1–3", j, len(bursts))
		return
	}
	capped := bursts[0].StreamCap != 0
	if time.Duration(bursts[0].Arrive) != start {
		t.Errorf("plan %d: first burst at %v, want at congestion start %v", j, time.Duration(bursts[0].Arrive), start)
	}
	for i, b := range bursts {
		if b.Host != bursts[0].Host || b.Depart == 0 {
			t.Errorf("plan %d: burst %+v, want host %s leaving", j, b, bursts[0].Host)
			continue
		}
		if d := time.Duration(b.Depart - b.Arrive); d < 3*time.Second || d > 10*time.Second {
			t.Errorf("plan %d: burst %d lasts %v, want 3–10 s", j, i, d)
		}
		if i > 0 {
			if gap := time.Duration(b.Arrive - bursts[i-1].Depart); gap < 20*time.Second || gap > 40*time.Second {
				t.Errorf("plan %d: %v between bursts %d and %d, want 20–40 s", j, gap, i-1, i)
			}
		}
	}
	for _, c := range sc.Congesters {
		if c.Switch == sc.ProtectedSwitch {
			continue
		}
		if c.Host == bursts[0].Host || (c.StreamCap != 0) != capped {
			t.Errorf("plan %d: congester %+v elsewhere, want another host with the neighbour's load mode (capped %v)", j, c, capped)
		}
	}
}

// checkRolling requires N_ROLLING's crowd: two or more congesters, at every
// second of the episode all those present on one switch, the crowd staying
// 20–40 s on each, and leaving a switch for one it has not visited since,
// until every switch has had its turn (a cyclic order).
func checkRolling(t *testing.T, j int, sc *sim.Scenario, switches int) {
	t.Helper()
	if len(sc.Congesters) < 2 {
		t.Errorf("plan %d: %d congesters, want a crowd of two or more", j, len(sc.Congesters))
		return
	}
	var visits []string
	var since time.Duration
	for at := sc.Start(); at < sc.Start()+time.Duration(sc.Window); at += time.Second {
		where := map[string]bool{}
		for k := range switches {
			if sw := switchName(k); onSwitch(sc, sw, at) > 0 {
				where[sw] = true
			}
		}
		if len(where) > 1 {
			t.Errorf("plan %d: at %v the crowd is on %v, want one switch", j, at, where)
			return
		}
		for sw := range where {
			if n := len(visits); n == 0 || visits[n-1] != sw {
				if n > 1 && (at-since < 19*time.Second || at-since > 41*time.Second) {
					t.Errorf("plan %d: the crowd stayed %v on %s, want 20–40 s", j, at-since, visits[n-1])
				}
				visits, since = append(visits, sw), at
			}
		}
	}
	for i, sw := range visits {
		if i >= switches && visits[i-switches] != sw {
			t.Errorf("plan %d: the crowd visits %v, want a cyclic order of the %d switches", j, visits, switches)
			return
		}
		if i < switches && slices.Contains(visits[:i], sw) {
			t.Errorf("plan %d: the crowd visits %v, back to %s before every switch had its turn", j, visits, sw)
			return
		}
	}
	if len(visits) < 3 {
		t.Errorf("plan %d: the crowd visits %v, want it to move at least twice", j, visits)
	}
}

// A fabric with a single congester host (the default one's congestion leaves
// cut to leaf 0, whose other host sends the protected flow) plans every
// strategy: the elephant trap never takes the only host (strategy B used
// to panic in rand.IntN(0)).
func TestPlanCorpusOneCongesterHost(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.CongestionLeaves = []int{0}
	if hosts := congesterHosts(cfg); len(hosts) != 1 {
		t.Fatalf("congester hosts %v, want exactly one", hosts)
	}
	plans, err := PlanCorpus(CollectConfig{Episodes: 400, Seed: 5, Sim: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 400 {
		t.Fatalf("%d plans, want 400", len(plans))
	}
	seen := map[Strategy]int{}
	for _, p := range plans {
		seen[p.Strategy]++
		if err := p.Scenario.Validate(cfg); err != nil {
			t.Errorf("%s: %v", p.Scenario.Name, err)
		}
		hosts := map[string]bool{}
		for _, c := range p.Scenario.Congesters {
			hosts[c.Host] = true
		}
		if len(hosts) != 1 {
			t.Errorf("%s has congesters on hosts %v, want the one host", p.Scenario.Name, hosts)
		}
	}
	for _, st := range Strategies() {
		if seen[st] == 0 && DefaultShares()[string(st)] > 0 {
			t.Errorf("no plan of strategy %s", st)
		}
	}
}

// TestScriptedReroutes runs two episodes of every strategy and checks that
// each scripted reroute happens in its window, once, and only when the
// script says so.
func TestScriptedReroutes(t *testing.T) {
	cfg := sim.DefaultConfig()
	var plans []Plan
	for _, st := range Strategies() {
		for j := range 2 {
			p, err := PlanEpisode(st, j, planSeed(3, st, j), cfg)
			if err != nil {
				t.Fatal(err)
			}
			plans = append(plans, p)
		}
	}
	specs := make([]sim.EpisodeSpec, len(plans))
	for i, p := range plans {
		specs[i] = p.Spec(cfg)
	}
	traces, err := sim.RunMany(context.Background(), specs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	fired := map[Trigger]int{}
	for i, tr := range traces {
		p := plans[i]
		var at []time.Duration
		var idx []int
		for j, st := range tr.Steps {
			if st.Decision.Rerouted {
				at = append(at, st.Time.Sub(tr.Meta.Start))
				idx = append(idx, j)
			}
		}
		name := string(p.Strategy) + "-" + string(rune('0'+p.Index))
		if len(at) > 1 {
			t.Errorf("%s: %d reroutes, want at most one", name, len(at))
			continue
		}
		switch p.Script.Trigger {
		case TriggerNone:
			if len(at) != 0 {
				t.Errorf("%s: rerouted at %v, want no reroute", name, at[0])
			}
		case TriggerTime:
			if len(at) != 1 || at[0] < p.Window[0] || at[0] > p.Window[1] {
				t.Errorf("%s: reroutes at %v, want one in [%v, %v]", name, at, p.Window[0], p.Window[1])
			}
		case TriggerOverflow:
			if len(at) == 0 {
				continue // the overflow never held long enough
			}
			if at[0] < p.Window[0] {
				t.Errorf("%s: rerouted at %v, want no earlier than %v", name, at[0], p.Window[0])
			}
			// The confirmation: Consecutive samples above the threshold on
			// the flow's switch, Dwell before the reroute.
			j := idx[0]
			for j > 0 && tr.Steps[j].Time.Sub(tr.Steps[idx[0]].Time) > -p.Script.Dwell {
				j--
			}
			for c := range p.Script.Consecutive {
				s := tr.Steps[j-c]
				if s.Time.Sub(tr.Steps[idx[0]].Time) > -p.Script.Dwell {
					continue
				}
				if s.Obs.Switches[s.Switch].OverflowRate <= p.Script.Threshold {
					t.Errorf("%s: rerouted at %v, but %v before it the overflow was %.0f B/s, not above %.0f", name, at[0],
						tr.Steps[idx[0]].Time.Sub(s.Time), s.Obs.Switches[s.Switch].OverflowRate, p.Script.Threshold)
				}
			}
		}
		if len(at) == 1 {
			fired[p.Script.Trigger]++
			st := tr.Steps[idx[0]]
			if p.Script.To >= 0 && st.Decision.Target != p.Script.To {
				t.Errorf("%s: rerouted to %d, want %d", name, st.Decision.Target, p.Script.To)
			}
		}
	}
	if fired[TriggerOverflow] == 0 {
		t.Error("no overflow-triggered script fired")
	}
}

func TestScriptedPolicy(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	obs := func(overflow ...float64) *proflow.Observation {
		o := &proflow.Observation{Time: start, Switches: make([]proflow.SwitchSample, 4)}
		for k, v := range overflow {
			o.Switches[k].OverflowRate = v
		}
		return o
	}
	scores := make([]float64, 4)
	step := func(p *ScriptedPolicy, at time.Duration, cur int, o *proflow.Observation) int {
		t.Helper()
		if err := p.Score(scores, &proflow.Input{Time: start.Add(at), Obs: o, Current: cur}); err != nil {
			t.Fatal(err)
		}
		best := cur
		for k, s := range scores {
			if s > scores[best] {
				best = k
			}
		}
		return best
	}
	// Time trigger to a fixed switch: fires once, at the first step at or after At.
	p, err := NewScriptedPolicy(Script{Trigger: TriggerTime, At: 10 * time.Second, To: 2}, start, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := step(p, 9500*time.Millisecond, 0, obs()); got != 0 {
		t.Errorf("before At: move to %d, want stay", got)
	}
	if got := step(p, 10*time.Second, 0, obs()); got != 2 || !p.Fired() {
		t.Errorf("at At: move to %d (fired %v), want 2", got, p.Fired())
	}
	if got := step(p, 20*time.Second, 2, obs()); got != 2 {
		t.Errorf("after firing: move to %d, want stay on 2", got)
	}

	// Overflow trigger: three samples above 27,000 confirm, then a 2 s dwell;
	// the destination is the cleanest switch, ties broken by Preference.
	p, err = NewScriptedPolicy(Script{Trigger: TriggerOverflow, At: 5 * time.Second, Threshold: 27000, Consecutive: 3,
		Dwell: 2 * time.Second, To: -1, Preference: []int{3, 1, 2, 0}}, start, 4)
	if err != nil {
		t.Fatal(err)
	}
	hot := obs(40000, 0, 0, 0)
	for i, tc := range []struct {
		at   time.Duration
		o    *proflow.Observation
		want int
	}{
		{4 * time.Second, hot, 0},              // before At: not counted
		{5 * time.Second, hot, 0},              // 1
		{5500 * time.Millisecond, hot, 0},      // 2
		{6 * time.Second, obs(20000), 0},       // reset
		{6500 * time.Millisecond, hot, 0},      // 1
		{7 * time.Second, hot, 0},              // 2
		{7500 * time.Millisecond, hot, 0},      // 3: confirmed, dwell starts
		{9 * time.Second, obs(0), 0},           // dwell
		{9500 * time.Millisecond, hot, 3},      // dwell over: tie between 1, 2, 3 → preference 3
		{10 * time.Second, obs(0, 0, 0, 0), 3}, // after firing: stays on 3
	} {
		cur := 0
		if i == 9 {
			cur = 3
		}
		if got := step(p, tc.at, cur, tc.o); got != tc.want {
			t.Errorf("step %d at %v: best %d, want %d", i, tc.at, got, tc.want)
		}
	}

	// The cleanest switch: overflow bins first, then flows, then transmit rate.
	o := obs(40000, 12000, 3000, 1000)
	o.Switches[2].FlowCount, o.Switches[3].FlowCount = 4, 2
	if got := cleanest(o, 0, nil); got != 3 {
		t.Errorf("cleanest = %d, want 3 (same overflow bin as 2, fewer flows)", got)
	}
	o.Switches[3].FlowCount = 4
	o.Switches[2].TxRate, o.Switches[3].TxRate = 1e6, 9e6
	if got := cleanest(o, 0, nil); got != 2 {
		t.Errorf("cleanest = %d, want 2 (lower transmit rate)", got)
	}

	for _, bad := range []Script{
		{Trigger: "sometimes"},
		{Trigger: TriggerOverflow, Consecutive: 0},
		{Trigger: TriggerTime, To: 4},
		{Trigger: TriggerTime, At: -time.Second},
	} {
		if _, err := NewScriptedPolicy(bad, start, 4); err == nil {
			t.Errorf("script %+v: no error", bad)
		}
	}
}

func TestAllocate(t *testing.T) {
	counts := Allocate(779, DefaultShares())
	total, sum := 0, 0.0
	for _, v := range DefaultShares() {
		sum += v
	}
	for i, c := range counts {
		total += c
		want := 779 * DefaultShares()[string(Strategies()[i])] / sum
		if math.Abs(float64(c)-want) > 1 {
			t.Errorf("%s: %d episodes, want about %.1f", Strategies()[i], c, want)
		}
	}
	if total != 779 {
		t.Errorf("allocated %d episodes, want 779", total)
	}
	got := Allocate(10, map[string]float64{"B": 3, "C": 1})
	if got[3] != 8 || got[4] != 2 || got[0] != 0 {
		t.Errorf("B:C = 3:1 over 10 episodes gives %v, want B 8, C 2, the rest 0", got)
	}
	if _, err := ReadShares([]byte(`{"A": 1, "Q": 2}`)); err == nil {
		t.Error("unknown strategy in shares: no error")
	}
	if _, err := ReadShares([]byte(`{"A": -1}`)); err == nil {
		t.Error("negative share: no error")
	}
	if err := (CollectConfig{Shares: map[string]float64{"A": 0}}).Validate(); err == nil {
		t.Error("all-zero shares: no error")
	}
}

// baselineSpy records the baseline the controller hands the encoder.
type baselineSpy struct {
	*telemetry.Encoder
	got *proflow.Baseline
}

func (s baselineSpy) SetBaseline(b proflow.Baseline) error {
	*s.got = b
	return s.Encoder.SetBaseline(b)
}

func TestEpisodeFromTrace(t *testing.T) {
	cfg := sim.DefaultConfig()
	p, err := PlanEpisode(StrategyE, 0, 11, cfg)
	if err != nil {
		t.Fatal(err)
	}
	spec := p.Spec(cfg)
	var learned proflow.Baseline
	inner := spec.NewPolicy
	spec.NewPolicy = func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
		enc, pol, gate, err := inner(topo)
		if err != nil {
			return nil, nil, nil, err
		}
		return baselineSpy{enc.(*telemetry.Encoder), &learned}, pol, gate, nil
	}
	tr, err := sim.RunEpisode(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := EpisodeFromTrace(tr, 5, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ep.ID != 5 || ep.Baseline != learned {
		t.Errorf("episode %d, baseline %+v; want 5 and the controller's %+v", ep.ID, ep.Baseline, learned)
	}
	warmup := proflow.DefaultConfig().BaselineWarmup
	if len(ep.Observations) != len(tr.Steps)-warmup || len(ep.Placements) != len(ep.Observations) {
		t.Fatalf("%d observations and %d placements from %d steps, want %d each", len(ep.Observations), len(ep.Placements), len(tr.Steps), len(tr.Steps)-warmup)
	}
	moves := 0
	for i := range ep.Observations {
		st := tr.Steps[i+warmup]
		if !cmp.Equal(ep.Observations[i], *st.Obs) || ep.Placements[i] != st.Switch {
			t.Fatalf("observation %d does not match step %d", i, i+warmup)
		}
		if i > 0 && ep.Placements[i] != ep.Placements[i-1] {
			moves++
		}
	}
	if moves != 1 {
		t.Errorf("%d moves in the placements, want the script's one", moves)
	}

	// Without a baseline phase (a controller given a fixed baseline) the
	// first steps are replayed; without observations the steps are left out.
	fixed := *tr
	fixed.Steps = append([]trace.Step(nil), tr.Steps...)
	for i := range fixed.Steps {
		if fixed.Steps[i].Decision.Reason == proflow.ReasonBaseline {
			fixed.Steps[i].Decision.Reason = proflow.ReasonStay
		}
	}
	fixed.Steps[40].Obs = nil
	ep2, err := EpisodeFromTrace(&fixed, 0, TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ep2.Baseline != learned {
		t.Errorf("replayed baseline %+v, want %+v", ep2.Baseline, learned)
	}
	if len(ep2.Observations) != len(ep.Observations)-1 {
		t.Errorf("%d observations with one step missing, want %d", len(ep2.Observations), len(ep.Observations)-1)
	}
	given := proflow.Baseline{Overflow: 1, FlowCount: 2, Throughput: 3}
	if ep3, err := EpisodeFromTrace(tr, 0, TraceOptions{Baseline: &given}); err != nil || ep3.Baseline != given {
		t.Errorf("given baseline: %+v, %v", ep3.Baseline, err)
	}
	short := *tr
	short.Steps = tr.Steps[:8]
	if _, err := EpisodeFromTrace(&short, 0, TraceOptions{}); err == nil {
		t.Error("trace shorter than the baseline phase: no error")
	}
}

func TestCollect(t *testing.T) {
	dir := t.TempDir()
	var calls int
	cfg := CollectConfig{Episodes: 4, Seed: 2, Parallelism: 2, OutDir: dir,
		Shares:   map[string]float64{"F_EARLY": 1, "C": 1, "D": 1, "B": 1},
		Progress: func(done, total int) { calls++ }}
	col, err := Collect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ds := col.Dataset
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(col.Episodes) != 4 || calls != 4 || len(ds.Episodes()) != 4 || !ds.HasRewardInputs() {
		t.Fatalf("%d episodes, %d progress calls, %d dataset episodes, reward inputs %v", len(col.Episodes), calls, len(ds.Episodes()), ds.HasRewardInputs())
	}
	// Collected episodes are cut off by time, never terminated.
	if st := ds.Stats(); st.Done != 0 {
		t.Errorf("%d transitions done, want none (episodes end by time cut-off)", st.Done)
	}
	for _, want := range []string{"4 episodes", "seed 2", "B=0.25", "F_EARLY=1", "profile datacenter", sim.DefaultConfig().Digest()} {
		if !strings.Contains(ds.Corpus, want) {
			t.Errorf("corpus %q lacks %q", ds.Corpus, want)
		}
	}
	if ds.Profile != "datacenter" || ds.ProfileDigest != sim.DefaultConfig().Digest() {
		t.Errorf("dataset profile %q %q, want datacenter and its digest", ds.Profile, ds.ProfileDigest)
	}
	if ds.Interval != sim.DefaultConfig().Interval {
		t.Errorf("dataset interval %v, want the profile's %v", ds.Interval, sim.DefaultConfig().Interval)
	}
	if ds.Encoder != telemetry.DefaultEncoderConfig(sim.DefaultConfig().Topology()) {
		t.Errorf("encoder %+v, want the default for the simulated fabric", ds.Encoder)
	}
	// The traces written to OutDir convert to the same dataset.
	paths, _ := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	if len(paths) != 4 {
		t.Fatalf("%d traces in OutDir, want 4", len(paths))
	}
	var trs []*trace.Episode
	for _, path := range paths {
		tr, err := trace.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, tr)
	}
	back, err := DatasetFromTraces(trs, ds.Encoder, DefaultRewardConfig(), TraceOptions{}, ds.Corpus)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(back.S, ds.S) || !cmp.Equal(back.R, ds.R) || !cmp.Equal(back.A, ds.A) {
		t.Error("the dataset rebuilt from the written traces differs from the collected one")
	}
}

// The probe reads a policy's decision margin in synthetic states; a policy
// that leaves once the crowd feature of k* exceeds 0.25 (n > 2 + 0.25·12 =
// 5 flows) flips the crowd sweep at 6 flows and never the overflow sweep.
func TestProbe(t *testing.T) {
	cfg := sim.DefaultConfig()
	alone, bases, err := AloneObservations(cfg, 1, 5*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	enc := telemetry.DefaultEncoderConfig(cfg.Topology())
	for k, b := range bases {
		if b.FlowCount != 2 || b.Switch != k || !(b.Throughput > 0.85*cfg.BucketRate*cfg.MSS/cfg.PacketSize) || !(b.Overflow > 0) {
			t.Errorf("switch %d: baseline %+v, want the flow alone at full rate with 2 flows", k, b)
		}
		for j, s := range alone[k].Switches {
			if j != k && (s.FlowCount != 0 || s.TxRate != 0) {
				t.Errorf("switch %d alone: switch %d carries %+v, want nothing", k, j, s)
			}
		}
	}
	crowd := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
		clear(scores)
		if in.State[enc.AggOffset(in.Current)+telemetry.FeatureFlowCount] > 0.25 {
			scores[(in.Current+1)%len(scores)] = 1
		}
		return nil
	})
	pc := DefaultProbeConfig(policy.DefaultGateConfig().Margin)
	pc.Alone, pc.Baselines = alone, bases
	res, err := Probe(crowd, enc, pc)
	if err != nil {
		t.Fatal(err)
	}
	if want := cfg.Switches * (len(pc.CrowdCounts) + len(pc.Overflows)); len(res.Points) != want {
		t.Errorf("%d points, want %d", len(res.Points), want)
	}
	for k := range cfg.Switches {
		if f, ok := res.Flip(SweepCrowd, k); !ok || f.X != 6 {
			t.Errorf("crowd sweep on %d flips at %v, want 6", k, f.X)
		}
		if f, ok := res.Flip(SweepOverflow, k); !ok || !math.IsNaN(f.X) {
			t.Errorf("overflow sweep on %d flips at %v, want never", k, f.X)
		}
	}
	for _, pt := range res.Points {
		if pt.Sweep == SweepCrowd && pt.X == 10 && (pt.Margin != 1 || pt.Best != (pt.Switch+1)%4) {
			t.Errorf("crowd 10 on %d: margin %v best %d, want 1 toward the next switch", pt.Switch, pt.Margin, pt.Best)
		}
	}
	pc.Baselines = pc.Baselines[:1]
	if _, err := Probe(crowd, enc, pc); err == nil {
		t.Error("fewer baselines than alone observations: no error")
	}
}

// J_TRAP: an elephant on another switch from the first seconds, a
// full-rate crowd on the flow's switch, capped hosts on the switches that
// are neither, and an early reroute to another switch.
func TestPlanJTrap(t *testing.T) {
	cfg := sim.TestbedConfig()
	toTrap := 0
	for i := range 40 {
		p, err := PlanEpisode(StrategyJTrap, i, uint64(100+i), cfg)
		if err != nil {
			t.Fatal(err)
		}
		sc := p.Scenario
		var elephant string
		crowd := 0
		for _, c := range sc.Congesters {
			switch {
			case c.StreamCap > 0:
				if c.Switch == sc.ProtectedSwitch {
					t.Errorf("plan %d: a capped host on the flow's switch: %+v", i, c)
				}
			case c.Switch == sc.ProtectedSwitch:
				crowd++
			default:
				if elephant != "" {
					t.Errorf("plan %d: two full-rate hosts off the flow's switch", i)
				}
				elephant = c.Switch
				if time.Duration(c.Arrive) > 5*time.Second {
					t.Errorf("plan %d: the elephant arrives at %v, want within the first 5 s", i, c.Arrive)
				}
			}
		}
		for _, c := range sc.Congesters {
			if c.StreamCap > 0 && c.Switch == elephant {
				t.Errorf("plan %d: a capped host on the elephant's switch %s", i, elephant)
			}
		}
		if elephant == "" || crowd < 1 || crowd > 3 {
			t.Errorf("plan %d: elephant on %q, %d crowd hosts; want an elephant and 1–3 crowd hosts", i, elephant, crowd)
		}
		start := time.Duration(sc.CongestionStart)
		if p.Script.Trigger != TriggerTime || p.Script.At < start+5*time.Second || p.Script.At > start+20*time.Second {
			t.Errorf("plan %d: script %+v, want a timed reroute 5–20 s after the crowd (%v)", i, p.Script, start)
		}
		if p.Script.To < 0 || switchName(p.Script.To) == sc.ProtectedSwitch {
			t.Errorf("plan %d: reroute to %d, want another switch than %s", i, p.Script.To, sc.ProtectedSwitch)
		}
		if switchName(p.Script.To) == elephant {
			toTrap++
		}
	}
	// The destination is drawn among the other switches: some plans walk
	// into the trap, most do not.
	if toTrap == 0 || toTrap > 25 {
		t.Errorf("%d of 40 plans reroute to the elephant's switch, want some but not most", toTrap)
	}
}

// Every strategy draws valid plans over many indices on small, default and
// large fabrics: PlanEpisode validates each scenario against its fabric, so
// a congester left past the end of the episode, or a switch the fabric
// lacks, is an error here.
func TestPlanEpisodeManyValid(t *testing.T) {
	for _, size := range [][2]int{{2, 3}, {4, 3}, {8, 7}} {
		cfg, err := sim.DefaultConfig().WithFabric(size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range Strategies() {
			n := 300
			if st == StrategyMFamily {
				n = 30 // each draw regenerates the held-out families to exclude them
			}
			for j := range n {
				if _, err := PlanEpisode(st, j, planSeed(11, st, j), cfg); err != nil {
					t.Errorf("%dx%d: %v", size[0], size[1], err)
					break // one error a strategy and size says it
				}
			}
		}
	}
}
