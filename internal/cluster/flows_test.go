package cluster

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"

	"github.com/proflow-sdn/proflow/internal/etcdtest"
	"github.com/proflow-sdn/proflow/internal/syncbuf"
)

// joinLogged joins with the member's log (Warn and above) in log.
func joinLogged(t *testing.T, c *etcdtest.Cluster, prefix, replica string, log *syncbuf.Buffer) *Member {
	t.Helper()
	cfg := testConfig(c.Endpoints(), prefix, replica, ttl)
	cfg.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// One value under flows/ that does not decode (an operator's typo) does
// not hide the rest of the set: ListFlows skips it and logs its key, as
// WatchFlows skips it. Before the fix ListFlows failed as a whole, and a
// replica listing the set retried forever and protected nothing.
func TestListFlowsSkipsUndecodable(t *testing.T) {
	c := etcdOrSkip(t)
	admin := adminClient(t, c)
	const prefix = "/t/junkflows/"
	var log syncbuf.Buffer
	m := joinLogged(t, c, prefix, "a", &log)
	ctx := context.Background()
	flows := testFlows(8)
	if err := m.PutFlows(ctx, flows...); err != nil {
		t.Fatal(err)
	}
	junk := []string{prefix + "flows/junk", prefix + "flows/" + testFlows(9)[8].ID.String()}
	for _, k := range junk {
		if _, err := admin.Put(ctx, k, "{not json"); err != nil {
			t.Fatal(err)
		}
	}
	got, rev, err := m.ListFlows(ctx)
	if err != nil {
		t.Fatalf("ListFlows with undecodable values = %v, want the others", err)
	}
	if len(got) != len(flows) || rev == 0 {
		t.Fatalf("ListFlows = %d flows at revision %d, want %d", len(got), rev, len(flows))
	}
	put := make(map[proflow.FlowID]bool)
	for _, f := range flows {
		put[f.ID] = true
	}
	for _, f := range got {
		if !put[f.ID] {
			t.Errorf("ListFlows returned %v, not one of the flows put", f.ID)
		}
		delete(put, f.ID)
	}
	for _, k := range junk {
		if !strings.Contains(log.String(), k) {
			t.Errorf("the skipped key %s is not logged; log:\n%s", k, log.String())
		}
	}

	// The watch skips (and logs) them too, and goes on with the next
	// change.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	events := m.WatchFlows(wctx, rev)
	if _, err := admin.Put(ctx, prefix+"flows/junk2", "[]"); err != nil {
		t.Fatal(err)
	}
	if err := m.PutFlows(ctx, testFlows(10)[9]); err != nil {
		t.Fatal(err)
	}
	ev := <-events
	if ev.Err != nil || ev.Deleted || ev.Flow.ID != testFlows(10)[9].ID {
		t.Errorf("watch event = %+v, want the flow put after the undecodable value", ev)
	}
	waitFor(t, 5*time.Second, "the watch logs the skipped key", func() bool {
		return strings.Contains(log.String(), prefix+"flows/junk2")
	})
}

// One stored state that does not decode does not hide the rest of its
// shard: LoadShard returns the others, logs the bad key, and deletes
// nothing (the owner's next save of that flow writes over it). Before the
// fix LoadShard failed as a whole, and a new owner resumed none of the
// shard's flows, at every sync.
func TestLoadShardSkipsUndecodable(t *testing.T) {
	c := etcdOrSkip(t)
	admin := adminClient(t, c)
	const prefix = "/t/junkstate/"
	var log syncbuf.Buffer
	m := joinLogged(t, c, prefix, "a", &log)
	waitFor(t, 20*time.Second, "a owns every shard", func() bool { return len(m.Owned()) == m.Shards() })
	ctx := context.Background()
	flows := testFlows(300)
	if err := m.PutFlows(ctx, flows...); err != nil {
		t.Fatal(err)
	}
	// Three flows of one shard: two stored, one with a value that is not
	// a state.
	byShard := make(map[int][]proflow.FlowID)
	var shard int
	for _, f := range flows {
		s := m.Shard(f.ID)
		byShard[s] = append(byShard[s], f.ID)
		if len(byShard[s]) == 3 {
			shard = s
			break
		}
	}
	good, bad := byShard[shard][:2], byShard[shard][2]
	if len(good) != 2 {
		t.Fatal("no shard with three of the flows")
	}
	if n, err := m.SaveFlows(ctx, []FlowState{wantedState(good[0]), wantedState(good[1])}); err != nil || n != 2 {
		t.Fatalf("SaveFlows = %d, %v; want 2 stored", n, err)
	}
	badKey := m.stateKey(shard, bad)
	if _, err := admin.Put(ctx, badKey, "{not json"); err != nil {
		t.Fatal(err)
	}

	states, revs, err := m.LoadShard(ctx, shard)
	if err != nil {
		t.Fatalf("LoadShard with an undecodable state = %v, want the others", err)
	}
	if len(states) != 2 || len(revs) != 2 {
		t.Fatalf("LoadShard = %d states, %d revisions; want the 2 stored", len(states), len(revs))
	}
	for i, st := range states {
		if want := wantedState(good[i]); st.Flow != want.Flow || st.Switch != want.Switch || st.Baseline == nil || *st.Baseline != *want.Baseline {
			t.Errorf("state %d = %+v, want %+v", i, st, want)
		}
		if revs[i] == 0 {
			t.Errorf("state %d loaded with revision 0", i)
		}
	}
	if !strings.Contains(log.String(), badKey) {
		t.Errorf("the undecodable key %s is not logged; log:\n%s", badKey, log.String())
	}
	resp, err := admin.Get(ctx, badKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "{not json" {
		t.Errorf("the undecodable value was changed or deleted: %v", resp.Kvs)
	}
}
