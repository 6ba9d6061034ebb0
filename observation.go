package proflow

import (
	"fmt"
	"math"
	"time"
)

// SwitchSample holds the telemetry of one aggregation switch k over the last
// interval (x_agg of the paper's App. A).
type SwitchSample struct {
	// TxRate is ρ_k, the transmit rate of the switch's uplinks, bytes/s.
	TxRate float64 `json:"tx_rate"`
	// OverflowRate is ξ_k, the token-bucket overflow rate: tc "overlimits"
	// events per second on the switch's bucketed uplinks (the paper's App.
	// A; its App. E prints the same numbers as "bytes/s", which is why the
	// reactive threshold 27,000 and the probes use that label).
	OverflowRate float64 `json:"overflow_rate"`
	// FlowCount is n_k, the number of active flows through the switch, counted
	// as flow-table entries (one per direction of a connection; see the
	// southbound documentation for the exact definition).
	FlowCount float64 `json:"flow_count"`
	// ElephantRate is e_k, the summed rate of the elephant flows through the
	// switch, bytes/s.
	ElephantRate float64 `json:"elephant_rate"`
	// QueueBytes is the backlog waiting on the switch's bucketed uplinks at
	// the end of the interval, bytes: the sum over its uplinks of tc's qdisc
	// "backlog" (a gauge, read as node_exporter's node_qdisc_backlog). Zero
	// means empty or unknown: a source that cannot read queues leaves it 0.
	QueueBytes float64 `json:"queue_bytes,omitempty"`
}

// LeafSample holds the telemetry of one congestion leaf ℓ ∈ L (x_leaf, App. A).
type LeafSample struct {
	// IngressRate is λ_ℓ, the rate at which congestion traffic enters the
	// leaf from its hosts, bytes/s.
	IngressRate float64 `json:"ingress_rate"`
	// TransmitRate is μ_ℓ, the leaf's transmit rate toward the aggregation
	// layer, bytes/s.
	TransmitRate float64 `json:"transmit_rate"`
}

// FlowSample holds what telemetry sees of the protected flow and of the
// congestion traffic as a whole (x_flow, App. A).
type FlowSample struct {
	// Throughput is φ_t, the protected flow's realised throughput, bytes/s
	// of payload (goodput) where the source can tell, else of frames.
	Throughput float64 `json:"throughput"`
	// CongestionRate is F_t, the aggregate rate of congestion flows, bytes/s.
	CongestionRate float64 `json:"congestion_rate"`

	// The protected flow's latency over the interval, seconds. Zero means
	// unset: the source cannot tell (a byte counter sees no round trips), or
	// the flow had no sample of that kind in the interval (an idle flow
	// acknowledges nothing; a bulk flow completes no requests). The state
	// encoder does not read them.

	// SmoothedRTT is the protected flow's smoothed round-trip time at the end
	// of the interval as its sender's TCP stack keeps it (Linux srtt, what
	// ss -ti reports as rtt), seconds.
	SmoothedRTT float64 `json:"srtt,omitempty"`
	// RTTP99 is the 99th percentile of the round-trip times the sender
	// measured during the interval, seconds.
	RTTP99 float64 `json:"rtt_p99,omitempty"`
	// CompletionP99 is, for request/response traffic, the 99th percentile of
	// the completion times of the requests of the interval (from when a
	// request is issued to when its last byte is delivered), seconds. A
	// source may count a request still outstanding at the end of the
	// interval with its age so far, a lower bound, so that a stall shows in
	// the interval it happens in.
	CompletionP99 float64 `json:"completion_p99,omitempty"`
	// Completions is the number of requests completed during the interval
	// (request/response traffic).
	Completions float64 `json:"completions,omitempty"`
	// AppLimited is the fraction of the interval, in [0, 1], during which
	// the protected flow's sender had less to send than TCP would have
	// sent: the application, not the network, set its rate (Linux marks
	// such delivery-rate samples tcpi_delivery_rate_app_limited). A
	// backlogged bulk transfer reads 0; an idle request/response flow or
	// a video below its path's capacity reads near 1. Zero also means
	// unknown: a source that cannot tell leaves it 0.
	AppLimited float64 `json:"app_limited,omitempty"`
}

// Observation is one telemetry sample o_t of the whole fabric. Switches and
// Leaves are indexed like Topology.Switches and Topology.Leaves.
//
// A Telemetry fills an Observation the controller owns and reuses, so that a
// steady-state loop does not allocate: implementations should write into the
// existing slices (see Resize).
type Observation struct {
	// Time is when the sample was taken. The controller refuses samples older
	// than Config.MaxSampleAge as stale, and samples dated more than
	// Config.MaxClockSkew after its clock's now as invalid.
	Time     time.Time      `json:"time"`
	Switches []SwitchSample `json:"switches"`
	Leaves   []LeafSample   `json:"leaves"`
	Flow     FlowSample     `json:"flow"`

	// FlowIDs and Flows are the multi-flow extension: a controller that
	// protects several flows lists them in FlowIDs before it calls
	// Telemetry.Collect, and the Telemetry writes the sample of FlowIDs[i]
	// into Flows[i] (Flows has len(FlowIDs); CongestionRate is the same
	// fabric-wide F_t in each). Both are empty for the single-flow
	// controller, which reads Flow. Resize keeps FlowIDs and marks every
	// entry of Flows unset (both rates a NaN of proflow's own), so that
	// Validate and the controller name a flow whose sample the Telemetry did
	// not write — a single-flow Telemetry writes Flow only — instead of
	// reading it as a flow with no throughput.
	FlowIDs []FlowID     `json:"flow_ids,omitempty"`
	Flows   []FlowSample `json:"flows,omitempty"`
}

// unsetBits is the NaN that Resize writes into both rates of every entry
// of Flows: a quiet NaN with a payload no arithmetic produces.
const unsetBits = 0x7ff8_0000_5e7f_10a7

// unsetFlow is the FlowSample that Resize writes into Flows.
var unsetFlow = FlowSample{Throughput: math.Float64frombits(unsetBits), CongestionRate: math.Float64frombits(unsetBits)}

// isUnset reports whether v is the NaN that marks a rate Resize left unset.
func isUnset(v float64) bool { return math.Float64bits(v) == unsetBits }

// IsUnset reports whether f is, in whole or in part, as Observation.Resize
// left it: a rate the Telemetry did not write.
func (f FlowSample) IsUnset() bool { return isUnset(f.Throughput) || isUnset(f.CongestionRate) }

// Resize sets the lengths of Switches and Leaves for the topology and that
// of Flows for FlowIDs, reusing their storage, zeroes every field, and marks
// every entry of Flows unset (see FlowIDs).
func (o *Observation) Resize(t Topology) {
	o.Switches = resize(o.Switches, t.NumSwitches())
	o.Leaves = resize(o.Leaves, t.NumLeaves())
	o.Time = time.Time{}
	o.Flow = FlowSample{}
	o.Flows = resize(o.Flows, len(o.FlowIDs))
	for i := range o.Flows {
		o.Flows[i] = unsetFlow
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		s = make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// CopyFrom makes o a deep copy of src, reusing o's storage.
func (o *Observation) CopyFrom(src *Observation) {
	o.Time = src.Time
	o.Flow = src.Flow
	o.Switches = append(o.Switches[:0], src.Switches...)
	o.Leaves = append(o.Leaves[:0], src.Leaves...)
	o.FlowIDs = append(o.FlowIDs[:0], src.FlowIDs...)
	o.Flows = append(o.Flows[:0], src.Flows...)
}

// Clone returns a deep copy of o.
func (o *Observation) Clone() *Observation {
	c := new(Observation)
	c.CopyFrom(o)
	return c
}

// Validate checks o against the topology: one sample per aggregation switch
// and per congestion leaf, a timestamp, and every rate and count finite and
// non-negative. The error is an *InvalidObservationError naming the field.
func (o *Observation) Validate(t Topology) error {
	if o.Time.IsZero() {
		return &InvalidObservationError{Field: "time", Problem: "unset, want the sampling time"}
	}
	if len(o.Switches) != t.NumSwitches() {
		return &InvalidObservationError{Field: "switches",
			Problem: fmt.Sprintf("%d samples, want one per aggregation switch (%d)", len(o.Switches), t.NumSwitches()),
			Err:     ErrMissingSwitch}
	}
	if len(o.Leaves) != t.NumLeaves() {
		return &InvalidObservationError{Field: "leaves",
			Problem: fmt.Sprintf("%d samples, want one per congestion leaf (%d)", len(o.Leaves), t.NumLeaves())}
	}
	for k, s := range o.Switches {
		name := t.Switches[k]
		if err := checkValue("switches", name, "tx_rate", s.TxRate); err != nil {
			return err
		}
		if err := checkValue("switches", name, "overflow_rate", s.OverflowRate); err != nil {
			return err
		}
		if err := checkValue("switches", name, "flow_count", s.FlowCount); err != nil {
			return err
		}
		if err := checkValue("switches", name, "elephant_rate", s.ElephantRate); err != nil {
			return err
		}
		if err := checkValue("switches", name, "queue_bytes", s.QueueBytes); err != nil {
			return err
		}
	}
	for l, s := range o.Leaves {
		name := t.Leaves[l]
		if err := checkValue("leaves", name, "ingress_rate", s.IngressRate); err != nil {
			return err
		}
		if err := checkValue("leaves", name, "transmit_rate", s.TransmitRate); err != nil {
			return err
		}
	}
	if err := checkValue("flow", "", "throughput", o.Flow.Throughput); err != nil {
		return err
	}
	if err := checkValue("flow", "", "congestion_rate", o.Flow.CongestionRate); err != nil {
		return err
	}
	if err := checkLatency("flow", "", &o.Flow); err != nil {
		return err
	}
	if len(o.Flows) != len(o.FlowIDs) {
		return &InvalidObservationError{Field: "flows",
			Problem: fmt.Sprintf("%d samples, want one per protected flow in flow_ids (%d)", len(o.Flows), len(o.FlowIDs))}
	}
	for i := range o.Flows {
		if err := checkFlow(o, i); err != nil {
			return err
		}
	}
	return nil
}

// checkFlow checks the sample Flows[i] of FlowIDs[i].
func checkFlow(o *Observation, i int) error {
	f := o.Flows[i]
	if f.Throughput >= 0 && !isInf(f.Throughput) && f.CongestionRate >= 0 && !isInf(f.CongestionRate) && checkLatency("", "", &f) == nil {
		return nil // the common case, without formatting the flow's name
	}
	name := o.FlowIDs[i].String()
	if isUnset(f.Throughput) && isUnset(f.CongestionRate) {
		return &InvalidObservationError{Field: fmt.Sprintf("flows[%d] (%s)", i, name), Problem: fmt.Sprintf(
			"unset, want the Telemetry to write the sample of flow_ids[%d] into Flows[%d] (a single-flow Telemetry writes Flow only)", i, i)}
	}
	if err := checkValue("flows", name, "throughput", f.Throughput); err != nil {
		return err
	}
	if err := checkValue("flows", name, "congestion_rate", f.CongestionRate); err != nil {
		return err
	}
	return checkLatency("flows", name, &f)
}

// checkLatency checks the latency fields of a flow sample: finite and
// non-negative, zero (unset) accepted.
func checkLatency(group, name string, f *FlowSample) error {
	if err := checkValue(group, name, "srtt", f.SmoothedRTT); err != nil {
		return err
	}
	if err := checkValue(group, name, "rtt_p99", f.RTTP99); err != nil {
		return err
	}
	if err := checkValue(group, name, "completion_p99", f.CompletionP99); err != nil {
		return err
	}
	if err := checkValue(group, name, "completions", f.Completions); err != nil {
		return err
	}
	if f.AppLimited > 1 {
		field := group + "." + "app_limited"
		if name != "" {
			field = group + "[" + name + "].app_limited"
		}
		return &InvalidObservationError{Field: field, Problem: fmt.Sprintf("%v, want a fraction in [0, 1]", f.AppLimited)}
	}
	return checkValue(group, name, "app_limited", f.AppLimited)
}

// checkValue builds the field name only on the error path, keeping the
// steady-state loop free of allocations.
func checkValue(group, name, field string, v float64) error {
	if v >= 0 && !math.IsInf(v, 1) {
		return nil
	}
	if name != "" {
		field = group + "[" + name + "]." + field
	} else {
		field = group + "." + field
	}
	switch {
	case isUnset(v):
		return &InvalidObservationError{Field: field, Problem: "unset, want the Telemetry to write it"}
	case math.IsNaN(v):
		return &InvalidObservationError{Field: field, Problem: "NaN, want a finite non-negative number"}
	case math.IsInf(v, 0):
		return &InvalidObservationError{Field: field, Problem: fmt.Sprintf("%v, want a finite non-negative number", v)}
	case v < 0:
		return &InvalidObservationError{Field: field, Problem: fmt.Sprintf("%v is negative, want a finite non-negative number", v)}
	}
	return nil
}

func isInf(v float64) bool { return math.IsInf(v, 0) }
