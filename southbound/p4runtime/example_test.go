package p4runtime_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"google.golang.org/grpc"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// The fabric of the examples: four leaves, leafN with hosts 10.0.N.0/24 on
// ports 1 and 2 and its uplinks to agg1…agg4 on ports 3…6, all served as
// devices 1…4 by one P4Runtime target.
const (
	hostPort    = 1
	firstUplink = 3 // the uplink to aggregation switch k is port firstUplink+k
)

// leaves describes the example fabric's leaf switches for a target at addr.
func leaves(addr string) []p4runtime.Leaf {
	var ls []p4runtime.Leaf
	for i := 1; i <= 4; i++ {
		ls = append(ls, p4runtime.Leaf{
			Name:      fmt.Sprintf("leaf%d", i),
			DeviceID:  uint64(i),
			Addr:      addr,
			Hosts:     []netip.Prefix{netip.MustParsePrefix(fmt.Sprintf("10.0.%d.0/24", i))},
			HostPorts: []uint32{hostPort, hostPort + 1},
			Uplinks:   []uint32{firstUplink, firstUplink + 1, firstUplink + 2, firstUplink + 3},
		})
	}
	return ls
}

// serveTarget starts a schema-enforcing P4Runtime target for devices 1–4 on
// a loopback port, over an in-memory data plane, and returns the data plane,
// the address and a function that stops the server and waits for it.
func serveTarget() (dp *target.MemDataplane, addr string, stop func()) {
	dp = target.NewMemDataplane()
	srv, err := target.New(dp, []uint64{1, 2, 3, 4}, nil)
	if err != nil {
		panic(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	served := make(chan struct{})
	go func() { defer close(served); _ = gs.Serve(lis) }()
	return dp, lis.Addr().String(), func() { gs.Stop(); <-served }
}

// exampleConfig returns the client config Example builds step by step:
// the example fabric's leaves at addr, the protected flow from a host of
// leaf1 to one of leaf4, election ID 10.
func exampleConfig(addr string) p4runtime.Config {
	flow, err := proflow.ParseFlowID("tcp 10.0.1.10:5001->10.0.4.10:5201")
	if err != nil {
		panic(err)
	}
	cfg := p4runtime.DefaultConfig()
	cfg.Leaves = leaves(addr)
	cfg.Flow = flow
	cfg.ElectionID = p4runtime.ElectionID{Low: 10}
	return cfg
}

// Start a P4Runtime target on a loopback port, connect the southbound to it
// as the primary controller, and move the protected flow between aggregation
// switches, reading back where its entries send it.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// The switches: devices 1-4 on one gRPC server, with an in-memory data
	// plane that records where each flow is sent.
	dp, addr, stop := serveTarget()
	defer stop() // runs after c.Close below

	// The southbound: arbitrates on every leaf and pushes leaf.p4.
	flow, err := proflow.ParseFlowID("tcp 10.0.1.10:5001->10.0.4.10:5201")
	if err != nil {
		panic(err)
	}
	cfg := p4runtime.DefaultConfig()
	cfg.Leaves = leaves(addr)
	cfg.Flow = flow
	cfg.ElectionID = p4runtime.ElectionID{Low: 10}
	c, err := p4runtime.Dial(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println("primary on every leaf:", c.Primary())

	// The flow starts on agg3 and then moves to agg2.
	var enf proflow.Enforcer = c
	for _, sw := range []int{2, 1} {
		if err := enf.Place(ctx, flow, sw); err != nil {
			panic(err)
		}
		k, err := c.Locate(ctx, flow)
		if err != nil {
			panic(err)
		}
		fwd, _ := dp.Path(1, flow)           // leaf1 sends the flow toward...
		rev, _ := dp.Path(4, flow.Reverse()) // ...and leaf4 its replies toward
		fmt.Printf("%v: located on %s; leaf1 uplink %d, leaf4 uplink %d\n", flow, cfg.Topology.Switches[k], fwd, rev)
	}

	// Back to base forwarding: nothing left to locate.
	if err := c.Remove(ctx, flow); err != nil {
		panic(err)
	}
	_, err = c.Locate(ctx, flow)
	fmt.Println("after Remove, not placed:", errors.Is(err, proflow.ErrNotPlaced))
	// Output:
	// primary on every leaf: true
	// tcp 10.0.1.10:5001->10.0.4.10:5201: located on agg3; leaf1 uplink 5, leaf4 uplink 5
	// tcp 10.0.1.10:5001->10.0.4.10:5201: located on agg2; leaf1 uplink 4, leaf4 uplink 4
	// after Remove, not placed: true
}

// Read the leaves' counters as telemetry: the first Collect primes them,
// the next one turns one second of traffic into rates.
func ExampleClient_Collect() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	dp, addr, stop := serveTarget()
	defer stop()

	// A manual clock times the rates, so they do not depend on how long
	// the RPCs take.
	clock := southboundtest.NewManualClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := exampleConfig(addr) // congestion leaves: leaf1, leaf2, leaf3
	cfg.Clock = clock
	flow := cfg.Flow
	c, err := p4runtime.Dial(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	// The flow's throughput is its path_select entry's counter: place it.
	if err := c.Place(ctx, flow, 0); err != nil {
		panic(err)
	}
	var tel proflow.Telemetry = c
	var obs proflow.Observation
	err = tel.Collect(ctx, &obs)
	fmt.Println("first Collect is stale:", errors.Is(err, proflow.ErrStale))

	// One second of traffic toward agg1: the flow sends 2.5 MB from leaf1,
	// a congester 10 MB from leaf2.
	uplink := uint32(firstUplink) // toward agg1, k = 0
	dp.AddFlowTraffic(1, flow, target.Counts{Bytes: 2_500_000})
	dp.AddPortTraffic(1, hostPort, target.PortCounts{Rx: target.Counts{Bytes: 2_500_000}})
	dp.AddPortTraffic(1, uplink, target.PortCounts{Tx: target.Counts{Bytes: 2_500_000}})
	dp.AddPortTraffic(2, hostPort, target.PortCounts{Rx: target.Counts{Bytes: 10_000_000}})
	dp.AddPortTraffic(2, uplink, target.PortCounts{Tx: target.Counts{Bytes: 10_000_000}})
	clock.Advance(time.Second)

	if err := tel.Collect(ctx, &obs); err != nil {
		panic(err)
	}
	mbps := func(bytesPerSec float64) float64 { return bytesPerSec * 8 / 1e6 }
	fmt.Printf("protected flow: %.0f Mbit/s\n", mbps(obs.Flow.Throughput))
	fmt.Printf("offered to agg1: %.0f Mbit/s, to agg2: %.0f Mbit/s\n", mbps(obs.Switches[0].TxRate), mbps(obs.Switches[1].TxRate))
	for l, name := range cfg.Topology.Leaves {
		fmt.Printf("%s congestion ingress: %.0f Mbit/s\n", name, mbps(obs.Leaves[l].IngressRate))
	}
	// Output:
	// first Collect is stale: true
	// protected flow: 20 Mbit/s
	// offered to agg1: 100 Mbit/s, to agg2: 0 Mbit/s
	// leaf1 congestion ingress: 0 Mbit/s
	// leaf2 congestion ingress: 80 Mbit/s
	// leaf3 congestion ingress: 0 Mbit/s
}

// A backup controller (lower election ID) can read but not write; with
// Config.TakeOver it becomes primary once the primary goes away, and
// resumes from the placement it finds on the switches.
func ExampleClient_WaitPrimary() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	_, addr, stop := serveTarget()
	defer stop()

	cfg := exampleConfig(addr) // election ID 10
	flow := cfg.Flow
	primary, err := p4runtime.Dial(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer primary.Close() // a second Close is harmless
	cfg.ElectionID = p4runtime.ElectionID{Low: 5}
	cfg.TakeOver = true
	backup, err := p4runtime.Dial(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer backup.Close()

	if err := primary.Place(ctx, flow, 3); err != nil {
		panic(err)
	}
	err = backup.Place(ctx, flow, 0)
	fmt.Println("backup Place refused, not primary:", errors.Is(err, p4runtime.ErrNotPrimary))
	k, err := backup.Locate(ctx, flow)
	if err != nil {
		panic(err)
	}
	fmt.Println("backup locates the flow on", cfg.Topology.Switches[k])

	// The primary leaves; the backup takes over with a higher election ID.
	if err := primary.Close(); err != nil {
		panic(err)
	}
	if err := backup.WaitPrimary(ctx); err != nil {
		panic(err)
	}
	fmt.Println("backup is primary with election ID", backup.Status()[0].ElectionID)
	if err := backup.Place(ctx, flow, 0); err != nil {
		panic(err)
	}
	if k, err = backup.Locate(ctx, flow); err != nil {
		panic(err)
	}
	fmt.Println("new primary moved the flow to", cfg.Topology.Switches[k])
	// Output:
	// backup Place refused, not primary: true
	// backup locates the flow on agg4
	// backup is primary with election ID 15
	// new primary moved the flow to agg1
}
