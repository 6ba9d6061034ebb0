package p4runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEnforcerConformance(t *testing.T) {
	southboundtest.TestEnforcer(t, func(t *testing.T) southboundtest.EnforcerHarness { return enforcerHarness(t, false) })
}

// enforcerHarness is a client on a fresh fabric as the conformance suites'
// enforcer; the many-flow cases move 64 flows between 10.0.1.1 and
// 10.0.4.1, one PlaceBatch a step. With baseForwarding a flow without an
// override entry reads as on its base switch (baseSwitch; the releaser
// suite), else as an error.
func enforcerHarness(t *testing.T, baseForwarding bool) southboundtest.EnforcerHarness {
	f := newFabric(t, nil)
	c := dial(t, f.config(10))
	whereFlow := func(_ context.Context, flow proflow.FlowID) (int, error) {
		if baseForwarding {
			_, fwd := f.dp.Path(1, flow)
			_, rev := f.dp.Path(4, flow.Reverse())
			if !fwd && !rev {
				return baseSwitch(flow), nil
			}
		}
		return f.where(flow)
	}
	return southboundtest.EnforcerHarness{
		Enforcer:  c,
		Topology:  c.cfg.Topology,
		Flow:      testFlow,
		Where:     func(context.Context) (int, error) { return f.where(testFlow) },
		WhereFlow: whereFlow,
	}
}

func TestTelemetryConformance(t *testing.T) {
	southboundtest.TestTelemetry(t, func(t *testing.T) southboundtest.TelemetryHarness {
		f, c, ctx := placed(t, 0)
		advance := func() {
			f.traffic(0, 1_000_000, 2_000_000)
			f.clock.Advance(500 * time.Millisecond)
		}
		var obs proflow.Observation
		if err := c.Collect(ctx, &obs); !errors.Is(err, proflow.ErrStale) {
			t.Fatalf("first Collect: %v, want an error wrapping ErrStale (priming)", err)
		}
		advance()
		return southboundtest.TelemetryHarness{Telemetry: c, Topology: c.cfg.Topology, Advance: advance}
	})
}

func TestCollectValues(t *testing.T) {
	f, c, ctx := placed(t, 2)
	var obs proflow.Observation
	_ = c.Collect(ctx, &obs)
	f.traffic(2, 1_000_000, 3_000_000) // per 500 ms: 2 MB/s protected, 6 MB/s per congestion leaf
	f.clock.Advance(500 * time.Millisecond)
	if err := c.Collect(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6*want+1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("throughput", obs.Flow.Throughput, 2e6)
	near("tx rate toward agg3", obs.Switches[2].TxRate, 2e6+3*6e6)
	near("tx rate toward agg1", obs.Switches[0].TxRate, 0)
	for l := range obs.Leaves {
		near("leaf ingress", obs.Leaves[l].IngressRate, 6e6)
		near("leaf transmit", obs.Leaves[l].TransmitRate, 6e6)
	}
	near("congestion rate", obs.Flow.CongestionRate, 18e6)
	if !obs.Time.Equal(f.clock.Now()) {
		t.Errorf("time %v, want the clock's %v", obs.Time, f.clock.Now())
	}
	// A reroute (MODIFY) keeps the direct counter going.
	if err := c.Place(ctx, testFlow, 1); err != nil {
		t.Fatal(err)
	}
	f.traffic(1, 500_000, 0)
	f.clock.Advance(500 * time.Millisecond)
	if err := c.Collect(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	near("throughput after reroute", obs.Flow.Throughput, 1e6)
	// As an overlay it leaves the fields it does not own.
	obs.Switches[1].OverflowRate, obs.Switches[1].FlowCount = 123, 4
	f.clock.Advance(500 * time.Millisecond)
	if err := c.Overlay(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	if obs.Switches[1].OverflowRate != 123 || obs.Switches[1].FlowCount != 4 {
		t.Errorf("overlay overwrote fields it does not own: %+v", obs.Switches[1])
	}
}

func TestBackupCannotWriteAndTakesOver(t *testing.T) {
	f := newFabric(t, nil)
	a := dial(t, f.config(10))
	bcfg := f.config(5)
	bcfg.TakeOver = true
	b := dial(t, bcfg)
	ctx, cancel := ctxT(t)
	defer cancel()
	if err := a.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Primary() {
		t.Fatal("client with the lower election id is primary")
	}
	if err := a.Place(ctx, testFlow, 2); err != nil {
		t.Fatal(err)
	}
	err := b.Place(ctx, testFlow, 1)
	if !errors.Is(err, ErrNotPrimary) {
		t.Fatalf("backup Place: %v, want ErrNotPrimary", err)
	}
	if status.Code(errors.Unwrap(err)) != codes.PermissionDenied && !strings.Contains(err.Error(), "PermissionDenied") {
		t.Errorf("backup Place error %q does not name PERMISSION_DENIED", err)
	}
	if got, _ := f.where(testFlow); got != 2 {
		t.Errorf("after a refused backup write the flow is on %d, want 2", got)
	}
	// The backup can read: it locates the primary's placement.
	if k, err := b.Locate(ctx, testFlow); err != nil || k != 2 {
		t.Errorf("backup Locate = %d, %v; want 2", k, err)
	}
	// Leave the flow half-placed (forward only), then the primary goes away.
	dirs, _ := a.directions(testFlow)
	if err := a.clearPath(ctx, dirs[1]); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if err := b.WaitPrimary(ctx); err != nil {
		t.Fatalf("backup did not take over: %v", err)
	}
	k, err := b.Locate(ctx, testFlow)
	if err != nil || k != 2 {
		t.Fatalf("new primary Locate = %d, %v; want 2", k, err)
	}
	if got, err := f.where(testFlow); err != nil || got != 2 {
		t.Errorf("after reconciliation Where = %d, %v; want both directions on 2", got, err)
	}
	if err := b.Place(ctx, testFlow, 3); err != nil {
		t.Fatalf("new primary Place: %v", err)
	}
	if got, _ := f.where(testFlow); got != 3 {
		t.Errorf("Where = %d after the new primary's reroute, want 3", got)
	}
}

func TestPromoteBackupServer(t *testing.T) {
	f := newFabric(t, &target.Options{PromoteBackup: true})
	a := dial(t, f.config(10))
	b := dial(t, f.config(5)) // no TakeOver: the server promotes it
	ctx, cancel := ctxT(t)
	defer cancel()
	if err := a.Place(ctx, testFlow, 1); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if err := b.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Place(ctx, testFlow, 0); err != nil {
		t.Fatal(err)
	}
}

func TestStreamBreakReconnects(t *testing.T) {
	f, c, ctx := placed(t, 1)
	f.stop()
	// Every leaf's stream breaks, and each session waits out its backoff on
	// the fabric's manual clock: one ticker per leaf.
	if err := f.clock.BlockUntil(ctx, len(c.sessions)); err != nil {
		t.Fatalf("sessions are not all backing off after the server went away: %v", err)
	}
	if c.Primary() {
		t.Fatal("client still believes it is primary after the server went away")
	}
	if err := c.Place(ctx, testFlow, 2); !errors.Is(err, ErrNotPrimary) {
		t.Errorf("Place while disconnected: %v, want ErrNotPrimary", err)
	}
	f.restart()
	// Once gRPC has its connection back, the end of the backoff reopens the
	// streams.
	for _, conn := range c.conns {
		conn.Connect()
		for st := conn.GetState(); st != connectivity.Ready; st = conn.GetState() {
			if !conn.WaitForStateChange(ctx, st) {
				t.Fatalf("gRPC connection stuck in %v: %v", st, ctx.Err())
			}
		}
	}
	if c.Primary() {
		t.Fatal("streams reopened before the backoff ended on the client's clock")
	}
	f.clock.Advance(c.cfg.MaxBackoff)
	if err := c.WaitPrimary(ctx); err != nil {
		t.Fatalf("no re-arbitration after the server came back: %v", err)
	}
	if err := c.Place(ctx, testFlow, 2); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.where(testFlow); got != 2 {
		t.Errorf("Where = %d, want 2", got)
	}
}

func TestPipelinePushedOnlyOnCookieChange(t *testing.T) {
	pipe, err := LeafPipeline(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		cookie     uint64
		wantPushed bool
	}{{"same cookie", pipe.cookie(), false}, {"other cookie", 77, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFabric(t, &target.Options{Pipeline: &p4v1.ForwardingPipelineConfig{P4Info: pipe.P4Info,
				Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: tc.cookie}}})
			ctx, cancel := ctxT(t)
			defer cancel()
			// Another controller left an entry on device 1; a config push
			// would clear it.
			raw := rawClient(t, f)
			sctx, scancel := context.WithCancel(ctx)
			st, err := raw.StreamChannel(sctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
				Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: 1, ElectionId: &p4v1.Uint128{Low: 1}}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Recv(); err != nil {
				t.Fatal(err)
			}
			other := proflow.FlowID{Src: testFlow.Src, Dst: netip.MustParseAddr("10.0.2.9")}
			te := (&Client{cfg: Config{Priority: 5, Owner: []byte("other")}, ids: mustIDs(t, pipe)}).keyEntry(other)
			te.Metadata = []byte("other")
			te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: 0x01000004,
				Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{4}}}}}}
			if _, err := raw.Write(ctx, &p4v1.WriteRequest{DeviceId: 1, ElectionId: &p4v1.Uint128{Low: 1},
				Updates: []*p4v1.Update{{Type: p4v1.Update_INSERT, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}}}}); err != nil {
				t.Fatal(err)
			}
			scancel()
			c := dial(t, f.config(10))
			if err := c.WaitPrimary(ctx); err != nil {
				t.Fatal(err)
			}
			rs, err := raw.Read(ctx, &p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{
				TableEntry: &p4v1.TableEntry{TableId: te.TableId, Metadata: []byte("other")}}}}})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				r, err := rs.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					// n would read as 0: a failed read must not pass for a push.
					t.Fatalf("read the other controller's entry back: %v", err)
				}
				n += len(r.GetEntities())
			}
			if pushed := n == 0; pushed != tc.wantPushed {
				t.Errorf("config pushed = %v (the other controller's entry is gone: %v), want %v", pushed, n == 0, tc.wantPushed)
			}
			cr, err := raw.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: 1,
				ResponseType: p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY})
			if err != nil || cr.GetConfig().GetCookie().GetCookie() != pipe.cookie() {
				t.Errorf("device cookie %v, %v; want the client's %d", cr.GetConfig().GetCookie(), err, pipe.cookie())
			}
		})
	}
}

func TestClientErrors(t *testing.T) {
	f, c, ctx := placed(t, 0)
	s := c.sessions[0]
	lib, gen, err := s.ensureReady(ctx)
	if err != nil {
		t.Fatal(err)
	}
	good := func() *p4v1.TableEntry { return c.pathEntry(lib, testFlow, firstUplink) }
	for _, tc := range []struct {
		name  string
		write func(context.Context, *p4v1.TableEntry) error
		entry func() *p4v1.TableEntry
		want  codes.Code
	}{
		{"duplicate insert", lib.InsertTableEntry, good, codes.AlreadyExists},
		{"modify missing", lib.ModifyTableEntry, func() *p4v1.TableEntry { return c.pathEntry(lib, testFlow.Reverse(), firstUplink) }, codes.NotFound},
		{"delete missing", lib.DeleteTableEntry, func() *p4v1.TableEntry { return c.pathEntry(lib, testFlow.Reverse(), firstUplink) }, codes.NotFound},
		{"port wider than 9 bits", lib.ModifyTableEntry, func() *p4v1.TableEntry { return c.pathEntry(lib, testFlow, 1024) }, codes.InvalidArgument},
		{"unknown action", lib.ModifyTableEntry, func() *p4v1.TableEntry {
			te := good()
			te.Action.GetAction().ActionId = 0x01abcdef
			return te
		}, codes.InvalidArgument},
		{"zero priority", lib.ModifyTableEntry, func() *p4v1.TableEntry { te := good(); te.Priority = 0; return te }, codes.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.fail(gen, "write: "+tc.name, tc.write(ctx, tc.entry()))
			var de *DeviceError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DeviceError", err)
			}
			if de.Code != tc.want || status.Code(err) != tc.want {
				t.Errorf("code %v, want %v (%v)", de.Code, tc.want, err)
			}
			if !strings.HasPrefix(err.Error(), "p4runtime: leaf1 (device 1) write: "+tc.name) || de.Message == "" {
				t.Errorf("error %q does not name the leaf, device, operation and the server's reason", err)
			}
		})
	}
	// Entries owned by someone else are not overwritten: a controller with
	// another owner mark takes over and finds this client's entries.
	c.Close()
	ocfg := f.config(20)
	ocfg.Owner = []byte("someone-else")
	o := dial(t, ocfg)
	err = o.Place(ctx, testFlow, 1)
	if !errors.Is(err, ErrForeignEntry) {
		t.Errorf("Place over a foreign entry: %v, want ErrForeignEntry", err)
	}
	if got, _ := f.where(testFlow); got != 0 {
		t.Errorf("foreign-entry refusal moved the flow to %d", got)
	}
	if _, err := o.Locate(ctx, testFlow); !errors.Is(err, proflow.ErrNotPlaced) && !errors.Is(err, ErrForeignEntry) {
		t.Errorf("Locate by another owner: %v, want ErrForeignEntry or ErrNotPlaced", err)
	}
}

func TestPlaceRollsBackHalfMove(t *testing.T) {
	f, c, ctx := placed(t, 0)
	// The reverse direction's leaf refuses: the forward move is undone.
	f.dp.FailSetPath(4, errors.New("injected failure"))
	err := c.Place(ctx, testFlow, 3)
	f.dp.FailSetPath(4, nil)
	if err == nil {
		t.Fatal("Place with a failing data plane succeeded")
	}
	if got, werr := f.where(testFlow); werr != nil || got != 0 {
		t.Errorf("after a failed Place: Where = %d, %v; want both directions still on 0", got, werr)
	}
	if err := c.Place(ctx, testFlow, 3); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.where(testFlow); got != 3 {
		t.Errorf("Where = %d, want 3", got)
	}
}

func TestConfigValidate(t *testing.T) {
	f := newFabric(t, nil)
	cfg := f.config(1)
	cfg.Leaves[1].Uplinks = cfg.Leaves[1].Uplinks[:2]
	cfg.Leaves[3].Hosts = nil // the flow's destination has no leaf
	cfg.Topology.Leaves = append(cfg.Topology.Leaves, "leaf9")
	err := cfg.Validate()
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"leaf2 has 2 uplinks", "congestion leaf \"leaf9\"", "no leaf hosts address 10.0.4.1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestCollectIngressPerCounterDeltas: λ subtracts the bytes each owned
// entry counted in the interval, entry by entry, so deleting one of a
// leaf's entries (whose counter leaves the sum) is not taken for a reset of
// the others; likewise a reset of one host port's receive counter does not
// hide the other ports' bytes.
func TestCollectIngressPerCounterDeltas(t *testing.T) {
	f, c, ctx := placed(t, 0)
	a := proflow.FlowID{Src: netip.MustParseAddr("10.0.2.1"), Dst: netip.MustParseAddr("10.0.3.1"), SrcPort: 6001, DstPort: 80, Proto: proflow.ProtoTCP}
	b := a
	b.SrcPort = 6002
	for _, fl := range []proflow.FlowID{a, b} {
		if err := c.Place(ctx, fl, 1); err != nil {
			t.Fatal(err)
		}
	}
	var obs proflow.Observation
	if err := c.Collect(ctx, &obs); !errors.Is(err, proflow.ErrStale) {
		t.Fatalf("first Collect: %v, want ErrStale (priming)", err)
	}
	// One second on leaf2 (obs.Leaves[0]): each placed flow at 1 MB/s,
	// plus 0.5 MB/s of congestion, all received on host port 1.
	second := func(flows ...proflow.FlowID) {
		for _, fl := range flows {
			f.dp.AddFlowTraffic(2, fl, target.Counts{Bytes: 1_000_000, Packets: 1000})
		}
		rx := uint64(len(flows))*1_000_000 + 500_000
		f.dp.AddPortTraffic(2, hostPort1, target.PortCounts{Rx: target.Counts{Bytes: rx}})
		f.clock.Advance(time.Second)
	}
	lambda := func(when string, want float64) {
		t.Helper()
		if err := c.Collect(ctx, &obs); err != nil {
			t.Fatal(err)
		}
		if got := obs.Leaves[0].IngressRate; math.Abs(got-want) > 1e-6*want {
			t.Errorf("%s: leaf2 λ = %v, want %v", when, got, want)
		}
	}
	for i := range 2 {
		second(a, b)
		lambda(fmt.Sprintf("two flows, second %d", i+1), 5e5)
	}
	if err := c.Release(ctx, b); err != nil {
		t.Fatal(err)
	}
	second(a)
	lambda("one of the two flows released", 5e5)

	// Host port 2 joins at 1 MB/s of congestion; then port 1's receive
	// counter is reset (written to zero), and its bytes since count in full.
	port2 := func() { f.dp.AddPortTraffic(2, hostPort2, target.PortCounts{Rx: target.Counts{Bytes: 1_000_000}}) }
	port2()
	second(a)
	lambda("second host port", 15e5)
	port2()
	second(a)
	lambda("second host port, again", 15e5)
	ups := []*p4v1.Update{{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
		CounterId: c.ids.portRx, Index: &p4v1.Index{Index: hostPort1}, Data: &p4v1.CounterData{}}}}}}
	if _, err := rawClient(t, f).Write(ctx, &p4v1.WriteRequest{DeviceId: 2, ElectionId: &p4v1.Uint128{Low: 10}, Updates: ups}); err != nil {
		t.Fatalf("reset leaf2's port_rx[%d]: %v", hostPort1, err)
	}
	port2()
	second(a)
	lambda("host port 1's counter reset", 15e5)
}

// Peek reads the rates since the last Collect without ending its sample:
// the next Collect's rates span the whole time since the last one.
func TestPeek(t *testing.T) {
	f, c, ctx := placed(t, 2)
	var obs proflow.Observation
	var p proflow.Peeker = c
	if err := p.Peek(ctx, &obs); !errors.Is(err, proflow.ErrStale) || !strings.Contains(err.Error(), "no reading yet") {
		t.Fatalf("Peek before any Collect: %v, want ErrStale naming the missing reading", err)
	}
	_ = c.Collect(ctx, &obs)
	f.traffic(2, 1_000_000, 3_000_000) // 2 MB/s protected over the first 500 ms
	f.clock.Advance(500 * time.Millisecond)
	if err := p.Peek(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	if obs.Flow.Throughput != 2e6 || obs.Switches[2].TxRate != 2e6+3*6e6 || !obs.Time.Equal(f.clock.Now()) {
		t.Errorf("peek: throughput %v, agg3 tx %v at %v; want 2e6, 2e7 at %v", obs.Flow.Throughput, obs.Switches[2].TxRate, obs.Time, f.clock.Now())
	}
	f.clock.Advance(500 * time.Millisecond) // nothing more sent
	if err := c.Collect(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	if obs.Flow.Throughput != 1e6 || obs.Switches[2].TxRate != 1e6+3*3e6 {
		t.Errorf("Collect after the peek: throughput %v, agg3 tx %v; want 1e6 and 1e7 (the whole second)", obs.Flow.Throughput, obs.Switches[2].TxRate)
	}
}
