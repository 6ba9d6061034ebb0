// Package tcstat carries token-bucket overflow telemetry from Linux tc to a
// proflow controller: the overflow rate ξ_k of every aggregation switch,
// which OpenFlow statistics do not expose.
//
// # Agent
//
// An Agent runs on the machine whose interfaces carry the tc qdiscs (the
// aggregation uplinks). It runs `tc -s -j qdisc show` once per request and serves the root qdisc's counters
// as JSON (a Report) over HTTP: bytes and packets sent, drops, overlimits and
// backlog. Serve runs an Agent on a listener until its context ends.
//
//	GET /v1/qdisc            every configured interface
//	GET /v1/qdisc?dev=a1-l4  one interface
//
// # Client
//
// A Client polls agents and turns the counters of two successive reports into
// rates. It is a telemetry.Overlay: merged after a southbound's telemetry
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
// overlimits counter is 32 bits wide: one that goes backwards from the top
// half of its range has wrapped, any other decrease is a reset (the qdisc
// was replaced) and counts from zero. A malformed
// or partial report (an interface
// missing), an HTTP error, a timeout, or a report whose time does not advance
// or is older than ClientConfig.MaxAge is an error; stale ones wrap
// proflow.ErrStale.
//
// # Concurrency
//
// Agent and Client are safe for concurrent use.
package tcstat
