package proflow

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the controller's Prometheus collectors, registered only on the
// Registerer the user passes in.
type metrics struct {
	decisions   *prometheus.CounterVec
	reroutes    prometheus.Counter
	telErrors   prometheus.Counter
	votes       prometheus.Gauge
	cooldown    prometheus.Gauge
	current     prometheus.Gauge
	loopLatency prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "proflow", Name: "decisions_total",
			Help: "Control-loop steps, by the reason the step ended.",
		}, []string{"reason"}),
		reroutes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "proflow", Name: "reroutes_total",
			Help: "Reroutes of the protected flow that the enforcer carried out.",
		}),
		telErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "proflow", Name: "telemetry_errors_total",
			Help: "Steps held because telemetry failed, was invalid or stale.",
		}),
		votes: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "proflow", Name: "gate_votes",
			Help: "Consecutive steps the current reroute candidate has won.",
		}),
		cooldown: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "proflow", Name: "gate_cooldown_seconds",
			Help: "Time left before the gate admits another reroute.",
		}),
		current: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "proflow", Name: "current_switch",
			Help: "Index of the aggregation switch carrying the protected flow.",
		}),
		loopLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "proflow", Name: "loop_latency_seconds",
			Help:    "Wall time of one control-loop step, telemetry to enforcement.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 14),
		}),
	}
	var errs []error
	var done []prometheus.Collector
	for _, c := range []prometheus.Collector{m.decisions, m.reroutes, m.telErrors, m.votes, m.cooldown, m.current, m.loopLatency} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, c)
	}
	if err := errors.Join(errs...); err != nil {
		// Leave nothing behind, so the caller can fix the conflict and retry.
		for _, c := range done {
			reg.Unregister(c)
		}
		return nil, err
	}
	return m, nil
}

func (m *metrics) observe(d *Decision) {
	m.decisions.WithLabelValues(string(d.Reason)).Inc()
	if d.Rerouted {
		m.reroutes.Inc()
	}
	switch d.Reason {
	case ReasonTelemetry, ReasonInvalid, ReasonStale:
		m.telErrors.Inc()
	}
	m.votes.Set(float64(d.Votes))
	m.cooldown.Set(d.Cooldown.Seconds())
	cur := d.Current
	if d.Rerouted {
		cur = d.Target
	}
	m.current.Set(float64(cur))
	m.loopLatency.Observe(d.Latency.Seconds())
}
