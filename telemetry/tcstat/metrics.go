package tcstat

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The node_exporter names of the qdisc counters (its qdisc collector), each
// labelled with device and kind. Overlimits, drops and the backlog are
// 32-bit counters in the kernel.
const (
	// MetricBytes counts the bytes the qdisc sent.
	MetricBytes = "node_qdisc_bytes_total"
	// MetricPackets counts the packets the qdisc sent.
	MetricPackets = "node_qdisc_packets_total"
	// MetricDrops counts the packets the qdisc dropped.
	MetricDrops = "node_qdisc_drops_total"
	// MetricOverlimits counts overlimit events: the overflow signal ξ.
	MetricOverlimits = "node_qdisc_overlimits_total"
	// MetricBacklog is the bytes queued now (a gauge).
	MetricBacklog = "node_qdisc_backlog"
	// MetricQueueLength is the packets queued now (a gauge).
	MetricQueueLength = "node_qdisc_current_queue_length"
	// MetricReadTime is the Unix time of the read the counters come from
	// (proflow's agent only; node_exporter has no such series).
	MetricReadTime = "proflow_tcstat_read_timestamp_seconds"
)

// qdiscFamilies are the node_qdisc_* families: name, help, type, and
// where each value lives in a Qdisc.
var qdiscFamilies = []struct {
	name, help string
	typ        prometheus.ValueType
	value      func(Qdisc) uint64
	set        func(*Qdisc, uint64)
}{
	{MetricBytes, "Number of bytes sent.", prometheus.CounterValue,
		func(q Qdisc) uint64 { return q.Bytes }, func(q *Qdisc, v uint64) { q.Bytes = v }},
	{MetricPackets, "Number of packets sent.", prometheus.CounterValue,
		func(q Qdisc) uint64 { return q.Packets }, func(q *Qdisc, v uint64) { q.Packets = v }},
	{MetricDrops, "Number of packets dropped.", prometheus.CounterValue,
		func(q Qdisc) uint64 { return q.Drops }, func(q *Qdisc, v uint64) { q.Drops = v }},
	{MetricOverlimits, "Number of overlimit events (for tbf: a send found too few tokens).", prometheus.CounterValue,
		func(q Qdisc) uint64 { return q.Overlimits }, func(q *Qdisc, v uint64) { q.Overlimits = v }},
	{MetricBacklog, "Number of bytes currently in queue to be sent.", prometheus.GaugeValue,
		func(q Qdisc) uint64 { return q.BacklogBytes }, func(q *Qdisc, v uint64) { q.BacklogBytes = v }},
	{MetricQueueLength, "Number of packets currently in queue to be sent.", prometheus.GaugeValue,
		func(q Qdisc) uint64 { return q.BacklogPackets }, func(q *Qdisc, v uint64) { q.BacklogPackets = v }},
}

// qdiscDescs are qdiscFamilies' descriptors, in the same order.
var qdiscDescs = func() []*prometheus.Desc {
	ds := make([]*prometheus.Desc, len(qdiscFamilies))
	for i, f := range qdiscFamilies {
		ds[i] = prometheus.NewDesc(f.name, f.help, []string{"device", "kind"}, nil)
	}
	return ds
}()

var readTimeDesc = prometheus.NewDesc(MetricReadTime, "Unix time of the qdisc read the node_qdisc_* values come from.", nil, nil)

// qdiscCollector exposes one Report as node_qdisc_* series.
type qdiscCollector struct{ rep Report }

func (c qdiscCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range qdiscDescs {
		ch <- d
	}
	ch <- readTimeDesc
}

func (c qdiscCollector) Collect(ch chan<- prometheus.Metric) {
	for dev, q := range c.rep.Interfaces {
		for i, f := range qdiscFamilies {
			ch <- prometheus.MustNewConstMetric(qdiscDescs[i], f.typ, float64(f.value(q)), dev, q.Kind)
		}
	}
	ch <- prometheus.MustNewConstMetric(readTimeDesc, prometheus.GaugeValue, float64(c.rep.Time.UnixNano())/1e9)
}

// serveMetrics writes rep (and AgentConfig.Gatherer's metrics) in the
// Prometheus exposition format the request asks for.
func (a *Agent) serveMetrics(w http.ResponseWriter, req *http.Request, rep Report) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(qdiscCollector{rep}); err != nil {
		a.cfg.Logger.ErrorContext(req.Context(), "tcstat: answering with 500", "path", req.URL.Path, "err", err)
		http.Error(w, internalError, http.StatusInternalServerError)
		return
	}
	g := prometheus.Gatherers{reg}
	if a.cfg.Gatherer != nil {
		g = append(g, a.cfg.Gatherer)
	}
	promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      slogPrintln{a},
		ErrorHandling: promhttp.ContinueOnError,
	}).ServeHTTP(w, req)
}

// slogPrintln adapts AgentConfig.Logger to promhttp.Logger.
type slogPrintln struct{ a *Agent }

func (l slogPrintln) Println(v ...any) {
	l.a.cfg.Logger.Error("tcstat: /metrics", "err", v)
}
