package sim_test

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

func TestWithFabricBuiltinSizeIsIdentity(t *testing.T) {
	for _, name := range sim.Profiles() {
		cfg, err := sim.ProfileConfig(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cfg.WithFabric(4, 3)
		if err != nil {
			t.Fatalf("%s: WithFabric(4, 3): %v", name, err)
		}
		if diff := cmp.Diff(cfg, got); diff != "" {
			t.Errorf("%s: WithFabric(4, 3) changed the profile (-want +got):\n%s", name, diff)
		}
	}
}

func TestWithFabricShapes(t *testing.T) {
	for _, tc := range []struct {
		switches, leaves int
		name             string
		hosts            int
		dst, sink        string
	}{
		{2, 3, "testbed-2x3", 8, "h8", "h7"},
		{6, 3, "testbed-6x3", 8, "h8", "h7"},
		{16, 3, "testbed-16x3", 8, "h8", "h7"},
		{8, 7, "testbed-8x7", 16, "h16", "h15"},
		{4, 1, "testbed-4x1", 4, "h4", "h3"},
	} {
		cfg, err := sim.TestbedConfig().WithFabric(tc.switches, tc.leaves)
		if err != nil {
			t.Fatalf("WithFabric(%d, %d): %v", tc.switches, tc.leaves, err)
		}
		topo := cfg.Topology()
		if cfg.Name != tc.name || len(topo.Switches) != tc.switches || len(topo.Leaves) != tc.leaves || len(cfg.Hosts()) != tc.hosts {
			t.Errorf("WithFabric(%d, %d) = %s with %d switches, %d congestion leaves, %d hosts; want %s, %d, %d, %d",
				tc.switches, tc.leaves, cfg.Name, len(topo.Switches), len(topo.Leaves), len(cfg.Hosts()), tc.name, tc.switches, tc.leaves, tc.hosts)
		}
		if cfg.ProtectedSrc != "h1" || cfg.ProtectedDst != tc.dst || cfg.CongestionSink != tc.sink {
			t.Errorf("%s: protected %s->%s, sink %s; want h1->%s, sink %s", cfg.Name, cfg.ProtectedSrc, cfg.ProtectedDst, cfg.CongestionSink, tc.dst, tc.sink)
		}
		if cfg.HostsPerLeaf != 2 || cfg.BucketRate != sim.TestbedConfig().BucketRate {
			t.Errorf("%s: hosts per leaf %d, bucket rate %v: WithFabric changed more than the size", cfg.Name, cfg.HostsPerLeaf, cfg.BucketRate)
		}
		if cfg.Digest() == sim.TestbedConfig().Digest() {
			t.Errorf("%s has the testbed's digest", cfg.Name)
		}
		back, err := cfg.WithFabric(4, 3)
		if err != nil {
			t.Fatal(err)
		}
		back.Name = sim.ProfileTestbed
		if diff := cmp.Diff(sim.TestbedConfig(), back); diff != "" {
			t.Errorf("%s back to 4x3 is not the testbed (-want +got):\n%s", cfg.Name, diff)
		}
	}
}

func TestWithFabricErrors(t *testing.T) {
	off := sim.TestbedConfig()
	off.ProtectedDst = "h6" // leaf3, a congestion leaf that 2x1 drops
	for _, tc := range []struct {
		cfg              sim.Config
		switches, leaves int
		want             string
	}{
		{sim.TestbedConfig(), 1, 3, "1 switches, want 2..64"},
		{sim.TestbedConfig(), 65, 3, "65 switches, want 2..64"},
		{sim.TestbedConfig(), 4, 0, "0 congestion leaves, want 1..249"},
		{sim.TestbedConfig(), 4, 200, "want at most 250"},
		{off, 2, 1, "protected_dst h6 is on leaf3, want it on the last leaf (leaf4) or on one of the 1 congestion leaves"},
	} {
		_, err := tc.cfg.WithFabric(tc.switches, tc.leaves)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WithFabric(%d, %d) = %v, want an error containing %q", tc.switches, tc.leaves, err, tc.want)
		}
	}
}

// TestScaleRatesFields checks every number of the profile JSON: the rate
// fields are multiplied, the others stay, and a field in neither list
// fails the test until someone decides which it is.
func TestScaleRatesFields(t *testing.T) {
	scaled := []string{"host_link_rate", "host_queue_limit", "fabric_link_rate", "bucket_rate", "bucket_burst",
		"bucket_queue_limit", "flow_rate_limit", "flow_queue_limit", "uncounted_rate", "uncounted_burst",
		"uncounted_queue_limit", "receive_window"}
	kept := []string{"switches", "leaves", "hosts_per_leaf", "rtt_jitter", "initial_window", "packet_size", "mss",
		"reroute_window_factor", "streams_per_congester", "noise_level", "elephant_fraction"}
	base := sim.TestbedConfig()
	cfg, err := base.ScaleRates(2.5)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "testbed@x2.5" {
		t.Errorf("name %q, want testbed@x2.5", cfg.Name)
	}
	numbers := func(c sim.Config) map[string]float64 {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for k, v := range m {
			if f, ok := v.(float64); ok {
				out[k] = f
			}
		}
		return out
	}
	before, after := numbers(base), numbers(cfg)
	for field, v := range before {
		switch got := after[field]; {
		case slices.Contains(scaled, field):
			if math.Abs(got-2.5*v) > 1e-9*math.Abs(v) || v == 0 {
				t.Errorf("%s: %v -> %v, want 2.5 times a nonzero value", field, v, got)
			}
		case slices.Contains(kept, field):
			if got != v {
				t.Errorf("%s: %v -> %v, want it unchanged", field, v, got)
			}
		default:
			t.Errorf("field %s is neither a rate field nor a kept one: classify it in ScaleRates and this test", field)
		}
	}
	if cfg.BaseRTT != base.BaseRTT || cfg.Interval != base.Interval || cfg.ControllerWarmup != base.ControllerWarmup {
		t.Error("ScaleRates changed a time")
	}
	again, err := cfg.ScaleRates(2)
	if err != nil || again.Name != "testbed@x5" {
		t.Errorf("ScaleRates(2) of testbed@x2.5 = %q, %v; want testbed@x5", again.Name, err)
	}
	same, err := base.ScaleRates(1)
	if err != nil || same.Digest() != base.Digest() {
		t.Errorf("ScaleRates(1) = %s, %v; want the profile unchanged", same.Name, err)
	}
	for _, k := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := base.ScaleRates(k); err == nil || !strings.Contains(err.Error(), "want a positive finite number") {
			t.Errorf("ScaleRates(%v) = %v, want an error asking for a positive finite number", k, err)
		}
	}
	if _, err := base.ScaleRates(1e-3); err == nil || !strings.Contains(err.Error(), "smaller than one packet") {
		t.Errorf("ScaleRates(0.001) = %v, want a queue smaller than one packet", err)
	}
}

func TestScenarioScaleRates(t *testing.T) {
	sc, err := sim.BuiltinScenario("C1")
	if err != nil {
		t.Fatal(err)
	}
	sc.ProtectedKind = sim.FlowKind{Kind: sim.KindRate, Rate: sim.Rate(50e6 / 8)}
	got, err := sc.ScaleRates(2)
	if err != nil {
		t.Fatal(err)
	}
	capped := 0
	for i, c := range got.Congesters {
		if c.StreamCap != 2*sc.Congesters[i].StreamCap {
			t.Errorf("congesters[%d] cap %v, want twice %v", i, c.StreamCap, sc.Congesters[i].StreamCap)
		}
		if c.StreamCap > 0 {
			capped++
		}
	}
	if capped == 0 || got.ProtectedKind.Rate != sim.Rate(100e6/8) {
		t.Errorf("%d capped congesters, kind rate %v; want some capped and 100Mbit/s", capped, got.ProtectedKind.Rate)
	}
	if sc.ProtectedKind.Rate != sim.Rate(50e6/8) {
		t.Error("ScaleRates changed the scenario it copied")
	}
}

func TestLoadProfileSizedName(t *testing.T) {
	for _, name := range []string{"testbed-6x3", "testbed@x2", "datacenter-16x3@x0.5", "ovs-regime-8x7"} {
		cfg, err := sim.LoadProfile(name)
		if err != nil {
			t.Fatalf("LoadProfile(%s): %v", name, err)
		}
		if cfg.Name != name {
			t.Errorf("LoadProfile(%s) is named %s", name, cfg.Name)
		}
	}
	cfg, _ := sim.LoadProfile("testbed-6x3@x2")
	if cfg.Switches != 6 || cfg.BucketRate != 2*sim.TestbedConfig().BucketRate {
		t.Errorf("testbed-6x3@x2: %d switches, bucket %v; want 6 and twice the testbed's", cfg.Switches, cfg.BucketRate)
	}
	for _, name := range []string{"testbed-1x3", "nosuch-6x3", "testbed@x0"} {
		if _, err := sim.LoadProfile(name); err == nil {
			t.Errorf("LoadProfile(%s) succeeded, want an error", name)
		}
	}
}

// aloneThroughput runs the protected flow alone for 60 s on cfg and
// returns its mean throughput over the last 30 s.
func aloneThroughput(t *testing.T, cfg sim.Config) float64 {
	t.Helper()
	sc := &sim.Scenario{Name: "alone", ProtectedSwitch: "agg2", CongestionStart: sim.Duration(30 * time.Second), Window: sim.Duration(30 * time.Second)}
	ep := runSized(t, cfg, sc)
	var sum float64
	n := 0
	for _, s := range ep.Steps {
		if s.Time.Sub(ep.Steps[0].Time) >= 30*time.Second {
			sum += s.Throughput
			n++
		}
	}
	return sum / float64(n)
}

// runSized runs sc on cfg with a policy that stays.
func runSized(t *testing.T, cfg sim.Config, sc *sim.Scenario) *trace.Episode {
	t.Helper()
	ep, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{Scenario: sc, Seed: 3, Config: cfg, Policy: "stay",
		NewPolicy: func(proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			return oneDimEncoder{}, proflow.PolicyFunc(stay), proflow.GateFunc(argmaxGate), nil
		}})
	if err != nil {
		t.Fatalf("%s on %s: %v", sc.Name, cfg.Name, err)
	}
	return ep
}

func TestScaleRatesThroughput(t *testing.T) {
	base := sim.TestbedConfig()
	fast, err := base.ScaleRates(2)
	if err != nil {
		t.Fatal(err)
	}
	a, b := aloneThroughput(t, base), aloneThroughput(t, fast)
	if r := b / a; r < 1.9 || r > 2.1 {
		t.Errorf("alone: %.1f Mbit/s at x1, %.1f at x2 (ratio %.2f), want about twice", a*8/1e6, b*8/1e6, r)
	}
}

// TestSizedEpisodes runs S1, the paper's bulk crowd, on fabrics of other
// sizes and checks that congestion reaches the protected flow's switch on
// every one.
func TestSizedEpisodes(t *testing.T) {
	sc, err := sim.BuiltinScenario("S1")
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{6, 3}, {16, 3}} {
		cfg, err := sim.TestbedConfig().WithFabric(size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		ep := runSized(t, cfg, sc)
		last := ep.Steps[len(ep.Steps)-1]
		if len(last.Obs.Switches) != size[0] {
			t.Fatalf("%s: %d switch samples, want %d", cfg.Name, len(last.Obs.Switches), size[0])
		}
		k := slices.Index(cfg.Topology().Switches, sc.ProtectedSwitch)
		if n := last.Obs.Switches[k].FlowCount; n < 10 {
			t.Errorf("%s: flow count %v on %s at the end, want S1's crowd (10 or more)", cfg.Name, n, sc.ProtectedSwitch)
		}
	}
}
