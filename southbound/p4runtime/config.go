package p4runtime

import (
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/netip"
	"time"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/nilcheck"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
)

// Defaults of Config.
const (
	// DefaultCallTimeout bounds each unary RPC.
	DefaultCallTimeout = 2 * time.Second
	// DefaultPriority is the priority of path_select entries.
	DefaultPriority = 100
	// DefaultOwner is the metadata mark of the client's entries.
	DefaultOwner = "proflow"
	// DefaultMinBackoff is the first delay before reopening a broken stream.
	DefaultMinBackoff = 50 * time.Millisecond
	// DefaultMaxBackoff caps the delay between reconnection attempts.
	DefaultMaxBackoff = 5 * time.Second
	// DefaultP4RuntimePort is the P4Runtime server port IANA assigns.
	DefaultP4RuntimePort = 9559
)

// ElectionID is a P4Runtime election ID (a 128-bit unsigned integer): among
// the clients of one device, the highest is primary.
type ElectionID struct {
	High, Low uint64
}

// String formats the ID as a decimal when High is zero, "high:low" otherwise.
func (e ElectionID) String() string {
	if e.High == 0 {
		return fmt.Sprint(e.Low)
	}
	return fmt.Sprintf("%d:%d", e.High, e.Low)
}

// Add returns e + f, saturating at the maximum.
func (e ElectionID) Add(f ElectionID) ElectionID {
	lo := e.Low + f.Low
	carry := uint64(0)
	if lo < e.Low {
		carry = 1
	}
	hi := e.High + f.High + carry
	if hi < e.High || (carry == 1 && hi == e.High && f.High == ^uint64(0)) {
		return ElectionID{High: ^uint64(0), Low: ^uint64(0)}
	}
	return ElectionID{High: hi, Low: lo}
}

// Less reports whether e < f.
func (e ElectionID) Less(f ElectionID) bool {
	return e.High < f.High || (e.High == f.High && e.Low < f.Low)
}

// Leaf describes one leaf switch the client programs: its P4Runtime device,
// the hosts behind it and its ports.
type Leaf struct {
	// Name names the leaf; the leaves of Topology.Leaves (the congestion
	// leaves L) must be among the Config's leaves by this name.
	Name string
	// DeviceID is the P4Runtime device ID.
	DeviceID uint64
	// Addr is the P4Runtime server's address, host:port (9559 is usual).
	// Leaves may share one server.
	Addr string
	// Hosts are the host addresses attached to this leaf; the flow's source
	// and destination addresses decide which leaves get its entries.
	Hosts []netip.Prefix
	// HostPorts are the ports facing the hosts; their receive counters
	// give the leaf's ingress rate λ.
	HostPorts []uint32
	// Uplinks holds, for each aggregation switch in Topology.Switches
	// order, the port of this leaf toward it.
	Uplinks []uint32
}

// Pipeline is the forwarding-pipeline config the client makes sure each
// device runs.
type Pipeline struct {
	// P4Info describes the program; it must be leaf.p4's or compatible
	// (same names for the path table, its fields and action, and the port
	// counters).
	P4Info *p4configv1.P4Info
	// DeviceConfig is the target-specific binary (BMv2: leaf.json); opaque.
	DeviceConfig []byte
	// Cookie identifies the config: the client pushes the config only to a
	// device whose cookie differs. Zero means a hash of P4Info and
	// DeviceConfig.
	Cookie uint64
}

// LeafPipeline returns the pipeline of the embedded leaf.p4 (package p4)
// with deviceConfig as its target binary (nil where the target needs none,
// as for package target).
func LeafPipeline(deviceConfig []byte) (Pipeline, error) {
	info, err := p4.LeafP4Info()
	if err != nil {
		return Pipeline{}, fmt.Errorf("p4runtime: %w", err)
	}
	return Pipeline{P4Info: info, DeviceConfig: deviceConfig}, nil
}

func (p Pipeline) cookie() uint64 {
	if p.Cookie != 0 {
		return p.Cookie
	}
	h := fnv.New64a()
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(p.P4Info)
	h.Write(b)
	h.Write(p.DeviceConfig)
	return h.Sum64() | 1 // never zero
}

// Config holds the settings of a Client. Start from DefaultConfig.
type Config struct {
	// Topology names the aggregation switches (the uplink order of every
	// leaf) and the congestion leaves.
	Topology proflow.Topology
	// Leaves are all the leaf switches to program.
	Leaves []Leaf
	// Flow is the protected flow whose throughput Collect reports.
	Flow proflow.FlowID
	// ElectionID is this client's election ID (the highest one is primary);
	// it must not be zero, which P4Runtime servers refuse.
	ElectionID ElectionID
	// Role is the P4Runtime role the client arbitrates for, sends in every
	// Write, Read and pipeline request, and is primary of (or not); empty
	// for the default role. Each role is arbitrated on its own: its primary
	// is its client with the highest election ID, whatever other roles do.
	//
	// Fencing: replicas that hand ownership over by epoch set Role to the
	// owned shard's role and ElectionID to one that grows with the owner's
	// epoch (internal/cluster's Role(shard) and ElectionID(epoch) give
	// both), and leave TakeOver off. A newer owner's client then becomes
	// primary of the role, and the superseded client's writes are refused
	// with PERMISSION_DENIED: errors wrapping ErrFenced, Client.Fenced and
	// LeafStatus.Fenced report it.
	Role string
	// TakeOver makes a backup client take over when the server reports that
	// no primary is connected (after the primary's stream closed): it
	// arbitrates again with the highest election ID the server reports plus
	// its own ElectionID, so among several backups the one with the highest
	// ElectionID ends up primary.
	TakeOver bool
	// Pipeline is the config every device must run (default: leaf.p4).
	Pipeline Pipeline
	// Owner is the TableEntry metadata that marks the entries this client
	// owns (default "proflow"); Locate and Collect read back only those.
	Owner []byte
	// Priority is the priority of path_select entries (default 100).
	Priority int32
	// CallTimeout bounds every unary RPC and the wait for an arbitration
	// answer (default 2 s).
	CallTimeout time.Duration
	// MinBackoff and MaxBackoff bound the delay between reconnection
	// attempts of a broken stream (default 50 ms and 5 s), timed by Clock.
	MinBackoff, MaxBackoff time.Duration
	// TLS, when set, secures every connection; nil means plaintext.
	TLS *tls.Config
	// DialOptions are extra gRPC dial options (after the credentials).
	DialOptions []grpc.DialOption
	// Clock timestamps observations and times rates (default the wall
	// clock; pass the simulator's clock to run on virtual time). Its tickers
	// also time the reconnection backoff and the retries of a failed
	// pipeline check, so on virtual time a broken stream is reopened only
	// as that time advances.
	Clock proflow.Clock
	// Logger receives stream, arbitration and reconnection events
	// (default: discard).
	Logger *slog.Logger
	// Registerer, when set, receives the client's Prometheus metrics
	// (proflow_p4runtime_*); nil registers none.
	Registerer prometheus.Registerer
}

// DefaultConfig returns a Config with every default filled in for the
// paper's topology; set Leaves, Flow and ElectionID before use.
func DefaultConfig() Config {
	return Config{
		Topology:    proflow.PaperTopology(),
		ElectionID:  ElectionID{Low: 1},
		Owner:       []byte(DefaultOwner),
		Priority:    DefaultPriority,
		CallTimeout: DefaultCallTimeout,
		MinBackoff:  DefaultMinBackoff,
		MaxBackoff:  DefaultMaxBackoff,
	}
}

func (c Config) withDefaults() (Config, error) {
	if c.Pipeline.P4Info == nil {
		p, err := LeafPipeline(c.Pipeline.DeviceConfig)
		if err != nil {
			return c, err
		}
		p.Cookie = c.Pipeline.Cookie
		c.Pipeline = p
	}
	if len(c.Owner) == 0 {
		c.Owner = []byte(DefaultOwner)
	}
	if c.Priority == 0 {
		c.Priority = DefaultPriority
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = DefaultMinBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.Clock == nil {
		c.Clock = proflow.SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if err := c.Topology.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Flow.Validate(); err != nil {
		errs = append(errs, err) // names the flow and its field itself
	}
	if len(c.Leaves) == 0 {
		errs = append(errs, errors.New("no leaves, want every leaf switch to program"))
	}
	names, devices := map[string]bool{}, map[string]bool{}
	n := c.Topology.NumSwitches()
	for i, l := range c.Leaves {
		switch {
		case l.Name == "":
			errs = append(errs, fmt.Errorf("leaf %d has no name", i))
		case names[l.Name]:
			errs = append(errs, fmt.Errorf("leaf name %q used twice", l.Name))
		}
		names[l.Name] = true
		if key := l.Addr + "#" + fmt.Sprint(l.DeviceID); devices[key] {
			errs = append(errs, fmt.Errorf("leaf %s: device %d at %s is already another leaf", l.Name, l.DeviceID, l.Addr))
		} else {
			devices[key] = true
		}
		if l.Addr == "" {
			errs = append(errs, fmt.Errorf("leaf %s has no P4Runtime address", l.Name))
		}
		if len(l.Uplinks) != n {
			errs = append(errs, fmt.Errorf("leaf %s has %d uplinks, want one per aggregation switch (%d)", l.Name, len(l.Uplinks), n))
		}
		for _, p := range append(append([]uint32(nil), l.Uplinks...), l.HostPorts...) {
			if p >= 1<<p4.PortBits {
				errs = append(errs, fmt.Errorf("leaf %s: port %d does not fit %d bits", l.Name, p, p4.PortBits))
			}
		}
	}
	for _, name := range c.Topology.Leaves {
		if !names[name] {
			errs = append(errs, fmt.Errorf("congestion leaf %q is not among the configured leaves", name))
		}
	}
	if c.Flow.Validate() == nil {
		if _, _, err := c.flowLeaves(c.Flow); err != nil {
			errs = append(errs, err)
		}
	}
	if c.ElectionID == (ElectionID{}) {
		errs = append(errs, errors.New("election ID 0, want one above 0: P4Runtime servers refuse 0 (the highest ID is primary)"))
	}
	if c.CallTimeout < 0 || c.MinBackoff < 0 || c.MaxBackoff < c.MinBackoff {
		errs = append(errs, fmt.Errorf("timeouts: call %v, backoff %v..%v, want positive and min <= max", c.CallTimeout, c.MinBackoff, c.MaxBackoff))
	}
	if c.Priority < 0 {
		errs = append(errs, fmt.Errorf("priority %d, want > 0", c.Priority))
	}
	if c.Clock != nil && nilcheck.IsNil(c.Clock) {
		errs = append(errs, fmt.Errorf("clock is a nil %T, want a usable clock, or nil for the system clock", c.Clock))
	}
	if c.Registerer != nil && nilcheck.IsNil(c.Registerer) {
		errs = append(errs, fmt.Errorf("registerer is a nil %T, want a usable registerer, or nil for no metrics", c.Registerer))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("p4runtime: invalid config: %w", err)
	}
	return nil
}

// leafOf returns the index of the leaf hosting addr.
func (c Config) leafOf(addr netip.Addr) (int, error) {
	for i, l := range c.Leaves {
		for _, p := range l.Hosts {
			if p.Contains(addr) {
				return i, nil
			}
		}
	}
	return -1, fmt.Errorf("no leaf hosts address %v; list it in a Leaf's Hosts: %w", addr, proflow.ErrNotInFabric)
}

// flowLeaves returns the leaves of flow's source (where its forward
// direction enters the fabric) and destination, or every reason the leaves
// cannot carry it between two of them: an IPv6 flow, a host no leaf lists
// (wrapping proflow.ErrNotInFabric), both hosts behind one leaf (likewise).
func (c Config) flowLeaves(flow proflow.FlowID) (src, dst int, err error) {
	if err := flow.Validate(); err != nil {
		return -1, -1, err
	}
	if !flow.Src.Is4() {
		return -1, -1, fmt.Errorf("flow %v is IPv6; leaf.p4 matches IPv4 only", flow)
	}
	src, serr := c.leafOf(flow.Src)
	dst, derr := c.leafOf(flow.Dst)
	if err := errors.Join(serr, derr); err != nil {
		return -1, -1, fmt.Errorf("flow %v: %w", flow, err)
	}
	if src == dst {
		return -1, -1, fmt.Errorf("flow %v: source and destination are both hosts of leaf %s, so the flow crosses no aggregation switch; the protected flow must join hosts of two different leaves: %w",
			flow, c.Leaves[src].Name, proflow.ErrNotInFabric)
	}
	return src, dst, nil
}
