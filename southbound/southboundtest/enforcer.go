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
}

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
}

type enforcerCase struct {
	EnforcerHarness
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
