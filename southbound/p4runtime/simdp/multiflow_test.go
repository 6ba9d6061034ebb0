package simdp_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/simdp"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// TestManyProtectedFlows runs M2 (eight protected flows over all switches)
// behind the target: one PlaceBatch moves every flow in the simulator,
// Collect reports each flow's own counter, and Release returns a flow to
// its start switch.
func TestManyProtectedFlows(t *testing.T) {
	fab := newFabric(t, "M2", 1)
	prot := fab.Protected()
	if len(prot) != 8 {
		t.Fatalf("M2 has %d protected flows, want 8", len(prot))
	}
	s := serve(t, fab)
	c := s.dial(t)
	ctx, cancel := ctxT()
	defer cancel()
	n := fab.Topology().NumSwitches()
	start := fab.InitialPlacements()
	ps := make([]proflow.Placement, len(start))
	for i, p := range start {
		ps[i] = proflow.Placement{Flow: p.Flow, Switch: (p.Switch + 1 + i%2) % n}
	}
	errs := make([]error, len(ps))
	if err := c.PlaceBatch(ctx, ps, errs); err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("placement %d: %v", i, err)
		}
	}
	check := func(when string, want func(i int) int) {
		t.Helper()
		truths := fab.FlowTruths(nil)
		for i, p := range ps {
			fwd, rev, ok := s.dp.PlacementOf(p.Flow)
			w := want(i)
			if !ok || truths[i].Switch != w || fwd != rev && rev != -1 {
				t.Errorf("%s: flow %d (%v): simulator on %d, forward entry %d, reverse %d; want the simulator on %d", when, i, p.Flow, truths[i].Switch, fwd, rev, w)
			}
		}
	}
	check("after PlaceBatch", func(i int) int { return ps[i].Switch })

	// Per-flow telemetry: each flow's forward entry counts its own frames.
	var obs proflow.Observation
	for _, p := range prot {
		obs.FlowIDs = append(obs.FlowIDs, p.ID)
	}
	iv := fab.Config().Interval
	_ = c.Collect(ctx, &obs) // primes
	for range 10 {
		if err := fab.Advance(iv); err != nil {
			t.Fatal(err)
		}
		if err := c.Collect(ctx, &obs); err != nil {
			t.Fatal(err)
		}
	}
	truths := fab.FlowTruths(nil)
	frames := fab.Config().PacketSize / fab.Config().MSS
	var sum, want float64
	for i, f := range obs.Flows {
		tp := truths[i].Throughput * frames
		if math.IsNaN(f.Throughput) || f.Throughput <= 0 {
			t.Errorf("flow %d (%v): throughput %v, want its counter's positive rate", i, obs.FlowIDs[i], f.Throughput)
		}
		// Frames entering the leaf: the goodput in frames, within what
		// retransmissions and the leaf's μ−λ split add.
		if math.Abs(f.Throughput-tp) > 0.15*tp {
			t.Errorf("flow %d: %v B/s counted, %v B/s of frames delivered by the simulator; want within 15%%", i, f.Throughput, tp)
		}
		sum, want = sum+f.Throughput, want+tp
	}
	t.Logf("M2 over P4Runtime: %.4g B/s counted over 8 flows, %.4g B/s of frames delivered", sum, want)

	// Release returns a flow to its base path: its start switch.
	if err := c.Release(ctx, ps[3].Flow); err != nil {
		t.Fatal(err)
	}
	check("after releasing flow 3", func(i int) int {
		if i == 3 {
			return start[3].Switch
		}
		return ps[i].Switch
	})
	if fwd, rev, _ := s.dp.PlacementOf(ps[3].Flow); fwd != -1 || rev != -1 {
		t.Errorf("released flow's entries: forward %d, reverse %d; want none (-1)", fwd, rev)
	}
	if err := fab.Advance(iv); err != nil {
		t.Fatal(err)
	}
	if err := c.Collect(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(obs.Flows[3].Throughput) {
		t.Errorf("released flow's sample %v, want NaN (no entry, no counter)", obs.Flows[3].Throughput)
	}
}

// TestProtectedFlowsOnOtherLeaves: a protected flow from another leaf than
// the primary's needs its own leaves in New, and its entries there move it.
func TestProtectedFlowsOnOtherLeaves(t *testing.T) {
	sc, err := sim.BuiltinScenario("M2")
	if err != nil {
		t.Fatal(err)
	}
	sc.Protected[1].Src = "h3" // leaf2, where the primary flow (h1 -> h8) has no end
	fab, err := sim.New(sim.DefaultConfig(), sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	moved := fab.Protected()[1].ID
	leaves := simdp.Leaves(fab.Config(), "127.0.0.1:9559")
	without := slices.DeleteFunc(slices.Clone(leaves), func(l p4runtime.Leaf) bool { return l.Name == "leaf2" })
	if _, err := simdp.New(fab, without); err == nil || !strings.Contains(err.Error(), "leaf2 is missing") || !strings.Contains(err.Error(), moved.String()) {
		t.Errorf("New without leaf2: %v, want an error naming leaf2 and %v", err, moved)
	}

	s := serve(t, fab)
	c := s.dial(t)
	ctx, cancel := ctxT()
	defer cancel()
	to := (fab.InitialPlacements()[1].Switch + 2) % fab.Topology().NumSwitches()
	if err := c.Place(ctx, moved, to); err != nil {
		t.Fatal(err)
	}
	if sw := fab.FlowTruths(nil)[1].Switch; sw != to {
		t.Errorf("%v after Place on %d: the simulator carries it on %d", moved, to, sw)
	}
	if fwd, rev, _ := s.dp.PlacementOf(moved); fwd != to || rev != to {
		t.Errorf("%v entries: forward %d, reverse %d; want %d", moved, fwd, rev, to)
	}
	obs := proflow.Observation{FlowIDs: []proflow.FlowID{moved}}
	_ = c.Collect(ctx, &obs)
	for range 4 {
		if err := fab.Advance(fab.Config().Interval); err != nil {
			t.Fatal(err)
		}
		if err := c.Collect(ctx, &obs); err != nil {
			t.Fatal(err)
		}
	}
	if tp := obs.Flows[0].Throughput; !(tp > 0) {
		t.Errorf("%v from leaf2: throughput %v, want its counter's positive rate", moved, tp)
	}
}

// TestReleaserConformance: the client over the simulator passes the
// Releaser suite on M2's flows, with the simulator as the ground truth: a
// released flow is back on its start switch (its base path).
func TestReleaserConformance(t *testing.T) {
	southboundtest.TestReleaser(t, func(t *testing.T) southboundtest.EnforcerHarness {
		s := serve(t, newFabric(t, "M2", 1))
		c := s.dial(t)
		var flows []proflow.FlowID
		for _, p := range s.fab.Protected()[1:] { // the primary is the suite's "never placed" flow
			flows = append(flows, p.ID)
		}
		whereFlow := func(_ context.Context, flow proflow.FlowID) (int, error) {
			i := slices.IndexFunc(s.fab.Protected(), func(p proflow.ProtectedFlow) bool { return p.ID == flow })
			if i < 0 {
				return -1, fmt.Errorf("%v is not one of M2's flows", flow)
			}
			sw := s.fab.FlowTruths(nil)[i].Switch
			if fwd, rev, _ := s.dp.PlacementOf(flow); fwd != rev || fwd != -1 && fwd != sw {
				return -1, fmt.Errorf("%v: forward entry on %d, reverse on %d, simulated flow on %d; want the entries equal and, if any, on the flow's switch", flow, fwd, rev, sw)
			}
			return sw, nil
		}
		return southboundtest.EnforcerHarness{
			Enforcer:  c,
			Topology:  s.fab.Topology(),
			Flow:      s.fab.Flow(),
			Where:     func(ctx context.Context) (int, error) { return whereFlow(ctx, s.fab.Flow()) },
			WhereFlow: whereFlow,
			Flows:     flows,
		}
	})
}
