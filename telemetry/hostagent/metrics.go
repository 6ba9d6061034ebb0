package hostagent

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The names of the socket's series at /metrics, in node_exporter's
// manner (base units, _total for counters); every one is labelled with
// the flow's src, dst, sport and dport. The series of TCP_INFO are served
// only while the socket exists (MetricFound 1).
const (
	MetricSRTT             = "proflow_tcp_srtt_seconds"
	MetricRTTVar           = "proflow_tcp_rttvar_seconds"
	MetricMinRTT           = "proflow_tcp_min_rtt_seconds"
	MetricRTO              = "proflow_tcp_rto_seconds"
	MetricRetransmits      = "proflow_tcp_retransmits"
	MetricTotalRetrans     = "proflow_tcp_retransmitted_segments_total"
	MetricLost             = "proflow_tcp_lost_segments"
	MetricUnacked          = "proflow_tcp_unacked_segments"
	MetricDeliveryRate     = "proflow_tcp_delivery_rate_bytes_per_second"
	MetricPacingRate       = "proflow_tcp_pacing_rate_bytes_per_second"
	MetricCwnd             = "proflow_tcp_cwnd_segments"
	MetricSsthresh         = "proflow_tcp_ssthresh_segments"
	MetricSndWnd           = "proflow_tcp_snd_wnd_bytes"
	MetricRcvSpace         = "proflow_tcp_rcv_space_bytes"
	MetricBytesAcked       = "proflow_tcp_acked_bytes_total"
	MetricBytesRetrans     = "proflow_tcp_retransmitted_bytes_total"
	MetricInfo             = "proflow_tcp_info"
	MetricWindowRTTP99     = "proflow_tcp_window_rtt_p99_seconds"
	MetricWindowRTTP50     = "proflow_tcp_window_rtt_p50_seconds"
	MetricWindowSamples    = "proflow_tcp_window_rtt_samples"
	MetricWindowAppLimited = "proflow_tcp_window_app_limited_ratio"
	MetricFound            = "proflow_hostagent_socket_found"
	MetricReportTimestamp  = "proflow_hostagent_report_timestamp_seconds"
)

var flowLabels = []string{"src", "dst", "sport", "dport"}

// infoFamilies are the TCP_INFO series: name, help, type and value.
var infoFamilies = []struct {
	name, help string
	typ        prometheus.ValueType
	value      func(Report) float64
}{
	{MetricSRTT, "Smoothed round-trip time (tcpi_rtt).", prometheus.GaugeValue, func(r Report) float64 { return r.Info.SRTT }},
	{MetricRTTVar, "Mean deviation of the round-trip time (tcpi_rttvar).", prometheus.GaugeValue, func(r Report) float64 { return r.Info.RTTVar }},
	{MetricMinRTT, "Least round-trip time seen (tcpi_min_rtt).", prometheus.GaugeValue, func(r Report) float64 { return r.Info.MinRTT }},
	{MetricRTO, "Retransmission timeout.", prometheus.GaugeValue, func(r Report) float64 { return r.Info.RTO }},
	{MetricRetransmits, "Retransmission timeouts in a row not yet recovered from.", prometheus.GaugeValue, func(r Report) float64 { return float64(r.Info.Retransmits) }},
	{MetricTotalRetrans, "Segments retransmitted since the connection opened.", prometheus.CounterValue, func(r Report) float64 { return float64(r.Info.TotalRetrans) }},
	{MetricLost, "Segments counted lost now.", prometheus.GaugeValue, func(r Report) float64 { return float64(r.Info.Lost) }},
	{MetricUnacked, "Segments in flight.", prometheus.GaugeValue, func(r Report) float64 { return float64(r.Info.Unacked) }},
	{MetricDeliveryRate, "Latest delivery-rate sample.", prometheus.GaugeValue, func(r Report) float64 { return r.Info.DeliveryRate }},
	{MetricPacingRate, "Pacing rate.", prometheus.GaugeValue, func(r Report) float64 { return r.Info.PacingRate }},
	{MetricCwnd, "Congestion window.", prometheus.GaugeValue, func(r Report) float64 { return float64(r.Info.CwndSegments) }},
	{MetricSsthresh, "Slow start threshold (0: still infinite).", prometheus.GaugeValue, func(r Report) float64 { return float64(r.Info.SsthreshSegments) }},
	{MetricSndWnd, "Peer's advertised receive window.", prometheus.GaugeValue, func(r Report) float64 { return float64(r.Info.SndWndBytes) }},
	{MetricRcvSpace, "Receive space the socket's autotuning aims at.", prometheus.GaugeValue, func(r Report) float64 { return float64(r.Info.RcvSpaceBytes) }},
	{MetricBytesAcked, "Bytes acknowledged by the peer.", prometheus.CounterValue, func(r Report) float64 { return float64(r.Info.BytesAcked) }},
	{MetricBytesRetrans, "Bytes retransmitted.", prometheus.CounterValue, func(r Report) float64 { return float64(r.Info.BytesRetrans) }},
	{MetricWindowRTTP99, "99th percentile of the srtt values polled in the window after new data was acknowledged.", prometheus.GaugeValue, func(r Report) float64 { return r.RTTP99 }},
	{MetricWindowAppLimited, "Share of the window's polls at which the sender was application-limited.", prometheus.GaugeValue, func(r Report) float64 { return r.AppLimited }},
	{MetricWindowRTTP50, "Median of the same srtt values.", prometheus.GaugeValue, func(r Report) float64 { return r.RTTP50 }},
	{MetricWindowSamples, "Polls of the window that saw new data acknowledged.", prometheus.GaugeValue, func(r Report) float64 { return float64(r.Samples) }},
}

var (
	infoDescs = func() []*prometheus.Desc {
		ds := make([]*prometheus.Desc, len(infoFamilies))
		for i, f := range infoFamilies {
			ds[i] = prometheus.NewDesc(f.name, f.help, flowLabels, nil)
		}
		return ds
	}()
	infoDesc = prometheus.NewDesc(MetricInfo, "The socket's TCP state and congestion control, value 1.",
		append([]string{"state", "congestion_control"}, flowLabels...), nil)
	foundDesc = prometheus.NewDesc(MetricFound, "1 when the latest poll found the flow's socket, else 0.", flowLabels, nil)
	timeDesc  = prometheus.NewDesc(MetricReportTimestamp, "Unix time of the report the values come from.", nil, nil)
)

// reportCollector exposes one Report.
type reportCollector struct{ rep Report }

func (c reportCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range infoDescs {
		ch <- d
	}
	ch <- infoDesc
	ch <- foundDesc
	ch <- timeDesc
}

func (c reportCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.rep.Flow
	lv := []string{f.Src.String(), f.Dst.String(), strconv.Itoa(int(f.SrcPort)), strconv.Itoa(int(f.DstPort))}
	found := 0.0
	if c.rep.Found {
		found = 1
		for i, fam := range infoFamilies {
			ch <- prometheus.MustNewConstMetric(infoDescs[i], fam.typ, fam.value(c.rep), lv...)
		}
		ch <- prometheus.MustNewConstMetric(infoDesc, prometheus.GaugeValue, 1, append([]string{c.rep.Info.State, c.rep.Info.CongestionControl}, lv...)...)
	}
	ch <- prometheus.MustNewConstMetric(foundDesc, prometheus.GaugeValue, found, lv...)
	ch <- prometheus.MustNewConstMetric(timeDesc, prometheus.GaugeValue, float64(c.rep.Time.UnixNano())/1e9)
}

// serveMetrics writes rep (and Config.Gatherer's metrics) in the
// Prometheus exposition format the request asks for.
func (a *Agent) serveMetrics(w http.ResponseWriter, req *http.Request, rep Report) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(reportCollector{rep}); err != nil {
		a.cfg.Logger.ErrorContext(req.Context(), "hostagent: answering with 500", "path", req.URL.Path, "err", err)
		http.Error(w, internalError, http.StatusInternalServerError)
		return
	}
	g := prometheus.Gatherers{reg}
	if a.cfg.Gatherer != nil {
		g = append(g, a.cfg.Gatherer)
	}
	promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorLog: promLogger{a}, ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, req)
}

// promLogger adapts Config.Logger to promhttp.Logger.
type promLogger struct{ a *Agent }

func (l promLogger) Println(v ...any) { l.a.cfg.Logger.Error("hostagent: /metrics", "err", v) }
