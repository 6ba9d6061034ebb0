package openflow_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/fakeswitch"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

func TestBaseForwarding(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	if got := tb.srv.Connected(); len(got) != 8 {
		t.Fatalf("connected %v, want 8 switches", got)
	}
	// Every host pair across leaves is routed, both ways on one switch,
	// and ARP reaches its target.
	hosts := []string{"10.0.0.1", "10.0.0.3", "10.0.0.6", "10.0.0.8"}
	for _, a := range hosts {
		for _, b := range hosts {
			if a != b {
				f, _ := proflow.ParseFlowID(fmt.Sprintf("tcp %s:1->%s:2", a, b))
				tb.bothWays(f)
				if _, err := tb.net.Send(fakeswitch.Packet{EthType: 0x0806, Src: f.Src, Dst: f.Dst}, 42); err != nil {
					t.Errorf("arp %v: %v", f, err)
				}
			}
		}
	}
	if _, err := tb.srv.Locate(ctxT(t, time.Second), fp); !errors.Is(err, proflow.ErrNotPlaced) {
		t.Errorf("Locate before any Place: %v, want ErrNotPlaced", err)
	}
}

func TestPlaceMakeBeforeBreak(t *testing.T) {
	reg := prometheus.NewRegistry()
	tb := newTestbed(t, func(c *openflow.Config) { c.Registerer = reg })
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	for _, k := range []int{2, 0, 3, 1} {
		if err := tb.srv.Place(ctx, fp, k); err != nil {
			t.Fatalf("Place on %d: %v", k, err)
		}
		if got, want := tb.bothWays(fp), tb.cfg.Topology.Switches[k]; got != want {
			t.Fatalf("after Place on %d the flow goes via %s, want %s", k, got, want)
		}
		if got, err := tb.srv.Locate(ctx, fp); err != nil || got != k {
			t.Fatalf("Locate = %d, %v; want %d", got, err, k)
		}
	}
	// Idempotent: placing again sends nothing.
	before := tb.sw["leaf1"].FlowMods() + tb.sw["leaf4"].FlowMods()
	if err := tb.srv.Place(ctx, fp, 1); err != nil {
		t.Fatal(err)
	}
	if after := tb.sw["leaf1"].FlowMods() + tb.sw["leaf4"].FlowMods(); after != before {
		t.Errorf("repeated Place sent %d flow-mods, want 0", after-before)
	}
	// Each leaf saw: add new (higher priority), barrier, then delete old.
	for _, leaf := range []string{"leaf1", "leaf4"} {
		ops := tb.sw[leaf].Ops()
		var seq []string
		for _, op := range ops {
			switch {
			case op.Kind == "barrier":
				seq = append(seq, "barrier")
			case op.Priority >= 1000:
				seq = append(seq, fmt.Sprintf("%s:%d", op.Kind, op.Priority))
			}
		}
		want := []string{"barrier", "add:1001", "barrier", "add:1002", "barrier", "delete-strict:1001", "barrier",
			"add:1003", "barrier", "delete-strict:1002", "barrier", "add:1004", "barrier", "delete-strict:1003", "barrier"}
		if fmt.Sprint(seq) != fmt.Sprint(want) {
			t.Errorf("%s ops %v\nwant %v", leaf, seq, want)
		}
		n := 0
		for _, e := range tb.sw[leaf].Flows() {
			if e.Priority >= 1000 {
				n++
				if e.Cookie>>48 != 0x5046 || e.HardTimeout != 10 {
					t.Errorf("%s override cookie %#x hard timeout %d, want prefix 0x5046 and a 10 s lease", leaf, e.Cookie, e.HardTimeout)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s keeps %d override rules, want 1", leaf, n)
		}
	}
	if got := testutil.ToFloat64(mustGetLabel(t, reg, "proflow_openflow_placements_total", "ok")); got != 4 {
		t.Errorf("placements_total{result=ok} = %v, want 4", got)
	}
}

func TestPlaceErrors(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	if err := tb.srv.Place(ctx, fp, 4); !errors.Is(err, proflow.ErrMissingSwitch) {
		t.Errorf("Place on switch 4: %v, want ErrMissingSwitch", err)
	}
	local := proflow.FlowID{Src: h1, Dst: netipMust("10.0.0.2")}
	if err := tb.srv.Place(ctx, local, 1); err == nil {
		t.Error("Place of a flow within one leaf: no error")
	}
	if err := tb.srv.Place(ctx, proflow.FlowID{Src: h1, Dst: netipMust("10.9.9.9")}, 1); err == nil {
		t.Error("Place to an unknown host: no error")
	}

	if err := tb.srv.Place(ctx, fp, 2); err != nil {
		t.Fatal(err)
	}
	// A flow-mod the switch rejects: the error names the switch, and the
	// flow stays where it was.
	tb.sw["leaf4"].RejectCookie.Store(0x5046_02_000000_0000 | flowTagFor(t, tb) | 2)
	err := tb.srv.Place(ctx, fp, 0)
	var pe *openflow.ProtocolError
	if !errors.As(err, &pe) || pe.Switch != "leaf4" || pe.Type != 5 {
		t.Fatalf("Place with a rejecting leaf: %v, want a ProtocolError from leaf4 of type 5", err)
	}
	if got := tb.bothWays(fp); got != "agg3" {
		t.Errorf("after a failed Place the flow goes via %s, want agg3", got)
	}
	tb.sw["leaf4"].RejectCookie.Store(0)

	// A withheld barrier: Place fails within its context, the old path works.
	tb.sw["leaf1"].WithholdBarrier.Store(true)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = tb.srv.Place(short, fp, 1)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Place with a withheld barrier: %v, want a deadline error", err)
	}
	if got := tb.bothWays(fp); got != "agg3" {
		t.Errorf("after a withheld barrier the flow goes via %s, want agg3", got)
	}
	tb.sw["leaf1"].WithholdBarrier.Store(false)
	if err := tb.srv.Place(ctx, fp, 1); err != nil {
		t.Fatalf("Place after the barrier came back: %v", err)
	}
	if got := tb.bothWays(fp); got != "agg2" {
		t.Errorf("flow goes via %s, want agg2", got)
	}
}

// flowTagFor finds the tag of fp's override cookie from the table of leaf1.
func flowTagFor(t *testing.T, tb *testbed) uint64 {
	for _, e := range tb.sw["leaf1"].Flows() {
		if e.Priority >= 1000 {
			return e.Cookie & 0xffffff_0000
		}
	}
	t.Fatal("no override on leaf1")
	return 0
}

func TestReconnectRestoresRules(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	if err := tb.srv.Place(ctx, fp, 3); err != nil {
		t.Fatal(err)
	}
	leaf := tb.sw["leaf1"]
	leaf.WipeOnConnect.Store(true) // a restarted switch forgets its rules
	n := leaf.Connects()
	leaf.Drop()
	if err := leaf.Await(ctx, func() bool { return leaf.Connects() > n }); err != nil {
		t.Fatalf("leaf1 did not come back: %v", err)
	}
	tb.ready()
	if got := tb.bothWays(fp); got != "agg4" {
		t.Errorf("after leaf1 reconnected the flow goes via %s, want agg4", got)
	}
	// Telemetry keeps working.
	obs := new(proflow.Observation)
	_ = tb.srv.Collect(ctx, obs)
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatalf("Collect after reconnect: %v", err)
	}
}

func TestDeadSwitchDropped(t *testing.T) {
	reg := prometheus.NewRegistry()
	tb := newTestbed(t, func(c *openflow.Config) { c.Registerer = reg })
	tb.ready()
	agg := tb.sw["agg2"]
	n := agg.Connects()
	agg.IgnoreEcho.Store(true)
	if err := agg.Await(ctxT(t, 5*time.Second), func() bool { return agg.Connects() > n }); err != nil {
		t.Fatalf("a switch that stopped answering echoes was not dropped: %v", err)
	}
	if got := testutil.ToFloat64(mustGet(t, reg, "proflow_openflow_disconnects_total")); got < 1 {
		t.Errorf("disconnects_total = %v, want ≥ 1", got)
	}
	agg.IgnoreEcho.Store(false)
	tb.ready()
}

// TestLeaseExpiresWithoutController runs the leases on the test's clock:
// the server's refresh ticker and the switches' hard timeouts both read it,
// so no wall-clock time passes.
func TestLeaseExpiresWithoutController(t *testing.T) {
	const lease = time.Second
	tb, clock, ctx, base, target := placedOnLeaseClock(t, lease)
	// 4/3 of the lease with the controller alive: its refresh ticker fires
	// every lease/3 and each round re-adds the overrides, restarting their
	// hard timeout. A tick is received only after the previous round is
	// done, so by the last one the rules were refreshed at lease at the
	// latest: without the refresh they would have expired.
	refresh := clock.ticker(t, ctx, lease/3)
	for range 4 {
		clock.Advance(lease / 3)
		refresh.tick(t, ctx)
	}
	if got := tb.bothWays(fp); got != tb.cfg.Topology.Switches[target] {
		t.Fatalf("with the controller alive the flow goes via %s, want %s", got, tb.cfg.Topology.Switches[target])
	}
	tb.swStop() // keep the rules: switches stop talking to anyone
	tb.stop()
	clock.Advance(lease + lease/5) // past the hard timeout of the last refresh
	if got := tb.bothWays(fp); got != base {
		t.Errorf("after the lease expired the flow goes via %s, want its base path %s", got, base)
	}
}

// placedOnLeaseClock returns a testbed whose server and switches run their
// leases (lease long) on the returned clock, with fp placed on target, an
// aggregation switch other than its base path base.
func placedOnLeaseClock(t *testing.T, lease time.Duration) (*testbed, *tickClock, context.Context, string, int) {
	t.Helper()
	clock := newTickClock()
	tb := newTestbed(t, func(c *openflow.Config) { c.Clock, c.LeaseTimeout = clock, lease })
	for _, sw := range tb.sw {
		sw.SetNow(clock.Now)
	}
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	base := tb.bothWays(fp)
	target := 0
	if base == "agg1" {
		target = 1
	}
	if err := tb.srv.Place(ctx, fp, target); err != nil {
		t.Fatal(err)
	}
	return tb, clock, ctx, base, target
}

// TestForgetLetsTheLeaseLapse: Forget sends nothing and leaves the rules
// where they are, but the refresh no longer renews them, so with the
// controller alive they lapse after their lease.
func TestForgetLetsTheLeaseLapse(t *testing.T) {
	const lease = time.Second
	tb, clock, ctx, base, target := placedOnLeaseClock(t, lease)
	mods := 0
	for _, sw := range tb.sw {
		mods += sw.FlowMods()
	}
	if err := tb.srv.Forget(ctx, fp); err != nil {
		t.Fatalf("Forget: %v", err)
	}
	after := 0
	for _, sw := range tb.sw {
		after += sw.FlowMods()
	}
	if after != mods {
		t.Errorf("Forget sent %d flow-mods, want none", after-mods)
	}
	if got := tb.bothWays(fp); got != tb.cfg.Topology.Switches[target] {
		t.Fatalf("right after Forget the flow goes via %s, want %s still", got, tb.cfg.Topology.Switches[target])
	}
	refresh := clock.ticker(t, ctx, lease/3)
	for range 4 {
		clock.Advance(lease / 3)
		refresh.tick(t, ctx)
	}
	if got := tb.bothWays(fp); got != base {
		t.Errorf("a lease after Forget the flow goes via %s, want its base path %s (the refresh renewed a forgotten flow)", got, base)
	}
	if err := tb.srv.Forget(ctx, fp); err != nil {
		t.Errorf("Forget of a flow not placed: %v, want nil", err)
	}
}

func TestLocateAfterRestart(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	if err := tb.srv.Place(ctxT(t, 5*time.Second), fp, 2); err != nil {
		t.Fatal(err)
	}
	tb.restartServer()
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	got, err := tb.srv.Locate(ctx, fp)
	if err != nil || got != 2 {
		t.Fatalf("Locate after restart = %d, %v; want 2", got, err)
	}
	// The adopted placement moves make-before-break from generation 1.
	if err := tb.srv.Place(ctx, fp, 0); err != nil {
		t.Fatal(err)
	}
	if got := tb.bothWays(fp); got != "agg1" {
		t.Errorf("flow goes via %s, want agg1", got)
	}
	for _, e := range tb.sw["leaf1"].Flows() {
		if e.Priority >= 1000 && e.Priority != 1002 {
			t.Errorf("leaf1 keeps override at priority %d, want only 1002", e.Priority)
		}
	}
}

func TestTelemetry(t *testing.T) {
	tb := newTestbed(t, func(c *openflow.Config) { c.Topology.BucketRate = 1e6 })
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	if err := tb.srv.Place(ctx, fp, 1); err != nil {
		t.Fatal(err)
	}
	obs := new(proflow.Observation)
	if err := tb.srv.Collect(ctx, obs); !errors.Is(err, proflow.ErrStale) {
		t.Fatalf("first Collect: %v, want ErrStale (rates need two samples)", err)
	}
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	for k, s := range obs.Switches {
		if s != (proflow.SwitchSample{}) {
			t.Errorf("idle switch %d: %+v, want zeros", k, s)
		}
	}

	// One second of traffic: f_p 300 kB forward and 10 kB back (ACKs) on
	// agg2; a congester h3→h7 (leaf2→leaf4, on its base path) 200 kB.
	for range 200 {
		tb.path(fp, 1000)
	}
	for range 100 {
		tb.path(fp, 1000) // second half of the forward bytes: 300000 in total
	}
	for range 100 {
		tb.path(fp.Reverse(), 100)
	}
	cong := proflow.FlowID{Src: h3, Dst: h7, Proto: proflow.ProtoTCP, SrcPort: 1, DstPort: 2}
	congAgg := tb.path(cong, 1000)
	for range 199 {
		tb.path(cong, 1000)
	}
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if obs.Flow.Throughput != 300000 {
		t.Errorf("throughput %v B/s, want 300000", obs.Flow.Throughput)
	}
	agg2 := obs.Switches[1]
	if agg2.TxRate != 310000 || agg2.FlowCount != 2 || agg2.ElephantRate != 300000 {
		t.Errorf("agg2 %+v, want tx 310000, 2 flows, elephant 300000 (f_p forward above 10%% of 1 MB/s)", agg2)
	}
	k, _ := tb.cfg.Topology.SwitchIndex(congAgg)
	if k == 1 {
		t.Fatalf("congester shares agg2; pick another pair")
	}
	if s := obs.Switches[k]; s.TxRate != 200000 || s.FlowCount != 1 || s.ElephantRate != 200000 {
		t.Errorf("%s %+v, want tx 200000, 1 flow (one direction), elephant 200000", congAgg, s)
	}
	// leaf1 (h1): ingress excludes f_p; leaf2 (h3) carries the congester.
	if l := obs.Leaves[0]; l.IngressRate != 0 || l.TransmitRate != 300000 {
		t.Errorf("leaf1 %+v, want ingress 0 (f_p excluded), transmit 300000", l)
	}
	if l := obs.Leaves[1]; l.IngressRate != 200000 || l.TransmitRate != 200000 {
		t.Errorf("leaf2 %+v, want ingress and transmit 200000", l)
	}
	if obs.Flow.CongestionRate != 200000 {
		t.Errorf("congestion rate %v, want 200000", obs.Flow.CongestionRate)
	}
	if err := obs.Validate(tb.cfg.Topology); err != nil {
		t.Error(err)
	}
	// A reroute in the interval: the new rule counts from zero.
	if err := tb.srv.Place(ctx, fp, 3); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		tb.path(fp, 1000)
	}
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if obs.Flow.Throughput != 100000 || obs.Switches[3].TxRate != 100000 {
		t.Errorf("after reroute: throughput %v, agg4 tx %v; want 100000 both", obs.Flow.Throughput, obs.Switches[3].TxRate)
	}
}

func TestTelemetryStale(t *testing.T) {
	reg := prometheus.NewRegistry()
	tb := newTestbed(t, func(c *openflow.Config) { c.Registerer = reg })
	tb.ready()
	obs := new(proflow.Observation)
	ctx := ctxT(t, 5*time.Second)
	_ = tb.srv.Collect(ctx, obs)
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	leaf := tb.sw["leaf3"]
	leaf.DropStats.Store(true)
	before := leaf.StatsRequests()
	// Two quick Collects while the reply is missing: one poll in flight.
	for range 2 {
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := tb.srv.Collect(short, obs)
		cancel()
		if !errors.Is(err, proflow.ErrStale) {
			t.Fatalf("Collect without a stats reply: %v, want ErrStale", err)
		}
	}
	if got := leaf.StatsRequests() - before; got != 2 {
		t.Errorf("%d stats requests while a poll was outstanding, want 2 (one port, one flow)", got)
	}
	// After the request timeout the poll fails; telemetry stays stale.
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); !errors.Is(err, proflow.ErrStale) {
		t.Fatalf("Collect after the request timeout: %v, want ErrStale", err)
	}
	leaf.DropStats.Store(false)
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatalf("Collect after the switch answers again: %v", err)
	}
	if got := testutil.ToFloat64(mustGetLabel(t, reg, "proflow_openflow_polls_total", "error")); got < 1 {
		t.Errorf("polls_total{result=error} = %v, want ≥ 1", got)
	}
}

func TestConfigValidate(t *testing.T) {
	cfg := testConfig()
	cfg.Topology.Switches = []string{"agg1", "agg2", "agg4", "agg3"}
	cfg.Fabric.Leaves[1].Uplinks = cfg.Fabric.Leaves[1].Uplinks[:3]
	cfg.ElephantFraction = 2
	_, err := openflow.NewServer(cfg)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"agg3" in the fabric and "agg4"`, "leaf leaf2 has 3 uplinks", "elephant fraction 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestNewServerChecksFlow builds servers whose protected flow the fabric
// cannot carry, and with typed-nil collaborators: NewServer must refuse them
// with errors naming the problem.
func TestNewServerChecksFlow(t *testing.T) {
	for _, c := range []struct {
		name       string
		mod        func(*openflow.Config)
		want       string
		inFabricIs bool // the error wraps proflow.ErrNotInFabric
	}{
		{"source outside the fabric", func(c *openflow.Config) { c.Flow.Src = netipMust("10.0.4.1") },
			"flow tcp 10.0.4.1:40000->10.0.0.8:5201: source 10.0.4.1 is not a host of the fabric", true},
		{"destination outside the fabric", func(c *openflow.Config) { c.Flow.Dst = netipMust("10.0.1.1") },
			"destination 10.0.1.1 is not a host of the fabric", true},
		{"both hosts on one leaf", func(c *openflow.Config) { c.Flow.Dst = netipMust("10.0.0.2") },
			"both hosts hang off leaf leaf1, so no aggregation switch carries the flow", true},
		{"typed-nil clock", func(c *openflow.Config) { c.Clock = (*southboundtest.ManualClock)(nil) },
			"clock is a nil *southboundtest.ManualClock", false},
		{"typed-nil registerer", func(c *openflow.Config) { c.Registerer = (*prometheus.Registry)(nil) },
			"registerer is a nil *prometheus.Registry", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			c.mod(&cfg)
			_, err := openflow.NewServer(cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, proflow.ErrNotInFabric) != c.inFabricIs {
				t.Errorf("NewServer = %v, want an error containing %q (wrapping proflow.ErrNotInFabric: %v)", err, c.want, c.inFabricIs)
			}
		})
	}
}

func TestServeClosesEverything(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	tb.stop()
	if got := tb.srv.Connected(); len(got) != 0 {
		t.Errorf("after Serve returned, connected %v", got)
	}
	if err := tb.srv.Place(ctxT(t, time.Second), fp, 1); !errors.Is(err, openflow.ErrDisconnected) {
		t.Errorf("Place after Serve returned: %v, want ErrDisconnected", err)
	}
	if err := tb.srv.Collect(ctxT(t, time.Second), new(proflow.Observation)); !errors.Is(err, proflow.ErrMissingSwitch) {
		t.Errorf("Collect after Serve returned: %v, want ErrMissingSwitch", err)
	}
}

// TestReleaseIsTheOnlyUnplace checks issue 24's finding: the server has
// one method that drops a flow's overrides, proflow.Releaser's Release.
func TestReleaseIsTheOnlyUnplace(t *testing.T) {
	var _ proflow.Releaser = (*openflow.Server)(nil)
	if _, ok := reflect.TypeFor[*openflow.Server]().MethodByName("Unplace"); ok {
		t.Error("Server has Unplace beside Release, want Release only")
	}
}

func TestReleaseAndDisconnect(t *testing.T) {
	tb := newTestbed(t, nil)
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	base := tb.bothWays(fp)
	k := 0
	if base == "agg1" {
		k = 1
	}
	if err := tb.srv.Place(ctx, fp, k); err != nil {
		t.Fatal(err)
	}
	if err := tb.srv.Release(ctx, fp); err != nil {
		t.Fatal(err)
	}
	if got := tb.bothWays(fp); got != base {
		t.Errorf("after Release the flow goes via %s, want its base path %s", got, base)
	}
	if _, err := tb.srv.Locate(ctx, fp); !errors.Is(err, proflow.ErrNotPlaced) {
		t.Errorf("Locate after Release: %v, want ErrNotPlaced", err)
	}
	n := tb.sw["agg3"].Connects()
	if err := tb.srv.Disconnect("agg3"); err != nil {
		t.Fatal(err)
	}
	if err := tb.sw["agg3"].Await(ctx, func() bool { return tb.sw["agg3"].Connects() != n }); err != nil {
		t.Fatalf("agg3 did not reconnect after Disconnect: %v", err)
	}
	tb.ready()
	if err := tb.srv.Disconnect("nope"); err == nil {
		t.Error("Disconnect of an unknown switch: no error")
	}
}

// Peek reads the rates since the last Collect without ending its sample:
// the next Collect's rates span the whole time since the last one.
func TestTelemetryPeek(t *testing.T) {
	tb := newTestbed(t, func(c *openflow.Config) { c.Topology.BucketRate = 1e6 })
	tb.ready()
	ctx := ctxT(t, 5*time.Second)
	if err := tb.srv.Place(ctx, fp, 1); err != nil {
		t.Fatal(err)
	}
	var p proflow.Peeker = tb.srv
	obs := new(proflow.Observation)
	if err := p.Peek(ctx, obs); !errors.Is(err, proflow.ErrStale) || !strings.Contains(err.Error(), "no sample yet") {
		t.Fatalf("Peek before any Collect: %v, want ErrStale naming the missing sample", err)
	}
	_ = tb.srv.Collect(ctx, obs) // the first sample: rates need two
	tb.clock.Advance(time.Second)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		tb.path(fp, 1000)
	}
	tb.clock.Advance(500 * time.Millisecond)
	if err := p.Peek(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if obs.Flow.Throughput != 200000 || obs.Switches[1].TxRate != 200000 {
		t.Errorf("peek after 100 kB in 0.5 s: throughput %v, agg2 tx %v; want 200000 both", obs.Flow.Throughput, obs.Switches[1].TxRate)
	}
	if err := obs.Validate(tb.cfg.Topology); err != nil {
		t.Error(err)
	}
	for range 200 {
		tb.path(fp, 1000)
	}
	tb.clock.Advance(500 * time.Millisecond)
	if err := tb.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if obs.Flow.Throughput != 300000 || obs.Switches[1].TxRate != 300000 {
		t.Errorf("Collect after the peek: throughput %v, agg2 tx %v; want 300000 both (the whole second)", obs.Flow.Throughput, obs.Switches[1].TxRate)
	}
	// Without new counters since the last Collect's sample time, a peek
	// finds nothing to measure.
	if err := p.Peek(ctx, obs); !errors.Is(err, proflow.ErrStale) {
		t.Errorf("Peek at the last sample's time: %v, want ErrStale", err)
	}
}
