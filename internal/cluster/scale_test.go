package cluster

import (
	"context"
	"testing"
	"time"
)

// TestScale measures one replica holding 10,000 flows (every shard) on
// this machine: the first save, a steady tick, a tick with 1% reroutes and
// the reads a new owner makes to resume them all. `make etcd-test` prints
// the figures (docs/performance.md, flows per replica).
func TestScale(t *testing.T) {
	c := etcdOrSkip(t)
	admin := adminClient(t, c)
	const prefix = "/t/scale/"
	const n = 10000
	m := join(t, c, prefix, "solo", nil)
	waitFor(t, 20*time.Second, "solo owns 64 shards", func() bool { return len(m.Owned()) == 64 })
	ctx := context.Background()
	flows := testFlows(n)
	t0 := time.Now()
	if err := m.PutFlows(ctx, flows...); err != nil {
		t.Fatal(err)
	}
	put := time.Since(t0)
	states := wantedStates(m, flows)
	t0 = time.Now()
	if w, err := m.SaveFlows(ctx, states); err != nil || w != n {
		t.Fatalf("first save wrote %d of %d: %v", w, n, err)
	}
	first := time.Since(t0)

	_, r0 := owners(t, admin, prefix)
	t0 = time.Now()
	if w, err := m.SaveFlows(ctx, states); err != nil || w != 0 {
		t.Fatalf("steady tick wrote %d: %v", w, err)
	}
	steady := time.Since(t0)
	_, r1 := owners(t, admin, prefix)

	for i := 0; i < n; i += 100 {
		states[i].Switch = (states[i].Switch + 1) % 4
	}
	t0 = time.Now()
	w, err := m.SaveFlows(ctx, states)
	if err != nil || w != n/100 {
		t.Fatalf("1%% tick wrote %d, want %d: %v", w, n/100, err)
	}
	moved := time.Since(t0)
	_, r2 := owners(t, admin, prefix)

	t0 = time.Now()
	loaded := 0
	for s := range m.Shards() {
		st, _, err := m.LoadShard(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		loaded += len(st)
	}
	load := time.Since(t0)
	if loaded != n {
		t.Fatalf("loaded %d states, want %d", loaded, n)
	}
	perSec := float64(n) / first.Seconds()
	t.Logf("%d flows on one replica: put the set %v; first save %v (%.0f states/s); steady tick %v, %d etcd writes; 1%% reroutes tick %v, %d states in %d etcd writes; resume (LoadShard ×64) %v",
		n, put.Round(time.Millisecond), first.Round(time.Millisecond), perSec, steady.Round(time.Microsecond), r1-r0,
		moved.Round(time.Millisecond), w, r2-r1, load.Round(time.Millisecond))
	// A tick writes one transaction per shard with a change (≤ 128 states
	// each, 8 shards at once), so its cost is bounded by the shard count,
	// not the flow count, once every shard has a reroute.
	t.Logf("the 1%% tick takes %.0f%% of the default 500 ms control interval", 100*moved.Seconds()/0.5)
}
