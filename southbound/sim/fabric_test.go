package sim_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newFabric(t testing.TB, name string, seed uint64) *sim.Fabric {
	t.Helper()
	return newFabricOn(t, sim.DefaultConfig(), name, seed)
}

// newFabricOn builds the fabric of cfg running the built-in scenario name.
func newFabricOn(t testing.TB, cfg sim.Config, name string, seed uint64) *sim.Fabric {
	t.Helper()
	sc, err := sim.BuiltinScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(cfg, sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestEnforcerConformance(t *testing.T) {
	southboundtest.TestEnforcer(t, func(t *testing.T) southboundtest.EnforcerHarness {
		f := newFabric(t, "S1", 1)
		return southboundtest.EnforcerHarness{
			Enforcer: f,
			Topology: f.Topology(),
			Flow:     f.Flow(),
			// The data plane's own record of the path, read without the
			// enforcer.
			Where: func(ctx context.Context) (int, error) { return f.Current(), nil },
		}
	})
}

func TestTelemetryConformance(t *testing.T) {
	southboundtest.TestTelemetry(t, func(t *testing.T) southboundtest.TelemetryHarness {
		f := newFabric(t, "S1", 1)
		interval := f.Config().Interval
		if err := f.Advance(interval); err != nil {
			t.Fatal(err)
		}
		return southboundtest.TelemetryHarness{
			Telemetry: f,
			Topology:  f.Topology(),
			Advance: func() {
				if err := f.Advance(interval); err != nil {
					t.Fatal(err)
				}
			},
		}
	})
}

func TestDefaultFabric(t *testing.T) {
	f := newFabric(t, "S1", 1)
	want := proflow.Topology{
		Switches:   []string{"agg1", "agg2", "agg3", "agg4"},
		Leaves:     []string{"leaf1", "leaf2", "leaf3"},
		BucketRate: 25e6,
	}
	if diff := cmp.Diff(want, f.Topology()); diff != "" {
		t.Errorf("topology (-want +got):\n%s", diff)
	}
	flow := proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"), SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP}
	if f.Flow() != flow {
		t.Errorf("flow %v, want %v", f.Flow(), flow)
	}
	if got := sim.DefaultConfig().Hosts(); len(got) != 8 || got[0] != "h1" || got[7] != "h8" {
		t.Errorf("hosts %v, want h1..h8", got)
	}
	if f.InitialSwitch() != 0 || f.Current() != 0 {
		t.Errorf("initial switch %d, current %d, want 0", f.InitialSwitch(), f.Current())
	}
	epoch := sim.DefaultConfig().Epoch
	if !f.Start().Equal(epoch) || !f.CongestionStart().Equal(epoch.Add(20*time.Second)) || !f.End().Equal(epoch.Add(140*time.Second)) {
		t.Errorf("start %v, congestion %v, end %v", f.Start(), f.CongestionStart(), f.End())
	}
}

func TestConfigValidate(t *testing.T) {
	if err := sim.DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := sim.DefaultConfig()
	bad.Switches = 1
	bad.BucketRate = -1
	bad.Interval = 7 * time.Millisecond
	bad.ProtectedDst = "h2"
	bad.CongestionLeaves = []int{0, 0, 9}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate accepted a broken config")
	}
	for _, want := range []string{"switches 1", "bucket_rate -1", "interval 7ms", "stays on one leaf", "congestion_leaves[1] = 0 repeats", "congestion_leaves[2] = 9"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := sim.New(bad, &sim.Scenario{Name: "x", ProtectedSwitch: "agg1"}, 1); err == nil {
		t.Error("New accepted a broken config")
	}
	if _, err := sim.New(sim.DefaultConfig(), nil, 1); err == nil {
		t.Error("New accepted a nil scenario")
	}
	if _, err := sim.New(sim.DefaultConfig(), &sim.Scenario{Name: "x", ProtectedSwitch: "agg9"}, 1); err == nil {
		t.Error("New accepted an invalid scenario")
	}
}

func TestCollectBeforeFirstSample(t *testing.T) {
	f := newFabric(t, "S1", 1)
	var obs proflow.Observation
	if err := f.Collect(context.Background(), &obs); !errors.Is(err, proflow.ErrStale) {
		t.Errorf("Collect before the first sample = %v, want proflow.ErrStale", err)
	}
	if f.Truth(&obs) {
		t.Error("Truth before the first sample reported a sample")
	}
	// Half an interval is not enough either.
	if err := f.Advance(f.Config().Interval / 2); err != nil {
		t.Fatal(err)
	}
	if err := f.Collect(context.Background(), &obs); !errors.Is(err, proflow.ErrStale) {
		t.Errorf("Collect after half an interval = %v, want proflow.ErrStale", err)
	}
	if err := f.Advance(f.Config().Interval / 2); err != nil {
		t.Fatal(err)
	}
	if err := f.Collect(context.Background(), &obs); err != nil {
		t.Fatal(err)
	}
	if want := f.Start().Add(f.Config().Interval); !obs.Time.Equal(want) {
		t.Errorf("first sample at %v, want %v", obs.Time, want)
	}
	if err := f.Advance(-time.Second); err == nil {
		t.Error("Advance(-1s) succeeded")
	}
}

func TestPlaceAndLocateErrors(t *testing.T) {
	f := newFabric(t, "S1", 1)
	ctx := context.Background()
	other := f.Flow()
	other.SrcPort++
	if err := f.Place(ctx, other, 1); err == nil {
		t.Error("Place of another flow succeeded")
	}
	if _, err := f.Locate(ctx, other); !errors.Is(err, proflow.ErrNotPlaced) {
		t.Errorf("Locate of another flow = %v, want ErrNotPlaced", err)
	}
	err := f.Place(ctx, f.Flow(), 4)
	var unknown *proflow.UnknownSwitchError
	if !errors.As(err, &unknown) || unknown.Index != 4 {
		t.Errorf("Place on switch 4 = %v, want an UnknownSwitchError for index 4", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.Place(cancelled, f.Flow(), 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Place with a cancelled context = %v", err)
	}
	if f.Current() != 0 {
		t.Errorf("failed placements moved the flow to %d", f.Current())
	}
}

// Two fabrics with the same seed produce the same episode, sample for
// sample; another seed a different one.
func TestDeterminism(t *testing.T) {
	run := func(seed uint64) []proflow.Observation {
		f := newFabric(t, "S6", seed)
		var out []proflow.Observation
		for i := 0; f.Elapsed() < 40*time.Second; i++ {
			// Uneven advances: sampling does not depend on how time is cut.
			if err := f.Advance(time.Duration(1+i%3) * 250 * time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if i == 30 {
				if err := f.Place(context.Background(), f.Flow(), 2); err != nil {
					t.Fatal(err)
				}
			}
			var o proflow.Observation
			if err := f.Collect(context.Background(), &o); err == nil {
				out = append(out, o)
			}
		}
		return out
	}
	a, b := run(7), run(7)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, different episodes (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, run(8)) {
		t.Error("seeds 7 and 8 gave identical episodes")
	}
}

func TestFlowCounts(t *testing.T) {
	// App. G: two entries per communicating host pair.
	for _, c := range []struct {
		scenario string
		want     []float64 // per switch, 5 s after congestion start
	}{
		{"S1", []float64{12, 0, 0, 0}},
		{"S11", []float64{4, 0, 0, 0}},
		{"S7", []float64{6, 6, 0, 0}},
		{"C1", []float64{12, 0, 0, 0}},
		{"S12", []float64{6, 2, 2, 2}},
	} {
		f := newFabric(t, c.scenario, 1)
		if err := f.Advance(25 * time.Second); err != nil {
			t.Fatal(err)
		}
		var o proflow.Observation
		f.Truth(&o)
		got := make([]float64, len(o.Switches))
		for k, s := range o.Switches {
			got[k] = s.FlowCount
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: flow counts (-want +got):\n%s", c.scenario, diff)
		}
	}
}

func TestSignals(t *testing.T) {
	f := newFabric(t, "S5", 1)
	if err := f.Advance(25 * time.Second); err != nil {
		t.Fatal(err)
	}
	var o proflow.Observation
	f.Truth(&o)
	c := f.Config().BucketRate
	// Leaves 1–3 send congestion traffic; leaf1 also carries f_p upward.
	for l, s := range o.Leaves {
		if s.IngressRate <= 0 || s.TransmitRate < s.IngressRate {
			t.Errorf("leaf %d: ingress %v, transmit %v", l, s.IngressRate, s.TransmitRate)
		}
	}
	if d := o.Leaves[0].TransmitRate - o.Leaves[0].IngressRate; d < 0.8*c {
		t.Errorf("leaf1 transmits %v B/s more than its congestion ingress, want about f_p's rate", d)
	}
	sum := 0.0
	for _, s := range o.Leaves {
		sum += s.IngressRate
	}
	if o.Flow.CongestionRate != sum {
		t.Errorf("congestion rate %v, want the sum of leaf ingress %v", o.Flow.CongestionRate, sum)
	}
	// agg1 still drains its reserve: it sends more than the bucket rate,
	// and f_p and the congesters there are elephants.
	if s := o.Switches[0]; s.TxRate < 2*c || s.ElephantRate < 0.9*s.TxRate {
		t.Errorf("agg1: tx %v, elephants %v", s.TxRate, s.ElephantRate)
	}
	if o.Switches[3].TxRate != 0 || o.Switches[3].ElephantRate != 0 {
		t.Errorf("idle agg4 reports %+v", o.Switches[3])
	}
}

// A Controller's Run loop works on the fabric's clock while another
// goroutine advances virtual time.
func TestControllerRunOnVirtualClock(t *testing.T) {
	f := newFabric(t, "S1", 3)
	cfg := proflow.DefaultConfig()
	cfg.Topology, cfg.Flow, cfg.Clock = f.Topology(), f.Flow(), f.Clock()
	decisions := make(chan proflow.Decision, 100)
	cfg.Observer = proflow.SendTo(decisions)
	ctrl, err := proflow.NewController(cfg, f, oneDimEncoder{}, proflow.PolicyFunc(stay), proflow.GateFunc(argmaxGate), f)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- ctrl.Run(ctx) }()
	got := 0
	deadline := time.After(10 * time.Second)
	for got < 5 {
		if err := f.Advance(cfg.Interval); err != nil {
			t.Fatal(err)
		}
		select {
		case d := <-decisions:
			got++
			if d.Reason.Held() {
				t.Errorf("decision %d held: %v", d.Seq, d.Err)
			}
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatal("no decisions from Run")
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
}

func TestTicker(t *testing.T) {
	f := newFabric(t, "S1", 1)
	clock := f.Clock()
	tk := clock.NewTicker(time.Second)
	select {
	case <-tk.C():
		t.Fatal("tick before any time passed")
	default:
	}
	if err := f.Advance(3500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// Missed ticks are dropped: one tick, for the latest due time.
	if got := <-tk.C(); !got.Equal(f.Start().Add(3 * time.Second)) {
		t.Errorf("tick at %v, want start+3s", got)
	}
	select {
	case <-tk.C():
		t.Error("more than one tick buffered")
	default:
	}
	if !clock.Now().Equal(f.Start().Add(3500 * time.Millisecond)) {
		t.Errorf("Now %v", clock.Now())
	}
	tk.Stop()
	if err := f.Advance(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tk.C():
		t.Error("tick after Stop")
	default:
	}
	// A non-positive period ticks every step instead of panicking.
	tk2 := clock.NewTicker(0)
	defer tk2.Stop()
	if err := f.Advance(f.Config().Step); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tk2.C():
	default:
		t.Error("no tick after one step on a ticker with a non-positive period")
	}
}

// oneDimEncoder is a stand-in StateEncoder for tests that do not read the
// state.
type oneDimEncoder struct{}

func (oneDimEncoder) Dim() int { return 1 }
func (oneDimEncoder) Encode(dst proflow.State, obs *proflow.Observation, current int) error {
	dst[0] = float32(obs.Switches[current].OverflowRate)
	return nil
}

func stay(scores []float64, in *proflow.Input) error {
	scores[in.Current] = 1
	return nil
}

// argmaxGate admits the best-scoring switch at once if it beats the current one.
func argmaxGate(d *proflow.Decision) {
	best := 0
	for k, s := range d.Scores {
		if s > d.Scores[best] {
			best = k
		}
	}
	d.Best, d.Margin, d.Target, d.Reason = best, d.Scores[best]-d.Scores[d.Current], -1, proflow.ReasonStay
	if best != d.Current && d.Margin > 0 {
		d.Target = best
	}
}
