package target

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// IDs of leaf.p4info.txtpb.
const (
	tRoute     = 0x02000001
	tPath      = 0x02000002
	aDrop      = 0x01000001
	aForward   = 0x01000002
	aSetUplink = 0x01000004
	aKeepBase  = 0x01000005
	cPortRx    = 0x12000001
	cPortTx    = 0x12000002
)

func leafConfig(t testing.TB, cookie uint64) *p4v1.ForwardingPipelineConfig {
	t.Helper()
	info, err := p4.LeafP4Info()
	if err != nil {
		t.Fatal(err)
	}
	return &p4v1.ForwardingPipelineConfig{P4Info: info, P4DeviceConfig: []byte("leaf.json"), Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: cookie}}
}

// serve runs srv on a loopback TCP port and returns a client for it.
func serve(t testing.TB, srv *Server) p4v1.P4RuntimeClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	done := make(chan struct{})
	go func() { defer close(done); _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		gs.Stop()
		<-done
	})
	return p4v1.NewP4RuntimeClient(conn)
}

func newServer(t testing.TB, opts *Options) (*Server, *MemDataplane, p4v1.P4RuntimeClient) {
	t.Helper()
	dp := NewMemDataplane()
	if opts == nil {
		opts = &Options{Pipeline: leafConfig(t, 1)}
	}
	srv, err := New(dp, []uint64{1, 2}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv, dp, serve(t, srv)
}

type ctrl struct {
	stream p4v1.P4Runtime_StreamChannelClient
	cancel context.CancelFunc
	eid    *p4v1.Uint128
}

// open starts a stream and arbitrates for device with election id eid.
func open(t *testing.T, c p4v1.P4RuntimeClient, device uint64, eid uint64) *ctrl {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	st, err := c.StreamChannel(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	id := &p4v1.Uint128{Low: eid}
	if err := st.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: device, ElectionId: id}}}); err != nil {
		t.Fatal(err)
	}
	return &ctrl{stream: st, cancel: cancel, eid: id}
}

// next returns the next arbitration notification's status code and election id.
func (c *ctrl) next(t *testing.T) (codes.Code, uint64) {
	t.Helper()
	type res struct {
		m   *p4v1.StreamMessageResponse
		err error
	}
	ch := make(chan res, 1)
	go func() { m, err := c.stream.Recv(); ch <- res{m, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("stream Recv: %v", r.err)
		}
		a := r.m.GetArbitration()
		if a == nil {
			t.Fatalf("got %v, want an arbitration update", r.m)
		}
		return codes.Code(a.GetStatus().GetCode()), a.GetElectionId().GetLow()
	case <-time.After(5 * time.Second):
		t.Fatal("no arbitration notification within 5s")
	}
	return 0, 0
}

func ipBytes(s string) []byte { a := netip.MustParseAddr(s).As4(); return a[:] }

// pathEntry is the forward entry of tcp 10.0.0.1:5001->10.0.1.1:5201 toward port.
func pathEntry(port byte) *p4v1.TableEntry {
	return &p4v1.TableEntry{
		TableId:  tPath,
		Priority: 10,
		Metadata: []byte("proflow"),
		Match: []*p4v1.FieldMatch{
			{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: ipBytes("10.0.0.1")}}},
			{FieldId: 2, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: ipBytes("10.0.1.1")}}},
			{FieldId: 3, FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: []byte{6}, Mask: []byte{0xff}}}},
			{FieldId: 4, FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: []byte{0x13, 0x89}, Mask: []byte{0xff, 0xff}}}},
			{FieldId: 5, FieldMatchType: &p4v1.FieldMatch_Ternary_{Ternary: &p4v1.FieldMatch_Ternary{Value: []byte{0x14, 0x51}, Mask: []byte{0xff, 0xff}}}},
		},
		Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{
			ActionId: aSetUplink, Params: []*p4v1.Action_Param{{ParamId: 1, Value: []byte{port}}}}}},
	}
}

var testFlow = proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.1.1"), SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP}

func update(typ p4v1.Update_Type, te *p4v1.TableEntry) *p4v1.Update {
	return &p4v1.Update{Type: typ, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}}
}

func write(c p4v1.P4RuntimeClient, device uint64, eid *p4v1.Uint128, ups ...*p4v1.Update) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Write(ctx, &p4v1.WriteRequest{DeviceId: device, ElectionId: eid, Updates: ups})
	return err
}

// details returns the per-update codes of a batch error.
func details(t *testing.T, err error) []codes.Code {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != codes.Unknown {
		t.Fatalf("batch error code %v (%v), want UNKNOWN with details", st.Code(), err)
	}
	var out []codes.Code
	for _, d := range st.Details() {
		pe, ok := d.(*p4v1.Error)
		if !ok {
			t.Fatalf("detail %T, want *p4v1.Error", d)
		}
		out = append(out, codes.Code(pe.GetCanonicalCode()))
	}
	return out
}

func TestWriteRefusals(t *testing.T) {
	_, _, c := newServer(t, nil)
	p := open(t, c, 1, 10)
	if code, _ := p.next(t); code != codes.OK {
		t.Fatalf("first client: arbitration %v, want OK", code)
	}
	if err := write(c, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3))); err != nil {
		t.Fatalf("insert: %v", err)
	}
	mod := func(f func(te *p4v1.TableEntry)) *p4v1.TableEntry { te := pathEntry(4); f(te); return te }
	other := func(te *p4v1.TableEntry) { te.Match[0].GetExact().Value = ipBytes("10.0.0.2") }
	for _, tc := range []struct {
		name string
		up   *p4v1.Update
		want codes.Code
	}{
		{"duplicate insert", update(p4v1.Update_INSERT, pathEntry(4)), codes.AlreadyExists},
		{"modify missing", update(p4v1.Update_MODIFY, mod(other)), codes.NotFound},
		{"delete missing", update(p4v1.Update_DELETE, mod(other)), codes.NotFound},
		{"unknown table", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { te.TableId = 0x02000099 })), codes.InvalidArgument},
		{"table id 0", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { te.TableId = 0 })), codes.InvalidArgument},
		{"unknown field", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { other(te); te.Match[2].FieldId = 9 })), codes.InvalidArgument},
		{"unknown action", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { other(te); te.Action.GetAction().ActionId = 0x01000099 })), codes.InvalidArgument},
		{"action of another table", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { other(te); te.Action.GetAction().ActionId = aForward })), codes.InvalidArgument},
		{"value wider than field", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { te.Match[0].GetExact().Value = []byte{1, 10, 0, 0, 2} })), codes.InvalidArgument},
		{"param wider than field", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { other(te); te.Action.GetAction().Params[0].Value = []byte{2, 0} })), codes.InvalidArgument},
		{"empty value", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { te.Match[0].GetExact().Value = nil })), codes.InvalidArgument},
		{"value outside mask", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { other(te); te.Match[2].GetTernary().Mask = []byte{0xf0} })), codes.InvalidArgument},
		{"zero mask", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) {
			other(te)
			te.Match[2].GetTernary().Mask, te.Match[2].GetTernary().Value = []byte{0}, []byte{0}
		})), codes.InvalidArgument},
		{"wrong match kind", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) {
			other(te)
			te.Match[2].FieldMatchType = &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: []byte{6}}}
		})), codes.InvalidArgument},
		{"missing exact field", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { te.Match = te.Match[1:] })), codes.InvalidArgument},
		{"missing param", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { other(te); te.Action.GetAction().Params = nil })), codes.InvalidArgument},
		{"zero priority", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { other(te); te.Priority = 0 })), codes.InvalidArgument},
		{"insert without action", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) { other(te); te.Action = nil })), codes.InvalidArgument},
		{"table-only action as default", update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: tPath, IsDefaultAction: true, Action: pathEntry(3).Action}), codes.PermissionDenied},
		{"insert default entry", update(p4v1.Update_INSERT, &p4v1.TableEntry{TableId: tPath, IsDefaultAction: true}), codes.InvalidArgument},
		{"partial mask", update(p4v1.Update_INSERT, mod(func(te *p4v1.TableEntry) {
			other(te)
			te.Match[3].GetTernary().Value, te.Match[3].GetTernary().Mask = []byte{0x13, 0x00}, []byte{0xff, 0x00}
		})), codes.Unimplemented},
		{"counter index beyond array", &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
			CounterId: cPortTx, Index: &p4v1.Index{Index: 512}, Data: &p4v1.CounterData{}}}}}, codes.OutOfRange},
		{"counter insert", &p4v1.Update{Type: p4v1.Update_INSERT, Entity: &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cPortTx}}}}, codes.InvalidArgument},
		{"no entity", &p4v1.Update{Type: p4v1.Update_INSERT}, codes.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := write(c, 1, p.eid, tc.up)
			got := details(t, err)
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("got %v (%v), want one detail %v", got, err, tc.want)
			}
		})
	}
}

func TestWriteRPCWideErrors(t *testing.T) {
	_, _, c := newServer(t, nil)
	srvNoPipe, _, c2 := newServer(t, &Options{})
	_ = srvNoPipe
	if err := write(c, 9, &p4v1.Uint128{Low: 1}, update(p4v1.Update_INSERT, pathEntry(3))); status.Code(err) != codes.NotFound {
		t.Errorf("unknown device: %v, want NOT_FOUND", err)
	}
	if err := write(c, 1, &p4v1.Uint128{Low: 1}, update(p4v1.Update_INSERT, pathEntry(3))); status.Code(err) != codes.PermissionDenied {
		t.Errorf("no primary: %v, want PERMISSION_DENIED", err)
	}
	p := open(t, c2, 1, 10)
	p.next(t)
	if err := write(c2, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3))); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("no pipeline: %v, want FAILED_PRECONDITION", err)
	}
	st, _ := status.FromError(write(c2, 1, &p4v1.Uint128{Low: 9}))
	if st.Code() != codes.PermissionDenied || len(st.Details()) != 0 {
		t.Errorf("wrong election id: %v with %d details, want PERMISSION_DENIED without details", st.Code(), len(st.Details()))
	}
}

func TestBatchDetailsAndRollback(t *testing.T) {
	_, dp, c := newServer(t, nil)
	p := open(t, c, 1, 10)
	p.next(t)
	dup := pathEntry(3)
	err := write(c, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3)), update(p4v1.Update_INSERT, dup), update(p4v1.Update_DELETE, pathEntry(3)))
	got := details(t, err)
	want := []codes.Code{codes.OK, codes.AlreadyExists, codes.OK}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("batch details %v, want %v", got, want)
	}
	if n := dp.Paths(1); n != 0 {
		t.Errorf("after insert+delete, data plane has %d paths, want 0", n)
	}
	// ROLLBACK_ON_ERROR: the good insert is undone.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err = c.Write(ctx, &p4v1.WriteRequest{DeviceId: 1, ElectionId: p.eid, Atomicity: p4v1.WriteRequest_ROLLBACK_ON_ERROR,
		Updates: []*p4v1.Update{update(p4v1.Update_INSERT, pathEntry(3)), update(p4v1.Update_MODIFY, &p4v1.TableEntry{TableId: 0x02000099})}})
	got = details(t, err)
	if len(got) != 2 || got[0] != codes.Aborted || got[1] != codes.InvalidArgument {
		t.Errorf("rollback details %v, want [Aborted InvalidArgument]", got)
	}
	if _, ok := dp.Path(1, testFlow); ok {
		t.Error("rolled-back insert left a path in the data plane")
	}
	_, err = c.Write(ctx, &p4v1.WriteRequest{DeviceId: 1, ElectionId: p.eid, Atomicity: p4v1.WriteRequest_DATAPLANE_ATOMIC})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("DATAPLANE_ATOMIC: %v, want UNIMPLEMENTED", err)
	}
}

func TestPathEffectAndCounters(t *testing.T) {
	_, dp, c := newServer(t, nil)
	p := open(t, c, 1, 10)
	p.next(t)
	dp.AddFlowTraffic(1, testFlow, Counts{Bytes: 1000, Packets: 1}) // before the entry: not counted
	if err := write(c, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3))); err != nil {
		t.Fatal(err)
	}
	if port, ok := dp.Path(1, testFlow); !ok || port != 3 {
		t.Fatalf("data plane path %d, %v; want 3", port, ok)
	}
	dp.AddFlowTraffic(1, testFlow, Counts{Bytes: 500, Packets: 5})
	if err := write(c, 1, p.eid, update(p4v1.Update_MODIFY, pathEntry(4))); err != nil {
		t.Fatal(err)
	}
	if port, _ := dp.Path(1, testFlow); port != 4 {
		t.Fatalf("after MODIFY the data plane path is %d, want 4", port)
	}
	dp.AddFlowTraffic(1, testFlow, Counts{Bytes: 500, Packets: 5})
	dp.AddPortTraffic(1, 4, PortCounts{Tx: Counts{Bytes: 7000, Packets: 7}})

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	rs, err := c.Read(ctx, &p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{
		{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tPath, Metadata: []byte("proflow"), CounterData: &p4v1.CounterData{}}}},
		{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cPortTx, Index: &p4v1.Index{Index: 4}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var ents []*p4v1.Entity
	for {
		r, err := rs.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ents = append(ents, r.GetEntities()...)
	}
	if len(ents) != 2 {
		t.Fatalf("read %d entities, want 2", len(ents))
	}
	te := ents[0].GetTableEntry()
	if string(te.GetMetadata()) != "proflow" {
		t.Errorf("metadata %q, want proflow", te.GetMetadata())
	}
	if got := te.GetCounterData(); got.GetByteCount() != 1000 || got.GetPacketCount() != 10 {
		t.Errorf("direct counter %v, want 1000 bytes 10 packets (counted since insert, across the MODIFY)", got)
	}
	want := pathEntry(4)
	want.Match[3].GetTernary().Value = []byte{0x13, 0x89}
	te.CounterData = nil
	if !proto.Equal(te, want) {
		t.Errorf("read back %v, want %v (read-write symmetry)", te, want)
	}
	if got := ents[1].GetCounterEntry().GetData(); got.GetByteCount() != 7000 {
		t.Errorf("port_tx[4] = %v, want 7000 bytes", got)
	}
}

func TestPipelineConfig(t *testing.T) {
	_, dp, c := newServer(t, nil)
	p := open(t, c, 1, 10)
	p.next(t)
	if err := write(c, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	bad := leafConfig(t, 7)
	bad.P4Info.Tables[1].Preamble.Id = 0x01000009
	_, err := c.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{DeviceId: 1, ElectionId: p.eid,
		Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, Config: bad})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad p4info: %v, want INVALID_ARGUMENT", err)
	}
	_, err = c.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{DeviceId: 1, ElectionId: &p4v1.Uint128{Low: 3},
		Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, Config: leafConfig(t, 7)})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("set config from a non-primary: %v, want PERMISSION_DENIED", err)
	}
	if _, err := c.SetForwardingPipelineConfig(ctx, &p4v1.SetForwardingPipelineConfigRequest{DeviceId: 1, ElectionId: p.eid,
		Action: p4v1.SetForwardingPipelineConfigRequest_VERIFY_AND_COMMIT, Config: leafConfig(t, 7)}); err != nil {
		t.Fatal(err)
	}
	if n := dp.Paths(1); n != 0 {
		t.Errorf("config push left %d paths in the data plane, want 0 (state cleared)", n)
	}
	got, err := c.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: 1, ResponseType: p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetConfig().GetCookie().GetCookie() != 7 || got.GetConfig().GetP4Info() != nil {
		t.Errorf("COOKIE_ONLY returned %v, want cookie 7 and no p4info", got.GetConfig())
	}
	// The entry is gone: inserting it again succeeds.
	if err := write(c, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3))); err != nil {
		t.Errorf("insert after config push: %v", err)
	}
}

func TestArbitration(t *testing.T) {
	for _, promote := range []bool{false, true} {
		name := "spec"
		if promote {
			name = "PromoteBackup"
		}
		t.Run(name, func(t *testing.T) {
			_, _, c := newServer(t, &Options{Pipeline: leafConfig(t, 1), PromoteBackup: promote})
			a := open(t, c, 1, 10)
			if code, eid := a.next(t); code != codes.OK || eid != 10 {
				t.Fatalf("primary: %v %d, want OK 10", code, eid)
			}
			b := open(t, c, 1, 5)
			if code, eid := b.next(t); code != codes.AlreadyExists || eid != 10 {
				t.Fatalf("backup: %v %d, want ALREADY_EXISTS 10", code, eid)
			}
			if err := write(c, 1, b.eid, update(p4v1.Update_INSERT, pathEntry(3))); status.Code(err) != codes.PermissionDenied {
				t.Errorf("backup write: %v, want PERMISSION_DENIED", err)
			}
			// Same election id: the stream is terminated with INVALID_ARGUMENT.
			dupe := open(t, c, 1, 10)
			if _, err := dupe.stream.Recv(); status.Code(err) != codes.InvalidArgument {
				t.Errorf("reused election id: %v, want INVALID_ARGUMENT", err)
			}
			bad := open(t, c, 9, 1)
			if _, err := bad.stream.Recv(); status.Code(err) != codes.NotFound {
				t.Errorf("unknown device: %v, want NOT_FOUND", err)
			}
			a.cancel() // the primary goes away
			code, eid := b.next(t)
			if !promote {
				if code != codes.NotFound || eid != 10 {
					t.Fatalf("after the primary left: %v %d, want NOT_FOUND 10", code, eid)
				}
				if err := write(c, 1, b.eid, update(p4v1.Update_INSERT, pathEntry(3))); status.Code(err) != codes.PermissionDenied {
					t.Errorf("backup write without a primary: %v, want PERMISSION_DENIED", err)
				}
				b.eid = &p4v1.Uint128{Low: 11}
				if err := b.stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
					Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: 1, ElectionId: b.eid}}}); err != nil {
					t.Fatal(err)
				}
				code, eid = b.next(t)
			}
			want := uint64(11)
			if promote {
				want = 5
			}
			if code != codes.OK || eid != want {
				t.Fatalf("backup taking over: %v %d, want OK %d", code, eid, want)
			}
			if err := write(c, 1, b.eid, update(p4v1.Update_INSERT, pathEntry(3))); err != nil {
				t.Errorf("new primary write: %v", err)
			}
			// A higher election id preempts.
			h := open(t, c, 1, 20)
			if code, _ := h.next(t); code != codes.OK {
				t.Errorf("higher election id: %v, want OK", code)
			}
			if code, eid := b.next(t); code != codes.AlreadyExists || eid != 20 {
				t.Errorf("preempted primary told %v %d, want ALREADY_EXISTS 20", code, eid)
			}
			if err := write(c, 1, b.eid, update(p4v1.Update_DELETE, pathEntry(3))); status.Code(err) != codes.PermissionDenied {
				t.Errorf("preempted primary write: %v, want PERMISSION_DENIED", err)
			}
		})
	}
}

func TestDataplaneFailureKeepsState(t *testing.T) {
	_, dp, c := newServer(t, nil)
	p := open(t, c, 1, 10)
	p.next(t)
	if err := write(c, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3))); err != nil {
		t.Fatal(err)
	}
	dp.FailSetPath(0, errors.New("link down"))
	got := details(t, write(c, 1, p.eid, update(p4v1.Update_MODIFY, pathEntry(4))))
	if len(got) != 1 || got[0] != codes.Internal {
		t.Errorf("failing data plane: %v, want [Internal]", got)
	}
	dp.FailSetPath(0, nil)
	if port, _ := dp.Path(1, testFlow); port != 3 {
		t.Errorf("path %d after a failed modify, want 3", port)
	}
	// The table still says 3: modifying to 3 is a no-op, to 4 works.
	if err := write(c, 1, p.eid, update(p4v1.Update_MODIFY, pathEntry(4))); err != nil {
		t.Fatal(err)
	}
	if port, _ := dp.Path(1, testFlow); port != 4 {
		t.Errorf("path %d, want 4", port)
	}
}

func TestReadsAndCounterWrites(t *testing.T) {
	_, dp, c := newServer(t, nil)
	p := open(t, c, 1, 10)
	p.next(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	readAll := func(ents ...*p4v1.Entity) ([]*p4v1.Entity, error) {
		return readEntities(t, c, &p4v1.ReadRequest{DeviceId: 1, Entities: ents})
	}
	caps, err := c.Capabilities(ctx, &p4v1.CapabilitiesRequest{})
	if err != nil || caps.GetP4RuntimeApiVersion() != APIVersion {
		t.Errorf("Capabilities = %v, %v", caps, err)
	}
	if err := write(c, 1, p.eid, update(p4v1.Update_INSERT, pathEntry(3))); err != nil {
		t.Fatal(err)
	}
	// Default entry read: the program's default action.
	ents, err := readAll(&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tPath, IsDefaultAction: true}}})
	if err != nil || len(ents) != 1 || ents[0].GetTableEntry().GetAction().GetAction().GetActionId() != aKeepBase {
		t.Errorf("default entry read = %v, %v; want keep_base_path", ents, err)
	}
	// Wildcard of all tables.
	if ents, err = readAll(&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}}); err != nil || len(ents) != 1 {
		t.Errorf("wildcard read = %d entities, %v; want 1", len(ents), err)
	}
	// Indexed counter write: the value is set, then keeps counting.
	dp.AddPortTraffic(1, 5, PortCounts{Rx: Counts{Bytes: 100, Packets: 1}})
	if err := write(c, 1, p.eid, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{
		CounterEntry: &p4v1.CounterEntry{CounterId: cPortRx, Index: &p4v1.Index{Index: 5}, Data: &p4v1.CounterData{ByteCount: 7}}}}}); err != nil {
		t.Fatal(err)
	}
	dp.AddPortTraffic(1, 5, PortCounts{Rx: Counts{Bytes: 10, Packets: 1}})
	ents, err = readAll(&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cPortRx, Index: &p4v1.Index{Index: 5}}}})
	if err != nil || len(ents) != 1 || ents[0].GetCounterEntry().GetData().GetByteCount() != 17 {
		t.Errorf("port_rx[5] after writing 7 and 10 more bytes = %v, %v; want 17", ents, err)
	}
	// Whole-array read.
	if ents, err = readAll(&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cPortTx}}}); err != nil || len(ents) != 512 {
		t.Errorf("port_tx wildcard read = %d cells, %v; want 512", len(ents), err)
	}
	// Direct counter entry: write, then read.
	dp.AddFlowTraffic(1, testFlow, Counts{Bytes: 50, Packets: 1})
	if err := write(c, 1, p.eid, &p4v1.Update{Type: p4v1.Update_MODIFY, Entity: &p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{
		DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: pathEntry(3), Data: &p4v1.CounterData{ByteCount: 1000}}}}}); err != nil {
		t.Fatal(err)
	}
	dp.AddFlowTraffic(1, testFlow, Counts{Bytes: 5, Packets: 1})
	ents, err = readAll(&p4v1.Entity{Entity: &p4v1.Entity_DirectCounterEntry{DirectCounterEntry: &p4v1.DirectCounterEntry{TableEntry: pathEntry(3)}}})
	if err != nil || len(ents) != 1 || ents[0].GetDirectCounterEntry().GetData().GetByteCount() != 1005 {
		t.Errorf("direct counter = %v, %v; want 1005", ents, err)
	}
	// Batch of reads with one bad request: UNKNOWN with per-request details,
	// and the good one's entities still arrive.
	ents, err = readAll(
		&p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{TableId: tPath}}},
		&p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{CounterId: cPortTx, Index: &p4v1.Index{Index: 600}}}},
		&p4v1.Entity{},
	)
	got := details(t, err)
	if len(ents) != 1 || len(got) != 3 || got[0] != codes.OK || got[1] != codes.OutOfRange || got[2] != codes.InvalidArgument {
		t.Errorf("batch read: %d entities, details %v; want 1 entity and [OK OutOfRange InvalidArgument]", len(ents), got)
	}
	// Before any config, reads fail with FAILED_PRECONDITION.
	_, _, c2 := newServer(t, &Options{})
	rs, err := c2.Read(ctx, &p4v1.ReadRequest{DeviceId: 1, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{}}}}})
	if err == nil {
		_, err = rs.Recv()
	}
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("read before config: %v, want FAILED_PRECONDITION", err)
	}
	gc, err := c2.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{DeviceId: 1})
	if err != nil || gc.GetConfig() != nil {
		t.Errorf("get config before one is set = %v, %v; want an unset config", gc, err)
	}
}

func TestNewRefusesNilDataplane(t *testing.T) {
	for _, dp := range []Dataplane{nil, (*MemDataplane)(nil)} {
		if srv, err := New(dp, []uint64{1}, nil); err == nil || !strings.Contains(err.Error(), "Dataplane is nil") {
			t.Errorf("New(%#v) = %v, %v; want an error saying the Dataplane is nil", dp, srv, err)
		}
	}
}
