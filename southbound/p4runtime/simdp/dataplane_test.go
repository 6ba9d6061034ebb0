package simdp_test

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/simdp"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

func TestLeavesDescribeTheSimulatedFabric(t *testing.T) {
	cfg := sim.DefaultConfig()
	leaves := simdp.Leaves(cfg, "127.0.0.1:9559")
	if len(leaves) != cfg.Leaves {
		t.Fatalf("%d leaves, want %d", len(leaves), cfg.Leaves)
	}
	for i, l := range leaves {
		if want := "leaf" + string(rune('1'+i)); l.Name != want || l.DeviceID != uint64(i+1) || l.Addr != "127.0.0.1:9559" {
			t.Errorf("leaf %d = %s device %d at %s, want %s device %d", i, l.Name, l.DeviceID, l.Addr, want, i+1)
		}
		if len(l.Hosts) != cfg.HostsPerLeaf || len(l.HostPorts) != cfg.HostsPerLeaf || len(l.Uplinks) != cfg.Switches {
			t.Errorf("leaf %s: %d hosts, %d host ports, %d uplinks, want %d, %d, %d",
				l.Name, len(l.Hosts), len(l.HostPorts), len(l.Uplinks), cfg.HostsPerLeaf, cfg.HostsPerLeaf, cfg.Switches)
		}
	}
	// The protected flow's addresses are on the leaves of its hosts, and
	// the p4runtime client accepts the description.
	flow := cfg.Flow()
	if !leaves[0].Hosts[0].Contains(flow.Src) || !leaves[3].Hosts[1].Contains(flow.Dst) {
		t.Errorf("flow %v not on leaf1/h1 and leaf4/h8: %v, %v", flow, leaves[0].Hosts, leaves[3].Hosts)
	}
	pc := p4runtime.DefaultConfig()
	pc.Topology, pc.Leaves, pc.Flow = cfg.Topology(), leaves, flow
	if err := pc.Validate(); err != nil {
		t.Errorf("p4runtime config with these leaves: %v", err)
	}
}

func TestNewRejectsBadLeaves(t *testing.T) {
	fab := newFabric(t, "S1", 1)
	good := func() []p4runtime.Leaf { return simdp.Leaves(fab.Config(), "x:1") }
	for _, tc := range []struct {
		name   string
		change func(ls []p4runtime.Leaf) []p4runtime.Leaf
		want   string
	}{
		{"unknown name", func(ls []p4runtime.Leaf) []p4runtime.Leaf { ls[1].Name = "spine1"; return ls }, `name "spine1", want one of the simulator's leaves leaf1..leaf4`},
		{"name twice", func(ls []p4runtime.Leaf) []p4runtime.Leaf { ls[2].Name = "leaf2"; return ls }, "leaf leaf2 listed twice"},
		{"device zero", func(ls []p4runtime.Leaf) []p4runtime.Leaf { ls[1].DeviceID = 0; return ls }, "device ID 0"},
		{"device twice", func(ls []p4runtime.Leaf) []p4runtime.Leaf { ls[1].DeviceID = 1; return ls }, "device ID 1 is already leaf1's"},
		{"host ports", func(ls []p4runtime.Leaf) []p4runtime.Leaf { ls[0].HostPorts = ls[0].HostPorts[:1]; return ls }, "leaf1: 1 host ports, want one per host of the leaf (2)"},
		{"uplinks", func(ls []p4runtime.Leaf) []p4runtime.Leaf { ls[3].Uplinks = ls[3].Uplinks[:3]; return ls }, "leaf4: 3 uplinks, want one per aggregation switch (4)"},
		{"port twice", func(ls []p4runtime.Leaf) []p4runtime.Leaf { ls[0].Uplinks[0] = ls[0].HostPorts[0]; return ls }, "leaf1: port 1 used twice"},
		{"no source leaf", func(ls []p4runtime.Leaf) []p4runtime.Leaf { return ls[1:] }, "source leaf leaf1 is missing"},
		{"no destination leaf", func(ls []p4runtime.Leaf) []p4runtime.Leaf { return ls[:3] }, "destination leaf leaf4 is missing"},
		{"wrong hosts", func(ls []p4runtime.Leaf) []p4runtime.Leaf {
			ls[3].Hosts = []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")}
			return ls
		}, "leaf4: hosts [10.9.0.0/16] do not contain the protected flow's destination 10.0.0.8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := simdp.New(fab, tc.change(good()))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "simdp: new: ") {
				t.Errorf("New = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := simdp.New(nil, good()); err == nil {
		t.Error("New(nil fabric) succeeded")
	}
	// A subset of leaves is fine as long as the flow's ends are there.
	ls := good()
	if _, err := simdp.New(fab, []p4runtime.Leaf{ls[3], ls[0]}); err != nil {
		t.Errorf("New with leaf4 and leaf1 only: %v", err)
	}
}

func TestSetPathMovesTheProtectedFlow(t *testing.T) {
	fab := newFabric(t, "S1", 1)
	leaves := simdp.Leaves(fab.Config(), "x:1")
	dp, err := simdp.New(fab, leaves)
	if err != nil {
		t.Fatal(err)
	}
	flow := fab.Flow()
	src, dst := leaves[0], leaves[3]
	wantAt := func(cur, fwd, rev int) {
		t.Helper()
		if got := fab.Current(); got != cur {
			t.Errorf("simulated flow on switch %d, want %d", got, cur)
		}
		if f, r := dp.Placement(); f != fwd || r != rev {
			t.Errorf("Placement = (%d, %d), want (%d, %d)", f, r, fwd, rev)
		}
	}
	wantCode := func(err error, code codes.Code) {
		t.Helper()
		if status.Code(err) != code {
			t.Errorf("error %v, want code %v", err, code)
		}
	}
	if err := fab.Advance(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	wantAt(0, -1, -1)

	if err := dp.SetPath(src.DeviceID, flow, src.Uplinks[2]); err != nil {
		t.Fatal(err)
	}
	wantAt(2, 2, -1)
	if err := dp.SetPath(dst.DeviceID, flow.Reverse(), dst.Uplinks[2]); err != nil {
		t.Fatal(err)
	}
	wantAt(2, 2, 2)
	if p, ok := dp.Path(dst.DeviceID, flow.Reverse()); !ok || p != dst.Uplinks[2] {
		t.Errorf("Path(reverse) = %d, %v, want %d", p, ok, dst.Uplinks[2])
	}

	// Entries that are not the protected flow's forward entry on its
	// source leaf do not move it.
	other := proflow.FlowID{Src: netip.MustParseAddr("10.0.0.3"), Dst: netip.MustParseAddr("10.0.0.7"), Proto: proflow.ProtoTCP}
	if err := dp.SetPath(leaves[1].DeviceID, other, leaves[1].Uplinks[3]); err != nil {
		t.Fatal(err)
	}
	if err := dp.SetPath(dst.DeviceID, flow, dst.Uplinks[1]); err != nil {
		t.Fatal(err)
	}
	wantAt(2, 2, 2)
	if c, err := dp.PathCounters(leaves[1].DeviceID, other); err != nil || c != (target.Counts{}) {
		t.Errorf("PathCounters(other flow) = %+v, %v, want zero", c, err)
	}

	// Refusals leave everything as it was.
	err = dp.SetPath(src.DeviceID, flow, src.HostPorts[0])
	wantCode(err, codes.InvalidArgument)
	if err == nil || !strings.Contains(err.Error(), "port 1 is not an uplink") {
		t.Errorf("SetPath to a host port: %v", err)
	}
	wantCode(dp.SetPath(99, flow, 3), codes.NotFound)
	wantCode(dp.ClearPath(99, flow), codes.NotFound)
	_, err = dp.PortCounters(99, 1)
	wantCode(err, codes.NotFound)
	wantAt(2, 2, 2)

	// Deleting the forward entry returns the flow to base forwarding: the
	// scenario's initial switch.
	if err := dp.SetPath(src.DeviceID, flow, src.Uplinks[3]); err != nil {
		t.Fatal(err)
	}
	wantAt(3, 3, 2)
	if err := dp.ClearPath(src.DeviceID, flow); err != nil {
		t.Fatal(err)
	}
	wantAt(fab.InitialSwitch(), -1, 2)
	if err := dp.ClearPath(dst.DeviceID, flow.Reverse()); err != nil {
		t.Fatal(err)
	}
	wantAt(fab.InitialSwitch(), -1, -1)
	if _, ok := dp.Path(src.DeviceID, flow); ok {
		t.Error("forward path still recorded after ClearPath")
	}
}

// counters is every counter of the data plane at one time.
type counters struct {
	ports map[[2]uint64]target.PortCounts // (device, port)
	path  target.Counts                   // the protected flow's forward entry
}

func readAll(t *testing.T, dp *simdp.Dataplane, leaves []p4runtime.Leaf, flow proflow.FlowID) counters {
	t.Helper()
	c := counters{ports: map[[2]uint64]target.PortCounts{}}
	for _, l := range leaves {
		for _, p := range append(append([]uint32{}, l.HostPorts...), l.Uplinks...) {
			pc, err := dp.PortCounters(l.DeviceID, p)
			if err != nil {
				t.Fatal(err)
			}
			c.ports[[2]uint64{l.DeviceID, uint64(p)}] = pc
		}
	}
	var err error
	if c.path, err = dp.PathCounters(leaves[0].DeviceID, flow); err != nil {
		t.Fatal(err)
	}
	return c
}

// sum returns the increase of the selected counter over the given ports.
func sum(prev, cur counters, dev uint64, ports []uint32, sel func(target.PortCounts) target.Counts) float64 {
	var s float64
	for _, p := range ports {
		k := [2]uint64{dev, uint64(p)}
		s += float64(sel(cur.ports[k]).Bytes - sel(prev.ports[k]).Bytes)
	}
	return s
}

func rx(p target.PortCounts) target.Counts { return p.Rx }
func tx(p target.PortCounts) target.Counts { return p.Tx }

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol+1e-9*math.Abs(want) }

// TestCountersIntegrateTheSimulation checks the counters against the
// simulator's ground truth, interval by interval, through S7 (congesters
// of one leaf on two switches): the identities the package documents hold
// to the byte (up to rounding to whole bytes).
func TestCountersIntegrateTheSimulation(t *testing.T) {
	fab := newFabric(t, "S7", 3)
	cfg := fab.Config()
	leaves := simdp.Leaves(cfg, "x:1")
	dp, err := simdp.New(fab, leaves)
	if err != nil {
		t.Fatal(err)
	}
	flow := fab.Flow()
	iv := cfg.Interval.Seconds()
	prev := readAll(t, dp, leaves, flow)
	var truth proflow.Observation
	for step := 1; step <= 80; step++ { // 40 s: baseline, congestion, collapse
		if err := fab.Advance(cfg.Interval); err != nil {
			t.Fatal(err)
		}
		cur := readAll(t, dp, leaves, flow)
		if !fab.Truth(&truth) {
			t.Fatal("no sample")
		}
		for k, p := range cur.ports {
			q := prev.ports[k]
			if p.Rx.Bytes < q.Rx.Bytes || p.Tx.Bytes < q.Tx.Bytes || p.Rx.Packets < q.Rx.Packets || p.Tx.Packets < q.Tx.Packets {
				t.Fatalf("step %d: counters of device %d port %d went backwards: %+v after %+v", step, k[0], k[1], p, q)
			}
			if p.Tx.Packets != uint64(float64(p.Tx.Bytes)/cfg.PacketSize) {
				t.Fatalf("step %d: %d bytes counted as %d packets, want full-size frames", step, p.Tx.Bytes, p.Tx.Packets)
			}
		}
		if cur.path.Bytes < prev.path.Bytes {
			t.Fatalf("step %d: path counter went backwards", step)
		}
		tol := 2 * float64(cfg.HostsPerLeaf+cfg.Switches) // whole bytes per counter
		for i, l := range cfg.CongestionLeaves {
			lf, ls := leaves[l], truth.Leaves[i]
			if got := sum(prev, cur, lf.DeviceID, lf.HostPorts, rx); !near(got, ls.TransmitRate*iv, tol) {
				t.Errorf("step %d: %s host ports received %.0f bytes, want μ·Δ = %.0f", step, lf.Name, got, ls.TransmitRate*iv)
			}
			if got := sum(prev, cur, lf.DeviceID, lf.Uplinks, tx); !near(got, ls.TransmitRate*iv, tol) {
				t.Errorf("step %d: %s uplinks sent %.0f bytes, want μ·Δ = %.0f", step, lf.Name, got, ls.TransmitRate*iv)
			}
			if l == 0 {
				want := (ls.TransmitRate - ls.IngressRate) * iv
				if got := float64(cur.path.Bytes - prev.path.Bytes); !near(got, want, 2) {
					t.Errorf("step %d: path counter +%.0f bytes, want (μ−λ)·Δ = %.0f", step, got, want)
				}
			}
		}
		// What the aggregation layer delivers arrives on leaf4, at h7 and h8.
		l4 := leaves[3]
		if up, hosts := sum(prev, cur, l4.DeviceID, l4.Uplinks, rx), sum(prev, cur, l4.DeviceID, l4.HostPorts, tx); !near(up, hosts, tol) || (step > 10 && up == 0) {
			t.Errorf("step %d: leaf4 received %.0f bytes from the aggregation layer and sent %.0f to its hosts, want equal and non-zero", step, up, hosts)
		}
		if step == 80 {
			// S7 after congestion: h3 (leaf2) sends through agg1, h4 through agg2.
			l2 := leaves[1]
			for k, want := range []bool{true, true, false, false} {
				if got := sum(prev, cur, l2.DeviceID, l2.Uplinks[k:k+1], tx) > 0; got != want {
					t.Errorf("leaf2 sends toward agg%d: %v, want %v", k+1, got, want)
				}
			}
		}
		prev = cur
	}
}

// TestOneCongesterPerLeafIsExact: with one congester per leaf, each leaf's
// uplink toward its congester's switch carries exactly that leaf's λ, so
// the client's ρ_k is exact per switch; it is compared with the simulator's
// (post-bucket) ρ_k while the buckets still have tokens.
func TestOneCongesterPerLeafIsExact(t *testing.T) {
	sc := &sim.Scenario{Name: "spread", ProtectedSwitch: "agg1", Congesters: []sim.Congester{
		{Host: "h2", Arrive: sim.Duration(10 * time.Second), Switch: "agg2"},
		{Host: "h3", Arrive: sim.Duration(10 * time.Second), Switch: "agg3", Moves: []sim.Move{{At: sim.Duration(15 * time.Second), Switch: "agg4"}}},
		{Host: "h5", Arrive: sim.Duration(10 * time.Second), Switch: "agg4", Depart: sim.Duration(17 * time.Second)},
	}}
	fab, err := sim.New(sim.DefaultConfig(), sc, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fab.Config()
	leaves := simdp.Leaves(cfg, "x:1")
	dp, err := simdp.New(fab, leaves)
	if err != nil {
		t.Fatal(err)
	}
	iv := cfg.Interval.Seconds()
	prev := readAll(t, dp, leaves, fab.Flow())
	var truth proflow.Observation
	for step := 1; step <= 40; step++ {
		if err := fab.Advance(cfg.Interval); err != nil {
			t.Fatal(err)
		}
		cur := readAll(t, dp, leaves, fab.Flow())
		fab.Truth(&truth)
		at := time.Duration(step) * cfg.Interval
		// Where each leaf's congester is during (at−Δ, at].
		want := [3][4]float64{} // leaf × switch, bytes
		active := func(from, to time.Duration) bool { return at > from && (to == 0 || at-cfg.Interval < to) }
		λ := func(i int) float64 { return truth.Leaves[i].IngressRate * iv }
		if active(10*time.Second, 0) {
			want[0][1] = λ(0)
			want[1][2] = λ(1)
			if at > 15*time.Second {
				want[1][2], want[1][3] = 0, λ(1)
			}
		}
		if active(10*time.Second, 17*time.Second) {
			want[2][3] = λ(2)
		}
		want[0][0] = (truth.Leaves[0].TransmitRate - truth.Leaves[0].IngressRate) * iv
		for l := range 3 {
			for k := range 4 {
				got := sum(prev, cur, leaves[l].DeviceID, leaves[l].Uplinks[k:k+1], tx)
				if !near(got, want[l][k], 2) {
					t.Errorf("t=%v: leaf%d → agg%d sent %.0f bytes, want %.0f", at, l+1, k+1, got, want[l][k])
				}
			}
		}
		if at == 12*time.Second {
			for k := range 4 {
				var offered float64
				for l := range 3 {
					offered += sum(prev, cur, leaves[l].DeviceID, leaves[l].Uplinks[k:k+1], tx) / iv
				}
				t.Logf("agg%d: leaves offer %.2f MB/s, the simulator's ρ is %.2f MB/s", k+1, offered/1e6, truth.Switches[k].TxRate/1e6)
			}
		}
		prev = cur
	}
}

func TestNewCountsFromNow(t *testing.T) {
	fab := newFabric(t, "S1", 1)
	if err := fab.Advance(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	leaves := simdp.Leaves(fab.Config(), "x:1")
	dp, err := simdp.New(fab, leaves)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dp.PathCounters(1, fab.Flow())
	if err != nil || c.Bytes != 0 {
		t.Fatalf("PathCounters right after New = %+v, %v, want zero", c, err)
	}
	if err := fab.Advance(fab.Config().Interval); err != nil {
		t.Fatal(err)
	}
	c, _ = dp.PathCounters(1, fab.Flow())
	var truth proflow.Observation
	fab.Truth(&truth)
	want := (truth.Leaves[0].TransmitRate - truth.Leaves[0].IngressRate) * fab.Config().Interval.Seconds()
	if !near(float64(c.Bytes), want, 1) {
		t.Errorf("one interval after New: %d bytes, want %.0f (one interval, not the 10 s before)", c.Bytes, want)
	}
}

func TestErrorsAreStatusErrors(t *testing.T) {
	fab := newFabric(t, "S1", 1)
	dp, err := simdp.New(fab, simdp.Leaves(fab.Config(), "x:1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = dp.PathCounters(7, fab.Flow())
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "simdp: unknown device 7, want one of [1 2 3 4]") {
		t.Errorf("PathCounters(unknown device) = %v, want a gRPC status error naming the devices", err)
	}
}
