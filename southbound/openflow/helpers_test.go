package openflow_test

import (
	"net/netip"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func netipMust(s string) netip.Addr { return netip.MustParseAddr(s) }

type metricValue float64

func (v metricValue) Describe(chan<- *prometheus.Desc) {}
func (v metricValue) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("v", "v", nil, nil), prometheus.UntypedValue, float64(v))
}

func mustGet(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	return mustGetLabel(t, reg, name, "")
}

// mustGetLabel returns the value of a metric (with one label value, if
// given) as a collector testutil.ToFloat64 reads.
func mustGetLabel(t *testing.T, reg *prometheus.Registry, name, label string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			found := label == ""
			for _, l := range m.GetLabel() {
				found = found || l.GetValue() == label
			}
			if !found {
				continue
			}
			switch {
			case m.Counter != nil:
				return metricValue(m.Counter.GetValue())
			case m.Gauge != nil:
				return metricValue(m.Gauge.GetValue())
			}
		}
	}
	return metricValue(0)
}
