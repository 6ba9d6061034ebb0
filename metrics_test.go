package proflow

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetricsKnowEveryReason keeps the label values of
// proflow_multi_decisions_total in step with the Reason constants of
// decision.go (proflow_decisions_total has all but ReasonJoint).
func TestMetricsKnowEveryReason(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "decision.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Reason" {
				for _, n := range vs.Names {
					declared = append(declared, n.Name)
				}
			}
		}
	}
	if len(declared) != len(multiReasons) {
		t.Errorf("decision.go declares %d reasons %v, metrics know %d %v", len(declared), declared, len(multiReasons), multiReasons)
	}
	if want := len(multiReasons) - 1; len(reasons) != want || slices.Contains(reasons, ReasonJoint) {
		t.Errorf("a Controller's metrics know %v, want the %d reasons other than %q", reasons, want, ReasonJoint)
	}
}

// TestMetricsStartAtZero checks every family and label value exists, at
// zero, before the first step.
func TestMetricsStartAtZero(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if _, err := newMetrics(reg, []string{"agg1", "agg2"}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("# HELP proflow_decisions_total Control-loop steps, by the reason the step ended.\n# TYPE proflow_decisions_total counter\n")
	sorted := slices.Clone(reasons)
	slices.Sort(sorted)
	for _, r := range sorted {
		b.WriteString(`proflow_decisions_total{reason="` + string(r) + `"} 0` + "\n")
	}
	b.WriteString(`# HELP proflow_current_switch 1 for the aggregation switch carrying the protected flow after the latest step, 0 for the others (all 0 before the first step).
# TYPE proflow_current_switch gauge
proflow_current_switch{switch="agg1"} 0
proflow_current_switch{switch="agg2"} 0
`)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(b.String()), "proflow_decisions_total", "proflow_current_switch"); err != nil {
		t.Error(err)
	}
	for _, name := range []string{"proflow_reroutes_total", "proflow_telemetry_errors_total", "proflow_gate_votes",
		"proflow_gate_cooldown_seconds", "proflow_loop_duration_seconds"} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 1 {
			t.Errorf("%s: %d series, %v; want 1", name, n, err)
		}
	}
	for _, old := range []string{"proflow_loop_latency_seconds"} {
		if n, _ := testutil.GatherAndCount(reg, old); n != 0 {
			t.Errorf("%s still exported", old)
		}
	}
}

// TestMetricsCurrentSwitchFollowsReroutes checks that exactly one switch
// reads 1: the target after a reroute, the current one otherwise.
func TestMetricsCurrentSwitchFollowsReroutes(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := newMetrics(reg, []string{"agg1", "agg2", "agg3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		d        Decision
		cordoned []bool
		want     []float64
		wantCord []float64
	}{
		{Decision{Current: 0, Reason: ReasonStay}, nil, []float64{1, 0, 0}, []float64{0, 0, 0}},
		{Decision{Current: 0, Target: 2, Rerouted: true, Reason: ReasonRerouted}, []bool{false, true, false}, []float64{0, 0, 1}, []float64{0, 1, 0}},
		{Decision{Current: 2, Target: 1, Reason: ReasonEnforcer}, nil, []float64{0, 0, 1}, []float64{0, 0, 0}},
	} {
		m.observe(&step.d, step.cordoned)
		for k, g := range m.current {
			if got := testutil.ToFloat64(g); got != step.want[k] {
				t.Errorf("after %+v: switch %d reads %v, want %v", step.d, k, got, step.want[k])
			}
		}
		for k, g := range m.cordoned {
			if got := testutil.ToFloat64(g); got != step.wantCord[k] {
				t.Errorf("cordoned %v: switch %d's proflow_cordoned reads %v, want %v", step.cordoned, k, got, step.wantCord[k])
			}
		}
	}
}

// TestMultiMetricsStartAtZero checks that a MultiController's families
// exist before the first step, with a series per reason and per switch and
// none per flow.
func TestMultiMetricsStartAtZero(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if _, err := newMultiMetrics(reg, []string{"agg1", "agg2"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{
		"proflow_multi_decisions_total":        len(multiReasons),
		"proflow_multi_flows_on_switch":        2,
		"proflow_multi_reroutes_total":         1,
		"proflow_multi_telemetry_errors_total": 1,
		"proflow_multi_flows":                  1,
		"proflow_multi_herding":                1,
		"proflow_multi_step_duration_seconds":  1,
	} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != want {
			t.Errorf("%s: %d series, %v; want %d", name, n, err, want)
		}
	}
	if _, err := newMultiMetrics(reg, []string{"agg1", "agg2"}); err == nil {
		t.Error("a second registration on the same registry succeeded, want a conflict")
	}
}

// TestControllersClose checks issue 24's finding: a controller's Close
// unregisters its metrics, so that a second one can register on the same
// registry, and the conflict without Close names the metrics and the way
// out in one line.
func TestControllersClose(t *testing.T) {
	tel := TelemetryFunc(func(context.Context, *Observation) error { return nil })
	enf := EnforcerFunc(func(context.Context, FlowID, int) error { return nil })
	pol := PolicyFunc(func([]float64, *Input) error { return nil })
	gate := GateFunc(func(*Decision) {})
	flow := FlowID{Src: netip.AddrFrom4([4]byte{10, 0, 0, 1}), Dst: netip.AddrFrom4([4]byte{10, 0, 0, 8}), SrcPort: 5000, DstPort: 5201, Proto: ProtoTCP}
	for _, tc := range []struct {
		name  string
		first string // a metric of the controller
		build func(prometheus.Registerer) (interface{ Close() error }, error)
	}{
		{"Controller", "proflow_decisions_total", func(reg prometheus.Registerer) (interface{ Close() error }, error) {
			cfg := DefaultConfig()
			cfg.Flow, cfg.Registerer = flow, reg
			return NewController(cfg, tel, placementEncoder{}, pol, gate, enf)
		}},
		{"MultiController", "proflow_multi_decisions_total", func(reg prometheus.Registerer) (interface{ Close() error }, error) {
			cfg := DefaultMultiConfig()
			cfg.Registerer = reg
			parts := FlowParts{
				Encoder: func(ProtectedFlow) (StateEncoder, error) { return placementEncoder{}, nil },
				Policy:  func(ProtectedFlow) (Policy, error) { return pol, nil },
				Gate:    func(ProtectedFlow) (Gate, error) { return gate, nil },
			}
			return NewMultiController(cfg, tel, parts, enf)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			first, err := tc.build(reg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tc.build(reg)
			if err == nil {
				t.Fatal("a second controller on the same registry: nil error, want the conflict")
			}
			msg := err.Error()
			for _, want := range []string{tc.first, "already registered", "prometheus.WrapRegistererWith"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") || strings.Count(msg, "duplicate metrics collector") > 0 {
				t.Errorf("error %q: want one line naming the metrics", msg)
			}
			if _, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); !ok {
				t.Errorf("error %q does not unwrap to prometheus.AlreadyRegisteredError", msg)
			}
			for range 2 { // idempotent
				if err := first.Close(); err != nil {
					t.Fatalf("Close = %v", err)
				}
			}
			if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
				t.Errorf("series after Close = %d, %v; want 0", n, err)
			}
			second, err := tc.build(reg)
			if err != nil {
				t.Fatalf("a controller after the first one's Close: %v", err)
			}
			if n, err := testutil.GatherAndCount(reg, tc.first); err != nil || n == 0 {
				t.Errorf("%s series of the second controller = %d, %v; want some", tc.first, n, err)
			}
			second.Close()
		})
	}
}
