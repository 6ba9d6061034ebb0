package proflow

import (
	"slices"
	"sync"

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
	cordoned     []prometheus.Gauge // by switch index
	loopDuration prometheus.Histogram

	registration
}

// registration is what a controller registered, for its Close.
type registration struct {
	reg  prometheus.Registerer
	all  []prometheus.Collector
	once sync.Once
}

// unregister removes the collectors from the Registerer, once.
func (r *registration) unregister() {
	r.once.Do(func() { promreg.UnregisterAll(r.reg, r.all...) })
}

// reasons are every Reason a Controller's Decision can carry, the label
// values of proflow_decisions_total.
var reasons = []Reason{ReasonRerouted, ReasonStay, ReasonMargin, ReasonVotes, ReasonCooldown, ReasonReserve, ReasonGap, ReasonBaseline,
	ReasonTelemetry, ReasonInvalid, ReasonStale, ReasonEncoder, ReasonPolicy, ReasonEnforcer, ReasonShadow}

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
	cordoned := newCordonedGauge("")
	for _, name := range switches {
		m.current = append(m.current, current.WithLabelValues(name))
		m.cordoned = append(m.cordoned, cordoned.WithLabelValues(name))
	}
	m.reg, m.all = reg, []prometheus.Collector{m.decisions, m.reroutes, m.telErrors, m.votes, m.cooldown, current, cordoned, m.loopDuration}
	if err := promreg.RegisterAll(reg, m.all...); err != nil {
		return nil, err
	}
	return m, nil
}

// newCordonedGauge returns the cordoned-switch gauge of a controller
// (subsystem "") or a MultiController ("multi").
func newCordonedGauge(subsystem string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "proflow", Subsystem: subsystem, Name: "cordoned",
		Help: "1 for an aggregation switch cordoned (no flow is moved to it) at the latest step, 0 for the others.",
	}, []string{"switch"})
}

// setCordoned sets one gauge per switch from the cordon marks (nil: none).
func setCordoned(gs []prometheus.Gauge, cordoned []bool) {
	for k, g := range gs {
		if k < len(cordoned) && cordoned[k] {
			g.Set(1)
		} else {
			g.Set(0)
		}
	}
}

// observe records one step: its decision, and the cordon marks it ran with.
func (m *metrics) observe(d *Decision, cordoned []bool) {
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
	setCordoned(m.cordoned, cordoned)
	m.loopDuration.Observe(d.Latency.Seconds())
}

// multiMetrics are a MultiController's Prometheus collectors. None has a
// flow label: a controller may protect 10,000 flows, so every series is an
// aggregate over the flows, labelled at most by reason or switch.
type multiMetrics struct {
	decisions    []prometheus.Counter // by index in multiReasons
	reroutes     prometheus.Counter
	telErrors    prometheus.Counter
	flows        prometheus.Gauge
	onSwitch     []prometheus.Gauge // by switch index
	cordoned     []prometheus.Gauge // by switch index
	herding      prometheus.Histogram
	stepDuration prometheus.Histogram

	counts []int // scratch: decisions of the step by index in multiReasons

	registration
}

// newMultiMetrics registers a MultiController's collectors on reg, with one
// proflow_multi_flows_on_switch series per name in switches.
func newMultiMetrics(reg prometheus.Registerer, switches []string) (*multiMetrics, error) {
	m := &multiMetrics{
		reroutes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "proflow", Subsystem: "multi", Name: "reroutes_total",
			Help: "Protected flows the enforcer moved, summed over all flows.",
		}),
		telErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "proflow", Subsystem: "multi", Name: "telemetry_errors_total",
			Help: "Steps in which every protected flow was held because telemetry failed, was invalid or stale.",
		}),
		flows: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "proflow", Subsystem: "multi", Name: "flows",
			Help: "Protected flows in the latest step.",
		}),
		herding: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "proflow", Subsystem: "multi", Name: "herding",
			Help:    "Per step, the largest number of protected flows moved onto one aggregation switch.",
			Buckets: []float64{0, 1, 2, 3, 4, 6, 8, 16, 32, 64, 128},
		}),
		stepDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "proflow", Subsystem: "multi", Name: "step_duration_seconds",
			Help:    "Wall time of one step for all protected flows, telemetry to enforcement.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16),
		}),
		counts: make([]int, len(multiReasons)),
	}
	decisions := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "proflow", Subsystem: "multi", Name: "decisions_total",
		Help: "Per-flow decisions, summed over all protected flows, by the reason each ended.",
	}, []string{"reason"})
	for _, r := range multiReasons {
		m.decisions = append(m.decisions, decisions.WithLabelValues(string(r)))
	}
	onSwitch := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "proflow", Subsystem: "multi", Name: "flows_on_switch",
		Help: "Protected flows carried by each aggregation switch after the latest step.",
	}, []string{"switch"})
	cordoned := newCordonedGauge("multi")
	for _, name := range switches {
		m.onSwitch = append(m.onSwitch, onSwitch.WithLabelValues(name))
		m.cordoned = append(m.cordoned, cordoned.WithLabelValues(name))
	}
	m.reg, m.all = reg, []prometheus.Collector{decisions, m.reroutes, m.telErrors, m.flows, onSwitch, cordoned, m.herding, m.stepDuration}
	if err := promreg.RegisterAll(reg, m.all...); err != nil {
		return nil, err
	}
	return m, nil
}

// observe records one step: its summary, onSwitch, the protected flows on
// each switch after it, and the cordon marks it ran with.
func (m *multiMetrics) observe(s *StepSummary, onSwitch []int, cordoned []bool) {
	clear(m.counts)
	for i := range s.Decisions {
		if r := slices.Index(multiReasons, s.Decisions[i].Reason); r >= 0 {
			m.counts[r]++
		}
	}
	for r, n := range m.counts {
		if n > 0 {
			m.decisions[r].Add(float64(n))
		}
	}
	m.reroutes.Add(float64(s.Rerouted))
	if s.Recheck {
		return // a recheck's flows are some of the step's: the gauges and the step histograms stay the step's
	}
	if s.Hold != "" {
		m.telErrors.Inc()
	}
	m.flows.Set(float64(len(s.Decisions)))
	for k, g := range m.onSwitch {
		g.Set(float64(onSwitch[k]))
	}
	setCordoned(m.cordoned, cordoned)
	m.herding.Observe(float64(s.Herding))
	m.stepDuration.Observe(s.Latency.Seconds())
}
