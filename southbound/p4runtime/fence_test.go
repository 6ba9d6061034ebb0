package p4runtime

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/genproto/googleapis/rpc/code"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/proflow-sdn/proflow"
)

// fencedConfig is f's config arbitrating for role with election ID id, as
// a replica passes internal/cluster's Role(shard) and ElectionID(epoch).
func fencedConfig(f *fabric, role string, id ElectionID) Config {
	cfg := f.config(0)
	cfg.Role, cfg.ElectionID = role, id
	return cfg
}

// waitFor polls cond on the wall clock for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFencedByElectionID: two clients of one role; the newer owner (higher
// election ID) becomes primary, its writes win, and the older one's are
// refused with PERMISSION_DENIED reported as fenced, also after the
// streams break and reconnect.
func TestFencedByElectionID(t *testing.T) {
	f := newFabric(t, nil)
	ctx, cancel := ctxT(t)
	defer cancel()
	const role = "proflow-shard-3"
	oldID, newID := ElectionID{High: 41, Low: 1}, ElectionID{High: 57, Low: 1}
	old := dial(t, fencedConfig(f, role, oldID))
	if err := old.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if err := old.Place(ctx, testFlow, 1); err != nil {
		t.Fatal(err)
	}
	if old.Fenced() {
		t.Fatal("the only client of its role reports fenced")
	}

	cur := dial(t, fencedConfig(f, role, newID))
	if err := cur.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cur.Place(ctx, testFlow, 2); err != nil {
		t.Fatalf("newer owner's Place: %v", err)
	}
	if k, err := f.where(testFlow); err != nil || k != 2 {
		t.Fatalf("after the newer owner's Place: switch %d, %v; want 2", k, err)
	}
	err := old.Place(ctx, testFlow, 3)
	if !errors.Is(err, ErrFenced) || !errors.Is(err, ErrNotPrimary) || status.Code(err) != codes.PermissionDenied {
		t.Fatalf("superseded client's Place: %v (code %v), want PERMISSION_DENIED wrapping ErrFenced and ErrNotPrimary", err, status.Code(err))
	}
	if !strings.Contains(err.Error(), "fenced") || !strings.Contains(err.Error(), newID.String()) {
		t.Errorf("error %q should say fenced and name the newer election ID %s", err, newID)
	}
	if k, err := f.where(testFlow); err != nil || k != 2 {
		t.Errorf("after the superseded client's Place: switch %d, %v; want the newer owner's 2", k, err)
	}
	if err := old.Release(ctx, testFlow); !errors.Is(err, ErrFenced) {
		t.Errorf("superseded client's Release: %v, want ErrFenced", err)
	}
	errs := make([]error, 1)
	_ = old.PlaceBatch(ctx, []proflow.Placement{{Flow: testFlow, Switch: 0}}, errs)
	if !errors.Is(errs[0], ErrFenced) {
		t.Errorf("superseded client's PlaceBatch: %v, want ErrFenced", errs[0])
	}
	if !old.Fenced() || cur.Fenced() {
		t.Errorf("Fenced: old %v, new %v; want true, false", old.Fenced(), cur.Fenced())
	}
	for _, st := range old.Status() {
		if !st.Fenced || st.Primary || st.Highest != newID || st.ElectionID != oldID || st.Role != role {
			t.Errorf("old client's status %+v, want fenced backup of role %q, highest %s", st, role, newID)
		}
	}

	// Every stream breaks; both reconnect; the older one stays fenced (the
	// device remembers the highest election ID of the role).
	f.stop()
	f.restart()
	// The reconnection backoff runs on the clients' (manual) clock.
	tick := func() bool { f.clock.Advance(time.Second); return false }
	var perr error
	waitFor(t, "the newer owner's Place after reconnecting", func() bool {
		tick()
		perr = cur.Place(ctx, testFlow, 3)
		return perr == nil
	})
	if err := old.Place(ctx, testFlow, 0); !errors.Is(err, ErrFenced) {
		t.Errorf("after reconnecting, superseded client's Place: %v, want ErrFenced", err)
	}
	if k, err := f.where(testFlow); err != nil || k != 3 {
		t.Errorf("after reconnecting: switch %d, %v; want the newer owner's 3", k, err)
	}
}

// TestRolesArbitratedIndependently: the primaries of two roles both write;
// a newer client of one role fences only that role's older client.
func TestRolesArbitratedIndependently(t *testing.T) {
	f := newFabric(t, nil)
	ctx, cancel := ctxT(t)
	defer cancel()
	a := dial(t, fencedConfig(f, "shard-1", ElectionID{Low: 9}))
	b := dial(t, fencedConfig(f, "shard-2", ElectionID{Low: 1}))
	for _, c := range []*Client{a, b} {
		if err := c.WaitPrimary(ctx); err != nil {
			t.Fatal(err)
		}
	}
	other := testFlow
	other.SrcPort++
	if err := a.Place(ctx, testFlow, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.Place(ctx, other, 3); err != nil {
		t.Fatalf("primary of the second role (lower election ID than the first's): %v", err)
	}
	a2 := dial(t, fencedConfig(f, "shard-1", ElectionID{Low: 10}))
	if err := a2.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Place(ctx, testFlow, 2); !errors.Is(err, ErrFenced) {
		t.Errorf("superseded client of shard-1: %v, want ErrFenced", err)
	}
	if err := b.Place(ctx, other, 0); err != nil || b.Fenced() {
		t.Errorf("shard-2's primary after shard-1 changed hands: %v (fenced %v), want it unaffected", err, b.Fenced())
	}
	if k, err := f.where(other); err != nil || k != 0 {
		t.Errorf("shard-2's flow: switch %d, %v; want 0", k, err)
	}
}

// TestFailWaitsForTheFencingNotice: a write refused while the session
// still believes it is primary waits for the arbitration notice that
// explains it, so the error says fenced even when the refusal arrives
// first.
func TestFailWaitsForTheFencingNotice(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Role, cfg.ElectionID, cfg.CallTimeout = "r", ElectionID{Low: 3}, 2*time.Second
	cfg.Logger = slog.New(slog.DiscardHandler)
	s := newSession(&cfg, Leaf{Name: "leaf1", DeviceID: 1}, nil, nil)
	s.mu.Lock()
	s.arbitrated = true
	s.setRoleLocked(true, nil)
	gen := s.gen
	s.mu.Unlock()
	go func() {
		time.Sleep(20 * time.Millisecond)
		s.onArbitration(&p4v1.MasterArbitrationUpdate{DeviceId: 1, Role: &p4v1.Role{Name: "r"}, ElectionId: &p4v1.Uint128{Low: 4},
			Status: &rpcstatus.Status{Code: int32(code.Code_ALREADY_EXISTS)}})
	}()
	err := s.fail(gen, "write", status.Error(codes.PermissionDenied, "election id 3 is not the primary's (4)"))
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("fail: %v, want ErrFenced once the notice arrived", err)
	}
	// A refusal with no notice at all (no newer primary) is not fenced.
	s2 := newSession(&cfg, Leaf{Name: "leaf1", DeviceID: 1}, nil, nil)
	s2.cfg.CallTimeout = 30 * time.Millisecond
	s2.mu.Lock()
	s2.arbitrated = true
	s2.setRoleLocked(true, nil)
	gen = s2.gen
	s2.mu.Unlock()
	err = s2.fail(gen, "write", status.Error(codes.PermissionDenied, "no"))
	if !errors.Is(err, ErrNotPrimary) || errors.Is(err, ErrFenced) {
		t.Errorf("fail without a notice: %v, want ErrNotPrimary only", err)
	}
}
