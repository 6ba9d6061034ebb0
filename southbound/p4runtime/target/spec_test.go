package target

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// readEntities runs one Read and returns its entities and final status.
func readEntities(t *testing.T, c p4v1.P4RuntimeClient, req *p4v1.ReadRequest) ([]*p4v1.Entity, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	rs, err := c.Read(ctx, req)
	if err != nil {
		return nil, err
	}
	var out []*p4v1.Entity
	for {
		r, err := rs.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r.GetEntities()...)
	}
}

// readPath reads the path_select entry of pathEntry's key with its counter.
func readPath(t *testing.T, c p4v1.P4RuntimeClient) *p4v1.TableEntry {
	t.Helper()
	key := pathEntry(0)
	key.Action, key.Metadata, key.CounterData = nil, nil, &p4v1.CounterData{}
	ents, err := readEntities(t, c, &p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{TableEntry: key}}}})
	if err != nil || len(ents) != 1 {
		t.Fatalf("read path entry: %d entities, %v; want 1", len(ents), err)
	}
	return ents[0].GetTableEntry()
}

func portOf(te *p4v1.TableEntry) byte {
	ps := te.GetAction().GetAction().GetParams()
	if len(ps) != 1 || len(ps[0].GetValue()) != 1 {
		return 0
	}
	return ps[0].GetValue()[0]
}

func TestModifyWithoutActionKeepsEntry(t *testing.T) {
	_, dp, c := newServer(t, nil)
	p := open(t, c, 1, 10)
	p.next(t)
	te := pathEntry(3)
	te.ControllerMetadata = 7
	if err := write(c, 1, p.eid, update(p4v1.Update_INSERT, te)); err != nil {
		t.Fatal(err)
	}
	// No action, metadata or counter: a no-op (§9.1.2).
	bare := pathEntry(3)
	bare.Action, bare.Metadata = nil, nil
	if err := write(c, 1, p.eid, update(p4v1.Update_MODIFY, bare)); err != nil {
		t.Fatalf("MODIFY without an action: %v", err)
	}
	got := readPath(t, c)
	if string(got.GetMetadata()) != "proflow" || got.GetControllerMetadata() != 7 || portOf(got) != 3 {
		t.Errorf("after a MODIFY without an action: metadata %q, controller_metadata %d, port %d; want the entry unchanged (proflow, 7, 3)",
			got.GetMetadata(), got.GetControllerMetadata(), portOf(got))
	}
	// No action, a counter value: only the direct counter changes.
	bare.CounterData = &p4v1.CounterData{ByteCount: 42, PacketCount: 1}
	if err := write(c, 1, p.eid, update(p4v1.Update_MODIFY, bare)); err != nil {
		t.Fatalf("MODIFY of the direct counter: %v", err)
	}
	got = readPath(t, c)
	if got.GetCounterData().GetByteCount() != 42 || string(got.GetMetadata()) != "proflow" || got.GetControllerMetadata() != 7 || portOf(got) != 3 {
		t.Errorf("after a counter-only MODIFY: %v; want counter 42 and the entry otherwise unchanged", got)
	}
	// With an action: assign semantics, metadata included.
	full := pathEntry(4)
	full.Metadata = []byte("other")
	if err := write(c, 1, p.eid, update(p4v1.Update_MODIFY, full)); err != nil {
		t.Fatal(err)
	}
	got = readPath(t, c)
	if string(got.GetMetadata()) != "other" || got.GetControllerMetadata() != 0 || portOf(got) != 4 {
		t.Errorf("after a MODIFY with an action: metadata %q, controller_metadata %d, port %d; want other, 0, 4",
			got.GetMetadata(), got.GetControllerMetadata(), portOf(got))
	}
	if port, ok := dp.Path(1, testFlow); !ok || port != 4 {
		t.Errorf("data plane path %d, %v; want 4", port, ok)
	}
}

func TestConstTable(t *testing.T) {
	cfg := leafConfig(t, 1)
	info := proto.Clone(cfg.GetP4Info()).(*p4configv1.P4Info)
	for _, tb := range info.GetTables() {
		if tb.GetPreamble().GetId() == tRoute {
			tb.IsConstTable = true
		}
	}
	cfg.P4Info = info
	_, _, c := newServer(t, &Options{Pipeline: cfg})
	p := open(t, c, 1, 10)
	p.next(t)
	route := func(act bool) *p4v1.TableEntry {
		te := &p4v1.TableEntry{TableId: tRoute, Match: []*p4v1.FieldMatch{{FieldId: 1,
			FieldMatchType: &p4v1.FieldMatch_Lpm{Lpm: &p4v1.FieldMatch_LPM{Value: ipBytes("10.0.0.0"), PrefixLen: 24}}}}}
		if act {
			te.Action = &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{
				ActionId: aForward, Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{1}}}}}}
		}
		return te
	}
	for _, tc := range []struct {
		name string
		up   *p4v1.Update
		want codes.Code
	}{
		{"insert", update(p4v1.Update_INSERT, route(true)), codes.PermissionDenied},
		{"delete", update(p4v1.Update_DELETE, route(false)), codes.PermissionDenied},
		{"modify with an action", update(p4v1.Update_MODIFY, route(true)), codes.PermissionDenied},
		// Allowed, but the target realizes no static entries: none to modify.
		{"modify without an action", update(p4v1.Update_MODIFY, route(false)), codes.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := details(t, write(c, 1, p.eid, tc.up))
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("%s on a const table: %v, want %v", tc.name, got, tc.want)
			}
		})
	}
	// The default entry of a const table stays writable (its action is not const).
	if err := write(c, 1, p.eid, update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: tRoute, IsDefaultAction: true})); err != nil {
		t.Errorf("reset of a const table's default entry: %v", err)
	}
	// Other tables are not affected.
	if err := write(c, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3))); err != nil {
		t.Errorf("insert into path_select: %v", err)
	}
}

func TestReadRole(t *testing.T) {
	_, _, c := newServer(t, nil)
	p := open(t, c, 1, 10)
	p.next(t)
	if err := write(c, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3))); err != nil {
		t.Fatal(err)
	}
	all := []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tPath}}}}
	if _, err := readEntities(t, c, &p4v1.ReadRequest{DeviceId: 1, Role: "r", Entities: all}); status.Code(err) != codes.NotFound {
		t.Errorf("read for a role nobody arbitrated: %v, want NOT_FOUND", err)
	}
	// A client arbitrates for role r (without a role config: full access).
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := c.StreamChannel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{Arbitration: &p4v1.MasterArbitrationUpdate{
		DeviceId: 1, Role: &p4v1.Role{Name: "r"}, ElectionId: &p4v1.Uint128{Low: 1}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"r", ""} {
		ents, err := readEntities(t, c, &p4v1.ReadRequest{DeviceId: 1, Role: role, Entities: all})
		if err != nil || len(ents) != 1 {
			t.Errorf("read for role %q: %d entities, %v; want the 1 entry (full pipeline access)", role, len(ents), err)
		}
	}
}

// A batch that overfills path_select (size 256 in leaf.p4's P4Info) fails
// just the updates beyond the table, each with RESOURCE_EXHAUSTED in its
// p4.v1.Error, and applies the others; a MODIFY of an entry in a full
// table is fine, and a DELETE makes room for an INSERT later in the same
// batch (updates apply in order).
func TestBatchTableFull(t *testing.T) {
	_, dp, c := newServer(t, nil)
	p := open(t, c, 1, 10)
	p.next(t)
	const size = 256
	entry := func(i int, port byte) *p4v1.TableEntry {
		te := pathEntry(port)
		sport := 256 + i // two canonical bytes
		te.Match[3].GetTernary().Value = []byte{byte(sport >> 8), byte(sport)}
		return te
	}
	var ups []*p4v1.Update
	for i := 1; i <= size+2; i++ {
		ups = append(ups, update(p4v1.Update_INSERT, entry(i, 3)))
	}
	got := details(t, write(c, 1, p.eid, ups...))
	if len(got) != size+2 {
		t.Fatalf("%d details for %d updates", len(got), size+2)
	}
	for i, code := range got {
		want := codes.OK
		if i >= size {
			want = codes.ResourceExhausted
		}
		if code != want {
			t.Errorf("update %d: %v, want %v", i, code, want)
		}
	}
	if n := dp.Paths(1); n != size {
		t.Errorf("data plane has %d paths, want %d", n, size)
	}
	err := write(c, 1, p.eid, update(p4v1.Update_MODIFY, entry(1, 4)), update(p4v1.Update_DELETE, entry(2, 3)), update(p4v1.Update_INSERT, entry(size+1, 3)))
	if err != nil {
		t.Errorf("MODIFY, DELETE, then INSERT in a full table: %v, want all applied", err)
	}
}

// An election ID that is set but zero is INVALID_ARGUMENT wherever a
// request carries one (StreamChannel arbitration, Write,
// SetForwardingPipelineConfig), as Stratum answers: zero is no client's ID.
// An unset election ID makes a backup, which is never primary (§5).
func TestElectionIDZero(t *testing.T) {
	_, dp, c := newServer(t, nil)
	zero := &p4v1.Uint128{}
	arbitrate := func(eid *p4v1.Uint128) p4v1.P4Runtime_StreamChannelClient {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		t.Cleanup(cancel)
		st, err := c.StreamChannel(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
			Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: 1, ElectionId: eid}}}); err != nil {
			t.Fatal(err)
		}
		return st
	}
	setConfig := func(eid *p4v1.Uint128) error {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err := c.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{DeviceId: 1, ElectionId: eid,
			Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, Config: leafConfig(t, 7)})
		return err
	}
	zeroRefused := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "unset") {
			t.Errorf("%s with election id 0: %v, want INVALID_ARGUMENT saying to leave it unset for a backup", what, err)
		}
	}
	// No primary yet: a zero ID does not make one.
	m, err := arbitrate(zero).Recv()
	zeroRefused("arbitration", err)
	if err == nil {
		t.Logf("arbitration answered %v", m)
	}
	zeroRefused("write", write(c, 1, zero, update(p4v1.Update_INSERT, pathEntry(3))))
	if n := dp.Paths(1); n != 0 {
		t.Errorf("data plane has %d paths after a write with election id 0, want none", n)
	}
	zeroRefused("set pipeline config", setConfig(zero))
	// Unset: a backup, told there is no primary.
	u := &ctrl{stream: arbitrate(nil)}
	if code, _ := u.next(t); code != codes.NotFound {
		t.Errorf("arbitration with no election id: %v, want NOT_FOUND (a backup, no primary)", code)
	}
	if err := write(c, 1, nil, update(p4v1.Update_INSERT, pathEntry(3))); status.Code(err) != codes.PermissionDenied {
		t.Errorf("write without an election id: %v, want PERMISSION_DENIED", err)
	}
	// With a primary: zero is refused all the same, and a primary that
	// sends a zero ID on its stream has the stream ended.
	p := open(t, c, 1, 10)
	if code, _ := p.next(t); code != codes.OK {
		t.Fatalf("primary: %v, want OK", code)
	}
	zeroRefused("write with a primary", write(c, 1, zero, update(p4v1.Update_INSERT, pathEntry(3))))
	if err := p.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: 1, ElectionId: zero}}}); err != nil {
		t.Fatal(err)
	}
	_, err = p.stream.Recv()
	zeroRefused("re-arbitration of the primary", err)
}
