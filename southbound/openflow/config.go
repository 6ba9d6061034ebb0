package openflow

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/nilcheck"
)

// DefaultListenAddr is the IANA OpenFlow port the controller listens on.
const DefaultListenAddr = ":6653"

// Fabric describes the wiring the controller programs: which datapath is
// which switch, which port leads where, and where the hosts are. Aggs are in
// the index order of proflow.Topology.Switches.
type Fabric struct {
	Aggs   []AggSwitch  `json:"aggs"`
	Leaves []LeafSwitch `json:"leaves"`
}

// AggSwitch is an aggregation switch.
type AggSwitch struct {
	Name string `json:"name"`
	DPID uint64 `json:"dpid"`
	// LeafPorts[i] is the port toward Fabric.Leaves[i]. Its transmit
	// counters are the switch's transmit rate ρ_k.
	LeafPorts []uint32 `json:"leaf_ports"`
}

// LeafSwitch is a leaf (top-of-rack) switch.
type LeafSwitch struct {
	Name string `json:"name"`
	DPID uint64 `json:"dpid"`
	// Uplinks[k] is the port toward Fabric.Aggs[k].
	Uplinks []uint32 `json:"uplinks"`
	// Hosts are the hosts attached to the leaf.
	Hosts []Host `json:"hosts"`
}

// Host is an end host: its IPv4 address and the leaf port it hangs off.
type Host struct {
	Name string     `json:"name"`
	Addr netip.Addr `json:"addr"`
	Port uint32     `json:"port"`
}

// Validate checks that every switch has a unique name and datapath id, that
// ports line up (one leaf port per leaf on each aggregation switch, one
// uplink per aggregation switch on each leaf), and that hosts have unique
// IPv4 addresses.
func (f Fabric) Validate() error {
	var errs []error
	if len(f.Aggs) < 2 {
		errs = append(errs, fmt.Errorf("%d aggregation switches, want at least 2", len(f.Aggs)))
	}
	if len(f.Leaves) < 2 {
		errs = append(errs, fmt.Errorf("%d leaves, want at least 2", len(f.Leaves)))
	}
	names, dpids, addrs := map[string]bool{}, map[uint64]string{}, map[netip.Addr]string{}
	sw := func(name string, dpid uint64) {
		if name == "" || names[name] {
			errs = append(errs, fmt.Errorf("switch name %q is empty or used twice, want unique names", name))
		}
		names[name] = true
		if other, dup := dpids[dpid]; dup {
			errs = append(errs, fmt.Errorf("datapath id %#x used by %s and %s, want unique ids", dpid, other, name))
		}
		dpids[dpid] = name
	}
	for _, a := range f.Aggs {
		sw(a.Name, a.DPID)
		if len(a.LeafPorts) != len(f.Leaves) {
			errs = append(errs, fmt.Errorf("aggregation switch %s has %d leaf ports, want one per leaf (%d)", a.Name, len(a.LeafPorts), len(f.Leaves)))
		}
		errs = append(errs, checkPorts(a.Name, a.LeafPorts))
	}
	for _, l := range f.Leaves {
		sw(l.Name, l.DPID)
		if len(l.Uplinks) != len(f.Aggs) {
			errs = append(errs, fmt.Errorf("leaf %s has %d uplinks, want one per aggregation switch (%d)", l.Name, len(l.Uplinks), len(f.Aggs)))
		}
		ports := append([]uint32(nil), l.Uplinks...)
		for _, h := range l.Hosts {
			if !h.Addr.Is4() {
				errs = append(errs, fmt.Errorf("host %s on %s: address %v, want IPv4", h.Name, l.Name, h.Addr))
			} else if other, dup := addrs[h.Addr]; dup {
				errs = append(errs, fmt.Errorf("host address %v used by %s and %s, want unique addresses", h.Addr, other, h.Name))
			}
			addrs[h.Addr] = h.Name
			ports = append(ports, h.Port)
		}
		errs = append(errs, checkPorts(l.Name, ports))
	}
	return errors.Join(errs...)
}

func checkPorts(sw string, ports []uint32) error {
	seen := map[uint32]bool{}
	for _, p := range ports {
		if p == 0 || p >= 0xffffff00 || seen[p] {
			return fmt.Errorf("switch %s: port %d is reserved or used twice, want unique ports 1..0xfffffeff", sw, p)
		}
		seen[p] = true
	}
	return nil
}

// Config holds the settings of a Server. Start from DefaultConfig.
type Config struct {
	// Fabric is the wiring. Its aggregation switches must carry the names
	// of Topology.Switches in the same order, and Topology.Leaves must name
	// leaves of the fabric.
	Fabric Fabric
	// Topology is the controller's view: switch order, congestion leaves L
	// and bucket rate C (scales the elephant threshold).
	Topology proflow.Topology
	// Flow is the protected flow whose throughput telemetry reports. It may
	// be left zero when the server only enforces; when set, its hosts must
	// hang off two different leaves of Fabric.
	Flow proflow.FlowID
	// ListenAddr is where ListenAndServe listens (default ":6653").
	ListenAddr string
	// TLS, when set, makes the server speak OpenFlow over TLS. Set
	// ClientAuth to tls.RequireAndVerifyClientCert with ClientCAs to refuse
	// switches without a valid certificate.
	TLS *tls.Config
	// CookiePrefix tags every rule the server installs (the top 16 bits of
	// the cookie), so it finds its own rules and leaves others alone.
	CookiePrefix uint16
	// Owner, when set, fences the writes of override rules for controllers
	// that share the switches (see Owner): each flow's rules carry its
	// owner's cookie, and a write for a flow the owner refuses fails with
	// ErrFenced. Nil: the server owns every flow, and override cookies
	// follow CookiePrefix.
	Owner Owner
	// BasePath picks the aggregation switch of the permanent base route
	// between two hosts (indexes into the fabric's hosts in leaf order).
	// Default: (src+dst) mod |S|.
	BasePath func(src, dst int) int
	// EchoInterval is how often the server sends an echo request to a
	// switch it has not heard from (default 2 s).
	EchoInterval time.Duration
	// DeadTimeout drops a switch that has sent nothing for this long
	// (default 3×EchoInterval).
	DeadTimeout time.Duration
	// HandshakeTimeout bounds hello and features (default 5 s).
	HandshakeTimeout time.Duration
	// RequestTimeout bounds a statistics poll or a barrier (default 2 s).
	// It also bounds one leaf's lease refresh, so with leases
	// (LeaseTimeout > 0) it must be at most LeaseTimeout/3, the refresh
	// period: Validate refuses a longer one.
	RequestTimeout time.Duration
	// LeaseTimeout is the hard timeout of the override rules (Place): a
	// dead controller's overrides expire and the flow falls back to base
	// forwarding. The server refreshes live leases every LeaseTimeout/3,
	// every leaf at once, each leaf within RequestTimeout (see Server), so
	// it must be at least 3×RequestTimeout (6 s with the default request
	// timeout): then a round ends before the next is due, and a leaf whose
	// refresh fails is refreshed again at the next round, a third of the
	// lease before its rules would lapse.
	// Zero means the default, 10 s; negative makes overrides permanent.
	// Either way, override rules whose delete a switch did not confirm are
	// deleted again on every refresh round (every LeaseTimeout/3, or every
	// 3×RequestTimeout with permanent overrides) and when their leaf
	// reconnects, until a delete is confirmed.
	LeaseTimeout time.Duration
	// OverridePriority is the lowest priority of override rules (default
	// 1000); base rules use 100 and 200.
	OverridePriority uint16
	// ElephantFraction: a host pair whose rate exceeds this fraction of
	// Topology.BucketRate over an interval is an elephant (default 0.1).
	ElephantFraction float64
	// Registerer, when set, receives the server's Prometheus metrics.
	Registerer prometheus.Registerer
	// Logger receives connection events (default: discard).
	Logger *slog.Logger
	// Clock stamps samples (default proflow.SystemClock); use the same
	// clock as the proflow.Controller. Its tickers also drive the keepalive
	// (echo requests, dead switches) and the lease refresh, so against real
	// switches it must tick in real time, as their hard timeouts do.
	Clock proflow.Clock
}

// DefaultConfig returns a Config with every default filled in; set Fabric,
// Topology and Flow.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

func (c Config) withDefaults() Config {
	if c.ListenAddr == "" {
		c.ListenAddr = DefaultListenAddr
	}
	if c.CookiePrefix == 0 {
		c.CookiePrefix = 0x5046 // "PF"
	}
	if c.EchoInterval == 0 {
		c.EchoInterval = 2 * time.Second
	}
	if c.DeadTimeout == 0 {
		c.DeadTimeout = 3 * c.EchoInterval
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = 5 * time.Second
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 2 * time.Second
	}
	if c.LeaseTimeout == 0 {
		c.LeaseTimeout = 10 * time.Second
	}
	if c.OverridePriority == 0 {
		c.OverridePriority = 1000
	}
	if c.ElephantFraction == 0 {
		c.ElephantFraction = 0.1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = proflow.SystemClock{}
	}
	return c
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if err := c.Fabric.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("fabric: %w", err))
	}
	if err := c.Topology.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(c.Topology.Switches) != len(c.Fabric.Aggs) {
		errs = append(errs, fmt.Errorf("topology has %d switches and the fabric %d aggregation switches, want the same", len(c.Topology.Switches), len(c.Fabric.Aggs)))
	} else {
		for k, a := range c.Fabric.Aggs {
			if a.Name != c.Topology.Switches[k] {
				errs = append(errs, fmt.Errorf("aggregation switch %d is %q in the fabric and %q in the topology, want the same order", k, a.Name, c.Topology.Switches[k]))
			}
		}
	}
	for _, l := range c.Topology.Leaves {
		if c.Fabric.leafIndex(l) < 0 {
			errs = append(errs, fmt.Errorf("topology leaf %q is not a leaf of the fabric", l))
		}
	}
	if c.Flow != (proflow.FlowID{}) {
		if _, _, err := c.Fabric.flowLeaves(c.Flow, c.Fabric.hostLeaf); err != nil {
			errs = append(errs, fmt.Errorf("flow %v: %w", c.Flow, err))
		}
	}
	if c.Clock != nil && nilcheck.IsNil(c.Clock) {
		errs = append(errs, fmt.Errorf("clock is a nil %T, want a usable clock, or nil for the system clock", c.Clock))
	}
	if c.Owner != nil && nilcheck.IsNil(c.Owner) {
		errs = append(errs, fmt.Errorf("owner is a nil %T, want a usable owner, or nil for none", c.Owner))
	}
	if c.Registerer != nil && nilcheck.IsNil(c.Registerer) {
		errs = append(errs, fmt.Errorf("registerer is a nil %T, want a usable registerer, or nil for no metrics", c.Registerer))
	}
	for name, d := range map[string]time.Duration{"echo interval": c.EchoInterval, "dead timeout": c.DeadTimeout,
		"handshake timeout": c.HandshakeTimeout, "request timeout": c.RequestTimeout} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s %v, want a positive duration", name, d))
		}
	}
	if c.DeadTimeout <= c.EchoInterval {
		errs = append(errs, fmt.Errorf("dead timeout %v, want more than the echo interval %v", c.DeadTimeout, c.EchoInterval))
	}
	if c.LeaseTimeout > 0 && (c.LeaseTimeout < time.Second || c.LeaseTimeout > 65535*time.Second) {
		errs = append(errs, fmt.Errorf("lease timeout %v, want 1 s..65535 s (OpenFlow hard timeouts are whole seconds)", c.LeaseTimeout))
	}
	if c.LeaseTimeout > 0 && c.RequestTimeout > c.LeaseTimeout/3 {
		errs = append(errs, fmt.Errorf("request timeout %v with lease timeout %v: the lease refresh runs every %v (a third of the lease) and one leaf's refresh may take the request timeout, "+
			"so a slow leaf would delay the next round and let leases lapse; want request timeout ≤ %v, or lease timeout ≥ %v",
			c.RequestTimeout, c.LeaseTimeout, c.LeaseTimeout/3, c.LeaseTimeout/3, 3*c.RequestTimeout))
	}
	if int(c.OverridePriority)+priorityGenerations > 0xffff || c.OverridePriority <= 200 {
		errs = append(errs, fmt.Errorf("override priority %d, want 201..%d", c.OverridePriority, 0xffff-priorityGenerations))
	}
	if !(c.ElephantFraction > 0 && c.ElephantFraction < 1) {
		errs = append(errs, fmt.Errorf("elephant fraction %v, want in (0, 1)", c.ElephantFraction))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("openflow: invalid config: %w", err)
	}
	return nil
}

// hostLeaf returns the index of the leaf the host with address a hangs
// off, or -1.
func (f Fabric) hostLeaf(a netip.Addr) int {
	for i, l := range f.Leaves {
		for _, h := range l.Hosts {
			if h.Addr == a {
				return i
			}
		}
	}
	return -1
}

func (f Fabric) leafIndex(name string) int {
	for i, l := range f.Leaves {
		if l.Name == name {
			return i
		}
	}
	return -1
}
