//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/syncbuf"
)

// Acceptance 1 of issue 14 on the real Open vSwitch fabric (as root): the
// proflow binary builds the fabric (proflow fabric up), serves the tc
// counters of its uplinks (proflow tcstat) and runs proflow serve with
// examples/serve/ovs.yaml — rewritten only for this run's ports, names and
// paths — while the protected flow h1→h8 carries real TCP. The service must
// decide for the flow past its baseline phase (its metrics say so), take a
// second flow on SIGHUP and exit 0 on SIGTERM. About 40 s.
func TestServeBinaryOVSExample(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: not root (the OVS fabric needs network namespaces, veth and tc)")
	}
	for _, tool := range []string{"ovs-vswitchd", "ovsdb-server", "ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s missing as root: %v (make ovs-deps installs it)", tool, err)
		}
	}
	dir := t.TempDir()
	bin := buildProflow(t, dir)
	// go test runs packages side by side, and package ovsfabric's tests
	// hold the machine-wide fabric lock for minutes at a time: fabric up
	// waits for it (ovsfabric.Up), so its first line may be minutes away.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// Names of this run: 4 characters of prefix leave interface names
	// (prefix + "a1l1") within Linux's 15.
	prefix := fmt.Sprintf("s%02d-", os.Getpid()%100)
	ofAddr, tcAddr, metricsAddr := freePort(t), freePort(t), freePort(t)
	runDir := filepath.Join(dir, "ovs")

	up := start(t, ctx, "fabric up", bin, "fabric", "up", "-prefix", prefix, "-rundir", runDir, "-listen", ofAddr)
	waitLine(t, up, "fabric up", 5*time.Minute)
	defer up.stop(t, syscall.SIGINT, 60*time.Second) // tears the fabric down

	var uplinks []string
	for a := 1; a <= 4; a++ {
		for l := 1; l <= 4; l++ {
			uplinks = append(uplinks, fmt.Sprintf("%sa%dl%d", prefix, a, l))
		}
	}
	tc := start(t, ctx, "tcstat", bin, "tcstat", "-interfaces", strings.Join(uplinks, ","), "-listen", tcAddr)
	defer tc.stop(t, syscall.SIGTERM, 10*time.Second)

	// The protected flow: a sink on h8, a sender on h1 from port 40000.
	sink := startTraffic(t, ctx, "sink", prefix+"h8", bin, "-listen", ":5201", "-report", "1s")
	defer sink.stop(t, syscall.SIGTERM, 10*time.Second)
	send := startTraffic(t, ctx, "send", prefix+"h1", bin, "-connect", "10.0.0.8:5201", "-bind-port", "40000")
	defer send.stop(t, syscall.SIGTERM, 10*time.Second)

	example, err := os.ReadFile("../examples/serve/ovs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	model, err := filepath.Abs("../models/ovs.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.NewReplacer("127.0.0.1:9464", metricsAddr, "127.0.0.1:6653", ofAddr,
		"http://127.0.0.1:9101", "http://"+tcAddr, "pf-", prefix, "../../models/ovs.safetensors", model).Replace(string(example))
	for _, s := range []string{metricsAddr, ofAddr, tcAddr, prefix + "a4l4", model} {
		if !strings.Contains(cfg, s) {
			t.Fatalf("the example no longer has what this test rewrites (%s missing after the rewrite)", s)
		}
	}
	path := filepath.Join(dir, "ovs.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	serve := start(t, ctx, "serve", bin, "serve", "-config", path)
	metrics := "http://" + metricsAddr + "/metrics"
	// Decided on from real telemetry: steps on which the policy scored the
	// switches and the gate ruled (stay, reroute, or a hold on margin,
	// votes, cooldown or the joint step), not steps held for telemetry,
	// stale or invalid observations, or the baseline phase. Which of them
	// the agent takes on an idle fabric is its own affair.
	scored := func(m map[string]float64) float64 {
		var n float64
		for _, r := range []string{"stay", "rerouted", "margin", "votes", "cooldown", "joint"} {
			n += m[`proflow_multi_decisions_total{reason="`+r+`"}`]
		}
		return n
	}
	waitMetrics(t, metrics, serve.exited, "the protected flow decided on past its baseline", func(m map[string]float64) bool {
		return m["proflow_multi_flows"] == 1 && scored(m) >= 4
	})

	// A second protected flow, h2 → h7; SIGHUP.
	const second = `    - {id: "tcp 10.0.0.2:40001->10.0.0.7:5201", switch: agg1}` + "\n"
	i := strings.Index(cfg, "policy:")
	if err := os.WriteFile(path, []byte(cfg[:i-1]+"\n"+second+cfg[i:]), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := serve.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitMetrics(t, metrics, serve.exited, "2 flows after SIGHUP", func(m map[string]float64) bool {
		return m["proflow_multi_flows"] == 2 && m[`proflow_serve_reloads_total{result="ok"}`] == 1
	})
	serve.stop(t, syscall.SIGTERM, 10*time.Second)
	if err := serve.err; err != nil {
		t.Fatalf("proflow serve exited with %v after SIGTERM, want status 0\n%s", err, serve.out.String())
	}
}

// proc is a child process of the test with its output kept.
type proc struct {
	name   string
	cmd    *exec.Cmd
	out    syncbuf.Buffer
	exited chan error
	err    error
	done   bool
}

func start(t *testing.T, ctx context.Context, name, bin string, args ...string) *proc {
	t.Helper()
	return startCmd(t, name, exec.CommandContext(ctx, bin, args...))
}

// startTraffic runs the binary as the fabric's traffic generator (mode
// sink or send) in a host's network namespace.
func startTraffic(t *testing.T, ctx context.Context, mode, netns, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", netns, bin}, args...)...)
	cmd.Env = append(os.Environ(), "PROFLOW_TRAFFIC="+mode)
	return startCmd(t, mode, cmd)
}

func startCmd(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{name: name, cmd: cmd, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if !p.done {
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("%s's output:\n%s", name, p.out.String())
		}
	})
	return p
}

// stop signals the process and waits for it, killing it after d.
func (p *proc) stop(t *testing.T, sig syscall.Signal, d time.Duration) {
	t.Helper()
	if p.done {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case p.err = <-p.exited:
	case <-time.After(d):
		_ = p.cmd.Process.Kill()
		p.err = <-p.exited
		t.Errorf("%s still running %v after %v; killed", p.name, d, sig)
	}
	p.done = true
}

// waitLine waits until the process has printed a line containing s.
func waitLine(t *testing.T, p *proc, s string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(p.out.String()))
		for sc.Scan() {
			if strings.Contains(sc.Text(), s) {
				return
			}
		}
		select {
		case err := <-p.exited:
			p.done = true
			t.Fatalf("%s exited (%v) before printing %q:\n%s", p.name, err, s, p.out.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("%s printed no %q within %v:\n%s", p.name, s, d, p.out.String())
}
