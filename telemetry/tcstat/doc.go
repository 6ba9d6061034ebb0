// Package tcstat carries token-bucket overflow telemetry from Linux tc to a
// proflow controller: the overflow rate ξ_k of every aggregation switch,
// which OpenFlow statistics do not expose.
//
// # Agent
//
// An Agent runs on the machine whose interfaces carry the tc qdiscs (the
// aggregation uplinks). It reads each configured interface's root qdisc
// through rtnetlink — what tc itself asks the kernel, without running a
// process — and serves the counters over HTTP: bytes and packets sent,
// drops, overlimits and backlog. One read answers every request for
// AgentConfig.CacheFor (100 ms); requests arriving during a read share it.
// Serve runs an Agent on a listener until its context ends.
//
//	GET /v1/qdisc            every configured interface, as a Report (JSON)
//	GET /v1/qdisc?dev=a1-l4  one interface
//	GET /metrics             Prometheus text format, node_exporter's names
//
// /metrics carries node_qdisc_bytes_total, node_qdisc_packets_total,
// node_qdisc_drops_total, node_qdisc_overlimits_total, node_qdisc_backlog
// (bytes) and node_qdisc_current_queue_length (packets), each labelled
// {device, kind} as node_exporter's qdisc collector labels them, and
// proflow_tcstat_read_timestamp_seconds, the time of the read. With
// AgentConfig.Registerer set, the agent also exports its own metrics:
// proflow_tcstat_polls_total{result} (ok, error, joined: a recent read
// reused), proflow_tcstat_poll_duration_seconds and
// proflow_tcstat_http_requests_total{code}; every label value starts at 0.
//
// NewAgent reads once before it returns: an interface that does not exist
// (in AgentConfig.NetNS, when set) or has no root qdisc is refused then,
// with an error naming it. A read that fails later (a device deleted) is
// logged to AgentConfig.Logger; the client gets a 500 with a generic
// message, never the error itself.
//
// # Security
//
// The counters tell who congests which link, so the agent is meant for
// loopback or a management network. The proflow tcstat command listens on
// 127.0.0.1:9101 unless told otherwise. On a network, give the agent a
// bearer token (AgentConfig.Token; the command reads it from -token-file
// or the PROFLOW_TCSTAT_TOKEN environment variable, never from a flag
// value that ps would show), and serve TLS through a listener wrapped with
// ServerTLSConfig's settings, with a client CA to require client
// certificates. A request without the token gets 401; the token is
// compared in constant time. ClientConfig.Token and a transport with a
// tls.Config in ClientConfig.HTTPClient are the client's side.
//
// # Client
//
// A Client polls agents and turns the counters of two successive reports into
// rates. It reads an agent's JSON (FormatJSON) or any Prometheus text
// endpoint with the node_qdisc_* series (FormatPrometheus): proflow's
// agent, or node_exporter with its qdisc collector. It is a
// telemetry.Overlay: merged after a southbound's telemetry
// (telemetry.Merge), it fills Observation.Switches[k].OverflowRate and
// nothing else. The overflow rate of a switch is the sum over its interfaces
// of
//
//	ξ = Δoverlimits/Δt
//
// in tc overlimit events per second, the unit of
// proflow.SwitchSample.OverflowRate. tbf counts an overlimit each time an
// attempt to send its head packet finds too few tokens (after every enqueue
// and at every timer wake-up while it is throttled), so a saturated bucket
// reads a few events per packet it sends: at the paper's 200 Mbit/s, the
// scale of its 27,000 threshold (which the paper prints as "bytes/s"). The
// overlimits counter is 32 bits wide: a qdisc replaced (another kind or
// handle) or reset (its 64-bit bytes counter went down) counts from zero;
// otherwise an overlimits counter that goes backwards from the top half of
// its range has wrapped, and any other decrease is a reset too. A report
// with the time of the previous one is the agent's cached read again: the
// rates of the two newest distinct reads stand. A malformed or partial
// report (an interface missing), an HTTP error, a timeout, or a report
// whose time goes back or is older than ClientConfig.MaxAge is an error;
// stale ones wrap proflow.ErrStale.
//
// # Concurrency
//
// Agent and Client are safe for concurrent use.
package tcstat
