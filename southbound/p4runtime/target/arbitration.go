package target

import (
	"context"
	"fmt"
	"io"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/genproto/googleapis/rpc/code"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// roleState is the arbitration state of one (device, role) (§5).
type roleState struct {
	device   uint64
	name     string
	highest  *p4v1.Uint128 // highest election ID ever seen; nil if none
	primary  *session
	sessions map[*session]struct{}
	config   *anypb.Any
}

// session is one StreamChannel. Its outgoing messages go through an outbox
// drained by the stream's sender goroutine, so notifications never block
// the server's lock.
type session struct {
	arbitrated bool
	device     uint64
	role       string
	election   *p4v1.Uint128 // nil: unset, lower than any election ID

	mu     sync.Mutex
	queue  []*p4v1.StreamMessageResponse
	signal chan struct{}
}

func newSession() *session { return &session{signal: make(chan struct{}, 1)} }

func (s *session) push(m *p4v1.StreamMessageResponse) {
	s.mu.Lock()
	s.queue = append(s.queue, m)
	s.mu.Unlock()
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// pump sends queued messages until ctx ends or a send fails.
func (s *session) pump(ctx context.Context, send func(*p4v1.StreamMessageResponse) error) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.signal:
		}
		s.mu.Lock()
		q := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, m := range q {
			if err := send(m); err != nil {
				return err
			}
		}
	}
}

// drain returns and forgets the queued messages (tests).
func (s *session) drain() []*p4v1.StreamMessageResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

func cmp128(a, b *p4v1.Uint128) int {
	switch {
	case a.GetHigh() != b.GetHigh():
		if a.GetHigh() < b.GetHigh() {
			return -1
		}
		return 1
	case a.GetLow() != b.GetLow():
		if a.GetLow() < b.GetLow() {
			return -1
		}
		return 1
	}
	return 0
}

func fmt128(a *p4v1.Uint128) string {
	if a == nil {
		return "unset"
	}
	if a.GetHigh() == 0 {
		return fmt.Sprint(a.GetLow())
	}
	return fmt.Sprintf("%d:%d", a.GetHigh(), a.GetLow())
}

func clone128(a *p4v1.Uint128) *p4v1.Uint128 {
	if a == nil {
		return nil
	}
	return &p4v1.Uint128{High: a.GetHigh(), Low: a.GetLow()}
}

// StreamChannel runs one client's stream: arbitration (§5) and stream
// errors for packet-out and digest acks, which leaf.p4 does not support.
func (s *Server) StreamChannel(stream p4v1.P4Runtime_StreamChannelServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	sess := newSession()
	sent := make(chan error, 1)
	go func() { sent <- sess.pump(ctx, stream.Send) }()
	defer func() {
		s.detach(sess)
		cancel()
		<-sent
	}()
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := s.handleStream(sess, req); err != nil {
			return err
		}
	}
}

// handleStream handles one stream message; an error ends the stream with
// that status.
func (s *Server) handleStream(sess *session, req *p4v1.StreamMessageRequest) error {
	switch u := req.GetUpdate().(type) {
	case *p4v1.StreamMessageRequest_Arbitration:
		return s.arbitrate(sess, u.Arbitration)
	case *p4v1.StreamMessageRequest_Packet:
		c, msg := codes.Unimplemented, "leaf.p4 has no packet-out controller header; packet dropped"
		if !s.isPrimary(sess) {
			c, msg = codes.PermissionDenied, "only the primary client may send packet-out; packet dropped"
		}
		sess.push(streamError(c, msg, &p4v1.StreamError_PacketOut{PacketOut: &p4v1.PacketOutError{PacketOut: u.Packet}}))
	case *p4v1.StreamMessageRequest_DigestAck:
		sess.push(streamError(codes.InvalidArgument, fmt.Sprintf("digest id %#08x is not in the P4Info (leaf.p4 has no digests)", u.DigestAck.GetDigestId()),
			&p4v1.StreamError_DigestListAck{DigestListAck: &p4v1.DigestListAckError{DigestListAck: u.DigestAck}}))
	default:
		sess.push(streamError(codes.InvalidArgument, fmt.Sprintf("unsupported stream message %T", u),
			&p4v1.StreamError_Other{Other: &p4v1.StreamOtherError{}}))
	}
	return nil
}

func streamError(c codes.Code, msg string, details any) *p4v1.StreamMessageResponse {
	se := &p4v1.StreamError{CanonicalCode: int32(c), Message: msg}
	switch d := details.(type) {
	case *p4v1.StreamError_PacketOut:
		se.Details = d
	case *p4v1.StreamError_DigestListAck:
		se.Details = d
	case *p4v1.StreamError_Other:
		se.Details = d
	}
	return &p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Error{Error: se}}
}

func (s *Server) isPrimary(sess *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sess.arbitrated {
		return false
	}
	rs := s.devices[sess.device].roles[sess.role]
	return rs != nil && rs.primary == sess
}

// arbitrate applies the rules of §5.3 to a MasterArbitrationUpdate.
func (s *Server) arbitrate(sess *session, u *p4v1.MasterArbitrationUpdate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	role := u.GetRole().GetName()
	if u.GetRole().GetConfig() != nil {
		return errf(codes.InvalidArgument, "role %q: role.config is set, but this server agrees no role-config scheme; leave it unset", role)
	}
	if err := checkElectionID(u.GetDeviceId(), role, u.GetElectionId()); err != nil {
		return err
	}
	var rs *roleState
	if !sess.arbitrated {
		d, err := s.device(u.GetDeviceId())
		if err != nil {
			return err
		}
		rs = d.roles[role]
		if rs == nil {
			rs = &roleState{device: d.id, name: role, sessions: map[*session]struct{}{}}
			d.roles[role] = rs
		}
		if inUse(rs, u.GetElectionId(), sess) {
			return errf(codes.InvalidArgument, "device %d role %q: election id %s is already used by another client", d.id, role, fmt128(u.GetElectionId()))
		}
		if len(rs.sessions) >= s.maxStreams {
			return errf(codes.ResourceExhausted, "device %d role %q already has %d streams, the limit", d.id, role, s.maxStreams)
		}
		sess.arbitrated, sess.device, sess.role = true, d.id, role
		rs.sessions[sess] = struct{}{}
	} else {
		switch {
		case u.GetDeviceId() != sess.device:
			return errf(codes.FailedPrecondition, "stream is for device %d, got an update for device %d", sess.device, u.GetDeviceId())
		case role != sess.role:
			return errf(codes.FailedPrecondition, "stream is for role %q, got an update for role %q; open a new stream to change role", sess.role, role)
		}
		rs = s.devices[sess.device].roles[role]
		if inUse(rs, u.GetElectionId(), sess) {
			return errf(codes.InvalidArgument, "device %d role %q: election id %s is already used by another client", sess.device, role, fmt128(u.GetElectionId()))
		}
	}
	sess.election = clone128(u.GetElectionId())
	wasPrimary := rs.primary == sess
	if sess.election != nil && (rs.highest == nil || cmp128(sess.election, rs.highest) >= 0) {
		// Becomes or stays primary. Writes are serialised by s.mu, so none
		// of the previous primary's is in flight here.
		rs.primary, rs.highest = sess, clone128(sess.election)
		s.notifyAll(rs)
		return nil
	}
	if wasPrimary { // downgraded itself
		rs.primary = nil
		s.notifyAll(rs)
		return nil
	}
	s.notify(rs, sess)
	return nil
}

// checkElectionID refuses an election ID that is set but zero, as Stratum
// does (INVALID_ARGUMENT): zero is no client's ID, and an unset one already
// says "backup, never primary" (§5).
func checkElectionID(devID uint64, role string, id *p4v1.Uint128) error {
	if id != nil && id.GetHigh() == 0 && id.GetLow() == 0 {
		return errf(codes.InvalidArgument, "device %d role %q: election id is set but 0, want one above 0; leave it unset to be a backup", devID, role)
	}
	return nil
}

func inUse(rs *roleState, id *p4v1.Uint128, except *session) bool {
	if id == nil {
		return false
	}
	for other := range rs.sessions {
		if other != except && other.election != nil && cmp128(other.election, id) == 0 {
			return true
		}
	}
	return false
}

// detach removes a closed stream; a departing primary leaves the role
// without one (or, with Options.PromoteBackup, hands over to the best backup).
func (s *Server) detach(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !sess.arbitrated {
		return
	}
	rs := s.devices[sess.device].roles[sess.role]
	delete(rs.sessions, sess)
	if rs.primary != sess {
		return
	}
	rs.primary = nil
	if s.promote {
		var best *session
		for o := range rs.sessions {
			if o.election != nil && (best == nil || cmp128(o.election, best.election) > 0) {
				best = o
			}
		}
		if best != nil {
			rs.primary, rs.highest = best, clone128(best.election)
		}
	}
	s.notifyAll(rs)
}

func (s *Server) notifyAll(rs *roleState) {
	for o := range rs.sessions {
		s.notify(rs, o)
	}
}

// notify sends the advisory of §5.4 to one client of rs.
func (s *Server) notify(rs *roleState, to *session) {
	st := &rpcstatus.Status{Code: int32(code.Code_OK)}
	switch {
	case rs.primary == to:
	case rs.primary != nil:
		st = &rpcstatus.Status{Code: int32(code.Code_ALREADY_EXISTS), Message: "a primary client is connected; this client is a backup"}
	default:
		st = &rpcstatus.Status{Code: int32(code.Code_NOT_FOUND), Message: "no primary client is connected"}
	}
	upd := &p4v1.MasterArbitrationUpdate{DeviceId: rs.device, ElectionId: clone128(rs.highest), Status: st}
	if rs.name != "" || rs.config != nil {
		upd.Role = &p4v1.Role{Name: rs.name, Config: proto.Clone(rs.config).(*anypb.Any)}
		if rs.config == nil {
			upd.Role.Config = nil
		}
	}
	to.push(&p4v1.StreamMessageResponse{Update: &p4v1.StreamMessageResponse_Arbitration{Arbitration: upd}})
}
