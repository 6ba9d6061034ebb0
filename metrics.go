package proflow

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow/internal/promreg"
)

// metrics are the controller's Prometheus collectors, registered only on the
// Registerer the user passes in. Every labelled series exists, at zero, from
// registration on.
type metrics struct {
	decisions    *prometheus.CounterVec
	reroutes     prometheus.Counter
	telErrors    prometheus.Counter
	votes        prometheus.Gauge
	cooldown     prometheus.Gauge
	current      []prometheus.Gauge // by switch index
	loopDuration prometheus.Histogram
}

// reasons are every Reason a Controller's Decision can carry, the label
// values of proflow_decisions_total.
var reasons = []Reason{ReasonRerouted, ReasonStay, ReasonMargin, ReasonVotes, ReasonCooldown, ReasonBaseline,
	ReasonTelemetry, ReasonInvalid, ReasonStale, ReasonEncoder, ReasonPolicy, ReasonEnforcer}

// multiReasons are every Reason a Decision can carry, the label values of
// proflow_multi_decisions_total: a MultiController's joint step adds
// ReasonJoint.
var multiReasons = append(slices.Clone(reasons), ReasonJoint)

// newMetrics registers the controller's collectors on reg, with one
// proflow_current_switch series per name in switches (Topology.Switches).
func newMetrics(reg prometheus.Registerer, switches []string) (*metrics, error) {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "proflow", Name: "decisions_total",
			Help: "Control-loop steps, by the reason the step ended.",
		}, []string{"reason"}),
		reroutes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "proflow", Name: "reroutes_total",
			Help: "Decisions to reroute the protected flow that the enforcer carried out (steps with reason rerouted).",
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
		loopDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "proflow", Name: "loop_duration_seconds",
			Help:    "Wall time of one control-loop step, telemetry to enforcement.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 14),
		}),
	}
	current := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "proflow", Name: "current_switch",
		Help: "1 for the aggregation switch carrying the protected flow after the latest step, 0 for the others (all 0 before the first step).",
	}, []string{"switch"})
	for _, r := range reasons {
		m.decisions.WithLabelValues(string(r))
	}
	for _, name := range switches {
		m.current = append(m.current, current.WithLabelValues(name))
	}
	if err := promreg.RegisterAll(reg, m.decisions, m.reroutes, m.telErrors, m.votes, m.cooldown, current, m.loopDuration); err != nil {
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
	for k, g := range m.current {
		if k == cur {
			g.Set(1)
		} else {
			g.Set(0)
		}
	}
	m.loopDuration.Observe(d.Latency.Seconds())
}
