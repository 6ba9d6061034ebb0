package southboundtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// DefaultTimeout bounds each call a conformance suite makes when the harness
// sets no Timeout.
const DefaultTimeout = 10 * time.Second

// EnforcerHarness is what TestEnforcer needs from one southbound.
type EnforcerHarness struct {
	// Enforcer is the implementation under test.
	Enforcer proflow.Enforcer
	// Topology is the fabric the enforcer controls; it must be valid.
	Topology proflow.Topology
	// Flow is the protected flow the suite moves around.
	Flow proflow.FlowID
	// Where reads the switch index the data plane really forwards Flow
	// through, independently of Enforcer: an in-memory fabric reads its
	// table, an OpenFlow southbound dumps the switches' flow tables. It is
	// called only after a successful placement.
	Where func(ctx context.Context) (int, error)
	// Timeout bounds each call to Enforcer and Where (default DefaultTimeout).
	Timeout time.Duration
	// WhereFlow reads, like Where, the switch index the data plane really
	// forwards any flow through. The many-flow cases need it and are
	// skipped when it is nil.
	WhereFlow func(ctx context.Context, flow proflow.FlowID) (int, error)
	// Flows are the distinct flows the many-flow cases place (at least
	// two). Nil means ManyFlows flows derived from Flow: its hosts, its
	// protocol (TCP when it has none), its destination port (5201 when it
	// has none) and distinct source ports from 20000 on.
	Flows []proflow.FlowID
}

// ManyFlows is how many flows the many-flow cases place when the harness
// names none.
const ManyFlows = 64

// TestEnforcer runs the conformance suite every proflow.Enforcer must pass,
// one subtest per property, each on a fresh harness from newHarness (which
// may call t.Skip when the system under test is unavailable, and should
// register its cleanup with t.Cleanup):
//
//   - EverySwitch: placing the flow on each switch in turn, and back again,
//     moves the data plane there.
//   - Idempotent: placing the flow where it already is succeeds and leaves
//     it there.
//   - OutOfRange: switch indices -1 and |S| are refused and the placement is
//     unchanged.
//   - CancelledContext: a cancelled context makes Place fail; the flow stays
//     on the old switch or reaches the requested one, but is never lost.
//   - Locate: if the enforcer is a proflow.Locator, it reads back the last
//     placement, and before any placement either a switch index or an error
//     wrapping proflow.ErrNotPlaced.
//   - ManyFlows: every flow of the harness placed in one step (flow i on
//     switch i mod |S|), then half of them moved again and a quarter placed
//     where they already are in a second step; after each step WhereFlow,
//     and Locate for a proflow.Locator, agree for every flow. A
//     proflow.BatchEnforcer gets each step as one PlaceBatch call; any other
//     Enforcer gets one Place per flow.
//   - BatchErrors: for a proflow.BatchEnforcer, a batch with out-of-range
//     switches among valid placements fails just those slots and applies
//     the others; an error slice of the wrong length is refused without
//     changing anything; a cancelled context fails the batch and loses no
//     flow (each is on its old switch, or on the new one where its slot is
//     nil).
//
// The suite calls the enforcer from one goroutine at a time; concurrent use
// is not part of the contract.
func TestEnforcer(t *testing.T, newHarness func(t *testing.T) EnforcerHarness) {
	t.Helper()
	run := func(name string, f func(t *testing.T, h *enforcerCase)) {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			c := &enforcerCase{EnforcerHarness: h}
			c.check(t)
			f(t, c)
		})
	}
	run("EverySwitch", func(t *testing.T, h *enforcerCase) {
		n := h.Topology.NumSwitches()
		order := make([]int, 0, 2*n)
		for k := range n {
			order = append(order, k)
		}
		for k := n - 2; k >= 0; k-- {
			order = append(order, k)
		}
		for _, k := range order {
			h.mustPlace(t, k)
			h.wantWhere(t, k, "after placing it there")
		}
	})
	run("Idempotent", func(t *testing.T, h *enforcerCase) {
		for _, k := range []int{h.Topology.NumSwitches() - 1, 0} {
			h.mustPlace(t, k)
			h.mustPlace(t, k)
			h.wantWhere(t, k, "after placing it there twice")
		}
	})
	run("OutOfRange", func(t *testing.T, h *enforcerCase) {
		last := h.Topology.NumSwitches() - 1
		h.mustPlace(t, last)
		for _, bad := range []int{-1, h.Topology.NumSwitches()} {
			ctx, cancel := h.ctx(t)
			err := h.Enforcer.Place(ctx, h.Flow, bad)
			cancel()
			if err == nil {
				t.Errorf("Place(%v, %d) succeeded, want an error for a switch index outside 0..%d", h.Flow, bad, last)
			}
			h.wantWhere(t, last, "after a refused out-of-range placement")
		}
	})
	run("CancelledContext", func(t *testing.T, h *enforcerCase) {
		h.mustPlace(t, 0)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := h.Enforcer.Place(ctx, h.Flow, 1)
		if err == nil {
			t.Fatalf("Place(%v, 1) with a cancelled context succeeded, want an error", h.Flow)
		}
		if !errors.Is(err, context.Canceled) {
			t.Logf("Place with a cancelled context returned %v, which does not wrap context.Canceled (allowed)", err)
		}
		wctx, wcancel := h.ctx(t)
		defer wcancel()
		got, err := h.Where(wctx)
		switch {
		case err != nil:
			t.Errorf("Where after a cancelled Place: %v; the flow must stay placed", err)
		case got != 0 && got != 1:
			t.Errorf("after a cancelled Place(1) from switch 0, Where = %d, want 0 (unchanged) or 1 (requested)", got)
		}
	})
	run("Locate", func(t *testing.T, h *enforcerCase) {
		loc, ok := h.Enforcer.(proflow.Locator)
		if !ok {
			t.Skipf("%T does not implement proflow.Locator", h.Enforcer)
		}
		n := h.Topology.NumSwitches()
		ctx, cancel := h.ctx(t)
		got, err := loc.Locate(ctx, h.Flow)
		cancel()
		switch {
		case err != nil && !errors.Is(err, proflow.ErrNotPlaced):
			t.Errorf("Locate before any placement: %v, want a switch index or an error wrapping proflow.ErrNotPlaced", err)
		case err == nil && (got < 0 || got >= n):
			t.Errorf("Locate before any placement = %d, want an index in 0..%d or proflow.ErrNotPlaced", got, n-1)
		}
		for _, k := range []int{n - 1, 0, 1} {
			h.mustPlace(t, k)
			ctx, cancel := h.ctx(t)
			got, err := loc.Locate(ctx, h.Flow)
			cancel()
			if err != nil || got != k {
				t.Errorf("Locate after placing on %d = %d, %v; want %d, nil", k, got, err, k)
			}
		}
	})
	run("ManyFlows", func(t *testing.T, h *enforcerCase) {
		flows := h.manyFlows(t)
		n := h.Topology.NumSwitches()
		want := make([]int, len(flows))
		ps := make([]proflow.Placement, len(flows))
		for i, f := range flows {
			want[i] = i % n
			ps[i] = proflow.Placement{Flow: f, Switch: want[i]}
		}
		h.placeStep(t, ps)
		h.wantFlows(t, flows, want, "after the first step")
		ps = ps[:0]
		for i, f := range flows {
			switch i % 4 {
			case 0, 2: // half move on
				want[i] = (want[i] + 1) % n
				ps = append(ps, proflow.Placement{Flow: f, Switch: want[i]})
			case 1: // a quarter stay where they are, in the batch
				ps = append(ps, proflow.Placement{Flow: f, Switch: want[i]})
			}
		}
		h.placeStep(t, ps)
		h.wantFlows(t, flows, want, "after the second step")
	})
	run("BatchErrors", func(t *testing.T, h *enforcerCase) {
		be, ok := h.Enforcer.(proflow.BatchEnforcer)
		if !ok {
			t.Skipf("%T does not implement proflow.BatchEnforcer", h.Enforcer)
		}
		flows := h.manyFlows(t)[:2]
		n := h.Topology.NumSwitches()
		h.placeStep(t, []proflow.Placement{{Flow: flows[0], Switch: 0}, {Flow: flows[1], Switch: 0}})
		want := []int{0, 0}

		ps := []proflow.Placement{{Flow: flows[0], Switch: -1}, {Flow: flows[1], Switch: 1}, {Flow: flows[0], Switch: n}}
		errs := make([]error, len(ps))
		ctx, cancel := h.ctx(t)
		err := be.PlaceBatch(ctx, ps, errs)
		cancel()
		if errs[0] == nil || errs[2] == nil {
			t.Errorf("PlaceBatch with switches -1 and %d: errs = %v, want errors in slots 0 and 2", n, errs)
		}
		if errs[1] != nil {
			t.Errorf("PlaceBatch: the valid placement beside two out-of-range ones failed: %v (batch error %v)", errs[1], err)
		} else {
			want[1] = 1
		}
		h.wantFlows(t, flows, want, "after a batch with out-of-range switches")

		ctx, cancel = h.ctx(t)
		err = be.PlaceBatch(ctx, []proflow.Placement{{Flow: flows[0], Switch: 1}, {Flow: flows[1], Switch: 0}}, make([]error, 1))
		cancel()
		if err == nil {
			t.Error("PlaceBatch of 2 placements with 1 error slot succeeded, want an error")
		}
		h.wantFlows(t, flows, want, "after a batch with too few error slots")

		cctx, ccancel := context.WithCancel(t.Context())
		ccancel()
		ps = []proflow.Placement{{Flow: flows[0], Switch: 1}, {Flow: flows[1], Switch: 2 % n}}
		errs = make([]error, len(ps))
		if err := be.PlaceBatch(cctx, ps, errs); err == nil {
			t.Error("PlaceBatch with a cancelled context succeeded, want an error")
		}
		wctx, wcancel := h.ctx(t)
		defer wcancel()
		for i, f := range flows {
			got, err := h.WhereFlow(wctx, f)
			switch {
			case err != nil:
				t.Errorf("WhereFlow(%v) after a cancelled batch: %v; the flow must stay placed", f, err)
			case errs[i] == nil && got != ps[i].Switch:
				t.Errorf("after a cancelled batch, %v is on %d, but its slot is nil (applied) for switch %d", f, got, ps[i].Switch)
			case got != want[i] && got != ps[i].Switch:
				t.Errorf("after a cancelled batch, %v is on %d, want %d (unchanged) or %d (requested)", f, got, want[i], ps[i].Switch)
			}
		}
	})
}

type enforcerCase struct {
	EnforcerHarness
}

// manyFlows returns the harness's Flows, or ManyFlows flows derived from
// Flow. It skips the test when the harness has no WhereFlow.
func (h *enforcerCase) manyFlows(t *testing.T) []proflow.FlowID {
	t.Helper()
	if h.WhereFlow == nil {
		t.Skip("the harness sets no WhereFlow, which the many-flow cases need")
	}
	if h.Flows != nil {
		if len(h.Flows) < 2 {
			t.Fatalf("southboundtest: harness Flows has %d flows, want at least 2", len(h.Flows))
		}
		seen := map[proflow.FlowID]bool{}
		for _, f := range h.Flows {
			if err := f.Validate(); err != nil {
				t.Fatalf("southboundtest: harness Flows: %v", err)
			}
			if seen[f] {
				t.Fatalf("southboundtest: harness Flows lists %v twice", f)
			}
			seen[f] = true
		}
		return h.Flows
	}
	base := h.Flow
	if base.Proto == 0 {
		base.Proto = proflow.ProtoTCP
	}
	if base.DstPort == 0 {
		base.DstPort = 5201
	}
	out := make([]proflow.FlowID, 0, ManyFlows)
	for p := uint16(20000); len(out) < ManyFlows; p++ {
		f := base
		f.SrcPort = p
		if f != h.Flow {
			out = append(out, f)
		}
	}
	return out
}

// placeStep applies ps as one step: one PlaceBatch for a
// proflow.BatchEnforcer, one Place per placement otherwise.
func (h *enforcerCase) placeStep(t *testing.T, ps []proflow.Placement) {
	t.Helper()
	ctx, cancel := h.ctx(t)
	defer cancel()
	if be, ok := h.Enforcer.(proflow.BatchEnforcer); ok {
		errs := make([]error, len(ps))
		err := be.PlaceBatch(ctx, ps, errs)
		for i, e := range errs {
			if e != nil {
				t.Errorf("PlaceBatch: placement %d (%v on %d): %v", i, ps[i].Flow, ps[i].Switch, e)
			}
		}
		if err != nil {
			t.Fatalf("PlaceBatch of %d placements: %v", len(ps), err)
		}
		if t.Failed() {
			t.FailNow()
		}
		return
	}
	for _, p := range ps {
		if err := h.Enforcer.Place(ctx, p.Flow, p.Switch); err != nil {
			t.Fatalf("Place(%v, %d): %v", p.Flow, p.Switch, err)
		}
	}
}

// wantFlows checks with WhereFlow, and Locate for a proflow.Locator, that
// flows[i] is on want[i].
func (h *enforcerCase) wantFlows(t *testing.T, flows []proflow.FlowID, want []int, when string) {
	t.Helper()
	ctx, cancel := h.ctx(t)
	defer cancel()
	loc, _ := h.Enforcer.(proflow.Locator)
	bad := 0
	for i, f := range flows {
		got, err := h.WhereFlow(ctx, f)
		if err != nil || got != want[i] {
			t.Errorf("WhereFlow(%v) %s = %d, %v; want %d, nil", f, when, got, err, want[i])
			bad++
		}
		if loc != nil {
			got, err := loc.Locate(ctx, f)
			if err != nil || got != want[i] {
				t.Errorf("Locate(%v) %s = %d, %v; want %d, nil", f, when, got, err, want[i])
				bad++
			}
		}
		if bad >= 10 {
			t.Fatalf("giving up after %d disagreements", bad)
		}
	}
}

func (h *enforcerCase) check(t *testing.T) {
	t.Helper()
	switch {
	case h.Enforcer == nil:
		t.Fatal("southboundtest: harness Enforcer is nil")
	case h.Where == nil:
		t.Fatal("southboundtest: harness Where is nil")
	}
	if err := h.Topology.Validate(); err != nil {
		t.Fatalf("southboundtest: harness topology: %v", err)
	}
	if err := h.Flow.Validate(); err != nil {
		t.Fatalf("southboundtest: harness flow: %v", err)
	}
	if h.Timeout <= 0 {
		h.Timeout = DefaultTimeout
	}
}

func (h *enforcerCase) ctx(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), h.Timeout)
}

func (h *enforcerCase) mustPlace(t *testing.T, k int) {
	t.Helper()
	ctx, cancel := h.ctx(t)
	defer cancel()
	if err := h.Enforcer.Place(ctx, h.Flow, k); err != nil {
		t.Fatalf("Place(%v, %d [%s]): %v", h.Flow, k, h.Topology.Switches[k], err)
	}
}

func (h *enforcerCase) wantWhere(t *testing.T, want int, when string) {
	t.Helper()
	ctx, cancel := h.ctx(t)
	defer cancel()
	got, err := h.Where(ctx)
	if err != nil {
		t.Fatalf("Where %s: %v", when, err)
	}
	if got != want {
		t.Errorf("Where %s = %d, want %d [%s]", when, got, want, h.Topology.Switches[want])
	}
}
