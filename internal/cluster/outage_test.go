package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/etcdtest"
)

// With every etcd endpoint unreachable, a request the member makes for a
// caller fails within Config.RequestTimeout, whatever the caller's
// context: the control loop that saves placements, and the sync that holds
// the service's lock while it loads a shard or lists the set, go on.
// Before the fix a SaveFlow started as etcd went away blocked until etcd
// came back (WithRequireLeader fails fast only when some member answers).
func TestRequestsBoundedWhenEtcdUnreachable(t *testing.T) {
	etcdOrSkip(t)
	c, err := etcdtest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	cfg := testConfig(c.Endpoints(), "/t/outage/", "a", ttl)
	// The fence stays up as long as it may, so that SaveFlows meets the
	// outage with every shard writable.
	cfg.RequestTimeout, cfg.StopWritingAfter = 500*time.Millisecond, ttl-cfg.KeepAliveInterval
	m, err := Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		m.Close(ctx) // the lease cannot be revoked: etcd is gone
	}()
	waitFor(t, 20*time.Second, "a owns every shard", func() bool { return len(m.Owned()) == cfg.Shards })
	flows := testFlows(200)
	flow := flows[0].ID
	if err := m.PutFlows(context.Background(), flows...); err != nil {
		t.Fatal(err)
	}
	c.Kill(0)

	// Each call gets a context far longer than the request timeout, as a
	// control loop's would be.
	bound := 2 * cfg.RequestTimeout
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"SaveFlow", func(ctx context.Context) error { _, err := m.SaveFlow(ctx, wantedState(flow)); return err }},
		// 200 flows over 64 shards, 8 written at once: without a bound on
		// the whole call, 8 rounds of RequestTimeout each.
		{"SaveFlows", func(ctx context.Context) error { _, err := m.SaveFlows(ctx, wantedStates(m, flows)); return err }},
		{"LoadShard", func(ctx context.Context) error { _, _, err := m.LoadShard(ctx, m.Shard(flow)); return err }},
		{"LoadFlow", func(ctx context.Context) error { _, _, _, err := m.LoadFlow(ctx, flow); return err }},
		{"ListFlows", func(ctx context.Context) error { _, _, err := m.ListFlows(ctx); return err }},
	}
	for _, k := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		start := time.Now()
		err := k.call(ctx)
		took := time.Since(start)
		cancel()
		t.Logf("%s with etcd unreachable: %v after %v", k.name, err, took.Round(time.Millisecond))
		if err == nil {
			t.Errorf("%s with etcd unreachable succeeded", k.name)
		}
		if took > bound {
			t.Errorf("%s with etcd unreachable took %v, want ≤ 2 × RequestTimeout (%v)", k.name, took.Round(time.Millisecond), cfg.RequestTimeout)
		}
	}
}
