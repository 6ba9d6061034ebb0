package p4runtime

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// The tests run the client against package target's server over real gRPC
// on 127.0.0.1 (loopback TCP, not bufconn: the stream-break and reconnect
// tests need a real listener to stop and restart).

var testFlow = proflow.FlowID{Src: netip.MustParseAddr("10.0.1.1"), Dst: netip.MustParseAddr("10.0.4.1"),
	SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP}

const (
	hostPort1, hostPort2 = 1, 2
	firstUplink          = 3 // uplink to agg k is port 3+k
)

// fabric is a target server with four leaf devices (1..4) on one loopback
// address, over a MemDataplane.
type fabric struct {
	t     testing.TB
	srv   *target.Server
	dp    *target.MemDataplane
	addr  string
	opts  []grpc.ServerOption
	mu    sync.Mutex
	gs    *grpc.Server
	done  chan struct{}
	clock *southboundtest.ManualClock
}

func newFabric(t testing.TB, opts *target.Options, sopts ...grpc.ServerOption) *fabric {
	t.Helper()
	dp := target.NewMemDataplane()
	srv, err := target.New(dp, []uint64{1, 2, 3, 4}, opts)
	if err != nil {
		t.Fatal(err)
	}
	f := &fabric{t: t, srv: srv, dp: dp, opts: sopts, clock: southboundtest.NewManualClock(time.Unix(1_700_000_000, 0))}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = lis.Addr().String()
	f.serve(lis)
	t.Cleanup(f.stop)
	return f
}

func (f *fabric) serve(lis net.Listener) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Stop waits for the stream handlers to return, so the target has
	// dropped a broken stream's arbitration before a restart: otherwise,
	// on a loaded machine, the reconnecting client may meet its own old
	// stream still registered ("election id already used") and back off
	// on the manual clock for good.
	f.gs = grpc.NewServer(append([]grpc.ServerOption{grpc.WaitForHandlers(true)}, f.opts...)...)
	f.srv.Register(f.gs)
	f.done = make(chan struct{})
	gs, done := f.gs, f.done
	go func() { defer close(done); _ = gs.Serve(lis) }()
}

// stop stops the gRPC server (every stream breaks); the target's state stays.
func (f *fabric) stop() {
	f.mu.Lock()
	gs, done := f.gs, f.done
	f.gs = nil
	f.mu.Unlock()
	if gs != nil {
		gs.Stop()
		<-done
	}
}

// restart serves the same target again on the same address.
func (f *fabric) restart() {
	f.t.Helper()
	var lis net.Listener
	var err error
	for range 50 {
		if lis, err = net.Listen("tcp", f.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		f.t.Fatalf("listen again on %s: %v", f.addr, err)
	}
	f.serve(lis)
}

func (f *fabric) leaves() []Leaf {
	var ls []Leaf
	for i := 1; i <= 4; i++ {
		ls = append(ls, Leaf{
			Name:      fmt.Sprintf("leaf%d", i),
			DeviceID:  uint64(i),
			Addr:      f.addr,
			Hosts:     []netip.Prefix{netip.MustParsePrefix(fmt.Sprintf("10.0.%d.0/24", i))},
			HostPorts: []uint32{hostPort1, hostPort2},
			Uplinks:   []uint32{firstUplink, firstUplink + 1, firstUplink + 2, firstUplink + 3},
		})
	}
	return ls
}

func (f *fabric) config(eid uint64) Config {
	cfg := DefaultConfig()
	cfg.Topology.Leaves = []string{"leaf2", "leaf3", "leaf4"}
	cfg.Leaves = f.leaves()
	cfg.Flow = testFlow
	cfg.ElectionID = ElectionID{Low: eid}
	cfg.CallTimeout = 2 * time.Second
	cfg.MinBackoff, cfg.MaxBackoff = 10*time.Millisecond, 200*time.Millisecond
	cfg.Clock = f.clock
	return cfg
}

func dial(t testing.TB, cfg Config) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// placed starts a fabric, dials a client with election ID 10 and places
// testFlow on switch k. The returned ctx (ctxT's) is cancelled when the
// test ends.
func placed(t *testing.T, k int) (*fabric, *Client, context.Context) {
	t.Helper()
	f := newFabric(t, nil)
	c := dial(t, f.config(10))
	ctx, cancel := ctxT(t)
	t.Cleanup(cancel)
	if err := c.Place(ctx, testFlow, k); err != nil {
		t.Fatal(err)
	}
	return f, c, ctx
}

// where reads the data plane: the switch both directions of flow use.
func (f *fabric) where(flow proflow.FlowID) (int, error) {
	fwd, ok1 := f.dp.Path(1, flow)
	rev, ok2 := f.dp.Path(4, flow.Reverse())
	switch {
	case !ok1 && !ok2:
		return -1, fmt.Errorf("no path in the data plane for %v", flow)
	case !ok1 || !ok2 || fwd != rev:
		return -1, fmt.Errorf("directions disagree: forward port %d (%v), reverse port %d (%v)", fwd, ok1, rev, ok2)
	}
	return int(fwd) - firstUplink, nil
}

// traffic adds one interval of traffic: the protected flow at fp bytes and
// each congestion leaf's hosts at cong bytes, all sent toward switch k.
func (f *fabric) traffic(k int, fp, cong uint64) {
	up := uint32(firstUplink + k)
	f.dp.AddFlowTraffic(1, testFlow, target.Counts{Bytes: fp, Packets: fp / 1500})
	f.dp.AddPortTraffic(1, hostPort1, target.PortCounts{Rx: target.Counts{Bytes: fp}})
	f.dp.AddPortTraffic(1, up, target.PortCounts{Tx: target.Counts{Bytes: fp}})
	for dev := uint64(2); dev <= 4; dev++ {
		f.dp.AddPortTraffic(dev, hostPort2, target.PortCounts{Rx: target.Counts{Bytes: cong}})
		f.dp.AddPortTraffic(dev, up, target.PortCounts{Tx: target.Counts{Bytes: cong}})
	}
}

// rawClient returns a generated P4Runtime client for the fabric's server.
func rawClient(t testing.TB, f *fabric) p4v1.P4RuntimeClient {
	t.Helper()
	conn, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return p4v1.NewP4RuntimeClient(conn)
}

func mustIDs(t testing.TB, p Pipeline) ids {
	t.Helper()
	r, err := resolve(p.P4Info)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ctxT(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}
