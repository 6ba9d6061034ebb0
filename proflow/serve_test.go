//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/syncbuf"
)

// Acceptance 1 of issue 14 on the simulated fabric: the proflow binary
// serves examples/serve/sim.yaml, decides for every configured flow (its
// metrics say so), applies a changed flow set on SIGHUP and exits 0 on
// SIGTERM.
func TestServeBinarySimExample(t *testing.T) {
	dir := t.TempDir()
	bin := buildProflow(t, dir)

	example, err := os.ReadFile("../examples/serve/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	model, err := filepath.Abs("../models/default.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	cfg := strings.NewReplacer("127.0.0.1:9464", addr, "../../models/default.safetensors", model).Replace(string(example))
	if cfg == string(example) {
		t.Fatal("the example no longer has the metrics address and model path this test rewrites")
	}
	path := filepath.Join(dir, "sim.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cfg)

	if out, err := exec.Command(bin, "serve", "-config", path, "-check").CombinedOutput(); err != nil || !strings.Contains(string(out), "joint: greedy") {
		t.Fatalf("serve -check: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "-config", path)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if t.Failed() {
			t.Logf("proflow serve's log:\n%s", stderr.String())
		}
	}()

	metrics := "http://" + addr + "/metrics"
	waitMetrics(t, metrics, exited, "6 flows deciding", func(m map[string]float64) bool {
		return m["proflow_multi_flows"] == 6 && decided(m) > 0
	})

	// Two flows fewer; SIGHUP.
	var kept []string
	for _, l := range strings.SplitAfter(cfg, "\n") {
		if !strings.Contains(l, ":5005->") && !strings.Contains(l, ":5006->") {
			kept = append(kept, l)
		}
	}
	write(strings.Join(kept, ""))
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitMetrics(t, metrics, exited, "4 flows after SIGHUP", func(m map[string]float64) bool {
		return m["proflow_multi_flows"] == 4 && m[`proflow_serve_reloads_total{result="ok"}`] == 1
	})

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("proflow serve exited with %v after SIGTERM, want status 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("proflow serve still running 10 s after SIGTERM")
	}
	if !strings.Contains(stderr.String(), "placements left as they are") {
		t.Errorf("log lacks the clean stop")
	}
}

// buildProflow builds this command into dir and returns the binary's path.
func buildProflow(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "proflow")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// decided sums the per-flow decisions past the baseline phase.
func decided(m map[string]float64) float64 {
	var n float64
	for k, v := range m {
		if strings.HasPrefix(k, "proflow_multi_decisions_total{") && !strings.Contains(k, `"baseline"`) {
			n += v
		}
	}
	return n
}

func waitMetrics(t *testing.T, url string, exited <-chan error, what string, ok func(map[string]float64) bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	var last map[string]float64
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("proflow serve exited (%v) before %s", err, what)
		default:
		}
		if m, err := scrape(url); err == nil {
			last = m
			if ok(m) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s within 45 s; last scrape: flows %v, decided %v (%s)", what, last["proflow_multi_flows"], decided(last), byReason(last))
}

// byReason lists the non-zero proflow_multi_decisions_total series of a
// scrape, sorted, for a failure message.
func byReason(m map[string]float64) string {
	var parts []string
	for k, v := range m {
		if r, ok := strings.CutPrefix(k, "proflow_multi_decisions_total{reason="); ok && v > 0 {
			parts = append(parts, fmt.Sprintf("%s %v", strings.Trim(r, `"}`), v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// scrape reads a Prometheus text page into series → value. One scrape
// takes at most 5 s, so that a port that answers nothing (taken by another
// process between freePort and the service's bind) fails waitMetrics at
// its deadline instead of blocking the test.
func scrape(url string) (map[string]float64, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s: %s", resp.Status, body)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	return m, sc.Err()
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
