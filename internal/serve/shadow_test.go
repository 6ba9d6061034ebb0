package serve

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/proflow-sdn/proflow/internal/syncbuf"
)

// In shadow mode the service decides on the simulated fabric as usual but
// moves no flow: S1's crowd makes the crowd rule want a move, which is
// logged and counted as "shadow", and nothing is rerouted.
func TestServiceShadow(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := loadYAML(t, t.TempDir(), "southbound:\n  sim: {scenario: S1, speed: 50}\nmetrics: {listen: \"127.0.0.1:0\"}\npolicy: {kind: crowd}\nshadow: true\n")
	var log syncbuf.Buffer
	s, done := startService(t, ctx, c, &log)

	base := "http://" + s.MetricsAddr()
	var body string
	waitFor(t, func() bool {
		body = get(t, base+"/metrics")
		return !strings.Contains(body, `proflow_multi_decisions_total{reason="shadow"} 0`)
	})
	for _, want := range []string{`proflow_multi_decisions_total{reason="rerouted"} 0`, "proflow_multi_reroutes_total 0",
		`proflow_multi_flows_on_switch{switch="agg1"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	cancel()
	waitStopped(t, done)
	if !strings.Contains(log.String(), "reason=shadow") || !strings.Contains(log.String(), "level=INFO") {
		t.Errorf("log lacks the shadow decision at info:\n%s", log.String())
	}
}

// A cordoned switch is never a destination: in S1 the crowd rule leaves
// agg1 for the emptiest switch, agg2 by index, and with agg2 cordoned it
// goes to agg3. A reload lifts the cordon; one naming a switch outside the
// topology is refused with the entry named.
func TestServiceCordon(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	load := func(cordon string) *Config {
		t.Helper()
		return loadYAML(t, dir, "southbound:\n  sim: {scenario: S1, speed: 50}\nmetrics: {listen: \"127.0.0.1:0\"}\npolicy: {kind: crowd}\n"+cordon)
	}
	var log syncbuf.Buffer
	s, done := startService(t, ctx, load("cordon: [agg2]\n"), &log)

	base := "http://" + s.MetricsAddr()
	var body string
	waitFor(t, func() bool {
		body = get(t, base+"/metrics")
		return strings.Contains(body, "proflow_multi_reroutes_total 1")
	})
	for _, want := range []string{`proflow_multi_flows_on_switch{switch="agg3"} 1`, `proflow_multi_flows_on_switch{switch="agg2"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}

	err := s.Reload(ctx, load("cordon: [agg9]\n"))
	if err == nil || !strings.Contains(err.Error(), `cordon[0]: "agg9" is not a switch of the topology`) {
		t.Errorf("Reload with cordon agg9 = %v, want it refused naming cordon[0]", err)
	}
	if err := s.Reload(ctx, load("")); err != nil {
		t.Fatalf("Reload lifting the cordon: %v", err)
	}
	cancel()
	waitStopped(t, done)
	if !strings.Contains(log.String(), "reload: cordoned switches") {
		t.Errorf("log lacks the cordon reload:\n%s", log.String())
	}
}
