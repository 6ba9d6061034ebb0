package promreg_test

import (
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
