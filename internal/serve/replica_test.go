package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
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
	r := &replica{log: s.log, dirty: make(chan struct{}, 1), all: map[proflow.FlowID]proflow.ProtectedFlow{}, saved: map[proflow.FlowID]cluster.FlowState{}}
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
			if !r.resume(ctx, s, f, map[proflow.FlowID]cluster.FlowState{f.ID: stored}) {
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
