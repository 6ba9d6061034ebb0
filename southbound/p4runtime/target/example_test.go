package target_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
)

// serveLoopback serves srv on a loopback port and returns its address and
// a function that stops the server and waits for it.
func serveLoopback(srv *target.Server) (addr string, stop func()) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	served := make(chan struct{})
	go func() { defer close(served); _ = gs.Serve(lis) }()
	return lis.Addr().String(), func() { gs.Stop(); <-served }
}

// Serve one leaf device on a loopback port and speak plain P4Runtime to it:
// writes need the primary's election ID and must fit leaf.p4's P4Info.
func ExampleNew() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// Commit leaf.p4 at start, so a client can write without pushing it.
	info, err := p4.LeafP4Info()
	if err != nil {
		panic(err)
	}
	dp := target.NewMemDataplane()
	srv, err := target.New(dp, []uint64{1}, &target.Options{Pipeline: &p4v1.ForwardingPipelineConfig{
		P4Info: info, Cookie: &p4v1.ForwardingPipelineConfig_Cookie{Cookie: 7}}})
	if err != nil {
		panic(err)
	}
	addr, stop := serveLoopback(srv)
	defer stop() // runs after conn.Close below

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	rpc := p4v1.NewP4RuntimeClient(conn)

	caps, err := rpc.Capabilities(ctx, &p4v1.CapabilitiesRequest{})
	if err != nil {
		panic(err)
	}
	pipe, err := rpc.GetForwardingPipelineConfig(ctx, &p4v1.GetForwardingPipelineConfigRequest{
		DeviceId: 1, ResponseType: p4v1.GetForwardingPipelineConfigRequest_COOKIE_ONLY})
	if err != nil {
		panic(err)
	}
	fmt.Printf("P4Runtime %s, pipeline cookie %d\n", caps.GetP4RuntimeApiVersion(), pipe.GetConfig().GetCookie().GetCookie())

	// A path_select entry sending 10.0.1.10 -> 10.0.4.10 (any protocol and
	// ports) out of port: its match fields and parameter are numbered from 1.
	var table, action uint32
	for _, t := range info.GetTables() {
		if t.GetPreamble().GetName() == p4.PathTable {
			table = t.GetPreamble().GetId()
		}
	}
	for _, a := range info.GetActions() {
		if a.GetPreamble().GetName() == p4.SetUplinkAction {
			action = a.GetPreamble().GetId()
		}
	}
	write := func(election *p4v1.Uint128, port []byte) error {
		exact := func(v []byte) *p4v1.FieldMatch_Exact_ {
			return &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: v}}
		}
		te := &p4v1.TableEntry{
			TableId:  table,
			Priority: 10,
			Match: []*p4v1.FieldMatch{
				{FieldId: 1, FieldMatchType: exact([]byte{10, 0, 1, 10})},
				{FieldId: 2, FieldMatchType: exact([]byte{10, 0, 4, 10})},
			},
			Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{
				ActionId: action, Params: []*p4v1.Action_Param{{ParamId: 1, Value: port}}}}},
		}
		_, err := rpc.Write(ctx, &p4v1.WriteRequest{DeviceId: 1, ElectionId: election, Updates: []*p4v1.Update{{
			Type: p4v1.Update_INSERT, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: te}}}}})
		return err
	}
	election := &p4v1.Uint128{Low: 1}
	fmt.Println("write before arbitration:", status.Code(write(election, []byte{5})))

	// Arbitrate on a stream: the first client is primary (status OK).
	sctx, scancel := context.WithCancel(ctx)
	defer scancel() // ends the stream before the connection closes
	stream, err := rpc.StreamChannel(sctx)
	if err != nil {
		panic(err)
	}
	if err := stream.Send(&p4v1.StreamMessageRequest{Update: &p4v1.StreamMessageRequest_Arbitration{
		Arbitration: &p4v1.MasterArbitrationUpdate{DeviceId: 1, ElectionId: election}}}); err != nil {
		panic(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		panic(err)
	}
	fmt.Println("arbitration:", codes.Code(resp.GetArbitration().GetStatus().GetCode()))

	// A port wider than the parameter's 9 bits fails that update: the batch
	// answers UNKNOWN, with one p4.v1.Error per update.
	err = write(election, []byte{0x04, 0x00})
	for _, d := range status.Convert(err).Details() {
		if pe, ok := d.(*p4v1.Error); ok {
			fmt.Printf("write with port 1024: %v, update: %v\n", status.Code(err), codes.Code(pe.GetCanonicalCode()))
		}
	}
	err = write(election, []byte{5})
	flow := proflow.FlowID{Src: netip.MustParseAddr("10.0.1.10"), Dst: netip.MustParseAddr("10.0.4.10")}
	port, _ := dp.Path(1, flow)
	fmt.Printf("write with port 5: %v; the data plane sends %v out of port %d\n", status.Code(err), flow, port)
	// Output:
	// P4Runtime 1.4.0-rc.5, pipeline cookie 7
	// write before arbitration: PermissionDenied
	// arbitration: OK
	// write with port 1024: Unknown, update: InvalidArgument
	// write with port 5: OK; the data plane sends any 10.0.1.10:0->10.0.4.10:0 out of port 5
}

// Behind a target, a MemDataplane is the ground truth a controller's test
// checks (where each leaf sends the flow) and a place to inject failures.
func ExampleMemDataplane() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	dp := target.NewMemDataplane()
	srv, err := target.New(dp, []uint64{1, 2, 3, 4}, nil)
	if err != nil {
		panic(err)
	}
	addr, stop := serveLoopback(srv)
	defer stop()

	// The controller under test: the p4runtime southbound, programming four
	// leaves (leafN: hosts 10.0.N.0/24, uplinks to agg1…agg4 on ports 3…6).
	flow, err := proflow.ParseFlowID("tcp 10.0.1.10:5001->10.0.4.10:5201")
	if err != nil {
		panic(err)
	}
	cfg := p4runtime.DefaultConfig()
	for i := 1; i <= 4; i++ {
		cfg.Leaves = append(cfg.Leaves, p4runtime.Leaf{
			Name:      fmt.Sprintf("leaf%d", i),
			DeviceID:  uint64(i),
			Addr:      addr,
			Hosts:     []netip.Prefix{netip.MustParsePrefix(fmt.Sprintf("10.0.%d.0/24", i))},
			HostPorts: []uint32{1, 2},
			Uplinks:   []uint32{3, 4, 5, 6},
		})
	}
	cfg.Flow = flow
	cfg.ElectionID = p4runtime.ElectionID{Low: 10}
	c, err := p4runtime.Dial(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	where := func() string {
		fwd, _ := dp.Path(1, flow)           // the flow enters at leaf1
		rev, _ := dp.Path(4, flow.Reverse()) // its replies at leaf4
		return fmt.Sprintf("leaf1 port %d, leaf4 port %d", fwd, rev)
	}
	if err := c.Place(ctx, flow, 1); err != nil {
		panic(err)
	}
	fmt.Println("on agg2:", where())

	// leaf4's data plane fails: the reroute is refused and rolled back.
	dp.FailSetPath(4, errors.New("injected fault"))
	err = c.Place(ctx, flow, 2)
	dp.FailSetPath(4, nil)
	var de *p4runtime.DeviceError
	if errors.As(err, &de) {
		fmt.Printf("move to agg3 refused by %s: %v\n", de.Leaf, de.Code)
	}
	fmt.Println("still on agg2:", where())
	// Output:
	// on agg2: leaf1 port 4, leaf4 port 4
	// move to agg3 refused by leaf4: Internal
	// still on agg2: leaf1 port 4, leaf4 port 4
}
