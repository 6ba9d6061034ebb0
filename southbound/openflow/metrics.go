package openflow

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow/internal/promreg"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// metrics are the server's Prometheus collectors, registered only on the
// Registerer of Config. A nil *metrics records nothing. Every labelled
// series exists, at zero, from registration on.
type metrics struct {
	connected   prometheus.Gauge
	disconnects prometheus.Counter
	ofErrors    *prometheus.CounterVec
	flowMods    prometheus.Counter
	polls       *prometheus.CounterVec
	pollLatency prometheus.Histogram   // proflow_openflow_poll_duration_seconds
	reroutes    *prometheus.CounterVec // proflow_openflow_placements_total
	placeLat    prometheus.Histogram   // proflow_openflow_placement_duration_seconds

	acceptErrors      prometheus.Counter // proflow_openflow_accept_errors_total
	handshakeFailures prometheus.Counter // proflow_openflow_handshake_failures_total
	refreshOverruns   prometheus.Counter // proflow_openflow_refresh_overruns_total
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
			Help: "OpenFlow error messages received from switches, by OpenFlow error type (ofp_error_type number)."}, []string{"type"}),
		flowMods: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "flow_mods_total",
			Help: "Flow-mod messages sent."}),
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "polls_total",
			Help: "Statistics polls of one switch, by result (ok, error, joined: an outstanding poll was reused)."}, []string{"result"}),
		pollLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "poll_duration_seconds",
			Help: "Round trip of one switch's port and flow statistics poll.", Buckets: prometheus.ExponentialBuckets(100e-6, 2, 16)}),
		reroutes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "placements_total",
			Help: "Rule placements: Place calls that wrote a flow's rules for a new aggregation switch, by result (ok, error). " +
				"Not proflow_reroutes_total, the controller's count of reroute decisions."}, []string{"result"}),
		placeLat: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "placement_duration_seconds",
			Help: "Time from a placement request to the barrier replies confirming the new rules.", Buckets: prometheus.ExponentialBuckets(100e-6, 2, 16)}),
		acceptErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "accept_errors_total",
			Help: "Temporary errors accepting a connection (descriptors exhausted, connection aborted), each retried after a back-off."}),
		handshakeFailures: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "handshake_failures_total",
			Help: "Connections dropped because the OpenFlow handshake failed (not OpenFlow 1.3, timed out, closed)."}),
		refreshOverruns: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "refresh_overruns_total",
			Help: "Lease refresh rounds that took longer than their period (a third of the lease; three request timeouts with permanent overrides), so the next round started late."}),
	}
	for t := range ofwire.NumErrorTypes {
		m.ofErrors.WithLabelValues(strconv.Itoa(t))
	}
	m.ofErrors.WithLabelValues(strconv.Itoa(ofwire.ErrTypeExperimenter))
	for _, r := range []string{"ok", "error", "joined"} {
		m.polls.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "error"} {
		m.reroutes.WithLabelValues(r)
	}
	if err := promreg.RegisterAll(reg, m.connected, m.disconnects, m.ofErrors, m.flowMods, m.polls, m.pollLatency, m.reroutes, m.placeLat, m.acceptErrors, m.handshakeFailures, m.refreshOverruns); err != nil {
		return nil, err
	}
	return m, nil
}
