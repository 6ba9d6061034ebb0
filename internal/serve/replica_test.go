package serve

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"

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
