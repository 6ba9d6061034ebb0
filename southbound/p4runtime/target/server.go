package target

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/genproto/googleapis/rpc/code"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/nilcheck"
)

// APIVersion is the P4Runtime version the Server implements, reported by
// the Capabilities RPC.
const APIVersion = "1.4.0-rc.5"

// DefaultMaxStreams is the default limit of open arbitrated streams per
// (device, role).
const DefaultMaxStreams = 16

// Options holds the Server's settings; the zero value is usable.
type Options struct {
	// Pipeline, when set, is committed on every device at start, as a
	// VERIFY_AND_COMMIT would, so clients can write before pushing a config.
	Pipeline *p4v1.ForwardingPipelineConfig
	// MaxStreams limits the arbitrated streams per (device, role)
	// (default DefaultMaxStreams); one more is refused with RESOURCE_EXHAUSTED.
	MaxStreams int
	// PromoteBackup departs from the P4Runtime specification: when the
	// primary's stream closes, the connected backup with the highest election
	// ID becomes primary at once and is notified (OK; the others get
	// ALREADY_EXISTS), and the highest election ID the server remembers drops
	// to the new primary's. By default (false) the server follows §5: it
	// stays without a primary, tells every backup so (NOT_FOUND), and waits
	// for a MasterArbitrationUpdate with an election ID at least as high as
	// the highest it has seen.
	PromoteBackup bool
}

// Server is a P4Runtime server (p4.v1.P4RuntimeServer) for leaf switches
// running leaf.p4. It keeps the P4Runtime state itself: the pipeline config
// and table entries of every device, indexed-counter writes, and the
// arbitration of clients per (device, role). It checks every request against
// the P4Info and answers with the status codes the P4Runtime specification
// (v1.4) prescribes. The forwarding effect of path_select entries and the
// counters come from a Dataplane.
//
// Create one with New and serve it with Register on a grpc.Server. A Server
// is safe for concurrent use; requests are serialised by one lock, which
// makes the processing of Write and Read requests strictly serialisable.
type Server struct {
	p4v1.UnimplementedP4RuntimeServer

	dp         Dataplane
	maxStreams int
	promote    bool

	mu      sync.Mutex
	devices map[uint64]*device
}

var _ p4v1.P4RuntimeServer = (*Server)(nil)

type device struct {
	id    uint64
	pipe  *pipeline // nil until a config is committed
	roles map[string]*roleState

	tables map[uint32]*table
	cells  map[cellKey]*cell
	paths  map[proflow.FlowID]activePath
	seq    uint64
}

// New returns a Server for the given device IDs, fronting dp. It refuses a
// nil dp, typed nils (a nil *MemDataplane, say) included.
func New(dp Dataplane, devices []uint64, opts *Options) (*Server, error) {
	if nilcheck.IsNil(dp) {
		return nil, fmt.Errorf("p4runtime target: Dataplane is nil (%T), want a usable one", dp)
	}
	if len(devices) == 0 {
		return nil, errors.New("p4runtime target: no devices, want at least one device ID")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	s := &Server{dp: dp, maxStreams: o.MaxStreams, promote: o.PromoteBackup, devices: map[uint64]*device{}}
	var pipe *pipeline
	if o.Pipeline != nil {
		var err error
		if pipe, err = compile(o.Pipeline); err != nil {
			return nil, fmt.Errorf("p4runtime target: pipeline: %w", err)
		}
	}
	for _, id := range devices {
		if _, dup := s.devices[id]; dup {
			return nil, fmt.Errorf("p4runtime target: device ID %d listed twice", id)
		}
		d := &device{id: id, roles: map[string]*roleState{}}
		if pipe != nil {
			d.pipe = pipe
			d.resetTables()
		}
		s.devices[id] = d
	}
	return s, nil
}

// Register registers the Server's P4Runtime service on gs.
func (s *Server) Register(gs *grpc.Server) { p4v1.RegisterP4RuntimeServer(gs, s) }

// Capabilities reports the P4Runtime API version.
func (s *Server) Capabilities(context.Context, *p4v1.CapabilitiesRequest) (*p4v1.CapabilitiesResponse, error) {
	return &p4v1.CapabilitiesResponse{P4RuntimeApiVersion: APIVersion}, nil
}

func (s *Server) device(id uint64) (*device, error) {
	d := s.devices[id]
	if d == nil {
		return nil, errf(codes.NotFound, "unknown device id %d", id)
	}
	return d, nil
}

// checkPrimary applies the checks every mutating RPC starts with (§12:
// device and role known, election ID not zero, caller primary). Call with
// s.mu held.
func (s *Server) checkPrimary(devID uint64, role string, election *p4v1.Uint128) (*device, error) {
	d, err := s.device(devID)
	if err != nil {
		return nil, err
	}
	if err := checkElectionID(devID, role, election); err != nil {
		return nil, err
	}
	rs := d.roles[role]
	if rs == nil {
		if role != "" {
			return nil, errf(codes.NotFound, "device %d has no role %q", devID, role)
		}
		return nil, errf(codes.PermissionDenied, "device %d has no primary client; open a stream and arbitrate first", devID)
	}
	if rs.primary == nil {
		return nil, errf(codes.PermissionDenied, "device %d role %q has no primary client", devID, role)
	}
	if election == nil || cmp128(election, rs.primary.election) != 0 {
		return nil, errf(codes.PermissionDenied, "device %d role %q: election id %s is not the primary's (%s)",
			devID, role, fmt128(election), fmt128(rs.primary.election))
	}
	return d, nil
}

// Write applies a batch of updates (§12). Device, role and primary checks
// fail the whole RPC without details; otherwise a batch with any failed
// update returns UNKNOWN with one p4.v1.Error per update, in order, OK for
// the ones that succeeded. CONTINUE_ON_ERROR and ROLLBACK_ON_ERROR are
// supported; DATAPLANE_ATOMIC is UNIMPLEMENTED.
func (s *Server) Write(ctx context.Context, req *p4v1.WriteRequest) (*p4v1.WriteResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.checkPrimary(req.GetDeviceId(), req.GetRole(), req.GetElectionId())
	if err != nil {
		return nil, err
	}
	if d.pipe == nil {
		return nil, errf(codes.FailedPrecondition, "device %d has no forwarding pipeline config; call SetForwardingPipelineConfig first", d.id)
	}
	switch req.GetAtomicity() {
	case p4v1.WriteRequest_CONTINUE_ON_ERROR, p4v1.WriteRequest_ROLLBACK_ON_ERROR:
	case p4v1.WriteRequest_DATAPLANE_ATOMIC:
		return nil, errf(codes.Unimplemented, "atomicity DATAPLANE_ATOMIC is not supported")
	default:
		return nil, errf(codes.InvalidArgument, "unknown atomicity %d", req.GetAtomicity())
	}
	rollback := req.GetAtomicity() == p4v1.WriteRequest_ROLLBACK_ON_ERROR
	errs := make([]error, len(req.GetUpdates()))
	var undos []func()
	failed := false
	for i, u := range req.GetUpdates() {
		undo, err := s.apply(d, u)
		if err != nil {
			errs[i], failed = err, true
			if rollback {
				break
			}
			continue
		}
		undos = append(undos, undo)
	}
	if !failed {
		return &p4v1.WriteResponse{}, nil
	}
	if rollback {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
		for i := range errs {
			if errs[i] == nil {
				errs[i] = errf(codes.Aborted, "rolled back: another update of the batch failed")
			}
		}
	}
	return nil, batchError("write failure", errs)
}

// batchError builds the UNKNOWN status of §12.3 with one p4.v1.Error per
// element of the batch.
func batchError(msg string, errs []error) error {
	st := &rpcstatus.Status{Code: int32(code.Code_UNKNOWN), Message: msg}
	for _, err := range errs {
		pe := &p4v1.Error{CanonicalCode: int32(code.Code_OK)}
		if err != nil {
			s, _ := status.FromError(err)
			pe = &p4v1.Error{CanonicalCode: int32(s.Code()), Message: s.Message()}
		}
		a, err := anypb.New(pe)
		if err != nil { // cannot happen for a well-formed message
			return errf(codes.Internal, "encode error details: %v", err)
		}
		st.Details = append(st.Details, a)
	}
	return status.FromProto(st).Err()
}

func (s *Server) apply(d *device, u *p4v1.Update) (func(), error) {
	typ := u.GetType()
	if typ == p4v1.Update_UNSPECIFIED || p4v1.Update_Type_name[int32(typ)] == "" {
		return nil, errf(codes.InvalidArgument, "update type %v, want INSERT, MODIFY or DELETE", typ)
	}
	switch e := u.GetEntity().GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		return d.writeTableEntry(s.dp, typ, e.TableEntry)
	case *p4v1.Entity_CounterEntry:
		return d.writeCounter(s.dp, typ, e.CounterEntry)
	case *p4v1.Entity_DirectCounterEntry:
		return d.writeDirectCounter(s.dp, typ, e.DirectCounterEntry)
	case nil:
		return nil, errf(codes.InvalidArgument, "update has no entity")
	default:
		return nil, unsupportedEntity(u.GetEntity())
	}
}

// unsupportedEntity answers entities of kinds leaf.p4's P4Info has no
// objects for.
func unsupportedEntity(e *p4v1.Entity) error {
	switch x := e.GetEntity().(type) {
	case *p4v1.Entity_PacketReplicationEngineEntry, *p4v1.Entity_ExternEntry:
		return errf(codes.Unimplemented, "entity %T is not supported by this target", x)
	default:
		return errf(codes.InvalidArgument, "entity %T refers to no object of the P4Info (which has none of that kind)", x)
	}
}

// SetForwardingPipelineConfig supports VERIFY and VERIFY_AND_COMMIT; a
// commit clears the device's forwarding state (table entries, counter
// writes, paths in the Dataplane). VERIFY_AND_SAVE, COMMIT and
// RECONCILE_AND_COMMIT are UNIMPLEMENTED.
func (s *Server) SetForwardingPipelineConfig(ctx context.Context, req *p4v1.SetForwardingPipelineConfigRequest) (*p4v1.SetForwardingPipelineConfigResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.checkPrimary(req.GetDeviceId(), req.GetRole(), req.GetElectionId())
	if err != nil {
		return nil, err
	}
	switch a := req.GetAction(); a {
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY, p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT:
		if req.GetConfig() == nil {
			return nil, errf(codes.InvalidArgument, "%v needs a config", a)
		}
		pipe, err := compile(req.GetConfig())
		if err != nil {
			return nil, errf(codes.InvalidArgument, "device %d: config cannot be realized: %v", d.id, err)
		}
		if a == p4v1.SetForwardingPipelineConfigRequest_VERIFY {
			return &p4v1.SetForwardingPipelineConfigResponse{}, nil
		}
		if d.pipe != nil {
			for flow := range d.paths {
				if err := s.dp.ClearPath(d.id, flow); err != nil {
					return nil, dataplaneErr("clear path", flow, err)
				}
			}
		}
		d.pipe = pipe
		d.resetTables()
		return &p4v1.SetForwardingPipelineConfigResponse{}, nil
	case p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_SAVE, p4v1.SetForwardingPipelineConfigRequest_COMMIT,
		p4v1.SetForwardingPipelineConfigRequest_RECONCILE_AND_COMMIT:
		return nil, errf(codes.Unimplemented, "action %v is not supported; use VERIFY_AND_COMMIT", a)
	default:
		return nil, errf(codes.InvalidArgument, "action %v, want VERIFY or VERIFY_AND_COMMIT", a)
	}
}

// GetForwardingPipelineConfig returns the committed config, or an unset
// config before one is committed.
func (s *Server) GetForwardingPipelineConfig(ctx context.Context, req *p4v1.GetForwardingPipelineConfigRequest) (*p4v1.GetForwardingPipelineConfigResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.device(req.GetDeviceId())
	if err != nil {
		return nil, err
	}
	if d.pipe == nil {
		return &p4v1.GetForwardingPipelineConfigResponse{}, nil
	}
	full := d.pipe.config
	cfg := &p4v1.ForwardingPipelineConfig{Cookie: proto.Clone(full.GetCookie()).(*p4v1.ForwardingPipelineConfig_Cookie)}
	if full.GetCookie() == nil {
		cfg.Cookie = nil
	}
	switch rt := req.GetResponseType(); rt {
	case p4v1.GetForwardingPipelineConfigRequest_ALL:
		cfg.P4Info, cfg.P4DeviceConfig = full.GetP4Info(), full.GetP4DeviceConfig()
	case p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY:
	case p4v1.GetForwardingPipelineConfigRequest_P4INFO_AND_COOKIE:
		cfg.P4Info = full.GetP4Info()
	case p4v1.GetForwardingPipelineConfigRequest_DEVICE_CONFIG_AND_COOKIE:
		cfg.P4DeviceConfig = full.GetP4DeviceConfig()
	default:
		return nil, errf(codes.InvalidArgument, "unknown response type %d", rt)
	}
	return &p4v1.GetForwardingPipelineConfigResponse{Config: proto.Clone(cfg).(*p4v1.ForwardingPipelineConfig)}, nil
}

// Read answers a batch of read requests (§13): the entities of the valid
// requests are streamed back, and if any request failed the RPC ends with
// UNKNOWN and one p4.v1.Error per request, in order.
func (s *Server) Read(req *p4v1.ReadRequest, stream p4v1.P4Runtime_ReadServer) error {
	resps, err := s.read(req)
	for _, r := range resps {
		if err := stream.Send(r); err != nil {
			return err
		}
	}
	return err
}

// read builds the responses of a Read under the lock.
func (s *Server) read(req *p4v1.ReadRequest) ([]*p4v1.ReadResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.device(req.GetDeviceId())
	if err != nil {
		return nil, err
	}
	if err := d.checkReadRole(req.GetRole()); err != nil {
		return nil, err
	}
	if d.pipe == nil {
		return nil, errf(codes.FailedPrecondition, "device %d has no forwarding pipeline config", d.id)
	}
	var resps []*p4v1.ReadResponse
	errs := make([]error, len(req.GetEntities()))
	failed := false
	for i, e := range req.GetEntities() {
		ents, err := d.readEntity(s.dp, e)
		if err != nil {
			errs[i], failed = err, true
			continue
		}
		if len(ents) > 0 {
			resps = append(resps, &p4v1.ReadResponse{Entities: ents})
		}
	}
	if failed {
		return resps, batchError("read failure", errs)
	}
	return resps, nil
}

// checkReadRole applies ReadRequest.role, which §13 makes a filter: only
// the entities that belong to the role are reported. A role's entities are
// defined by its role.config (§5.2); this server accepts no role config
// (arbitrate refuses one), and a role without one has full pipeline access
// (§5.2), so every entity belongs to every role it knows and the filter
// keeps them all. A role the device does not know (no client ever
// arbitrated for it) defines nothing to filter by: like Write (§12, check
// 1), the read fails with NOT_FOUND. The default role ("") is always known.
func (d *device) checkReadRole(role string) error {
	if role == "" || d.roles[role] != nil {
		return nil
	}
	return errf(codes.NotFound, "device %d has no role %q: no client has arbitrated for it, so it has no entities to read", d.id, role)
}

func (d *device) readEntity(dp Dataplane, e *p4v1.Entity) ([]*p4v1.Entity, error) {
	switch x := e.GetEntity().(type) {
	case *p4v1.Entity_TableEntry:
		return d.readTable(dp, x.TableEntry)
	case *p4v1.Entity_CounterEntry:
		return d.readCounter(dp, x.CounterEntry)
	case *p4v1.Entity_DirectCounterEntry:
		return d.readDirect(dp, x.DirectCounterEntry)
	case nil:
		return nil, errf(codes.InvalidArgument, "read request has no entity set; a wildcard over all entity kinds is not allowed")
	case *p4v1.Entity_PacketReplicationEngineEntry, *p4v1.Entity_ExternEntry:
		return nil, unsupportedEntity(e)
	default:
		// Meters, registers, action profiles, value sets, digests: the
		// P4Info has none, so a wildcard (ID 0) reads nothing and any other
		// ID is unknown.
		if id := entityID(e); id != 0 {
			return nil, unsupportedEntity(e)
		}
		return nil, nil
	}
}

func entityID(e *p4v1.Entity) uint32 {
	switch x := e.GetEntity().(type) {
	case *p4v1.Entity_MeterEntry:
		return x.MeterEntry.GetMeterId()
	case *p4v1.Entity_DirectMeterEntry:
		return x.DirectMeterEntry.GetTableEntry().GetTableId()
	case *p4v1.Entity_RegisterEntry:
		return x.RegisterEntry.GetRegisterId()
	case *p4v1.Entity_ActionProfileMember:
		return x.ActionProfileMember.GetActionProfileId()
	case *p4v1.Entity_ActionProfileGroup:
		return x.ActionProfileGroup.GetActionProfileId()
	case *p4v1.Entity_ValueSetEntry:
		return x.ValueSetEntry.GetValueSetId()
	case *p4v1.Entity_DigestEntry:
		return x.DigestEntry.GetDigestId()
	}
	return 0
}

// readTable answers a TableEntry read with the wildcard rules of §9.1.6.
func (d *device) readTable(dp Dataplane, f *p4v1.TableEntry) ([]*p4v1.Entity, error) {
	var tables []*table
	if f.GetTableId() == 0 {
		if len(f.GetMatch()) > 0 || f.GetAction() != nil || f.GetPriority() != 0 || f.GetControllerMetadata() != 0 ||
			len(f.GetMetadata()) > 0 || f.GetIsDefaultAction() {
			return nil, errf(codes.InvalidArgument, "a read of all tables (table_id 0) takes no other filter")
		}
		for _, tb := range d.tables {
			tables = append(tables, tb)
		}
		slices.SortFunc(tables, func(a, b *table) int {
			return cmp.Compare(a.info.t.GetPreamble().GetId(), b.info.t.GetPreamble().GetId())
		})
	} else {
		tb := d.tables[f.GetTableId()]
		if tb == nil {
			return nil, errf(codes.InvalidArgument, "unknown table id %#08x", f.GetTableId())
		}
		tables = []*table{tb}
	}
	withCounter := f.GetCounterData() != nil
	var out []*p4v1.Entity
	for _, tb := range tables {
		if f.GetIsDefaultAction() {
			te := d.defaultEntry(tb)
			if withCounter && tb.info.directCounter != 0 {
				te.CounterData = dataOf(tb.defCell.acc)
			}
			out = append(out, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}})
			continue
		}
		var cands []*entry
		if len(f.GetMatch()) > 0 {
			_, key, err := matchKey(tb.info, f.GetMatch(), f.GetPriority())
			if err != nil {
				return nil, err
			}
			if f.GetPriority() != 0 || !tb.info.needsPriority {
				if e := tb.entries[key]; e != nil {
					cands = append(cands, e)
				}
			} else { // match given, priority wildcarded
				_, suffix, _ := cutPriority(key)
				for _, e := range tb.entries {
					if _, s, _ := cutPriority(e.key); s == suffix {
						cands = append(cands, e)
					}
				}
			}
		} else {
			for _, e := range tb.entries {
				cands = append(cands, e)
			}
		}
		slices.SortFunc(cands, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
		for _, e := range cands {
			switch {
			case f.GetAction() != nil && f.GetAction().GetAction().GetActionId() != e.te.GetAction().GetAction().GetActionId():
				continue
			case f.GetPriority() != 0 && f.GetPriority() != e.te.GetPriority():
				continue
			case f.GetControllerMetadata() != 0 && f.GetControllerMetadata() != e.te.GetControllerMetadata():
				continue
			case len(f.GetMetadata()) > 0 && string(f.GetMetadata()) != string(e.te.GetMetadata()):
				continue
			}
			te := proto.Clone(e.te).(*p4v1.TableEntry)
			if withCounter && tb.info.directCounter != 0 {
				v, err := d.directValue(dp, e)
				if err != nil {
					return nil, err
				}
				te.CounterData = dataOf(v)
			}
			out = append(out, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}})
		}
	}
	return out, nil
}

func cutPriority(key string) (string, string, bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == '|' {
			return key[:i], key[i:], true
		}
	}
	return key, "", false
}

func (d *device) readCounter(dp Dataplane, f *p4v1.CounterEntry) ([]*p4v1.Entity, error) {
	var ids []uint32
	if f.GetCounterId() == 0 {
		if f.GetIndex() != nil {
			return nil, errf(codes.InvalidArgument, "a read of all counters (counter_id 0) takes no index")
		}
		for id := range d.pipe.counters {
			ids = append(ids, id)
		}
		slices.Sort(ids)
	} else {
		ids = []uint32{f.GetCounterId()}
	}
	var out []*p4v1.Entity
	for _, id := range ids {
		_, lo, hi, err := d.counterRange(&p4v1.CounterEntry{CounterId: id, Index: f.GetIndex()})
		if err != nil {
			return nil, err
		}
		for i := lo; i < hi; i++ {
			v, err := d.cellValue(dp, id, i)
			if err != nil {
				return nil, err
			}
			out = append(out, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
				CounterId: id, Index: &p4v1.Index{Index: i}, Data: dataOf(v)}}})
		}
	}
	return out, nil
}

func (d *device) readDirect(dp Dataplane, f *p4v1.DirectCounterEntry) ([]*p4v1.Entity, error) {
	te := f.GetTableEntry()
	if te.GetTableId() != 0 && (len(te.GetMatch()) > 0 || te.GetIsDefaultAction()) {
		e, tb, err := d.lookupDirect(te)
		if err != nil {
			return nil, err
		}
		v, key := tb.defCell.acc, &p4v1.TableEntry{TableId: te.GetTableId(), IsDefaultAction: true}
		if e != nil {
			if v, err = d.directValue(dp, e); err != nil {
				return nil, err
			}
			key = &p4v1.TableEntry{TableId: e.te.GetTableId(), Match: e.te.GetMatch(), Priority: e.te.GetPriority()}
		}
		return []*p4v1.Entity{{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{
			TableEntry: proto.Clone(key).(*p4v1.TableEntry), Data: dataOf(v)}}}}, nil
	}
	var tables []*table
	if te.GetTableId() == 0 {
		for _, tb := range d.tables {
			if tb.info.directCounter != 0 {
				tables = append(tables, tb)
			}
		}
	} else {
		tb := d.tables[te.GetTableId()]
		switch {
		case tb == nil:
			return nil, errf(codes.InvalidArgument, "unknown table id %#08x", te.GetTableId())
		case tb.info.directCounter == 0:
			return nil, errf(codes.InvalidArgument, "table %s has no direct counter", tb.info.t.GetPreamble().GetName())
		}
		tables = []*table{tb}
	}
	var out []*p4v1.Entity
	for _, tb := range tables {
		es := make([]*entry, 0, len(tb.entries))
		for _, e := range tb.entries {
			es = append(es, e)
		}
		slices.SortFunc(es, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
		for _, e := range es {
			v, err := d.directValue(dp, e)
			if err != nil {
				return nil, err
			}
			key := &p4v1.TableEntry{TableId: e.te.GetTableId(), Match: e.te.GetMatch(), Priority: e.te.GetPriority()}
			out = append(out, &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{
				TableEntry: proto.Clone(key).(*p4v1.TableEntry), Data: dataOf(v)}}})
		}
	}
	return out, nil
}
