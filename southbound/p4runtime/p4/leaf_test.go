package p4

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
)

// The test reads leaf.p4 with a small regular-expression parser (enough for
// this program's shape: one declaration per statement, @id on every P4Runtime
// object) and checks that the committed P4Info describes the same objects,
// with the same IDs, names, bit widths, match kinds and parameters.

type srcParam struct {
	Name string
	Bits int32
}

type srcField struct {
	Name string
	Bits int32
	Kind string // P4Info MatchType name: EXACT, LPM, TERNARY, ...
}

type srcTable struct {
	ID          uint32
	Fields      []srcField
	Actions     []string // qualified names, in declaration order
	DefaultOnly []string
	TableOnly   []string
	Counter     string // qualified direct counter name, or ""
	Size        int64
}

type srcProgram struct {
	Tables         map[string]srcTable
	Actions        map[string]uint32
	Params         map[string][]srcParam
	Counters       map[string]int64 // name -> size
	CounterIDs     map[string]uint32
	DirectCounters map[string]uint32
	Units          map[string]string // counter name -> unit (BOTH, BYTES, PACKETS)
}

var (
	reDefine     = regexp.MustCompile(`(?m)^#define\s+(\w+)\s+(\d+)`)
	reTypeDecl   = regexp.MustCompile(`(?s)\b(header|struct)\s+(\w+)\s*\{(.*?)\}`)
	reMember     = regexp.MustCompile(`(\w+(?:<\d+>)?)\s+(\w+)\s*;`)
	reControl    = regexp.MustCompile(`\bcontrol\s+(\w+)\s*\(([^)]*)\)\s*\{`)
	reCtrlParam  = regexp.MustCompile(`(?:inout|in|out)\s+(\w+)\s+(\w+)`)
	reCounter    = regexp.MustCompile(`@id\((0x[0-9a-fA-F]+)\)\s*counter\(\s*(\w+)\s*,\s*CounterType\.(\w+)\s*\)\s*(\w+)\s*;`)
	reDirect     = regexp.MustCompile(`@id\((0x[0-9a-fA-F]+)\)\s*direct_counter\(\s*CounterType\.(\w+)\s*\)\s*(\w+)\s*;`)
	reAction     = regexp.MustCompile(`@id\((0x[0-9a-fA-F]+)\)\s*action\s+(\w+)\s*\(([^)]*)\)`)
	reTable      = regexp.MustCompile(`@id\((0x[0-9a-fA-F]+)\)\s*table\s+(\w+)\s*\{`)
	reKeyBlock   = regexp.MustCompile(`(?s)key\s*=\s*\{(.*?)\}`)
	reKeyEntry   = regexp.MustCompile(`([\w.]+)\s*:\s*(\w+)\s*(?:@name\("(\w+)"\))?\s*;`)
	reActBlock   = regexp.MustCompile(`(?s)actions\s*=\s*\{(.*?)\}`)
	reActRef     = regexp.MustCompile(`(@defaultonly\s+|@tableonly\s+)?(\w+)\s*;`)
	reCountersAt = regexp.MustCompile(`counters\s*=\s*(\w+)\s*;`)
	reSize       = regexp.MustCompile(`size\s*=\s*(\d+)\s*;`)
	reBits       = regexp.MustCompile(`^bit<(\d+)>$`)
)

// block returns the text between the brace at open and its match.
func block(src string, open int) (string, error) {
	depth := 0
	for i := open; i < len(src); i++ {
		switch src[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return src[open+1 : i], nil
			}
		}
	}
	return "", fmt.Errorf("unbalanced braces from offset %d", open)
}

func stripComments(src string) string {
	src = regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(src, "")
	return regexp.MustCompile(`//[^\n]*`).ReplaceAllString(src, "")
}

func parseID(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		t.Fatalf("bad @id %q: %v", s, err)
	}
	return uint32(v)
}

func unitName(counterType string) string {
	switch counterType {
	case "packets_and_bytes":
		return "BOTH"
	case "bytes":
		return "BYTES"
	case "packets":
		return "PACKETS"
	}
	return "UNSPECIFIED(" + counterType + ")"
}

func parseLeaf(t *testing.T, src string) *srcProgram {
	t.Helper()
	src = stripComments(src)
	defines := map[string]int64{}
	for _, m := range reDefine.FindAllStringSubmatch(src, -1) {
		v, _ := strconv.ParseInt(m[2], 10, 64)
		defines[m[1]] = v
	}
	// Types: header and struct members, for resolving key expressions.
	types := map[string]map[string]string{}
	for _, m := range reTypeDecl.FindAllStringSubmatch(src, -1) {
		members := map[string]string{}
		for _, mm := range reMember.FindAllStringSubmatch(m[3], -1) {
			members[mm[2]] = mm[1]
		}
		types[m[2]] = members
	}
	width := func(vars map[string]string, expr string) int32 {
		parts := strings.Split(expr, ".")
		typ, ok := vars[parts[0]]
		if !ok {
			t.Fatalf("key %q: %q is not a control parameter", expr, parts[0])
		}
		for _, p := range parts[1:] {
			typ, ok = types[typ][p]
			if !ok {
				t.Fatalf("key %q: no member %q", expr, p)
			}
		}
		m := reBits.FindStringSubmatch(typ)
		if m == nil {
			t.Fatalf("key %q has type %q, want bit<W>", expr, typ)
		}
		w, _ := strconv.Atoi(m[1])
		return int32(w)
	}

	p := &srcProgram{
		Tables: map[string]srcTable{}, Actions: map[string]uint32{}, Params: map[string][]srcParam{},
		Counters: map[string]int64{}, CounterIDs: map[string]uint32{}, DirectCounters: map[string]uint32{},
		Units: map[string]string{},
	}
	for _, loc := range reControl.FindAllStringSubmatchIndex(src, -1) {
		ctrl := src[loc[2]:loc[3]]
		vars := map[string]string{}
		for _, m := range reCtrlParam.FindAllStringSubmatch(src[loc[4]:loc[5]], -1) {
			vars[m[2]] = m[1]
		}
		body, err := block(src, loc[1]-1)
		if err != nil {
			t.Fatalf("control %s: %v", ctrl, err)
		}
		q := func(name string) string { return ctrl + "." + name }
		for _, m := range reCounter.FindAllStringSubmatch(body, -1) {
			size, ok := defines[m[2]]
			if !ok {
				size, _ = strconv.ParseInt(m[2], 0, 64)
			}
			p.Counters[q(m[4])] = size
			p.CounterIDs[q(m[4])] = parseID(t, m[1])
			p.Units[q(m[4])] = unitName(m[3])
		}
		for _, m := range reDirect.FindAllStringSubmatch(body, -1) {
			p.DirectCounters[q(m[3])] = parseID(t, m[1])
			p.Units[q(m[3])] = unitName(m[2])
		}
		for _, m := range reAction.FindAllStringSubmatch(body, -1) {
			p.Actions[q(m[2])] = parseID(t, m[1])
			var params []srcParam
			for _, decl := range strings.Split(m[3], ",") {
				f := strings.Fields(decl)
				if len(f) == 0 {
					continue
				}
				if len(f) != 2 {
					t.Fatalf("action %s: cannot read parameter %q", m[2], decl)
				}
				bm := reBits.FindStringSubmatch(f[0])
				if bm == nil {
					t.Fatalf("action %s: parameter %q is not bit<W>", m[2], decl)
				}
				w, _ := strconv.Atoi(bm[1])
				params = append(params, srcParam{Name: f[1], Bits: int32(w)})
			}
			p.Params[q(m[2])] = params
		}
		for _, tl := range reTable.FindAllStringSubmatchIndex(body, -1) {
			name := body[tl[4]:tl[5]]
			tb, err := block(body, tl[1]-1)
			if err != nil {
				t.Fatalf("table %s: %v", name, err)
			}
			st := srcTable{ID: parseID(t, body[tl[2]:tl[3]])}
			if km := reKeyBlock.FindStringSubmatch(tb); km != nil {
				for _, e := range reKeyEntry.FindAllStringSubmatch(km[1], -1) {
					fname := e[3]
					if fname == "" {
						fname = e[1]
					}
					st.Fields = append(st.Fields, srcField{Name: fname, Bits: width(vars, e[1]), Kind: strings.ToUpper(e[2])})
				}
			}
			if am := reActBlock.FindStringSubmatch(tb); am != nil {
				for _, a := range reActRef.FindAllStringSubmatch(am[1], -1) {
					st.Actions = append(st.Actions, q(a[2]))
					switch strings.TrimSpace(a[1]) {
					case "@defaultonly":
						st.DefaultOnly = append(st.DefaultOnly, q(a[2]))
					case "@tableonly":
						st.TableOnly = append(st.TableOnly, q(a[2]))
					}
				}
			}
			if cm := reCountersAt.FindStringSubmatch(tb); cm != nil {
				st.Counter = q(cm[1])
			}
			if sm := reSize.FindStringSubmatch(tb); sm != nil {
				st.Size, _ = strconv.ParseInt(sm[1], 10, 64)
			}
			p.Tables[q(name)] = st
		}
	}
	return p
}

// fromP4Info builds the same description from the P4Info.
func fromP4Info(errorf func(format string, args ...any), info *p4configv1.P4Info) *srcProgram {
	p := &srcProgram{
		Tables: map[string]srcTable{}, Actions: map[string]uint32{}, Params: map[string][]srcParam{},
		Counters: map[string]int64{}, CounterIDs: map[string]uint32{}, DirectCounters: map[string]uint32{},
		Units: map[string]string{},
	}
	actionName := map[uint32]string{}
	for _, a := range info.GetActions() {
		actionName[a.GetPreamble().GetId()] = a.GetPreamble().GetName()
		p.Actions[a.GetPreamble().GetName()] = a.GetPreamble().GetId()
		var params []srcParam
		for i, prm := range a.GetParams() {
			if prm.GetId() != uint32(i+1) {
				errorf("action %s parameter %s has id %d, want its position %d", a.GetPreamble().GetName(), prm.GetName(), prm.GetId(), i+1)
			}
			params = append(params, srcParam{Name: prm.GetName(), Bits: prm.GetBitwidth()})
		}
		p.Params[a.GetPreamble().GetName()] = params
	}
	directName := map[uint32]string{}
	for _, c := range info.GetDirectCounters() {
		directName[c.GetPreamble().GetId()] = c.GetPreamble().GetName()
		p.DirectCounters[c.GetPreamble().GetName()] = c.GetPreamble().GetId()
		p.Units[c.GetPreamble().GetName()] = c.GetSpec().GetUnit().String()
	}
	for _, c := range info.GetCounters() {
		p.Counters[c.GetPreamble().GetName()] = c.GetSize()
		p.CounterIDs[c.GetPreamble().GetName()] = c.GetPreamble().GetId()
		p.Units[c.GetPreamble().GetName()] = c.GetSpec().GetUnit().String()
	}
	for _, tb := range info.GetTables() {
		st := srcTable{ID: tb.GetPreamble().GetId(), Size: tb.GetSize()}
		for i, mf := range tb.GetMatchFields() {
			if mf.GetId() != uint32(i+1) {
				errorf("table %s field %s has id %d, want its position %d", tb.GetPreamble().GetName(), mf.GetName(), mf.GetId(), i+1)
			}
			st.Fields = append(st.Fields, srcField{Name: mf.GetName(), Bits: mf.GetBitwidth(), Kind: mf.GetMatchType().String()})
		}
		for _, ref := range tb.GetActionRefs() {
			n, ok := actionName[ref.GetId()]
			if !ok {
				errorf("table %s refers to unknown action id %#x", tb.GetPreamble().GetName(), ref.GetId())
			}
			st.Actions = append(st.Actions, n)
			switch ref.GetScope() {
			case p4configv1.ActionRef_DEFAULT_ONLY:
				st.DefaultOnly = append(st.DefaultOnly, n)
			case p4configv1.ActionRef_TABLE_ONLY:
				st.TableOnly = append(st.TableOnly, n)
			}
		}
		for _, id := range tb.GetDirectResourceIds() {
			n, ok := directName[id]
			if !ok {
				errorf("table %s refers to unknown direct resource %#x", tb.GetPreamble().GetName(), id)
			}
			st.Counter = n
		}
		p.Tables[tb.GetPreamble().GetName()] = st
	}
	for _, c := range info.GetDirectCounters() {
		tid := c.GetDirectTableId()
		found := false
		for _, tb := range info.GetTables() {
			if tb.GetPreamble().GetId() == tid {
				found = true
				if got := p.Tables[tb.GetPreamble().GetName()].Counter; got != c.GetPreamble().GetName() {
					errorf("direct counter %s names table %s, which lists direct resource %q", c.GetPreamble().GetName(), tb.GetPreamble().GetName(), got)
				}
			}
		}
		if !found {
			errorf("direct counter %s: direct_table_id %#x is not a table", c.GetPreamble().GetName(), tid)
		}
	}
	return p
}

func TestP4InfoMatchesSource(t *testing.T) {
	info, err := LeafP4Info()
	if err != nil {
		t.Fatal(err)
	}
	src := parseLeaf(t, LeafSource())
	got := fromP4Info(t.Errorf, info)
	if len(src.Tables) == 0 || len(src.Actions) == 0 || len(src.Counters) == 0 || len(src.DirectCounters) == 0 {
		t.Fatalf("parser found %d tables, %d actions, %d counters, %d direct counters in leaf.p4; want some of each",
			len(src.Tables), len(src.Actions), len(src.Counters), len(src.DirectCounters))
	}
	// p4c lists the actions a table refers to; sort both sides, order is not part of the contract.
	for _, p := range []*srcProgram{src, got} {
		for n, tb := range p.Tables {
			sort.Strings(tb.Actions)
			sort.Strings(tb.DefaultOnly)
			p.Tables[n] = tb
		}
	}
	if diff := cmp.Diff(src, got); diff != "" {
		t.Errorf("leaf.p4info.txtpb does not match leaf.p4 (-source +p4info):\n%s", diff)
	}
	if info.GetPkgInfo().GetArch() != "v1model" {
		t.Errorf("pkg_info.arch = %q, want v1model", info.GetPkgInfo().GetArch())
	}
}

func TestP4InfoIDs(t *testing.T) {
	info, err := LeafP4Info()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]string{}
	check := func(kind string, pre *p4configv1.Preamble, prefix p4configv1.P4Ids_Prefix) {
		t.Helper()
		id := pre.GetId()
		if got := p4configv1.P4Ids_Prefix(id >> 24); got != prefix {
			t.Errorf("%s %s: id %#08x has prefix %#02x (%v), want %#02x (%v)", kind, pre.GetName(), id, uint32(got), got, uint32(prefix), prefix)
		}
		if other, dup := seen[id]; dup {
			t.Errorf("%s %s: id %#08x already used by %s", kind, pre.GetName(), id, other)
		}
		seen[id] = pre.GetName()
		if alias := pre.GetAlias(); !strings.HasSuffix(pre.GetName(), "."+alias) && pre.GetName() != alias {
			t.Errorf("%s %s: alias %q is not a suffix of the name", kind, pre.GetName(), alias)
		}
	}
	for _, x := range info.GetTables() {
		check("table", x.GetPreamble(), p4configv1.P4Ids_TABLE)
	}
	for _, x := range info.GetActions() {
		check("action", x.GetPreamble(), p4configv1.P4Ids_ACTION)
	}
	for _, x := range info.GetCounters() {
		check("counter", x.GetPreamble(), p4configv1.P4Ids_COUNTER)
	}
	for _, x := range info.GetDirectCounters() {
		check("direct counter", x.GetPreamble(), p4configv1.P4Ids_DIRECT_COUNTER)
	}
}

// TestConstants keeps the exported names in step with the P4Info.
func TestConstants(t *testing.T) {
	info, err := LeafP4Info()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, x := range info.GetTables() {
		names[x.GetPreamble().GetName()] = true
	}
	for _, x := range info.GetActions() {
		names[x.GetPreamble().GetName()] = true
	}
	for _, x := range info.GetCounters() {
		names[x.GetPreamble().GetName()] = true
	}
	for _, x := range info.GetDirectCounters() {
		names[x.GetPreamble().GetName()] = true
	}
	for _, n := range []string{PathTable, RouteTable, SetUplinkAction, KeepBasePathAction, ForwardAction, ECMPAction, DropAction, PathCounter, PortRxCounter, PortTxCounter} {
		if !names[n] {
			t.Errorf("constant %q names no object of leaf.p4info.txtpb", n)
		}
	}
	var fields []string
	for _, x := range info.GetTables() {
		if x.GetPreamble().GetName() == PathTable {
			for _, f := range x.GetMatchFields() {
				fields = append(fields, f.GetName())
			}
		}
	}
	if diff := cmp.Diff([]string{FieldIPv4Src, FieldIPv4Dst, FieldIPProto, FieldL4SrcPort, FieldL4DstPort}, fields); diff != "" {
		t.Errorf("path table fields (-constants +p4info):\n%s", diff)
	}
}

// TestDriftDetected makes sure the comparison is not vacuous: a P4Info that
// differs from the source in one width, one name or one ID is caught.
func TestDriftDetected(t *testing.T) {
	src := parseLeaf(t, LeafSource())
	for name, mutate := range map[string]func(*p4configv1.P4Info){
		"bit width": func(i *p4configv1.P4Info) { i.Tables[1].MatchFields[3].Bitwidth = 8 },
		"match kind": func(i *p4configv1.P4Info) {
			i.Tables[1].MatchFields[2].Match = &p4configv1.MatchField_MatchType_{MatchType: p4configv1.MatchField_EXACT}
		},
		"param name":   func(i *p4configv1.P4Info) { i.Actions[3].Params[0].Name = "uplink" },
		"action id":    func(i *p4configv1.P4Info) { i.Actions[0].Preamble.Id++ },
		"counter size": func(i *p4configv1.P4Info) { i.Counters[0].Size = 256 },
	} {
		info, err := LeafP4Info()
		if err != nil {
			t.Fatal(err)
		}
		mutate(info)
		got := fromP4Info(func(string, ...any) {}, info)
		for _, p := range []*srcProgram{src, got} {
			for n, tb := range p.Tables {
				sort.Strings(tb.Actions)
				sort.Strings(tb.DefaultOnly)
				p.Tables[n] = tb
			}
		}
		if cmp.Diff(src, got) == "" {
			t.Errorf("%s: a mutated P4Info still matches leaf.p4", name)
		}
	}
}
