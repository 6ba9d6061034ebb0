package simdp_test

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"

	"github.com/proflow-sdn/proflow/southbound/p4runtime"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/simdp"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newFabric returns the default simulated fabric running a built-in
// scenario.
func newFabric(t testing.TB, scenario string, seed uint64) *sim.Fabric {
	t.Helper()
	sc, err := sim.BuiltinScenario(scenario)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(sim.DefaultConfig(), sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// stack is a simulated fabric behind a P4Runtime target on a loopback port.
type stack struct {
	fab    *sim.Fabric
	dp     *simdp.Dataplane
	leaves []p4runtime.Leaf
}

// serve starts a target server over a simdp data plane for fab, stopped at
// the end of the test.
func serve(t testing.TB, fab *sim.Fabric) *stack {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	leaves := simdp.Leaves(fab.Config(), lis.Addr().String())
	dp, err := simdp.New(fab, leaves)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := target.New(dp, dp.Devices(), nil)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	done := make(chan struct{})
	go func() { defer close(done); _ = gs.Serve(lis) }()
	t.Cleanup(func() { gs.Stop(); <-done })
	return &stack{fab: fab, dp: dp, leaves: leaves}
}

// dial connects a p4runtime client to the stack, on the fabric's clock;
// it is closed at the end of the test (before the server stops).
func (s *stack) dial(t testing.TB) *p4runtime.Client {
	t.Helper()
	cfg := p4runtime.DefaultConfig()
	cfg.Topology = s.fab.Topology()
	cfg.Leaves = s.leaves
	cfg.Flow = s.fab.Flow()
	cfg.ElectionID = p4runtime.ElectionID{Low: 10}
	cfg.Clock = s.fab.Clock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := p4runtime.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}
