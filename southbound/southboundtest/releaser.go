package southboundtest

import (
	"errors"
	"testing"

	"github.com/proflow-sdn/proflow"
)

// TestReleaser runs the conformance suite of a proflow.Releaser, on a fresh
// harness from newHarness as TestEnforcer does. It skips when the
// harness's Enforcer is not a Releaser or sets no WhereFlow.
//
//   - Release: the harness's flows (as in ManyFlows) placed in one step,
//     flow i on switch i mod |S|, then every other flow released. A
//     released flow is still forwarded (WhereFlow finds it on some switch:
//     its default path), and for a proflow.Locator, Locate reports
//     proflow.ErrNotPlaced — no override remains. The flows kept stay where
//     they were placed. Releasing a released flow again, and a flow never
//     placed, succeeds. Releasing a released flow and placing it again
//     puts it where asked.
func TestReleaser(t *testing.T, newHarness func(t *testing.T) EnforcerHarness) {
	t.Helper()
	t.Run("Release", func(t *testing.T) {
		h := &enforcerCase{EnforcerHarness: newHarness(t)}
		h.check(t)
		rel, ok := h.Enforcer.(proflow.Releaser)
		if !ok {
			t.Skipf("%T is not a proflow.Releaser", h.Enforcer)
		}
		flows := h.manyFlows(t)
		n := h.Topology.NumSwitches()
		ps := make([]proflow.Placement, len(flows))
		want := make([]int, len(flows))
		for i, f := range flows {
			ps[i], want[i] = proflow.Placement{Flow: f, Switch: i % n}, i%n
		}
		h.placeStep(t, ps)
		h.wantFlows(t, flows, want, "after the first step")

		var kept, released []proflow.FlowID
		var keptAt []int
		ctx, cancel := h.ctx(t)
		defer cancel()
		for i, f := range flows {
			if i%2 == 0 {
				kept, keptAt = append(kept, f), append(keptAt, want[i])
				continue
			}
			if err := rel.Release(ctx, f); err != nil {
				t.Fatalf("Release(%v): %v", f, err)
			}
			released = append(released, f)
		}
		h.wantFlows(t, kept, keptAt, "after releasing the other flows")
		loc, _ := h.Enforcer.(proflow.Locator)
		for _, f := range released {
			if k, err := h.WhereFlow(ctx, f); err != nil || k < 0 || k >= n {
				t.Errorf("WhereFlow(%v) after its release = %d, %v; want the switch of its default path", f, k, err)
			}
			if loc == nil {
				continue
			}
			if k, err := loc.Locate(ctx, f); !errors.Is(err, proflow.ErrNotPlaced) {
				t.Errorf("Locate(%v) after its release = %d, %v; want an error wrapping proflow.ErrNotPlaced (no override left)", f, k, err)
			}
		}
		if err := rel.Release(ctx, released[0]); err != nil {
			t.Errorf("Release(%v) a second time: %v, want nil (nothing installed)", released[0], err)
		}
		never := h.Flow
		for _, f := range flows {
			if f == never {
				t.Fatalf("southboundtest: harness Flow %v is among the many flows; the suite releases it as a flow never placed", never)
			}
		}
		if err := rel.Release(ctx, never); err != nil {
			t.Errorf("Release(%v) of a flow never placed: %v, want nil", never, err)
		}
		// Released, then placed again.
		h.placeStep(t, []proflow.Placement{{Flow: released[0], Switch: n - 1}})
		h.wantFlows(t, released[:1], []int{n - 1}, "after placing a released flow again")
	})
}
