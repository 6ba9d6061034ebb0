package p4runtime

import (
	"context"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/proflow-sdn/proflow/internal/promreg"
)

// metrics are the client's Prometheus collectors, registered only on
// Config.Registerer; the same families as the OpenFlow server's where they
// apply. A nil *metrics records nothing. Every labelled series exists, at
// zero, from registration on.
type metrics struct {
	connected   prometheus.Gauge
	disconnects prometheus.Counter
	errs        *prometheus.CounterVec
	writes      prometheus.Counter
	polls       *prometheus.CounterVec
	pollDur     prometheus.Histogram
	placements  *prometheus.CounterVec
	placeDur    prometheus.Histogram
	all         []prometheus.Collector
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	const ns, sub = "proflow", "p4runtime"
	m := &metrics{
		connected: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "connected_devices",
			Help: "Devices whose stream has an arbitration answer (primary or backup)."}),
		disconnects: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "disconnects_total",
			Help: "Streams to a device that ended (closed by the server, broken, or without an arbitration answer in time)."}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "errors_total",
			Help: "RPCs a device refused or could not answer, and stream error messages, by gRPC canonical code."}, []string{"code"}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "write_updates_total",
			Help: "Table-entry updates sent in Write RPCs."}),
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "polls_total",
			Help: "Counter reads of one leaf (one Read RPC), by result (ok, error)."}, []string{"result"}),
		pollDur: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "poll_duration_seconds",
			Help: "Round trip of one leaf's counter read.", Buckets: prometheus.ExponentialBuckets(100e-6, 2, 16)}),
		placements: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "placements_total",
			Help: "Rule placements: Place calls that wrote a flow's path entries for a new aggregation switch, by result (ok, error). " +
				"Not proflow_reroutes_total, the controller's count of reroute decisions."}, []string{"result"}),
		placeDur: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "placement_duration_seconds",
			Help: "Time from a placement request to both leaves' Write answers.", Buckets: prometheus.ExponentialBuckets(100e-6, 2, 16)}),
	}
	for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
		m.errs.WithLabelValues(c.String())
	}
	for _, r := range []string{"ok", "error"} {
		m.polls.WithLabelValues(r)
		m.placements.WithLabelValues(r)
	}
	m.all = []prometheus.Collector{m.connected, m.disconnects, m.errs, m.writes, m.polls, m.pollDur, m.placements, m.placeDur}
	if err := promreg.RegisterAll(reg, m.all...); err != nil {
		return nil, err
	}
	return m, nil
}

// unregister removes the collectors from reg, so that a later Dial can
// register its own.
func (m *metrics) unregister(reg prometheus.Registerer) {
	if m != nil {
		promreg.UnregisterAll(reg, m.all...)
	}
}

func (m *metrics) error(c codes.Code) {
	if m != nil {
		m.errs.WithLabelValues(c.String()).Inc()
	}
}

func (m *metrics) poll(err error, d time.Duration) {
	switch {
	case m == nil:
	case err != nil:
		m.polls.WithLabelValues("error").Inc()
	default:
		m.polls.WithLabelValues("ok").Inc()
		m.pollDur.Observe(d.Seconds())
	}
}

// placed records a placement that wrote and was answered within d.
func (m *metrics) placed(d time.Duration) {
	if m != nil {
		m.placements.WithLabelValues("ok").Inc()
		m.placeDur.Observe(d.Seconds())
	}
}

// placeFailed records a placement a leaf refused or did not answer.
func (m *metrics) placeFailed() {
	if m != nil {
		m.placements.WithLabelValues("error").Inc()
	}
}

// streamEnded records a stream's end: arbitrated says whether it counted as
// connected, closing whether the client is closing (not a disconnect).
func (m *metrics) streamEnded(arbitrated, closing bool) {
	if m == nil {
		return
	}
	if !closing {
		m.disconnects.Inc()
	}
	if arbitrated {
		m.connected.Dec() // after the count: connected_devices 0 means every disconnect is counted
	}
}

func (m *metrics) arbitrated() {
	if m != nil {
		m.connected.Inc()
	}
}

// countWrites is a unary interceptor counting the updates of Write RPCs.
func (m *metrics) countWrites(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if w, ok := req.(*p4v1.WriteRequest); ok {
		m.writes.Add(float64(len(w.GetUpdates())))
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}
