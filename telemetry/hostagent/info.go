package hostagent

import (
	"math"
	"slices"
	"time"

	"github.com/proflow-sdn/proflow"
)

// TCPInfo is what the agent reports of one read of the socket's TCP_INFO
// (struct tcp_info of linux/tcp.h, as ss -ti prints it). Times are
// seconds, rates bytes/s.
type TCPInfo struct {
	// State is the socket's TCP state ("established", "fin_wait1", …).
	State string `json:"state"`
	// CongestionControl is the socket's algorithm (INET_DIAG_CONG:
	// "cubic", "bbr"); empty where the kernel did not say.
	CongestionControl string `json:"congestion_control,omitempty"`
	// SRTT is the smoothed round-trip time (tcpi_rtt), RTTVar its mean
	// deviation (tcpi_rttvar), MinRTT the least round trip seen over the
	// kernel's window (tcpi_min_rtt) and RTO the retransmission timeout.
	SRTT   float64 `json:"srtt"`
	RTTVar float64 `json:"rttvar"`
	MinRTT float64 `json:"min_rtt"`
	RTO    float64 `json:"rto"`
	// Retransmits is the number of retransmission timeouts in a row not
	// yet recovered from (tcpi_retransmits); TotalRetrans counts every
	// segment retransmitted since the connection opened.
	Retransmits  uint32 `json:"retransmits"`
	TotalRetrans uint32 `json:"total_retrans"`
	// Backoff is how many times the retransmission timer is backed off
	// now (tcpi_backoff, ss's backoff:N); CAState the sender's congestion
	// avoidance state (tcpi_ca_state: "open", "disorder", "cwr",
	// "recovery", "loss"), "loss" after a retransmission timeout until
	// the lost data is acknowledged.
	Backoff uint32 `json:"backoff"`
	CAState string `json:"ca_state,omitempty"`
	// Lost is the number of segments the sender counts lost now
	// (tcpi_lost, in flight).
	Lost uint32 `json:"lost"`
	// Unacked is the number of segments in flight (tcpi_unacked).
	Unacked uint32 `json:"unacked"`
	// DeliveryRate is the kernel's latest delivery-rate sample, bytes/s
	// (tcpi_delivery_rate).
	DeliveryRate float64 `json:"delivery_rate"`
	// DeliveryRateAppLimited says the latest delivery-rate sample was
	// taken while the application, not the network, limited the sender
	// (tcpi_delivery_rate_app_limited).
	DeliveryRateAppLimited bool `json:"delivery_rate_app_limited"`
	// PacingRate is the socket's pacing rate, bytes/s.
	PacingRate float64 `json:"pacing_rate"`
	// CwndSegments is the congestion window; SsthreshSegments the slow
	// start threshold, zero while it is still infinite (no loss seen).
	CwndSegments     uint32 `json:"cwnd"`
	SsthreshSegments uint32 `json:"ssthresh"`
	// SndMSS is the sender's segment size, bytes.
	SndMSS uint32 `json:"snd_mss"`
	// SndWndBytes is the peer's advertised receive window (tcpi_snd_wnd,
	// Linux 5.4 and later); RcvSpaceBytes the receive-buffer space the
	// socket's own autotuning aims at (tcpi_rcv_space).
	SndWndBytes   uint32 `json:"snd_wnd"`
	RcvSpaceBytes uint32 `json:"rcv_space"`
	// BytesAcked counts the bytes the peer has acknowledged.
	BytesAcked uint64 `json:"bytes_acked"`
	// BytesRetrans counts the bytes retransmitted.
	BytesRetrans uint64 `json:"bytes_retrans"`
}

// Report is the JSON an Agent serves: the socket's latest TCP_INFO and the
// round-trip times of the last window.
type Report struct {
	// Time is when the agent made the report (its clock).
	Time time.Time `json:"time"`
	// Flow is the flow the agent reads.
	Flow proflow.FlowID `json:"flow"`
	// Window is the length of time the RTT summary covers, seconds.
	Window float64 `json:"window"`
	// Found says whether the latest poll found the socket; Info is that
	// poll's TCP_INFO (zero when not found).
	Found bool    `json:"found"`
	Info  TCPInfo `json:"info"`
	// Polls counts the polls of the window that found the socket;
	// Samples those among them that saw new data acknowledged since the
	// poll before (an RTT sample reached srtt in between).
	Polls   int `json:"polls"`
	Samples int `json:"samples"`
	// SmoothedRTT is the socket's srtt at the latest poll, seconds (zero
	// when it was not found).
	SmoothedRTT float64 `json:"srtt"`
	// RTTP99 is the 99th percentile (nearest rank) of the srtt values read
	// by the window's Samples polls, seconds; zero when there were none
	// (an idle flow acknowledges nothing).
	RTTP99 float64 `json:"rtt_p99"`
	// RTTP50 is the median of the same values.
	RTTP50 float64 `json:"rtt_p50"`
	// AppLimited is the share of the window's polls at which the sender
	// was application-limited: its latest delivery-rate sample was marked
	// so, or it had nothing in flight (the application had given TCP
	// nothing to send). Zero when no poll found the socket.
	AppLimited float64 `json:"app_limited"`
}

// sample is one poll that found the socket.
type sample struct {
	at    time.Time
	srtt  float64
	acked uint64 // BytesAcked, to tell a fresh RTT sample
	fresh bool
	// appLimited: the delivery-rate sample was app-limited or nothing was
	// in flight.
	appLimited bool
}

// Percentile returns the q-quantile (0 < q ≤ 1) of xs by nearest rank:
// the smallest value at least q of the values do not exceed. It returns 0
// for no values, and sorts xs in place.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 || !(q > 0) {
		return 0
	}
	slices.Sort(xs)
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// summarise fills the RTT fields of r from the samples of the window
// ending at r.Time.
func summarise(r *Report, window []sample, scratch []float64) []float64 {
	scratch = scratch[:0]
	r.Polls = len(window)
	limited := 0
	for _, s := range window {
		if s.fresh {
			scratch = append(scratch, s.srtt)
		}
		if s.appLimited {
			limited++
		}
	}
	r.AppLimited = 0
	if len(window) > 0 {
		r.AppLimited = float64(limited) / float64(len(window))
	}
	r.Samples = len(scratch)
	r.RTTP50 = Percentile(scratch, 0.5)
	r.RTTP99 = Percentile(scratch, 0.99)
	if r.Found {
		r.SmoothedRTT = r.Info.SRTT
	}
	return scratch
}
