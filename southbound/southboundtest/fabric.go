package southboundtest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/nilcheck"
)

// Fabric is an in-memory fabric: a proflow.Telemetry whose samples a test
// sets directly, and a proflow.Enforcer and proflow.Locator that keep the
// placement of each flow in a table. It stamps every sample with the time of
// an injected proflow.Clock, and it can be told to fail in the ways a real
// fabric fails: telemetry errors, samples that stop advancing or arrive late,
// malformed samples, enforcer errors and an enforcer that hangs.
//
// NaN, infinite or negative rates need no special mode: set them with
// SetSwitch, SetLeaf or SetFlow.
//
// A Fabric is safe for concurrent use. The zero value is not usable; create
// one with NewFabric.
type Fabric struct {
	topo  proflow.Topology
	clock proflow.Clock

	mu         sync.Mutex
	switches   []proflow.SwitchSample
	leaves     []proflow.LeafSample
	flow       proflow.FlowSample
	lag        time.Duration
	stale      bool
	lastTime   time.Time // time stamped on the last successful sample
	tamper     func(*proflow.Observation)
	collectErr error
	collectN   int // pending failing Collects; < 0 means every call
	collects   int

	placed   map[proflow.FlowID]int
	placeErr error
	placeN   int // pending failing Places; < 0 means every call
	block    bool
	places   int
}

var (
	_ proflow.Telemetry = (*Fabric)(nil)
	_ proflow.Enforcer  = (*Fabric)(nil)
	_ proflow.Locator   = (*Fabric)(nil)
)

// NewFabric returns a fabric for the topology with every sample zero and no
// flow placed. Samples are stamped with clock's time; a nil clock means
// proflow.SystemClock, and a typed nil (a nil *ManualClock, say) panics
// here rather than at the first sample. The topology is copied.
func NewFabric(topo proflow.Topology, clock proflow.Clock) *Fabric {
	switch {
	case clock == nil:
		clock = proflow.SystemClock{}
	case nilcheck.IsNil(clock):
		panic(fmt.Sprintf("southboundtest: NewFabric: clock is a nil %T; pass nil for the system clock", clock))
	}
	topo.Switches = append([]string(nil), topo.Switches...)
	topo.Leaves = append([]string(nil), topo.Leaves...)
	return &Fabric{
		topo:     topo,
		clock:    clock,
		switches: make([]proflow.SwitchSample, topo.NumSwitches()),
		leaves:   make([]proflow.LeafSample, topo.NumLeaves()),
		placed:   make(map[proflow.FlowID]int),
	}
}

// Topology returns a copy of the fabric's topology.
func (f *Fabric) Topology() proflow.Topology {
	t := f.topo
	t.Switches = append([]string(nil), t.Switches...)
	t.Leaves = append([]string(nil), t.Leaves...)
	return t
}

// SetSwitch sets the sample Collect reports for aggregation switch k. It
// panics if k is not a switch index of the topology.
func (f *Fabric) SetSwitch(k int, s proflow.SwitchSample) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k < 0 || k >= len(f.switches) {
		panic(fmt.Sprintf("southboundtest: SetSwitch(%d): want a switch index in 0..%d", k, len(f.switches)-1))
	}
	f.switches[k] = s
}

// SetSwitches sets the sample of every aggregation switch to s.
func (f *Fabric) SetSwitches(s proflow.SwitchSample) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.switches {
		f.switches[k] = s
	}
}

// SetLeaf sets the sample Collect reports for congestion leaf l. It panics
// if l is not a leaf index of the topology.
func (f *Fabric) SetLeaf(l int, s proflow.LeafSample) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l < 0 || l >= len(f.leaves) {
		panic(fmt.Sprintf("southboundtest: SetLeaf(%d): want a leaf index in 0..%d", l, len(f.leaves)-1))
	}
	f.leaves[l] = s
}

// SetFlow sets the protected-flow sample Collect reports.
func (f *Fabric) SetFlow(s proflow.FlowSample) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flow = s
}

// SetStale turns stale mode on or off. In stale mode Collect succeeds but
// stamps every sample with the time of the last sample taken before the mode
// began (the clock's time if there was none): the fabric's counters stopped
// advancing. Collect does not return ErrStale itself; detecting the frozen
// time is the consumer's job.
func (f *Fabric) SetStale(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stale = on
}

// SetLag makes Collect stamp samples d before the clock's time, as a
// telemetry pipeline that delivers old data. Zero removes the lag.
func (f *Fabric) SetLag(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lag = d
}

// Tamper sets a function that Collect applies to every observation after
// filling it, to produce samples the setters cannot express: a missing
// switch (shorten obs.Switches), an extra leaf, a zero time. nil removes it.
// The function runs with the fabric locked and must not call its methods.
func (f *Fabric) Tamper(fn func(obs *proflow.Observation)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tamper = fn
}

// FailCollect makes the next n calls of Collect return err (wrapped) without
// touching the observation; n < 0 fails every call until FailCollect(0, nil).
func (f *Fabric) FailCollect(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.collectN, f.collectErr = n, err
}

// FailPlace makes the next n calls of Place return err (wrapped) and leave
// the placement as it was; n < 0 fails every call until FailPlace(0, nil).
func (f *Fabric) FailPlace(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.placeN, f.placeErr = n, err
}

// BlockPlace makes Place, while on, block until its context is done and then
// return the context's error with the placement unchanged: a southbound whose
// switch does not answer.
func (f *Fabric) BlockPlace(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.block = on
}

// Collects returns how many times Collect has been called, failures included.
func (f *Fabric) Collects() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.collects
}

// Places returns how many times Place has been called, failures included.
func (f *Fabric) Places() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.places
}

// Placement reads the fabric's table: the switch index carrying flow and
// whether the flow has been placed at all. Unlike Locate it never fails, so
// tests use it as the ground truth.
func (f *Fabric) Placement(flow proflow.FlowID) (sw int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sw, ok = f.placed[flow]
	if !ok {
		return -1, false
	}
	return sw, true
}

// Collect implements proflow.Telemetry: it sizes obs for the topology and
// fills it with the values set on the fabric, stamped with the clock's time.
func (f *Fabric) Collect(ctx context.Context, obs *proflow.Observation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.collects++
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("southboundtest: collect: %w", err)
	}
	if f.collectN != 0 {
		if f.collectN > 0 {
			f.collectN--
		}
		return fmt.Errorf("southboundtest: collect: injected failure: %w", f.collectErr)
	}
	obs.Resize(f.topo)
	copy(obs.Switches, f.switches)
	copy(obs.Leaves, f.leaves)
	obs.Flow = f.flow
	now := f.clock.Now().Add(-f.lag)
	if f.stale && !f.lastTime.IsZero() {
		now = f.lastTime
	}
	f.lastTime = now
	obs.Time = now
	if f.tamper != nil {
		f.tamper(obs)
	}
	return nil
}

// Place implements proflow.Enforcer: it records sw as flow's switch in the
// fabric's table. It fails, leaving the table unchanged, for a cancelled
// context, an invalid flow, a switch index outside the topology, an injected
// failure (FailPlace) and, in BlockPlace mode, when its context ends.
func (f *Fabric) Place(ctx context.Context, flow proflow.FlowID, sw int) error {
	f.mu.Lock()
	f.places++
	if err := ctx.Err(); err != nil {
		f.mu.Unlock()
		return fmt.Errorf("southboundtest: place %v: %w", flow, err)
	}
	if err := flow.Validate(); err != nil {
		f.mu.Unlock()
		return fmt.Errorf("southboundtest: place: %w", err)
	}
	if sw < 0 || sw >= f.topo.NumSwitches() {
		f.mu.Unlock()
		return fmt.Errorf("southboundtest: place %v: %w", flow, &proflow.UnknownSwitchError{Index: sw, Known: f.topo.Switches})
	}
	if f.placeN != 0 {
		if f.placeN > 0 {
			f.placeN--
		}
		err := f.placeErr
		f.mu.Unlock()
		return fmt.Errorf("southboundtest: place %v on %s: injected failure: %w", flow, f.topo.Switches[sw], err)
	}
	if f.block {
		f.mu.Unlock()
		<-ctx.Done()
		return fmt.Errorf("southboundtest: place %v on %s: %w", flow, f.topo.Switches[sw], ctx.Err())
	}
	f.placed[flow] = sw
	f.mu.Unlock()
	return nil
}

// Locate implements proflow.Locator: it returns the switch recorded for
// flow, or an error wrapping proflow.ErrNotPlaced if the flow was never placed.
func (f *Fabric) Locate(ctx context.Context, flow proflow.FlowID) (int, error) {
	if err := ctx.Err(); err != nil {
		return -1, fmt.Errorf("southboundtest: locate %v: %w", flow, err)
	}
	if sw, ok := f.Placement(flow); ok {
		return sw, nil
	}
	return -1, fmt.Errorf("southboundtest: locate %v: %w", flow, proflow.ErrNotPlaced)
}
