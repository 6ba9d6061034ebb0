package sim_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// A Protected list of one flow, f_p itself, is the one-flow fabric: the
// same samples, measured and true, step for step.
func TestProtectedListOfOneIsTheOneFlowFabric(t *testing.T) {
	for _, cfg := range []sim.Config{sim.TestbedConfig(), sim.DatacenterConfig()} {
		legacy, err := sim.BuiltinScenario("S1")
		if err != nil {
			t.Fatal(err)
		}
		listed := legacy.Clone()
		listed.ProtectedSwitch = ""
		listed.Protected = []sim.Protected{{Src: "h1", Dst: "h8", Switch: "agg1"}}
		a, err := sim.New(cfg, legacy, 3)
		if err != nil {
			t.Fatal(err)
		}
		b, err := sim.New(cfg, listed, 3)
		if err != nil {
			t.Fatal(err)
		}
		if a.Flow() != b.Flow() {
			t.Fatalf("%s: flow %v, want %v", cfg.Name, b.Flow(), a.Flow())
		}
		var oa, ob proflow.Observation
		ob.FlowIDs = []proflow.FlowID{b.Flow()}
		for i := range 80 {
			if i == 40 {
				for _, f := range []*sim.Fabric{a, b} {
					if err := f.Place(context.Background(), f.Flow(), 2); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, f := range []*sim.Fabric{a, b} {
				if err := f.Advance(cfg.Interval); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Collect(context.Background(), &oa); err != nil {
				t.Fatal(err)
			}
			if err := b.Collect(context.Background(), &ob); err != nil {
				t.Fatal(err)
			}
			if ob.Flows[0] != oa.Flow || ob.Flow != oa.Flow {
				t.Fatalf("%s, sample %d: flows %v and flow %v, want both %v", cfg.Name, i, ob.Flows, ob.Flow, oa.Flow)
			}
			if diff := cmp.Diff(oa.Switches, ob.Switches); diff != "" {
				t.Fatalf("%s, sample %d: switches differ (-one-flow +listed):\n%s", cfg.Name, i, diff)
			}
		}
	}
}

func newMulti(t testing.TB, name string, seed uint64) *sim.Fabric {
	t.Helper()
	return newFabricOn(t, sim.TestbedConfig(), name, seed)
}

func TestProtectedFlows(t *testing.T) {
	f := newMulti(t, "M3", 1)
	addr := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	flow := func(port uint16) proflow.FlowID {
		return proflow.FlowID{Src: addr("10.0.0.1"), Dst: addr("10.0.0.8"), SrcPort: port, DstPort: 5201, Proto: proflow.ProtoTCP}
	}
	want := []proflow.ProtectedFlow{{ID: flow(5001), Weight: 3}, {ID: flow(5002), Weight: 2}, {ID: flow(5003), Weight: 1}}
	if got := f.Protected(); !slices.Equal(got, want) {
		t.Errorf("Protected() = %v, want %v", got, want)
	}
	if f.Flow() != want[0].ID || f.InitialSwitch() != 0 {
		t.Errorf("Flow() %v on %d, want the primary %v on 0", f.Flow(), f.InitialSwitch(), want[0].ID)
	}
	wantAt := []proflow.Placement{{Flow: flow(5001), Switch: 0}, {Flow: flow(5002), Switch: 1}, {Flow: flow(5003), Switch: 2}}
	if got := f.InitialPlacements(); !slices.Equal(got, wantAt) {
		t.Errorf("InitialPlacements() = %v, want %v", got, wantAt)
	}
	for _, p := range want {
		if err := f.ValidateFlow(p.ID); err != nil {
			t.Errorf("ValidateFlow(%v) = %v, want nil", p.ID, err)
		}
	}
	if err := f.ValidateFlow(flow(5009)); err == nil || errors.Is(err, proflow.ErrNotInFabric) || !strings.Contains(err.Error(), "not one of the 3 protected flows") {
		t.Errorf("ValidateFlow of an unprotected flow = %v, want an error saying it is not protected", err)
	}
	outside := flow(5001)
	outside.Dst = addr("10.0.0.2") // same leaf as h1
	if err := f.ValidateFlow(outside); !errors.Is(err, proflow.ErrNotInFabric) {
		t.Errorf("ValidateFlow of a flow within a leaf = %v, want ErrNotInFabric", err)
	}
	outside.Dst = addr("192.0.2.1")
	if err := f.ValidateFlow(outside); !errors.Is(err, proflow.ErrNotInFabric) {
		t.Errorf("ValidateFlow of a flow outside the fabric = %v, want ErrNotInFabric", err)
	}
}

// Collect and Truth fill obs.Flows for obs.FlowIDs in the caller's order,
// each flow's own goodput with the fabric-wide F, without allocating;
// obs.Flow stays the primary flow's; an unknown flow is an error.
func TestCollectPerFlow(t *testing.T) {
	f := newMulti(t, "M2", 1)
	ctx := context.Background()
	if err := f.Advance(sec(35)); err != nil {
		t.Fatal(err)
	}
	ps := f.Protected()
	var obs, truth proflow.Observation
	for i := len(ps) - 1; i >= 0; i-- {
		obs.FlowIDs = append(obs.FlowIDs, ps[i].ID)
	}
	truth.FlowIDs = obs.FlowIDs
	if err := f.Collect(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	if !f.Truth(&truth) {
		t.Fatal("Truth reported no sample")
	}
	if err := obs.Validate(f.Topology()); err != nil {
		t.Fatal(err)
	}
	ft := f.FlowTruths(nil)
	n := len(ps)
	for i := range n {
		j := n - 1 - i // obs.FlowIDs[i] is flow j
		if got, want := truth.Flows[i].Throughput, ft[j].Throughput; got != want {
			t.Errorf("truth flows[%d] (flow %d) throughput %v, want %v", i, j, got, want)
		}
		if truth.Flows[i].CongestionRate != truth.Flow.CongestionRate || obs.Flows[i].CongestionRate != obs.Flow.CongestionRate {
			t.Errorf("flows[%d] congestion rate differs from the fabric-wide F", i)
		}
		if got, want := obs.Flows[i].Throughput, truth.Flows[i].Throughput; got < 0.8*want || got > 1.2*want {
			t.Errorf("measured flows[%d] throughput %v, want near the truth %v", i, got, want)
		}
	}
	if truth.Flow != truth.Flows[n-1] || obs.Flow != obs.Flows[n-1] {
		t.Errorf("obs.Flow is not the primary flow's sample")
	}
	// At 35 s agg1's pair has collapsed under the crowd; agg4's pair runs at its cap.
	if ft[0].Throughput > 0.8*ft[7].Throughput {
		t.Errorf("flow 0 (agg1) at %v, flow 7 (agg4) at %v: want agg1's pair collapsed 15 s into the crowd", ft[0].Throughput, ft[7].Throughput)
	}
	if allocs := testing.AllocsPerRun(20, func() {
		if err := f.Collect(ctx, &obs); err != nil {
			t.Fatal(err)
		}
		ft = f.FlowTruths(ft)
	}); allocs != 0 {
		t.Errorf("Collect with %d flows and FlowTruths allocate %v times, want 0", n, allocs)
	}

	obs.FlowIDs = append(obs.FlowIDs[:2:2], proflow.FlowID{Src: ps[0].ID.Src, Dst: ps[0].ID.Dst, SrcPort: 6000, DstPort: 5201, Proto: proflow.ProtoTCP})
	err := f.Collect(ctx, &obs)
	if err == nil || !strings.Contains(err.Error(), "flow_ids[2]") || !strings.Contains(err.Error(), ":6000") {
		t.Errorf("Collect with an unknown flow = %v, want an error naming flow_ids[2] and the flow", err)
	}
	truth.FlowIDs = obs.FlowIDs
	if f.Truth(&truth) {
		t.Error("Truth with an unknown flow reported true")
	}
}

func TestPlaceBatch(t *testing.T) {
	f := newMulti(t, "M2", 1)
	ctx := context.Background()
	ps := f.Protected()
	var enf proflow.BatchEnforcer = f
	unknown := ps[0].ID
	unknown.SrcPort = 7000
	batch := []proflow.Placement{
		{Flow: ps[0].ID, Switch: 3},
		{Flow: unknown, Switch: 1},
		{Flow: ps[7].ID, Switch: 9},
		{Flow: ps[5].ID, Switch: 0},
		{Flow: ps[1].ID, Switch: 0}, // where it is: nothing happens
	}
	errs := make([]error, len(batch))
	if err := enf.PlaceBatch(ctx, batch, errs); err != nil {
		t.Fatalf("PlaceBatch: %v", err)
	}
	if errs[0] != nil || errs[3] != nil || errs[4] != nil {
		t.Errorf("errs %v, want nil for the valid placements 0, 3 and 4", errs)
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "not one of the 8 protected flows") {
		t.Errorf("errs[1] = %v, want the flow that is not protected", errs[1])
	}
	var bad *proflow.UnknownSwitchError
	if !errors.As(errs[2], &bad) || bad.Index != 9 {
		t.Errorf("errs[2] = %v, want an UnknownSwitchError for 9", errs[2])
	}
	want := []int{3, 0, 1, 1, 2, 0, 3, 3}
	for i, p := range ps {
		got, err := f.Locate(ctx, p.ID)
		if err != nil || got != want[i] {
			t.Errorf("Locate(flow %d) = %d, %v; want %d", i, got, err, want[i])
		}
	}
	if _, err := f.Locate(ctx, unknown); !errors.Is(err, proflow.ErrNotPlaced) {
		t.Errorf("Locate of an unprotected flow = %v, want ErrNotPlaced", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	errs = make([]error, 1)
	if err := f.PlaceBatch(cancelled, []proflow.Placement{{Flow: ps[2].ID, Switch: 3}}, errs); !errors.Is(err, context.Canceled) || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("PlaceBatch with a cancelled context = %v, errs %v; want context.Canceled in both", err, errs)
	}
	if k, _ := f.Locate(ctx, ps[2].ID); k != 1 {
		t.Errorf("a cancelled batch moved flow 2 to %d", k)
	}
	if err := f.PlaceBatch(ctx, batch, errs); err == nil {
		t.Error("PlaceBatch with 1 error slot for 5 placements succeeded")
	}
}

// Every protected flow, not only the primary one, passes the enforcer
// conformance suite.
func TestEnforcerConformanceEveryFlow(t *testing.T) {
	for _, i := range []int{1, 5} {
		southboundtest.TestEnforcer(t, func(t *testing.T) southboundtest.EnforcerHarness {
			f := newMulti(t, "M2", 1)
			flow := f.Protected()[i]
			return southboundtest.EnforcerHarness{
				Enforcer: f,
				Topology: f.Topology(),
				Flow:     flow.ID,
				Where: func(ctx context.Context) (int, error) {
					return f.FlowTruths(nil)[i].Switch, nil
				},
			}
		})
	}
}

func TestReadScenarioProtectedErrors(t *testing.T) {
	cfg := sim.DefaultConfig()
	doc := func(extra, protected string) string {
		return `{"name": "T"` + extra + `, "congesters": [], "protected": [` + protected + `]}`
	}
	ok := `{"src": "h1", "dst": "h8", "switch": "agg1"}`
	for _, c := range []struct {
		name, json string
		want       []string
	}{
		{"unknown src", doc("", `{"src": "h0", "dst": "h8", "switch": "agg1"}`), []string{`protected[0].src: unknown host "h0", want h1..h8`}},
		{"unknown dst", doc("", `{"src": "h1", "dst": "server", "switch": "agg1"}`), []string{`protected[0].dst: unknown host "server"`}},
		{"same leaf", doc("", `{"src": "h1", "dst": "h2", "switch": "agg1"}`), []string{"protected[0].dst: h2 is on the same leaf as h1, want a host on another leaf"}},
		{"unknown switch", doc("", ok+`, {"src": "h1", "dst": "h8", "src_port": 1, "switch": "agg5"}`), []string{`protected[1].switch: unknown switch "agg5", want agg1..agg4`}},
		{"no switch", doc("", `{"src": "h1", "dst": "h8"}`), []string{`protected[0].switch: unknown switch ""`}},
		{"port", doc("", `{"src": "h1", "dst": "h8", "src_port": 70000, "dst_port": -1, "switch": "agg1"}`), []string{"protected[0].src_port: 70000, want a TCP port 1..65535", "protected[0].dst_port: -1"}},
		{"weight", doc("", `{"src": "h1", "dst": "h8", "switch": "agg1", "weight": -2}`), []string{"protected[0].weight: -2, want a finite number > 0 (0 for the default 1)"}},
		{"cap", doc("", `{"src": "h1", "dst": "h8", "switch": "agg1", "cap": "lots"}`), []string{`protected[0].cap: not a rate`}},
		{"duplicate", doc("", ok+`, {"src": "h3", "dst": "h8", "switch": "agg2"}, {"src": "h1", "dst": "h8", "src_port": 5001, "switch": "agg2"}`),
			[]string{"protected[2]: flow tcp 10.0.0.1:5001->10.0.0.8:5201 repeats protected[0], want distinct flows"}},
		{"protected_switch disagrees", doc(`, "protected_switch": "agg2"`, ok), []string{`protected_switch: agg2, but protected[0] starts on "agg1"; want it empty or naming protected[0]'s switch`}},
		{"unknown field", doc("", `{"src": "h1", "dst": "h8", "switch": "agg1", "rate": "1Mbit/s"}`), []string{`unknown field "rate"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := sim.ReadScenario(strings.NewReader(c.json), cfg)
			wantErrorContaining(t, err, c.want)
		})
	}
	// The limit on the number of flows is checked before any flow.
	var many []string
	for i := range 5 {
		many = append(many, `{"src": "h1", "dst": "h8", "src_port": `+string(rune('1'+i))+`, "switch": "agg9"}`)
	}
	_, err := sim.ReadScenarioWithLimits(strings.NewReader(doc("", strings.Join(many, ","))), cfg, sim.Limits{MaxProtected: 4})
	if err == nil || !strings.Contains(err.Error(), "protected: 5 flows, want at most 4 (Limits.MaxProtected)") || strings.Contains(err.Error(), "agg9") {
		t.Errorf("5 flows under MaxProtected 4: %v, want only the limit", err)
	}
	// Without a list, protected_switch is required as before.
	if _, err := sim.ReadScenario(strings.NewReader(`{"name": "T", "congesters": []}`), cfg); err == nil || !strings.Contains(err.Error(), "protected_switch") {
		t.Errorf("no protected_switch and no list: %v, want a protected_switch error", err)
	}
	// protected_switch naming protected[0]'s switch is accepted.
	if _, err := sim.ReadScenario(strings.NewReader(doc(`, "protected_switch": "agg1"`, ok)), cfg); err != nil {
		t.Errorf("protected_switch agreeing with protected[0]: %v", err)
	}
}
