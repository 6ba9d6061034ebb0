package serve

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// With southbound.sim.via p4runtime (examples/serve/sim-p4runtime.yaml)
// the service drives the simulated fabric over real gRPC through a local
// P4Runtime target: the flows' entries are installed, they learn their
// baselines from the target's counters, the agent decides, and the service
// stops cleanly.
func TestServiceSimViaP4Runtime(t *testing.T) {
	defer goleak.VerifyNone(t)
	model, _ := filepath.Abs("../../models/default.safetensors")
	c := exampleConfig(t, "sim-p4runtime.yaml", "127.0.0.1:9464", "127.0.0.1:0", "../../models/default.safetensors", model, "speed: 4", "speed: 50")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := New(ctx, c, Options{LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if s.sb.via != "p4runtime" {
		t.Fatalf("southbound via %q, want p4runtime", s.sb.via)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	base := "http://" + s.MetricsAddr()
	waitFor(t, func() bool {
		body := get(t, base+"/metrics")
		return strings.Contains(body, "proflow_multi_flows 6") &&
			!strings.Contains(body, `proflow_multi_decisions_total{reason="baseline"} 0`) &&
			!strings.Contains(body, `proflow_multi_decisions_total{reason="stay"} 0`)
	})
	body := get(t, base+"/metrics")
	if !strings.Contains(body, "proflow_p4runtime_connected_devices 4") || strings.Contains(body, "proflow_p4runtime_write_updates_total 0") {
		t.Errorf("the p4runtime client has not programmed the simulated leaves over gRPC:\n%s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}
