// Package southboundtest provides test helpers for proflow southbounds and
// controllers, in the spirit of net/http/httptest: conformance suites that
// hold every implementation to one contract, an in-memory fabric and a
// manual clock.
//
// # Conformance suites
//
// TestEnforcer and TestTelemetry run the properties every proflow.Enforcer
// and proflow.Telemetry must have as subtests. A southbound's own tests call
// them with a function that builds a fresh harness per subtest:
//
//	func TestEnforcerConformance(t *testing.T) {
//		southboundtest.TestEnforcer(t, func(t *testing.T) southboundtest.EnforcerHarness {
//			sb := newSouthbound(t) // skip with t.Skipf where the system is unavailable
//			return southboundtest.EnforcerHarness{
//				Enforcer: sb,
//				Topology: sb.Topology(),
//				Flow:     flow,
//				Where:    func(ctx context.Context) (int, error) { return dumpFlows(ctx, flow) },
//			}
//		})
//	}
//
// Where must read the data plane independently of the enforcer under test
// (for Open vSwitch, dump the flow tables), so a southbound that reports
// success without installing anything fails. A telemetry harness's newHarness
// should return a source that is ready to sample (with rate counters primed,
// if it needs two readings for a rate); its Advance hook lets time move.
//
// With WhereFlow set (Where for any flow), TestEnforcer also runs the
// many-flow cases: ManyFlows places many flows in one step and moves half of
// them in the next (one PlaceBatch per step for a proflow.BatchEnforcer,
// one Place per flow otherwise), and BatchErrors checks a BatchEnforcer's
// per-placement errors. Harness.Flows names the flows; by default the
// suite derives ManyFlows of them from Flow by source port.
//
// TestFlowValidator checks an Enforcer that is also a proflow.FlowValidator:
// it must accept flows it can place and refuse, with proflow.ErrNotInFabric,
// flows whose hosts are outside its fabric or on one leaf, and
// proflow.NewController must do the same with it.
//
// # In-memory fabric
//
// Fabric implements proflow.Telemetry, proflow.Enforcer and proflow.Locator
// in memory. Tests set each switch, leaf and flow value directly, including
// NaN, infinite or negative ones, and inject the failures of a real fabric:
// failing or stale telemetry, late or malformed samples, a failing or hanging
// enforcer. It passes both conformance suites.
//
// # Manual clock
//
// ManualClock is a proflow.Clock whose time moves only by Advance. Tests
// drive a Controller's Run loop tick by tick: wait with BlockUntil for the
// loop's ticker, then Advance one interval per step, without sleeping.
//
// # Concurrency
//
// Fabric and ManualClock are safe for concurrent use. The suites call the
// implementation under test from one goroutine at a time.
package southboundtest
