package serve

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/cluster"
)

// recorder is a BatchEnforcer and Releaser that records its calls.
type recorder struct {
	placed, released []string
}

func (r *recorder) Place(_ context.Context, f proflow.FlowID, _ int) error {
	r.placed = append(r.placed, f.String())
	return nil
}

func (r *recorder) PlaceBatch(ctx context.Context, ps []proflow.Placement, errs []error) error {
	for i, p := range ps {
		errs[i] = r.Place(ctx, p.Flow, p.Switch)
	}
	return nil
}

func (r *recorder) Release(_ context.Context, f proflow.FlowID) error {
	r.released = append(r.released, f.String())
	return nil
}

func mustFlow(t *testing.T, s string) proflow.FlowID {
	t.Helper()
	id, err := proflow.ParseFlowID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// In a cluster, a flow removed because another replica owns it now keeps
// its rules (the new owner manages them); a flow deleted from the shared
// set while owned is released; writes for flows not owned are refused and
// counted.
func TestFencedEnforcerReleasesOnlyDeletedOwnedFlows(t *testing.T) {
	owned := mustFlow(t, "tcp 10.0.0.1:5001->10.0.0.8:5201")       // owned, in the set
	lost := mustFlow(t, "tcp 10.0.0.1:5002->10.0.0.8:5201")        // in the set, another owner's now
	deleted := mustFlow(t, "tcp 10.0.0.1:5003->10.0.0.8:5201")     // owned, deleted from the set
	deletedLost := mustFlow(t, "tcp 10.0.0.1:5004->10.0.0.8:5201") // deleted, and its shard lost
	owns := map[proflow.FlowID]bool{owned: true, deleted: true}
	set := map[proflow.FlowID]bool{owned: true, lost: true}
	rec := &recorder{}
	refused := prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
	enf := newEnforcer(rec, func(f proflow.FlowID) bool { return owns[f] }, func(f proflow.FlowID) bool { return set[f] }, refused)
	rel, ok := enf.(proflow.Releaser)
	if !ok {
		t.Fatalf("fenced enforcer over a Releaser is a %T, want a proflow.Releaser", enf)
	}
	ctx := context.Background()
	for _, f := range []proflow.FlowID{owned, lost, deleted, deletedLost} {
		if err := rel.Release(ctx, f); err != nil {
			t.Errorf("Release(%v) = %v", f, err)
		}
	}
	if diff := cmp.Diff([]string{deleted.String()}, rec.released); diff != "" {
		t.Errorf("released (-want +got):\n%s", diff)
	}

	errs := make([]error, 2)
	if err := enf.(proflow.BatchEnforcer).PlaceBatch(ctx, []proflow.Placement{{Flow: owned, Switch: 1}, {Flow: lost, Switch: 2}}, errs); err != nil {
		t.Fatal(err)
	}
	if err := enf.(proflow.BatchEnforcer).PlaceBatch(ctx, []proflow.Placement{{Flow: owned, Switch: 1}, {Flow: lost, Switch: 2}}, errs[:1]); err == nil {
		t.Error("PlaceBatch with 1 error slot for 2 placements succeeded, want an error")
	}
	if errs[0] != nil || !errors.Is(errs[1], cluster.ErrNotOwner) {
		t.Errorf("PlaceBatch errors = %v, want nil and ErrNotOwner", errs)
	}
	if err := enf.Place(ctx, lost, 0); !errors.Is(err, cluster.ErrNotOwner) {
		t.Errorf("Place of a flow not owned = %v, want ErrNotOwner", err)
	}
	if diff := cmp.Diff([]string{owned.String()}, rec.placed); diff != "" {
		t.Errorf("placed (-want +got):\n%s", diff)
	}
	if n := testutil.ToFloat64(refused); n != 2 {
		t.Errorf("refused writes counted %v, want 2", n)
	}

	// An enforcer that keeps its own record of placements (the OpenFlow
	// server) forgets the flows this replica does not own, writing nothing.
	frec := &forgettingRecorder{}
	fenf := newEnforcer(frec, func(f proflow.FlowID) bool { return owns[f] }, func(f proflow.FlowID) bool { return set[f] }, nil)
	for _, f := range []proflow.FlowID{owned, lost, deleted, deletedLost} {
		if err := fenf.(proflow.Releaser).Release(ctx, f); err != nil {
			t.Errorf("Release(%v) = %v", f, err)
		}
	}
	if diff := cmp.Diff([]string{deleted.String()}, frec.released); diff != "" {
		t.Errorf("released by a forgetter (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{lost.String(), deletedLost.String()}, frec.forgot); diff != "" {
		t.Errorf("forgotten (-want +got):\n%s", diff)
	}

	// An enforcer that cannot release stays one.
	if _, ok := newEnforcer(struct{ proflow.Enforcer }{rec}, nil, nil, nil).(proflow.Releaser); ok {
		t.Error("fenced enforcer over a non-Releaser is a Releaser")
	}
}

// fakeFence owns shards at given epochs while writable.
type fakeFence struct {
	writable bool
	epochs   map[int]uint64
}

func (f *fakeFence) Writable() bool { return f.writable }

func (f *fakeFence) Epoch(s int) (uint64, bool) {
	ep, ok := f.epochs[s]
	return ep, ok && f.writable
}

// The OpenFlow owner in cluster mode stamps a flow's rules with its shard
// and the epoch of the replica's ownership, and refuses a flow of a shard
// not owned or any flow while the replica is not writable.
func TestOwnerCookies(t *testing.T) {
	a := mustFlow(t, "tcp 10.0.0.1:5001->10.0.0.8:5201")
	b := mustFlow(t, "tcp 10.0.0.1:5002->10.0.0.8:5201")
	shard := map[proflow.FlowID]int{a: 3, b: 7}
	fc := &fakeFence{writable: true, epochs: map[int]uint64{3: 1234}}
	o := ownerCookies(fc, func(f proflow.FlowID) int { return shard[f] })
	if c, ok := o.OwnerCookie(a); !ok || c != cluster.Cookie(3, 1234) {
		t.Errorf("cookie of an owned flow = %#x, %v, want %#x, true", c, ok, cluster.Cookie(3, 1234))
	}
	if _, ok := o.OwnerCookie(b); ok {
		t.Error("a flow of a shard not owned got a cookie")
	}
	fc.writable = false
	if _, ok := o.OwnerCookie(a); ok {
		t.Error("a replica that is not writable got a cookie")
	}
}

// forgettingRecorder is a recorder that can also forget a placement.
type forgettingRecorder struct {
	recorder
	forgot []string
}

func (r *forgettingRecorder) Forget(_ context.Context, f proflow.FlowID) error {
	r.forgot = append(r.forgot, f.String())
	return nil
}
