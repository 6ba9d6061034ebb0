package openflow_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/fakeswitch"
)

// flowN is fp with source port 30000+i: flows between h1 (leaf1) and h8
// (leaf4), one override pair each.
func flowN(i int) proflow.FlowID {
	f := fp
	f.SrcPort = uint16(30000 + i)
	return f
}

// placeAll places flows 0..n-1 on sw(i) in one batch and returns the slots.
func placeAll(t *testing.T, tb *testbed, n int, sw func(i int) int) ([]proflow.Placement, []error, error) {
	t.Helper()
	ps := make([]proflow.Placement, n)
	for i := range ps {
		ps[i] = proflow.Placement{Flow: flowN(i), Switch: sw(i)}
	}
	errs := make([]error, n)
	err := tb.srv.PlaceBatch(ctxT(t, 5*time.Second), ps, errs)
	return ps, errs, err
}

// A batch is one write of flow-mods and one barrier per leaf and phase, and
// make-before-break across the batch: on each leaf, every add of the batch
// is confirmed by a barrier before the first delete.
func TestPlaceBatchPerLeafAndMakeBeforeBreak(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	const n = 40
	leaves := []*fakeswitch.Switch{tb.sw["leaf1"], tb.sw["leaf4"]}
	mark := []int{len(leaves[0].Ops()), len(leaves[1].Ops())}
	_, errs, err := placeAll(t, tb, n, func(i int) int { return i % 4 })
	if err != nil || errors.Join(errs...) != nil {
		t.Fatalf("first batch: %v, errs %v", err, errors.Join(errs...))
	}
	for j, sw := range leaves {
		ops := sw.Ops()[mark[j]:]
		want := append(slices.Repeat([]string{"add"}, n), "barrier")
		if got := kinds(ops); !slices.Equal(got, want) {
			t.Errorf("leaf %d ops of the first batch = %v, want %d adds and one barrier", j, got, n)
		}
		mark[j] = len(sw.Ops())
	}
	// Second step: every flow moves on.
	if _, errs, err = placeAll(t, tb, n, func(i int) int { return (i + 1) % 4 }); err != nil || errors.Join(errs...) != nil {
		t.Fatalf("second batch: %v, errs %v", err, errors.Join(errs...))
	}
	for j, sw := range leaves {
		ops := sw.Ops()[mark[j]:]
		want := append(append(slices.Repeat([]string{"add"}, n), "barrier"), append(slices.Repeat([]string{"delete-strict"}, n), "barrier")...)
		if got := kinds(ops); !slices.Equal(got, want) {
			t.Errorf("leaf %d ops of the second batch = %v, want %d adds, a barrier, %d deletes, a barrier", j, got, n, n)
		}
		if got := len(overrides(sw)); got != n {
			t.Errorf("leaf %d holds %d overrides after the second batch, want %d (one per flow)", j, got, n)
		}
	}
	for i := range n {
		if got, want := tb.bothWays(flowN(i)), tb.cfg.Topology.Switches[(i+1)%4]; got != want {
			t.Errorf("flow %d goes via %s, want %s", i, got, want)
		}
	}
}

func kinds(ops []fakeswitch.Op) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Kind
	}
	return out
}

// A full flow table on one leaf fails just the flows that did not fit,
// each in its own slot with ErrTableFull; their other direction is rolled
// back and the rest of the batch is applied.
func TestPlaceBatchTableFull(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	const n, room = 20, 12
	leaf4 := tb.sw["leaf4"]
	leaf4.MaxFlows.Store(int64(len(leaf4.Flows()) + room))
	base := make([]string, n)
	for i := range n {
		base[i] = tb.bothWays(flowN(i))
	}
	_, errs, err := placeAll(t, tb, n, func(i int) int { return 3 - i%2 })
	if err != nil {
		t.Fatalf("PlaceBatch returned %v, want nil: a full table fails flows, not the batch", err)
	}
	for i, e := range errs {
		switch {
		case i < room && e != nil:
			t.Errorf("flow %d (fits): %v", i, e)
		case i >= room && !errors.Is(e, openflow.ErrTableFull):
			t.Errorf("flow %d (beyond the table): error %v, want one wrapping ErrTableFull", i, e)
		}
	}
	for i := range n {
		want := base[i]
		if i < room {
			want = tb.cfg.Topology.Switches[3-i%2]
		}
		if got := tb.bothWays(flowN(i)); got != want {
			t.Errorf("flow %d goes via %s, want %s", i, got, want)
		}
		if got, err := tb.srv.Locate(ctxT(t, 5*time.Second), flowN(i)); i < room && (err != nil || tb.cfg.Topology.Switches[got] != want) {
			t.Errorf("Locate(flow %d) = %d, %v; want %s", i, got, err, want)
		} else if i >= room && !errors.Is(err, proflow.ErrNotPlaced) {
			t.Errorf("Locate(flow %d, refused) = %d, %v; want ErrNotPlaced", i, got, err)
		}
	}
	if got := len(overrides(tb.sw["leaf1"])); got != room {
		t.Errorf("leaf1 holds %d overrides, want %d: the refused flows' forward rules must be rolled back", got, room)
	}
}

// A leaf that does not confirm fails the batch and every flow with rules
// there; the flows keep their old paths.
func TestPlaceBatchLeafFails(t *testing.T) {
	tb := newTestbed(t, func(c *openflow.Config) { c.RequestTimeout = 150 * time.Millisecond })
	tb.ready()
	const n = 8
	if _, errs, err := placeAll(t, tb, n, func(int) int { return 0 }); err != nil || errors.Join(errs...) != nil {
		t.Fatalf("first batch: %v, errs %v", err, errors.Join(errs...))
	}
	tb.sw["leaf4"].WithholdBarrier.Store(true)
	_, errs, err := placeAll(t, tb, n, func(int) int { return 2 })
	tb.sw["leaf4"].WithholdBarrier.Store(false)
	if err == nil {
		t.Error("PlaceBatch with leaf4 withholding its barrier succeeded, want a batch error")
	}
	for i, e := range errs {
		if e == nil {
			t.Errorf("flow %d: nil slot, want an error (its reverse rule is on leaf4)", i)
		}
		if got := tb.bothWays(flowN(i)); got != "agg1" {
			t.Errorf("flow %d goes via %s after a failed batch, want agg1 (unchanged)", i, got)
		}
	}
}

// Invalid placements fail their own slots only.
func TestPlaceBatchInvalid(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	outside := flowN(1)
	outside.Dst = netipMust("10.0.9.9")
	ps := []proflow.Placement{{Flow: flowN(0), Switch: 1}, {Flow: outside, Switch: 1}, {Flow: flowN(0), Switch: 2}, {Flow: flowN(2), Switch: 2}}
	errs := make([]error, len(ps))
	if err := tb.srv.PlaceBatch(ctxT(t, 5*time.Second), ps, errs); err != nil {
		t.Fatal(err)
	}
	if errs[0] != nil || errs[3] != nil {
		t.Errorf("valid slots failed: %v, %v", errs[0], errs[3])
	}
	if !errors.Is(errs[1], proflow.ErrNotInFabric) {
		t.Errorf("flow outside the fabric: %v, want ErrNotInFabric", errs[1])
	}
	if errs[2] == nil {
		t.Error("a flow placed twice in one batch: nil, want an error for the second placement")
	}
	if got := tb.bothWays(flowN(0)); got != "agg2" {
		t.Errorf("flow 0 via %s, want agg2 (its first placement)", got)
	}
}

// A flow and its reverse take the same override rules (forward on the
// source leaf, reverse on the destination leaf), so one direction per
// connection is placed: Place and PlaceBatch refuse a flow whose reverse is
// placed or earlier in the batch, and the reverse stays where it is.
func TestPlaceRefusesReverseOfPlaced(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	if err := tb.srv.Place(ctx, fp, 0); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error, flow, rev proflow.FlowID) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), flow.String()) || !strings.Contains(err.Error(), rev.String()) ||
			!strings.Contains(err.Error(), "one direction per connection") {
			t.Errorf("%s: %v, want an error naming %v and %v and that one direction per connection is placed", what, err, flow, rev)
		}
	}
	refused("Place of a placed flow's reverse", tb.srv.Place(ctx, fp.Reverse(), 1), fp.Reverse(), fp)
	if k, err := tb.srv.Locate(ctx, fp); err != nil || k != 0 {
		t.Errorf("Locate(fp) after the refused Place = %d, %v; want 0", k, err)
	}
	if got := tb.bothWays(fp); got != "agg1" {
		t.Errorf("fp via %s after the refused Place, want agg1", got)
	}
	// PlaceBatch: the reverse of a placed flow, and the reverse of a flow
	// earlier in the batch, fail in their slots; the others are placed.
	ps := []proflow.Placement{{Flow: fp.Reverse(), Switch: 2}, {Flow: flowN(3), Switch: 3}, {Flow: flowN(3).Reverse(), Switch: 1}}
	errs := make([]error, len(ps))
	if err := tb.srv.PlaceBatch(ctx, ps, errs); err != nil {
		t.Fatal(err)
	}
	refused("batch slot 0, the reverse of a placed flow", errs[0], fp.Reverse(), fp)
	if errs[1] != nil {
		t.Errorf("batch slot 1: %v, want nil", errs[1])
	}
	refused("batch slot 2, the reverse of slot 1", errs[2], flowN(3).Reverse(), flowN(3))
	if got := tb.bothWays(fp); got != "agg1" {
		t.Errorf("fp via %s after the batch, want agg1", got)
	}
	if got := tb.bothWays(flowN(3)); got != "agg4" {
		t.Errorf("flow 3 via %s after the batch, want agg4 (its reverse's slot refused)", got)
	}
	// Released, the reverse may be placed.
	if err := tb.srv.Release(ctx, fp); err != nil {
		t.Fatal(err)
	}
	if err := tb.srv.Place(ctx, fp.Reverse(), 1); err != nil {
		t.Fatalf("Place of the reverse once the flow is released: %v", err)
	}
	if got := tb.bothWays(fp); got != "agg2" {
		t.Errorf("fp via %s with its reverse placed on agg2, want agg2", got)
	}
}
