package p4runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/proflow-sdn/proflow"
)

// session is the client's connection to one leaf device: a watched stream
// with arbitration, and the primary-only state (pipeline checked, owned
// entries known).
//
// The stream uses the generated p4.v1 client directly, not
// p4runtime-go-client's Client.Run: Run opens the stream with a context that
// is never cancelled, ignores io.EOF (a broken stream goes unreported), and
// its receive goroutine blocks forever on an unbuffered channel once Run
// returns — no reconnection, and a goroutine leak. Writes, table-entry
// construction and the pipeline push go through p4runtime-go-client.
type session struct {
	cfg  *Config
	leaf Leaf
	rpc  p4v1.P4RuntimeClient
	log  *slog.Logger
	m    *metrics // nil: none

	readyMu sync.Mutex // serialises ensureReady

	mu         sync.Mutex
	lib        *client.Client // valid while ready
	election   ElectionID     // the ID this session arbitrates with now
	highest    ElectionID     // the highest election ID the device reported for the role
	fenced     bool           // highest > election: a newer client is primary for the role
	primary    bool
	arbitrated bool // an arbitration answer arrived on the current stream
	ready      bool // primary, pipeline checked, lib loaded
	gen        uint64
	changed    chan struct{} // closed and replaced on every role change
	lastErr    error
	cache      map[proflow.FlowID]pathState // owned entries known to exist, valid for gen
}

// pathState is what the client knows of one path_select entry it owns.
type pathState struct {
	present bool
	port    uint32
}

func newSession(cfg *Config, leaf Leaf, rpc p4v1.P4RuntimeClient, m *metrics) *session {
	return &session{cfg: cfg, leaf: leaf, rpc: rpc, m: m, election: cfg.ElectionID, changed: make(chan struct{}),
		log: cfg.Logger.With(slog.String("leaf", leaf.Name), slog.Uint64("device", leaf.DeviceID))}
}

// setRoleLocked records a role change. Call with s.mu held.
func (s *session) setRoleLocked(primary bool, err error) {
	if s.primary != primary || err != nil {
		s.gen++
		s.ready, s.cache = false, nil
	}
	s.primary = primary
	if err != nil {
		s.lastErr = err
	}
	s.notifyLocked()
}

// notifyLocked wakes everyone waiting for a state change. Call with s.mu held.
func (s *session) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// prepare makes a newly primary session ready at once (pipeline checked and
// pushed if needed), so reads of devices the client never writes to find a
// pipeline, and the first reroute pays no extra round trips.
func (s *session) prepare(ctx context.Context) {
	for {
		s.mu.Lock()
		primary, ready, changed := s.primary, s.ready, s.changed
		s.mu.Unlock()
		if primary && !ready {
			pctx, cancel := context.WithTimeout(ctx, 2*s.cfg.CallTimeout)
			if _, _, err := s.ensureReady(pctx); err != nil && ctx.Err() == nil {
				s.log.Warn("p4runtime: preparing the device failed", slog.String("error", err.Error()))
				cancel()
				if !s.sleep(ctx, s.cfg.MinBackoff) {
					return
				}
				continue
			}
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// sleep waits d on Config.Clock (a ticker's first tick) and reports whether
// it did; false when ctx ended first.
func (s *session) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := s.cfg.Clock.NewTicker(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// run keeps a stream open until ctx ends, reconnecting with backoff timed by
// Config.Clock.
func (s *session) run(ctx context.Context) {
	backoff := s.cfg.MinBackoff
	for {
		start := s.cfg.Clock.Now()
		err := s.stream(ctx)
		s.mu.Lock()
		s.m.streamEnded(s.arbitrated, ctx.Err() != nil)
		s.arbitrated = false
		s.setRoleLocked(false, err)
		s.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if s.cfg.Clock.Now().Sub(start) > s.cfg.MaxBackoff {
			backoff = s.cfg.MinBackoff
		}
		s.log.Warn("p4runtime stream lost; reconnecting", slog.String("error", err.Error()), slog.Duration("backoff", backoff))
		if !s.sleep(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, s.cfg.MaxBackoff)
	}
}

func toProto(e ElectionID) *p4v1.Uint128 { return &p4v1.Uint128{High: e.High, Low: e.Low} }

// stream runs one StreamChannel until it breaks and returns why.
func (s *session) stream(ctx context.Context) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := s.rpc.StreamChannel(sctx)
	if err != nil {
		return fmt.Errorf("open stream: %w", err)
	}
	var sendMu sync.Mutex
	send := func(id ElectionID) error {
		upd := &p4v1.MasterArbitrationUpdate{DeviceId: s.leaf.DeviceID, ElectionId: toProto(id)}
		if s.cfg.Role != "" {
			upd.Role = &p4v1.Role{Name: s.cfg.Role}
		}
		sendMu.Lock()
		defer sendMu.Unlock()
		return st.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: upd}})
	}
	s.mu.Lock()
	id := s.election
	s.mu.Unlock()
	if err := send(id); err != nil {
		return fmt.Errorf("send arbitration: %w", err)
	}
	// No answer within CallTimeout: treat the stream as broken.
	wd := &arbWatchdog{cancel: cancel}
	timer := time.AfterFunc(s.cfg.CallTimeout, wd.fire)
	defer timer.Stop()
	for {
		m, err := st.Recv()
		if err != nil {
			switch {
			case wd.expired():
				return fmt.Errorf("no arbitration answer within %v", s.cfg.CallTimeout)
			case errors.Is(err, io.EOF):
				return errors.New("stream closed by the server")
			}
			return s.deviceError("stream", err)
		}
		switch u := m.GetUpdate().(type) {
		case *p4v1.StreamMessageResponse_Arbitration:
			wd.answer()
			timer.Stop()
			if next, again := s.onArbitration(u.Arbitration); again {
				if err := send(next); err != nil {
					return fmt.Errorf("send arbitration: %w", err)
				}
			}
		case *p4v1.StreamMessageResponse_Error:
			s.m.error(codes.Code(u.Error.GetCanonicalCode()))
			s.log.Warn("p4runtime stream error", slog.String("code", codes.Code(u.Error.GetCanonicalCode()).String()),
				slog.String("message", u.Error.GetMessage()))
		}
	}
}

// arbWatchdog ends a stream that gets no arbitration answer in time. The
// timer and the answer race: a timer that fires once an answer has been
// seen does nothing, so a healthy stream is never cancelled, and a stream
// error counts as a timeout only if the timer ended the stream before any
// answer.
type arbWatchdog struct {
	mu       sync.Mutex
	answered bool
	timedOut bool
	cancel   context.CancelFunc
}

// answer records an arbitration answer.
func (w *arbWatchdog) answer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answered = true
}

// fire is the timer's function: it ends the stream unless an answer came.
func (w *arbWatchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.answered {
		return
	}
	w.timedOut = true
	w.cancel()
}

// expired reports whether fire ended the stream for want of an answer.
func (w *arbWatchdog) expired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.timedOut
}

// onArbitration applies an arbitration notification and says whether to
// arbitrate again (TakeOver) and with which ID.
func (s *session) onArbitration(a *p4v1.MasterArbitrationUpdate) (ElectionID, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.arbitrated {
		s.m.arbitrated()
	}
	s.arbitrated = true
	st := code.Code(a.GetStatus().GetCode())
	highest, known := ElectionID{High: a.GetElectionId().GetHigh(), Low: a.GetElectionId().GetLow()}, a.GetElectionId() != nil
	if known {
		s.highest = highest
	}
	if st == code.Code_OK {
		if known {
			s.election = highest
		}
		s.fenced = false
		if !s.primary {
			s.log.Info("p4runtime: primary", slog.String("election_id", s.election.String()))
		}
		s.setRoleLocked(true, nil)
		return ElectionID{}, false
	}
	if s.primary {
		s.log.Warn("p4runtime: lost primary", slog.String("status", st.String()), slog.String("highest", highest.String()))
	}
	if fenced := known && s.election.Less(highest); fenced != s.fenced {
		s.fenced = fenced
		if fenced {
			s.log.Warn("p4runtime: fenced: a newer primary holds the role; writes are refused",
				slog.String("role", s.cfg.Role), slog.String("election_id", s.election.String()), slog.String("highest", highest.String()))
		}
	}
	s.setRoleLocked(false, nil)
	if st == code.Code_NOT_FOUND && s.cfg.TakeOver {
		s.fenced = false
		next := s.cfg.ElectionID
		if known {
			next = highest.Add(s.cfg.ElectionID)
		}
		s.log.Info("p4runtime: no primary; taking over", slog.String("election_id", next.String()))
		s.election = next
		return next, true
	}
	return ElectionID{}, false
}

// state returns the role and the channel closed at the next change.
func (s *session) state() (primary, arbitrated bool, changed <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.primary, s.arbitrated, s.changed
}

// settled reports whether the session has an arbitration answer and, when
// primary, is ready; and returns the channel closed at the next change.
func (s *session) settled() (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arbitrated && (!s.primary || s.ready), s.changed
}

func (s *session) notPrimary(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := fmt.Sprintf("election id %s is a backup", s.election)
	if !s.arbitrated {
		msg = "no arbitration on the stream yet"
		if s.lastErr != nil {
			msg += " (last stream error: " + s.lastErr.Error() + ")"
		}
	}
	if s.fenced { // a newer owner stays newer across reconnections
		msg = fmt.Sprintf("%s: election id %s superseded by %s; %s", s.roleName(), s.election, s.highest, msg)
	}
	return &DeviceError{Leaf: s.leaf.Name, Device: s.leaf.DeviceID, Op: op, Code: codes.PermissionDenied, Message: msg, Err: ErrNotPrimary,
		Fenced: s.fenced}
}

// ensureReady makes sure this session is primary and the device runs the
// configured pipeline (pushing it when the cookie differs), and returns the
// go-client bound to the current election ID with the pipeline's P4Info.
func (s *session) ensureReady(ctx context.Context) (*client.Client, uint64, error) {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	s.mu.Lock()
	primary, ready, lib, gen, id := s.primary, s.ready, s.lib, s.gen, s.election
	s.mu.Unlock()
	if !primary {
		return nil, 0, s.notPrimary("prepare")
	}
	if ready {
		return lib, gen, nil
	}
	var role *p4v1.Role
	if s.cfg.Role != "" {
		role = &p4v1.Role{Name: s.cfg.Role}
	}
	lib = client.NewClientForRole(s.rpc, s.leaf.DeviceID, toProto(id), role)
	want := s.cfg.Pipeline.cookie()
	// The cookie check uses the generated client: p4runtime-go-client's
	// GetFwdPipe formats the gRPC error with %v, losing its status code.
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	resp, err := s.rpc.GetForwardingPipelineConfig(cctx, &p4v1.GetForwardingPipelineConfigRequest{
		DeviceId: s.leaf.DeviceID, ResponseType: p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY})
	cancel()
	if err != nil {
		return nil, 0, s.deviceError("get pipeline cookie", err)
	}
	cctx, cancel = context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	if c := resp.GetConfig().GetCookie(); c == nil || c.GetCookie() != want {
		text, err := prototext.Marshal(s.cfg.Pipeline.P4Info)
		if err != nil {
			return nil, 0, fmt.Errorf("p4runtime: encode p4info: %w", err)
		}
		if _, err := lib.SetFwdPipeFromBytes(cctx, s.cfg.Pipeline.DeviceConfig, text, want); err != nil {
			return nil, 0, s.fail(gen, "set pipeline config", err)
		}
		s.log.Info("p4runtime: pushed pipeline config", slog.Uint64("cookie", want), slog.Uint64("device_cookie", c.GetCookie()))
	} else if _, err := lib.GetFwdPipe(cctx, client.GetFwdPipeP4InfoAndCookie); err != nil {
		// Same pipeline: load its P4Info into the go-client (its only way in).
		s.m.error(codes.Unavailable)
		return nil, 0, &DeviceError{Leaf: s.leaf.Name, Device: s.leaf.DeviceID, Op: "get pipeline p4info", Code: codes.Unavailable, Message: err.Error(), Err: err}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen || !s.primary {
		return nil, 0, s.notPrimaryLocked("prepare")
	}
	s.lib, s.ready, s.cache = lib, true, map[proflow.FlowID]pathState{}
	s.notifyLocked()
	return lib, gen, nil
}

func (s *session) notPrimaryLocked(op string) error {
	return &DeviceError{Leaf: s.leaf.Name, Device: s.leaf.DeviceID, Op: op, Code: codes.PermissionDenied,
		Message: fmt.Sprintf("lost primary (election id %s) while preparing", s.election), Err: ErrNotPrimary}
}

// fail converts an RPC error and, for PERMISSION_DENIED, records the loss
// of primary. A refusal of a write the session sent as primary means the
// device has a newer primary for the role, and the device tells every
// client of the role so on the stream; fail waits for that notification
// (up to CallTimeout, as it may arrive just after the refusal) so that the
// error says whether the client is fenced.
func (s *session) fail(gen uint64, op string, err error) error {
	de := s.deviceError(op, err)
	if !errors.Is(de, ErrNotPrimary) {
		return de
	}
	s.mu.Lock()
	wasPrimary := s.gen == gen && s.primary
	s.mu.Unlock()
	if wasPrimary {
		s.awaitArbitration(gen)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := de.(*DeviceError); ok && s.fenced {
		d.Fenced = true
		d.Message = fmt.Sprintf("%s (%s: election id %s superseded by %s)", d.Message, s.roleName(), s.election, s.highest)
	}
	if s.gen == gen {
		s.setRoleLocked(false, de)
	}
	return de
}

// awaitArbitration waits until the session leaves generation gen (an
// arbitration notification or a broken stream), up to CallTimeout on the
// wall clock.
func (s *session) awaitArbitration(gen uint64) {
	t := time.NewTimer(s.cfg.CallTimeout)
	defer t.Stop()
	for {
		s.mu.Lock()
		done, changed := s.gen != gen || !s.primary, s.changed
		s.mu.Unlock()
		if done {
			return
		}
		select {
		case <-changed:
		case <-t.C:
			return
		}
	}
}

// roleName names the session's role for messages.
func (s *session) roleName() string {
	if s.cfg.Role == "" {
		return "default role"
	}
	return fmt.Sprintf("role %q", s.cfg.Role)
}

// read runs one Read RPC and returns every entity.
func (s *session) read(ctx context.Context, op string, req *p4v1.ReadRequest) ([]*p4v1.Entity, error) {
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	rs, err := s.rpc.Read(cctx, req)
	if err != nil {
		return nil, s.deviceError(op, err)
	}
	var out []*p4v1.Entity
	for {
		r, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, s.deviceError(op, err)
		}
		out = append(out, r.GetEntities()...)
	}
}
