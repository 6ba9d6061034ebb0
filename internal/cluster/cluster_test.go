package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/proflow-sdn/proflow"

	"github.com/proflow-sdn/proflow/internal/etcdtest"
)

// ttl is the tests' lease TTL: etcd 3.4 with a 1 s election timeout grants
// leases of 2 s and more.
const ttl = 3 * time.Second

// waitFor polls cond every 20 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

func join(t *testing.T, c *etcdtest.Cluster, prefix, replica string, onChange func(gained, lost []int)) *Member {
	t.Helper()
	cfg := testConfig(c.Endpoints(), prefix, replica, ttl)
	cfg.OnChange = onChange
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// owners returns shard → replica as etcd has it now, and the revision.
func owners(t *testing.T, cli *clientv3.Client, prefix string) (map[int]string, int64) {
	t.Helper()
	resp, err := cli.Get(context.Background(), prefix+"owners/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int]string)
	for _, kv := range resp.Kvs {
		s, _ := strconv.Atoi(strings.TrimPrefix(string(kv.Key), prefix+"owners/"))
		out[s] = string(kv.Value)
	}
	return out, resp.Header.Revision
}

// balanced reports whether all shards are owned, each replica of names
// holding ⌊S/n⌋ or ⌈S/n⌉.
func balanced(got map[int]string, shards int, names ...string) bool {
	if len(got) != shards {
		return false
	}
	count := make(map[string]int)
	for _, r := range got {
		count[r]++
	}
	lo, hi := shards/len(names), (shards+len(names)-1)/len(names)
	for _, n := range names {
		if count[n] < lo || count[n] > hi {
			return false
		}
	}
	return len(count) == len(names)
}

// checkHistory replays the owner keys' history from rev to now: no owner
// key is ever written over (every put creates it), so no shard ever has two
// owners. It returns the number of ownership creations.
func checkHistory(t *testing.T, cli *clientv3.Client, prefix string, from int64) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, to := owners(t, cli, prefix)
	owner := make(map[string]string)
	creates := 0
	for resp := range cli.Watch(ctx, prefix+"owners/", clientv3.WithPrefix(), clientv3.WithRev(from)) {
		if err := resp.Err(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range resp.Events {
			key := string(ev.Kv.Key)
			switch ev.Type {
			case clientv3.EventTypePut:
				if prev, ok := owner[key]; ok || !ev.IsCreate() {
					t.Errorf("rev %d: %s written by %s over %q (version %d)", ev.Kv.ModRevision, key, ev.Kv.Value, prev, ev.Kv.Version)
				}
				owner[key] = string(ev.Kv.Value)
				creates++
			case clientv3.EventTypeDelete:
				delete(owner, key)
			}
		}
		if resp.Header.Revision >= to {
			break
		}
	}
	return creates
}

// viewChecker samples the members' own views every 5 ms and counts the
// instants where two of them claim the same shard.
type viewChecker struct {
	stop    chan struct{}
	done    chan struct{}
	samples atomic.Int64
	errs    []string
}

func checkViews(ms ...*Member) *viewChecker {
	v := &viewChecker{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(v.done)
		for {
			select {
			case <-v.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			seen := make(map[int]string)
			for _, m := range ms {
				for _, s := range m.Owned() {
					if o, ok := seen[s]; ok && len(v.errs) < 10 {
						v.errs = append(v.errs, fmt.Sprintf("shard %d owned by %s and %s", s, o, m.Replica()))
					}
					seen[s] = m.Replica()
				}
			}
			v.samples.Add(1)
		}
	}()
	return v
}

func (v *viewChecker) finish(t *testing.T) {
	t.Helper()
	close(v.stop)
	<-v.done
	for _, e := range v.errs {
		t.Error("views:", e)
	}
	t.Logf("views: %d samples, %d instants with a shard owned twice", v.samples.Load(), len(v.errs))
}

// steadyTick saves every flow's unchanged state on every replica and
// returns how many etcd revisions (write transactions) and states it wrote.
func steadyTick(t *testing.T, cli *clientv3.Client, prefix string, flows []proflow.ProtectedFlow, h *helper, ms ...*Member) (revs int64, states int) {
	t.Helper()
	_, r0 := owners(t, cli, prefix)
	for _, m := range ms {
		n, err := m.SaveFlows(context.Background(), wantedStates(m, flows))
		if err != nil {
			t.Fatal(err)
		}
		states += n
	}
	if h != nil {
		states += h.do(t, "save")
	}
	_, r1 := owners(t, cli, prefix)
	return r1 - r0, states
}

// TestReplicas is the acceptance 2 and 3 at the package level:
// three replicas (one a child process), 3,000 flows, exactly one owner per
// shard, a replica killed with SIGKILL and taken over within TTL + 2
// balance intervals with its placements unchanged, and no etcd writes in a
// steady state.
func TestReplicas(t *testing.T) {
	c := etcdOrSkip(t)
	admin := adminClient(t, c)
	const prefix = "/t/replicas/"
	_, startRev := owners(t, admin, prefix)
	var logMu sync.Mutex
	var changes []string
	record := func(name string) func(g, l []int) {
		return func(g, l []int) {
			logMu.Lock()
			defer logMu.Unlock()
			changes = append(changes, fmt.Sprintf("%s +%v -%v", name, g, l))
		}
	}
	a := join(t, c, prefix, "a", record("a"))
	b := join(t, c, prefix, "b", record("b"))
	h := startHelper(t, c, prefix, "c", ttl)
	views := checkViews(a, b)
	d := waitFor(t, 20*time.Second, "3 replicas share 64 shards", func() bool {
		got, _ := owners(t, admin, prefix)
		return balanced(got, 64, "a", "b", "c")
	})
	t.Logf("balanced over 3 replicas %v after the joins: a %d, b %d, c %d shards", d.Round(time.Millisecond), len(a.Owned()), len(b.Owned()), h.do(t, "owned"))

	flows := testFlows(3000)
	if err := a.PutFlows(context.Background(), flows...); err != nil {
		t.Fatal(err)
	}
	got, _, err := b.ListFlows(context.Background())
	if err != nil || len(got) != len(flows) {
		t.Fatalf("ListFlows: %d flows, %v; want %d", len(got), err, len(flows))
	}
	na, err := a.SaveFlows(context.Background(), wantedStates(a, flows))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := b.SaveFlows(context.Background(), wantedStates(b, flows))
	if err != nil {
		t.Fatal(err)
	}
	nc := h.do(t, "save")
	if na+nb+nc != len(flows) {
		t.Fatalf("first save wrote %d+%d+%d states, want %d", na, nb, nc, len(flows))
	}

	// Steady state: nothing changes, nothing is written.
	for tick := range 5 {
		revs, states := steadyTick(t, admin, prefix, flows, h, a, b)
		t.Logf("steady tick %d: %d etcd writes, %d states written of %d flows", tick, revs, states, len(flows))
		if states != 0 || revs > int64(len(flows)/100) {
			t.Errorf("steady tick %d: %d states in %d writes, want 0 (≤ 1%% of flows)", tick, states, revs)
		}
	}
	// 1% of the flows rerouted: exactly those are written.
	var moved []FlowState
	for _, f := range flows {
		if a.Owns(f.ID) && len(moved) < len(flows)/100 {
			st := wantedState(f.ID)
			st.Switch = (st.Switch + 1) % 4
			moved = append(moved, st)
		}
	}
	_, r0 := owners(t, admin, prefix)
	n, err := a.SaveFlows(context.Background(), moved)
	_, r1 := owners(t, admin, prefix)
	if err != nil || n != len(moved) {
		t.Fatalf("rerouting %d flows wrote %d: %v", len(moved), n, err)
	}
	t.Logf("tick with %d reroutes (1%%): %d states in %d etcd writes", len(moved), n, r1-r0)
	// And back, so that the wanted states hold again.
	for i := range moved {
		moved[i] = wantedState(moved[i].Flow)
	}
	if n, err := a.SaveFlows(context.Background(), moved); err != nil || n != len(moved) {
		t.Fatalf("rerouting %d flows back wrote %d: %v", len(moved), n, err)
	}

	// What the placements look like before the kill.
	before, err := admin.Get(context.Background(), prefix+"state/", clientv3.WithPrefix())
	if err != nil || len(before.Kvs) != len(flows) {
		t.Fatalf("stored states: %d, %v; want %d", len(before.Kvs), err, len(flows))
	}
	modRev := make(map[string]int64)
	for _, kv := range before.Kvs {
		modRev[string(kv.Key)] = kv.ModRevision
	}

	// kill -9 the child replica.
	own, _ := owners(t, admin, prefix)
	var orphans []int
	for s, r := range own {
		if r == "c" {
			orphans = append(orphans, s)
		}
	}
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	bound := ttl + 2*testConfig(nil, "", "x", ttl).BalanceInterval
	takeover := waitFor(t, 3*bound, "a and b own the killed replica's shards", func() bool {
		got, _ := owners(t, admin, prefix)
		return balanced(got, 64, "a", "b") && len(a.Owned())+len(b.Owned()) == 64
	})
	t.Logf("takeover of %d shards after SIGKILL: %v (bound TTL + 2 balance intervals = %v)", len(orphans), takeover.Round(time.Millisecond), bound)
	if takeover > bound {
		t.Errorf("takeover took %v, want ≤ %v", takeover, bound)
	}

	// The new owners resume from etcd: the placements are the ones stored,
	// none rewritten by the takeover.
	for _, m := range []*Member{a, b} {
		for _, s := range m.Owned() {
			states, revs, err := m.LoadShard(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range states {
				want := wantedState(st.Flow)
				if st.Switch != want.Switch || *st.Baseline != *want.Baseline {
					t.Errorf("%v: loaded switch %d baseline %+v, want %d %+v", st.Flow, st.Switch, *st.Baseline, want.Switch, *want.Baseline)
				}
				if key := m.stateKey(s, st.Flow); revs[i] != modRev[key] {
					t.Errorf("%s rewritten at revision %d (was %d)", key, revs[i], modRev[key])
				}
			}
		}
	}
	revs, states := steadyTick(t, admin, prefix, flows, nil, a, b)
	t.Logf("steady tick after the takeover: %d etcd writes, %d states", revs, states)
	if states != 0 {
		t.Errorf("steady tick after the takeover wrote %d states, want 0", states)
	}

	views.finish(t)
	creates := checkHistory(t, admin, prefix, startRev)
	t.Logf("owner history from revision %d: %d ownerships created, none over a live owner", startRev, creates)
	logMu.Lock()
	t.Logf("ownership changes (a, b): %d", len(changes))
	logMu.Unlock()
}

// TestCutFromEtcd: a replica whose keepalives stop is unwritable before its
// lease expires; the other takes its shards after the expiry, and the cut
// replica comes back with a new lease and gets its share again.
func TestCutFromEtcd(t *testing.T) {
	c := etcdOrSkip(t)
	admin := adminClient(t, c)
	const prefix = "/t/cut/"
	var lostAll atomic.Int64 // ns since start when b announced losing everything
	start := time.Now()
	a := join(t, c, prefix, "a", nil)
	var bOwned atomic.Int64
	b := join(t, c, prefix, "b", func(g, l []int) {
		if n := bOwned.Add(int64(len(g) - len(l))); n == 0 && len(l) > 0 {
			lostAll.CompareAndSwap(0, int64(time.Since(start)))
		}
	})
	waitFor(t, 20*time.Second, "a and b share 64 shards", func() bool {
		got, _ := owners(t, admin, prefix)
		return balanced(got, 64, "a", "b") && len(b.Owned()) == 32
	})
	flows := testFlows(200)
	if err := a.PutFlows(context.Background(), flows...); err != nil {
		t.Fatal(err)
	}
	var bFlow proflow.FlowID
	for _, f := range flows {
		if b.Owns(f.ID) {
			bFlow = f.ID
			break
		}
	}
	if _, err := b.SaveFlow(context.Background(), wantedState(bFlow)); err != nil {
		t.Fatal(err)
	}

	// Watch b's owner keys go away: the lease's expiry at etcd.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, rev := owners(t, admin, prefix)
	expired := make(chan time.Time, 1)
	go func() {
		for resp := range admin.Watch(ctx, prefix+"owners/", clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypeDelete {
					expired <- time.Now()
					return
				}
			}
		}
	}()

	cut := time.Now()
	b.paused.Store(true)
	unwritable := waitFor(t, 2*ttl, "b unwritable", func() bool { return !b.Writable() })
	if len(b.Owned()) != 0 {
		t.Errorf("b unwritable but Owned lists %d shards", len(b.Owned()))
	}
	st := wantedState(bFlow)
	st.Switch = (st.Switch + 1) % 4
	if _, err := b.SaveFlow(context.Background(), st); !errors.Is(err, ErrNotWritable) {
		t.Errorf("SaveFlow of unwritable b: %v, want ErrNotWritable", err)
	}
	var exp time.Time
	select {
	case exp = <-expired:
	case <-time.After(3 * ttl):
		t.Fatal("b's lease did not expire")
	}
	expiry := exp.Sub(cut)
	t.Logf("keepalives stopped: b unwritable after %v, its lease expired at etcd after %v (margin %v)",
		unwritable.Round(time.Millisecond), expiry.Round(time.Millisecond), (expiry - unwritable).Round(time.Millisecond))
	if unwritable >= expiry {
		t.Errorf("b unwritable after %v, not before its lease expired (%v)", unwritable, expiry)
	}
	if la := time.Duration(lostAll.Load()); la == 0 || start.Add(la).After(exp) {
		t.Errorf("b's OnChange did not report every shard lost before the expiry (at %v)", la)
	}
	waitFor(t, 3*ttl, "a owns all 64 shards", func() bool {
		got, _ := owners(t, admin, prefix)
		return len(got) == 64 && len(a.Owned()) == 64
	})
	if _, err := b.SaveFlow(context.Background(), st); err == nil {
		t.Error("b saved a flow of a shard it lost")
	}

	// b is reachable again: it notices its lease is gone and rejoins.
	b.paused.Store(false)
	d := waitFor(t, 20*time.Second, "b rejoins and gets its share", func() bool {
		got, _ := owners(t, admin, prefix)
		return balanced(got, 64, "a", "b") && len(b.Owned()) == 32 && len(a.Owned()) == 32
	})
	t.Logf("b back with a new lease and 32 shards after %v", d.Round(time.Millisecond))
	checkHistory(t, admin, prefix, rev)
}

// TestEtcdMemberLoss: killing one of the three etcd members does not
// interrupt the replicas. A follower: every operation succeeds, no shard
// changes hands and both stay writable. The leader: every operation still
// succeeds and no shard changes hands, but the election may hold the
// keepalives past StopWritingAfter (TTL/2 = 1.5 s here), so the fence may go
// down for a moment, as it must when the lease cannot be shown alive.
func TestEtcdMemberLoss(t *testing.T) {
	c := etcdOrSkip(t)
	admin := adminClient(t, c)
	const prefix = "/t/loss/"
	var lost atomic.Int64
	onChange := func(g, l []int) {
		if len(l) > 0 {
			lost.Add(1)
		}
	}
	a := join(t, c, prefix, "a", onChange)
	b := join(t, c, prefix, "b", onChange)
	waitFor(t, 20*time.Second, "a and b share 64 shards", func() bool {
		got, _ := owners(t, admin, prefix)
		return balanced(got, 64, "a", "b") && len(a.Owned()) == 32 && len(b.Owned()) == 32
	})
	flows := testFlows(300)
	if err := a.PutFlows(context.Background(), flows...); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Member{a, b} {
		if _, err := m.SaveFlows(context.Background(), wantedStates(m, flows)); err != nil {
			t.Fatal(err)
		}
	}
	mine := wantedStates(a, flows)[:20]
	epochs := func() map[string]int64 {
		resp, err := admin.Get(context.Background(), prefix+"owners/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		out := make(map[string]int64)
		for _, kv := range resp.Kvs {
			out[string(kv.Key)] = kv.CreateRevision
		}
		return out
	}

	for _, leader := range []bool{false, true} {
		lost.Store(0) // a gave b half of its shards when b joined
		before := epochs()
		var ops, failed, retried, slowest, unwritable atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		// One op a loop: 20 reroutes of a's flows and a read, tried again
		// until it succeeds (for 10 s at most), as a controller's next
		// ticks would.
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for j := range mine {
					mine[j].Switch = (mine[j].Switch + 1) % 4
				}
				t0 := time.Now()
				op := func() error {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					defer cancel()
					if _, err := a.SaveFlows(ctx, mine); err != nil {
						return err
					}
					_, _, _, err := a.LoadFlow(ctx, mine[0].Flow)
					return err
				}
				err := op()
				for err != nil && time.Since(t0) < 10*time.Second {
					retried.Add(1) // the next tick tries again
					time.Sleep(50 * time.Millisecond)
					err = op()
				}
				ops.Add(1)
				if err != nil {
					failed.Add(1)
					t.Logf("op failed for 10 s: %v", err)
				}
				if d := int64(time.Since(t0)); d > slowest.Load() {
					slowest.Store(d)
				}
				if !a.Writable() || !b.Writable() {
					unwritable.Add(1)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		lead := c.Leader(ctx, admin)
		cancel()
		victim, role := (lead+1)%c.Size(), "a follower"
		if leader {
			victim, role = lead, "the leader"
		}
		n0 := ops.Load()
		c.Kill(victim)
		time.Sleep(2 * ttl)
		close(stop)
		wg.Wait()
		t.Logf("etcd member %s (%s) killed: %d ops after the kill, %d tries again, %d failed, slowest %v (retries included); %d of them with a fence down, %d ownership losses announced",
			c.Name(victim), role, ops.Load()-n0, retried.Load(), failed.Load(), time.Duration(slowest.Load()).Round(time.Millisecond), unwritable.Load(), lost.Load())
		if failed.Load() != 0 || ops.Load() == n0 {
			t.Errorf("%s killed: %d failed ops, %d ops after the kill", role, failed.Load(), ops.Load()-n0)
		}
		if !leader && (lost.Load() != 0 || unwritable.Load() != 0) {
			t.Errorf("follower killed: %d ownership losses, %d ops with a fence down", lost.Load(), unwritable.Load())
		}
		if after := epochs(); !maps.Equal(after, before) {
			t.Errorf("%s killed: owner keys changed: %v → %v", role, before, after)
		}
		if err := c.Restart(victim); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, "the killed member rejoins", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err := admin.Status(ctx, c.Client(victim))
			return err == nil
		})
		waitFor(t, 2*ttl, "a and b writable with 32 shards each", func() bool {
			return len(a.Owned()) == 32 && len(b.Owned()) == 32
		})
	}
}
