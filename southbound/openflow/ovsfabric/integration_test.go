package ovsfabric_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
	"github.com/proflow-sdn/proflow/telemetry"
)

// testRunRoot holds the run directory of every test process (make ovs-down
// cleans up after each one it finds there).
const testRunRoot = "/tmp/proflow-ovs-test"

// testPrefix and testRunDir are this test process's own, from its PID, so
// that two go test runs of the package at once build separate fabrics.
var (
	testPrefix = processPrefix(os.Getpid())
	testRunDir = filepath.Join(testRunRoot, testPrefix)
)

// processPrefix returns "t", two base-36 digits of pid modulo 1,296, and
// "-": 4 characters, the longest prefix Up takes (interface names stay
// within 15 characters). Two runs collide only when their PIDs are equal
// modulo 1,296; the dash keeps the prefix off system names such as tun0.
func processPrefix(pid int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	n := pid % (36 * 36)
	return string([]byte{'t', digits[n/36], digits[n%36], '-'})
}

var (
	h1 = netip.MustParseAddr("10.0.0.1")
	h7 = netip.MustParseAddr("10.0.0.7")
	h8 = netip.MustParseAddr("10.0.0.8")
	fp = proflow.FlowID{Src: h1, Dst: h8, Proto: proflow.ProtoTCP, SrcPort: 40000, DstPort: 5201}
	// A 10 Mbit/s bucket: half the fabric's default, so that ovs-vswitchd's
	// userspace thread keeps up on two shared cores.
	topo = proflow.Topology{Switches: []string{"agg1", "agg2", "agg3", "agg4"}, Leaves: []string{"leaf1", "leaf2", "leaf3"},
		BucketRate: 10e6 / 8}
)

// congesterTraffic is one congesting host: two streams of 1.5 Mbit/s each,
// so five of them offer 1.5 times the 10 Mbit/s bucket. Full-rate streams (the
// paper's) would make ovs-vswitchd's single userspace thread the bottleneck
// of every path on two cores, starving the protected flow wherever it goes.
var congesterTraffic = ovsfabric.SenderConfig{Streams: 2, RateBytesPerSec: 1.5e6 / 8}

// bed is the OVS fabric with a controller (openflow.Server + tc agent).
type bed struct {
	f   *ovsfabric.Fabric
	srv *openflow.Server
	tel proflow.Telemetry
	reg *prometheus.Registry
}

// requireFabric skips the test when it does not run as root, the one
// capability a test cannot get, and fails it when, as root, the fabric
// cannot be built: a tool ovsfabric.Check looks for is missing (make
// ovs-deps installs them), one of tools is, or a network namespace cannot
// be made. Where the fabric can be built it must be.
func requireFabric(t *testing.T, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: not root: the OVS fabric needs root (network namespaces, veth, tc)")
	}
	if err := ovsfabric.Check(); err != nil {
		t.Fatalf("running as root, but the fabric cannot be built: %v (make ovs-deps)", err)
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("running as root, but %s is missing: %v", tool, err)
		}
	}
	probe := fmt.Sprintf("%snetns-probe-%d", testPrefix, os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Fatalf("create a network namespace as root (ip netns add %s): %v: %s", probe, err, bytes.TrimSpace(out))
	}
	if out, err := exec.Command("ip", "netns", "delete", probe).CombinedOutput(); err != nil {
		t.Fatalf("ip netns delete %s: %v: %s", probe, err, bytes.TrimSpace(out))
	}
}

func upBed(t *testing.T, ctx context.Context) *bed {
	t.Helper()
	requireFabric(t)
	b := &bed{reg: prometheus.NewRegistry()}
	cfg := openflow.DefaultConfig()
	cfg.Registerer = b.reg
	b.f, b.srv = upFabric(t, ctx, cfg, ovsfabric.Config{BucketRate: "10mbit"})
	// tc overflow: an agent on the uplinks, a client merged after OpenFlow
	// (as Experiment.Run does).
	tel, stopAgent, err := ovsfabric.OverflowTelemetry(ctx, b.f, b.srv, topo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopAgent)
	b.tel = tel
	return b
}

// upFabric serves ocfg for the paper's fabric and flow on a loopback port
// and brings the fabric up with fc (its prefix, run directory and
// controller filled in) until the test ends, then waits for the switches
// and, as Experiment.Run does, puts back a tbf ovs-vswitchd replaced. The
// caller has called requireFabric.
func upFabric(t *testing.T, ctx context.Context, ocfg openflow.Config, fc ovsfabric.Config) (*ovsfabric.Fabric, *openflow.Server) {
	t.Helper()
	ocfg.Fabric, ocfg.Topology, ocfg.Flow = openflow.PaperFabric(), topo, fp
	ocfg.RequestTimeout = time.Second
	srv, addr := serveOpenFlow(t, ctx, ocfg)
	fc.Prefix, fc.RunDir, fc.Controller = testPrefix, testRunDir, "tcp:"+addr
	f, err := ovsfabric.Up(ctx, fc)
	if err != nil {
		t.Fatalf("fabric up with every capability present: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Down(context.Background()); err != nil {
			t.Errorf("fabric down: %v", err)
		}
		assertNothingLeft(t)
	})
	if err := srv.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	if restored, err := f.EnsureBuckets(ctx); err != nil {
		t.Fatal(err)
	} else if len(restored) > 0 {
		t.Logf("tbf replaced after the fabric came up, put back on %v", restored)
	}
	return f, srv
}

// serveOpenFlow serves cfg on a loopback port until the test ends and
// returns the server and its address.
func serveOpenFlow(t *testing.T, ctx context.Context, cfg openflow.Config) (*openflow.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := openflow.NewServer(cfg)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(sctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return srv, ln.Addr().String()
}

// assertNothingLeft checks that teardown removed every namespace, link and
// OVS process of the test.
func assertNothingLeft(t *testing.T) {
	out, _ := exec.Command("ip", "netns", "list").Output()
	if strings.Contains(string(out), testPrefix) {
		t.Errorf("namespaces left after down:\n%s", out)
	}
	out, _ = exec.Command("ip", "-o", "link", "show").Output()
	if strings.Contains(string(out), testPrefix) {
		t.Errorf("links left after down:\n%s", out)
	}
	cmd := exec.Command("ovs-vsctl", "--db=unix:"+testRunDir+"/db.sock", "--timeout=2", "show")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("ovs-vsctl show still answers after down:\n%s", out)
	}
	out, _ = exec.Command("pgrep", "-f", testRunDir).Output()
	if len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("processes left after down: %s", out)
	}
}

// meter records a sink's per-second reports.
type meter struct {
	mu   sync.Mutex
	reps []ovsfabric.SinkReport
}

func (m *meter) run(s *ovsfabric.Sink) {
	for r := range s.Reports() {
		m.mu.Lock()
		m.reps = append(m.reps, r)
		m.mu.Unlock()
	}
}

// avg returns the mean rate in bytes/s over the reports of the last d.
func (m *meter) avg(d time.Duration) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	cut := time.Now().Add(-d)
	sum, n := 0.0, 0
	for _, r := range m.reps {
		if r.Time.After(cut) {
			sum += float64(r.Bytes)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func mbit(bps float64) string { return fmt.Sprintf("%.2f Mbit/s", bps*8/1e6) }

var flowLine = regexp.MustCompile(`cookie=0x([0-9a-f]+).*priority=(\d+).*actions=output:(\d+)`)

// overrideOn parses dump-flows of a leaf and returns the uplink port of the
// highest-priority override matching both hosts, or 0.
func overrideOn(dump string, src, dst netip.Addr) (port int, cookie uint64) {
	best := -1
	for _, line := range strings.Split(dump, "\n") {
		if !strings.Contains(line, "nw_src="+src.String()+",") || !strings.Contains(line, "nw_dst="+dst.String()+",") {
			continue
		}
		m := flowLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ck, _ := strconv.ParseUint(m[1], 16, 64)
		prio, _ := strconv.Atoi(m[2])
		if ck>>40 != 0x504602 || prio <= best {
			continue
		}
		best, cookie = prio, ck
		port, _ = strconv.Atoi(m[3])
	}
	return port, cookie
}

func (b *bed) where(ctx context.Context, f proflow.FlowID) (int, error) {
	fwd, err := b.f.DumpFlows(ctx, b.f.LeafBridge(0))
	if err != nil {
		return -1, err
	}
	rev, err := b.f.DumpFlows(ctx, b.f.LeafBridge(3))
	if err != nil {
		return -1, err
	}
	pf, _ := overrideOn(fwd, f.Src, f.Dst)
	pr, _ := overrideOn(rev, f.Dst, f.Src)
	if pf == 0 || pf != pr {
		return -1, fmt.Errorf("override uplinks: forward port %d on leaf1, reverse %d on leaf4, want the same uplink", pf, pr)
	}
	return pf - 1, nil // PaperFabric: uplink k+1 leads to agg k+1
}

// tableMisses returns lookups that matched no rule in table 0 of a bridge.
func (b *bed) tableMisses(ctx context.Context, bridge string) int {
	out, err := b.f.Output(ctx, "ovs-ofctl", "-O", "OpenFlow13", "dump-tables", bridge)
	if err != nil {
		return -1
	}
	m := regexp.MustCompile(`(?s)0:.*?lookup=(\d+), matched=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	l, _ := strconv.Atoi(m[1])
	n, _ := strconv.Atoi(m[2])
	return l - n
}

func TestOVSFabric(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	b := upBed(t, ctx)

	t.Run("EnforcerConformance", func(t *testing.T) {
		southboundtest.TestEnforcer(t, func(t *testing.T) southboundtest.EnforcerHarness {
			return southboundtest.EnforcerHarness{Enforcer: b.srv, Topology: topo, Flow: fp,
				Where: func(ctx context.Context) (int, error) { return b.where(ctx, fp) }}
		})
	})
	t.Run("TelemetryConformance", func(t *testing.T) {
		// Rates need two samples of each source (OpenFlow, then tc).
		for range 3 {
			if b.tel.Collect(ctx, new(proflow.Observation)) == nil {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		southboundtest.TestTelemetry(t, func(t *testing.T) southboundtest.TelemetryHarness {
			return southboundtest.TelemetryHarness{Telemetry: b.tel, Topology: topo, Advance: func() { time.Sleep(300 * time.Millisecond) }}
		})
	})
	if t.Failed() {
		return
	}

	// Traffic: f_p h1→h8 on agg1; sinks on h8 (f_p) and h7 (congesters).
	if err := b.srv.Place(ctx, fp, 0); err != nil {
		t.Fatal(err)
	}
	var fpm, congm meter
	for _, s := range []struct {
		host string
		port int
		m    *meter
	}{{"h8", 5201, &fpm}, {"h7", 5202, &congm}} {
		sink, err := b.f.StartSink(ctx, s.host, s.port)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sink.Stop)
		go s.m.run(sink)
	}
	time.Sleep(200 * time.Millisecond)
	snd, err := b.f.StartSender(ctx, "h1", "10.0.0.8:5201", ovsfabric.SenderConfig{BindPort: 40000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snd.Stop)
	time.Sleep(4500 * time.Millisecond)
	baseline := fpm.avg(3 * time.Second)
	t.Logf("baseline f_p alone on agg1: %s (bucket %s)", mbit(baseline), mbit(topo.BucketRate))
	if baseline < 0.5*topo.BucketRate {
		t.Fatalf("baseline %s, want at least half the bucket", mbit(baseline))
	}

	t.Run("MakeBeforeBreak", func(t *testing.T) {
		m1, m4 := b.tableMisses(ctx, b.f.LeafBridge(0)), b.tableMisses(ctx, b.f.LeafBridge(3))
		for i, k := range []int{1, 2, 3, 0, 2, 1, 0} {
			if err := b.srv.Place(ctx, fp, k); err != nil {
				t.Fatalf("move %d to %d: %v", i, k, err)
			}
			time.Sleep(150 * time.Millisecond)
		}
		d1, d4 := b.tableMisses(ctx, b.f.LeafBridge(0))-m1, b.tableMisses(ctx, b.f.LeafBridge(3))-m4
		if d1 != 0 || d4 != 0 {
			t.Errorf("table misses during 7 moves under traffic: leaf1 %d, leaf4 %d; want 0 (no packet found no rule)", d1, d4)
		}
		if got, err := b.where(ctx, fp); err != nil || got != 0 {
			t.Errorf("after the moves the rules send f_p to %d (%v), want 0", got, err)
		}
	})

	// Congestion (S1-like): five hosts onto agg1.
	for _, h := range []string{"h2", "h3", "h4", "h5", "h6"} {
		n, _ := strconv.Atoi(h[1:])
		pair := proflow.FlowID{Src: netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), Dst: h7, Proto: proflow.ProtoTCP}
		if err := b.srv.Place(ctx, pair, 0); err != nil {
			t.Fatal(err)
		}
		s, err := b.f.StartSender(ctx, h, "10.0.0.7:5202", congesterTraffic)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
	}
	run := func(t *testing.T, pol proflow.Policy, gate proflow.Gate, d time.Duration) []proflow.Decision {
		cfg := proflow.DefaultConfig()
		cfg.Topology, cfg.Flow, cfg.InitialSwitch = topo, fp, 0
		cfg.Baseline = &proflow.Baseline{Overflow: 0, FlowCount: 2, Throughput: baseline, Switch: 0}
		decisions := make(chan proflow.Decision, 1000)
		cfg.Observer = proflow.SendTo(decisions)
		enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
		if err != nil {
			t.Fatal(err)
		}
		ctrl, err := proflow.NewController(cfg, b.tel, enc, pol, gate, b.srv)
		if err != nil {
			t.Fatal(err)
		}
		rctx, rcancel := context.WithTimeout(ctx, d)
		defer rcancel()
		_ = ctrl.Run(rctx)
		close(decisions)
		var out []proflow.Decision
		for dd := range decisions {
			out = append(out, dd)
		}
		return out
	}

	t.Run("StaticStaysDegraded", func(t *testing.T) {
		ds := run(t, policy.Static{}, policy.Immediate(), 8*time.Second)
		got := fpm.avg(4 * time.Second)
		t.Logf("static: f_p %s (%.0f%% of baseline), congesters %s, %d decisions", mbit(got), 100*got/baseline, mbit(congm.avg(4*time.Second)), len(ds))
		for _, d := range ds {
			if d.Rerouted {
				t.Errorf("static policy rerouted: %+v", d)
			}
		}
		if got > 0.5*baseline {
			t.Errorf("with static placement under congestion f_p runs at %s, want below half its baseline %s", mbit(got), mbit(baseline))
		}
	})

	t.Run("CrowdReroutesAndRecovers", func(t *testing.T) {
		crowd, err := policy.NewCrowd(policy.DefaultCrowdConfig())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ds := run(t, crowd, policy.Immediate(), 15*time.Second)
		fpm.mu.Lock()
		var trace []string
		for _, r := range fpm.reps {
			if r.Time.After(start) {
				trace = append(trace, fmt.Sprintf("%.1f", float64(r.Bytes)*8/1e6))
			}
		}
		fpm.mu.Unlock()
		t.Logf("f_p Mbit/s per second since the controller started: %s", strings.Join(trace, " "))
		var moved *proflow.Decision
		for i, d := range ds {
			if d.Rerouted && moved == nil {
				moved = &ds[i]
			}
		}
		if moved == nil {
			for _, d := range ds {
				t.Logf("decision %d: %s %v", d.Seq, d.Reason, d.Err)
			}
			t.Fatal("crowd policy never rerouted")
		}
		reasons := map[proflow.Reason]int{}
		for _, d := range ds {
			reasons[d.Reason]++
			if d.Rerouted {
				t.Logf("reroute at seq %d to %s, flow counts seen: %v", d.Seq, topo.Switches[d.Target], d.Scores)
			}
			if d.Err != nil && reasons[d.Reason] < 3 {
				t.Logf("held: %v", d.Err)
			}
		}
		t.Logf("reasons: %v", reasons)
		for _, br := range []string{testPrefix + "agg1", testPrefix + "agg2", testPrefix + "leaf4"} {
			dump, _ := b.f.DumpFlows(ctx, br)
			var busy []string
			for _, l := range strings.Split(dump, "\n") {
				if strings.Contains(l, "n_packets=") && !strings.Contains(l, "n_packets=0,") && !strings.Contains(l, "arp") {
					busy = append(busy, strings.TrimSpace(l))
				}
			}
			t.Logf("%s busy rules:\n%s", br, strings.Join(busy, "\n"))
		}
		t.Logf("rerouted to %s %v after the controller started", topo.Switches[moved.Target], moved.Time.Sub(start).Round(time.Millisecond))
		got := fpm.avg(4 * time.Second)
		t.Logf("crowd: f_p %s (%.0f%% of baseline) over the last 4 s", mbit(got), 100*got/baseline)
		if got < 0.7*baseline {
			t.Errorf("after the reroute f_p runs at %s, want ≥ 70%% of its baseline %s", mbit(got), mbit(baseline))
		}
		dump, err := b.f.DumpFlows(ctx, b.f.LeafBridge(0))
		if err != nil {
			t.Fatal(err)
		}
		port, cookie := overrideOn(dump, h1, h8)
		if port != moved.Target+1 || cookie>>48 != 0x5046 {
			t.Errorf("leaf1 dump-flows: f_p override to port %d cookie %#x, want port %d with the controller's cookie 0x5046…\n%s", port, cookie, moved.Target+1, dump)
		}
		time.Sleep(600 * time.Millisecond) // one interval after the controller's last poll
		if obs := new(proflow.Observation); b.tel.Collect(ctx, obs) == nil {
			t.Logf("telemetry now: agg flow counts %v, overflow agg1 %.0f B/s, φ %s",
				[]float64{obs.Switches[0].FlowCount, obs.Switches[1].FlowCount, obs.Switches[2].FlowCount, obs.Switches[3].FlowCount},
				obs.Switches[0].OverflowRate, mbit(obs.Flow.Throughput))
		}
	})

	t.Run("SwitchdRestart", func(t *testing.T) {
		before, err := b.where(ctx, fp)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.f.RestartSwitchd(ctx); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, err := b.where(ctx, fp)
			if err == nil && got == before && len(b.srv.Connected()) == 8 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after restarting ovs-vswitchd the rules did not come back: %d, %v, connected %v", got, err, b.srv.Connected())
			}
			time.Sleep(200 * time.Millisecond)
		}
		// Telemetry polls again.
		obs := new(proflow.Observation)
		var cerr error
		for range 10 {
			if cerr = b.tel.Collect(ctx, obs); cerr == nil {
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		if cerr != nil {
			t.Errorf("Collect after restart: %v", cerr)
		} else {
			t.Logf("after restart: φ %s", mbit(obs.Flow.Throughput))
		}
	})
}
