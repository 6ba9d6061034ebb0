package promreg_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/proflow-sdn/proflow/internal/promreg"
)

func TestRegisterAllIsAllOrNothing(t *testing.T) {
	reg := prometheus.NewRegistry()
	squatter := prometheus.NewCounter(prometheus.CounterOpts{Name: "b_total", Help: "Taken."})
	reg.MustRegister(squatter)
	a := prometheus.NewCounter(prometheus.CounterOpts{Name: "a_total", Help: "A."})
	b := prometheus.NewGauge(prometheus.GaugeOpts{Name: "b_total", Help: "Taken."}) // a gauge: a conflict
	if err := promreg.RegisterAll(reg, a, b); err == nil {
		t.Fatal("RegisterAll with a conflicting collector = nil, want an error")
	}
	if n, err := testutil.GatherAndCount(reg, "a_total"); err != nil || n != 0 {
		t.Errorf("a_total series after a failed RegisterAll = %d, %v; want 0 (unregistered again)", n, err)
	}
	reg.Unregister(squatter)
	if err := promreg.RegisterAll(reg, a, b); err != nil {
		t.Fatalf("RegisterAll after the conflict is gone: %v", err)
	}
	promreg.UnregisterAll(reg, a, b)
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
		t.Errorf("series after UnregisterAll = %d, %v; want 0", n, err)
	}
}

// TestRegisterErrorNamesMetrics: a conflict names the metrics in one line
// and says how to run two components on one registry.
func TestRegisterErrorNamesMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	mk := func() []prometheus.Collector {
		return []prometheus.Collector{
			prometheus.NewCounter(prometheus.CounterOpts{Namespace: "x", Name: "a_total", Help: "A."}),
			prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "x", Name: "b", Help: "B."}, []string{"k"}),
		}
	}
	if err := promreg.RegisterAll(reg, mk()...); err != nil {
		t.Fatal(err)
	}
	err := promreg.RegisterAll(reg, mk()...)
	want := "metrics x_a_total, x_b already registered on this Registerer, want each registered once: " +
		"close the component that registered them first, or give each component its own view of the " +
		"registry with prometheus.WrapRegistererWith (a label telling them apart)"
	if err == nil || err.Error() != want {
		t.Errorf("RegisterAll twice = %v, want %q", err, want)
	}
	if _, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); !ok {
		t.Errorf("%v does not unwrap to prometheus.AlreadyRegisteredError", err)
	}
	other := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "x", Name: "b", Help: "Another help."})
	err = promreg.RegisterAll(reg, other)
	if err == nil || !strings.HasPrefix(err.Error(), "metric x_b: ") {
		t.Errorf("RegisterAll of an inconsistent collector = %v, want an error starting with %q", err, "metric x_b: ")
	}
}
