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
