package openflow_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/fakeswitch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stepClock reads a time the test sets; its tickers are real.
type stepClock struct{ ns atomic.Int64 }

func newStepClock() *stepClock {
	c := &stepClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *stepClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *stepClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *stepClock) NewTicker(d time.Duration) proflow.Ticker {
	return proflow.SystemClock{}.NewTicker(d)
}

var (
	h1 = netip.MustParseAddr("10.0.0.1")
	h3 = netip.MustParseAddr("10.0.0.3")
	h7 = netip.MustParseAddr("10.0.0.7")
	h8 = netip.MustParseAddr("10.0.0.8")
	fp = proflow.FlowID{Src: h1, Dst: h8, Proto: proflow.ProtoTCP, SrcPort: 40000, DstPort: 5201}
)

// testbed is a Server with the paper fabric of fake switches connected to it.
type testbed struct {
	t      testing.TB
	srv    *openflow.Server
	cfg    openflow.Config
	net    *fakeswitch.Net
	sw     map[string]*fakeswitch.Switch
	addr   string
	clock  *stepClock
	stop   context.CancelFunc // stops the server
	wg     sync.WaitGroup
	swStop context.CancelFunc
}

func testConfig() openflow.Config {
	cfg := openflow.DefaultConfig()
	cfg.Fabric = openflow.PaperFabric()
	cfg.Topology = proflow.PaperTopology()
	cfg.Flow = fp
	cfg.EchoInterval = 100 * time.Millisecond
	cfg.DeadTimeout = 400 * time.Millisecond
	cfg.RequestTimeout = 300 * time.Millisecond
	return cfg
}

func newTestbed(t testing.TB, mod func(*openflow.Config)) *testbed {
	t.Helper()
	return newTestbedOn(t, mod, nil)
}

// newTestbedOn is newTestbed with the server's listener wrapped by wrap
// (when set), so a test can interpose on the connections.
func newTestbedOn(t testing.TB, mod func(*openflow.Config), wrap func(net.Listener) net.Listener) *testbed {
	t.Helper()
	cfg := testConfig()
	tb := &testbed{t: t, net: fakeswitch.NewNet(), sw: map[string]*fakeswitch.Switch{}, clock: newStepClock()}
	cfg.Clock = tb.clock
	if mod != nil {
		mod(&cfg)
	}
	tb.cfg = cfg
	for _, a := range cfg.Fabric.Aggs {
		tb.sw[a.Name] = fakeswitch.New(a.DPID)
		tb.net.Add(tb.sw[a.Name])
	}
	for l, lf := range cfg.Fabric.Leaves {
		tb.sw[lf.Name] = fakeswitch.New(lf.DPID)
		tb.net.Add(tb.sw[lf.Name])
		for k, a := range cfg.Fabric.Aggs {
			tb.net.Link(lf.DPID, lf.Uplinks[k], a.DPID, a.LeafPorts[l])
		}
		for _, h := range lf.Hosts {
			tb.net.Attach(h.Addr, lf.DPID, h.Port)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tb.addr = ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	tb.startServer(ln)
	tb.runSwitches(nil)
	t.Cleanup(func() {
		tb.stop()
		tb.swStop()
		tb.wg.Wait()
	})
	return tb
}

// runSwitches connects every switch to the server (over TLS if conf is set).
func (tb *testbed) runSwitches(conf *tls.Config) {
	ctx, cancel := context.WithCancel(context.Background())
	tb.swStop = cancel
	for _, sw := range tb.sw {
		tb.wg.Add(1)
		go func() {
			defer tb.wg.Done()
			sw.Run(ctx, tb.addr, conf)
		}()
	}
}

// startServer starts a new Server with tb.cfg on ln.
func (tb *testbed) startServer(ln net.Listener) {
	srv, err := openflow.NewServer(tb.cfg)
	if err != nil {
		tb.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, ln)
	}()
	tb.srv = srv
	tb.stop = func() { cancel(); <-done }
}

// restartServer stops the server and starts a fresh one on the same address.
func (tb *testbed) restartServer() {
	tb.stop()
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", tb.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		tb.t.Fatal(err)
	}
	tb.startServer(ln)
}

func (tb *testbed) ready() {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tb.srv.WaitReady(ctx); err != nil {
		tb.t.Fatal(err)
	}
}

// path sends a packet of f and returns the aggregation switch it crossed.
func (tb *testbed) path(f proflow.FlowID, size uint64) string {
	tb.t.Helper()
	hops, err := tb.net.Send(fakeswitch.Packet{EthType: 0x0800, Proto: f.Proto, Src: f.Src, Dst: f.Dst, SrcPort: f.SrcPort, DstPort: f.DstPort}, size)
	if err != nil {
		tb.t.Fatalf("send %v: %v (path %x)", f, err, hops)
	}
	for _, d := range hops {
		for _, a := range tb.cfg.Fabric.Aggs {
			if a.DPID == d {
				return a.Name
			}
		}
	}
	tb.t.Fatalf("send %v: path %x crosses no aggregation switch", f, hops)
	return ""
}

func (tb *testbed) bothWays(f proflow.FlowID) string {
	tb.t.Helper()
	fwd, rev := tb.path(f, 1500), tb.path(f.Reverse(), 64)
	if fwd != rev {
		tb.t.Fatalf("%v goes via %s, its reverse via %s, want the same switch", f, fwd, rev)
	}
	return fwd
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
