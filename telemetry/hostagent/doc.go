// Package hostagent carries the protected flow's round-trip times from the
// sending host's TCP stack to a proflow controller: what the switches'
// counters cannot see (proflow.FlowSample's SmoothedRTT and RTTP99), and
// whether its application or the network set its rate (AppLimited).
//
// # Agent
//
// An Agent runs on the host (or in the network namespace) of the
// protected flow's sender. Every Config.PollInterval (10 ms) it reads the
// TCP_INFO of the flow's socket, chosen by its 5-tuple (Config.Flow: local
// Src:SrcPort, remote Dst:DstPort), over inet_diag netlink — what ss -ti
// asks the kernel, without running a process — and keeps the polls of the
// last Config.Window (500 ms, the controller's interval). The congestion
// control's name comes from INET_DIAG_CONG, asked once per connection.
// Serve answers over HTTP:
//
//	GET /v1/flow   a Report (JSON): the latest TCP_INFO and the window's RTTs
//	GET /metrics   the same in the Prometheus text format
//
// A Report's round-trip times are exactly these:
//
//   - SmoothedRTT: the socket's srtt (tcpi_rtt, the kernel's EWMA of its
//     RTT samples with gain 1/8) at the latest poll; zero when the socket
//     does not exist.
//   - RTTP99 (and RTTP50): the 99th percentile (median), by nearest rank,
//     of the srtt values read by the window's polls that saw new data
//     acknowledged since the poll before (tcpi_bytes_acked grew: an ACK
//     of new data is what feeds srtt). Polls of an idle socket repeat the
//     last srtt and do not count; a window without any gives zero. It is a
//     percentile of srtt sampled every PollInterval, not of the kernel's
//     per-ACK RTT samples, which TCP_INFO does not expose: srtt smooths
//     them, so a single slow ACK moves it by an eighth of the excess, and
//     RTTP99 understates the spikes a per-packet percentile would show.
//   - AppLimited: the share of the window's polls at which the sender
//     was application-limited: its latest delivery-rate sample carried
//     tcpi_delivery_rate_app_limited, or nothing was in flight
//     (tcpi_unacked 0: the application had given TCP nothing to send).
//     A request/response or rate-limited flow the fabric serves reads
//     near 1 whatever its throughput; a backlogged or starved one 0.
//
// /metrics carries proflow_tcp_srtt_seconds, _rttvar_seconds,
// _min_rtt_seconds, _rto_seconds, _retransmits,
// _retransmitted_segments_total, _lost_segments, _unacked_segments,
// _delivery_rate_bytes_per_second, _pacing_rate_bytes_per_second,
// _cwnd_segments, _ssthresh_segments, _snd_wnd_bytes, _rcv_space_bytes,
// _acked_bytes_total, _retransmitted_bytes_total, the window's
// proflow_tcp_window_rtt_p99_seconds, _rtt_p50_seconds, _rtt_samples and
// _app_limited_ratio,
// and proflow_tcp_info{state,congestion_control} 1, each labelled
// {src,dst,sport,dport} as node_exporter labels its series, while the
// socket exists; proflow_hostagent_socket_found (0 or 1) and
// proflow_hostagent_report_timestamp_seconds always. With
// Config.Registerer set the agent also exports
// proflow_hostagent_polls_total{result} (ok, missing, error),
// proflow_hostagent_poll_duration_seconds and
// proflow_hostagent_http_requests_total{code}.
//
// A socket that does not exist is not an error (a connection comes and
// goes): the report says Found false. A read that fails is logged to
// Config.Logger and counted. Each poll dumps the TCP sockets of the
// namespace (the library call has no filter) — for an IPv4 flow the
// AF_INET ones, then the AF_INET6 ones when none matched, since a
// dual-stack socket on v4-mapped addresses is one of those — and asks the
// flow's socket once more for its raw tcp_info, whose
// tcpi_delivery_rate_app_limited the library misreads. That costs little
// in a host's namespace of a few sockets and more on a busy server: raise
// PollInterval there.
//
// # Security
//
// The agent listens on loopback (DefaultListen) unless told otherwise.
// Beyond it, set Config.Token (the proflow hostagent command reads it from
// -token-file or PROFLOW_HOSTAGENT_TOKEN) and wrap the listener for TLS
// (tcstat.ServerTLSConfig makes the settings). A request without the token
// gets 401; the token is compared in constant time.
//
// # Client
//
// A Client fetches an agent's report and is a telemetry.Overlay: merged
// after another Telemetry (Wrap, or telemetry.Merge), it writes
// SmoothedRTT, RTTP99 and AppLimited into the flow's FlowSample and
// nothing else. A
// report of another flow, a malformed one and one older than
// ClientConfig.MaxAge (an error wrapping proflow.ErrStale) are errors.
//
// # Concurrency
//
// Agent and Client are safe for concurrent use; an Agent's Run and Poll
// may run beside its HTTP handlers. Close an Agent after Run has returned.
package hostagent
