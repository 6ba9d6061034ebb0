package openflow_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/fakeswitch"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// Fake switches dial a Server over loopback TCP; it places h1→h8 on agg2 and reads placement and flow counts back.
func ExampleServer() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Samples are stamped with this clock, so the rates below are exact.
	clock := southboundtest.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	flow := proflow.FlowID{
		Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"),
		SrcPort: 40000, DstPort: 5201, Proto: proflow.ProtoTCP,
	}
	cfg := openflow.DefaultConfig()
	cfg.Fabric = openflow.PaperFabric()
	cfg.Topology = proflow.PaperTopology()
	cfg.Flow = flow
	cfg.Clock = clock
	srv, err := openflow.NewServer(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}

	// The controller side: listen on a free loopback port and serve.
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	serveCtx, stopServing := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, ln) }()

	// The switches: in-memory stand-ins for Open vSwitch, wired like the
	// fabric, each dialling the server and redialling until told to stop.
	fabric := fakeFabric(cfg.Fabric)
	switchCtx, stopSwitches := context.WithCancel(ctx)
	var switches sync.WaitGroup
	for _, sw := range fabric.Switches {
		switches.Go(func() { sw.Run(switchCtx, ln.Addr().String(), nil) })
	}
	// Stop the server first (it closes the listener and every connection
	// and waits for its goroutines), then the switches. Deferred as well so
	// that an early return leaves nothing running.
	shutdown := sync.OnceValue(func() error {
		stopServing()
		err := <-served
		stopSwitches()
		switches.Wait()
		return err
	})
	defer shutdown()

	if err := srv.WaitReady(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ready:", srv.Connected())
	base, err := sendVia(fabric, cfg.Fabric, flow, 1, 1500)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("base forwarding sends", flow, "via", base)

	// Move the flow, then ask the leaf's rules where it is.
	if err := srv.Place(ctx, flow, 1); err != nil {
		fmt.Println(err)
		return
	}
	at, err := srv.Locate(ctx, flow)
	if err != nil {
		fmt.Println(err)
		return
	}
	via, err := sendVia(fabric, cfg.Fabric, flow, 1, 1500)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("placed on %s, located on %s, packets cross %s\n", cfg.Topology.Switches[1], cfg.Topology.Switches[at], via)

	// Rates need two polls: the first only records the counters.
	var obs proflow.Observation
	err = srv.Collect(ctx, &obs)
	fmt.Println("first Collect is stale:", errors.Is(err, proflow.ErrStale))
	// One second of traffic: the protected flow (1500-byte segments one
	// way, 64-byte ACKs back) and a congester h3→h7 on its base path.
	congester := proflow.FlowID{
		Src: netip.MustParseAddr("10.0.0.3"), Dst: netip.MustParseAddr("10.0.0.7"),
		SrcPort: 40001, DstPort: 5201, Proto: proflow.ProtoTCP,
	}
	for _, t := range []struct {
		f       proflow.FlowID
		packets int
		size    uint64
	}{{flow, 100, 1500}, {flow.Reverse(), 100, 64}, {congester, 200, 1000}} {
		if _, err := sendVia(fabric, cfg.Fabric, t.f, t.packets, t.size); err != nil {
			fmt.Println(err)
			return
		}
	}
	clock.Advance(time.Second)
	if err := srv.Collect(ctx, &obs); err != nil {
		fmt.Println(err)
		return
	}
	for k, s := range obs.Switches {
		fmt.Printf("%s: %.0f flow entries, %6.0f B/s to the leaves\n", cfg.Topology.Switches[k], s.FlowCount, s.TxRate)
	}
	fmt.Printf("protected flow: %.0f B/s\n", obs.Flow.Throughput)

	fmt.Println("serve:", shutdown(), "- connected:", len(srv.Connected()))
	// Output:
	// ready: [agg1 agg2 agg3 agg4 leaf1 leaf2 leaf3 leaf4]
	// base forwarding sends tcp 10.0.0.1:40000->10.0.0.8:5201 via agg4
	// placed on agg2, located on agg2, packets cross agg2
	// first Collect is stale: true
	// agg1: 1 flow entries, 200000 B/s to the leaves
	// agg2: 2 flow entries, 156400 B/s to the leaves
	// agg3: 0 flow entries,      0 B/s to the leaves
	// agg4: 0 flow entries,      0 B/s to the leaves
	// protected flow: 150000 B/s
	// serve: context canceled - connected: 0
}

// fakeFabric builds one fake switch per switch of f and wires their ports
// and hosts as f describes.
func fakeFabric(f openflow.Fabric) *fakeswitch.Net {
	n := fakeswitch.NewNet()
	for _, a := range f.Aggs {
		n.Add(fakeswitch.New(a.DPID))
	}
	for l, lf := range f.Leaves {
		n.Add(fakeswitch.New(lf.DPID))
		for k, a := range f.Aggs {
			n.Link(lf.DPID, lf.Uplinks[k], a.DPID, a.LeafPorts[l])
		}
		for _, h := range lf.Hosts {
			n.Attach(h.Addr, lf.DPID, h.Port)
		}
	}
	return n
}

// sendVia pushes packets of flow through the fake switches' flow tables
// and returns the aggregation switch the last one crossed.
func sendVia(n *fakeswitch.Net, f openflow.Fabric, flow proflow.FlowID, packets int, size uint64) (string, error) {
	p := fakeswitch.Packet{EthType: 0x0800, Proto: flow.Proto, Src: flow.Src, Dst: flow.Dst, SrcPort: flow.SrcPort, DstPort: flow.DstPort}
	var hops []uint64
	for range packets {
		var err error
		if hops, err = n.Send(p, size); err != nil {
			return "", fmt.Errorf("send %v: %w", flow, err)
		}
	}
	for _, d := range hops {
		for _, a := range f.Aggs {
			if a.DPID == d {
				return a.Name, nil
			}
		}
	}
	return "", fmt.Errorf("send %v: path %x crosses no aggregation switch", flow, hops)
}
