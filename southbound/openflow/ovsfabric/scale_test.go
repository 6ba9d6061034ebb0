package ovsfabric_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

const payload = 1448.0 / 1514 // a sender paces payload; the simulator's rates are frames

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// The documented arithmetic of the default scaling: r = 0.05, the
// simulator's precursor 1.85 GB / 125 MB/s = 14.8 s halved, five full-rate
// congesters draining 1.5 × 1.25 MB/s, a 50 ms queue.
func TestDefaultScaleArithmetic(t *testing.T) {
	s := ovsfabric.DefaultScale()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"rate ratio", s.RateRatio(), 0.05},
		{"precursor (s)", s.Precursor().Seconds(), 1.85e9 / 125e6 / 2},
		{"burst (B)", s.BucketBurstBytes(), math.Round(7.4 * 1.875e6)},
		{"queue limit (B)", s.BucketLimitBytes(), 62500},
		{"protected flow's pacing (B/s)", s.ProtectedRate(), 1.25e6 * payload},
		{"full-rate stream of 8 (B/s)", s.StreamRate(8, 0), 0.3 * 1.25e6 / 8 * payload},
		{"1 Mbit/s stream cap (B/s)", s.StreamRate(6, 1e6/8), 0.05 * 1e6 / 8 * payload},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := s.Time(20 * time.Second); got != 10*time.Second {
		t.Errorf("Time(20s) = %v, want 10s", got)
	}
}

// The burst is what makes the precursor: five full-rate congesters on the
// protected flow's switch, beside the protected flow at the bucket rate,
// drain it in the simulator's precursor divided by the time factor, whatever
// the factor, rate and share.
func TestBurstKeepsThePrecursor(t *testing.T) {
	for _, c := range []struct {
		factor, share float64
		rate          float64 // B/s
	}{{1, 0.3, 1.25e6}, {2, 0.3, 1.25e6}, {4, 0.3, 2.5e6}, {2, 0.5, 0.625e6}} {
		s := ovsfabric.DefaultScale()
		s.TimeFactor, s.FullRateShare, s.BucketRateBytesPerSec = c.factor, c.share, c.rate
		congesters := 5 * c.share * c.rate
		protected := s.ProtectedRate() / payload // frames
		drain := congesters + protected - c.rate
		got := s.BucketBurstBytes() / drain
		want := 1.85e9 / 125e6 / c.factor
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("factor %v, share %v, rate %v: the reserve lasts %.4f s under five full-rate congesters, want %.4f s", c.factor, c.share, c.rate, got, want)
		}
		if got < 3 && c.factor <= 2 {
			t.Errorf("factor %v: precursor %.1f s, want several seconds", c.factor, got)
		}
	}
}

func TestScaleValidate(t *testing.T) {
	s := ovsfabric.DefaultScale()
	s.Sim.FlowRateLimit = 0.5 * s.Sim.BucketRate // the protected flow leaves half the tokens
	s.FullRateShare = 0.05                       // and five hosts offer a quarter bucket
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "never drain the reserve") {
		t.Errorf("Validate = %v, want an error saying the congesters never drain the reserve", err)
	}
	s = ovsfabric.DefaultScale()
	s.TimeFactor, s.BucketRateBytesPerSec = -1, math.Inf(1)
	err = s.Validate()
	if err == nil || !strings.Contains(err.Error(), "time factor -1") || !strings.Contains(err.Error(), "bucket rate +Inf") {
		t.Errorf("Validate = %v, want the time factor and the bucket rate named", err)
	}
	if _, err := s.Plan(mustScenario(t, "S1")); err == nil {
		t.Error("Plan with an invalid scale: nil error")
	}
}

func mustScenario(t *testing.T, name string) *sim.Scenario {
	t.Helper()
	sc, err := sim.BuiltinScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestPlanS1(t *testing.T) {
	p, err := ovsfabric.DefaultScale().Plan(mustScenario(t, "S1"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Scenario != "S1" || p.ProtectedSwitch != 0 || p.CongestionStart != 10*time.Second || p.End != 70*time.Second {
		t.Errorf("plan %s: protected switch %d, congestion %v, end %v; want S1, 0, 10s, 70s", p.Scenario, p.ProtectedSwitch, p.CongestionStart, p.End)
	}
	var offered float64
	for i, c := range p.Congesters {
		want := ovsfabric.PlannedCongester{Host: []string{"h2", "h3", "h4", "h5", "h6"}[i], Dst: "h7", Streams: 8, RateBytesPerSec: c.RateBytesPerSec}
		if diff := cmp.Diff(want, c); diff != "" {
			t.Errorf("congester %d (-want +got):\n%s", i, diff)
		}
		offered += float64(c.Streams) * c.RateBytesPerSec
	}
	if !near(offered, 1.5*1.25e6*payload) {
		t.Errorf("five full-rate congesters offer %v B/s of payload, want 1.5 buckets (%v)", offered, 1.5*1.25e6*payload)
	}
	for i, e := range p.Events {
		if e != (ovsfabric.Event{At: 10 * time.Second, Kind: ovsfabric.Arrive, Congester: i, Switch: 0}) {
			t.Errorf("event %d = %+v, want congester %d arriving on agg1 at 10s", i, e, i)
		}
	}
	if len(p.Events) != 5 {
		t.Errorf("%d events, want 5", len(p.Events))
	}
}

// Moves and departures are scaled and ordered; a departure comes before
// another congester's arrival at the same time.
func TestPlanEventsInOrder(t *testing.T) {
	sc := &sim.Scenario{Name: "mix", ProtectedSwitch: "agg2", CongestionStart: sim.Duration(8 * time.Second), Window: sim.Duration(40 * time.Second),
		Congesters: []sim.Congester{
			{Host: "h2", Arrive: sim.Duration(8 * time.Second), Switch: "agg2", Depart: sim.Duration(24 * time.Second)},
			{Host: "h3", Arrive: sim.Duration(24 * time.Second), Switch: "agg3", Streams: 2, StreamCap: sim.Rate(4e6 / 8),
				Moves: []sim.Move{{At: sim.Duration(32 * time.Second), Switch: "agg1"}}},
		}}
	s := ovsfabric.DefaultScale()
	s.TimeFactor = 4
	p, err := s.Plan(sc)
	if err != nil {
		t.Fatal(err)
	}
	want := []ovsfabric.Event{
		{At: 2 * time.Second, Kind: ovsfabric.Arrive, Congester: 0, Switch: 1},
		{At: 6 * time.Second, Kind: ovsfabric.Depart, Congester: 0, Switch: -1},
		{At: 6 * time.Second, Kind: ovsfabric.Arrive, Congester: 1, Switch: 2},
		{At: 8 * time.Second, Kind: ovsfabric.Move, Congester: 1, Switch: 0},
	}
	if diff := cmp.Diff(want, p.Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if p.ProtectedSwitch != 1 || p.CongestionStart != 2*time.Second || p.End != 12*time.Second {
		t.Errorf("protected switch %d, congestion %v, end %v; want 1, 2s, 12s", p.ProtectedSwitch, p.CongestionStart, p.End)
	}
	// A 4 Mbit/s cap becomes 0.2 Mbit/s (r = 0.05), below the full-rate
	// share of a stream (0.3 × 10 Mbit/s / 2).
	if got, want := p.Congesters[1].RateBytesPerSec, 0.05*4e6/8*payload; !near(got, want) {
		t.Errorf("capped stream paced at %v B/s, want %v", got, want)
	}

	q := p.Retime(5*time.Second, 5*time.Second)
	wantQ := []ovsfabric.Event{
		{At: 5 * time.Second, Kind: ovsfabric.Arrive, Congester: 0, Switch: 1},
		{At: 9 * time.Second, Kind: ovsfabric.Depart, Congester: 0, Switch: -1},
		{At: 9 * time.Second, Kind: ovsfabric.Arrive, Congester: 1, Switch: 2},
	}
	if diff := cmp.Diff(wantQ, q.Events); diff != "" || q.CongestionStart != 5*time.Second || q.End != 10*time.Second {
		t.Errorf("Retime(5s, 5s): congestion %v, end %v, events (-want +got):\n%s", q.CongestionStart, q.End, diff)
	}
	if len(p.Events) != 4 {
		t.Errorf("Retime changed the original plan: %d events, want 4", len(p.Events))
	}
}

func TestLoadScenario(t *testing.T) {
	cfg := sim.DefaultConfig()
	sc, err := ovsfabric.LoadScenario("s5", "", cfg)
	if err != nil || sc.Name != "S5" {
		t.Errorf("LoadScenario(s5) = %v, %v; want the built-in S5", sc, err)
	}
	sc, err = ovsfabric.LoadScenario("quiet", "", cfg)
	if err != nil || len(sc.Congesters) != 0 || sc.ProtectedSwitch != "agg1" || sc.Validate(cfg) != nil {
		t.Errorf("LoadScenario(quiet) = %+v, %v; want a valid scenario without congesters on agg1", sc, err)
	}
	if _, err := ovsfabric.LoadScenario("S99", "", cfg); err == nil || !strings.Contains(err.Error(), "S99") {
		t.Errorf("LoadScenario(S99) = %v, want an error naming it", err)
	}
	if _, err := ovsfabric.LoadScenario("S1", "/nonexistent/x.json", cfg); err == nil || !strings.Contains(err.Error(), "-scenario-file") {
		t.Errorf("LoadScenario with a missing file = %v, want a -scenario-file error", err)
	}
}

func TestPolicyNamed(t *testing.T) {
	topo := ovsfabric.DefaultScale().Topology()
	for _, name := range []string{"static", "reactive", "crowd", "throughput-drop", "latency-threshold"} {
		p, err := ovsfabric.PolicyNamed(name, "", "", topo)
		if err != nil || p.Name != name || p.New == nil {
			t.Errorf("PolicyNamed(%s) = %+v, %v", name, p, err)
		}
	}
	if _, err := ovsfabric.PolicyNamed("oracle", "", "", topo); err == nil {
		t.Error("PolicyNamed(oracle): nil error, want a refusal (it reads the simulator's scenario)")
	}
	if _, err := ovsfabric.PolicyNamed("agent", "/nonexistent.safetensors", "", topo); err == nil || !strings.Contains(err.Error(), "-model") {
		t.Errorf("PolicyNamed(agent) without a model = %v, want a -model error", err)
	}
	// The committed default model, behind the gate it records.
	agent, err := ovsfabric.PolicyNamed("agent", "../../../"+ovsfabric.DefaultModel, "", topo)
	if err != nil {
		t.Fatal(err)
	}
	_, pol, gate, err := agent.New(topo)
	if err != nil || pol == nil || gate == nil || agent.Model == nil {
		t.Errorf("agent: policy %v, gate %v, model metadata %v, %v; want all three", pol, gate, agent.Model, err)
	}
}

// TestScaleScenario: the scaled S1 has the plan's timeline and every
// stream capped at the rate its sender is paced at on the fabric (in
// frames), so a full-rate host offers FullRateShare of the bucket; it
// validates against the ovs profile, and S1 itself is not changed.
func TestScaleScenario(t *testing.T) {
	s := ovsfabric.DefaultScale()
	s1 := mustScenario(t, "S1")
	before, _ := json.Marshal(s1)
	got, err := s.Scenario(s1)
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(s1); string(after) != string(before) {
		t.Error("Scenario changed its argument")
	}
	plan, err := s.Plan(s1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Start() != plan.CongestionStart || got.Length() != plan.End {
		t.Errorf("scaled S1 opens at %v and ends at %v, want the plan's %v and %v", got.Start(), got.Length(), plan.CongestionStart, plan.End)
	}
	if err := got.Validate(sim.OVSConfig()); err != nil {
		t.Errorf("scaled S1 does not validate against the ovs profile: %v", err)
	}
	for _, c := range got.Congesters {
		host := float64(c.Streams) * float64(c.StreamCap)
		if want := s.FullRateShare * s.BucketRateBytesPerSec; math.Abs(host-want) > float64(c.Streams) {
			t.Errorf("%s: %d streams × %v = %.0f B/s of frames, want FullRateShare × bucket = %.0f", c.Host, c.Streams, c.StreamCap, host, want)
		}
		if time.Duration(c.Arrive) != plan.CongestionStart {
			t.Errorf("%s arrives at %v, want %v", c.Host, time.Duration(c.Arrive), plan.CongestionStart)
		}
	}
	if _, err := s.Scenario(nil); err == nil {
		t.Error("Scenario(nil): no error")
	}
}

// The kinds' scaling (Scale.Kind): rates × r, times ÷ F, an rr flow's
// requests × r in size at the same rate; the plan paces a rate flow at its
// scaled rate, and only the primary protected flow may have a kind.
func TestPlanKinds(t *testing.T) {
	s := ovsfabric.DefaultScale()
	r := s.RateRatio()
	plan := func(name string) *ovsfabric.Plan {
		t.Helper()
		p, err := s.Plan(mustScenario(t, name))
		if err != nil {
			t.Fatalf("Plan(%s): %v", name, err)
		}
		return p
	}
	r1 := plan("R1").Kind
	if want := (sim.FlowKind{Kind: sim.KindRR, RequestBytes: 1638, RequestRate: 100, Arrivals: sim.ArrivalsPoisson}); r1 != want {
		t.Errorf("R1 kind %+v, want %+v (32768 × %v bytes)", r1, want, r)
	}
	v1 := plan("V1")
	if want := sim.Rate(96e6 / 8 * r); !near(float64(v1.Kind.Rate), float64(want)) || !near(v1.ProtectedRate, float64(want)) {
		t.Errorf("V1 rate %v, paced at %v B/s; want %v for both", v1.Kind.Rate, v1.ProtectedRate, want)
	}
	o1 := plan("O1")
	if k := o1.Kind; time.Duration(k.On) != 1500*time.Millisecond || time.Duration(k.Off) != time.Second || time.Duration(k.From) != 10*time.Second {
		t.Errorf("O1 cycle on %v off %v from %v, want 1.5s, 1s, 10s", k.On, k.Off, k.From)
	}
	// Retime moves From with the congestion start.
	if q := o1.Retime(6*time.Second, 0); time.Duration(q.Kind.From) != 6*time.Second || time.Duration(o1.Kind.From) != 10*time.Second {
		t.Errorf("Retime(6s): From %v (original %v), want 6s (10s)", q.Kind.From, o1.Kind.From)
	}
	t1 := plan("T1")
	if t1.ProtectedRate != s.ProtectedRate() || time.Duration(t1.Kind.From) != 20*time.Second {
		t.Errorf("T1 (full-rate bursts from 40 s): paced at %v, from %v; want the bulk pacing %v, 20s", t1.ProtectedRate, t1.Kind.From, s.ProtectedRate())
	}
	if p := plan("S1"); !p.Kind.IsBulk() || p.ProtectedRate != s.ProtectedRate() {
		t.Errorf("S1: kind %+v, pacing %v; want bulk at %v", p.Kind, p.ProtectedRate, s.ProtectedRate())
	}
	// The simulated twin carries the same scaled kind, and validates.
	for _, name := range []string{"R1", "O1", "V1", "T1"} {
		tw, err := s.Scenario(mustScenario(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if tw.PrimaryKind() != plan(name).Kind {
			t.Errorf("%s: twin's kind %+v, want the plan's %+v", name, tw.PrimaryKind(), plan(name).Kind)
		}
		if err := tw.Validate(sim.OVSConfig()); err != nil {
			t.Errorf("%s: twin does not validate on the ovs profile: %v", name, err)
		}
	}
	// A second protected flow of another kind is refused, not dropped.
	sc := mustScenario(t, "S1")
	sc.Protected = []sim.Protected{{Src: "h1", Dst: "h8", Switch: "agg1"}, {Src: "h7", Dst: "h8", Switch: "agg2", Kind: sim.FlowKind{Kind: sim.KindRate, Rate: 1e6}}}
	if _, err := s.Plan(sc); err == nil || !strings.Contains(err.Error(), "protected[1]") {
		t.Errorf("Plan with protected[1] of kind rate: %v, want a refusal naming it", err)
	}
}
