package openflow

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus collectors, registered only on the
// Registerer of Config. A nil *metrics records nothing.
type metrics struct {
	connected   prometheus.Gauge
	disconnects prometheus.Counter
	ofErrors    *prometheus.CounterVec
	flowMods    prometheus.Counter
	polls       *prometheus.CounterVec
	pollLatency prometheus.Histogram
	reroutes    *prometheus.CounterVec
	placeLat    prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	const ns, sub = "proflow", "openflow"
	m := &metrics{
		connected: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "connected_switches",
			Help: "Switches connected with a completed handshake."}),
		disconnects: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "disconnects_total",
			Help: "Switch connections that ended (closed, dead or failed)."}),
		ofErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "errors_total",
			Help: "OpenFlow error messages received from switches, by OpenFlow error type."}, []string{"type"}),
		flowMods: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "flow_mods_total",
			Help: "Flow-mod messages sent."}),
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "polls_total",
			Help: "Statistics polls of one switch, by result (ok, error, joined: an outstanding poll was reused)."}, []string{"result"}),
		pollLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "poll_latency_seconds",
			Help: "Round trip of one switch's port and flow statistics poll.", Buckets: prometheus.ExponentialBuckets(100e-6, 2, 16)}),
		reroutes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "reroutes_total",
			Help: "Placements of a flow on a new aggregation switch, by result (ok, error)."}, []string{"result"}),
		placeLat: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "reroute_latency_seconds",
			Help: "Time from a placement request to the barrier replies confirming the new rules.", Buckets: prometheus.ExponentialBuckets(100e-6, 2, 16)}),
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.connected, m.disconnects, m.ofErrors, m.flowMods, m.polls, m.pollLatency, m.reroutes, m.placeLat} {
		errs = append(errs, reg.Register(c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}
