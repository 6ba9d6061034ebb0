package p4runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/proflow-sdn/proflow"
)

// counts is a byte and packet count read from a counter.
type counts struct{ bytes, packets uint64 }

func countsOf(d *p4v1.CounterData) counts {
	return counts{bytes: uint64(max(d.GetByteCount(), 0)), packets: uint64(max(d.GetPacketCount(), 0))}
}

// delta returns cur − prev; a counter that went backwards was reset (an
// entry deleted and inserted again, a config push), and then cur is all
// that was counted since.
func delta(cur, prev uint64) uint64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// leafCounters is one leaf's reading.
type leafCounters struct {
	uplinkTx []uint64 // bytes sent toward each aggregation switch
	hostRx   []uint64 // bytes received from the hosts, per Leaf.HostPorts
	flow     uint64   // bytes of the protected flow's forward entry (source leaf)
	hasFlow  bool
	// entries holds the direct counter (bytes) of every path entry this
	// client owns on the leaf, by the 5-tuple it matches (entries of one
	// 5-tuple at other priorities add up): a flow's forward entry on its
	// source leaf is its throughput (Observation.Flows), and the entries'
	// deltas are the owned bytes λ leaves out.
	entries map[proflow.FlowID]uint64
}

// ownedDelta returns the bytes this client's path entries counted between
// prev and cur, entry by entry: an entry new since prev counts in full,
// one deleted since counts nothing, and one whose counter went backwards
// (deleted and inserted again) counts from zero. (The change of the sum
// would read a deleted entry as a reset of all of them.)
func ownedDelta(cur, prev *leafCounters) uint64 {
	var b uint64
	for f, v := range cur.entries {
		b += delta(v, prev.entries[f]) // a missing entry reads 0: counted in full
	}
	return b
}

// hostRxDelta returns the bytes received on the host ports between prev
// and cur, port by port, so that one port's counter reset does not hide
// the others' bytes.
func hostRxDelta(cur, prev *leafCounters) uint64 {
	var b uint64
	for k, v := range cur.hostRx {
		b += delta(v, prev.hostRx[k])
	}
	return b
}

type telemetryState struct {
	mu       sync.Mutex
	reqs     []*p4v1.ReadRequest
	prev     []leafCounters
	cur      []leafCounters
	peek     []leafCounters // a peek's reading (Peek), kept apart from cur
	errs     []error
	prevTime time.Time
	primed   bool
	leafIdx  []int // Topology.Leaves index -> Config.Leaves index
}

func (t *telemetryState) init(cfg *Config) {
	n := len(cfg.Leaves)
	t.reqs = make([]*p4v1.ReadRequest, n)
	t.prev, t.cur, t.peek, t.errs = make([]leafCounters, n), make([]leafCounters, n), make([]leafCounters, n), make([]error, n)
	for _, lc := range [][]leafCounters{t.prev, t.cur, t.peek} {
		for i := range lc {
			lc[i].uplinkTx = make([]uint64, cfg.Topology.NumSwitches())
			lc[i].hostRx = make([]uint64, len(cfg.Leaves[i].HostPorts))
			lc[i].entries = map[proflow.FlowID]uint64{}
		}
	}
	for _, name := range cfg.Topology.Leaves {
		for j, l := range cfg.Leaves {
			if l.Name == name {
				t.leafIdx = append(t.leafIdx, j)
			}
		}
	}
}

// request builds (once) the Read of one leaf: port_tx of each uplink,
// port_rx of each host port, and this client's path entries with their
// direct counters, in a single ReadRequest. (p4runtime-go-client reads one
// entity per request; one request per leaf halves the round trips.)
func (c *Client) request(i int) *p4v1.ReadRequest {
	if r := c.tel.reqs[i]; r != nil {
		return r
	}
	l := c.cfg.Leaves[i]
	r := &p4v1.ReadRequest{DeviceId: l.DeviceID, Role: c.cfg.Role}
	for _, p := range l.Uplinks {
		r.Entities = append(r.Entities, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
			CounterId: c.ids.portTx, Index: &p4v1.Index{Index: int64(p)}}}})
	}
	for _, p := range l.HostPorts {
		r.Entities = append(r.Entities, &p4v1.Entity{Entity: &p4v1.Entity_CounterEntry{CounterEntry: &p4v1.CounterEntry{
			CounterId: c.ids.portRx, Index: &p4v1.Index{Index: int64(p)}}}})
	}
	r.Entities = append(r.Entities, &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: &p4v1.TableEntry{
		TableId: c.ids.pathTable, Metadata: c.cfg.Owner, CounterData: &p4v1.CounterData{}}}})
	c.tel.reqs[i] = r
	return r
}

// readLeaf reads one leaf's counters into lc.
func (c *Client) readLeaf(ctx context.Context, i int, lc *leafCounters) error {
	s := c.sessions[i]
	ents, err := s.read(ctx, "read counters", c.request(i))
	if err != nil {
		return err
	}
	l := &c.cfg.Leaves[i]
	clear(lc.uplinkTx)
	clear(lc.hostRx)
	lc.flow, lc.hasFlow = 0, false
	clear(lc.entries)
	for _, e := range ents {
		switch x := e.GetEntity().(type) {
		case *p4v1.Entity_CounterEntry:
			ce := x.CounterEntry
			idx, v := uint32(ce.GetIndex().GetIndex()), countsOf(ce.GetData()).bytes
			switch ce.GetCounterId() {
			case c.ids.portTx:
				for k, p := range l.Uplinks {
					if p == idx {
						lc.uplinkTx[k] = v
					}
				}
			case c.ids.portRx:
				for k, p := range l.HostPorts {
					if p == idx {
						lc.hostRx[k] = v
					}
				}
			}
		case *p4v1.Entity_TableEntry:
			te := x.TableEntry
			v := countsOf(te.GetCounterData()).bytes
			f, ok := c.flowOf(te)
			lc.entries[f] += v // one without both addresses (!ok) still counts as owned
			if ok && i == c.src && f == c.cfg.Flow {
				lc.flow, lc.hasFlow = v, true
			}
		}
	}
	return nil
}

// Collect reads every leaf's counters (one Read RPC per leaf, in parallel)
// and fills obs with the rates since the previous Collect:
//
//   - Switches[k].TxRate: bytes/s all leaves sent toward aggregation switch k
//     (port_tx of the uplinks to k): the load offered to k's uplinks.
//   - Leaves[ℓ].TransmitRate μ: bytes/s leaf ℓ sent toward the aggregation
//     layer (port_tx of all its uplinks).
//   - Leaves[ℓ].IngressRate λ: bytes/s ℓ received from its hosts (port_rx
//     of the host ports) minus what this client's path entries counted there
//     (the protected flow): the congestion traffic entering at ℓ.
//   - Flow.Throughput φ: bytes/s of the protected flow's forward entry on
//     its source leaf (the path_select direct counter).
//   - Flow.CongestionRate F: the sum of λ over the congestion leaves.
//
// The switch cannot see token-bucket overflow, flow counts or elephants:
// OverflowRate, FlowCount and ElephantRate are zero. Merge the Client with a
// source that has them (telemetry.Merge with an Overlay), or use the Client
// itself as an Overlay on another source.
//
// The first Collect only primes the counters and returns an error wrapping
// proflow.ErrStale, as does a Collect whose clock did not advance. Collect
// fails if the protected flow has no path entry (place it first: the direct
// counter is its throughput).
//
// # Many flows
//
// A multi-flow controller lists its flows in obs.FlowIDs before Collect;
// Collect then writes the sample of FlowIDs[i] into obs.Flows[i] (resizing
// Flows to len(FlowIDs)): Throughput is the bytes/s counted by the
// path_select direct counter of that flow's forward entry on its source
// leaf — the same counter, read by the same Read RPC per leaf, as
// Flow.Throughput for Config.Flow, so no extra round trip per flow — and
// CongestionRate is F, as for obs.Flow. A flow whose entry appeared during
// the interval counts from its insertion.
//
//   - A flow the leaves cannot carry (IPv6, a host no leaf lists, both
//     hosts behind one leaf) fails Collect with an error naming
//     flow_ids[i] and wrapping proflow.ErrNotInFabric.
//   - A flow of the fabric with no entry of this client on its source leaf
//     (not placed yet, or released) has no counter: its Throughput is NaN,
//     so a MultiController holds that flow (ReasonInvalid) and decides for
//     the others.
//
// With FlowIDs set, Config.Flow needs no entry: obs.Flow carries its sample
// when it has one, and zero throughput (with F) otherwise, so that a
// released Config.Flow does not stop the other flows' telemetry.
func (c *Client) Collect(ctx context.Context, obs *proflow.Observation) error {
	return c.read(ctx, obs, false)
}

// Peek implements proflow.Peeker: it reads the counters as Collect does
// and fills obs with the rates since the last Collect's reading, without
// keeping this one: the next Collect's rates still span the whole time
// since the last one. Before the first Collect it returns an error
// wrapping proflow.ErrStale.
func (c *Client) Peek(ctx context.Context, obs *proflow.Observation) error {
	return c.read(ctx, obs, true)
}

// read sizes obs, samples into it (a peek with peek) and dates it.
func (c *Client) read(ctx context.Context, obs *proflow.Observation, peek bool) error {
	obs.Resize(c.cfg.Topology)
	now, err := c.sample(ctx, obs, peek)
	if err != nil {
		return err
	}
	obs.Time = now
	return nil
}

// Overlay writes the signals Collect reads (TxRate, the leaf samples, the
// flow sample and, for obs.FlowIDs, obs.Flows) into an observation another
// source has filled and sized, and leaves OverflowRate, FlowCount,
// ElephantRate and Time as they are: the Client as a telemetry.Overlay.
func (c *Client) Overlay(ctx context.Context, obs *proflow.Observation) error {
	if len(obs.Switches) != c.cfg.Topology.NumSwitches() || len(obs.Leaves) != c.cfg.Topology.NumLeaves() {
		return fmt.Errorf("p4runtime: overlay: observation has %d switch and %d leaf samples, want %d and %d (let the primary source size it)",
			len(obs.Switches), len(obs.Leaves), c.cfg.Topology.NumSwitches(), c.cfg.Topology.NumLeaves())
	}
	_, err := c.sample(ctx, obs, false)
	return err
}

// sample reads every leaf's counters and writes the rates since the last
// reading into obs; with peek, it reads into t.peek and keeps the last
// reading as it was (Peek).
func (c *Client) sample(ctx context.Context, obs *proflow.Observation, peek bool) (time.Time, error) {
	if err := c.checkOpen("collect"); err != nil {
		return time.Time{}, err
	}
	t := &c.tel
	t.mu.Lock()
	defer t.mu.Unlock()
	if peek {
		if !t.primed {
			return time.Time{}, fmt.Errorf("p4runtime: peek: no reading yet, want a Collect first: %w", proflow.ErrStale)
		}
		t.cur, t.peek = t.peek, t.cur
		defer func() { t.cur, t.peek = t.peek, t.cur }()
	}
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("p4runtime: collect: %w", err)
	}
	perFlow := len(obs.FlowIDs) > 0
	if perFlow {
		if err := c.checkFlowIDs(obs.FlowIDs); err != nil {
			return time.Time{}, err
		}
	}
	now := c.cfg.Clock.Now()
	var wg sync.WaitGroup
	for i := range c.sessions {
		wg.Go(func() {
			start := time.Now()
			t.errs[i] = c.readLeaf(ctx, i, &t.cur[i])
			c.m.poll(t.errs[i], time.Since(start))
		})
	}
	wg.Wait()
	if err := errors.Join(t.errs...); err != nil {
		return time.Time{}, fmt.Errorf("p4runtime: collect: %w", err)
	}
	if !t.cur[c.src].hasFlow && !perFlow {
		return time.Time{}, fmt.Errorf("p4runtime: collect: protected flow %v has no %s entry on leaf %s, so its throughput is unknown; place it first: %w",
			c.cfg.Flow, "path_select", c.cfg.Leaves[c.src].Name, proflow.ErrNotPlaced)
	}
	primed, dt := t.primed, now.Sub(t.prevTime).Seconds()
	if !peek {
		defer func() {
			t.prev, t.cur = t.cur, t.prev
			t.prevTime, t.primed = now, true
		}()
	}
	switch {
	case !primed:
		return time.Time{}, fmt.Errorf("p4runtime: collect: first sample primes the counters: %w", proflow.ErrStale)
	case dt <= 0:
		return time.Time{}, fmt.Errorf("p4runtime: collect: clock at %v did not advance past the previous sample: %w",
			now.Format(time.RFC3339Nano), proflow.ErrStale)
	}
	for k := range obs.Switches {
		var b uint64
		for i := range t.cur {
			b += delta(t.cur[i].uplinkTx[k], t.prev[i].uplinkTx[k])
		}
		obs.Switches[k].TxRate = float64(b) / dt
	}
	var congestion float64
	for l, i := range t.leafIdx {
		cur, prev := &t.cur[i], &t.prev[i]
		var tx uint64
		for k := range cur.uplinkTx {
			tx += delta(cur.uplinkTx[k], prev.uplinkTx[k])
		}
		in := float64(hostRxDelta(cur, prev)) - float64(ownedDelta(cur, prev))
		obs.Leaves[l] = proflow.LeafSample{IngressRate: max(in, 0) / dt, TransmitRate: float64(tx) / dt}
		congestion += obs.Leaves[l].IngressRate
	}
	flow := float64(delta(t.cur[c.src].flow, t.prev[c.src].flow))
	if !t.prev[c.src].hasFlow {
		flow = float64(t.cur[c.src].flow)
	}
	if !t.cur[c.src].hasFlow { // with FlowIDs only: see Collect
		flow = 0
	}
	obs.Flow = proflow.FlowSample{Throughput: flow / dt, CongestionRate: congestion}
	if perFlow {
		obs.Flows = resizeSamples(obs.Flows, len(obs.FlowIDs))
		for i, id := range obs.FlowIDs {
			obs.Flows[i] = proflow.FlowSample{Throughput: t.flowRate(c.srcLeaf(id), id, dt), CongestionRate: congestion}
		}
	}
	return now, nil
}

// flowRate returns the bytes/s of flow's forward entry on leaf src over the
// last interval of dt seconds, NaN without an entry.
func (t *telemetryState) flowRate(src int, flow proflow.FlowID, dt float64) float64 {
	cur, ok := t.cur[src].entries[flow]
	if !ok {
		return math.NaN()
	}
	prev, had := t.prev[src].entries[flow]
	if !had {
		return float64(cur) / dt
	}
	return float64(delta(cur, prev)) / dt
}

// checkFlowIDs checks that the leaves can carry every listed flow.
func (c *Client) checkFlowIDs(ids []proflow.FlowID) error {
	for i, id := range ids {
		if _, _, err := c.cfg.flowLeaves(id); err != nil {
			return fmt.Errorf("p4runtime: collect: flow_ids[%d]: %w", i, err)
		}
	}
	return nil
}

// srcLeaf returns the index of the leaf where flow enters the fabric; flow
// has passed checkFlowIDs.
func (c *Client) srcLeaf(flow proflow.FlowID) int {
	i, _ := c.cfg.leafOf(flow.Src)
	return i
}

// resizeSamples returns s with length n, reusing its storage.
func resizeSamples(s []proflow.FlowSample, n int) []proflow.FlowSample {
	if cap(s) < n {
		return make([]proflow.FlowSample, n)
	}
	return s[:n]
}
