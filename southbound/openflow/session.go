package openflow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	of "github.com/netrack/openflow"

	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// errOnly marks a call that expects no reply: a flow-mod, completed only by
// an error message carrying its transaction id.
const errOnly of.Type = 0xff

// call is one request waiting for its reply, matched by transaction id.
type call struct {
	want of.Type
	mp   []byte // multipart payload reassembled so far
	done chan struct{}
	body []byte
	err  error
	at   time.Time
}

// session is one handshaken connection to a switch. Its read loop answers
// echo requests, matches replies to calls by xid and reassembles multipart
// replies; its keepalive sends echo requests and drops a dead switch.
type session struct {
	srv  *Server
	st   *switchState
	conn of.Conn

	wmu sync.Mutex // serialises Send+Flush

	mu    sync.Mutex
	calls map[uint32]*call

	xid       atomic.Uint32
	heard     atomic.Bool // a message arrived since keepalive's last tick
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error
}

func newSession(srv *Server, st *switchState, conn of.Conn, firstXID uint32) *session {
	s := &session{srv: srv, st: st, conn: conn, calls: make(map[uint32]*call), closed: make(chan struct{})}
	s.xid.Store(firstXID)
	s.heard.Store(true) // the handshake just heard from the switch
	return s
}

func (s *session) nextXID() uint32 {
	for {
		if x := s.xid.Add(1); x != 0 {
			return x
		}
	}
}

// close ends the session once, failing every pending call with err.
func (s *session) close(err error) {
	s.closeOnce.Do(func() {
		s.closeErr = err
		_ = s.conn.Close()
		close(s.closed)
		s.mu.Lock()
		for xid, c := range s.calls {
			c.err = fmt.Errorf("%w: %w", ErrDisconnected, err)
			close(c.done)
			delete(s.calls, xid)
		}
		s.mu.Unlock()
	})
}

// write sends messages and flushes them; the library's Send only buffers.
// A failed write closes the session: part of a message may have gone out,
// and the connection's buffered writer keeps failing after an error, so
// the stream cannot be trusted any more.
func (s *session) write(msgs ...*of.Request) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.conn.SetWriteDeadline(time.Now().Add(s.srv.cfg.RequestTimeout))
	for _, m := range msgs {
		if err := s.conn.Send(m); err != nil {
			err = fmt.Errorf("send %v: %w", m.Header.Type, err)
			s.close(err)
			return err
		}
	}
	if err := s.conn.Flush(); err != nil {
		err = fmt.Errorf("flush: %w", err)
		s.close(err)
		return err
	}
	return nil
}

func (s *session) register(xid uint32, want of.Type) *call {
	c := &call{want: want, done: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closed:
		c.err = fmt.Errorf("%w: %w", ErrDisconnected, s.closeErr)
		close(c.done)
	default:
		s.calls[xid] = c
	}
	return c
}

func (s *session) unregister(xids ...uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range xids {
		delete(s.calls, x)
	}
}

// complete hands a reply to the call waiting for xid and reports whether
// there was one.
func (s *session) complete(xid uint32, typ of.Type, body []byte, err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[xid]
	if c == nil {
		return false
	}
	if err == nil && typ != c.want {
		err = fmt.Errorf("reply to xid %d is %v, want %v", xid, typ, c.want)
	}
	c.body, c.err, c.at = body, err, s.srv.cfg.Clock.Now()
	delete(s.calls, xid)
	close(c.done)
	return true
}

// multipart appends one part of a multipart reply; the last part (no "more"
// flag) completes the call.
func (s *session) multipart(xid uint32, mp ofwire.Multipart) bool {
	s.mu.Lock()
	c := s.calls[xid]
	if c == nil {
		s.mu.Unlock()
		return false
	}
	var err error
	if c.want != ofwire.TypeMultipartReply {
		err = fmt.Errorf("multipart reply to xid %d, want %v", xid, c.want)
	} else if len(c.mp)+len(mp.Body) > ofwire.MaxMultipartBytes {
		err = fmt.Errorf("multipart reply to xid %d exceeds %d bytes", xid, ofwire.MaxMultipartBytes)
	}
	c.mp = append(c.mp, mp.Body...)
	if err == nil && mp.Flags&ofwire.ReplyMore != 0 {
		s.mu.Unlock()
		return true
	}
	c.body, c.err, c.at = c.mp, err, s.srv.cfg.Clock.Now()
	delete(s.calls, xid)
	close(c.done)
	s.mu.Unlock()
	return true
}

// wait blocks until c completes, ctx ends or the session closes.
func (s *session) wait(ctx context.Context, c *call) error {
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closed:
		// The close may have raced with a completion.
		select {
		case <-c.done:
			return c.err
		default:
		}
		return fmt.Errorf("%w: %w", ErrDisconnected, s.closeErr)
	}
}

// roundTrip sends msg and returns the body of its reply of type want.
func (s *session) roundTrip(ctx context.Context, msg *of.Request, want of.Type) ([]byte, time.Time, error) {
	xid := msg.Header.Transaction
	c := s.register(xid, want)
	defer s.unregister(xid)
	if err := s.write(msg); err != nil {
		return nil, time.Time{}, err
	}
	if err := s.wait(ctx, c); err != nil {
		return nil, time.Time{}, err
	}
	return c.body, c.at, nil
}

// apply sends flow-mods followed by a barrier and returns once the barrier
// reply confirms them, or with the first error a switch reported for one.
func (s *session) apply(ctx context.Context, mods []ofwire.FlowMod) error {
	errs, err := s.applyMods(ctx, mods)
	if err != nil {
		return err
	}
	for i, e := range errs {
		if e != nil {
			return fmt.Errorf("flow-mod cookie %#x priority %d: %w", mods[i].Cookie, mods[i].Priority, e)
		}
	}
	return nil
}

// applyMods sends flow-mods followed by one barrier, all in one write, and
// returns once the barrier reply confirms them. errs[i] is the error message
// the switch sent for mods[i] (nil: applied; a switch answers every message
// before the barrier that follows it, so an error not seen by then will not
// come). err is the failure of the batch as a whole (an encoding error, the
// write, the barrier): then nothing is confirmed and errs is nil.
func (s *session) applyMods(ctx context.Context, mods []ofwire.FlowMod) (errs []error, err error) {
	msgs := make([]*of.Request, 0, len(mods)+1)
	xids := make([]uint32, 0, len(mods)+1)
	calls := make([]*call, len(mods))
	defer func() { s.unregister(xids...) }()
	for i, m := range mods {
		xid := s.nextXID()
		req, err := m.Encode(xid)
		if err != nil {
			return nil, fmt.Errorf("flow-mod %d: %w", i, err)
		}
		calls[i] = s.register(xid, errOnly)
		msgs, xids = append(msgs, req), append(xids, xid)
	}
	bx := s.nextXID()
	barrier := s.register(bx, ofwire.TypeBarrierReply)
	msgs, xids = append(msgs, ofwire.NewMessage(ofwire.TypeBarrierRequest, bx, nil)), append(xids, bx)
	if err := s.write(msgs...); err != nil {
		return nil, err
	}
	if m := s.srv.m; m != nil {
		m.flowMods.Add(float64(len(mods)))
	}
	if err := s.wait(ctx, barrier); err != nil {
		return nil, fmt.Errorf("barrier: %w", err)
	}
	errs = make([]error, len(mods))
	for i, c := range calls {
		select {
		case <-c.done:
			errs[i] = c.err
		default:
		}
	}
	return errs, nil
}

// readLoop runs until the connection fails or is closed.
func (s *session) readLoop() {
	for {
		req, err := s.conn.Receive()
		if err != nil {
			s.close(fmt.Errorf("read: %w", err))
			return
		}
		s.heard.Store(true)
		body := readBody(req.Body)
		xid := req.Header.Transaction
		switch req.Header.Type {
		case ofwire.TypeEchoRequest:
			if err := s.write(ofwire.Echo(xid, true, body)); err != nil {
				s.close(fmt.Errorf("echo reply: %w", err))
				return
			}
		case ofwire.TypeError:
			e, perr := ofwire.ParseError(body)
			if perr != nil {
				s.srv.cfg.Logger.Warn("openflow: malformed error message", "switch", s.st.name, "error", perr)
				continue
			}
			pe := &ProtocolError{Switch: s.st.name, DPID: s.st.dpid, Type: e.Type, Code: e.Code}
			if m := s.srv.m; m != nil {
				m.ofErrors.WithLabelValues(strconv.Itoa(int(e.Type))).Inc()
			}
			if !s.complete(xid, ofwire.TypeError, nil, pe) {
				s.srv.cfg.Logger.Warn("openflow: unsolicited error", "switch", s.st.name, "xid", xid, "error", pe)
			}
		case ofwire.TypeMultipartReply:
			mp, perr := ofwire.ParseMultipart(body)
			if perr != nil {
				s.complete(xid, ofwire.TypeMultipartReply, nil, fmt.Errorf("multipart reply: %w", perr))
				continue
			}
			s.multipart(xid, mp)
		case ofwire.TypeEchoReply, ofwire.TypeBarrierReply, ofwire.TypeFeaturesReply:
			s.complete(xid, req.Header.Type, body, nil)
		default:
			// packet-in, port status, flow removed: not used.
		}
	}
}

// keepalive sends echo requests to a quiet switch, closes a dead one, and
// closes the session when ctx ends. Its ticker comes from Config.Clock, and
// quiet time is counted in its ticks (a tick with no message since the
// previous one adds a period), so an injected clock drives it completely.
func (s *session) keepalive(ctx context.Context) {
	cfg := s.srv.cfg
	period := keepalivePeriod(cfg)
	t := cfg.Clock.NewTicker(period)
	defer t.Stop()
	var quiet time.Duration
	for {
		select {
		case <-ctx.Done():
			s.close(ErrServerClosed)
			return
		case <-s.closed:
			return
		case <-t.C():
			if s.heard.Swap(false) {
				quiet = 0
				continue
			}
			// quiet is at most one period short of the true silence, so a
			// switch is dropped only after DeadTimeout without a message.
			quiet += period
			if quiet >= cfg.DeadTimeout {
				s.close(fmt.Errorf("no message for %v, dead timeout %v", quiet, cfg.DeadTimeout))
				return
			}
			if quiet >= cfg.EchoInterval {
				if err := s.write(ofwire.Echo(s.nextXID(), false, nil)); err != nil {
					return // write closed the session
				}
			}
		}
	}
}

// keepalivePeriod is the tick of keepalive: fine enough to send echoes at
// EchoInterval and to notice a dead switch within a third of DeadTimeout.
func keepalivePeriod(cfg Config) time.Duration { return min(cfg.EchoInterval, cfg.DeadTimeout/3) }

func readBody(r io.Reader) []byte {
	if b, ok := r.(*bytes.Buffer); ok {
		return b.Bytes()
	}
	if r == nil {
		return nil
	}
	b, _ := io.ReadAll(r)
	return b
}

// handshake exchanges hello messages and reads the datapath id from the
// features reply. It answers echo requests meanwhile. It gives up after
// timeout, and when ctx ends it closes the connection, so a server that is
// shutting down does not wait for a slow handshake.
func handshake(ctx context.Context, conn of.Conn, timeout time.Duration) (ofwire.Features, error) {
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	f, err := handshakeConn(conn, timeout)
	if !stop() { // ctx ended: the connection is closed or closing
		return ofwire.Features{}, fmt.Errorf("handshake: %w", ctx.Err())
	}
	return f, err
}

func handshakeConn(conn of.Conn, timeout time.Duration) (ofwire.Features, error) {
	_ = conn.SetDeadline(time.Now().Add(timeout))
	defer conn.SetDeadline(time.Time{})
	if err := of.Send(conn, ofwire.Hello(1)); err != nil {
		return ofwire.Features{}, fmt.Errorf("send hello: %w", err)
	}
	helloSeen := false
	for {
		req, err := conn.Receive()
		if err != nil {
			return ofwire.Features{}, fmt.Errorf("read: %w", err)
		}
		body := readBody(req.Body)
		switch req.Header.Type {
		case ofwire.TypeHello:
			if req.Header.Version < ofwire.Version && !helloBitmapHas13(body) {
				err := fmt.Errorf("switch offers OpenFlow version %#x, want 0x04 (1.3)", req.Header.Version)
				msg := ofwire.NewMessage(ofwire.TypeError, req.Header.Transaction, ofwire.Body(ofwire.AppendError(nil, 0, 0, []byte(err.Error()))))
				_ = of.Send(conn, msg)
				return ofwire.Features{}, err
			}
			helloSeen = true
			if err := of.Send(conn, ofwire.NewMessage(ofwire.TypeFeaturesRequest, 2, nil)); err != nil {
				return ofwire.Features{}, fmt.Errorf("send features request: %w", err)
			}
		case ofwire.TypeEchoRequest:
			if err := of.Send(conn, ofwire.Echo(req.Header.Transaction, true, body)); err != nil {
				return ofwire.Features{}, fmt.Errorf("echo reply: %w", err)
			}
		case ofwire.TypeError:
			e, _ := ofwire.ParseError(body)
			return ofwire.Features{}, fmt.Errorf("switch refused the handshake: %v", e)
		case ofwire.TypeFeaturesReply:
			if !helloSeen {
				return ofwire.Features{}, errors.New("features reply before hello")
			}
			f, err := ofwire.ParseFeatures(body)
			if err != nil {
				return f, err
			}
			if f.AuxID != 0 {
				return f, fmt.Errorf("auxiliary connection %d of datapath %#x, want main connections only", f.AuxID, f.DatapathID)
			}
			return f, nil
		}
	}
}

// helloBitmapHas13 reports whether hello elements carry a version bitmap
// with OpenFlow 1.3.
func helloBitmapHas13(b []byte) bool {
	for len(b) >= 4 {
		typ, n := int(b[0])<<8|int(b[1]), int(b[2])<<8|int(b[3])
		if n < 4 || n > len(b) {
			return false
		}
		if typ == 1 && n >= 8 && b[7]&(1<<ofwire.Version) != 0 {
			return true
		}
		b = b[min((n+7)&^7, len(b)):]
	}
	return false
}
