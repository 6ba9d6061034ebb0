package serve

import (
	"context"
	"os"
	"path/filepath"
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
	path := filepath.Join(t.TempDir(), "c.yaml")
	src := "southbound:\n  sim: {scenario: S1, speed: 50}\nmetrics: {listen: \"127.0.0.1:0\"}\npolicy: {kind: crowd}\nshadow: true\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	s, err := New(ctx, c, Options{LogOutput: &log})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

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
