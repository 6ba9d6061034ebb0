package target

import (
	"fmt"
	"sync"

	"github.com/proflow-sdn/proflow"
)

// Counts is a byte and packet count, as in p4.v1.CounterData.
type Counts struct {
	Bytes   uint64
	Packets uint64
}

// Add returns c + d.
func (c Counts) Add(d Counts) Counts {
	return Counts{Bytes: c.Bytes + d.Bytes, Packets: c.Packets + d.Packets}
}

// Sub returns c − d, treating a count that went backwards (a reset of the
// data plane's counter) as zero progress.
func (c Counts) Sub(d Counts) Counts {
	var r Counts
	if c.Bytes > d.Bytes {
		r.Bytes = c.Bytes - d.Bytes
	}
	if c.Packets > d.Packets {
		r.Packets = c.Packets - d.Packets
	}
	return r
}

// PortCounts holds the counters of one switch port: what it received
// (leaf.p4's port_rx) and what it transmitted (port_tx).
type PortCounts struct {
	Rx, Tx Counts
}

// Dataplane is the packet-forwarding behaviour a Server fronts: the effect
// of the leaf program's path_select entries and the counters it keeps. The
// Server does all the P4Runtime bookkeeping (schema, table state,
// arbitration) and asks the Dataplane only about forwarding, so the same
// Server serves an in-memory model (MemDataplane) or a simulated fabric.
//
// Devices are the P4Runtime device IDs the Server was created with. A flow's
// zero ports or protocol mean "any", as in proflow.FlowID. Counters are
// cumulative since the data plane started; the Server turns them into
// P4Runtime counter values (reset by writes, per table entry).
//
// Methods are called with the Server's lock held and must not call back into
// the Server. They must be safe for concurrent use with the data plane's own
// activity.
type Dataplane interface {
	// SetPath makes device send flow toward its port uplinkPort, replacing
	// any path set before for the same flow.
	SetPath(device uint64, flow proflow.FlowID, uplinkPort uint32) error
	// ClearPath returns flow to the device's base forwarding.
	ClearPath(device uint64, flow proflow.FlowID) error
	// PathCounters returns the bytes and packets of flow that device has
	// forwarded (the direct counter of its path_select entry).
	PathCounters(device uint64, flow proflow.FlowID) (Counts, error)
	// PortCounters returns the receive and transmit counters of one port.
	PortCounters(device uint64, port uint32) (PortCounts, error)
}

type pathKey struct {
	device uint64
	flow   proflow.FlowID
}

type portKey struct {
	device uint64
	port   uint32
}

// MemDataplane is an in-memory Dataplane for tests and examples: it records
// the path set for each flow, and its counters move only when the caller
// adds traffic. It is safe for concurrent use.
type MemDataplane struct {
	mu      sync.Mutex
	paths   map[pathKey]uint32
	flows   map[pathKey]Counts
	ports   map[portKey]PortCounts
	failSet map[uint64]error // by device; 0 for all
	sets    int
}

var _ Dataplane = (*MemDataplane)(nil)

// NewMemDataplane returns an empty in-memory data plane.
func NewMemDataplane() *MemDataplane {
	return &MemDataplane{paths: map[pathKey]uint32{}, flows: map[pathKey]Counts{}, ports: map[portKey]PortCounts{}}
}

// SetPath records the path; it fails with the error set by FailSetPath.
func (m *MemDataplane) SetPath(device uint64, flow proflow.FlowID, uplinkPort uint32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.failSet[device]; err != nil {
		return err
	}
	if err := m.failSet[0]; err != nil {
		return err
	}
	m.paths[pathKey{device, flow}] = uplinkPort
	m.sets++
	return nil
}

// ClearPath forgets the path of flow on device.
func (m *MemDataplane) ClearPath(device uint64, flow proflow.FlowID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.paths, pathKey{device, flow})
	return nil
}

// PathCounters returns the traffic added for flow on device.
func (m *MemDataplane) PathCounters(device uint64, flow proflow.FlowID) (Counts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.flows[pathKey{device, flow}], nil
}

// PortCounters returns the traffic added on one port.
func (m *MemDataplane) PortCounters(device uint64, port uint32) (PortCounts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ports[portKey{device, port}], nil
}

// Path returns the uplink port set for flow on device, if any: the ground
// truth a test compares an enforcer with.
func (m *MemDataplane) Path(device uint64, flow proflow.FlowID) (port uint32, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	port, ok = m.paths[pathKey{device, flow}]
	return port, ok
}

// Paths returns how many flows have a path set on device.
func (m *MemDataplane) Paths(device uint64) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k := range m.paths {
		if k.device == device {
			n++
		}
	}
	return n
}

// SetPathCalls returns how many SetPath calls succeeded.
func (m *MemDataplane) SetPathCalls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sets
}

// FailSetPath makes every later SetPath on device (0: on every device)
// fail with err; a nil err stops the failures.
func (m *MemDataplane) FailSetPath(device uint64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failSet == nil {
		m.failSet = map[uint64]error{}
	}
	if err == nil {
		delete(m.failSet, device)
		return
	}
	m.failSet[device] = err
}

// AddFlowTraffic adds to the counters of flow on device.
func (m *MemDataplane) AddFlowTraffic(device uint64, flow proflow.FlowID, c Counts) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := pathKey{device, flow}
	m.flows[k] = m.flows[k].Add(c)
}

// AddPortTraffic adds to the receive and transmit counters of one port.
func (m *MemDataplane) AddPortTraffic(device uint64, port uint32, c PortCounts) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := portKey{device, port}
	p := m.ports[k]
	m.ports[k] = PortCounts{Rx: p.Rx.Add(c.Rx), Tx: p.Tx.Add(c.Tx)}
}

// String names the device and flow, for messages.
func (k pathKey) String() string { return fmt.Sprintf("device %d flow %v", k.device, k.flow) }
