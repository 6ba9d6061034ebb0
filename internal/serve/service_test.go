package serve

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/syncbuf"
)

const flowsM2 = `
flows:
  list:
    - {id: "tcp 10.0.0.1:5001->10.0.0.8:5201", weight: 2}
    - {id: "tcp 10.0.0.1:5002->10.0.0.8:5201"}
    - {id: "tcp 10.0.0.1:5003->10.0.0.8:5201"}
`

func simConfig(t *testing.T, flows string) *Config {
	t.Helper()
	return loadYAML(t, t.TempDir(), "southbound:\n  sim: {scenario: M2, speed: 50}\nmetrics: {listen: \"127.0.0.1:0\"}\npolicy: {kind: crowd}\njoint: greedy\nlog_level: debug\n"+flows)
}

// loadYAML writes src as dir/c.yaml and loads it.
func loadYAML(t *testing.T, dir, src string) *Config {
	t.Helper()
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startService builds a service from c, logging to log, and runs it until
// ctx ends; Run's result arrives on the returned channel.
func startService(t *testing.T, ctx context.Context, c *Config, log io.Writer) (*Service, <-chan error) {
	t.Helper()
	s, err := New(ctx, c, Options{LogOutput: log})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return s, done
}

func ids(fs []proflow.ProtectedFlow) []string {
	var s []string
	for _, f := range fs {
		s = append(s, f.ID.String())
	}
	return s
}

// The service steps the simulated fabric, serves its metrics and health,
// applies a changed flow set, refuses a flow the fabric does not carry
// while applying the others, and stops cleanly without leaking goroutines.
func TestServiceRunReloadStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log syncbuf.Buffer
	s, err := New(ctx, simConfig(t, flowsM2), Options{LogOutput: &log})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	base := "http://" + s.MetricsAddr()
	waitFor(t, func() bool {
		body := get(t, base+"/metrics")
		return strings.Contains(body, "proflow_multi_flows 3") && !strings.Contains(body, "proflow_multi_decisions_total{reason=\"baseline\"} 0")
	})
	if h := get(t, base+"/healthz"); !strings.HasPrefix(h, "ok:") {
		t.Errorf("/healthz = %q, want ok", h)
	}

	// Drop flow 5001, change 5002's weight, add 5004.
	next := simConfig(t, `
flows:
  list:
    - {id: "tcp 10.0.0.1:5002->10.0.0.8:5201", weight: 3}
    - {id: "tcp 10.0.0.1:5003->10.0.0.8:5201"}
    - {id: "tcp 10.0.0.1:5004->10.0.0.8:5201"}
`)
	next.Southbound.Sim.Speed = 10 // needs a restart: logged, ignored
	if err := s.Reload(ctx, next); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	want := "tcp 10.0.0.1:5003->10.0.0.8:5201,tcp 10.0.0.1:5002->10.0.0.8:5201,tcp 10.0.0.1:5004->10.0.0.8:5201"
	if got := strings.Join(ids(s.Flows()), ","); got != want {
		t.Errorf("flows after reload = %s, want %s", got, want)
	}
	if w := s.Flows()[1].Weight; w != 3 {
		t.Errorf("5002's weight = %v, want 3", w)
	}
	waitFor(t, func() bool {
		return strings.Contains(get(t, base+"/metrics"), "proflow_serve_reloads_total{result=\"ok\"} 1")
	})
	if !strings.Contains(log.String(), "fields=southbound") {
		t.Errorf("log does not report the setting that needs a restart:\n%s", log.String())
	}

	// A flow the fabric does not carry is refused; the rest applies.
	bad := simConfig(t, `
flows:
  list:
    - {id: "tcp 10.0.0.1:5003->10.0.0.8:5201"}
    - {id: "tcp 10.0.0.2:7->10.0.0.8:5201"}
`)
	err = s.Reload(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "tcp 10.0.0.2:7->10.0.0.8:5201") {
		t.Errorf("Reload with a foreign flow = %v, want it refused by name", err)
	}
	if got := strings.Join(ids(s.Flows()), ","); got != "tcp 10.0.0.1:5003->10.0.0.8:5201" {
		t.Errorf("flows after a partial reload = %s, want only 5003", got)
	}
	waitFor(t, func() bool { return strings.Contains(get(t, base+"/metrics"), "proflow_multi_flows 1") })

	cancel()
	waitStopped(t, done)
	if !strings.Contains(log.String(), "placements left as they are") {
		t.Errorf("log lacks the stop record:\n%s", log.String())
	}
}

// waitStopped waits for Run's result on done after its context was
// cancelled: nil, within 10 s.
func waitStopped(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil after a clean stop", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10 s of the cancel")
	}
}

// Building refuses what only building can check, with the field named.
func TestNewRefuses(t *testing.T) {
	for _, tt := range []struct{ name, flows, want string }{
		{"flow not on the fabric", "flows: {list: [{id: \"tcp 10.0.0.3:1->10.0.0.8:2\"}]}\n", "tcp 10.0.0.3:1->10.0.0.8:2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), simConfig(t, tt.flows), Options{LogOutput: io.Discard})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error naming %q", err, tt.want)
			}
		})
	}
	c := simConfig(t, "")
	c.Southbound.Sim.Scenario = "S99"
	if _, err := New(context.Background(), c, Options{LogOutput: io.Discard}); err == nil || !strings.Contains(err.Error(), "southbound.sim.scenario: ") {
		t.Errorf("New with an unknown scenario = %v, want southbound.sim.scenario named", err)
	}
	c = simConfig(t, "")
	c.Interval = time.Second
	if _, err := New(context.Background(), c, Options{LogOutput: io.Discard}); err == nil || !strings.Contains(err.Error(), "interval: 1s, want the sim profile's sampling interval") {
		t.Errorf("New with another interval = %v, want interval named", err)
	}
}

// Without a flow list the sim southbound protects every flow of its scenario.
func TestSimDefaultsToScenarioFlows(t *testing.T) {
	s, err := New(context.Background(), simConfig(t, ""), Options{LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer s.closeAll()
	if n := len(s.Flows()); n != 8 {
		t.Errorf("%d flows, want M2's 8", n)
	}
}

type fakeTel struct{ err error }

func (f fakeTel) Collect(_ context.Context, obs *proflow.Observation) error {
	obs.Flow = proflow.FlowSample{Throughput: 100, CongestionRate: 7}
	return f.err
}

// A southbound that measures one flow gives that flow its sample and holds
// the others on a NaN throughput.
func TestFlowSamples(t *testing.T) {
	a, _ := proflow.ParseFlowID("tcp 10.0.0.1:1->10.0.0.8:2")
	b, _ := proflow.ParseFlowID("tcp 10.0.0.1:3->10.0.0.8:2")
	obs := proflow.Observation{FlowIDs: []proflow.FlowID{b, a}}
	if err := (flowSamples{tel: fakeTel{}, measured: a}).Collect(context.Background(), &obs); err != nil {
		t.Fatal(err)
	}
	if len(obs.Flows) != 2 || !math.IsNaN(obs.Flows[0].Throughput) || obs.Flows[0].CongestionRate != 7 || obs.Flows[1] != (proflow.FlowSample{Throughput: 100, CongestionRate: 7}) {
		t.Errorf("flows = %+v, want [NaN/7, 100/7]", obs.Flows)
	}
	want := errors.New("down")
	if err := (flowSamples{tel: fakeTel{err: want}, measured: a}).Collect(context.Background(), &obs); !errors.Is(err, want) {
		t.Errorf("Collect = %v, want the telemetry's error", err)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The OVS example builds (its model fits its topology and, at the example's
// 500ms, its control interval) and, with no switch connected and no tc
// agent, keeps running: every step holds on the telemetry error, nothing is
// placed, and it still stops cleanly.
func TestOVSExampleKeepsRunningWithoutTelemetry(t *testing.T) {
	defer goleak.VerifyNone(t)
	model, _ := filepath.Abs("../../models/ovs.safetensors")
	c := exampleConfig(t, "ovs.yaml", "127.0.0.1:9464", "127.0.0.1:0", "127.0.0.1:6653", "127.0.0.1:0",
		"http://127.0.0.1:9101", "http://127.0.0.1:1", "../../models/ovs.safetensors", model)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, err := New(ctx, c, Options{LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	base := "http://" + svc.MetricsAddr()
	waitFor(t, func() bool {
		return strings.Contains(get(t, base+"/metrics"), `proflow_multi_telemetry_errors_total 5`)
	})
	if h := get(t, base+"/healthz"); !strings.HasPrefix(h, "ok:") {
		t.Errorf("/healthz = %q, want ok while steps hold", h)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

// exampleConfig loads examples/serve/name with the replacements (old, new
// pairs) made in its text.
func exampleConfig(t *testing.T, name string, oldnew ...string) *Config {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("../../examples/serve", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.NewReplacer(oldnew...).Replace(string(src))), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue 24: the OpenFlow listener defaulted to every interface; it
// defaults to loopback, and a listener beyond loopback without TLS is
// logged. When New fails after the listener was opened, it is closed.
func TestOpenFlowListenerLoopbackAndClosedOnFailure(t *testing.T) {
	c, err := Parse([]byte("topology: {switches: [agg1, agg2, agg3, agg4], leaves: [leaf1, leaf2, leaf3], bucket_rate_bytes_per_sec: 1.25e6}\nsouthbound: {openflow: {}}\nflows: {list: [{id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\", switch: agg1}]}\npolicy: {kind: static}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.WithDefaults().Southbound.OpenFlow.Listen; got != "127.0.0.1:6653" {
		t.Errorf("default openflow.listen = %q, want 127.0.0.1:6653", got)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// A model file that does not load fails New after the listener is
	// open.
	c.Dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(c.Dir, "junk.safetensors"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Southbound.OpenFlow.Listen = addr
	c.Metrics.Listen = "off"
	c.Policy = PolicyConfig{Kind: "agent", Model: "junk.safetensors"}
	if _, err := New(context.Background(), c, Options{LogOutput: io.Discard}); err == nil || !strings.Contains(err.Error(), "policy.model") {
		t.Fatalf("New = %v, want the model refused", err)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the OpenFlow port %s is still held after New failed: %v", addr, err)
	}
	ln.Close()
}
