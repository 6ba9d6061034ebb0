package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/cluster"
	"github.com/proflow-sdn/proflow/internal/etcdtest"
)

// startEtcd starts a one-member etcd on loopback (Debian's etcd-server,
// make etcd-deps) and returns its client URL.
func startEtcd(t *testing.T) string {
	t.Helper()
	etcdtest.Require(t)
	c, err := etcdtest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c.Endpoints()[0]
}

// Two replicas on one etcd split the scenario's flows, each protecting only
// the flows of its shards; when one leaves, the other protects them all.
func TestReplicasShareFlows(t *testing.T) {
	etcd := startEtcd(t)
	start := func(name string) (*Service, context.CancelFunc, chan error) {
		c := simConfig(t, fmt.Sprintf("cluster: {endpoints: [%q], prefix: /t/, replica: %s, lease_ttl: 2s}\n", etcd, name))
		ctx, cancel := context.WithCancel(context.Background())
		s, err := New(ctx, c, Options{LogOutput: io.Discard})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		return s, cancel, done
	}
	a, stopA, doneA := start("a")
	b, stopB, doneB := start("b")
	defer func() { stopB(); <-doneB }()

	split := func() bool {
		fa, fb := ids(a.Flows()), ids(b.Flows())
		all := append(slices.Clone(fa), fb...)
		slices.Sort(all)
		return len(fa) > 0 && len(fb) > 0 && len(slices.Compact(all)) == 8 && len(all) == 8
	}
	waitFor(t, split)

	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("replica a: Run = %v", err)
	}
	waitFor(t, func() bool { return len(b.Flows()) == 8 })
}

// A replica protects the shared set despite a value under flows/ that is
// not a flow (before the fix listing failed on it, retried every second
// and protected nothing while owning every shard), and the owner deletes
// the stored state of a flow an operator deletes from etcd directly
// (before the fix the state stayed, and the flow put again resumed it).
func TestReplicaJunkFlowKeyAndDeletedFlowState(t *testing.T) {
	etcd := startEtcd(t)
	cli := etcdClient(t, etcd)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := cli.Put(ctx, "/t/flows/junk", "{not json"); err != nil {
		t.Fatal(err)
	}
	c := simConfig(t, fmt.Sprintf("cluster: {endpoints: [%q], prefix: /t/, replica: a, lease_ttl: 2s}\n", etcd))
	s, err := New(ctx, c, Options{LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	waitFor(t, func() bool { return len(s.Flows()) == 8 })

	flow := s.Flows()[0].ID
	stateKey := fmt.Sprintf("/t/state/%04d/%s", cluster.ShardOf(flow, 64), flow)
	stored := func() bool {
		resp, err := cli.Get(ctx, stateKey, clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Count > 0
	}
	waitFor(t, stored)
	if _, err := cli.Delete(ctx, "/t/flows/"+flow.String()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(s.Flows()) == 7 && !stored() })
}

// fakeLocator locates every flow on one switch, or fails.
type fakeLocator struct {
	sw  int
	err error
}

func (l fakeLocator) Place(context.Context, proflow.FlowID, int) error { return nil }

func (l fakeLocator) Locate(context.Context, proflow.FlowID) (int, error) { return l.sw, l.err }

// A flow resumed from a stored placement starts where the switches carry
// it when they say so (OpenFlow's Locate as the adopt): the previous owner
// may have moved it and died before saving. Before the fix the located
// switch was discarded and the controller decided from the stored one.
func TestResumeAtLocatedSwitch(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, simConfig(t, ""), Options{LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.closeAll()
	if s.sb.topo.NumSwitches() < 2 {
		t.Fatalf("the scenario has %d switches, want 2 or more", s.sb.topo.NumSwitches())
	}
	r := newReplica(s.log)
	r.register(prometheus.NewRegistry())
	f := s.ctrl.Flows()[0]
	stored := cluster.FlowState{Flow: f.ID, Switch: 0}
	for _, tc := range []struct {
		name string
		loc  fakeLocator
		want int
	}{
		{"located elsewhere", fakeLocator{sw: 1}, 1},
		{"not placed", fakeLocator{sw: -1, err: fmt.Errorf("leaf 0: %w", proflow.ErrNotPlaced)}, 0},
		{"locate fails", fakeLocator{sw: -1, err: errors.New("leaf 0 disconnected")}, 0},
		{"located outside the topology", fakeLocator{sw: 99}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if err := s.ctrl.RemoveFlow(f.ID); err != nil {
				t.Fatal(err)
			}
			delete(s.flows, f.ID)
			s.sb.adopt = locateAdopt(tc.loc)
			if !r.resume(ctx, s, f, map[proflow.FlowID]cluster.FlowState{f.ID: stored}, 1) {
				t.Fatal("resume failed")
			}
			if cur, ok := s.ctrl.Current(f.ID); !ok || cur != tc.want {
				t.Errorf("resumed at switch %d (protected %v), want %d", cur, ok, tc.want)
			}
			if got := r.saved[f.ID]; got.Switch != stored.Switch {
				t.Errorf("saved switch %d, want the stored %d (so that the next save stores the located one)", got.Switch, stored.Switch)
			}
		})
	}
}

// The member reports ownership from its own goroutines as soon as Join
// starts them, before joinCluster has stored the member: the replica's
// OnChange waits for it, so the first change is in the metrics and reading
// the member there is no data race. Before the fix OnChange read r.m while
// joinCluster wrote it (go test -race failed this test).
func TestJoinClusterOnChangeRaceFree(t *testing.T) {
	etcd := startEtcd(t)
	c := &Config{Cluster: &ClusterConfig{Endpoints: []string{etcd}, Prefix: "/t/", Replica: "a", LeaseTTL: 2 * time.Second}}
	log := slog.New(slog.DiscardHandler)
	r, err := joinCluster(context.Background(), c, prometheus.NewRegistry(), log, log)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close(context.Background())
	select {
	case <-r.dirty: // OnChange ran
	case <-time.After(10 * time.Second):
		t.Fatal("no ownership change within 10 s of joining")
	}
	if n := testutil.ToFloat64(r.ownedShards); n == 0 {
		t.Error("the shards gained first are not in proflow_serve_owned_shards")
	}
}

// A shard this replica lost and owns again under a new epoch before a sync
// saw it lost (a partition, a hand-over and back, all between two syncs) is
// resumed afresh: another owner may have moved its flows meanwhile, so the
// flows held under the old epoch are removed and resumed from what is
// stored now. The other shards' flows are left alone. Before the fix sync
// kept every owned flow as it was, and the replica went on deciding (and
// writing, under the new epoch) from the old epoch's placements.
func TestSyncResumesShardOwnedAgainUnderNewEpoch(t *testing.T) {
	etcd := startEtcd(t)
	cli := etcdClient(t, etcd)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := simConfig(t, fmt.Sprintf("cluster: {endpoints: [%q], prefix: /t/, replica: a, lease_ttl: 2s}\n", etcd))
	s, err := New(ctx, c, Options{LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.closeAll()
	r := s.rep
	waitFor(t, func() bool { return len(r.m.Owned()) == r.m.Shards() })
	// What run does, a sync at a time.
	flows, _, err := r.m.ListFlows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	for _, f := range flows {
		r.all[f.ID] = f
	}
	r.mu.Unlock()
	r.sync(ctx, s)
	if n := len(s.Flows()); n != len(flows) || n == 0 {
		t.Fatalf("%d flows protected after the first sync, want the %d shared", n, len(flows))
	}
	flow := flows[0].ID
	shard := r.m.Shard(flow)
	inShard := 0
	for _, f := range flows {
		if r.m.Shard(f.ID) == shard {
			inShard++
		}
	}
	ep, _ := r.m.Epoch(shard)
	cur, _ := s.ctrl.Current(flow)
	moved := (cur + 1) % s.sb.topo.NumSwitches()

	// Another owner had the shard meanwhile and moved the flow; the shard
	// is this replica's again under a new epoch before any sync.
	b, err := json.Marshal(cluster.FlowState{Flow: flow, Switch: moved, Updated: time.Now(), Replica: "b", Epoch: ep + 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, fmt.Sprintf("/t/state/%04d/%s", shard, flow), string(b)); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Delete(ctx, fmt.Sprintf("/t/owners/%04d", shard)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { e, ok := r.m.Epoch(shard); return ok && e != ep })
	resumed := func() float64 {
		return testutil.ToFloat64(r.resumed.WithLabelValues("stored")) + testutil.ToFloat64(r.resumed.WithLabelValues("located"))
	}
	before := resumed()
	r.sync(ctx, s)
	if got, ok := s.ctrl.Current(flow); !ok || got != moved {
		t.Errorf("after owning its shard again the flow is at switch %d (protected %v), want %d where the other owner moved it (was %d)", got, ok, moved, cur)
	}
	if n := resumed() - before; n != float64(inShard) {
		t.Errorf("the sync resumed %v flows, want the %d of the shard owned again", n, inShard)
	}
	if n := len(s.Flows()); n != len(flows) {
		t.Errorf("%d flows protected after the sync, want %d", n, len(flows))
	}
}

// startReplica starts an etcd, runs prepare on a client of it (when not
// nil), builds a service in cluster mode on it (replica a, prefix /t/)
// without running it, and waits until its replica owns every shard. The
// test drives the replica itself: list and sync, as run would, and no
// step runs unless the test calls one.
func startReplica(ctx context.Context, t *testing.T, prepare func(*clientv3.Client)) (*Service, *clientv3.Client) {
	t.Helper()
	etcd := startEtcd(t)
	cli := etcdClient(t, etcd)
	if prepare != nil {
		prepare(cli)
	}
	c := simConfig(t, fmt.Sprintf("cluster: {endpoints: [%q], prefix: /t/, replica: a, lease_ttl: 2s}\n", etcd))
	s, err := New(ctx, c, Options{LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.closeAll)
	waitFor(t, func() bool { return len(s.rep.m.Owned()) == s.rep.m.Shards() })
	return s, cli
}

// regain makes the replica lose shard and own it again under a new epoch,
// with no sync in between, after another owner ("b") stored state for
// flow meanwhile; it returns the epoch before.
func regain(ctx context.Context, t *testing.T, r *replica, cli *clientv3.Client, shard int, state cluster.FlowState) uint64 {
	t.Helper()
	ep, ok := r.m.Epoch(shard)
	if !ok {
		t.Fatalf("shard %d not owned", shard)
	}
	state.Updated, state.Replica, state.Epoch = time.Now(), "b", ep+1
	b, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Put(ctx, fmt.Sprintf("/t/state/%04d/%s", shard, state.Flow), string(b)); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Delete(ctx, fmt.Sprintf("/t/owners/%04d", shard)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { e, ok := r.m.Epoch(shard); return ok && e != ep })
	return ep
}

// Between owning a shard again under a new epoch and the sync that resumes
// its flows afresh, the control loop still holds them as decided before
// the shard was lost: the fenced enforcer the service writes through
// refuses their switch writes, and save does not store their placements,
// so neither overwrites what the owner in between placed and stored; the
// sync then resumes them from that, and their writes pass again. The other
// shards' flows are written throughout. Before the fix the enforcer asked
// only whether the replica owned the shard (Member.Owns), and save stored
// the pre-loss placement under the new epoch, which the sync then resumed.
func TestFenceRefusesFlowHeldUnderEarlierEpoch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, cli, fs := listedReplica(ctx, t)
	r := s.rep
	flow, shard := fs[0].ID, r.m.Shard(fs[0].ID)
	other := -1
	for i, f := range fs {
		if r.m.Shard(f.ID) != shard {
			other = i
			break
		}
	}
	if other < 0 {
		t.Fatal("every flow is in one shard; want one of another shard")
	}
	otherFlow := fs[other].ID
	rec := &recorder{}
	enf := r.enforcer(rec)
	if err := enf.Place(ctx, flow, 0); err != nil {
		t.Fatalf("Place of an owned flow = %v", err)
	}
	cur, _ := s.ctrl.Current(flow)
	moved := (cur + 1) % s.sb.topo.NumSwitches()
	regain(ctx, t, r, cli, shard, cluster.FlowState{Flow: flow, Switch: moved})

	rec.placed = nil
	refusedBefore := testutil.ToFloat64(r.fenced)
	if err := enf.Place(ctx, flow, cur); !errors.Is(err, cluster.ErrNotOwner) {
		t.Errorf("Place of a flow held under the shard's earlier epoch = %v, want ErrNotOwner", err)
	}
	errs := make([]error, 2)
	if err := enf.(proflow.BatchEnforcer).PlaceBatch(ctx, []proflow.Placement{{Flow: flow, Switch: cur}, {Flow: otherFlow, Switch: 0}}, errs); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(errs[0], cluster.ErrNotOwner) || errs[1] != nil {
		t.Errorf("PlaceBatch errors = %v, want ErrNotOwner for the flow held under the earlier epoch and nil for the other shard's", errs)
	}
	if diff := cmp.Diff([]string{otherFlow.String()}, rec.placed); diff != "" {
		t.Errorf("placed after the shard was owned again (-want +got):\n%s", diff)
	}
	if n := testutil.ToFloat64(r.fenced) - refusedBefore; n != 2 {
		t.Errorf("refused writes counted %v, want 2", n)
	}

	// The step's decision, from the pre-loss state, is not stored.
	r.save(ctx, s, []proflow.Decision{{Flow: flow, Current: cur, Best: -1}})
	st, _, found, err := r.m.LoadFlow(ctx, flow)
	if err != nil {
		t.Fatal(err)
	}
	if !found || st.Switch != moved || st.Replica != "b" {
		t.Errorf("stored state after a save of the flow held under the earlier epoch = %+v (found %v), want the other owner's at switch %d", st, found, moved)
	}

	r.sync(ctx, s)
	if got, ok := s.ctrl.Current(flow); !ok || got != moved {
		t.Errorf("after the sync the flow is at switch %d (protected %v), want %d where the other owner moved it", got, ok, moved)
	}
	rec.placed = nil
	if err := enf.Place(ctx, flow, cur); err != nil {
		t.Errorf("Place of the flow resumed under the new epoch = %v", err)
	}
	if diff := cmp.Diff([]string{flow.String()}, rec.placed); diff != "" {
		t.Errorf("placed after the sync (-want +got):\n%s", diff)
	}
}

// A flow deleted from etcd directly while the flow watch is down (a
// compaction, a network cut) is seen gone when run lists the set again:
// it is removed from the controller and, as for a watched deletion, its
// stored state is deleted. Before the fix the state stayed, and the flow
// put again later resumed it.
func TestRelistDropsStateOfFlowDeletedUnwatched(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, cli, fs := listedReplica(ctx, t)
	r := s.rep
	flow := fs[0].ID
	// stored reports whether flow's state is stored, in whichever shard.
	stored := func() bool {
		resp, err := cli.Get(ctx, "/t/state/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range resp.Kvs {
			if strings.HasSuffix(string(kv.Key), "/"+flow.String()) {
				return true
			}
		}
		return false
	}
	cur, _ := s.ctrl.Current(flow)
	if n, err := r.m.SaveFlows(ctx, []cluster.FlowState{{Flow: flow, Switch: cur}}); n != 1 || err != nil {
		t.Fatalf("SaveFlows = %d, %v, want 1, nil", n, err)
	}
	if !stored() {
		t.Fatal("the flow's state is not stored after SaveFlows")
	}
	if _, err := cli.Delete(ctx, "/t/flows/"+flow.String()); err != nil {
		t.Fatal(err)
	}
	// No watch saw it: the replica lists the set again.
	if _, err := r.list(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := ids(s.Flows()); len(got) != len(fs)-1 || slices.Contains(got, flow.String()) {
		t.Errorf("protected after listing again: %v, want the %d flows but %v", got, len(fs)-1, flow)
	}
	if stored() {
		t.Error("the deleted flow's state is still stored after listing again, want it gone")
	}
}

// etcdClient returns a client of the etcd at endpoint, closed when the
// test ends.
func etcdClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// listedReplica starts a replica (startReplica), has it list the shared
// set and returns the flows it protects then, two or more.
func listedReplica(ctx context.Context, t *testing.T) (*Service, *clientv3.Client, []proflow.ProtectedFlow) {
	t.Helper()
	s, cli := startReplica(ctx, t, nil)
	if _, err := s.rep.list(ctx, s); err != nil {
		t.Fatal(err)
	}
	fs := s.Flows()
	if len(fs) < 2 {
		t.Fatalf("%d flows protected, want 2 or more", len(fs))
	}
	return s, cli, fs
}
