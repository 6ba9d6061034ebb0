package openflow

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"time"

	of "github.com/netrack/openflow"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// Sentinel errors of the package.
var (
	// ErrDisconnected marks a request to a switch that is not connected or
	// whose connection ended while the request was pending.
	ErrDisconnected = errors.New("switch not connected")
	// ErrServerClosed is the cause of sessions ended because Serve returned.
	ErrServerClosed = errors.New("openflow server closed")
	// ErrTableFull marks a flow-mod a switch refused because its flow table
	// is full (OFPET_FLOW_MOD_FAILED, OFPFMFC_TABLE_FULL): a *ProtocolError
	// with type 5, code 1 matches it with errors.Is.
	ErrTableFull = errors.New("flow table full")
	// ErrFenced marks a write the server refused because Config.Owner
	// says this controller must not write for the flow now (another
	// replica owns it, or this one lost touch with its coordinator).
	ErrFenced = errors.New("fenced: this controller does not own the flow now")
)

// OpenFlow 1.3 error type and code of a full flow table.
const (
	errTypeFlowModFailed = 5
	errCodeTableFull     = 1
)

// ProtocolError is an OpenFlow error message a switch sent in reply to a
// request.
type ProtocolError struct {
	Switch     string
	DPID       uint64
	Type, Code uint16 // OpenFlow error type and code
}

// Error formats the error with the switch and the OpenFlow type and code.
func (e *ProtocolError) Error() string {
	if e.Type == errTypeFlowModFailed && e.Code == errCodeTableFull {
		return fmt.Sprintf("switch %s (%#x) replied %v: its flow table is full", e.Switch, e.DPID, ofwire.ErrorMsg{Type: e.Type, Code: e.Code})
	}
	return fmt.Sprintf("switch %s (%#x) replied %v", e.Switch, e.DPID, ofwire.ErrorMsg{Type: e.Type, Code: e.Code})
}

// Is reports whether target is ErrTableFull and e the error of a full flow
// table.
func (e *ProtocolError) Is(target error) bool {
	return target == ErrTableFull && e.Type == errTypeFlowModFailed && e.Code == errCodeTableFull
}

// Server is the controller side of OpenFlow 1.3 for a ProFlow fabric.
// Switches connect to it (Serve); it installs permanent base forwarding on
// each, polls port and flow statistics, and moves flows between aggregation
// switches with per-flow override rules. It implements proflow.Telemetry,
// proflow.Enforcer, proflow.BatchEnforcer, proflow.Locator, proflow.Releaser
// and proflow.FlowValidator.
//
// Override rules are leases (Config.LeaseTimeout): while Serve runs, a
// refresh round every third of the lease re-adds every override, one batch
// of flow-mods and one barrier per leaf, every leaf at once, each leaf
// within Config.RequestTimeout. A round therefore lasts about one leaf's
// refresh however many leaves there are, and Config.Validate keeps that
// within the period (RequestTimeout ≤ LeaseTimeout/3), so a slow leaf
// cannot delay the next round. A leaf whose refresh fails (no barrier reply
// in time, a flow-mod refused) is logged and gets its whole batch again at
// the next round, a third of the lease before its rules would lapse; a
// disconnected leaf gets its rules when it reconnects. A round that takes
// longer than its period all the same (one waiting for a Place that holds
// the placement lock across its own requests) is logged and counted in
// proflow_openflow_refresh_overruns_total; the next round starts at once
// (the system clock's ticker keeps one missed tick).
//
// A Server is safe for concurrent use. Telemetry assumes one consumer: rates
// are computed between the two latest polls of each switch.
type Server struct {
	cfg      Config
	m        *metrics
	hosts    []hostInfo
	byAddr   map[netip.Addr]int
	switches map[uint64]*switchState
	order    []*switchState // aggregation switches, then leaves

	emu       sync.Mutex // placement state, below
	placed    map[proflow.FlowID]*placement
	leftovers map[leftover]*placement // override rules whose delete failed, retried
	locates   map[*locateOp]struct{}  // Locate calls reading a leaf
	leafBusy  []chan struct{}         // per leaf: closed when its refresh batch is done; nil when none runs

	scratch flowScratch // Collect's per-flow counter index

	mu       sync.Mutex
	serving  bool
	stopping bool
	wg       sync.WaitGroup
	changed  chan struct{} // closed and replaced when a switch becomes ready or goes
	connSeq  uint32
	greeting []*greeting // connections in handshake, oldest first, at most maxHandshakes
}

// Bounds of the connections in handshake (hello and features, up to
// Config.HandshakeTimeout each). At maxHandshakes, Serve accepts the next
// connection once the oldest in handshake has been at it for
// handshakeGrace, and closes that one: clients that connect and stall
// cannot take every descriptor of the process (the metrics endpoint, the
// config file, etcd and the switches need theirs), nor keep a switch,
// which answers within milliseconds, from connecting behind them for
// longer than it takes to clear them, 640 a second (issue 24). The
// sessions that pass the handshake are bounded by the fabric: one per
// datapath.
const (
	maxHandshakes  = 64
	handshakeGrace = 100 * time.Millisecond
)

// greeting is a connection in handshake.
type greeting struct {
	conn    net.Conn
	since   time.Time // accepted
	evicted bool      // closed for a newer connection (Server.mu)
}

type hostInfo struct {
	Host
	leaf int
}

// switchState is what the server keeps per fabric switch across connections.
type switchState struct {
	name string
	dpid uint64
	agg  int // index in Fabric.Aggs, or -1
	leaf int // index in Fabric.Leaves, or -1

	mu    sync.Mutex
	sess  *session // nil while disconnected
	ready bool     // base rules confirmed on sess
	poll  *pollOp  // the outstanding poll, at most one
	prev  *sample
	cur   *sample
}

var (
	_ proflow.Telemetry     = (*Server)(nil)
	_ proflow.Enforcer      = (*Server)(nil)
	_ proflow.Locator       = (*Server)(nil)
	_ proflow.FlowValidator = (*Server)(nil)
	_ proflow.BatchEnforcer = (*Server)(nil)
	_ proflow.Releaser      = (*Server)(nil)
)

// NewServer checks cfg and returns a server ready to Serve.
func NewServer(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("openflow: new server: metrics: %w", err)
	}
	s := &Server{cfg: cfg, m: m, byAddr: map[netip.Addr]int{}, switches: map[uint64]*switchState{},
		placed: map[proflow.FlowID]*placement{}, leftovers: map[leftover]*placement{}, locates: map[*locateOp]struct{}{},
		leafBusy: make([]chan struct{}, len(cfg.Fabric.Leaves)), changed: make(chan struct{})}
	for k, a := range cfg.Fabric.Aggs {
		st := &switchState{name: a.Name, dpid: a.DPID, agg: k, leaf: -1}
		s.switches[a.DPID], s.order = st, append(s.order, st)
	}
	for l, lf := range cfg.Fabric.Leaves {
		st := &switchState{name: lf.Name, dpid: lf.DPID, agg: -1, leaf: l}
		s.switches[lf.DPID], s.order = st, append(s.order, st)
		for _, h := range lf.Hosts {
			s.byAddr[h.Addr] = len(s.hosts)
			s.hosts = append(s.hosts, hostInfo{Host: h, leaf: l})
		}
	}
	return s, nil
}

// ListenAndServe listens on Config.ListenAddr (TLS when Config.TLS is set)
// and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("openflow: listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve accepts switch connections on ln until ctx ends, then closes ln and
// every connection (handshakes in progress included), waits for all
// goroutines and returns ctx's error. While it runs it refreshes the
// override leases and retries deletes the switches did not confirm (see
// Config.LeaseTimeout). When Config.TLS is set, connections are wrapped in
// TLS. Serve may be called once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		_ = ln.Close()
		return errors.New("openflow: Serve called twice")
	}
	s.serving = true
	s.mu.Unlock()

	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		s.mu.Lock()
		s.stopping = true
		s.mu.Unlock()
		s.wg.Wait()
	}()
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		<-ctx.Done()
		_ = ln.Close()
	}()
	go func() {
		defer s.wg.Done()
		s.maintain(ctx)
	}()
	var backoff time.Duration
	for {
		if err := pause(ctx, s.handshakeRoom(time.Now())); err != nil {
			return err
		}
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !temporaryAccept(err) {
				return fmt.Errorf("openflow: accept: %w", err)
			}
			// Out of descriptors, a connection aborted before it was
			// accepted, a timeout: wait and accept again, as net/http's
			// server does, backing off up to a second.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			if s.m != nil {
				s.m.acceptErrors.Inc()
			}
			s.cfg.Logger.Warn("openflow: accept failed; retrying", "error", err, "retry_in", backoff)
			if err := pause(ctx, backoff); err != nil {
				return err
			}
			continue
		}
		backoff = 0
		g := s.greet(conn)
		if !s.goroutine(func() { s.handle(ctx, conn, g) }) {
			s.greeted(g)
			_ = conn.Close()
		}
	}
}

// pause waits d (none when d ≤ 0), or returns ctx's error when it ends
// first.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// temporaryAccept reports whether an Accept error is one a server outlives:
// a timeout, the process or system out of descriptors or buffers, or a
// connection that ended before it was accepted.
func temporaryAccept(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// handshakeRoom returns how long Serve waits before it may accept: 0
// below maxHandshakes, else until the oldest handshake is handshakeGrace
// old.
func (s *Server) handshakeRoom(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.greeting) < maxHandshakes {
		return 0
	}
	return max(s.greeting[0].since.Add(handshakeGrace).Sub(now), 0)
}

// greet records conn as in handshake and, at maxHandshakes, closes the
// oldest connection in handshake.
func (s *Server) greet(conn net.Conn) *greeting {
	g := &greeting{conn: conn, since: time.Now()}
	var old *greeting
	s.mu.Lock()
	if len(s.greeting) >= maxHandshakes {
		old = s.greeting[0]
		old.evicted = true
		s.greeting = slices.Delete(s.greeting, 0, 1)
	}
	s.greeting = append(s.greeting, g)
	s.mu.Unlock()
	if old != nil {
		_ = old.conn.Close()
	}
	return g
}

// greeted ends g's handshake and reports whether it was closed for a newer
// connection.
func (s *Server) greeted(g *greeting) (evicted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.greeting, g); i >= 0 {
		s.greeting = slices.Delete(s.greeting, i, i+1)
	}
	return g.evicted
}

// goroutine runs f tracked by the wait group unless Serve is returning.
func (s *Server) goroutine(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

func (s *Server) notify() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// handle runs one switch connection from handshake to close.
func (s *Server) handle(ctx context.Context, raw net.Conn, g *greeting) {
	log := s.cfg.Logger.With("remote", raw.RemoteAddr().String())
	conn := of.NewConn(raw)
	feat, err := handshake(ctx, conn, s.cfg.HandshakeTimeout)
	if s.greeted(g) { // closed under the handshake, which may have just passed
		err = fmt.Errorf("closed for a newer connection at the bound of %d in handshake (read: %v)", maxHandshakes, err)
	}
	if err != nil {
		if s.m != nil {
			s.m.handshakeFailures.Inc()
		}
		log.Warn("openflow: handshake failed", "error", err)
		_ = raw.Close()
		return
	}
	st := s.switches[feat.DatapathID]
	if st == nil {
		log.Warn("openflow: refusing unknown datapath", "dpid", fmt.Sprintf("%#x", feat.DatapathID))
		_ = raw.Close()
		return
	}
	s.mu.Lock()
	s.connSeq++
	seq := s.connSeq
	s.mu.Unlock()
	sess := newSession(s, st, conn, seq<<20)
	st.mu.Lock()
	old := st.sess
	st.sess, st.ready = sess, false
	st.mu.Unlock()
	if old != nil {
		old.close(errors.New("replaced by a new connection of the same datapath"))
	}
	log.Info("openflow: switch connected", "switch", st.name, "dpid", fmt.Sprintf("%#x", st.dpid))
	if s.m != nil {
		s.m.connected.Inc()
	}

	// keepalive is what ends the session when ctx ends. If Serve is already
	// returning it cannot start, and the read loop would block on a switch
	// that says nothing: close the session instead of reading.
	if s.goroutine(func() { sess.keepalive(ctx) }) {
		s.goroutine(func() {
			if err := s.setup(ctx, sess); err != nil {
				log.Warn("openflow: installing rules failed; dropping the switch", "switch", st.name, "error", err)
				sess.close(fmt.Errorf("setup: %w", err))
				return
			}
			st.mu.Lock()
			if st.sess == sess {
				st.ready = true
			}
			st.mu.Unlock()
			s.notify()
		})
		sess.readLoop()
	} else {
		sess.close(ErrServerClosed)
	}

	st.mu.Lock()
	if st.sess == sess {
		st.sess, st.ready = nil, false
	}
	st.mu.Unlock()
	if s.m != nil {
		s.m.connected.Dec()
		s.m.disconnects.Inc()
	}
	log.Info("openflow: switch disconnected", "switch", st.name, "reason", sess.closeErr)
	s.notify()
}

// session returns the ready session of a switch.
func (st *switchState) session() (*session, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.sess == nil || !st.ready {
		return nil, fmt.Errorf("switch %s (%#x): %w", st.name, st.dpid, ErrDisconnected)
	}
	return st.sess, nil
}

// Connected returns the names of the switches that are connected with their
// base rules installed, in fabric order.
func (s *Server) Connected() []string {
	var out []string
	for _, st := range s.order {
		if _, err := st.session(); err == nil {
			out = append(out, st.name)
		}
	}
	return out
}

// WaitReady blocks until the named switches (every fabric switch when none
// is named) are connected with their base rules installed, or ctx ends.
func (s *Server) WaitReady(ctx context.Context, names ...string) error {
	want := names
	if len(want) == 0 {
		for _, st := range s.order {
			want = append(want, st.name)
		}
	}
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		missing := ""
		for _, n := range want {
			st := s.byName(n)
			if st == nil {
				return fmt.Errorf("openflow: wait for %q: not a switch of the fabric", n)
			}
			if _, err := st.session(); err != nil {
				missing = n
				break
			}
		}
		if missing == "" {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("openflow: wait for switch %s: %w", missing, ctx.Err())
		}
	}
}

// Disconnect closes the connection of the named switch (the switch will
// usually reconnect). It is meant for tests and operators.
func (s *Server) Disconnect(name string) error {
	st := s.byName(name)
	if st == nil {
		return fmt.Errorf("openflow: disconnect %q: not a switch of the fabric", name)
	}
	st.mu.Lock()
	sess := st.sess
	st.mu.Unlock()
	if sess == nil {
		return fmt.Errorf("openflow: disconnect %s: %w", name, ErrDisconnected)
	}
	sess.close(errors.New("disconnected on request"))
	return nil
}

func (s *Server) byName(name string) *switchState {
	for _, st := range s.order {
		if st.name == name {
			return st
		}
	}
	return nil
}

// flowTag is the 24-bit tag of a flow in its override cookies.
func flowTag(f proflow.FlowID) uint64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(f.String()))
	return uint64(h.Sum32() & 0xffffff)
}
