package openflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// The conformance suites of package southboundtest, against fake switches.
// The OVS integration tests (package ovsfabric) run them against Open
// vSwitch.

func TestEnforcerConformance(t *testing.T) { southboundtest.TestEnforcer(t, enforcerHarness) }

func TestReleaserConformance(t *testing.T) { southboundtest.TestReleaser(t, enforcerHarness) }

// enforcerHarness is a ready test bed's server as the suites' enforcer; the
// many-flow cases move 64 flows between h1 and h8, one PlaceBatch a step.
func enforcerHarness(t *testing.T) southboundtest.EnforcerHarness {
	tb := newTestbed(t, nil)
	tb.ready()
	where := func(_ context.Context, f proflow.FlowID) (int, error) {
		return tb.cfg.Topology.SwitchIndex(tb.bothWays(f))
	}
	return southboundtest.EnforcerHarness{
		Enforcer: tb.srv, Topology: tb.cfg.Topology, Flow: fp, Timeout: 5 * time.Second,
		Where:     func(ctx context.Context) (int, error) { return where(ctx, fp) },
		WhereFlow: where,
	}
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

func TestFlowValidatorConformance(t *testing.T) {
	cfg := testConfig()
	cfg.Flow = proflow.FlowID{} // an enforcing-only server takes any flow to Place
	srv, err := openflow.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	flow := func(src, dst string) proflow.FlowID {
		f := fp
		f.Src, f.Dst = netipMust(src), netipMust(dst)
		return f
	}
	southboundtest.TestFlowValidator(t, southboundtest.FlowValidatorHarness{
		Enforcer: srv, Topology: cfg.Topology,
		Valid: []proflow.FlowID{fp, fp.Reverse(), flow("10.0.0.3", "10.0.0.2")},
		Outside: []proflow.FlowID{
			flow("10.0.4.1", "10.0.1.1"), // the README's old example: no such hosts
			flow("10.0.0.1", "10.0.9.9"),
			flow("10.0.0.1", "10.0.0.2"), // h1 and h2 hang off leaf1
		},
	})
}
