package openflow_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	of "github.com/netrack/openflow"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/fakeswitch"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// tickClock is a proflow.Clock whose tickers fire only when a test makes
// them: their channels are unbuffered and tick blocks until the ticker's
// owner receives, so a second tick returns only after the owner has handled
// the first. Now is a stepClock's.
type tickClock struct {
	*stepClock
	mu      sync.Mutex
	tickers []*tickTicker
	changed chan struct{} // closed and replaced when a ticker starts or stops
}

type tickTicker struct {
	clock   *tickClock
	period  time.Duration
	ch      chan time.Time
	stopped chan struct{}
	once    sync.Once
}

func newTickClock() *tickClock {
	return &tickClock{stepClock: newStepClock(), changed: make(chan struct{})}
}

func (c *tickClock) NewTicker(d time.Duration) proflow.Ticker {
	t := &tickTicker{clock: c, period: d, ch: make(chan time.Time), stopped: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tickers = append(c.tickers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	return t
}

func (t *tickTicker) C() <-chan time.Time { return t.ch }

func (t *tickTicker) Stop() {
	t.once.Do(func() {
		close(t.stopped)
		c := t.clock
		c.mu.Lock()
		defer c.mu.Unlock()
		close(c.changed)
		c.changed = make(chan struct{})
	})
}

// ticker waits for a running ticker of the given period and returns the
// newest one.
func (c *tickClock) ticker(t *testing.T, ctx context.Context, period time.Duration) *tickTicker {
	t.Helper()
	for {
		c.mu.Lock()
		changed := c.changed
		var found *tickTicker
		for _, tk := range c.tickers {
			select {
			case <-tk.stopped:
			default:
				if tk.period == period {
					found = tk
				}
			}
		}
		c.mu.Unlock()
		if found != nil {
			return found
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no ticker with period %v: %v", period, ctx.Err())
		}
	}
}

// tick delivers one tick and reports whether the owner received it (false:
// the ticker was stopped).
func (tk *tickTicker) tick(t *testing.T, ctx context.Context) bool {
	t.Helper()
	select {
	case tk.ch <- tk.clock.Now():
		return true
	case <-tk.stopped:
		return false
	case <-ctx.Done():
		t.Fatalf("tick of the %v ticker not received: %v", tk.period, ctx.Err())
		return false
	}
}

// signalListener closes closed when Serve closes it.
type signalListener struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *signalListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// startHandshake dials srv's listener as a switch would and stops after
// reading the features request. It returns the connection.
func startHandshake(t *testing.T, addr string) (net.Conn, of.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn := of.NewConn(c)
	if err := of.Send(conn, ofwire.Hello(1)); err != nil {
		t.Fatal(err)
	}
	for {
		req, err := conn.Receive()
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		if req.Header.Type == ofwire.TypeFeaturesRequest {
			return c, conn
		}
	}
}

// serveAlone runs a server on a fresh listener and returns its address and
// the channel Serve's result arrives on.
func serveAlone(t *testing.T, cfg openflow.Config) (*openflow.Server, *signalListener, context.CancelFunc, chan error) {
	t.Helper()
	srv, err := openflow.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sl := &signalListener{Listener: ln, closed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, sl) }()
	return srv, sl, cancel, served
}

// waitServe fails the test if Serve does not return within the bound; on
// failure it closes the switch side so Serve can still return.
func waitServe(t *testing.T, served chan error, c net.Conn, what string) {
	t.Helper()
	select {
	case err := <-served:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		c.Close()
		<-served
		t.Fatalf("Serve did not return within 5 s of its context ending %s", what)
	}
}

// cancelInHandshake serves with an hour's handshake timeout, starts a
// switch's handshake, and cancels Serve's context while the server waits for
// the features reply. The caller closes the returned connection.
func cancelInHandshake(t *testing.T) (sl *signalListener, served chan error, c net.Conn, conn of.Conn) {
	t.Helper()
	cfg := testConfig()
	cfg.HandshakeTimeout = time.Hour
	_, sl, cancel, served := serveAlone(t, cfg)
	c, conn = startHandshake(t, sl.Addr().String())
	cancel()
	return sl, served, c, conn
}

func TestServeReturnsWhenHandshakeEndsAfterCancel(t *testing.T) {
	sl, served, c, conn := cancelInHandshake(t)
	defer c.Close()
	<-sl.closed // Serve is returning
	// The switch completes the handshake now. The server may already have
	// closed the connection; either way it must not wait for the switch.
	_ = of.Send(conn, ofwire.NewMessage(ofwire.TypeFeaturesReply, 2, ofwire.Body(ofwire.AppendFeatures(nil, 0x11))))
	waitServe(t, served, c, "while a switch finished its handshake")
}

func TestServeCancelsHandshake(t *testing.T) {
	_, served, c, conn := cancelInHandshake(t)
	defer c.Close()
	waitServe(t, served, c, "in the middle of a handshake")
	// The server closed the half-open connection.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Receive(); !errors.Is(err, io.EOF) {
		t.Errorf("switch side after cancel: %v, want EOF (the server closed the connection)", err)
	}
}

func TestLocateDoesNotRevertConcurrentPlace(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	if err := tb.srv.Place(ctx, fp, 0); err != nil {
		t.Fatal(err)
	}
	// Locate's read of leaf1 sees the placement on agg1; its answer arrives
	// only after a Place has moved the flow to agg3.
	held, release := tb.sw["leaf1"].HoldStats()
	defer release()
	type result struct {
		k   int
		err error
	}
	located := make(chan result, 1)
	go func() {
		k, err := tb.srv.Locate(ctx, fp)
		located <- result{k, err}
	}()
	<-held
	if err := tb.srv.Place(ctx, fp, 2); err != nil {
		t.Fatal(err)
	}
	release()
	r := <-located
	if r.err != nil || r.k != 2 {
		t.Errorf("Locate overlapping a Place to 2 = %d, %v; want 2 (the newer placement)", r.k, r.err)
	}
	// The server still knows the flow is on agg3: placing it there is a no-op.
	before := tb.sw["leaf1"].FlowMods() + tb.sw["leaf4"].FlowMods()
	if err := tb.srv.Place(ctx, fp, 2); err != nil {
		t.Fatal(err)
	}
	if after := tb.sw["leaf1"].FlowMods() + tb.sw["leaf4"].FlowMods(); after != before {
		t.Errorf("Place to the current switch sent %d flow-mods: Locate reverted the placement", after-before)
	}
	if got := tb.bothWays(fp); got != "agg3" {
		t.Errorf("flow goes via %s, want agg3", got)
	}
}

// overrides returns the priorities of the override rules of a switch.
func overrides(sw *fakeswitch.Switch) []uint16 {
	var out []uint16
	for _, e := range sw.Flows() {
		if e.Priority >= 1000 {
			out = append(out, e.Priority)
		}
	}
	return out
}

func TestFailedDeleteRetried(t *testing.T) {
	clock := newTickClock()
	tb := newTestbed(t, func(c *openflow.Config) { c.Clock, c.LeaseTimeout = clock, -1 })
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	if err := tb.srv.Place(ctx, fp, 0); err != nil {
		t.Fatal(err)
	}
	leaf := tb.sw["leaf1"]
	leaf.RejectDeleteCookie.Store(0x5046_02_000000_0000 | flowTagFor(t, tb) | 1)
	// The move succeeds: the new rules are in force; deleting the old ones
	// on leaf1 fails.
	if err := tb.srv.Place(ctx, fp, 2); err != nil {
		t.Fatal(err)
	}
	if got := tb.bothWays(fp); got != "agg3" {
		t.Fatalf("flow goes via %s, want agg3", got)
	}
	if got := overrides(leaf); fmt.Sprint(got) != "[1002 1001]" {
		t.Fatalf("leaf1 overrides %v, want [1002 1001] (the old rule's delete was refused)", got)
	}
	// With permanent overrides a refresh round every 3×RequestTimeout
	// retries the delete. A second tick is received only after the first
	// round is done.
	round := func() {
		mt := clock.ticker(t, ctx, 3*tb.cfg.RequestTimeout)
		mt.tick(t, ctx)
		mt.tick(t, ctx)
	}
	round()
	if got := overrides(leaf); len(got) != 2 {
		t.Fatalf("leaf1 overrides %v after a round with the delete still refused, want both", got)
	}
	leaf.RejectDeleteCookie.Store(0)
	round()
	if got := overrides(leaf); fmt.Sprint(got) != "[1002]" {
		t.Errorf("leaf1 overrides %v after the retry, want only [1002]", got)
	}
	if got := tb.bothWays(fp); got != "agg3" {
		t.Errorf("flow goes via %s after the retry, want agg3", got)
	}
	for _, e := range leaf.Flows() {
		if e.Priority >= 1000 && e.HardTimeout != 0 {
			t.Errorf("override with hard timeout %d, want permanent (0)", e.HardTimeout)
		}
	}
}

func TestRefreshDoesNotBlockPlace(t *testing.T) {
	clock := newTickClock()
	tb := newTestbed(t, func(c *openflow.Config) {
		// A refresh period (lease/3) of a minute fits a minute's
		// RequestTimeout, as Config.Validate requires.
		c.Clock, c.LeaseTimeout, c.RequestTimeout = clock, 3*time.Minute, time.Minute
	})
	tb.ready()
	ctx := ctxT(t, 10*time.Second)
	other := proflow.FlowID{Src: h3, Dst: netipMust("10.0.0.5"), Proto: proflow.ProtoTCP, SrcPort: 1, DstPort: 2} // leaf2 -> leaf3
	if err := tb.srv.Place(ctx, fp, 0); err != nil {
		t.Fatal(err)
	}
	if err := tb.srv.Place(ctx, other, 1); err != nil {
		t.Fatal(err)
	}
	// leaf3 stops answering barriers; a refresh round starts and waits for
	// it (up to RequestTimeout, a minute).
	slow := tb.sw["leaf3"]
	slow.WithholdBarrier.Store(true)
	barriers := func() int {
		n := 0
		for _, op := range slow.Ops() {
			if op.Kind == "barrier" {
				n++
			}
		}
		return n
	}
	before := barriers()
	clock.ticker(t, ctx, time.Minute).tick(t, ctx)
	if err := slow.Await(ctx, func() bool { return barriers() > before }); err != nil {
		t.Fatalf("the refresh round sent no barrier to leaf3: %v", err)
	}
	// A flow on other leaves moves at once.
	if err := tb.srv.Place(ctx, fp, 2); err != nil {
		t.Fatalf("Place while leaf3's refresh is pending: %v", err)
	}
	if got := tb.bothWays(fp); got != "agg3" {
		t.Errorf("flow goes via %s, want agg3", got)
	}
	if got, err := tb.srv.Locate(ctx, fp); err != nil || got != 2 {
		t.Errorf("Locate while leaf3's refresh is pending = %d, %v; want 2", got, err)
	}
	// A flow on leaf3 waits for the pending refresh of leaf3 (within its
	// context) rather than race it.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err := tb.srv.Place(short, other, 3)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Place of a flow on the leaf being refreshed: %v, want a deadline error", err)
	}
	if got := tb.path(other, 100); got != "agg2" {
		t.Errorf("flow on leaf3 goes via %s, want agg2 still", got)
	}
}

// faultyConn fails its writes on demand and records Close.
type faultyConn struct {
	net.Conn
	failWrites atomic.Bool
	failed     atomic.Bool
	closed     atomic.Bool
}

func (c *faultyConn) Write(b []byte) (int, error) {
	if c.failWrites.Load() {
		c.failed.Store(true)
		return 0, errors.New("injected write failure")
	}
	return c.Conn.Write(b)
}

func (c *faultyConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

type faultyListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*faultyConn
}

func (l *faultyListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	fc := &faultyConn{Conn: c}
	l.mu.Lock()
	l.conns = append(l.conns, fc)
	l.mu.Unlock()
	return fc, nil
}

func TestWriteErrorClosesSession(t *testing.T) {
	var fl *faultyListener
	// The tick clock keeps the keepalive from writing (and closing on its
	// own): only Place writes.
	tb := newTestbedOn(t, func(c *openflow.Config) { c.Clock = newTickClock() }, func(ln net.Listener) net.Listener {
		fl = &faultyListener{Listener: ln}
		return fl
	})
	tb.ready()
	fl.mu.Lock()
	conns := append([]*faultyConn(nil), fl.conns...)
	fl.mu.Unlock()
	for _, c := range conns {
		c.failWrites.Store(true)
	}
	if err := tb.srv.Place(ctxT(t, 5*time.Second), fp, 1); err == nil {
		t.Fatal("Place with failing writes succeeded")
	}
	n := 0
	for _, c := range conns {
		if c.failed.Load() {
			n++
			if !c.closed.Load() {
				t.Errorf("connection %v: a write failed and the session is still open", c.RemoteAddr())
			}
		}
	}
	if n == 0 {
		t.Fatal("no write failed")
	}
}

func TestPlaceWithEndedContextSendsNothing(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	base := map[string]int{"leaf1": len(tb.sw["leaf1"].Ops()), "leaf4": len(tb.sw["leaf4"].Ops())}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tb.srv.Place(ctx, fp, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Place with a cancelled context: %v, want context.Canceled", err)
	}
	// A Place that completes (its barriers come back after anything sent
	// before) shows what the leaves received.
	if err := tb.srv.Place(ctxT(t, 5*time.Second), fp, 1); err != nil {
		t.Fatal(err)
	}
	for leaf, n := range base {
		var seq []string
		for _, op := range tb.sw[leaf].Ops()[n:] {
			seq = append(seq, fmt.Sprintf("%s:%d", op.Kind, op.Priority))
		}
		if want := "[add:1001 barrier:0]"; fmt.Sprint(seq) != want {
			t.Errorf("%s received %v, want only the second Place's %s", leaf, seq, want)
		}
	}
}

func TestDeadSwitchByClockTicks(t *testing.T) {
	clock := newTickClock()
	cfg := testConfig()
	cfg.Clock = clock // EchoInterval 100 ms, DeadTimeout 400 ms: a 100 ms keepalive tick
	srv, sl, cancel, served := serveAlone(t, cfg)
	defer func() { cancel(); <-served }()
	sw := fakeswitch.New(cfg.Fabric.Aggs[0].DPID)
	swCtx, swStop := context.WithCancel(context.Background())
	swDone := make(chan struct{})
	go func() { defer close(swDone); sw.Run(swCtx, sl.Addr().String(), nil) }()
	defer func() { swStop(); <-swDone }()
	ctx := ctxT(t, 5*time.Second)
	if err := srv.WaitReady(ctx, "agg1"); err != nil {
		t.Fatal(err)
	}
	ka := clock.ticker(t, ctx, 100*time.Millisecond)
	sw.IgnoreEcho.Store(true)
	// Tick 1 finds the handshake's traffic; ticks 2..4 find 100..300 ms of
	// silence and send echo requests; tick 5 (400 ms, DeadTimeout) drops
	// the switch and stops the ticker.
	n := 0
	for ka.tick(t, ctx) {
		n++
		if n > 20 {
			t.Fatal("a silent switch was not dropped after 20 ticks")
		}
	}
	if n != 5 {
		t.Errorf("dropped after %d keepalive ticks, want 5", n)
	}
	// It was dropped: the switch connects again.
	if err := sw.Await(ctx, func() bool { return sw.Connects() >= 2 }); err != nil {
		t.Errorf("switch did not reconnect after being dropped: %v", err)
	}
}
