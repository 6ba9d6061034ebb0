package sim

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow"
)

// Config describes the simulated fabric: its shape, its links and shapers,
// the TCP model and the telemetry. Start from DefaultConfig, which is the
// paper's testbed; see the package documentation for what every parameter
// does in the model and why it has its default.
//
// Rates are in bytes per second of Ethernet frames (1514 bytes for a
// full-size packet, as tc and OpenFlow counters count them) unless a field
// says otherwise; sizes are in bytes.
type Config struct {
	// Name names the profile this configuration is (testbed, datacenter,
	// or a user's own); models, datasets and reports record it beside the
	// configuration's Digest. It does not change the simulation.
	Name string `json:"name,omitempty"`

	// Switches is the number of aggregation switches, named agg1, agg2, …
	Switches int `json:"switches"`
	// Leaves is the number of leaf switches, named leaf1, leaf2, …
	Leaves int `json:"leaves"`
	// HostsPerLeaf is the number of hosts on each leaf. Hosts are named h1,
	// h2, … in leaf order (h1 and h2 on leaf1 by default) and have the
	// addresses 10.0.0.1, 10.0.0.2, …
	HostsPerLeaf int `json:"hosts_per_leaf"`
	// CongestionLeaves lists the leaves that form L, the leaves whose
	// telemetry the controller reads, as 0-based indices in the order of
	// proflow.Topology.Leaves.
	CongestionLeaves []int `json:"congestion_leaves"`
	// ProtectedSrc and ProtectedDst name the hosts of the protected flow f_p.
	ProtectedSrc string `json:"protected_src"`
	ProtectedDst string `json:"protected_dst"`
	// CongestionSink names the host congesters send to unless a scenario
	// says otherwise (an iperf3 server).
	CongestionSink string `json:"congestion_sink"`

	// HostLinkRate is the capacity of every host access link, each way
	// (1 Gbit/s by default).
	HostLinkRate float64 `json:"host_link_rate"`
	// HostQueueLimit is the drop-tail queue of a host link, bytes.
	HostQueueLimit float64 `json:"host_queue_limit"`
	// FabricLinkRate is the capacity of the leaf–aggregation links. They are
	// not queues of their own: a shaped uplink passes traffic at up to this
	// rate while its bucket holds tokens.
	FabricLinkRate float64 `json:"fabric_link_rate"`

	// BucketRate is the token rate C of every aggregation uplink's bucket.
	BucketRate float64 `json:"bucket_rate"`
	// BucketBurst is the bucket depth (tc tbf burst), bytes. It is the
	// reserve whose draining makes the precursor window.
	BucketBurst float64 `json:"bucket_burst"`
	// BucketQueueLimit is the uplink's shared drop-tail queue (tc tbf
	// limit), bytes.
	BucketQueueLimit float64 `json:"bucket_queue_limit"`
	// FlowRateLimit is the per-flow pacing rate of every uplink (tc fq
	// maxrate): no single TCP connection leaves an uplink faster. 0 turns
	// per-flow pacing off.
	FlowRateLimit float64 `json:"flow_rate_limit"`
	// FlowQueueLimit is the per-flow pacing queue (tc fq flow_limit), bytes.
	FlowQueueLimit float64 `json:"flow_queue_limit"`

	// UncountedRate, when positive, puts a second token bucket on every
	// aggregation uplink, between the per-flow pacing and the counted
	// bucket: a rate limit that tc does not count (a hypothesis of the
	// testbed profile; see the package documentation). Its token rate is
	// UncountedRate, its depth UncountedBurst and its drop-tail queue
	// UncountedQueueLimit; it adds no overlimit events. 0 turns it off.
	UncountedRate float64 `json:"uncounted_rate,omitempty"`
	// UncountedBurst is the depth of the uncounted bucket, bytes.
	UncountedBurst float64 `json:"uncounted_burst,omitempty"`
	// UncountedQueueLimit is the drop-tail queue of the uncounted stage,
	// bytes.
	UncountedQueueLimit float64 `json:"uncounted_queue_limit,omitempty"`

	// BaseRTT is the round-trip propagation and processing delay between any
	// two hosts on different leaves, without queueing.
	BaseRTT time.Duration `json:"base_rtt"`
	// RTTJitter is the relative spread of the per-step processing delay
	// added to BaseRTT (host and virtual-switch scheduling): each step the
	// propagation part of a connection's RTT is BaseRTT × (1 ± RTTJitter),
	// uniformly. It keeps TCP's sawtooth from locking to the sampling clock.
	RTTJitter float64 `json:"rtt_jitter"`
	// RTOMin is TCP's minimum retransmission timeout (Linux: 200 ms).
	RTOMin time.Duration `json:"rto_min"`
	// RTOMax caps the exponential back-off of the retransmission timer.
	RTOMax time.Duration `json:"rto_max"`
	// SYNTimeout is the first retransmission timeout of a lost SYN (1 s).
	SYNTimeout time.Duration `json:"syn_timeout"`
	// InitialWindow is TCP's initial congestion window, packets.
	InitialWindow float64 `json:"initial_window"`
	// PacketSize is the size of a full-size packet on the wire, bytes.
	PacketSize float64 `json:"packet_size"`
	// MSS is the TCP payload of a full-size packet, bytes; the protected
	// flow's throughput is reported as payload (goodput), like iperf3.
	MSS float64 `json:"mss"`
	// RerouteWindowFactor multiplies the congestion window of a connection
	// whose path moves to another switch: packets on the old and the new
	// path arrive out of order, the receiver sends duplicate ACKs and the
	// sender takes the reordering for a loss.
	RerouteWindowFactor float64 `json:"reroute_window_factor"`
	// RerouteTimeout makes a move cost a connection its window in flight:
	// the packets on the old path are lost, no duplicate ACK comes back, and
	// the sender waits for its retransmission timeout and restarts in slow
	// start (a hypothesis of the testbed profile). When false a move is a
	// reordering, handled as RerouteWindowFactor says.
	RerouteTimeout bool `json:"reroute_timeout,omitempty"`
	// ReceiveWindow caps every connection's window, bytes (the receiver's
	// advertised window); a connection at the cap does not grow its
	// congestion window (cwnd validation). 0: no cap.
	ReceiveWindow float64 `json:"receive_window,omitempty"`
	// CubicResetOnTimeout makes a retransmission timeout reset CUBIC's
	// state, as Linux does on entering the loss state: the window before
	// the timeout is forgotten, so growth after slow start is CUBIC's convex
	// probing from the new window rather than a return to the old maximum.
	CubicResetOnTimeout bool `json:"cubic_reset_on_timeout,omitempty"`
	// HyStartAckTrain adds HyStart's ACK-train test to slow start (Linux
	// CUBIC): slow start ends once a window's ACKs, spaced by the path's
	// bottleneck, span half the base round-trip time.
	HyStartAckTrain bool `json:"hystart_ack_train,omitempty"`
	// StreamsPerCongester is the number of parallel TCP streams of a
	// congester host when a scenario does not say (iperf3 -P).
	StreamsPerCongester int `json:"streams_per_congester"`

	// Step is the simulation time step.
	Step time.Duration `json:"step"`
	// Interval is the telemetry sampling interval (the controller's): a
	// multiple of Step, at most MaxStepsPerInterval steps.
	Interval time.Duration `json:"interval"`
	// ControllerWarmup is how long the protected flow's TCP takes to reach
	// its rate alone on this profile's paths. Simulated episodes
	// (RunEpisode) start the controller's baseline phase after it
	// (proflow.Config.BaselineWarmup = ControllerWarmup / Interval
	// samples), and training skips it, so that the per-episode baseline is
	// the flow's rate, not its ramp-up. It must be a multiple of Interval.
	ControllerWarmup time.Duration `json:"controller_warmup"`
	// NoiseLevel is the relative standard deviation of the measurement
	// noise on every rate and overflow reading (0.02 = 2%). Flow counts are
	// exact: they are read from flow tables.
	NoiseLevel float64 `json:"noise_level"`
	// ElephantFraction: a host pair whose rate over the interval exceeds
	// this fraction of BucketRate is an elephant.
	ElephantFraction float64 `json:"elephant_fraction"`
	// Epoch is the virtual wall-clock time at which every episode starts.
	Epoch time.Time `json:"epoch"`
}

// defaultEpoch is the virtual time at which simulated episodes start.
var defaultEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// DefaultConfig returns the datacenter profile: the paper's testbed
// topology (four aggregation switches, four leaves with two hosts each,
// congesters on the first three leaves, the protected flow from h1 (leaf1)
// to h8 (leaf4), congesters sending to h7, 200 Mbit/s buckets on the
// aggregation uplinks) with datacenter round-trip times. TestbedConfig
// derives the testbed profile from it. The parameter values and the
// reasons for them are in the package documentation.
func DefaultConfig() Config {
	return Config{
		Name:             ProfileDatacenter,
		Switches:         4,
		Leaves:           4,
		HostsPerLeaf:     2,
		CongestionLeaves: []int{0, 1, 2},
		ProtectedSrc:     "h1",
		ProtectedDst:     "h8",
		CongestionSink:   "h7",

		HostLinkRate:   1e9 / 8,
		HostQueueLimit: 1000 * 1514,
		FabricLinkRate: 10e9 / 8,

		BucketRate:       200e6 / 8,
		BucketBurst:      1.85e9,
		BucketQueueLimit: 100 * 1514,
		FlowRateLimit:    200e6 / 8,
		FlowQueueLimit:   22 * 1514,

		BaseRTT:             5 * time.Millisecond,
		RTTJitter:           0.1,
		RTOMin:              200 * time.Millisecond,
		RTOMax:              60 * time.Second,
		SYNTimeout:          time.Second,
		InitialWindow:       10,
		PacketSize:          1514,
		MSS:                 1448,
		RerouteWindowFactor: 0.5,
		StreamsPerCongester: 8,

		Step:             5 * time.Millisecond,
		Interval:         proflow.DefaultInterval,
		ControllerWarmup: 4 * proflow.DefaultInterval,
		NoiseLevel:       0.02,
		ElephantFraction: 0.1,
		Epoch:            defaultEpoch,
	}
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Switches < 2 || c.Switches > MaxSwitches {
		add("switches %d, want 2..%d", c.Switches, MaxSwitches)
	}
	if c.Leaves < 2 || c.Leaves > MaxLeaves {
		add("leaves %d, want 2..%d", c.Leaves, MaxLeaves)
	}
	if c.HostsPerLeaf < 1 || c.HostsPerLeaf > maxHosts {
		add("hosts_per_leaf %d, want 1..%d", c.HostsPerLeaf, maxHosts)
	}
	seen := make([]bool, min(max(c.Leaves, 0), MaxLeaves))
	for i, l := range c.CongestionLeaves {
		switch {
		case l < 0 || l >= len(seen):
			add("congestion_leaves[%d] = %d, want a leaf index in 0..%d", i, l, c.Leaves-1)
		case seen[l]:
			add("congestion_leaves[%d] = %d repeats a leaf", i, l)
		default:
			seen[l] = true
		}
	}
	hosts := min(c.Leaves, MaxLeaves) * min(c.HostsPerLeaf, maxHosts)
	src, errSrc := c.hostIndex(c.ProtectedSrc)
	dst, errDst := c.hostIndex(c.ProtectedDst)
	if errSrc != nil {
		add("protected_src: %v", errSrc)
	}
	if errDst != nil {
		add("protected_dst: %v", errDst)
	}
	if errSrc == nil && errDst == nil && c.HostsPerLeaf > 0 && src/c.HostsPerLeaf == dst/c.HostsPerLeaf {
		add("protected flow %s->%s stays on one leaf, want hosts on different leaves", c.ProtectedSrc, c.ProtectedDst)
	}
	if _, err := c.hostIndex(c.CongestionSink); err != nil {
		add("congestion_sink: %v", err)
	}
	if hosts > maxHosts {
		add("%d hosts, want at most %d (addresses 10.0.0.1..%d)", hosts, maxHosts, maxHosts)
	}
	for _, f := range [...]struct {
		name string
		v    float64
	}{
		{"host_link_rate", c.HostLinkRate}, {"host_queue_limit", c.HostQueueLimit},
		{"fabric_link_rate", c.FabricLinkRate}, {"bucket_rate", c.BucketRate},
		{"bucket_queue_limit", c.BucketQueueLimit}, {"initial_window", c.InitialWindow},
		{"packet_size", c.PacketSize}, {"mss", c.MSS}, {"reroute_window_factor", c.RerouteWindowFactor},
		{"elephant_fraction", c.ElephantFraction},
	} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			add("%s %v, want a positive finite number", f.name, f.v)
		}
	}
	for _, f := range [...]struct {
		name string
		v    float64
	}{{"bucket_burst", c.BucketBurst}, {"flow_rate_limit", c.FlowRateLimit}, {"flow_queue_limit", c.FlowQueueLimit}, {"noise_level", c.NoiseLevel}, {"rtt_jitter", c.RTTJitter},
		{"uncounted_rate", c.UncountedRate}, {"uncounted_burst", c.UncountedBurst}, {"uncounted_queue_limit", c.UncountedQueueLimit}, {"receive_window", c.ReceiveWindow}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			add("%s %v, want a finite number >= 0", f.name, f.v)
		}
	}
	if c.MSS > c.PacketSize {
		add("mss %v larger than packet_size %v", c.MSS, c.PacketSize)
	}
	if c.RerouteWindowFactor > 1 {
		add("reroute_window_factor %v, want at most 1", c.RerouteWindowFactor)
	}
	if c.ElephantFraction >= 1 {
		add("elephant_fraction %v, want below 1", c.ElephantFraction)
	}
	if c.RTTJitter >= 1 {
		add("rtt_jitter %v, want below 1", c.RTTJitter)
	}
	if c.NoiseLevel > 0.5 {
		add("noise_level %v, want at most 0.5", c.NoiseLevel)
	}
	if c.FabricLinkRate < c.BucketRate {
		add("fabric_link_rate %v below bucket_rate %v", c.FabricLinkRate, c.BucketRate)
	}
	if c.PacketSize > 0 && c.BucketQueueLimit < c.PacketSize {
		add("bucket_queue_limit %v smaller than one packet (%v)", c.BucketQueueLimit, c.PacketSize)
	}
	if c.PacketSize > 0 && c.FlowRateLimit > 0 && c.FlowQueueLimit < c.PacketSize {
		add("flow_queue_limit %v smaller than one packet (%v)", c.FlowQueueLimit, c.PacketSize)
	}
	if c.UncountedRate > 0 && c.PacketSize > 0 && c.UncountedQueueLimit < c.PacketSize {
		add("uncounted_queue_limit %v smaller than one packet (%v), want a queue when uncounted_rate is set", c.UncountedQueueLimit, c.PacketSize)
	}
	if c.UncountedRate > c.FabricLinkRate {
		add("uncounted_rate %v above fabric_link_rate %v", c.UncountedRate, c.FabricLinkRate)
	}
	if c.ReceiveWindow > 0 && c.ReceiveWindow < 2*c.PacketSize {
		add("receive_window %v smaller than two packets (%v), want 0 (no cap) or at least two packets", c.ReceiveWindow, 2*c.PacketSize)
	}
	if c.StreamsPerCongester < 1 || c.StreamsPerCongester > MaxStreams {
		add("streams_per_congester %d, want 1..%d", c.StreamsPerCongester, MaxStreams)
	}
	if c.Step <= 0 {
		add("step %v, want a positive duration", c.Step)
	}
	if c.BaseRTT < c.Step {
		add("base_rtt %v shorter than the step %v, want at least one step", c.BaseRTT, c.Step)
	}
	if c.Interval <= 0 || (c.Step > 0 && c.Interval%c.Step != 0) {
		add("interval %v, want a positive multiple of the step %v", c.Interval, c.Step)
	} else if c.Step > 0 && c.Interval/c.Step > MaxStepsPerInterval {
		add("interval %v is %d steps of %v, want at most %d (sim.MaxStepsPerInterval): a longer step or a shorter interval",
			c.Interval, int64(c.Interval/c.Step), c.Step, MaxStepsPerInterval)
	}
	if c.ControllerWarmup < 0 || (c.Interval > 0 && c.ControllerWarmup%c.Interval != 0) {
		add("controller_warmup %v, want a multiple of the interval %v (0 or more)", c.ControllerWarmup, c.Interval)
	}
	if c.RTOMin <= 0 || c.RTOMax < c.RTOMin {
		add("rto_min %v and rto_max %v, want 0 < rto_min <= rto_max", c.RTOMin, c.RTOMax)
	}
	if c.SYNTimeout <= 0 {
		add("syn_timeout %v, want a positive duration", c.SYNTimeout)
	}
	if c.Epoch.IsZero() {
		add("epoch unset, want the virtual start time")
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sim: invalid config: %w", err)
	}
	return nil
}

// MaxSwitches and MaxLeaves bound a fabric's aggregation switches and
// leaves (checked before anything is allocated for them).
const (
	MaxSwitches = 64
	MaxLeaves   = 250
)

// MaxStepsPerInterval bounds the engine steps in one control interval
// (Interval/Step; the defaults take 100): a fabric holds every step's RTT
// sample of an interval for each protected flow, and runs that many steps
// per sample.
const MaxStepsPerInterval = 10_000

// maxHosts is the most hosts a fabric can address (10.0.0.1–250).
const maxHosts = 250

// MaxStreams is the most parallel TCP streams one congester may run.
const MaxStreams = 128

// Topology returns the proflow topology of the fabric: the aggregation
// switches, the congestion leaves L and the bucket rate.
func (c Config) Topology() proflow.Topology {
	t := proflow.Topology{BucketRate: c.BucketRate}
	for k := range c.Switches {
		t.Switches = append(t.Switches, switchName(k))
	}
	for _, l := range c.CongestionLeaves {
		t.Leaves = append(t.Leaves, leafName(l))
	}
	return t
}

// Flow returns the 5-tuple of the protected flow: TCP from ProtectedSrc port
// 5001 to ProtectedDst port 5201.
func (c Config) Flow() proflow.FlowID {
	src, _ := c.hostIndex(c.ProtectedSrc)
	dst, _ := c.hostIndex(c.ProtectedDst)
	return flowID(src, dst, DefaultSrcPort, DefaultDstPort)
}

// flowID returns the 5-tuple of a TCP connection between the hosts with
// indices src and dst.
func flowID(src, dst int, srcPort, dstPort uint16) proflow.FlowID {
	return proflow.FlowID{Src: hostAddr(src), Dst: hostAddr(dst), SrcPort: srcPort, DstPort: dstPort, Proto: proflow.ProtoTCP}
}

// Hosts returns the host names in index order.
func (c Config) Hosts() []string {
	n := c.Leaves * c.HostsPerLeaf
	out := make([]string, 0, max(n, 0))
	for i := range n {
		out = append(out, hostName(i))
	}
	return out
}

func switchName(k int) string { return "agg" + strconv.Itoa(k+1) }
func leafName(l int) string   { return "leaf" + strconv.Itoa(l+1) }
func hostName(h int) string   { return "h" + strconv.Itoa(h+1) }
func hostAddr(h int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 0, 0, byte(h + 1)})
}

// hostIndex parses a host name "h<n>" of this fabric.
func (c Config) hostIndex(name string) (int, error) {
	n := c.Leaves * c.HostsPerLeaf
	rest, ok := strings.CutPrefix(name, "h")
	i, err := strconv.Atoi(rest)
	if !ok || err != nil || i < 1 || i > n || strconv.Itoa(i) != rest {
		return 0, fmt.Errorf("unknown host %q, want h1..h%d", name, n)
	}
	return i - 1, nil
}

// switchIndex parses a switch name "agg<n>" of this fabric.
func (c Config) switchIndex(name string) (int, error) {
	rest, ok := strings.CutPrefix(name, "agg")
	i, err := strconv.Atoi(rest)
	if !ok || err != nil || i < 1 || i > c.Switches || strconv.Itoa(i) != rest {
		return 0, fmt.Errorf("unknown switch %q, want agg1..agg%d", name, c.Switches)
	}
	return i - 1, nil
}
