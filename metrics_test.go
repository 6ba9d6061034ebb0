package proflow

import (
	"go/ast"
	"go/parser"
	"go/token"
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
		d    Decision
		want []float64
	}{
		{Decision{Current: 0, Reason: ReasonStay}, []float64{1, 0, 0}},
		{Decision{Current: 0, Target: 2, Rerouted: true, Reason: ReasonRerouted}, []float64{0, 0, 1}},
		{Decision{Current: 2, Target: 1, Reason: ReasonEnforcer}, []float64{0, 0, 1}},
	} {
		m.observe(&step.d)
		for k, g := range m.current {
			if got := testutil.ToFloat64(g); got != step.want[k] {
				t.Errorf("after %+v: switch %d reads %v, want %v", step.d, k, got, step.want[k])
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
