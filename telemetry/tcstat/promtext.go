package tcstat

import (
	"bytes"
	"fmt"
	"math"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DecodeMetrics decodes the node_qdisc_* series of a Prometheus text
// exposition (proflow's agent at /metrics, or node_exporter's qdisc
// collector) into a Report. Every device with a node_qdisc_overlimits_total
// series is reported; the other node_qdisc_* families fill their fields
// where present. Report.Time is proflow_tcstat_read_timestamp_seconds, or
// zero where the exposition has none (node_exporter). Malformed text, a
// sample without device or kind, a device with two qdisc kinds, and values
// that are negative, fractional or not finite are errors.
func DecodeMetrics(b []byte) (Report, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		return Report{}, fmt.Errorf("malformed metrics: %w", err)
	}
	r := Report{Interfaces: map[string]Qdisc{}}
	if mf, ok := fams[MetricReadTime]; ok {
		if len(mf.GetMetric()) != 1 {
			return Report{}, fmt.Errorf("malformed metrics: %d %s samples, want one", len(mf.GetMetric()), MetricReadTime)
		}
		v := sampleValue(mf.GetMetric()[0])
		if !(v > 0) || math.IsInf(v, 0) {
			return Report{}, fmt.Errorf("malformed metrics: %s = %v, want a positive Unix time", MetricReadTime, v)
		}
		sec, frac := math.Modf(v)
		r.Time = time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC()
	}
	kinds, overflow := map[string]string{}, map[string]bool{}
	for _, f := range qdiscFamilies {
		for _, m := range fams[f.name].GetMetric() {
			var dev, kind string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "device":
					dev = l.GetValue()
				case "kind":
					kind = l.GetValue()
				}
			}
			if dev == "" || kind == "" {
				return Report{}, fmt.Errorf("malformed metrics: %s sample without device or kind label", f.name)
			}
			if k, ok := kinds[dev]; ok && k != kind {
				return Report{}, fmt.Errorf("malformed metrics: device %s has qdiscs of kinds %s and %s, want one root qdisc", dev, k, kind)
			}
			kinds[dev] = kind
			v, err := counter(f.name, sampleValue(m))
			if err != nil {
				return Report{}, fmt.Errorf("malformed metrics: device %s: %w", dev, err)
			}
			overflow[dev] = overflow[dev] || f.name == MetricOverlimits
			q := r.Interfaces[dev]
			q.Kind = kind
			f.set(&q, v)
			r.Interfaces[dev] = q
		}
	}
	// A device without the overflow signal is not reported.
	for dev := range r.Interfaces {
		if !overflow[dev] {
			delete(r.Interfaces, dev)
		}
	}
	return r, nil
}

// sampleValue is a sample's value whatever the family's type.
func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return math.NaN()
}
