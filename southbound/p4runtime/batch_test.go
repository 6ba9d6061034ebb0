package p4runtime

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
)

// flowN is testFlow with source port 30000+i (leaf1 to leaf4).
func flowN(i int) proflow.FlowID {
	f := testFlow
	f.SrcPort = uint16(30000 + i)
	return f
}

// writeCounter counts the Write RPCs and their updates per device.
type writeCounter struct {
	mu      sync.Mutex
	writes  map[uint64]int
	updates map[uint64]int
}

func (w *writeCounter) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if wr, ok := req.(*p4v1.WriteRequest); ok {
		w.mu.Lock()
		w.writes[wr.GetDeviceId()]++
		w.updates[wr.GetDeviceId()] += len(wr.GetUpdates())
		w.mu.Unlock()
	}
	return h(ctx, req)
}

func (w *writeCounter) take() (writes, updates map[uint64]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	writes, updates = w.writes, w.updates
	w.writes, w.updates = map[uint64]int{}, map[uint64]int{}
	return writes, updates
}

func batch(n int, sw func(i int) int) ([]proflow.Placement, []error) {
	ps := make([]proflow.Placement, n)
	for i := range ps {
		ps[i] = proflow.Placement{Flow: flowN(i), Switch: sw(i)}
	}
	return ps, make([]error, n)
}

// A step is one multi-update Write per leaf; flows already in place are not
// written again.
func TestPlaceBatchOneWritePerLeaf(t *testing.T) {
	wc := &writeCounter{}
	wc.take()
	f := newFabric(t, nil, grpc.UnaryInterceptor(wc.intercept))
	c := dial(t, f.config(10))
	ctx, cancel := ctxT(t)
	defer cancel()
	const n = 50
	ps, errs := batch(n, func(i int) int { return i % 4 })
	if err := c.PlaceBatch(ctx, ps, errs); err != nil || errors.Join(errs...) != nil {
		t.Fatalf("first batch: %v, errs %v", err, errors.Join(errs...))
	}
	writes, updates := wc.take()
	for _, dev := range []uint64{1, 4} {
		if writes[dev] != 1 || updates[dev] != n {
			t.Errorf("device %d: %d writes of %d updates, want 1 of %d", dev, writes[dev], updates[dev], n)
		}
	}
	// Half move on, half stay.
	ps, errs = batch(n, func(i int) int { return (i + i%2) % 4 })
	if err := c.PlaceBatch(ctx, ps, errs); err != nil || errors.Join(errs...) != nil {
		t.Fatalf("second batch: %v, errs %v", err, errors.Join(errs...))
	}
	writes, updates = wc.take()
	for _, dev := range []uint64{1, 4} {
		if writes[dev] != 1 || updates[dev] != n/2 {
			t.Errorf("device %d: %d writes of %d updates, want 1 of %d (only the flows that move)", dev, writes[dev], updates[dev], n/2)
		}
	}
	for i := range n {
		if got, err := f.where(flowN(i)); err != nil || got != (i+i%2)%4 {
			t.Errorf("flow %d on %d, %v; want %d", i, got, err, (i+i%2)%4)
		}
	}
}

// smallTable returns leaf.p4's pipeline with room for size path entries
// (leaf.p4 has 256).
func smallTable(t testing.TB, size int64) Pipeline {
	t.Helper()
	pipe, err := LeafPipeline(nil)
	if err != nil {
		t.Fatal(err)
	}
	pipe.P4Info = proto.Clone(pipe.P4Info).(*p4configv1.P4Info)
	for _, tb := range pipe.P4Info.GetTables() {
		if tb.GetPreamble().GetName() == p4.PathTable {
			tb.Size = size
		}
	}
	return pipe
}

// A full table on one leaf fails just the flows that did not fit, each
// with RESOURCE_EXHAUSTED from the Write's per-update errors; their other
// direction is restored and the rest of the batch is applied.
func TestPlaceBatchTableFull(t *testing.T) {
	const size, n, others = 10, 10, 3
	f := newFabric(t, nil)
	cfg := f.config(10)
	cfg.Pipeline = smallTable(t, size)
	c := dial(t, cfg)
	ctx, cancel := ctxT(t)
	defer cancel()
	// Three flows from leaf3 take room on leaf4.
	for i := range others {
		fl := flowN(100 + i)
		fl.Src = netip.MustParseAddr("10.0.3.1")
		if err := c.Place(ctx, fl, 0); err != nil {
			t.Fatal(err)
		}
	}
	ps, errs := batch(n, func(i int) int { return 2 })
	if err := c.PlaceBatch(ctx, ps, errs); err != nil {
		t.Fatalf("PlaceBatch = %v, want nil: a full table fails flows, not the batch", err)
	}
	fits := size - others
	for i, e := range errs {
		switch {
		case i < fits && e != nil:
			t.Errorf("flow %d (fits): %v", i, e)
		case i >= fits:
			var de *DeviceError
			if !errors.As(e, &de) || de.Code != codes.ResourceExhausted || status.Code(de) != codes.ResourceExhausted {
				t.Errorf("flow %d (beyond the table): %v, want a *DeviceError with RESOURCE_EXHAUSTED", i, e)
			}
		}
	}
	for i := range n {
		_, fwd := f.dp.Path(1, flowN(i))
		_, rev := f.dp.Path(4, flowN(i).Reverse())
		if i < fits {
			if got, err := f.where(flowN(i)); err != nil || got != 2 {
				t.Errorf("flow %d on %d, %v; want 2", i, got, err)
			}
			continue
		}
		if fwd || rev {
			t.Errorf("refused flow %d has a path entry (forward %v, reverse %v), want none: the forward one must be restored away", i, fwd, rev)
		}
		if _, err := c.Locate(ctx, flowN(i)); !errors.Is(err, proflow.ErrNotPlaced) {
			t.Errorf("Locate(refused flow %d) = %v, want ErrNotPlaced", i, err)
		}
	}
}

// A leaf whose data plane refuses every update fails the flows with a
// direction there; their other direction is restored.
func TestPlaceBatchLeafRefuses(t *testing.T) {
	f := newFabric(t, nil)
	c := dial(t, f.config(10))
	ctx, cancel := ctxT(t)
	defer cancel()
	ps, errs := batch(4, func(int) int { return 1 })
	if err := c.PlaceBatch(ctx, ps, errs); err != nil {
		t.Fatal(err)
	}
	f.dp.FailSetPath(4, errors.New("injected data-plane failure"))
	ps, errs = batch(4, func(int) int { return 3 })
	err := c.PlaceBatch(ctx, ps, errs)
	f.dp.FailSetPath(4, nil)
	for i, e := range errs {
		if e == nil {
			t.Errorf("flow %d: nil slot, want an error (device 4 failed its reverse entry): batch error %v", i, err)
		}
		if got, werr := f.where(flowN(i)); werr != nil || got != 1 {
			t.Errorf("flow %d on %d, %v after a failed batch; want 1 (unchanged)", i, got, werr)
		}
	}
}

// A flow and its reverse take the same two entries (the forward 5-tuple on
// the source host's leaf, the reverse on the other), so one direction per
// connection is placed: Place and PlaceBatch refuse a flow whose reverse is
// placed or earlier in the batch, and leave the reverse where it is.
func TestPlaceRefusesReverseOfPlaced(t *testing.T) {
	f, c, ctx := placed(t, 1)
	rev := testFlow.Reverse()
	err := c.Place(ctx, rev, 3)
	if err == nil || !strings.Contains(err.Error(), rev.String()) || !strings.Contains(err.Error(), testFlow.String()) ||
		!strings.Contains(err.Error(), "one direction per connection") {
		t.Errorf("Place of a placed flow's reverse: %v, want an error naming both and that one direction per connection is placed", err)
	}
	if k, werr := f.where(testFlow); werr != nil || k != 1 {
		t.Errorf("after the refused Place: switch %d, %v; want the flow still on 1", k, werr)
	}
	// PlaceBatch: the reverse of a placed flow, and the reverse of a flow
	// earlier in the batch, fail in their slots; the others are placed.
	other := flowN(7)
	ps := []proflow.Placement{{Flow: rev, Switch: 2}, {Flow: other, Switch: 0}, {Flow: other.Reverse(), Switch: 2}}
	errs := make([]error, len(ps))
	if err := c.PlaceBatch(ctx, ps, errs); err != nil {
		t.Fatal(err)
	}
	for i, want := range []error{errors.New("refused"), nil, errors.New("refused")} {
		switch e := errs[i]; {
		case want == nil && e != nil:
			t.Errorf("slot %d (%v): %v, want nil", i, ps[i].Flow, e)
		case want != nil && (e == nil || !strings.Contains(e.Error(), "one direction per connection")):
			t.Errorf("slot %d (%v): %v, want a refusal: its reverse is placed", i, ps[i].Flow, e)
		}
	}
	if k, werr := f.where(testFlow); werr != nil || k != 1 {
		t.Errorf("after the batch: testFlow on %d, %v; want still on 1", k, werr)
	}
	if k, werr := f.where(other); werr != nil || k != 0 {
		t.Errorf("after the batch: flow 7 on %d, %v; want 0 (its reverse's slot refused)", k, werr)
	}
	// Released, the reverse may be placed (as its own connection's direction).
	if err := c.Release(ctx, testFlow); err != nil {
		t.Fatal(err)
	}
	if err := c.Place(ctx, rev, 3); err != nil {
		t.Fatalf("Place of the reverse once the flow is released: %v", err)
	}
	if err := c.Place(ctx, testFlow, 2); err == nil {
		t.Error("Place of the flow whose reverse is now placed succeeded, want a refusal")
	}
}
