// Package fakeswitch is an in-memory OpenFlow 1.3 switch for tests of the
// openflow southbound: it connects to a controller, keeps a flow table with
// cookies, priorities and hard timeouts, forwards synthetic packets through
// it, counts bytes per rule and per port, and can be told to misbehave
// (withhold barrier replies, drop statistics replies, stop answering echoes,
// forget its rules on reconnect). Deletes and flow statistics requests
// honour the cookie and cookie mask, and their match non-strictly (a rule
// is selected when its match sets every field the request's does, to the
// same value), as OpenFlow 1.3 specifies; an add with the match and
// priority of an existing rule replaces it, keeping its counters. A Net wires several switches and hosts so a
// test can send traffic end to end.
package fakeswitch

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	of "github.com/netrack/openflow"

	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// Entry is one rule of the flow table.
type Entry struct {
	Cookie      uint64
	Priority    uint16
	Match       ofwire.Match
	OutPort     uint32
	HardTimeout uint16
	Installed   time.Time
	Packets     uint64
	Bytes       uint64
}

// Packet is the header of a synthetic packet.
type Packet struct {
	InPort           uint32
	EthType          uint16
	Proto            uint8
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16
}

// Switch is a fake OpenFlow switch. The exported knobs may be flipped at any time.
type Switch struct {
	DPID uint64
	// PartEntries is how many entries go into one multipart reply part
	// (default 3), so replies are split with the "more" flag.
	PartEntries int

	WithholdBarrier atomic.Bool   // do not answer barrier requests
	DropStats       atomic.Bool   // do not answer multipart requests
	IgnoreEcho      atomic.Bool   // do not answer echo requests (looks dead)
	WipeOnConnect   atomic.Bool   // forget all rules on (re)connect, like a restarted switch
	RejectCookie    atomic.Uint64 // answer add flow-mods with this cookie with an error (0 = none)
	// RejectDeleteCookie answers delete flow-mods with this cookie with an
	// error and keeps the rules (0 = none).
	RejectDeleteCookie atomic.Uint64
	// MaxFlows is the flow table's capacity (0 = unlimited). An add that
	// would create an entry beyond it is refused with OFPET_FLOW_MOD_FAILED,
	// OFPFMFC_TABLE_FULL and the table is unchanged; an add that replaces an
	// entry of the same match and priority always succeeds, as in OpenFlow.
	MaxFlows atomic.Int64

	mu       sync.Mutex
	now      func() time.Time // the time of hard timeouts; nil: time.Now
	flows    []*Entry
	ports    map[uint32]*ofwire.PortStats
	conn     net.Conn
	connects int
	flowMods int
	barriers int
	requests int
	ops      []Op
	hold     *statsHold
	changed  chan struct{} // closed and replaced after every connect and processed message
	wmu      sync.Mutex
}

// statsHold delays the reply to one flow statistics request.
type statsHold struct {
	held    chan struct{} // closed when a request is held
	release chan struct{} // closed to send the reply
}

// Op is one flow-mod or barrier the switch processed, in order.
type Op struct {
	Kind     string // "add", "delete", "delete-strict", "barrier"
	Cookie   uint64
	Priority uint16
}

// Ops returns the flow-mods and barriers processed so far.
func (s *Switch) Ops() []Op {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Op(nil), s.ops...)
}

// StatsRequests returns how many multipart requests the switch has received.
func (s *Switch) StatsRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// New returns a switch with datapath id dpid.
func New(dpid uint64) *Switch {
	return &Switch{DPID: dpid, PartEntries: 3, ports: map[uint32]*ofwire.PortStats{}, changed: make(chan struct{})}
}

// SetNow makes the switch read the time of its hard timeouts (when a rule
// was installed, whether it has expired) from now instead of time.Now, so a
// test runs leases on the clock it gives the controller. nil restores
// time.Now.
func (s *Switch) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// nowLocked returns the switch's time. Call with s.mu held.
func (s *Switch) nowLocked() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// notifyLocked wakes Await. Call with s.mu held.
func (s *Switch) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Await returns once cond holds, checking it now and after every connect
// and every message the switch processes, or ctx's error. cond may call the
// switch's methods.
func (s *Switch) Await(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// HoldStats makes the switch take its reply to the next flow statistics
// request from the flow table as it is when the request arrives, but send
// it only once release is called (or drop it when the connection ends).
// held is closed when such a request has arrived.
func (s *Switch) HoldStats() (held <-chan struct{}, release func()) {
	h := &statsHold{held: make(chan struct{}), release: make(chan struct{})}
	s.mu.Lock()
	s.hold = h
	s.mu.Unlock()
	var once sync.Once
	return h.held, func() { once.Do(func() { close(h.release) }) }
}

// Run connects to the controller at addr (over TLS when conf is set) and
// reconnects whenever the connection ends, until ctx ends.
func (s *Switch) Run(ctx context.Context, addr string, conf *tls.Config) {
	for ctx.Err() == nil {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil && conf != nil {
			tc := tls.Client(c, conf)
			if err = tc.HandshakeContext(ctx); err != nil {
				c.Close()
			}
			c = tc
		}
		if err == nil {
			_ = s.Serve(ctx, c)
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Serve speaks OpenFlow on c until it fails or ctx ends.
func (s *Switch) Serve(ctx context.Context, c net.Conn) error {
	s.mu.Lock()
	s.conn = c
	s.connects++
	if s.WipeOnConnect.Load() {
		s.flows = nil
	}
	s.notifyLocked()
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	defer c.Close()
	done := make(chan struct{}) // closed when Serve returns: held replies are dropped
	var held sync.WaitGroup
	defer held.Wait()
	defer close(done)
	conn := of.NewConn(c)
	if err := s.send(conn, ofwire.Hello(1)); err != nil {
		return err
	}
	for {
		req, err := conn.Receive()
		if err != nil {
			return err
		}
		var body []byte
		if req.Body != nil {
			body = make([]byte, req.ContentLength)
			_, _ = req.Body.Read(body)
		}
		xid := req.Header.Transaction
		switch req.Header.Type {
		case ofwire.TypeFeaturesRequest:
			err = s.send(conn, ofwire.NewMessage(ofwire.TypeFeaturesReply, xid, ofwire.Body(ofwire.AppendFeatures(nil, s.DPID))))
		case ofwire.TypeEchoRequest:
			if !s.IgnoreEcho.Load() {
				err = s.send(conn, ofwire.Echo(xid, true, body))
			}
		case ofwire.TypeFlowMod:
			err = s.flowMod(conn, xid, body)
		case ofwire.TypeBarrierRequest:
			s.mu.Lock()
			s.barriers++
			s.ops = append(s.ops, Op{Kind: "barrier"})
			s.mu.Unlock()
			if !s.WithholdBarrier.Load() {
				err = s.send(conn, ofwire.NewMessage(ofwire.TypeBarrierReply, xid, nil))
			}
		case ofwire.TypeMultipartReq:
			s.mu.Lock()
			s.requests++
			s.mu.Unlock()
			if !s.DropStats.Load() {
				err = s.multipart(conn, xid, body, func(send func()) {
					held.Add(1)
					go func() { defer held.Done(); send() }()
				}, done)
			}
		}
		s.mu.Lock()
		s.notifyLocked()
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

func (s *Switch) send(conn of.Conn, msgs ...*of.Request) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return of.Send(conn, msgs...)
}

func (s *Switch) sendError(conn of.Conn, xid uint32, typ, code uint16) error {
	return s.send(conn, ofwire.NewMessage(ofwire.TypeError, xid, ofwire.Body(ofwire.AppendError(nil, typ, code, nil))))
}

// sendErrorData sends an error message whose data is (the start of) the
// refused request, at least 64 bytes of it as OpenFlow 1.3 asks. body is
// the request without its header, which is rebuilt here.
func (s *Switch) sendErrorData(conn of.Conn, xid uint32, typ, code uint16, body []byte) error {
	req := make([]byte, 8, 8+len(body))
	req[0], req[1] = ofwire.Version, uint8(ofwire.TypeFlowMod)
	binary.BigEndian.PutUint16(req[2:], uint16(8+len(body)))
	binary.BigEndian.PutUint32(req[4:], xid)
	req = append(req, body...)
	return s.send(conn, ofwire.NewMessage(ofwire.TypeError, xid, ofwire.Body(ofwire.AppendError(nil, typ, code, req[:min(len(req), 64)]))))
}

// Drop closes the current controller connection (Run reconnects).
func (s *Switch) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
	}
}

// Connects returns how many connections the switch has made.
func (s *Switch) Connects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects
}

// FlowMods returns how many flow-mods the switch has received.
func (s *Switch) FlowMods() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flowMods
}

func (s *Switch) flowMod(conn of.Conn, xid uint32, body []byte) error {
	fm, err := ofwire.ParseFlowMod(body)
	if err != nil {
		return s.sendError(conn, xid, 4, 0) // bad match
	}
	if c := s.RejectCookie.Load(); c != 0 && fm.Cookie == c && fm.Command == uint8(ofwire.FlowAdd) {
		return s.sendError(conn, xid, 5, 0) // flow-mod failed
	}
	del := fm.Command == uint8(ofwire.FlowDelete) || fm.Command == uint8(ofwire.FlowDeleteStrict)
	if c := s.RejectDeleteCookie.Load(); c != 0 && fm.Cookie == c && del {
		return s.sendError(conn, xid, 5, 0) // flow-mod failed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flowMods++
	s.ops = append(s.ops, Op{Kind: [...]string{"add", "modify", "modify-strict", "delete", "delete-strict"}[min(fm.Command, 4)], Cookie: fm.Cookie, Priority: fm.Priority})
	s.expireLocked()
	now := s.nowLocked()
	switch ofwire.FlowModCommand(fm.Command) {
	case ofwire.FlowAdd:
		for _, e := range s.flows {
			if e.Match == fm.Match && e.Priority == fm.Priority {
				e.Cookie, e.OutPort, e.HardTimeout, e.Installed = fm.Cookie, fm.OutPort, fm.HardTimeout, now
				return nil
			}
		}
		if capacity := s.MaxFlows.Load(); capacity > 0 && int64(len(s.flows)) >= capacity {
			s.ops = s.ops[:len(s.ops)-1]                  // not applied
			return s.sendErrorData(conn, xid, 5, 1, body) // flow-mod failed: table full
		}
		s.flows = append(s.flows, &Entry{Cookie: fm.Cookie, Priority: fm.Priority, Match: fm.Match, OutPort: fm.OutPort, HardTimeout: fm.HardTimeout, Installed: now})
	case ofwire.FlowDelete, ofwire.FlowDeleteStrict:
		strict := ofwire.FlowModCommand(fm.Command) == ofwire.FlowDeleteStrict
		kept := s.flows[:0]
		for _, e := range s.flows {
			hit := e.Cookie&fm.CookieMask == fm.Cookie&fm.CookieMask
			if strict {
				hit = hit && e.Match == fm.Match && e.Priority == fm.Priority
			} else {
				hit = hit && fm.Match.Covers(e.Match)
			}
			if !hit {
				kept = append(kept, e)
			}
		}
		s.flows = kept
	default:
		return s.sendError(conn, xid, 5, 2)
	}
	return nil
}

func (s *Switch) expireLocked() {
	now := s.nowLocked()
	kept := s.flows[:0]
	for _, e := range s.flows {
		if e.HardTimeout == 0 || now.Sub(e.Installed) < time.Duration(e.HardTimeout)*time.Second {
			kept = append(kept, e)
		}
	}
	s.flows = kept
}

// multipart answers a multipart request. A held flow statistics reply is
// sent by a function passed to spawn, once released or dropped when done
// closes.
func (s *Switch) multipart(conn of.Conn, xid uint32, body []byte, spawn func(func()), done <-chan struct{}) error {
	mp, err := ofwire.ParseMultipart(body)
	if err != nil {
		return s.sendError(conn, xid, 1, 1)
	}
	var parts [][]byte
	per := max(1, s.PartEntries)
	s.mu.Lock()
	s.expireLocked()
	switch mp.Type {
	case ofwire.MultipartPortStats:
		nums := make([]int, 0, len(s.ports))
		for n := range s.ports {
			nums = append(nums, int(n))
		}
		sort.Ints(nums)
		var cur []byte
		for i, n := range nums {
			cur = ofwire.AppendPortStats(cur, *s.ports[uint32(n)])
			if (i+1)%per == 0 {
				parts, cur = append(parts, cur), nil
			}
		}
		parts = append(parts, cur)
	case ofwire.MultipartFlow:
		cookie, mask, match, perr := ofwire.ParseFlowStatsRequestMatch(mp.Body)
		if perr != nil {
			s.mu.Unlock()
			return s.sendError(conn, xid, 1, 1)
		}
		var cur []byte
		n := 0
		for _, e := range s.flows {
			if e.Cookie&mask != cookie&mask || !match.Covers(e.Match) {
				continue
			}
			d := time.Since(e.Installed)
			cur = ofwire.AppendFlowStats(cur, ofwire.FlowStats{Priority: e.Priority, HardTimeout: e.HardTimeout,
				DurationSec: uint32(d / time.Second), DurationNSec: uint32(d % time.Second),
				Cookie: e.Cookie, Packets: e.Packets, Bytes: e.Bytes, Match: e.Match, OutPort: e.OutPort})
			if n++; n%per == 0 {
				parts, cur = append(parts, cur), nil
			}
		}
		parts = append(parts, cur)
	default:
		s.mu.Unlock()
		return s.sendError(conn, xid, 1, 2) // bad multipart type
	}
	var hold *statsHold
	if mp.Type == ofwire.MultipartFlow {
		hold, s.hold = s.hold, nil
	}
	s.mu.Unlock()
	msgs := make([]*of.Request, len(parts))
	for i, p := range parts {
		flags := ofwire.ReplyMore
		if i == len(parts)-1 {
			flags = 0
		}
		msgs[i] = ofwire.NewMessage(ofwire.TypeMultipartReply, xid, ofwire.Body(append(ofwire.AppendMultipartHeader(nil, mp.Type, flags), p...)))
	}
	if hold == nil {
		return s.send(conn, msgs...)
	}
	close(hold.held)
	spawn(func() {
		select {
		case <-hold.release:
			_ = s.send(conn, msgs...)
		case <-done:
		}
	})
	return nil
}

// Install adds e to the flow table as an OFPFC_ADD from another controller
// would: it replaces a rule of the same match and priority (keeping its
// counters) and sets Installed to the switch's now.
func (s *Switch) Install(e Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Installed = s.nowLocked()
	for _, old := range s.flows {
		if old.Match == e.Match && old.Priority == e.Priority {
			old.Cookie, old.OutPort, old.HardTimeout, old.Installed = e.Cookie, e.OutPort, e.HardTimeout, e.Installed
			s.notifyLocked()
			return
		}
	}
	s.flows = append(s.flows, &e)
	s.notifyLocked()
}

// Flows returns a copy of the flow table, highest priority first.
func (s *Switch) Flows() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	out := make([]Entry, len(s.flows))
	for i, e := range s.flows {
		out[i] = *e
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority > out[j].Priority })
	return out
}

func (m ofwireMatch) matches(p Packet) bool {
	h := m.Has
	return (h&ofwire.HasInPort == 0 || m.InPort == p.InPort) &&
		(h&ofwire.HasEthType == 0 || m.EthType == p.EthType) &&
		(h&ofwire.HasIPProto == 0 || m.IPProto == p.Proto) &&
		(h&ofwire.HasIPSrc == 0 || m.IPSrc == p.Src) &&
		(h&ofwire.HasIPDst == 0 || m.IPDst == p.Dst) &&
		(h&ofwire.HasL4Src == 0 || m.L4Src == p.SrcPort) &&
		(h&ofwire.HasL4Dst == 0 || m.L4Dst == p.DstPort) &&
		(h&ofwire.HasARPTPA == 0 || (p.EthType == 0x0806 && m.ARPTPA == p.Dst)) &&
		h&ofwire.HasOther == 0
}

type ofwireMatch ofwire.Match

// Forward looks p up in the flow table, counts n bytes on the winning rule
// and on the ports, and returns the output port (false: table miss, dropped).
func (s *Switch) Forward(p Packet, n uint64) (uint32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	var best *Entry
	for _, e := range s.flows {
		if ofwireMatch(e.Match).matches(p) && (best == nil || e.Priority > best.Priority) {
			best = e
		}
	}
	s.port(p.InPort).RxBytes += n
	s.port(p.InPort).RxPackets++
	if best == nil {
		return 0, false
	}
	best.Packets++
	best.Bytes += n
	s.port(best.OutPort).TxBytes += n
	s.port(best.OutPort).TxPackets++
	return best.OutPort, true
}

// AddPorts makes the switch report statistics for these ports.
func (s *Switch) AddPorts(ports ...uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range ports {
		s.port(p)
	}
}

func (s *Switch) port(n uint32) *ofwire.PortStats {
	p := s.ports[n]
	if p == nil {
		p = &ofwire.PortStats{PortNo: n}
		s.ports[n] = p
	}
	return p
}

// Net wires fake switches together and to hosts.
type Net struct {
	Switches map[uint64]*Switch
	links    map[[2]uint64]portRef // (dpid, port) → peer
	hosts    map[netip.Addr]portRef
}

type portRef struct {
	dpid uint64
	port uint32
}

// NewNet returns an empty network.
func NewNet() *Net {
	return &Net{Switches: map[uint64]*Switch{}, links: map[[2]uint64]portRef{}, hosts: map[netip.Addr]portRef{}}
}

// Add adds a switch.
func (n *Net) Add(sw *Switch) { n.Switches[sw.DPID] = sw }

// Link connects port pa of switch a with port pb of switch b.
func (n *Net) Link(a uint64, pa uint32, b uint64, pb uint32) {
	n.links[[2]uint64{a, uint64(pa)}] = portRef{b, pb}
	n.links[[2]uint64{b, uint64(pb)}] = portRef{a, pa}
	n.Switches[a].AddPorts(pa)
	n.Switches[b].AddPorts(pb)
}

// Attach puts a host on port p of switch dpid.
func (n *Net) Attach(host netip.Addr, dpid uint64, p uint32) {
	n.hosts[host] = portRef{dpid, p}
	n.Switches[dpid].AddPorts(p)
}

// Send carries one packet of size bytes from its source host to its
// destination and returns the datapath ids it crossed. It fails on a table
// miss, a loop, or delivery to the wrong host.
func (n *Net) Send(p Packet, size uint64) ([]uint64, error) {
	at, ok := n.hosts[p.Src]
	if !ok {
		return nil, fmt.Errorf("unknown source host %v", p.Src)
	}
	var path []uint64
	for hop := 0; hop < 8; hop++ {
		sw := n.Switches[at.dpid]
		p.InPort = at.port
		out, ok := sw.Forward(p, size)
		path = append(path, at.dpid)
		if !ok {
			return path, fmt.Errorf("table miss on %#x for %v->%v", at.dpid, p.Src, p.Dst)
		}
		if peer, ok := n.links[[2]uint64{at.dpid, uint64(out)}]; ok {
			at = peer
			continue
		}
		for h, ref := range n.hosts {
			if ref == (portRef{at.dpid, out}) {
				if h != p.Dst {
					return path, fmt.Errorf("delivered %v->%v to host %v", p.Src, p.Dst, h)
				}
				return path, nil
			}
		}
		return path, fmt.Errorf("switch %#x output to unconnected port %d", at.dpid, out)
	}
	return path, fmt.Errorf("loop: %v", path)
}
