package target

import (
	"errors"
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/protobuf/proto"

	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
)

// pipeline is a committed forwarding-pipeline config, indexed for checking
// entities against its P4Info, and bound to the Dataplane.
type pipeline struct {
	config   *p4v1.ForwardingPipelineConfig
	tables   map[uint32]*tableInfo
	actions  map[uint32]*actionInfo
	counters map[uint32]*p4configv1.Counter
	direct   map[uint32]*p4configv1.DirectCounter
	bind     binding
}

type tableInfo struct {
	t             *p4configv1.Table
	fields        map[uint32]*p4configv1.MatchField
	actions       map[uint32]*p4configv1.ActionRef
	needsPriority bool
	directCounter uint32
}

type actionInfo struct {
	a      *p4configv1.Action
	params map[uint32]*p4configv1.Action_Param
}

// binding names the leaf program's objects the Dataplane realizes.
type binding struct {
	pathTable                                   uint32
	fSrc, fDst, fProto, fSport, fDport          uint32
	setUplink, portParam                        uint32
	portRx, portTx                              uint32
	protoBits, sportBits, dportBits, paramWidth int32
}

var errNotRealizable = errors.New("cannot be realized by this target")

// compile checks cfg's P4Info and binds it to the leaf program. Its errors
// are meant for INVALID_ARGUMENT.
func compile(cfg *p4v1.ForwardingPipelineConfig) (*pipeline, error) {
	info := cfg.GetP4Info()
	if info == nil {
		return nil, errors.New("config has no p4info")
	}
	p := &pipeline{
		config:   proto.Clone(cfg).(*p4v1.ForwardingPipelineConfig),
		tables:   map[uint32]*tableInfo{},
		actions:  map[uint32]*actionInfo{},
		counters: map[uint32]*p4configv1.Counter{},
		direct:   map[uint32]*p4configv1.DirectCounter{},
	}
	ids := map[uint32]string{}
	claim := func(kind string, pre *p4configv1.Preamble, prefix p4configv1.P4Ids_Prefix) error {
		id := pre.GetId()
		switch {
		case id == 0:
			return fmt.Errorf("%s %q has id 0, a reserved value", kind, pre.GetName())
		case p4configv1.P4Ids_Prefix(id>>24) != prefix:
			return fmt.Errorf("%s %q has id %#08x, want prefix %#02x", kind, pre.GetName(), id, uint32(prefix))
		case pre.GetName() == "":
			return fmt.Errorf("%s %#08x has no name", kind, id)
		}
		if other, dup := ids[id]; dup {
			return fmt.Errorf("%s %q reuses id %#08x of %s", kind, pre.GetName(), id, other)
		}
		ids[id] = pre.GetName()
		return nil
	}
	for _, a := range info.GetActions() {
		if err := claim("action", a.GetPreamble(), p4configv1.P4Ids_ACTION); err != nil {
			return nil, err
		}
		ai := &actionInfo{a: a, params: map[uint32]*p4configv1.Action_Param{}}
		for _, prm := range a.GetParams() {
			if prm.GetId() == 0 || ai.params[prm.GetId()] != nil {
				return nil, fmt.Errorf("action %q: parameter %q has id %d, want a unique non-zero id", a.GetPreamble().GetName(), prm.GetName(), prm.GetId())
			}
			if prm.GetBitwidth() <= 0 {
				return nil, fmt.Errorf("action %q: parameter %q has bit width %d, want > 0", a.GetPreamble().GetName(), prm.GetName(), prm.GetBitwidth())
			}
			ai.params[prm.GetId()] = prm
		}
		p.actions[a.GetPreamble().GetId()] = ai
	}
	for _, c := range info.GetCounters() {
		if err := claim("counter", c.GetPreamble(), p4configv1.P4Ids_COUNTER); err != nil {
			return nil, err
		}
		if c.GetSize() <= 0 {
			return nil, fmt.Errorf("counter %q has size %d, want > 0", c.GetPreamble().GetName(), c.GetSize())
		}
		p.counters[c.GetPreamble().GetId()] = c
	}
	for _, c := range info.GetDirectCounters() {
		if err := claim("direct counter", c.GetPreamble(), p4configv1.P4Ids_DIRECT_COUNTER); err != nil {
			return nil, err
		}
		p.direct[c.GetPreamble().GetId()] = c
	}
	for _, t := range info.GetTables() {
		if err := claim("table", t.GetPreamble(), p4configv1.P4Ids_TABLE); err != nil {
			return nil, err
		}
		name := t.GetPreamble().GetName()
		if t.GetImplementationId() != 0 {
			return nil, fmt.Errorf("table %q uses action profile %#08x: %w", name, t.GetImplementationId(), errNotRealizable)
		}
		ti := &tableInfo{t: t, fields: map[uint32]*p4configv1.MatchField{}, actions: map[uint32]*p4configv1.ActionRef{}}
		for _, mf := range t.GetMatchFields() {
			if mf.GetId() == 0 || ti.fields[mf.GetId()] != nil {
				return nil, fmt.Errorf("table %q: match field %q has id %d, want a unique non-zero id", name, mf.GetName(), mf.GetId())
			}
			if mf.GetBitwidth() <= 0 {
				return nil, fmt.Errorf("table %q: match field %q has bit width %d, want > 0", name, mf.GetName(), mf.GetBitwidth())
			}
			switch mf.GetMatchType() {
			case p4configv1.MatchField_EXACT, p4configv1.MatchField_LPM:
			case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
				ti.needsPriority = true
			default:
				return nil, fmt.Errorf("table %q: match field %q has match type %v: %w", name, mf.GetName(), mf.GetMatchType(), errNotRealizable)
			}
			ti.fields[mf.GetId()] = mf
		}
		for _, ref := range t.GetActionRefs() {
			if p.actions[ref.GetId()] == nil {
				return nil, fmt.Errorf("table %q refers to unknown action %#08x", name, ref.GetId())
			}
			ti.actions[ref.GetId()] = ref
		}
		if id := t.GetConstDefaultActionId(); id != 0 && ti.actions[id] == nil {
			return nil, fmt.Errorf("table %q: const default action %#08x is not one of its actions", name, id)
		}
		for _, id := range t.GetDirectResourceIds() {
			dc := p.direct[id]
			if dc == nil {
				return nil, fmt.Errorf("table %q: direct resource %#08x is not a direct counter: %w", name, id, errNotRealizable)
			}
			if dc.GetDirectTableId() != t.GetPreamble().GetId() {
				return nil, fmt.Errorf("table %q lists direct counter %q, which belongs to table %#08x", name, dc.GetPreamble().GetName(), dc.GetDirectTableId())
			}
			ti.directCounter = id
		}
		p.tables[t.GetPreamble().GetId()] = ti
	}
	for _, c := range p.direct {
		if p.tables[c.GetDirectTableId()] == nil {
			return nil, fmt.Errorf("direct counter %q: table %#08x does not exist", c.GetPreamble().GetName(), c.GetDirectTableId())
		}
	}
	if n := len(info.GetMeters()) + len(info.GetDirectMeters()) + len(info.GetRegisters()) + len(info.GetDigests()) +
		len(info.GetActionProfiles()) + len(info.GetValueSets()) + len(info.GetExterns()) + len(info.GetControllerPacketMetadata()); n > 0 {
		return nil, fmt.Errorf("p4info declares %d meters, registers, digests, action profiles, value sets, externs or controller headers: %w", n, errNotRealizable)
	}
	if err := p.bindLeaf(); err != nil {
		return nil, err
	}
	return p, nil
}

// bindLeaf finds the leaf program's objects by name (package p4) and checks
// their shape: the Dataplane realizes path_select, set_uplink and the port
// counters; any other table is kept as plain state.
func (p *pipeline) bindLeaf() error {
	var b binding
	byName := func(name string) *tableInfo {
		for _, t := range p.tables {
			if t.t.GetPreamble().GetName() == name {
				return t
			}
		}
		return nil
	}
	pt := byName(p4.PathTable)
	if pt == nil {
		return fmt.Errorf("p4info has no table %q (leaf.p4): %w", p4.PathTable, errNotRealizable)
	}
	b.pathTable = pt.t.GetPreamble().GetId()
	want := []struct {
		name string
		kind p4configv1.MatchField_MatchType
		dst  *uint32
		bits *int32
	}{
		{p4.FieldIPv4Src, p4configv1.MatchField_EXACT, &b.fSrc, nil},
		{p4.FieldIPv4Dst, p4configv1.MatchField_EXACT, &b.fDst, nil},
		{p4.FieldIPProto, p4configv1.MatchField_TERNARY, &b.fProto, &b.protoBits},
		{p4.FieldL4SrcPort, p4configv1.MatchField_TERNARY, &b.fSport, &b.sportBits},
		{p4.FieldL4DstPort, p4configv1.MatchField_TERNARY, &b.fDport, &b.dportBits},
	}
	if len(pt.fields) != len(want) {
		return fmt.Errorf("table %q has %d match fields, want %d (leaf.p4): %w", p4.PathTable, len(pt.fields), len(want), errNotRealizable)
	}
	for _, w := range want {
		var found *p4configv1.MatchField
		for _, mf := range pt.fields {
			if mf.GetName() == w.name {
				found = mf
			}
		}
		if found == nil || found.GetMatchType() != w.kind {
			return fmt.Errorf("table %q needs a %v match field %q (leaf.p4): %w", p4.PathTable, w.kind, w.name, errNotRealizable)
		}
		if w.bits == nil && found.GetBitwidth() != 32 {
			return fmt.Errorf("table %q: field %q has %d bits, want an IPv4 address (32): %w", p4.PathTable, w.name, found.GetBitwidth(), errNotRealizable)
		}
		*w.dst = found.GetId()
		if w.bits != nil {
			*w.bits = found.GetBitwidth()
		}
	}
	for id := range pt.actions {
		if p.actions[id].a.GetPreamble().GetName() == p4.SetUplinkAction {
			b.setUplink = id
		}
	}
	if b.setUplink == 0 {
		return fmt.Errorf("table %q has no action %q (leaf.p4): %w", p4.PathTable, p4.SetUplinkAction, errNotRealizable)
	}
	su := p.actions[b.setUplink]
	if len(su.params) != 1 {
		return fmt.Errorf("action %q has %d parameters, want 1 (port): %w", p4.SetUplinkAction, len(su.params), errNotRealizable)
	}
	for id, prm := range su.params {
		if prm.GetBitwidth() > 32 {
			return fmt.Errorf("action %q: port has %d bits, want at most 32: %w", p4.SetUplinkAction, prm.GetBitwidth(), errNotRealizable)
		}
		b.portParam, b.paramWidth = id, prm.GetBitwidth()
	}
	for id, c := range p.counters {
		switch c.GetPreamble().GetName() {
		case p4.PortRxCounter:
			b.portRx = id
		case p4.PortTxCounter:
			b.portTx = id
		}
	}
	if b.portRx == 0 || b.portTx == 0 {
		return fmt.Errorf("p4info lacks counter %q or %q (leaf.p4): %w", p4.PortRxCounter, p4.PortTxCounter, errNotRealizable)
	}
	p.bind = b
	return nil
}

func (p *pipeline) cookie() *p4v1.ForwardingPipelineConfig_Cookie { return p.config.GetCookie() }
