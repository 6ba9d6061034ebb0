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

// Dataplane is a target.Dataplane over a simulated fabric: each protected
// flow's forward path_select entry moves it in the simulator, and the
// counters integrate the simulator's samples. See the package
// documentation for the model. Create one with New; it is safe for
// concurrent use.
type Dataplane struct {
	f     *sim.Fabric
	cfg   sim.Config
	flow  proflow.FlowID // the primary protected flow, prot[0]
	start time.Time

	leaves   []leafPorts    // by simulator leaf index
	byDevice map[uint64]int // device ID -> simulator leaf index
	devices  []uint64       // in the order of the leaves given to New
	inL      []int          // simulator leaf index -> index in L, or -1
	cg       []congester
	byFwd    map[proflow.FlowID]int // forward 5-tuple -> index in prot
	byRev    map[proflow.FlowID]int // reverse 5-tuple -> index in prot

	mu      sync.Mutex
	prot    []protFlow // the fabric's protected flows, in sim.Fabric.Protected order
	paths   map[pathKey]uint32
	last    time.Time
	obs     proflow.Observation // the latest truth, with every protected flow's sample
	hostRx  [][]float64         // [leaf][host]: bytes from the host into the leaf
	hostTx  [][]float64         // [leaf][host]: bytes from the leaf to the host
	upTx    [][]float64         // [leaf][switch]: bytes from the leaf toward the switch
	upRx    [][]float64         // [leaf][switch]: bytes from the switch into the leaf
	sources []source            // scratch of integrate
	streams []float64           // scratch: streams per switch
	offered []float64           // scratch: congesters' rate per switch
	protOut []float64           // scratch: protected flows' delivered frames per switch
}

// protFlow is one protected flow of the fabric as the data plane sees it.
type protFlow struct {
	id               proflow.FlowID
	srcHost, dstHost int // host indices
	srcLeaf, dstLeaf int
	base             int     // the switch of base forwarding (where the scenario starts it)
	fwd, rev         int     // switch of the forward and reverse entry, -1 without one
	sw               int     // the switch it is on (for attribution)
	bytes            float64 // its frames into its source leaf
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
	out       float64 // protected: delivered frames, bytes/s
}

// New returns a data plane that fronts f with the given leaves, usually
// Leaves(f.Config(), addr). Every leaf must be one of the simulator's by
// name (leaf1, leaf2, …) with one host port per host of the leaf
// (sim.Config.HostsPerLeaf, in host order) and one uplink per aggregation
// switch (in switch order), and device IDs must be unique and non-zero; the
// leaves of every protected flow's hosts are required and must list their
// addresses. Leaves left out are simply not devices. The counters start at
// zero at the fabric's current virtual time.
func New(f *sim.Fabric, leaves []p4runtime.Leaf) (*Dataplane, error) {
	if f == nil {
		return nil, errors.New("simdp: new: fabric is nil")
	}
	cfg := f.Config()
	sc := f.Scenario()
	d := &Dataplane{
		f: f, cfg: cfg, flow: f.Flow(), start: f.Start(),
		leaves: make([]leafPorts, cfg.Leaves), byDevice: map[uint64]int{},
		byFwd: map[proflow.FlowID]int{}, byRev: map[proflow.FlowID]int{}, paths: map[pathKey]uint32{},
	}
	hosts := cfg.Hosts()
	hostIdx := func(name string) int { return slices.Index(hosts, name) }
	for i, pl := range f.InitialPlacements() {
		src, okSrc := hostOfAddr(pl.Flow.Src, len(hosts))
		dst, okDst := hostOfAddr(pl.Flow.Dst, len(hosts))
		if !okSrc || !okDst {
			return nil, fmt.Errorf("simdp: new: protected flow %v does not run between hosts at 10.0.0.1..%d, as this package expects the simulator to number them",
				pl.Flow, len(hosts))
		}
		p := protFlow{id: pl.Flow, srcHost: src, dstHost: dst, srcLeaf: src / cfg.HostsPerLeaf, dstLeaf: dst / cfg.HostsPerLeaf,
			base: pl.Switch, fwd: -1, rev: -1, sw: pl.Switch}
		d.prot = append(d.prot, p)
		d.byFwd[pl.Flow], d.byRev[pl.Flow.Reverse()] = i, i
		d.obs.FlowIDs = append(d.obs.FlowIDs, pl.Flow)
	}

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
	for _, p := range d.prot {
		for _, end := range [...]struct {
			what string
			leaf int
			addr netip.Addr
		}{{"source", p.srcLeaf, p.id.Src}, {"destination", p.dstLeaf, p.id.Dst}} {
			name := leafName(end.leaf)
			if !seen[name] {
				errs = append(errs, fmt.Errorf("protected flow %v: its %s leaf %s is missing, want it among the leaves", p.id, end.what, name))
				continue
			}
			if i := slices.IndexFunc(leaves, func(lf p4runtime.Leaf) bool { return lf.Name == name }); !slices.ContainsFunc(leaves[i].Hosts, func(p netip.Prefix) bool { return p.Contains(end.addr) }) {
				errs = append(errs, fmt.Errorf("leaf %s: hosts %v do not contain the protected flow's %s %v (of %v)", name, leaves[i].Hosts, end.what, end.addr, p.id))
			}
		}
	}
	errs = slices.CompactFunc(errs, func(a, b error) bool { return a.Error() == b.Error() })
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
	d.streams, d.offered, d.protOut = make([]float64, cfg.Switches), make([]float64, cfg.Switches), make([]float64, cfg.Switches)
	for i, t := range f.FlowTruths(nil) {
		d.prot[i].sw = t.Switch
	}
	d.last = d.start
	if f.Truth(&d.obs) {
		d.last = d.obs.Time // count from now on
	}
	return d, nil
}

// hostOfAddr returns the index of the simulator host with address a
// (10.0.0.1 is host 0), among n hosts.
func hostOfAddr(a netip.Addr, n int) (int, bool) {
	if !a.Is4() {
		return 0, false
	}
	b := a.As4()
	h := int(b[3]) - 1
	if b[0] != 10 || b[1] != 0 || b[2] != 0 || h < 0 || h >= n {
		return 0, false
	}
	return h, true
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
// the forward entry; after a complete placement both agree. With several
// protected flows it is the primary one's (sim.Fabric.Flow); see
// PlacementOf.
func (d *Dataplane) Placement() (forward, reverse int) {
	forward, reverse, _ = d.PlacementOf(d.flow)
	return forward, reverse
}

// PlacementOf is Placement for any protected flow of the fabric; ok is
// false for a flow that is not one of them.
func (d *Dataplane) PlacementOf(flow proflow.FlowID) (forward, reverse int, ok bool) {
	i, ok := d.byFwd[flow]
	if !ok {
		return -1, -1, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.prot[i].fwd, d.prot[i].rev, true
}

// leaf returns the simulator leaf of a device.
func (d *Dataplane) leaf(device uint64) (int, error) {
	l, ok := d.byDevice[device]
	if !ok {
		return 0, status.Errorf(codes.NotFound, "simdp: unknown device %d, want one of %v", device, d.devices)
	}
	return l, nil
}

// SetPath implements target.Dataplane. For a protected flow's forward
// 5-tuple on its source leaf it moves the simulated flow to the switch of
// uplinkPort; for its reverse 5-tuple on the destination leaf it records
// the switch (PlacementOf); other entries are recorded only. A port that
// is not an uplink of the device is refused with INVALID_ARGUMENT.
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
	if p := d.forward(l, flow); p != nil {
		if err := d.f.Place(context.Background(), flow, k); err != nil {
			return status.Errorf(codes.Internal, "simdp: %s: move %v to switch %d: %v", leafName(l), flow, k, err)
		}
		p.fwd, p.sw = k, k
	} else if p := d.reverse(l, flow); p != nil {
		p.rev = k
	}
	d.paths[pathKey{device, flow}] = uplinkPort
	return nil
}

// forward returns the protected flow whose forward 5-tuple is flow, if
// leaf l is its source leaf. Call with d.mu held.
func (d *Dataplane) forward(l int, flow proflow.FlowID) *protFlow {
	if i, ok := d.byFwd[flow]; ok && d.prot[i].srcLeaf == l {
		return &d.prot[i]
	}
	return nil
}

// reverse returns the protected flow whose reverse 5-tuple is flow, if
// leaf l is its destination leaf. Call with d.mu held.
func (d *Dataplane) reverse(l int, flow proflow.FlowID) *protFlow {
	if i, ok := d.byRev[flow]; ok && d.prot[i].dstLeaf == l {
		return &d.prot[i]
	}
	return nil
}

// ClearPath implements target.Dataplane. For a protected flow's forward
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
	if p := d.forward(l, flow); p != nil {
		if err := d.f.Place(context.Background(), flow, p.base); err != nil {
			return status.Errorf(codes.Internal, "simdp: %s: return %v to base switch %d: %v", leafName(l), flow, p.base, err)
		}
		p.fwd, p.sw = -1, p.base
	} else if p := d.reverse(l, flow); p != nil {
		p.rev = -1
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

// PathCounters implements target.Dataplane: a protected flow's frames
// into its source leaf for its forward 5-tuple there, zero for any other.
func (d *Dataplane) PathCounters(device uint64, flow proflow.FlowID) (target.Counts, error) {
	l, err := d.leaf(device)
	if err != nil {
		return target.Counts{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sync()
	if p := d.forward(l, flow); p != nil {
		return d.counts(p.bytes), nil
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

	// The flows of the interval, with the streams through each switch: the
	// protected flows first (srcs[i] is d.prot[i]), then the congesters.
	srcs := d.sources[:0]
	for i := range d.prot {
		p := &d.prot[i]
		tput := o.Flow.Throughput
		if i < len(o.Flows) {
			tput = o.Flows[i].Throughput
		}
		srcs = append(srcs, source{host: p.srcHost, dst: p.dstHost, sw: p.sw, streams: 1, protected: true,
			rate: tput * frames, out: tput * frames})
	}
	np := len(srcs)
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
	for i := np; i < len(srcs); i++ {
		s := &srcs[i]
		s.rate = o.Switches[s.sw].TxRate * s.streams / streams[s.sw]
		if s.capRate > 0 {
			s.rate = min(s.rate, s.capRate*s.streams)
		}
	}
	// Scale each leaf in L to its measured traffic: its congesters to its
	// congestion traffic λ, its protected flows to the rest of what it sent,
	// μ−λ (shared by their goodput, or evenly when none had any).
	for l, i := range d.inL {
		if i < 0 {
			continue
		}
		lambda := o.Leaves[i].IngressRate
		var sum, n, psum, pn float64
		for _, s := range srcs {
			switch {
			case s.host/hpl != l:
			case s.protected:
				psum, pn = psum+s.rate, pn+1
			default:
				sum, n = sum+s.rate, n+s.streams
			}
		}
		rest := max(0, o.Leaves[i].TransmitRate-lambda)
		for j := range srcs {
			s := &srcs[j]
			switch {
			case s.host/hpl != l:
			case s.protected && psum > 0:
				s.rate *= rest / psum
			case s.protected:
				s.rate = rest / pn
			case sum > 0:
				s.rate *= lambda / sum
			default:
				s.rate = lambda * s.streams / n
			}
		}
	}
	// What the leaves send up.
	offered, protOut := d.offered, d.protOut // congesters' rates and protected flows' deliveries per switch
	clear(offered)
	clear(protOut)
	for i, s := range srcs {
		l := s.host / hpl
		d.hostRx[l][s.host%hpl] += s.rate * dt
		d.upTx[l][s.sw] += s.rate * dt
		if s.protected {
			d.prot[i].bytes += s.rate * dt
			protOut[s.sw] += s.out
		} else {
			offered[s.sw] += s.rate
		}
	}
	// What the switches deliver, to the destinations' leaves and hosts.
	for _, s := range srcs {
		out := s.out
		if !s.protected {
			rest := max(0, o.Switches[s.sw].TxRate-protOut[s.sw])
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
