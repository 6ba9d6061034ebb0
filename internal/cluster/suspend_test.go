package cluster

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// A host suspended (a VM paused, a laptop asleep) for a lease TTL comes
// back unwritable at once: etcd counted the TTL meanwhile and another
// replica may own the shards, though Go's monotonic clock, which stops
// while the host sleeps, says the last keepalive was just sent. The fence
// comes back with the next keepalive etcd acknowledges. Before the fix
// Writable measured the monotonic clock alone and stayed up until a
// keepalive after the wake-up failed.
func TestFenceCountsHostSuspend(t *testing.T) {
	c := etcdOrSkip(t)
	var slept atomic.Int64 // ns the host has been suspended
	cfg := testConfig(c.Endpoints(), "/t/suspend/", "a", ttl)
	cfg.uptime = func() time.Duration { return hostUptime() + time.Duration(slept.Load()) }
	m, err := Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	waitFor(t, 20*time.Second, "a owns every shard", func() bool { return len(m.Owned()) == cfg.Shards })
	flow := testFlows(1)[0].ID
	if err := m.PutFlows(context.Background(), proflow.ProtectedFlow{ID: flow}); err != nil {
		t.Fatal(err)
	}

	// The host sleeps a TTL: no keepalive is sent meanwhile, and the
	// monotonic clock does not move.
	m.paused.Store(true)
	slept.Add(int64(ttl))
	if m.Writable() {
		t.Error("Writable right after the host slept a lease TTL")
	}
	if n := len(m.Owned()); n != 0 {
		t.Errorf("Owned lists %d shards right after the host slept a lease TTL, want none", n)
	}
	if ep, ok := m.Epoch(m.Shard(flow)); ok {
		t.Errorf("Epoch of the flow's shard = %d right after the host slept a lease TTL, want none", ep)
	}
	if _, err := m.SaveFlow(context.Background(), wantedState(flow)); !errors.Is(err, ErrNotWritable) {
		t.Errorf("SaveFlow right after the host slept a lease TTL = %v, want ErrNotWritable", err)
	}

	// Awake: the lease is in fact alive (the test only moved the clock),
	// so the next keepalive is acknowledged and the fence comes back.
	m.paused.Store(false)
	d := waitFor(t, 2*ttl, "a writable again after a keepalive", func() bool { return m.Writable() && len(m.Owned()) == cfg.Shards })
	t.Logf("fence back %v after the wake-up (keepalive interval %v)", d.Round(time.Millisecond), cfg.KeepAliveInterval)
}

// stillClock is a proflow.Clock that stands still: its tickers never fire.
type stillClock struct{ now time.Time }

func (c stillClock) Now() time.Time                       { return c.now }
func (stillClock) NewTicker(time.Duration) proflow.Ticker { return stillTicker{} }

type stillTicker struct{}

func (stillTicker) C() <-chan time.Time { return nil }
func (stillTicker) Stop()               {}

// With an injected Clock that runs slower than real time (here it stands
// still, so no keepalive is ever sent), the fence still goes down before
// the lease can expire at etcd, which counts the TTL in real time. Before
// the fix Writable measured the injected clock alone and stayed up after
// the lease had expired.
func TestFenceBoundByRealTimeWithInjectedClock(t *testing.T) {
	c := etcdOrSkip(t)
	cfg := testConfig(c.Endpoints(), "/t/stillclock/", "a", ttl)
	cfg.Clock = stillClock{now: time.Now()}
	start := time.Now()
	m, err := Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	waitFor(t, cfg.StopWritingAfter, "a owns a shard", func() bool { return len(m.Owned()) > 0 })
	waitFor(t, 2*ttl, "a unwritable", func() bool { return !m.Writable() })
	if d := time.Since(start); d >= ttl {
		t.Errorf("a unwritable %v after joining, not before its lease could expire (TTL %v)", d.Round(time.Millisecond), ttl)
	} else {
		t.Logf("a unwritable %v after joining (StopWritingAfter %v, TTL %v)", d.Round(time.Millisecond), cfg.StopWritingAfter, ttl)
	}
}
