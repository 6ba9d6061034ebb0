//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/cluster"
	"github.com/proflow-sdn/proflow/internal/etcdtest"
)

// Bounds of the soak (issue 24, acceptance 3).
const (
	soakNoFile = 256  // the services' RLIMIT_NOFILE, soft and hard (prlimit)
	soakConns  = 2000 // stalled connections per listening port and wave
	soakHUPs   = 100  // SIGHUPs, good and bad configs in turn
	// The log bound: the service's limiter passes at most 20 records per
	// level and message per 10 s, so no message may have more than 40 in
	// any 10 s (two of its windows); and the whole log of a service over
	// the soak stays under soakLogLines lines and soakLogBytes bytes.
	soakLogBurst = 2 * 20
	soakLogLines = 1000
	soakLogBytes = 256 << 10
)

// TestServeSoak is acceptance 3 of issue 24: proflow serve under a soak on
// loopback. Two services of the binary run under prlimit --nofile=256:256
// (util-linux's prlimit sets the soft and hard limit and execs the binary,
// same pid; the Go runtime cannot raise its soft limit past that hard one):
//
//   - A: the simulated fabric (M2, static policy, two protected flows), in
//     cluster mode on a one-member loopback etcd (internal/etcdtest), the
//     constant flow's placement stored in etcd on agg3 before the start
//     (its scenario path is agg1). As root a missing etcd fails the test;
//     not root and without etcd, A runs without a cluster and the outage
//     is left out (logged);
//   - B: the OpenFlow southbound, no switch connected: its listening ports
//     are the OpenFlow port and /metrics.
//
// Against them: 2,000 stalled connections on each listening port (A's
// metrics, B's metrics, B's OpenFlow port), every other one half-open (a
// request or OpenFlow header cut short), in two waves; 100 SIGHUPs to A,
// a good config (the second flow alternates between two of the scenario's)
// and a bad one (broken YAML, a bad value) in turn, the config file
// replaced atomically before each and each reload's counter awaited before
// the next signal; then A's etcd killed for longer than its lease TTL and
// restarted, the second wave still held.
//
// It checks, under each wave: both /healthz answer, B's OpenFlow port
// greets a new connection with a HELLO (the services clear stalled
// connections at their bounds, 64 per port, 640 a second: about 3 s for a
// wave). During the etcd outage, as examples/serve/README.md ("Loss")
// says: A stays up and healthy and reports its shards lost to the fence
// (its flows removed, their placements left). After it: A owns its flows
// again, resumed at their stored placements (the constant flow still on
// agg3) and baselines. At the end: both healthy; A's flows deciding and
// none back in the baseline phase since the SIGHUPs; its reload counters
// exactly 50 ok and 50 error (the start is not a reload); the stalled
// connections closed at the bounds (at least a wave's worth); both exit 0
// on SIGTERM; each log within the bound above (measured: under 100 lines,
// 30 KB each). About 25 s after the build on 2 cores.
func TestServeSoak(t *testing.T) {
	// util-linux (prlimit) is part of every Debian system: its absence is
	// a broken machine, not a missing capability.
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Fatalf("prlimit (util-linux) missing: %v; it lowers the services' descriptor limit", err)
	}
	var etcd *etcdtest.Cluster
	switch err := etcdtest.Check(); {
	case err == nil:
		if etcd, err = etcdtest.Start(1); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(etcd.Stop)
	case os.Geteuid() == 0:
		t.Fatalf("%v: as root the soak needs etcd", err)
	default:
		t.Logf("not root and %v: the soak runs without a cluster and the etcd outage is left out", err)
	}
	dir := t.TempDir()
	bin := buildProflow(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const prefix = "/soak/"
	constant, _ := proflow.ParseFlowID("tcp 10.0.0.1:5001->10.0.0.8:5201")
	clusterSection := ""
	if etcd != nil {
		storePlacement(t, ctx, etcd.Endpoints(), prefix, constant, 2) // agg3
		eps, _ := json.Marshal(etcd.Endpoints())
		clusterSection = fmt.Sprintf("cluster: {endpoints: %s, prefix: %q, replica: soak, lease_ttl: 2s}\n", eps, prefix)
	}
	addrA, addrB, ofB := freePort(t), freePort(t), freePort(t)
	head := fmt.Sprintf("log_format: json\nmetrics: {listen: %q}\nsouthbound: {sim: {scenario: M2, speed: 10}}\npolicy: {kind: static}\nbaseline: {warmup: 1, samples: 2}\n", addrA) + clusterSection
	good := func(k int) string { // the constant flow and 5002 or 5003
		return head + fmt.Sprintf("flows:\n  list:\n    - {id: %q}\n    - {id: \"tcp 10.0.0.1:%d->10.0.0.8:5201\"}\n", constant, 5002+k%2)
	}
	bad := func(k int) string {
		if k%2 == 0 {
			return head + "flows: {list: [unclosed\n"
		}
		return head + "flows:\n  list:\n    - {id: \"tcp 10.0.0.1:5001->10.0.0.8\"}\n"
	}
	pathA := filepath.Join(dir, "a.yaml")
	replace := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path+".new", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	replace(pathA, good(0))
	pathB := filepath.Join(dir, "b.yaml")
	replace(pathB, fmt.Sprintf(`log_format: json
metrics: {listen: %q}
topology: {switches: [agg1, agg2, agg3, agg4], leaves: [leaf1, leaf2, leaf3], bucket_rate_bytes_per_sec: 1.25e6}
southbound: {openflow: {listen: %q}}
flows: {list: [{id: "tcp 10.0.0.1:40000->10.0.0.8:5201", switch: agg4}]}
policy: {kind: static}
`, addrB, ofB))

	serve := func(name, path string) *proc {
		cmd := exec.CommandContext(ctx, prlimit, fmt.Sprintf("--nofile=%d:%d", soakNoFile, soakNoFile), "--", bin, "serve", "-config", path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		return startCmd(t, name, cmd)
	}
	a, b := serve("service A (sim)", pathA), serve("service B (openflow)", pathB)
	metricsA, metricsB := "http://"+addrA+"/metrics", "http://"+addrB+"/metrics"
	waitMetrics(t, metricsA, a.exited, "A's flows deciding past their baselines", func(m map[string]float64) bool {
		return m["proflow_serve_configured_flows"] == 2 && decided(m) > 0
	})
	waitMetrics(t, metricsB, b.exited, "B's steps", func(m map[string]float64) bool {
		return m["proflow_serve_steps_total"] > 0 && m["process_max_fds"] == soakNoFile
	})

	// The flood: two waves, the second replacing the first halfway
	// through the SIGHUPs; held through the etcd outage.
	var held []net.Conn
	defer func() { closeAll(held) }()
	wave := func(n int) {
		t.Helper()
		closeAll(held)
		held = nil
		start := time.Now()
		for _, p := range []struct {
			addr    string
			partial string
		}{
			{addrA, "GET /metrics HTTP/1.1\r\nHost: soak\r\n"},
			{addrB, "GET /healthz HTTP/1.1\r\n"},
			{ofB, "\x04\x00\x00"}, // 3 of a HELLO header's 8 bytes
		} {
			cs, failed := stall(p.addr, soakConns, p.partial)
			held = append(held, cs...)
			if failed > soakConns/10 {
				t.Errorf("wave %d: %d of %d connections to %s failed", n, failed, soakConns, p.addr)
			}
		}
		stalled := time.Since(start)
		// Under the flood: each service answers, B greets a switch.
		start = time.Now()
		healthy(t, "http://"+addrA+"/healthz")
		healthy(t, "http://"+addrB+"/healthz")
		greets(t, ofB)
		t.Logf("wave %d: %d connections stalled in %v; then both /healthz answered and B's OpenFlow port greeted in %v",
			n, len(held), stalled.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
	wave(1)

	hups := time.Now()
	for i := range soakHUPs {
		if i == soakHUPs/2 {
			wave(2)
		}
		if i%2 == 0 {
			replace(pathA, good(i/2+1))
		} else {
			replace(pathA, bad(i/2))
		}
		if err := a.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		// Signals coalesce: wait for this one's reload before the next.
		waitMetrics(t, metricsA, a.exited, fmt.Sprintf("reload %d counted", i+1), func(m map[string]float64) bool {
			return m[`proflow_serve_reloads_total{result="ok"}`]+m[`proflow_serve_reloads_total{result="error"}`] == float64(i+1)
		})
	}
	t.Logf("%d SIGHUPs in %v", soakHUPs, time.Since(hups).Round(time.Millisecond))
	// The last good config is good(50): the constant flow and 5002 (agg1).
	// Both start on agg1 (the scenario's path), but for the placement
	// stored in etcd.
	want := map[string]float64{"agg1": 2, "agg2": 0, "agg3": 0, "agg4": 0}
	if etcd != nil {
		want["agg1"], want["agg3"] = 1, 1
	}
	steady := waitSteady(t, metricsA, a.exited, want)

	if etcd != nil {
		outage := time.Now()
		etcd.Kill(0)
		waitMetrics(t, metricsA, a.exited, "A's shards lost to the fence and its flows removed", func(m map[string]float64) bool {
			return m[`proflow_serve_shards_lost_total{cause="fence"}`] > 0 && m["proflow_serve_owned_shards"] == 0 && m["proflow_multi_flows"] == 0
		})
		time.Sleep(3 * time.Second) // past the lease TTL
		healthy(t, "http://"+addrA+"/healthz")
		down, err := scrape(metricsA)
		if err != nil {
			t.Fatal(err)
		}
		if err := etcd.Restart(0); err != nil {
			t.Fatal(err)
		}
		waitMetrics(t, metricsA, a.exited, "A's flows owned again, at their placements, deciding", func(m map[string]float64) bool {
			return m["proflow_serve_owned_shards"] > 0 && m["proflow_serve_configured_flows"] == 2 &&
				maps.Equal(onSwitch(m), want) && decided(m) > decided(down)
		})
		t.Logf("etcd outage and recovery in %v", time.Since(outage).Round(time.Millisecond))
	}

	closeAll(held)
	held = nil
	waitMetrics(t, metricsA, a.exited, "the exact reload counters and A's flows deciding", func(m map[string]float64) bool {
		return m[`proflow_serve_reloads_total{result="ok"}`] == soakHUPs/2 && m[`proflow_serve_reloads_total{result="error"}`] == soakHUPs/2 &&
			m["proflow_serve_configured_flows"] == 2 && decided(m) > decided(steady)
	})
	end, err := scrape(metricsA)
	if err != nil {
		t.Fatal(err)
	}
	if got, was := end[`proflow_multi_decisions_total{reason="baseline"}`], steady[`proflow_multi_decisions_total{reason="baseline"}`]; got != was {
		t.Errorf("A decided %v times in the baseline phase after the SIGHUPs (%v before, %v now): a flow learns its baseline again", got-was, was, got)
	}
	if got := onSwitch(end); !maps.Equal(got, want) {
		t.Errorf("A's flows on switches %v, want %v", got, want)
	}
	healthy(t, "http://"+addrA+"/healthz")
	healthy(t, "http://"+addrB+"/healthz")
	// The flood reached the bounds: the stalled connections were closed
	// for newer ones, not left to hold the descriptors.
	endB, err := scrape(metricsB)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		got  float64
	}{
		{"A's HTTP connections closed at the bound", end["proflow_serve_http_conns_evicted_total"]},
		{"B's HTTP connections closed at the bound", endB["proflow_serve_http_conns_evicted_total"]},
		{"B's failed OpenFlow handshakes", endB["proflow_openflow_handshake_failures_total"]},
	} {
		if c.got < soakConns {
			t.Errorf("%s: %v, want at least %d (one wave)", c.what, c.got, soakConns)
		}
	}
	t.Logf("closed at the bound: A %v, B %v HTTP connections; B %v failed handshakes; log records suppressed: A %v, B %v",
		end["proflow_serve_http_conns_evicted_total"], endB["proflow_serve_http_conns_evicted_total"], endB["proflow_openflow_handshake_failures_total"],
		suppressed(end), suppressed(endB))
	for _, p := range []*proc{a, b} {
		p.stop(t, syscall.SIGTERM, 15*time.Second)
		if p.err != nil {
			t.Errorf("%s exited with %v after SIGTERM, want status 0", p.name, p.err)
		}
		checkLogBound(t, p.name, p.out.String())
	}
}

// stall opens n connections to addr and leaves them stalled: even ones
// idle (nothing sent), odd ones half-open (partial sent, never finished).
// A connection the server closes stays open on this side. It returns the
// connections and how many dials failed.
func stall(addr string, n int, partial string) ([]net.Conn, int) {
	var cs []net.Conn
	failed := 0
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			failed++
			continue
		}
		if i%2 == 1 {
			_, _ = io.WriteString(c, partial) // a server that closed it already refuses it
		}
		cs = append(cs, c)
	}
	return cs, failed
}

func closeAll(cs []net.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

// healthy checks that url answers 200 within 10 s.
func healthy(t *testing.T, url string) {
	t.Helper()
	cl := http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := cl.Get(url)
	if err != nil {
		t.Errorf("%s: %v (after %v)", url, err, time.Since(start).Round(time.Millisecond))
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("%s: %s: %s", url, resp.Status, body)
	}
}

// greets checks that the OpenFlow server at addr sends a new connection
// its OpenFlow 1.3 HELLO within 10 s.
func greets(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Errorf("OpenFlow port %s: %v", addr, err)
		return
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var h [8]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		t.Errorf("OpenFlow port %s sent no HELLO: %v", addr, err)
		return
	}
	if h[0] != 0x04 || h[1] != 0 {
		t.Errorf("OpenFlow port %s sent % x, want an OpenFlow 1.3 HELLO (04 00 …)", addr, h)
	}
}

// waitSteady waits until A's flows are on the want switches and past
// their baselines (two scrapes 1 s apart with no decision of the baseline
// phase between them, and decisions of the others), and returns the
// later scrape.
func waitSteady(t *testing.T, url string, exited <-chan error, want map[string]float64) map[string]float64 {
	t.Helper()
	var prev map[string]float64
	var last map[string]float64
	for range 30 {
		waitMetrics(t, url, exited, "A's flows placed", func(m map[string]float64) bool {
			last = m
			return m["proflow_serve_configured_flows"] == 2 && maps.Equal(onSwitch(m), want)
		})
		if prev != nil && last[`proflow_multi_decisions_total{reason="baseline"}`] == prev[`proflow_multi_decisions_total{reason="baseline"}`] &&
			decided(last) > decided(prev) {
			return last
		}
		prev = last
		time.Sleep(time.Second)
	}
	t.Fatalf("A's flows not past their baselines within 30 s; last scrape: on switches %v, decided %v", onSwitch(last), decided(last))
	return nil
}

// suppressed sums the log records the service's rate limit dropped.
func suppressed(m map[string]float64) float64 {
	var n float64
	for k, v := range m {
		if strings.HasPrefix(k, "proflow_serve_log_records_suppressed_total{") {
			n += v
		}
	}
	return n
}

// onSwitch returns proflow_multi_flows_on_switch by switch.
func onSwitch(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if sw, ok := strings.CutPrefix(k, `proflow_multi_flows_on_switch{switch="`); ok {
			out[strings.TrimSuffix(sw, `"}`)] = v
		}
	}
	return out
}

// storePlacement stores flow's placement at switch sw in etcd under
// prefix, as a replica that owned it would have.
func storePlacement(t *testing.T, ctx context.Context, endpoints []string, prefix string, flow proflow.FlowID, sw int) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	v, _ := json.Marshal(cluster.FlowState{Flow: flow, Switch: sw, Updated: time.Now()})
	if _, err := cli.Put(ctx, fmt.Sprintf("%sstate/%04d/%s", prefix, cluster.ShardOf(flow, 64), flow), string(v)); err != nil {
		t.Fatal(err)
	}
}

// checkLogBound checks a service's JSON log against the soak's bound: no
// message above debug more than soakLogBurst times in any 10 s, and the
// whole log under soakLogLines lines and soakLogBytes bytes.
func checkLogBound(t *testing.T, name, log string) {
	t.Helper()
	lines := strings.Count(log, "\n")
	t.Logf("%s's log: %d lines, %d bytes", name, lines, len(log))
	if lines > soakLogLines || len(log) > soakLogBytes {
		t.Errorf("%s's log: %d lines, %d bytes, want at most %d lines and %d bytes", name, lines, len(log), soakLogLines, soakLogBytes)
	}
	times := map[string][]time.Time{}
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Time  time.Time
			Level string
			Msg   string
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Level == "DEBUG" {
			continue // prlimit's or Go's own lines are not the service's log
		}
		k := r.Level + " " + r.Msg
		times[k] = append(times[k], r.Time)
	}
	for k, ts := range times {
		for i := soakLogBurst; i < len(ts); i++ {
			if ts[i].Sub(ts[i-soakLogBurst]) < 10*time.Second {
				t.Errorf("%s logged %q %d times within 10 s (%v to %v), want at most %d", name, k, soakLogBurst+1, ts[i-soakLogBurst], ts[i], soakLogBurst)
				break
			}
		}
	}
}
