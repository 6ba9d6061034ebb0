package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/proflow-sdn/proflow"
)

// A flow's stored state does not outlive the flow: a save racing the
// flow's deletion writes nothing for it (ErrFlowDeleted; the other flows
// of the transaction are written), and DeleteState lets the owner remove
// the state of a flow deleted without it (an operator deleting flows/X),
// fenced by its epoch. Before the fix the save re-created the state key,
// and a later PutFlows of the flow resumed that stale state.
func TestStateDoesNotOutliveFlow(t *testing.T) {
	c := etcdOrSkip(t)
	admin := adminClient(t, c)
	const prefix = "/t/deleted/"
	a := join(t, c, prefix, "a", nil)
	b := join(t, c, prefix, "b", nil)
	waitFor(t, 20*time.Second, "a and b share the shards", func() bool {
		got, _ := owners(t, admin, prefix)
		return balanced(got, a.Shards(), "a", "b") && len(a.Owned()) == a.Shards()/2 && len(b.Owned()) == b.Shards()/2
	})
	ctx := context.Background()
	flows := testFlows(200)
	if err := a.PutFlows(ctx, flows...); err != nil {
		t.Fatal(err)
	}
	// Two flows of one shard a owns, and a third of a's.
	var gone, kept, other proflow.FlowID
	byShard := make(map[int]proflow.FlowID)
	for _, f := range flows {
		if !a.Owns(f.ID) {
			continue
		}
		if prev, ok := byShard[a.Shard(f.ID)]; ok && gone == (proflow.FlowID{}) {
			gone, kept = prev, f.ID
			continue
		}
		byShard[a.Shard(f.ID)] = f.ID
	}
	for _, f := range flows {
		if a.Owns(f.ID) && f.ID != gone && f.ID != kept {
			other = f.ID
			break
		}
	}
	if gone == (proflow.FlowID{}) || other == (proflow.FlowID{}) {
		t.Fatal("no two flows of one shard of a's")
	}
	stateOf := func(f proflow.FlowID) bool {
		t.Helper()
		resp, err := admin.Get(ctx, a.stateKey(a.Shard(f), f), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Count > 0
	}

	// Another replica deletes the flow (with its state); a's save racing
	// the delete comes after it.
	if err := b.DeleteFlow(ctx, gone); err != nil {
		t.Fatal(err)
	}
	n, err := a.SaveFlows(ctx, []FlowState{wantedState(gone), wantedState(kept)})
	if !errors.Is(err, ErrFlowDeleted) || errors.Is(err, ErrNotOwner) {
		t.Errorf("SaveFlows of a deleted flow and a live one = %v, want ErrFlowDeleted only", err)
	}
	if n != 1 || !stateOf(kept) {
		t.Errorf("SaveFlows wrote %d states (state of the live flow stored: %v), want 1", n, stateOf(kept))
	}
	if stateOf(gone) {
		t.Error("the save re-created the state of a deleted flow")
	}

	// An operator deletes flows/X directly: its state stays until the
	// owner deletes it; another replica cannot.
	if _, err := a.SaveFlow(ctx, wantedState(other)); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Delete(ctx, a.flowKey(other)); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteState(ctx, other); !errors.Is(err, ErrNotOwner) {
		t.Errorf("DeleteState by a replica that does not own the flow = %v, want ErrNotOwner", err)
	}
	if !stateOf(other) {
		t.Fatal("a replica that does not own the flow deleted its state")
	}
	if err := a.DeleteState(ctx, other); err != nil {
		t.Fatalf("DeleteState by the owner = %v", err)
	}
	if stateOf(other) {
		t.Error("the owner's DeleteState left the state")
	}
	// The flow put again starts afresh: nothing stored to resume.
	if err := a.PutFlows(ctx, proflow.ProtectedFlow{ID: other}); err != nil {
		t.Fatal(err)
	}
	if _, _, found, err := a.LoadFlow(ctx, other); err != nil || found {
		t.Errorf("LoadFlow of the flow put again = found %v, %v; want nothing stored", found, err)
	}
}

// A flow deleted from the shared set while its shard has no owner (every
// replica gone, or the shard between owners) leaves its stored state, which
// no owner saw to delete: the replica that takes the shard sweeps it, and
// only it, leaving the states of the flows still in the set as they are.
// Before the fix the state stayed forever, and the flow put again resumed
// its stale placement.
func TestTakeOverSweepsStatesOfDeletedFlows(t *testing.T) {
	c := etcdOrSkip(t)
	admin := adminClient(t, c)
	const prefix = "/t/sweep/"
	ctx := context.Background()
	a := join(t, c, prefix, "a", nil)
	waitFor(t, 20*time.Second, "a owns every shard", func() bool { return len(a.Owned()) == a.Shards() })
	flows := testFlows(100)
	if err := a.PutFlows(ctx, flows...); err != nil {
		t.Fatal(err)
	}
	if n, err := a.SaveFlows(ctx, wantedStates(a, flows)); err != nil || n != len(flows) {
		t.Fatalf("SaveFlows = %d, %v; want %d", n, err, len(flows))
	}
	// a leaves: no shard has an owner. An operator deletes flows meanwhile.
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	gone := flows[:10]
	for _, f := range gone {
		if _, err := admin.Delete(ctx, a.flowKey(f.ID)); err != nil {
			t.Fatal(err)
		}
	}
	states := func() map[string]int64 {
		t.Helper()
		resp, err := admin.Get(ctx, prefix+"state/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		out := make(map[string]int64)
		for _, kv := range resp.Kvs {
			out[string(kv.Key)] = kv.ModRevision
		}
		return out
	}
	before := states()
	if len(before) != len(flows) {
		t.Fatalf("%d states stored, want %d", len(before), len(flows))
	}

	b := join(t, c, prefix, "b", nil)
	waitFor(t, 20*time.Second, "b owns every shard", func() bool { return len(b.Owned()) == b.Shards() })
	waitFor(t, 5*time.Second, "b sweeps the states of the deleted flows", func() bool { return len(states()) == len(flows)-len(gone) })
	after := states()
	for _, f := range gone {
		if _, ok := after[b.stateKey(b.Shard(f.ID), f.ID)]; ok {
			t.Errorf("the state of deleted flow %v is still stored", f.ID)
		}
	}
	for _, f := range flows[len(gone):] {
		k := b.stateKey(b.Shard(f.ID), f.ID)
		if rev, ok := after[k]; !ok || rev != before[k] {
			t.Errorf("the state of live flow %v: stored %v at revision %d, want it untouched at %d", f.ID, ok, rev, before[k])
		}
	}
	// The flow put again starts afresh.
	if err := b.PutFlows(ctx, gone[0]); err != nil {
		t.Fatal(err)
	}
	if _, _, found, err := b.LoadFlow(ctx, gone[0].ID); err != nil || found {
		t.Errorf("LoadFlow of the flow put again = found %v, %v; want nothing stored", found, err)
	}
}
