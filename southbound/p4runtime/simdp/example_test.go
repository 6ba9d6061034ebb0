package simdp_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"

	"github.com/proflow-sdn/proflow/southbound/p4runtime"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/simdp"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// A P4Runtime target in front of the simulated fabric, and the p4runtime
// client moving the protected flow over gRPC.
func Example() {
	ctx := context.Background()
	sc, _ := sim.BuiltinScenario("S1")
	fab, err := sim.New(sim.DefaultConfig(), sc, 1)
	if err != nil {
		panic(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	leaves := simdp.Leaves(fab.Config(), lis.Addr().String())
	dp, err := simdp.New(fab, leaves)
	if err != nil {
		panic(err)
	}
	srv, err := target.New(dp, dp.Devices(), nil)
	if err != nil {
		panic(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	go gs.Serve(lis)
	defer gs.Stop()

	cfg := p4runtime.DefaultConfig()
	cfg.Topology, cfg.Leaves, cfg.Flow = fab.Topology(), leaves, fab.Flow()
	cfg.ElectionID = p4runtime.ElectionID{Low: 1}
	cfg.Clock = fab.Clock()
	c, err := p4runtime.Dial(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	if err := fab.Advance(10 * time.Second); err != nil {
		panic(err)
	}
	if err := c.Place(ctx, fab.Flow(), 2); err != nil {
		panic(err)
	}
	fwd, rev := dp.Placement()
	sw := fab.Topology().Switches
	fmt.Printf("simulated flow on %s; forward entry toward %s, reverse toward %s\n", sw[fab.Current()], sw[fwd], sw[rev])
	// Output: simulated flow on agg3; forward entry toward agg3, reverse toward agg3
}
