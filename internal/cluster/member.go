package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/proflow-sdn/proflow"
)

// Member is one replica's membership in the shared flow set: the lease it
// holds, the shards it owns, and its access to the shared state. Create it
// with Join and stop it with Close.
type Member struct {
	cfg   Config
	cli   *clientv3.Client
	start time.Time // origin of the Config.Clock instants below

	lease     atomic.Int64 // clientv3.LeaseID
	ttl       time.Duration
	renewed   atomic.Pointer[instant] // when the last acknowledged keepalive was sent
	leaseLost atomic.Bool
	paused    atomic.Bool // keepalives stopped (tests: a replica cut from etcd)
	closed    atomic.Bool

	mu   sync.Mutex
	held map[int]int64 // shard → epoch (owner key's create revision), confirmed at etcd
	view map[int]int64 // what OnChange last announced; loop goroutine only

	cacheMu sync.Mutex
	cache   map[proflow.FlowID]cachedState

	nudge     chan struct{}
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// Join connects to etcd, takes a lease and starts claiming shards in the
// background (see the package doc). The member owns nothing when Join
// returns; OnChange or Owned say when it does.
//
// Join fails within Config.DialTimeout when etcd does not answer (no
// endpoint listening, or one that accepts and never replies), with an
// error naming the endpoints; the client dials lazily, so the bound is on
// Join's own first requests.
func Join(ctx context.Context, cfg Config) (*Member, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		Logger:      zap.NewNop(),
		Context:     context.WithoutCancel(ctx),
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to %v: %w", cfg.Endpoints, err)
	}
	m := &Member{
		cfg: cfg, cli: cli, start: cfg.Clock.Now(),
		held: make(map[int]int64), view: make(map[int]int64),
		cache: make(map[proflow.FlowID]cachedState),
		nudge: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	jctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	err = m.checkShards(jctx)
	if err == nil {
		err = m.newLease(jctx)
	}
	if err != nil {
		cli.Close()
		if jctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("cluster: etcd at %v did not answer within %v (DialTimeout): %w", cfg.Endpoints, cfg.DialTimeout, err)
		}
		return nil, err
	}
	m.wg.Add(3)
	go m.keepAlive()
	go m.watch()
	go m.run()
	return m, nil
}

// checkShards records the shard count under the prefix, or checks it.
func (m *Member) checkShards(ctx context.Context) error {
	key := m.cfg.Prefix + "shards"
	want := strconv.Itoa(m.cfg.Shards)
	resp, err := m.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, want)).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return fmt.Errorf("cluster: record shard count at %s: %w", key, err)
	}
	if resp.Succeeded {
		return nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 1 && string(kvs[0].Value) != want {
		return fmt.Errorf("%w: %s holds %s, this replica has %s", ErrShardCount, key, kvs[0].Value, want)
	}
	return nil
}

// newLease grants a lease and registers the member under it.
func (m *Member) newLease(ctx context.Context) error {
	sent := m.now()
	lr, err := m.cli.Grant(ctx, int64((m.cfg.LeaseTTL+time.Second-1)/time.Second))
	if err != nil {
		return fmt.Errorf("cluster: grant lease: %w", err)
	}
	if _, err := m.cli.Put(ctx, m.memberKey(), m.cfg.Replica, clientv3.WithLease(lr.ID)); err != nil {
		return fmt.Errorf("cluster: register %s: %w", m.memberKey(), err)
	}
	m.ttl = time.Duration(lr.TTL) * time.Second
	m.lease.Store(int64(lr.ID))
	m.renewed.Store(&sent)
	m.leaseLost.Store(false)
	m.cfg.Logger.Info("cluster: joined", "replica", m.cfg.Replica, "lease", fmt.Sprintf("%x", lr.ID), "ttl", m.ttl)
	return nil
}

// instant is a moment as the member's two clocks read it: Config.Clock
// (since the member started) and the host's uptime.
type instant struct{ clock, uptime time.Duration }

func (m *Member) now() instant {
	return instant{clock: m.cfg.Clock.Now().Sub(m.start), uptime: m.cfg.uptime()}
}

// since returns how long ago i was: the longer of the two clocks' counts,
// so that neither a host suspend (Go's monotonic clock stops meanwhile,
// etcd's lease timer does not) nor a Config.Clock slower than real time
// makes a keepalive look more recent than it is.
func (m *Member) since(i *instant) time.Duration {
	n := m.now()
	return max(n.clock-i.clock, n.uptime-i.uptime)
}

func (m *Member) memberKey() string { return m.cfg.Prefix + "members/" + m.cfg.Replica }

func (m *Member) ownerKey(shard int) string { return fmt.Sprintf("%sowners/%04d", m.cfg.Prefix, shard) }

// Replica returns the member's replica name.
func (m *Member) Replica() string { return m.cfg.Replica }

// Shards returns the number of shards.
func (m *Member) Shards() int { return m.cfg.Shards }

// Shard returns the shard of flow.
func (m *Member) Shard(flow proflow.FlowID) int { return ShardOf(flow, m.cfg.Shards) }

// ShardOf returns the shard of flow among shards: FNV-1a of flow.String().
func ShardOf(flow proflow.FlowID, shards int) int {
	h := fnv.New64a()
	h.Write([]byte(flow.String()))
	return int(h.Sum64() % uint64(shards))
}

// Writable reports whether the member may write to switches now: it is
// open, its lease exists, and the last keepalive etcd acknowledged was sent
// less than StopWritingAfter ago, by Config.Clock and by the host's uptime
// (which counts the time the host was suspended) alike.
func (m *Member) Writable() bool {
	return !m.closed.Load() && !m.leaseLost.Load() &&
		m.since(m.renewed.Load()) < m.cfg.StopWritingAfter
}

// Epoch returns the epoch of the member's ownership of shard, and false
// when it does not own it or is not writable.
func (m *Member) Epoch(shard int) (uint64, bool) {
	if !m.Writable() {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ep, ok := m.held[shard]
	return uint64(ep), ok
}

// Fence returns the member's fence.
func (m *Member) Fence() Fence { return m }

// Owned returns the shards the member owns, in increasing order; none
// while it is not writable.
func (m *Member) Owned() []int {
	if !m.Writable() {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int, 0, len(m.held))
	for s := range m.held {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Owns reports whether the member decides for flow now.
func (m *Member) Owns(flow proflow.FlowID) bool {
	_, ok := m.Epoch(m.Shard(flow))
	return ok
}

// Close stops the member, reports every owned shard lost and revokes its
// lease, which hands its shards to the others at once. Close does not touch
// the switches: the placements stay as they are.
func (m *Member) Close(ctx context.Context) error {
	err := ErrClosed
	m.closeOnce.Do(func() {
		m.halt()
		m.announce()
		_, err = m.cli.Revoke(ctx, clientv3.LeaseID(m.lease.Load()))
		if err != nil {
			err = fmt.Errorf("cluster: revoke lease: %w", err)
		}
		err = errors.Join(err, m.cli.Close())
	})
	return err
}

// halt stops the goroutines; the member is no longer writable.
func (m *Member) halt() {
	m.closed.Store(true)
	close(m.stop)
	m.wg.Wait()
}

// kill stops the member as a crash would: no announcement, no revoke; the
// lease expires at etcd.
func (m *Member) kill() {
	m.closeOnce.Do(func() {
		m.halt()
		m.cli.Close()
	})
}

func (m *Member) poke() {
	select {
	case m.nudge <- struct{}{}:
	default:
	}
}

// keepAlive renews the lease every KeepAliveInterval with one
// KeepAliveOnce, recording when each acknowledged one was sent.
func (m *Member) keepAlive() {
	defer m.wg.Done()
	t := m.cfg.Clock.NewTicker(m.cfg.KeepAliveInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C():
		}
		if m.paused.Load() || m.leaseLost.Load() {
			continue
		}
		id := clientv3.LeaseID(m.lease.Load())
		sent := m.now()
		ctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(context.Background()), m.cfg.RequestTimeout)
		resp, err := m.cli.KeepAliveOnce(ctx, id)
		cancel()
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			m.cfg.Logger.Warn("cluster: lease expired", "replica", m.cfg.Replica, "lease", fmt.Sprintf("%x", id))
			m.leaseLost.Store(true)
			m.poke()
		case err != nil:
			m.cfg.Logger.Warn("cluster: keepalive", "replica", m.cfg.Replica, "err", err)
		case resp.TTL > 0 && int64(id) == m.lease.Load():
			m.renewed.Store(&sent)
		}
	}
}

// watch nudges the balancer whenever a member or owner key changes. When
// etcd ends either watch, it watches both again after KeepAliveInterval.
func (m *Member) watch() {
	defer m.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-m.stop
		cancel()
	}()
	for ctx.Err() == nil {
		m.watchKeys(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(m.cfg.KeepAliveInterval):
		}
	}
}

// watchKeys watches the member and owner keys, nudging the balancer on
// every change, until ctx ends or etcd ends either watch (a compacted
// revision to resume from, say); it cancels both before it returns, so no
// watch is left running unread.
func (m *Member) watchKeys(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mw := m.cli.Watch(ctx, m.cfg.Prefix+"members/", clientv3.WithPrefix())
	ow := m.cli.Watch(ctx, m.cfg.Prefix+"owners/", clientv3.WithPrefix())
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case resp, ok = <-mw:
		case resp, ok = <-ow:
		}
		err := resp.Err()
		if !ok || err != nil {
			if ctx.Err() == nil {
				m.cfg.Logger.Warn("cluster: watch of the member and owner keys ended; watching again", "replica", m.cfg.Replica, "err", err)
			}
			m.poke() // what changed since, the watch will not tell
			return
		}
		m.poke()
	}
}

// run balances the shards every BalanceInterval and on every nudge, and
// announces the fence going down within one KeepAliveInterval.
func (m *Member) run() {
	defer m.wg.Done()
	bt := m.cfg.Clock.NewTicker(m.cfg.BalanceInterval)
	defer bt.Stop()
	gt := m.cfg.Clock.NewTicker(m.cfg.KeepAliveInterval)
	defer gt.Stop()
	for {
		m.balance()
	wait:
		for {
			select {
			case <-m.stop:
				return
			case <-bt.C():
				break wait
			case <-m.nudge:
				break wait
			case <-gt.C():
				m.announce()
				if m.leaseLost.Load() {
					break wait
				}
			}
		}
	}
}

// announce calls OnChange with the difference between Owned and what was
// last announced.
func (m *Member) announce() {
	now := make(map[int]int64)
	if m.Writable() {
		m.mu.Lock()
		for s, ep := range m.held {
			now[s] = ep
		}
		m.mu.Unlock()
	}
	var gained, lost []int
	for s, ep := range m.view {
		if now[s] != ep {
			lost = append(lost, s)
		}
	}
	for s, ep := range now {
		if m.view[s] != ep {
			gained = append(gained, s)
		}
	}
	if len(gained) == 0 && len(lost) == 0 {
		return
	}
	slices.Sort(gained)
	slices.Sort(lost)
	m.view = now
	m.dropCache(lost)
	m.cfg.Logger.Info("cluster: ownership", "replica", m.cfg.Replica, "gained", gained, "lost", lost, "owned", len(now))
	if m.cfg.OnChange != nil {
		m.cfg.OnChange(gained, lost)
	}
}

// balance brings the member's shards to ceil(S / live members): it renews a
// lost lease, forgets shards it no longer owns at etcd, releases the extra
// ones and claims free ones.
func (m *Member) balance() {
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.RequestTimeout)
	defer cancel()
	if m.leaseLost.Load() {
		m.mu.Lock()
		clear(m.held)
		m.mu.Unlock()
		m.announce()
		if err := m.newLease(ctx); err != nil {
			m.cfg.Logger.Warn("cluster: new lease", "replica", m.cfg.Replica, "err", err)
			return
		}
	}
	if !m.Writable() {
		m.announce()
		return
	}
	lease := m.lease.Load()
	resp, err := m.cli.Txn(ctx).Then(
		clientv3.OpGet(m.cfg.Prefix+"members/", clientv3.WithPrefix(), clientv3.WithKeysOnly()),
		clientv3.OpGet(m.cfg.Prefix+"owners/", clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		m.cfg.Logger.Warn("cluster: read owners", "replica", m.cfg.Replica, "err", err)
		return
	}
	count := make(map[string]int) // live replica → shards it owns
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		count[string(kv.Key[len(m.cfg.Prefix+"members/"):])] = 0
	}
	taken := make(map[int]bool)
	mine := make(map[int]int64)
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		s, err := strconv.Atoi(string(kv.Key[len(m.cfg.Prefix+"owners/"):]))
		if err != nil || s < 0 || s >= m.cfg.Shards {
			continue
		}
		taken[s] = true
		if n, ok := count[string(kv.Value)]; ok {
			count[string(kv.Value)] = n + 1
		}
		if kv.Lease == lease && string(kv.Value) == m.cfg.Replica {
			mine[s] = kv.CreateRevision
		}
	}
	m.mu.Lock()
	m.held = mine
	m.mu.Unlock()
	m.announce()

	count[m.cfg.Replica] = len(mine)
	if n := m.surplus(count, len(taken)); n > 0 {
		m.release(n)
		return
	}
	live := len(count)
	m.claim(ctx, (m.cfg.Shards+live-1)/live-len(mine), taken, lease)
}

// surplus returns how many shards the member should release, given the
// shards each live replica owns and how many are owned in all. Nobody keeps
// more than ⌈S/L⌉; when every shard is owned and some replica has fewer
// than ⌊S/L⌋, the replica with the most (the first by name among equals)
// gives up one, so that the counts end within one of each other.
func (m *Member) surplus(count map[string]int, owned int) int {
	live := len(count)
	mine := count[m.cfg.Replica]
	lo, hi := m.cfg.Shards/live, (m.cfg.Shards+live-1)/live
	if mine > hi {
		return mine - hi
	}
	if owned < m.cfg.Shards || mine <= lo {
		return 0
	}
	starved := false
	for r, n := range count {
		if n < lo {
			starved = true
		}
		if n > mine || n == mine && r < m.cfg.Replica {
			return 0
		}
	}
	if starved {
		return 1
	}
	return 0
}

// release gives up n shards, highest-numbered first: it stops deciding for
// them (OnChange), waits StopWritingAfter on the member's clock, then
// deletes their owner keys. The wait gives a hand-over the margin a lease
// expiry gives: a switch write that passed Owns or Epoch just before the
// release has that long to finish before another replica can own the
// shard. The loop goroutine waits here, announcing a fence going down
// meanwhile; a stopping member returns at once and leaves the keys to its
// lease (Close revokes it).
func (m *Member) release(n int) {
	m.mu.Lock()
	shards := make([]int, 0, len(m.held))
	for s := range m.held {
		shards = append(shards, s)
	}
	slices.Sort(shards)
	shards = shards[len(shards)-n:]
	epochs := make([]int64, n)
	for i, s := range shards {
		epochs[i] = m.held[s]
		delete(m.held, s)
	}
	m.mu.Unlock()
	m.announce()
	if !m.handOverMargin() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.RequestTimeout)
	defer cancel()
	for i, s := range shards {
		key := m.ownerKey(s)
		_, err := m.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", epochs[i])).
			Then(clientv3.OpDelete(key)).Commit()
		if err != nil {
			m.cfg.Logger.Warn("cluster: release", "replica", m.cfg.Replica, "shard", s, "err", err)
		}
	}
}

// handOverMargin waits StopWritingAfter on the member's clock, announcing
// every KeepAliveInterval as run does, and reports false when the member
// stops meanwhile.
func (m *Member) handOverMargin() bool {
	deadline := m.cfg.Clock.NewTicker(m.cfg.StopWritingAfter)
	defer deadline.Stop()
	gt := m.cfg.Clock.NewTicker(m.cfg.KeepAliveInterval)
	defer gt.Stop()
	for {
		select {
		case <-m.stop:
			return false
		case <-deadline.C():
			return true
		case <-gt.C():
			m.announce()
		}
	}
}

// claim creates owner keys for up to n free shards, starting at a place
// derived from the replica's name so that replicas rarely race for one.
func (m *Member) claim(ctx context.Context, n int, taken map[int]bool, lease int64) {
	if n <= 0 || len(taken) == m.cfg.Shards {
		return
	}
	h := fnv.New32a()
	h.Write([]byte(m.cfg.Replica))
	off := int(h.Sum32() % uint32(m.cfg.Shards))
	got := 0
	for i := 0; i < m.cfg.Shards && got < n && ctx.Err() == nil && m.Writable(); i++ {
		s := (off + i) % m.cfg.Shards
		if taken[s] {
			continue
		}
		key := m.ownerKey(s)
		resp, err := m.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, m.cfg.Replica, clientv3.WithLease(clientv3.LeaseID(lease)))).Commit()
		if err != nil {
			m.cfg.Logger.Warn("cluster: claim", "replica", m.cfg.Replica, "shard", s, "err", err)
			break
		}
		if !resp.Succeeded {
			continue
		}
		got++
		m.mu.Lock()
		m.held[s] = resp.Header.Revision
		m.mu.Unlock()
	}
	m.announce()
}
