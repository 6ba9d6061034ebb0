package proflow_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// validObservation returns a healthy sample of the paper's topology.
func validObservation() *proflow.Observation {
	return &proflow.Observation{
		Time:     epoch,
		Switches: []proflow.SwitchSample{healthySwitch, healthySwitch, healthySwitch, healthySwitch},
		Leaves:   []proflow.LeafSample{healthyLeaf, healthyLeaf, healthyLeaf},
		Flow:     healthyFlow,
	}
}

func TestObservationValidate(t *testing.T) {
	topo := proflow.PaperTopology()
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name    string
		mod     func(*proflow.Observation)
		field   string // "" for a valid observation
		problem string
		is      error
	}{
		{name: "valid", mod: func(*proflow.Observation) {}},
		{name: "zeros are valid", mod: func(o *proflow.Observation) {
			o.Switches[0], o.Leaves[0], o.Flow = proflow.SwitchSample{}, proflow.LeafSample{}, proflow.FlowSample{}
		}},
		{name: "no time", mod: func(o *proflow.Observation) { o.Time = time.Time{} },
			field: "time", problem: "unset, want the sampling time"},
		{name: "missing switch", mod: func(o *proflow.Observation) { o.Switches = o.Switches[:3] },
			field: "switches", problem: "3 samples, want one per aggregation switch (4)", is: proflow.ErrMissingSwitch},
		{name: "extra switch", mod: func(o *proflow.Observation) { o.Switches = append(o.Switches, healthySwitch) },
			field: "switches", problem: "5 samples, want one per aggregation switch (4)", is: proflow.ErrMissingSwitch},
		{name: "missing leaf", mod: func(o *proflow.Observation) { o.Leaves = nil },
			field: "leaves", problem: "0 samples, want one per congestion leaf (3)"},
		{name: "NaN tx rate", mod: func(o *proflow.Observation) { o.Switches[0].TxRate = nan },
			field: "switches[agg1].tx_rate", problem: "NaN, want a finite non-negative number"},
		{name: "+Inf overflow", mod: func(o *proflow.Observation) { o.Switches[1].OverflowRate = inf },
			field: "switches[agg2].overflow_rate", problem: "+Inf, want a finite non-negative number"},
		{name: "negative flow count", mod: func(o *proflow.Observation) { o.Switches[2].FlowCount = -1 },
			field: "switches[agg3].flow_count", problem: "-1 is negative, want a finite non-negative number"},
		{name: "-Inf elephant rate", mod: func(o *proflow.Observation) { o.Switches[3].ElephantRate = math.Inf(-1) },
			field: "switches[agg4].elephant_rate", problem: "-Inf, want a finite non-negative number"},
		{name: "NaN ingress", mod: func(o *proflow.Observation) { o.Leaves[1].IngressRate = nan },
			field: "leaves[leaf2].ingress_rate", problem: "NaN"},
		{name: "negative transmit", mod: func(o *proflow.Observation) { o.Leaves[2].TransmitRate = -0.5 },
			field: "leaves[leaf3].transmit_rate", problem: "-0.5 is negative"},
		{name: "+Inf throughput", mod: func(o *proflow.Observation) { o.Flow.Throughput = inf },
			field: "flow.throughput", problem: "+Inf"},
		{name: "NaN congestion rate", mod: func(o *proflow.Observation) { o.Flow.CongestionRate = nan },
			field: "flow.congestion_rate", problem: "NaN"},
		{name: "per-flow samples", mod: func(o *proflow.Observation) {
			o.FlowIDs, o.Flows = []proflow.FlowID{testFlow, testFlow.Reverse()}, []proflow.FlowSample{healthyFlow, {}}
		}},
		{name: "per-flow samples missing", mod: func(o *proflow.Observation) {
			o.FlowIDs, o.Flows = []proflow.FlowID{testFlow, testFlow.Reverse()}, []proflow.FlowSample{healthyFlow}
		}, field: "flows", problem: "1 samples, want one per protected flow in flow_ids (2)"},
		{name: "per-flow NaN throughput", mod: func(o *proflow.Observation) {
			o.FlowIDs, o.Flows = []proflow.FlowID{testFlow}, []proflow.FlowSample{{Throughput: nan}}
		}, field: "flows[" + testFlow.String() + "].throughput", problem: "NaN"},
		{name: "first bad field wins", mod: func(o *proflow.Observation) {
			o.Switches[1].FlowCount, o.Flow.Throughput = -3, nan
		}, field: "switches[agg2].flow_count", problem: "-3 is negative"},
	} {
		o := validObservation()
		c.mod(o)
		err := o.Validate(topo)
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: Validate = %v, want nil", c.name, err)
			}
			continue
		}
		var ioe *proflow.InvalidObservationError
		if !errors.As(err, &ioe) {
			t.Errorf("%s: Validate = %v, want an *InvalidObservationError", c.name, err)
			continue
		}
		if ioe.Field != c.field || !strings.Contains(ioe.Problem, c.problem) {
			t.Errorf("%s: field %q, problem %q; want %q, containing %q", c.name, ioe.Field, ioe.Problem, c.field, c.problem)
		}
		if want := "proflow: invalid observation: " + c.field + ": "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: message %q, want it to start with %q", c.name, err, want)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: Validate = %v, want it to match %v", c.name, err, c.is)
		}
		if c.is == nil && errors.Unwrap(err) != nil {
			t.Errorf("%s: Validate wraps %v, want no sentinel", c.name, errors.Unwrap(err))
		}
	}
}

func TestObservationValidateDoesNotAllocate(t *testing.T) {
	topo := proflow.PaperTopology()
	o := validObservation()
	if n := testing.AllocsPerRun(100, func() { _ = o.Validate(topo) }); n != 0 {
		t.Errorf("Validate of a valid observation allocates %v times, want 0", n)
	}
}

func TestObservationResize(t *testing.T) {
	topo := proflow.PaperTopology()
	o := validObservation()
	o.Switches = append(o.Switches, healthySwitch) // 5, too many
	store := &o.Switches[0]
	o.Resize(topo)
	want := proflow.Observation{
		Switches: make([]proflow.SwitchSample, 4),
		Leaves:   make([]proflow.LeafSample, 3),
	}
	if diff := cmp.Diff(want, *o); diff != "" {
		t.Errorf("Resize (-want +got):\n%s", diff)
	}
	if &o.Switches[0] != store {
		t.Error("Resize reallocated the switch samples, want the storage reused")
	}

	var empty proflow.Observation
	empty.Resize(topo)
	if len(empty.Switches) != 4 || len(empty.Leaves) != 3 {
		t.Errorf("Resize of a zero observation: %d switches, %d leaves; want 4, 3", len(empty.Switches), len(empty.Leaves))
	}
	if n := testing.AllocsPerRun(100, func() { o.Resize(topo) }); n != 0 {
		t.Errorf("Resize of a sized observation allocates %v times, want 0", n)
	}
}

func TestObservationCopyFromAndClone(t *testing.T) {
	src := validObservation()
	src.Switches[2].FlowCount = 9
	var dst proflow.Observation
	dst.CopyFrom(src)
	clone := src.Clone()
	for name, got := range map[string]*proflow.Observation{"CopyFrom": &dst, "Clone": clone} {
		if diff := cmp.Diff(src, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	src.Switches[2].FlowCount = 1
	src.Leaves[0].IngressRate = 1
	if dst.Switches[2].FlowCount != 9 || clone.Switches[2].FlowCount != 9 || dst.Leaves[0] != healthyLeaf || clone.Leaves[0] != healthyLeaf {
		t.Error("a copy shares storage with its source")
	}
}

// TestObservationUnsetFlows checks issue 24's finding: Resize marks every
// flow sample unset, and Validate names one the Telemetry did not write
// instead of reading it as a flow with no throughput.
func TestObservationUnsetFlows(t *testing.T) {
	topo := proflow.PaperTopology()
	o := validObservation()
	o.FlowIDs = []proflow.FlowID{testFlow}
	o.Resize(topo)
	if len(o.Flows) != 1 || !o.Flows[0].IsUnset() {
		t.Fatalf("after Resize Flows = %v, want one unset sample", o.Flows)
	}
	o.Time = epoch
	o.Flow = healthyFlow // a single-flow Telemetry writes this only
	err := o.Validate(topo)
	want := "proflow: invalid observation: flows[0] (" + testFlow.String() + "): unset, want the Telemetry to write the sample of flow_ids[0] into Flows[0] (a single-flow Telemetry writes Flow only)"
	if err == nil || err.Error() != want {
		t.Errorf("Validate = %v, want %q", err, want)
	}
	o.Flows[0].Throughput = 1e6 // the rate of congestion left unset
	err = o.Validate(topo)
	want = "proflow: invalid observation: flows[" + testFlow.String() + "].congestion_rate: unset, want the Telemetry to write it"
	if err == nil || err.Error() != want {
		t.Errorf("Validate with the congestion rate unset = %v, want %q", err, want)
	}
	o.Flows[0] = healthyFlow
	if err := o.Validate(topo); err != nil || o.Flows[0].IsUnset() {
		t.Errorf("a written sample: Validate = %v, IsUnset %t; want nil, false", err, o.Flows[0].IsUnset())
	}
	if n := testing.AllocsPerRun(100, func() { o.Resize(topo) }); n != 0 {
		t.Errorf("Resize with flows allocates %v times, want 0", n)
	}
}

// TestMultiControllerSingleFlowTelemetry: a single-flow Telemetry under a
// MultiController holds every flow with an error naming the unset sample,
// rather than leaving each in its baseline phase with no throughput.
func TestMultiControllerSingleFlowTelemetry(t *testing.T) {
	clock := southboundtest.NewManualClock(epoch)
	tel := proflow.TelemetryFunc(func(ctx context.Context, obs *proflow.Observation) error {
		obs.Resize(proflow.PaperTopology())
		obs.Time = clock.Now()
		for k := range obs.Switches {
			obs.Switches[k] = healthySwitch
		}
		for l := range obs.Leaves {
			obs.Leaves[l] = healthyLeaf
		}
		obs.Flow = healthyFlow
		return nil
	})
	cfg := proflow.DefaultMultiConfig()
	cfg.Clock = clock
	parts := proflow.FlowParts{
		Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return nopEncoder{}, nil },
		Policy: func(proflow.ProtectedFlow) (proflow.Policy, error) {
			return proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil }), nil
		},
		Gate: func(proflow.ProtectedFlow) (proflow.Gate, error) {
			return proflow.GateFunc(func(*proflow.Decision) {}), nil
		},
	}
	enf := proflow.EnforcerFunc(func(context.Context, proflow.FlowID, int) error { return nil })
	m, err := proflow.NewMultiController(cfg, tel, parts, enf)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddFlow(proflow.ProtectedFlow{ID: testFlow}, 0); err != nil {
		t.Fatal(err)
	}
	clock.Advance(500 * time.Millisecond)
	s := m.Step(t.Context())
	d := s.Decisions[0]
	want := "flows[0] (" + testFlow.String() + "): unset, want the Telemetry to write the sample of flow_ids[0] into Flows[0]"
	if d.Reason != proflow.ReasonInvalid || d.Err == nil || !strings.Contains(d.Err.Error(), want) {
		t.Errorf("decision: reason %q, error %v; want %q with %q", d.Reason, d.Err, proflow.ReasonInvalid, want)
	}
}

// TestObservationValidateLatency: the flow sample's latency fields accept
// zero (a source that cannot tell) and any finite non-negative value, and
// refuse the rest naming the field, for Flow and for Flows[i], without
// allocating on the valid path.
func TestObservationValidateLatency(t *testing.T) {
	topo := proflow.PaperTopology()
	o := validObservation()
	if err := o.Validate(topo); err != nil {
		t.Fatalf("zero latency: %v", err)
	}
	o.Flow.SmoothedRTT, o.Flow.RTTP99, o.Flow.CompletionP99, o.Flow.Completions = 0.005, 0.012, 0.03, 41
	if err := o.Validate(topo); err != nil {
		t.Fatalf("latency set: %v", err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = o.Validate(topo) }); n != 0 {
		t.Errorf("Validate with latency allocates %v times, want 0", n)
	}
	for _, c := range []struct {
		field string
		set   func(*proflow.FlowSample)
	}{
		{"flow.srtt", func(f *proflow.FlowSample) { f.SmoothedRTT = -1 }},
		{"flow.rtt_p99", func(f *proflow.FlowSample) { f.RTTP99 = math.NaN() }},
		{"flow.completion_p99", func(f *proflow.FlowSample) { f.CompletionP99 = math.Inf(1) }},
		{"flow.completions", func(f *proflow.FlowSample) { f.Completions = -2 }},
		{"flow.app_limited", func(f *proflow.FlowSample) { f.AppLimited = 1.5 }},
		{"flow.app_limited", func(f *proflow.FlowSample) { f.AppLimited = -0.1 }},
	} {
		bad := validObservation()
		c.set(&bad.Flow)
		err := bad.Validate(topo)
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: error %v, want one naming %s", c.field, err, c.field)
		}
	}
	multi := validObservation()
	multi.FlowIDs = []proflow.FlowID{{}}
	multi.Flows = []proflow.FlowSample{healthyFlow}
	multi.Flows[0].RTTP99 = -0.1
	if err := multi.Validate(topo); err == nil || !strings.Contains(err.Error(), "rtt_p99") {
		t.Errorf("flows[0] with a negative rtt_p99: error %v, want one naming rtt_p99", err)
	}
}
