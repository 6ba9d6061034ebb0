package target

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
)

// errf returns a gRPC status error.
func errf(c codes.Code, format string, args ...any) error {
	return status.Errorf(c, format, args...)
}

// cell is one counter value: acc as of the data-plane reading base, and,
// while live, everything the data plane counted since.
type cell struct {
	acc, base Counts
	live      bool
}

func (c *cell) value(now Counts) Counts {
	if c.live {
		return c.acc.Add(now.Sub(c.base))
	}
	return c.acc
}

func (c *cell) start(now Counts)         { c.base, c.live = now, true }
func (c *cell) freeze(now Counts)        { c.acc, c.live = c.value(now), false }
func (c *cell) set(v Counts, now Counts) { c.acc, c.base = v, now }
func countsOf(d *p4v1.CounterData) Counts {
	return Counts{Bytes: nonNeg(d.GetByteCount()), Packets: nonNeg(d.GetPacketCount())}
}
func nonNeg(v int64) uint64     { return uint64(max(v, 0)) }
func clampInt64(v uint64) int64 { return int64(min(v, math.MaxInt64)) }
func dataOf(c Counts) *p4v1.CounterData {
	return &p4v1.CounterData{ByteCount: clampInt64(c.Bytes), PacketCount: clampInt64(c.Packets)}
}

// entry is one installed match entry.
type entry struct {
	te   *p4v1.TableEntry // canonical, without counter_data
	key  string
	seq  uint64
	cell cell // direct counter
	// For path_select entries with action set_uplink: the flow and port the
	// Dataplane realizes.
	bound bool
	flow  proflow.FlowID
	port  uint32
}

type table struct {
	info    *tableInfo
	entries map[string]*entry
	def     *p4v1.TableEntry // the default entry when modified, nil for the program's
	defCell cell
}

type activePath struct {
	e    *entry
	port uint32
}

// programDefault returns the default action leaf.p4 declares for a table
// (P4Info does not carry a non-const default action).
func programDefault(table string) (string, bool) {
	switch table {
	case p4.PathTable:
		return p4.KeepBasePathAction, true
	case p4.RouteTable:
		return p4.DropAction, true
	}
	return "", false
}

func (d *device) resetTables() {
	d.tables = map[uint32]*table{}
	for id, ti := range d.pipe.tables {
		d.tables[id] = &table{info: ti, entries: map[string]*entry{}}
	}
	d.cells = map[cellKey]*cell{}
	d.paths = map[proflow.FlowID]activePath{}
}

type cellKey struct {
	counter uint32
	index   int64
}

// matchKey checks the match fields of an entry and returns them in canonical
// form (sorted by field ID, shortest bytestrings) with the lookup key.
//
// Code choice: the Bytestrings section (§8.4) names OUT_OF_RANGE for a value
// that does not fit its bit width, but the match-format (§9.1.1) and
// action-parameter (§9.1.2) sections both require INVALID_ARGUMENT for any
// violation, bytestring validity included, and the reference server (p4lang/PI)
// does the same; this target follows §9.1: INVALID_ARGUMENT.
func matchKey(ti *tableInfo, ms []*p4v1.FieldMatch, priority int32) ([]*p4v1.FieldMatch, string, error) {
	tname := ti.t.GetPreamble().GetName()
	out := make([]*p4v1.FieldMatch, 0, len(ms))
	seen := map[uint32]bool{}
	for _, fm := range ms {
		mf := ti.fields[fm.GetFieldId()]
		if mf == nil {
			return nil, "", errf(codes.InvalidArgument, "table %s has no match field id %d", tname, fm.GetFieldId())
		}
		if seen[fm.GetFieldId()] {
			return nil, "", errf(codes.InvalidArgument, "table %s: match field %s given twice", tname, mf.GetName())
		}
		seen[fm.GetFieldId()] = true
		w := mf.GetBitwidth()
		what := func(part string) string { return fmt.Sprintf("table %s field %s %s", tname, mf.GetName(), part) }
		kindErr := func(got string) error {
			return errf(codes.InvalidArgument, "table %s: field %s is a %v match, got a %s match", tname, mf.GetName(), mf.GetMatchType(), got)
		}
		c := &p4v1.FieldMatch{FieldId: fm.GetFieldId()}
		switch m := fm.GetFieldMatchType().(type) {
		case *p4v1.FieldMatch_Exact_:
			if mf.GetMatchType() != p4configv1.MatchField_EXACT {
				return nil, "", kindErr("exact")
			}
			if err := checkBytes(what("value"), m.Exact.GetValue(), w); err != nil {
				return nil, "", errf(codes.InvalidArgument, "%v", err)
			}
			c.FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: canonical(m.Exact.GetValue())}}
		case *p4v1.FieldMatch_Lpm:
			if mf.GetMatchType() != p4configv1.MatchField_LPM {
				return nil, "", kindErr("lpm")
			}
			v, plen := m.Lpm.GetValue(), m.Lpm.GetPrefixLen()
			if err := checkBytes(what("value"), v, w); err != nil {
				return nil, "", errf(codes.InvalidArgument, "%v", err)
			}
			if plen <= 0 || plen > w {
				return nil, "", errf(codes.InvalidArgument, "%s: prefix length %d, want 1..%d (omit the field for a don't-care match)", what("lpm"), plen, w)
			}
			if tz := trailingZeros(v); tz < int(w-plen) && toBig(v).Sign() != 0 {
				return nil, "", errf(codes.InvalidArgument, "%s: value 0x%x has bits set beyond the /%d prefix", what("lpm"), v, plen)
			}
			c.FieldMatchType = &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: canonical(v), PrefixLen: plen}}
		case *p4v1.FieldMatch_Ternary_:
			if mf.GetMatchType() != p4configv1.MatchField_TERNARY {
				return nil, "", kindErr("ternary")
			}
			v, mask := m.Ternary.GetValue(), m.Ternary.GetMask()
			if err := checkBytes(what("value"), v, w); err != nil {
				return nil, "", errf(codes.InvalidArgument, "%v", err)
			}
			if err := checkBytes(what("mask"), mask, w); err != nil {
				return nil, "", errf(codes.InvalidArgument, "%v", err)
			}
			bm, bv := toBig(mask), toBig(v)
			if bm.Sign() == 0 {
				return nil, "", errf(codes.InvalidArgument, "%s: mask is zero; omit the field for a don't-care match", what("ternary"))
			}
			if bv.And(bv, bm).Cmp(toBig(v)) != 0 {
				return nil, "", errf(codes.InvalidArgument, "%s: value 0x%x has bits set outside mask 0x%x", what("ternary"), v, mask)
			}
			c.FieldMatchType = &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: canonical(v), Mask: canonical(mask)}}
		case *p4v1.FieldMatch_Range_:
			if mf.GetMatchType() != p4configv1.MatchField_RANGE {
				return nil, "", kindErr("range")
			}
			lo, hi := m.Range.GetLow(), m.Range.GetHigh()
			if err := checkBytes(what("low"), lo, w); err != nil {
				return nil, "", errf(codes.InvalidArgument, "%v", err)
			}
			if err := checkBytes(what("high"), hi, w); err != nil {
				return nil, "", errf(codes.InvalidArgument, "%v", err)
			}
			if toBig(lo).Cmp(toBig(hi)) > 0 {
				return nil, "", errf(codes.InvalidArgument, "%s: low 0x%x is above high 0x%x", what("range"), lo, hi)
			}
			if toBig(lo).Sign() == 0 && significantBits(hi) == int(w) && fullMask(hi, w) {
				return nil, "", errf(codes.InvalidArgument, "%s: the range covers every value; omit the field for a don't-care match", what("range"))
			}
			c.FieldMatchType = &p4v1.FieldMatch_Range_{Range: &p4v1.FieldMatch_Range{Low: canonical(lo), High: canonical(hi)}}
		case *p4v1.FieldMatch_Optional_:
			if mf.GetMatchType() != p4configv1.MatchField_OPTIONAL {
				return nil, "", kindErr("optional")
			}
			if err := checkBytes(what("value"), m.Optional.GetValue(), w); err != nil {
				return nil, "", errf(codes.InvalidArgument, "%v", err)
			}
			c.FieldMatchType = &p4v1.FieldMatch_Optional_{Optional: &p4v1.FieldMatch_Optional{Value: canonical(m.Optional.GetValue())}}
		default:
			return nil, "", errf(codes.InvalidArgument, "table %s field %s: no match value set (or an unsupported match kind)", tname, mf.GetName())
		}
		out = append(out, c)
	}
	for id, mf := range ti.fields {
		if mf.GetMatchType() == p4configv1.MatchField_EXACT && !seen[id] {
			return nil, "", errf(codes.InvalidArgument, "table %s: exact match field %s is missing (exact fields cannot be don't-care)", tname, mf.GetName())
		}
	}
	slices.SortFunc(out, func(a, b *p4v1.FieldMatch) int { return cmp.Compare(a.GetFieldId(), b.GetFieldId()) })
	var sb strings.Builder
	sb.WriteString(strconv.FormatInt(int64(priority), 10))
	for _, fm := range out {
		sb.WriteByte('|')
		sb.WriteString(strconv.FormatUint(uint64(fm.GetFieldId()), 10))
		switch m := fm.GetFieldMatchType().(type) {
		case *p4v1.FieldMatch_Exact_:
			sb.WriteString("e" + hex.EncodeToString(m.Exact.Value))
		case *p4v1.FieldMatch_Lpm:
			sb.WriteString("l" + hex.EncodeToString(m.Lpm.Value) + "/" + strconv.Itoa(int(m.Lpm.PrefixLen)))
		case *p4v1.FieldMatch_Ternary_:
			sb.WriteString("t" + hex.EncodeToString(m.Ternary.Value) + "&" + hex.EncodeToString(m.Ternary.Mask))
		case *p4v1.FieldMatch_Range_:
			sb.WriteString("r" + hex.EncodeToString(m.Range.Low) + "-" + hex.EncodeToString(m.Range.High))
		case *p4v1.FieldMatch_Optional_:
			sb.WriteString("o" + hex.EncodeToString(m.Optional.Value))
		}
	}
	return out, sb.String(), nil
}

func trailingZeros(b []byte) int {
	n := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == 0 {
			n += 8
			continue
		}
		for v := b[i]; v&1 == 0; v >>= 1 {
			n++
		}
		return n
	}
	return n
}

// checkAction validates a table action and returns it in canonical form.
func (p *pipeline) checkAction(ti *tableInfo, ta *p4v1.TableAction, isDefault bool) (*p4v1.TableAction, error) {
	tname := ti.t.GetPreamble().GetName()
	act, ok := ta.GetType().(*p4v1.TableAction_Action)
	if !ok || act.Action == nil {
		return nil, errf(codes.InvalidArgument, "table %s is a direct table: want an action, got %T", tname, ta.GetType())
	}
	a := act.Action
	ref := ti.actions[a.GetActionId()]
	if ref == nil {
		return nil, errf(codes.InvalidArgument, "action id %#08x is not an action of table %s", a.GetActionId(), tname)
	}
	ai := p.actions[a.GetActionId()]
	aname := ai.a.GetPreamble().GetName()
	switch {
	case isDefault && ref.GetScope() == p4configv1.ActionRef_TABLE_ONLY:
		return nil, errf(codes.PermissionDenied, "action %s is table-only in table %s; it cannot be the default action", aname, tname)
	case !isDefault && ref.GetScope() == p4configv1.ActionRef_DEFAULT_ONLY:
		return nil, errf(codes.PermissionDenied, "action %s is default-only in table %s; it cannot be used in a match entry", aname, tname)
	}
	out := &p4v1.Action{ActionId: a.GetActionId()}
	seen := map[uint32]bool{}
	for _, prm := range a.GetParams() {
		pi := ai.params[prm.GetParamId()]
		if pi == nil {
			return nil, errf(codes.InvalidArgument, "action %s has no parameter id %d", aname, prm.GetParamId())
		}
		if seen[prm.GetParamId()] {
			return nil, errf(codes.InvalidArgument, "action %s: parameter %s given twice", aname, pi.GetName())
		}
		seen[prm.GetParamId()] = true
		if err := checkBytes(fmt.Sprintf("action %s parameter %s", aname, pi.GetName()), prm.GetValue(), pi.GetBitwidth()); err != nil {
			return nil, errf(codes.InvalidArgument, "%v", err)
		}
		out.Params = append(out.Params, &p4v1.Action_Param{ParamId: prm.GetParamId(), Value: canonical(prm.GetValue())})
	}
	for id, pi := range ai.params {
		if !seen[id] {
			return nil, errf(codes.InvalidArgument, "action %s: parameter %s (id %d) is missing; P4Runtime has no default parameter values", aname, pi.GetName(), id)
		}
	}
	slices.SortFunc(out.Params, func(a, b *p4v1.Action_Param) int { return cmp.Compare(a.GetParamId(), b.GetParamId()) })
	return &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: out}}, nil
}

// pathOf returns the flow and port a path_select entry puts in the Dataplane.
func (p *pipeline) pathOf(match []*p4v1.FieldMatch, ta *p4v1.TableAction) (flow proflow.FlowID, port uint32, bound bool, err error) {
	b := p.bind
	a := ta.GetAction()
	if a.GetActionId() != b.setUplink {
		return flow, 0, false, nil
	}
	for _, prm := range a.GetParams() {
		if prm.GetParamId() == b.portParam {
			port = uint32(toUint64(prm.GetValue()))
		}
	}
	var src, dst []byte
	ternary := func(fm *p4v1.FieldMatch, width int32, name string) (uint64, error) {
		t := fm.GetTernary()
		if !fullMask(t.GetMask(), width) {
			return 0, errf(codes.Unimplemented, "%s: field %s has mask 0x%x; this target realizes only exact (all-ones) or omitted masks", p4.PathTable, name, t.GetMask())
		}
		return toUint64(t.GetValue()), nil
	}
	for _, fm := range match {
		var v uint64
		switch fm.GetFieldId() {
		case b.fSrc:
			src = fm.GetExact().GetValue()
		case b.fDst:
			dst = fm.GetExact().GetValue()
		case b.fProto:
			if v, err = ternary(fm, b.protoBits, p4.FieldIPProto); err != nil {
				return
			}
			if v > math.MaxUint8 {
				return flow, 0, false, errf(codes.Unimplemented, "%s: protocol %d does not fit 8 bits", p4.PathTable, v)
			}
			flow.Proto = uint8(v)
		case b.fSport, b.fDport:
			width, name := b.sportBits, p4.FieldL4SrcPort
			if fm.GetFieldId() == b.fDport {
				width, name = b.dportBits, p4.FieldL4DstPort
			}
			if v, err = ternary(fm, width, name); err != nil {
				return
			}
			if v > math.MaxUint16 {
				return flow, 0, false, errf(codes.Unimplemented, "%s: port %d does not fit 16 bits", p4.PathTable, v)
			}
			if fm.GetFieldId() == b.fSport {
				flow.SrcPort = uint16(v)
			} else {
				flow.DstPort = uint16(v)
			}
		}
	}
	flow.Src, flow.Dst = addr4(src), addr4(dst)
	if err := flow.Validate(); err != nil {
		return flow, 0, false, errf(codes.Unimplemented, "%s: entry is not a flow this target realizes: %v", p4.PathTable, err)
	}
	return flow, port, true, nil
}

func addr4(b []byte) netip.Addr {
	var a [4]byte
	v := toUint64(b)
	a[0], a[1], a[2], a[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	return netip.AddrFrom4(a)
}

// writeTableEntry applies one TableEntry update and returns how to undo it.
func (d *device) writeTableEntry(dp Dataplane, typ p4v1.Update_Type, te *p4v1.TableEntry) (func(), error) {
	p := d.pipe
	if te.GetTableId() == 0 {
		return nil, errf(codes.InvalidArgument, "table id 0 is reserved, want a table of the P4Info")
	}
	tb := d.tables[te.GetTableId()]
	if tb == nil {
		return nil, errf(codes.InvalidArgument, "unknown table id %#08x", te.GetTableId())
	}
	ti := tb.info
	tname := ti.t.GetPreamble().GetName()
	if te.GetIsDefaultAction() {
		return d.writeDefault(tb, typ, te)
	}
	// §9.1.4 Constant Tables: the match entries of a const table are
	// immutable. The only updates allowed are MODIFY of an entry's direct
	// resources (with no action, not even the entry's own) and of the default
	// entry (above); anything else is PERMISSION_DENIED. This target does not
	// realize the program's static entries (they live in the opaque device
	// config), so its const tables are empty and such a MODIFY finds no entry.
	if ti.t.GetIsConstTable() {
		switch {
		case typ == p4v1.Update_INSERT || typ == p4v1.Update_DELETE:
			return nil, errf(codes.PermissionDenied, "table %s is const: its entries cannot be inserted or deleted (%v)", tname, typ)
		case typ == p4v1.Update_MODIFY && te.GetAction() != nil:
			return nil, errf(codes.PermissionDenied, "table %s is const: a MODIFY may change only direct resources and must not set an action", tname)
		}
	}
	if len(ti.fields) == 0 && typ == p4v1.Update_INSERT {
		return nil, errf(codes.InvalidArgument, "table %s is keyless: only its default entry can be written", tname)
	}
	switch {
	case ti.needsPriority && te.GetPriority() <= 0:
		return nil, errf(codes.InvalidArgument, "table %s has ternary, range or optional fields: priority %d, want > 0", tname, te.GetPriority())
	case !ti.needsPriority && te.GetPriority() != 0:
		return nil, errf(codes.InvalidArgument, "table %s has only exact and lpm fields: priority %d, want 0", tname, te.GetPriority())
	}
	match, key, err := matchKey(ti, te.GetMatch(), te.GetPriority())
	if err != nil {
		return nil, err
	}
	old := tb.entries[key]
	if typ == p4v1.Update_DELETE { // only the key counts; other fields are ignored
		if old == nil {
			return nil, errf(codes.NotFound, "table %s has no entry %s", tname, key)
		}
		delete(tb.entries, key)
		if err := d.refreshPaths(dp, old); err != nil {
			tb.entries[key] = old
			return nil, err
		}
		return func() { tb.entries[key] = old; _ = d.refreshPaths(dp, old) }, nil
	}
	if te.GetMeterConfig() != nil || te.GetMeterCounterData() != nil {
		return nil, errf(codes.InvalidArgument, "table %s has no direct meter", tname)
	}
	if te.GetCounterData() != nil && ti.directCounter == 0 {
		return nil, errf(codes.InvalidArgument, "table %s has no direct counter; counter_data must be unset", tname)
	}
	if te.GetIdleTimeoutNs() != 0 && ti.t.GetIdleTimeoutBehavior() != p4configv1.Table_NOTIFY_CONTROL {
		return nil, errf(codes.InvalidArgument, "table %s does not support idle timeout; idle_timeout_ns must be 0", tname)
	}
	if te.GetTimeSinceLastHit() != nil {
		return nil, errf(codes.InvalidArgument, "table %s: time_since_last_hit is read-only", tname)
	}
	ne := &entry{key: key}
	ne.te = &p4v1.TableEntry{TableId: te.GetTableId(), Match: match, Priority: te.GetPriority(),
		ControllerMetadata: te.GetControllerMetadata(), Metadata: bytes.Clone(te.GetMetadata()), IdleTimeoutNs: te.GetIdleTimeoutNs()}
	switch typ {
	case p4v1.Update_INSERT:
		if old != nil {
			return nil, errf(codes.AlreadyExists, "table %s already has entry %s", tname, key)
		}
		if te.GetAction() == nil {
			return nil, errf(codes.InvalidArgument, "table %s: INSERT needs an action", tname)
		}
		if ne.te.Action, err = p.checkAction(ti, te.GetAction(), false); err != nil {
			return nil, err
		}
		if size := ti.t.GetSize(); size > 0 && int64(len(tb.entries)) >= size {
			return nil, errf(codes.ResourceExhausted, "table %s is full (%d entries)", tname, size)
		}
		d.seq++
		ne.seq = d.seq
		if cd := te.GetCounterData(); cd != nil {
			ne.cell.acc = countsOf(cd)
		}
	case p4v1.Update_MODIFY:
		if old == nil {
			return nil, errf(codes.NotFound, "table %s has no entry %s to modify", tname, key)
		}
		ne.seq, ne.cell = old.seq, old.cell
		if te.GetAction() == nil {
			// §9.1.2 Action Specification: a MODIFY without an action leaves
			// the entry's action as it is, and one that changes no direct
			// resource either is a no-op. So the update changes only the
			// direct resources it sets (counter_data, below); the entry keeps
			// its metadata, controller_metadata and idle timeout.
			ne.te.Action, ne.te.Metadata, ne.te.ControllerMetadata, ne.te.IdleTimeoutNs =
				old.te.Action, old.te.Metadata, old.te.ControllerMetadata, old.te.IdleTimeoutNs
			break
		}
		// With an action, MODIFY has the assign (full-snapshot) semantics of
		// §12 (Write RPC, update types): action, metadata,
		// controller_metadata and idle timeout are all the request's, unset
		// meaning empty.
		if ne.te.Action, err = p.checkAction(ti, te.GetAction(), false); err != nil {
			return nil, err
		}
	default:
		return nil, errf(codes.InvalidArgument, "update type %v, want INSERT, MODIFY or DELETE", typ)
	}
	if te.GetTableId() == p.bind.pathTable {
		if ne.flow, ne.port, ne.bound, err = p.pathOf(match, ne.te.Action); err != nil {
			return nil, err
		}
	}
	tb.entries[key] = ne
	if err := d.refreshPaths(dp, old, ne); err != nil {
		if old != nil {
			tb.entries[key] = old
		} else {
			delete(tb.entries, key)
		}
		return nil, err
	}
	if cd := te.GetCounterData(); cd != nil && typ == p4v1.Update_MODIFY {
		now, _ := d.pathCounts(dp, ne)
		ne.cell.set(countsOf(cd), now)
	}
	undo := func() {
		if old != nil {
			tb.entries[key] = old
		} else {
			delete(tb.entries, key)
		}
		_ = d.refreshPaths(dp, ne, old)
	}
	return undo, nil
}

func (d *device) writeDefault(tb *table, typ p4v1.Update_Type, te *p4v1.TableEntry) (func(), error) {
	ti := tb.info
	tname := ti.t.GetPreamble().GetName()
	switch {
	case typ != p4v1.Update_MODIFY:
		return nil, errf(codes.InvalidArgument, "table %s: the default entry always exists; %v is not allowed, only MODIFY", tname, typ)
	case len(te.GetMatch()) > 0 || te.GetPriority() != 0:
		return nil, errf(codes.InvalidArgument, "table %s: the default entry takes no match fields and priority 0", tname)
	case ti.t.GetConstDefaultActionId() != 0:
		return nil, errf(codes.PermissionDenied, "table %s: the default action is const", tname)
	case te.GetCounterData() != nil && ti.directCounter == 0:
		return nil, errf(codes.InvalidArgument, "table %s has no direct counter; counter_data must be unset", tname)
	case te.GetMeterConfig() != nil || te.GetMeterCounterData() != nil:
		return nil, errf(codes.InvalidArgument, "table %s has no direct meter", tname)
	}
	oldDef, oldCell := tb.def, tb.defCell
	if te.GetAction() == nil {
		tb.def, tb.defCell = nil, cell{}
	} else {
		act, err := d.pipe.checkAction(ti, te.GetAction(), true)
		if err != nil {
			return nil, err
		}
		tb.def = &p4v1.TableEntry{TableId: te.GetTableId(), IsDefaultAction: true, Action: act,
			ControllerMetadata: te.GetControllerMetadata(), Metadata: bytes.Clone(te.GetMetadata())}
	}
	if cd := te.GetCounterData(); cd != nil {
		tb.defCell.acc = countsOf(cd)
	}
	return func() { tb.def, tb.defCell = oldDef, oldCell }, nil
}

// defaultEntry returns the table's default entry as a read returns it.
func (d *device) defaultEntry(tb *table) *p4v1.TableEntry {
	if tb.def != nil {
		return proto.Clone(tb.def).(*p4v1.TableEntry)
	}
	te := &p4v1.TableEntry{TableId: tb.info.t.GetPreamble().GetId(), IsDefaultAction: true}
	id := tb.info.t.GetConstDefaultActionId()
	if id == 0 {
		if name, ok := programDefault(tb.info.t.GetPreamble().GetName()); ok {
			for aid := range tb.info.actions {
				if d.pipe.actions[aid].a.GetPreamble().GetName() == name {
					id = aid
				}
			}
		}
	}
	if id != 0 {
		te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{ActionId: id}}}
	}
	return te
}

// refreshPaths recomputes, for the flows of the given path_select entries,
// which entry wins (highest priority, then the oldest) and brings the
// Dataplane in line. On error the Dataplane is unchanged for that flow.
func (d *device) refreshPaths(dp Dataplane, es ...*entry) error {
	for _, e := range es {
		if e == nil || !e.bound {
			continue
		}
		if err := d.refreshPath(dp, e.flow); err != nil {
			return err
		}
	}
	return nil
}

func (d *device) refreshPath(dp Dataplane, flow proflow.FlowID) error {
	var best *entry
	for _, e := range d.tables[d.pipe.bind.pathTable].entries {
		if !e.bound || e.flow != flow {
			continue
		}
		if best == nil || e.te.Priority > best.te.Priority || (e.te.Priority == best.te.Priority && e.seq < best.seq) {
			best = e
		}
	}
	cur, had := d.paths[flow]
	switch {
	case best == nil && !had:
		return nil
	case best == nil:
		if err := dp.ClearPath(d.id, flow); err != nil {
			return dataplaneErr("clear path", flow, err)
		}
	case !had || cur.port != best.port:
		if err := dp.SetPath(d.id, flow, best.port); err != nil {
			return dataplaneErr("set path", flow, err)
		}
	}
	// A MODIFY replaces the entry object but keeps its key and counter
	// state: the counter goes on counting. Otherwise the old winner's
	// counter stops and the new winner's starts.
	if same := had && best != nil && cur.e.key == best.key; !same {
		if now, err := dp.PathCounters(d.id, flow); err == nil {
			if had {
				cur.e.cell.freeze(now)
			}
			if best != nil {
				best.cell.start(now)
			}
		}
	}
	if best == nil {
		delete(d.paths, flow)
	} else {
		d.paths[flow] = activePath{e: best, port: best.port}
	}
	return nil
}

func dataplaneErr(op string, flow proflow.FlowID, err error) error {
	c := status.Code(err)
	if c == codes.Unknown || c == codes.OK {
		c = codes.Internal
	}
	return errf(c, "data plane %s for %v: %v", op, flow, err)
}

// pathCounts reads the data plane's counters for e's flow, zero when e is
// not realized.
func (d *device) pathCounts(dp Dataplane, e *entry) (Counts, error) {
	if !e.bound {
		return Counts{}, nil
	}
	c, err := dp.PathCounters(d.id, e.flow)
	if err != nil {
		return Counts{}, dataplaneErr("read path counters", e.flow, err)
	}
	return c, nil
}

// directValue returns the value of e's direct counter.
func (d *device) directValue(dp Dataplane, e *entry) (Counts, error) {
	if !e.cell.live {
		return e.cell.acc, nil
	}
	now, err := d.pathCounts(dp, e)
	if err != nil {
		return Counts{}, err
	}
	return e.cell.value(now), nil
}

// portCounts returns the data plane's value for a cell of a port counter.
func (d *device) rawCell(dp Dataplane, counter uint32, index int64) (Counts, error) {
	b := d.pipe.bind
	if (counter != b.portRx && counter != b.portTx) || index < 0 || index > math.MaxUint32 {
		return Counts{}, nil
	}
	pc, err := dp.PortCounters(d.id, uint32(index))
	if err != nil {
		c := status.Code(err)
		if c == codes.Unknown {
			c = codes.Internal
		}
		return Counts{}, errf(c, "data plane port %d counters: %v", index, err)
	}
	if counter == b.portRx {
		return pc.Rx, nil
	}
	return pc.Tx, nil
}

func (d *device) cellValue(dp Dataplane, counter uint32, index int64) (Counts, error) {
	now, err := d.rawCell(dp, counter, index)
	if err != nil {
		return Counts{}, err
	}
	if c := d.cells[cellKey{counter, index}]; c != nil {
		return c.value(now), nil
	}
	return now, nil
}

// checkIndex validates an indexed-counter entity's ID and index.
func (d *device) counterRange(ce *p4v1.CounterEntry) (*p4configv1.Counter, int64, int64, error) {
	c := d.pipe.counters[ce.GetCounterId()]
	if c == nil {
		return nil, 0, 0, errf(codes.InvalidArgument, "unknown counter id %#08x", ce.GetCounterId())
	}
	if ce.GetIndex() == nil {
		return c, 0, c.GetSize(), nil
	}
	i := ce.GetIndex().GetIndex()
	switch {
	case i < 0:
		return nil, 0, 0, errf(codes.InvalidArgument, "counter %s: index %d is negative", c.GetPreamble().GetName(), i)
	case i >= c.GetSize():
		return nil, 0, 0, errf(codes.OutOfRange, "counter %s: index %d is beyond the array's %d cells", c.GetPreamble().GetName(), i, c.GetSize())
	}
	return c, i, i + 1, nil
}

func (d *device) writeCounter(dp Dataplane, typ p4v1.Update_Type, ce *p4v1.CounterEntry) (func(), error) {
	if typ != p4v1.Update_MODIFY {
		return nil, errf(codes.InvalidArgument, "counter entries take only MODIFY, got %v", typ)
	}
	c, lo, hi, err := d.counterRange(ce)
	if err != nil {
		return nil, err
	}
	if ce.GetData() == nil {
		return func() {}, nil
	}
	id := c.GetPreamble().GetId()
	prev := map[cellKey]*cell{}
	for i := lo; i < hi; i++ {
		now, err := d.rawCell(dp, id, i)
		if err != nil {
			return nil, err
		}
		k := cellKey{id, i}
		prev[k] = d.cells[k]
		d.cells[k] = &cell{acc: countsOf(ce.GetData()), base: now, live: true}
	}
	return func() {
		for k, c := range prev {
			if c == nil {
				delete(d.cells, k)
			} else {
				d.cells[k] = c
			}
		}
	}, nil
}

func (d *device) writeDirectCounter(dp Dataplane, typ p4v1.Update_Type, dce *p4v1.DirectCounterEntry) (func(), error) {
	if typ != p4v1.Update_MODIFY {
		return nil, errf(codes.InvalidArgument, "direct counter entries take only MODIFY, got %v", typ)
	}
	e, tb, err := d.lookupDirect(dce.GetTableEntry())
	if err != nil {
		return nil, err
	}
	if dce.GetData() == nil {
		return func() {}, nil
	}
	if e == nil { // the default entry
		old := tb.defCell
		tb.defCell.acc = countsOf(dce.GetData())
		return func() { tb.defCell = old }, nil
	}
	old := e.cell
	now, err := d.pathCounts(dp, e)
	if err != nil {
		return nil, err
	}
	e.cell.set(countsOf(dce.GetData()), now)
	return func() { e.cell = old }, nil
}

// lookupDirect finds the entry a DirectCounterEntry names; a nil entry with
// a table means the table's default entry.
func (d *device) lookupDirect(te *p4v1.TableEntry) (*entry, *table, error) {
	if te == nil || te.GetTableId() == 0 {
		return nil, nil, errf(codes.InvalidArgument, "direct counter entry names no table")
	}
	tb := d.tables[te.GetTableId()]
	if tb == nil {
		return nil, nil, errf(codes.InvalidArgument, "unknown table id %#08x", te.GetTableId())
	}
	if tb.info.directCounter == 0 {
		return nil, nil, errf(codes.InvalidArgument, "table %s has no direct counter", tb.info.t.GetPreamble().GetName())
	}
	if te.GetIsDefaultAction() {
		return nil, tb, nil
	}
	_, key, err := matchKey(tb.info, te.GetMatch(), te.GetPriority())
	if err != nil {
		return nil, nil, err
	}
	e := tb.entries[key]
	if e == nil {
		return nil, nil, errf(codes.NotFound, "table %s has no entry %s", tb.info.t.GetPreamble().GetName(), key)
	}
	return e, tb, nil
}
