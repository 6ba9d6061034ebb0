package simdp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/target"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Leaves returns the leaf switches of the fabric cfg describes, in leaf
// order, for the p4runtime client (Config.Leaves) and New: leaf i (named
// leaf1, leaf2, … as in the simulator) is device i+1 at addr; its hosts are
// listed by address (/32 each, 10.0.0.1 upward as the simulator numbers
// them), host j of the leaf is on port 1+j, and its uplink toward
// aggregation switch k is on port 1+HostsPerLeaf+k.
func Leaves(cfg sim.Config, addr string) []p4runtime.Leaf {
	out := make([]p4runtime.Leaf, 0, max(cfg.Leaves, 0))
	for l := range max(cfg.Leaves, 0) {
		lf := p4runtime.Leaf{Name: leafName(l), DeviceID: uint64(l + 1), Addr: addr}
		for j := range max(cfg.HostsPerLeaf, 0) {
			lf.Hosts = append(lf.Hosts, netip.PrefixFrom(hostAddr(l*cfg.HostsPerLeaf+j), 32))
			lf.HostPorts = append(lf.HostPorts, uint32(1+j))
		}
		for k := range max(cfg.Switches, 0) {
			lf.Uplinks = append(lf.Uplinks, uint32(1+cfg.HostsPerLeaf+k))
		}
		out = append(out, lf)
	}
	return out
}

// leafName and hostAddr follow the simulator's documented naming (package
// sim: leaves leaf1…, hosts at 10.0.0.1…).
func leafName(l int) string { return "leaf" + strconv.Itoa(l+1) }

func hostAddr(h int) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, byte(h + 1)}) }

// Dataplane is a target.Dataplane over a simulated fabric: the protected
// flow's forward path_select entry moves it in the simulator, and the
// counters integrate the simulator's samples. See the package
// documentation for the model. Create one with New; it is safe for
// concurrent use.
type Dataplane struct {
	f     *sim.Fabric
	cfg   sim.Config
	flow  proflow.FlowID
	start time.Time
	base  int // the switch of base forwarding (the scenario's ECMP placement)

	leaves   []leafPorts    // by simulator leaf index
	byDevice map[uint64]int // device ID -> simulator leaf index
	devices  []uint64       // in the order of the leaves given to New
	srcLeaf  int
	dstLeaf  int
	srcHost  int // host indices of the protected flow
	dstHost  int
	inL      []int // simulator leaf index -> index in L, or -1
	cg       []congester

	mu      sync.Mutex
	paths   map[pathKey]uint32
	fwd     int // switch of the forward entry, -1 without one
	rev     int // switch of the reverse entry, -1 without one
	protSw  int // the switch the protected flow is on (for attribution)
	last    time.Time
	obs     proflow.Observation
	prot    float64     // protected flow's bytes into its source leaf
	hostRx  [][]float64 // [leaf][host]: bytes from the host into the leaf
	hostTx  [][]float64 // [leaf][host]: bytes from the leaf to the host
	upTx    [][]float64 // [leaf][switch]: bytes from the leaf toward the switch
	upRx    [][]float64 // [leaf][switch]: bytes from the switch into the leaf
	sources []source    // scratch of integrate
	streams []float64   // scratch: streams per switch
	offered []float64   // scratch: congesters' rate per switch
}

var _ target.Dataplane = (*Dataplane)(nil)

type leafPorts struct {
	device  uint64 // 0: not fronted by a device
	hosts   []uint32
	uplinks []uint32
}

type pathKey struct {
	device uint64
	flow   proflow.FlowID
}

// congester is a scenario congester resolved to indices.
type congester struct {
	host, dst      int
	streams        float64
	capRate        float64 // bytes/s per stream, 0 for none
	arrive, depart time.Duration
	sw             int
	moves          []move
}

type move struct {
	at time.Duration
	sw int
}

// source is one flow's estimate for a sample interval.
type source struct {
	host, dst int
	sw        int
	streams   float64
	capRate   float64 // bytes/s per stream, 0 for none
	rate      float64 // bytes/s into the source leaf
	protected bool
}

// New returns a data plane that fronts f with the given leaves, usually
// Leaves(f.Config(), addr). Every leaf must be one of the simulator's by
// name (leaf1, leaf2, …) with one host port per host of the leaf
// (sim.Config.HostsPerLeaf, in host order) and one uplink per aggregation
// switch (in switch order), and device IDs must be unique and non-zero; the
// leaves of the protected flow's hosts are required and must list their
// addresses. Leaves left out are simply not devices. The counters start at
// zero at the fabric's current virtual time.
func New(f *sim.Fabric, leaves []p4runtime.Leaf) (*Dataplane, error) {
	if f == nil {
		return nil, errors.New("simdp: new: fabric is nil")
	}
	cfg := f.Config()
	sc := f.Scenario()
	d := &Dataplane{
		f: f, cfg: cfg, flow: f.Flow(), start: f.Start(), base: f.InitialSwitch(),
		leaves: make([]leafPorts, cfg.Leaves), byDevice: map[uint64]int{},
		fwd: -1, rev: -1, paths: map[pathKey]uint32{},
	}
	hosts := cfg.Hosts()
	hostIdx := func(name string) int { return slices.Index(hosts, name) }
	d.srcHost, d.dstHost = hostIdx(cfg.ProtectedSrc), hostIdx(cfg.ProtectedDst)
	if d.srcHost < 0 || d.dstHost < 0 || hostAddr(d.srcHost) != d.flow.Src || hostAddr(d.dstHost) != d.flow.Dst {
		return nil, fmt.Errorf("simdp: new: protected flow %v does not run between hosts %s and %s at 10.0.0.<n>, as this package expects the simulator to number them",
			d.flow, cfg.ProtectedSrc, cfg.ProtectedDst)
	}
	d.srcLeaf, d.dstLeaf = d.srcHost/cfg.HostsPerLeaf, d.dstHost/cfg.HostsPerLeaf

	var errs []error
	seen := map[string]bool{}
	for i, lf := range leaves {
		l, ok := parseLeaf(lf.Name, cfg.Leaves)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("leaf %d: name %q, want one of the simulator's leaves leaf1..leaf%d", i, lf.Name, cfg.Leaves))
			continue
		case seen[lf.Name]:
			errs = append(errs, fmt.Errorf("leaf %s listed twice", lf.Name))
			continue
		}
		seen[lf.Name] = true
		if lf.DeviceID == 0 {
			errs = append(errs, fmt.Errorf("leaf %s: device ID 0, want a non-zero ID", lf.Name))
		} else if j, dup := d.byDevice[lf.DeviceID]; dup {
			errs = append(errs, fmt.Errorf("leaf %s: device ID %d is already %s's", lf.Name, lf.DeviceID, leafName(j)))
		}
		if len(lf.HostPorts) != cfg.HostsPerLeaf {
			errs = append(errs, fmt.Errorf("leaf %s: %d host ports, want one per host of the leaf (%d)", lf.Name, len(lf.HostPorts), cfg.HostsPerLeaf))
		}
		if len(lf.Uplinks) != cfg.Switches {
			errs = append(errs, fmt.Errorf("leaf %s: %d uplinks, want one per aggregation switch (%d)", lf.Name, len(lf.Uplinks), cfg.Switches))
		}
		ports := map[uint32]bool{}
		for _, p := range append(slices.Clone(lf.HostPorts), lf.Uplinks...) {
			if ports[p] {
				errs = append(errs, fmt.Errorf("leaf %s: port %d used twice", lf.Name, p))
			}
			ports[p] = true
		}
		d.byDevice[lf.DeviceID] = l
		d.devices = append(d.devices, lf.DeviceID)
		d.leaves[l] = leafPorts{device: lf.DeviceID, hosts: slices.Clone(lf.HostPorts), uplinks: slices.Clone(lf.Uplinks)}
	}
	for _, end := range [...]struct {
		what string
		leaf int
		addr netip.Addr
	}{{"source", d.srcLeaf, d.flow.Src}, {"destination", d.dstLeaf, d.flow.Dst}} {
		name := leafName(end.leaf)
		if !seen[name] {
			errs = append(errs, fmt.Errorf("the protected flow's %s leaf %s is missing, want it among the leaves", end.what, name))
			continue
		}
		if i := slices.IndexFunc(leaves, func(lf p4runtime.Leaf) bool { return lf.Name == name }); !slices.ContainsFunc(leaves[i].Hosts, func(p netip.Prefix) bool { return p.Contains(end.addr) }) {
			errs = append(errs, fmt.Errorf("leaf %s: hosts %v do not contain the protected flow's %s %v", name, leaves[i].Hosts, end.what, end.addr))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("simdp: new: %w", err)
	}

	d.inL = make([]int, cfg.Leaves)
	for l := range d.inL {
		d.inL[l] = slices.Index(cfg.CongestionLeaves, l)
	}
	switches := f.Topology().Switches
	for _, c := range sc.Congesters {
		dst := c.Dst
		if dst == "" {
			dst = cfg.CongestionSink
		}
		n := c.Streams
		if n == 0 {
			n = cfg.StreamsPerCongester
		}
		cg := congester{host: hostIdx(c.Host), dst: hostIdx(dst), streams: float64(n), capRate: float64(c.StreamCap),
			arrive: time.Duration(c.Arrive), depart: time.Duration(c.Depart), sw: slices.Index(switches, c.Switch)}
		for _, m := range c.Moves {
			cg.moves = append(cg.moves, move{at: time.Duration(m.At), sw: slices.Index(switches, m.Switch)})
		}
		d.cg = append(d.cg, cg)
	}
	grid := func(n int) [][]float64 {
		g := make([][]float64, cfg.Leaves)
		for l := range g {
			g[l] = make([]float64, n)
		}
		return g
	}
	d.hostRx, d.hostTx = grid(cfg.HostsPerLeaf), grid(cfg.HostsPerLeaf)
	d.upTx, d.upRx = grid(cfg.Switches), grid(cfg.Switches)
	d.streams, d.offered = make([]float64, cfg.Switches), make([]float64, cfg.Switches)
	d.protSw = f.Current()
	d.last = d.start
	if f.Truth(&d.obs) {
		d.last = d.obs.Time // count from now on
	}
	return d, nil
}

// parseLeaf returns the index of a simulator leaf name.
func parseLeaf(name string, n int) (int, bool) {
	rest, ok := strings.CutPrefix(name, "leaf")
	i, err := strconv.Atoi(rest)
	if !ok || err != nil || i < 1 || i > n || strconv.Itoa(i) != rest {
		return 0, false
	}
	return i - 1, true
}

// Devices returns the P4Runtime device IDs, in the order of the leaves
// given to New: the devices to create the target.Server with.
func (d *Dataplane) Devices() []uint64 { return slices.Clone(d.devices) }

// Placement returns the aggregation switch the protected flow's forward
// entry (on its source leaf) and reverse entry (on its destination leaf)
// send it to, -1 for a direction without an entry. The simulator follows
// the forward entry; after a complete placement both agree.
func (d *Dataplane) Placement() (forward, reverse int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fwd, d.rev
}

// leaf returns the simulator leaf of a device.
func (d *Dataplane) leaf(device uint64) (int, error) {
	l, ok := d.byDevice[device]
	if !ok {
		return 0, status.Errorf(codes.NotFound, "simdp: unknown device %d, want one of %v", device, d.devices)
	}
	return l, nil
}

// SetPath implements target.Dataplane. For the protected flow's forward
// 5-tuple on its source leaf it moves the simulated flow to the switch of
// uplinkPort; for its reverse 5-tuple on the destination leaf it records
// the switch (Placement); other entries are recorded only. A port that is
// not an uplink of the device is refused with INVALID_ARGUMENT.
func (d *Dataplane) SetPath(device uint64, flow proflow.FlowID, uplinkPort uint32) error {
	l, err := d.leaf(device)
	if err != nil {
		return err
	}
	k := slices.Index(d.leaves[l].uplinks, uplinkPort)
	if k < 0 {
		return status.Errorf(codes.InvalidArgument, "simdp: %s (device %d): port %d is not an uplink, want one of %v (toward %v)",
			leafName(l), device, uplinkPort, d.leaves[l].uplinks, d.f.Topology().Switches)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sync()
	switch {
	case l == d.srcLeaf && flow == d.flow:
		if err := d.f.Place(context.Background(), flow, k); err != nil {
			return status.Errorf(codes.Internal, "simdp: %s: move %v to switch %d: %v", leafName(l), flow, k, err)
		}
		d.fwd, d.protSw = k, k
	case l == d.dstLeaf && flow == d.flow.Reverse():
		d.rev = k
	}
	d.paths[pathKey{device, flow}] = uplinkPort
	return nil
}

// ClearPath implements target.Dataplane. For the protected flow's forward
// entry it returns the flow to base forwarding: the switch the scenario
// starts it on.
func (d *Dataplane) ClearPath(device uint64, flow proflow.FlowID) error {
	l, err := d.leaf(device)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sync()
	switch {
	case l == d.srcLeaf && flow == d.flow:
		if err := d.f.Place(context.Background(), flow, d.base); err != nil {
			return status.Errorf(codes.Internal, "simdp: %s: return %v to base switch %d: %v", leafName(l), flow, d.base, err)
		}
		d.fwd, d.protSw = -1, d.base
	case l == d.dstLeaf && flow == d.flow.Reverse():
		d.rev = -1
	}
	delete(d.paths, pathKey{device, flow})
	return nil
}

// Path returns the uplink port recorded for flow on device, if any.
func (d *Dataplane) Path(device uint64, flow proflow.FlowID) (port uint32, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	port, ok = d.paths[pathKey{device, flow}]
	return port, ok
}

// PathCounters implements target.Dataplane: the protected flow's frames
// into its source leaf for its forward 5-tuple there, zero for any other.
func (d *Dataplane) PathCounters(device uint64, flow proflow.FlowID) (target.Counts, error) {
	l, err := d.leaf(device)
	if err != nil {
		return target.Counts{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sync()
	if l == d.srcLeaf && flow == d.flow {
		return d.counts(d.prot), nil
	}
	return target.Counts{}, nil
}

// PortCounters implements target.Dataplane: for a host port, what the host
// sent (Rx) and received (Tx); for an uplink, what the leaf sent toward the
// switch (Tx) and received from it (Rx). Other ports count zero.
func (d *Dataplane) PortCounters(device uint64, port uint32) (target.PortCounts, error) {
	l, err := d.leaf(device)
	if err != nil {
		return target.PortCounts{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sync()
	lp := &d.leaves[l]
	if j := slices.Index(lp.hosts, port); j >= 0 {
		return target.PortCounts{Rx: d.counts(d.hostRx[l][j]), Tx: d.counts(d.hostTx[l][j])}, nil
	}
	if k := slices.Index(lp.uplinks, port); k >= 0 {
		return target.PortCounts{Rx: d.counts(d.upRx[l][k]), Tx: d.counts(d.upTx[l][k])}, nil
	}
	return target.PortCounts{}, nil
}

// counts turns an integrated byte count into counter values.
func (d *Dataplane) counts(bytes float64) target.Counts {
	b := math.Floor(bytes)
	return target.Counts{Bytes: uint64(b), Packets: uint64(math.Floor(b / d.cfg.PacketSize))}
}

// sync folds in the fabric's latest sample if it is newer than the last
// one integrated. Call with d.mu held.
func (d *Dataplane) sync() {
	if !d.f.Truth(&d.obs) || !d.obs.Time.After(d.last) {
		return
	}
	gap := d.obs.Time.Sub(d.last)
	to := d.obs.Time.Sub(d.start)
	from := to - min(gap, d.cfg.Interval)
	d.integrate(&d.obs, from, to, gap.Seconds())
	d.last = d.obs.Time
}

// integrate adds one sample covering the scenario interval (from, to],
// held for dt seconds, to the counters.
func (d *Dataplane) integrate(o *proflow.Observation, from, to time.Duration, dt float64) {
	cfg := &d.cfg
	hpl := cfg.HostsPerLeaf
	frames := cfg.PacketSize / cfg.MSS
	mid := from + (to-from)/2

	// The flows of the interval, with the streams through each switch.
	srcs := append(d.sources[:0], source{host: d.srcHost, dst: d.dstHost, sw: d.protSw, streams: 1, protected: true})
	for i := range d.cg {
		c := &d.cg[i]
		if c.arrive >= to || (c.depart != 0 && c.depart <= from) {
			continue
		}
		sw := c.sw
		for _, m := range c.moves {
			if m.at <= mid {
				sw = m.sw
			}
		}
		srcs = append(srcs, source{host: c.host, dst: c.dst, sw: sw, streams: c.streams, capRate: c.capRate})
	}
	streams := d.streams
	clear(streams)
	for _, s := range srcs {
		streams[s.sw] += s.streams
	}
	// A congester's rate: its streams' share of its switch's rate, capped.
	for i := 1; i < len(srcs); i++ {
		s := &srcs[i]
		s.rate = o.Switches[s.sw].TxRate * s.streams / streams[s.sw]
		if s.capRate > 0 {
			s.rate = min(s.rate, s.capRate*s.streams)
		}
	}
	// Scale each leaf in L to its measured congestion traffic λ; the
	// protected flow's frames are μ−λ of its leaf.
	prot := &srcs[0]
	prot.rate = o.Flow.Throughput * frames
	for l, i := range d.inL {
		if i < 0 {
			continue
		}
		lambda := o.Leaves[i].IngressRate
		if l == d.srcLeaf {
			prot.rate = max(0, o.Leaves[i].TransmitRate-lambda)
		}
		var sum, n float64
		for _, s := range srcs[1:] {
			if s.host/hpl == l {
				sum, n = sum+s.rate, n+s.streams
			}
		}
		for j := 1; j < len(srcs); j++ {
			s := &srcs[j]
			switch {
			case s.host/hpl != l:
			case sum > 0:
				s.rate *= lambda / sum
			default:
				s.rate = lambda * s.streams / n
			}
		}
	}
	// What the leaves send up.
	offered := d.offered // congesters' rates per switch
	clear(offered)
	for _, s := range srcs {
		l := s.host / hpl
		d.hostRx[l][s.host%hpl] += s.rate * dt
		d.upTx[l][s.sw] += s.rate * dt
		if !s.protected {
			offered[s.sw] += s.rate
		}
	}
	d.prot += prot.rate * dt
	// What the switches deliver, to the destinations' leaves and hosts.
	protOut := o.Flow.Throughput * frames
	for _, s := range srcs {
		out := protOut
		if !s.protected {
			rest := o.Switches[s.sw].TxRate
			if s.sw == prot.sw {
				rest = max(0, rest-protOut)
			}
			out = 0
			if offered[s.sw] > 0 {
				out = rest * s.rate / offered[s.sw]
			}
		}
		l := s.dst / hpl
		d.upRx[l][s.sw] += out * dt
		d.hostTx[l][s.dst%hpl] += out * dt
	}
	d.sources = srcs
}
