package openflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// The conformance suites of package southboundtest, against fake switches.
// The OVS integration tests (examples/ovsfabric) run them against Open
// vSwitch.

func TestEnforcerConformance(t *testing.T) {
	southboundtest.TestEnforcer(t, func(t *testing.T) southboundtest.EnforcerHarness {
		tb := newTestbed(t, nil)
		tb.ready()
		return southboundtest.EnforcerHarness{
			Enforcer: tb.srv, Topology: tb.cfg.Topology, Flow: fp, Timeout: 5 * time.Second,
			Where: func(context.Context) (int, error) {
				return tb.cfg.Topology.SwitchIndex(tb.bothWays(fp))
			},
		}
	})
}

func TestTelemetryConformance(t *testing.T) {
	southboundtest.TestTelemetry(t, func(t *testing.T) southboundtest.TelemetryHarness {
		tb := newTestbed(t, nil)
		tb.ready()
		// Rates need two samples: take the first one here.
		_ = tb.srv.Collect(ctxT(t, 5*time.Second), new(proflow.Observation))
		advance := func() {
			tb.path(fp, 1500)
			tb.clock.Advance(500 * time.Millisecond)
		}
		advance()
		return southboundtest.TelemetryHarness{Telemetry: tb.srv, Topology: tb.cfg.Topology, Advance: advance, Timeout: 5 * time.Second}
	})
}
