package tcstat

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Qdisc holds the counters of one qdisc as tc reports them.
type Qdisc struct {
	// Kind is the qdisc type, for example "tbf".
	Kind string `json:"kind"`
	// Handle is the qdisc handle, for example "8001:".
	Handle string `json:"handle"`
	// Bytes and Packets count what the qdisc sent.
	Bytes   uint64 `json:"bytes"`
	Packets uint64 `json:"packets"`
	// Drops counts packets dropped (queue full).
	Drops uint64 `json:"drops"`
	// Overlimits counts the times the qdisc was throttled: for tbf, a
	// packet found the bucket empty. A 32-bit counter in the kernel.
	Overlimits uint64 `json:"overlimits"`
	// BacklogBytes and BacklogPackets are the queue occupancy now.
	BacklogBytes   uint64 `json:"backlog_bytes"`
	BacklogPackets uint64 `json:"backlog_packets"`
}

// tcQdisc is one element of `tc -s -j qdisc show` output.
type tcQdisc struct {
	Kind       *string  `json:"kind"`
	Dev        string   `json:"dev"`
	Handle     string   `json:"handle"`
	Root       bool     `json:"root"`
	Bytes      *tcCount `json:"bytes"`
	Packets    *tcCount `json:"packets"`
	Drops      *tcCount `json:"drops"`
	Overlimits *tcCount `json:"overlimits"`
	Backlog    tcCount  `json:"backlog"`
	Qlen       tcCount  `json:"qlen"`
}

// tcCount is a counter as tc prints it, a bare JSON number, kept as its
// text so that a value past 2^53 keeps every digit (a float64 would round
// it). The zero value, a counter tc left out, reads 0.
type tcCount string

// UnmarshalJSON takes a JSON number, leaves c alone on null (as
// encoding/json does with a float64), and refuses any other value (a
// json.Number would take a quoted number too).
func (c *tcCount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return fmt.Errorf("counter %s, want a number", b)
	}
	*c = tcCount(b)
	return nil
}

// ParseTCAll decodes the output of `tc -s -j qdisc show` (every device) and
// returns the root qdisc counters by device name. It fails like ParseTC on a
// malformed root qdisc, and on a root qdisc without a device name.
func ParseTCAll(b []byte) (map[string]Qdisc, error) {
	var list []tcQdisc
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("tc output: %w", err)
	}
	out := make(map[string]Qdisc)
	for _, q := range list {
		if !q.Root {
			continue
		}
		if q.Dev == "" {
			return nil, fmt.Errorf("tc output: root qdisc without a device name")
		}
		v, err := rootQdisc(q)
		if err != nil {
			return nil, fmt.Errorf("tc output: device %s: %w", q.Dev, err)
		}
		out[q.Dev] = v
	}
	return out, nil
}

// ParseTC decodes the output of `tc -s -j qdisc show dev IFACE` and returns
// the counters of the device's root qdisc. It fails on malformed JSON, on
// output without a root qdisc, and on counters that are missing, negative
// or not integers.
func ParseTC(b []byte) (Qdisc, error) {
	var list []tcQdisc
	if err := json.Unmarshal(b, &list); err != nil {
		return Qdisc{}, fmt.Errorf("tc output: %w", err)
	}
	for _, q := range list {
		if !q.Root {
			continue
		}
		v, err := rootQdisc(q)
		if err != nil {
			return Qdisc{}, fmt.Errorf("tc output: %w", err)
		}
		return v, nil
	}
	return Qdisc{}, fmt.Errorf("tc output: %d qdiscs and no root qdisc", len(list))
}

func rootQdisc(q tcQdisc) (Qdisc, error) {
	if q.Kind == nil || *q.Kind == "" {
		return Qdisc{}, fmt.Errorf("root qdisc has no kind")
	}
	out := Qdisc{Kind: *q.Kind, Handle: q.Handle}
	for _, f := range [...]struct {
		name string
		v    *tcCount
		dst  *uint64
	}{{"bytes", q.Bytes, &out.Bytes}, {"packets", q.Packets, &out.Packets}, {"drops", q.Drops, &out.Drops},
		{"overlimits", q.Overlimits, &out.Overlimits}, {"backlog", &q.Backlog, &out.BacklogBytes}, {"qlen", &q.Qlen, &out.BacklogPackets}} {
		if f.v == nil {
			return Qdisc{}, fmt.Errorf("root qdisc %s has no %q counter", out.Kind, f.name)
		}
		v, err := f.v.counter(f.name)
		if err != nil {
			return Qdisc{}, fmt.Errorf("root qdisc %s: %w", out.Kind, err)
		}
		*f.dst = v
	}
	return out, nil
}

// counter returns c as the counter called name: an integer, exact up to
// 2^64-1, or a number in another notation (1e3, 5.0) that is one.
func (c tcCount) counter(name string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	if v, err := strconv.ParseUint(string(c), 10, 64); err == nil {
		return v, nil
	}
	v, err := strconv.ParseFloat(string(c), 64)
	if err != nil {
		return 0, fmt.Errorf("counter %s = %s, want a non-negative integer below 2^64", name, c)
	}
	return counter(name, v)
}

// counter returns v as the counter called name, refusing a negative,
// fractional or non-finite value and one of 2^64 or more.
func counter(name string, v float64) (uint64, error) {
	if v < 0 || v != math.Trunc(v) || v >= 1<<64 || math.IsNaN(v) {
		return 0, fmt.Errorf("counter %s = %v, want a non-negative integer below 2^64", name, v)
	}
	return uint64(v), nil
}
