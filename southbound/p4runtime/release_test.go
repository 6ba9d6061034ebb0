package p4runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

func TestRelease(t *testing.T) {
	f, c, ctx := placed(t, 2)
	other := testFlow
	other.SrcPort++
	if err := c.Place(ctx, other, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, testFlow); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if _, ok := f.dp.Path(1, testFlow); ok {
		t.Error("forward path still set in the data plane after Release")
	}
	if _, ok := f.dp.Path(4, testFlow.Reverse()); ok {
		t.Error("reverse path still set in the data plane after Release")
	}
	if k, err := f.where(other); err != nil || k != 1 {
		t.Errorf("other flow: switch %d, %v; want it untouched on 1", k, err)
	}
	if _, err := c.Locate(ctx, testFlow); !errors.Is(err, proflow.ErrNotPlaced) {
		t.Errorf("Locate after Release: %v, want ErrNotPlaced (no entry on either leaf)", err)
	}
	// Nothing installed: nil, again and for a flow never placed.
	if err := c.Release(ctx, testFlow); err != nil {
		t.Errorf("second Release: %v, want nil", err)
	}
	never := testFlow
	never.DstPort++
	if err := c.Release(ctx, never); err != nil {
		t.Errorf("Release of a flow never placed: %v, want nil", err)
	}
	// Placing again after a release inserts afresh.
	if err := c.Place(ctx, testFlow, 3); err != nil {
		t.Fatal(err)
	}
	if k, err := f.where(testFlow); err != nil || k != 3 {
		t.Errorf("placed again: switch %d, %v; want 3", k, err)
	}
}

func TestReleaseHalfPlaced(t *testing.T) {
	f, c, ctx := placed(t, 0)
	// Only the reverse direction remains (a primary that failed half-way).
	if err := c.clearPath(ctx, direction{s: c.sessions[0], leaf: 0, flow: testFlow}); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, testFlow); err != nil {
		t.Fatal(err)
	}
	if n := f.dp.Paths(4); n != 0 {
		t.Errorf("destination leaf has %d paths after Release, want 0", n)
	}
}

func TestReleaseBackupAndForeign(t *testing.T) {
	f, c, ctx := placed(t, 1)
	backup := dial(t, f.config(5))
	never := testFlow
	never.SrcPort = 1
	if err := backup.Release(ctx, never); err != nil {
		t.Errorf("backup Release of a flow with no entry: %v, want nil", err)
	}
	if err := backup.Release(ctx, testFlow); !errors.Is(err, ErrNotPrimary) {
		t.Errorf("backup Release of a placed flow: %v, want ErrNotPrimary", err)
	}
	if k, err := f.where(testFlow); err != nil || k != 1 {
		t.Errorf("after the backup's refused Release: switch %d, %v; want 1", k, err)
	}
	// A primary with another owner mark does not delete c's entries.
	c.Close()
	cfg := f.config(20)
	cfg.Owner = []byte("someone-else")
	foreign := dial(t, cfg)
	if err := foreign.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	// Nor do its Release and Remove (which checks ownership as Release does).
	for name, op := range map[string]func(context.Context, proflow.FlowID) error{"Release": foreign.Release, "Remove": foreign.Remove} {
		if err := op(ctx, testFlow); !errors.Is(err, ErrForeignEntry) {
			t.Errorf("%s of another owner's entries: %v, want ErrForeignEntry", name, err)
		}
		if k, err := f.where(testFlow); err != nil || k != 1 {
			t.Errorf("after a foreign %s: switch %d, %v; want 1", name, k, err)
		}
	}
}

// baseSwitch is where a leaf's base forwarding (ipv4_lpm's ecmp) sends a
// flow without a path_select override. MemDataplane models no base
// forwarding, so the conformance harness stands in a hash of the 5-tuple.
func baseSwitch(flow proflow.FlowID) int {
	return int(flow.SrcPort+flow.DstPort+uint16(flow.Proto)) % 4
}

func TestReleaserConformance(t *testing.T) {
	southboundtest.TestReleaser(t, func(t *testing.T) southboundtest.EnforcerHarness { return enforcerHarness(t, true) })
}
