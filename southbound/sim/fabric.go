package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
)

// Fabric is one simulated episode: the fabric of a Config carrying the
// protected flow and the congesters of a Scenario. It implements
// proflow.Telemetry, proflow.Enforcer and proflow.Locator, so a
// proflow.Controller drives it exactly as it drives a real fabric, and its
// Clock runs on virtual time that moves only by Advance.
//
// A Fabric is safe for concurrent use; Advance holds it while it simulates.
type Fabric struct {
	mu        sync.Mutex
	cfg       Config
	sc        *Scenario
	topo      proflow.Topology
	flows     []proflow.ProtectedFlow // flows[i] is stream i; flows[0] the primary
	index     map[proflow.FlowID]int  // a protected flow's index in flows
	initial   []int                   // the switch each protected flow starts on
	e         *engine
	noise     *rand.Rand
	peekRNG   *rand.Rand          // the noise of Peek's readings, apart so that peeking leaves the samples' noise unchanged
	peekTruth proflow.Observation // Peek's readings without noise
	actions   []action
	next      int
	now       time.Duration // virtual time since the start of the episode
	perSmp    int64         // steps per telemetry sample
	cgStream  []int         // first stream of each congester
	tickers   []*ticker

	have       bool
	truth      proflow.Observation  // latest sample, without noise
	meas       proflow.Observation  // latest sample, as measured (with noise)
	truthFlows []proflow.FlowSample // latest sample of each protected flow, without noise
	measFlows  []proflow.FlowSample // and as measured; [0] is truth.Flow, meas.Flow
}

type actionKind uint8

const (
	actArrive actionKind = iota
	actMove
	actDepart
)

// action is a scheduled change of a congester, applied before the step
// that starts at or after its time.
type action struct {
	step int64
	kind actionKind
	cg   int // congester index
	sw   int
}

// New builds the fabric of cfg running scenario sc, with every random
// choice drawn from seed: the same (cfg, sc, seed) always produces the same
// episode. The protected flow starts at virtual time zero on
// sc.ProtectedSwitch; the first telemetry sample is ready after one
// Config.Interval.
func New(cfg Config, sc *Scenario, seed uint64) (*Fabric, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sc == nil {
		return nil, fmt.Errorf("sim: new fabric: scenario is nil")
	}
	if err := sc.Validate(cfg); err != nil {
		return nil, fmt.Errorf("sim: new fabric: %w", err)
	}
	sc = sc.Clone()
	f := &Fabric{
		cfg:     cfg,
		sc:      sc,
		topo:    cfg.Topology(),
		e:       newEngine(cfg, seed),
		noise:   rand.New(rand.NewPCG(seed, 0x6e6f697365)),
		peekRNG: rand.New(rand.NewPCG(seed, 0x7065656b)),
		perSmp:  int64(cfg.Interval / cfg.Step),
	}
	e := f.e
	// The protected flows are the first streams, in order, so that with one
	// of them every random draw comes in the order it always has.
	prot := sc.protectedFlows(cfg)
	f.index = make(map[proflow.FlowID]int, len(prot))
	for i, p := range prot {
		pair := 0
		if len(sc.Protected) == 0 {
			pair = e.addPair(p.src, p.dst)
		} else {
			pair = e.newPair(p.src, p.dst, true)
		}
		e.streams = append(e.streams, stream{pair: pair, src: p.src, dst: p.dst, protected: true, flow: i,
			capRate: p.kind.capRate(cfg, p.capRate), app: p.kind.newApp(cfg, seed, i)})
		e.lat = append(e.lat, latStat{rtts: make([]float64, 0, f.perSmp)})
		f.flows = append(f.flows, p.flow)
		f.initial = append(f.initial, p.sw)
		f.index[p.flow.ID] = i
	}
	e.accFlow = make([]float64, len(prot))
	e.accApp = make([]float64, len(prot))
	f.truthFlows = make([]proflow.FlowSample, len(prot))
	f.measFlows = make([]proflow.FlowSample, len(prot))
	stepOf := func(d Duration) int64 {
		return int64((time.Duration(d) + cfg.Step - 1) / cfg.Step)
	}
	for i, c := range sc.Congesters {
		h, _ := cfg.hostIndex(c.Host)
		d, _ := cfg.hostIndex(c.dst(cfg))
		n := c.Streams
		if n == 0 {
			n = cfg.StreamsPerCongester
		}
		p := e.addPair(h, d)
		f.cgStream = append(f.cgStream, len(e.streams))
		for range n {
			e.streams = append(e.streams, stream{pair: p, src: h, dst: d, capRate: float64(c.StreamCap)})
		}
		k, _ := cfg.switchIndex(c.Switch)
		f.actions = append(f.actions, action{step: stepOf(c.Arrive), kind: actArrive, cg: i, sw: k})
		for _, m := range c.Moves {
			k, _ := cfg.switchIndex(m.Switch)
			f.actions = append(f.actions, action{step: stepOf(m.At), kind: actMove, cg: i, sw: k})
		}
		if c.Depart != 0 {
			f.actions = append(f.actions, action{step: stepOf(c.Depart), kind: actDepart, cg: i})
		}
	}
	f.cgStream = append(f.cgStream, len(e.streams))
	slices.SortStableFunc(f.actions, func(a, b action) int { return int(a.step - b.step) })
	for i, sw := range f.initial {
		e.start(&e.streams[i], sw)
	}
	f.truth.Resize(f.topo)
	f.meas.Resize(f.topo)
	f.peekTruth.Resize(f.topo)
	return f, nil
}

// protectedSpec is one protected flow of a scenario, resolved against a
// Config.
type protectedSpec struct {
	src, dst, sw int
	capRate      float64
	kind         FlowKind
	flow         proflow.ProtectedFlow
}

// protectedFlows returns the protected flows of s, which must be valid for
// cfg: its Protected list, or else the Config's f_p on ProtectedSwitch.
func (s *Scenario) protectedFlows(cfg Config) []protectedSpec {
	if len(s.Protected) == 0 {
		src, _ := cfg.hostIndex(cfg.ProtectedSrc)
		dst, _ := cfg.hostIndex(cfg.ProtectedDst)
		sw, _ := cfg.switchIndex(s.ProtectedSwitch)
		return []protectedSpec{{src: src, dst: dst, sw: sw, kind: s.ProtectedKind, flow: proflow.ProtectedFlow{ID: cfg.Flow()}}}
	}
	out := make([]protectedSpec, 0, len(s.Protected))
	for _, p := range s.Protected {
		src, _ := cfg.hostIndex(p.Src)
		dst, _ := cfg.hostIndex(p.Dst)
		sw, _ := cfg.switchIndex(p.Switch)
		sp, dp := p.ports()
		out = append(out, protectedSpec{src: src, dst: dst, sw: sw, capRate: float64(p.Cap), kind: p.Kind,
			flow: proflow.ProtectedFlow{ID: flowID(src, dst, sp, dp), Weight: p.Weight}})
	}
	return out
}

// Config returns the fabric's configuration.
func (f *Fabric) Config() Config {
	c := f.cfg
	c.CongestionLeaves = slices.Clone(c.CongestionLeaves)
	return c
}

// Scenario returns a copy of the scenario the fabric runs.
func (f *Fabric) Scenario() *Scenario { return f.sc.Clone() }

// Topology returns the topology the controller should use.
func (f *Fabric) Topology() proflow.Topology {
	return proflow.Topology{Switches: slices.Clone(f.topo.Switches), Leaves: slices.Clone(f.topo.Leaves), BucketRate: f.topo.BucketRate}
}

// Flow returns the protected flow: the primary one, Protected()[0], when
// there are several.
func (f *Fabric) Flow() proflow.FlowID { return f.flows[0].ID }

// InitialSwitch returns the index of the switch the protected flow (the
// primary one) starts on.
func (f *Fabric) InitialSwitch() int { return f.initial[0] }

// Protected returns the protected flows with their weights, the primary
// flow first: the scenario's Protected list, or the one flow f_p.
func (f *Fabric) Protected() []proflow.ProtectedFlow { return slices.Clone(f.flows) }

// InitialPlacements returns where each protected flow starts, in the
// order of Protected.
func (f *Fabric) InitialPlacements() []proflow.Placement {
	out := make([]proflow.Placement, len(f.flows))
	for i, p := range f.flows {
		out[i] = proflow.Placement{Flow: p.ID, Switch: f.initial[i]}
	}
	return out
}

// Start returns the virtual time at which the episode starts.
func (f *Fabric) Start() time.Time { return f.cfg.Epoch }

// CongestionStart returns the virtual time at which the evaluation window
// opens (Scenario.CongestionStart after Start).
func (f *Fabric) CongestionStart() time.Time { return f.cfg.Epoch.Add(f.sc.Start()) }

// End returns the virtual time at which the episode ends.
func (f *Fabric) End() time.Time { return f.cfg.Epoch.Add(f.sc.Length()) }

// Now returns the virtual time.
func (f *Fabric) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg.Epoch.Add(f.now)
}

// Elapsed returns the virtual time since the start of the episode.
func (f *Fabric) Elapsed() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Current returns the index of the switch carrying the protected flow (the
// primary one).
func (f *Fabric) Current() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.e.streams[0].sw
}

// FlowTruth is one protected flow's ground truth: where it is and what it
// achieved over the latest telemetry interval.
type FlowTruth struct {
	Flow proflow.ProtectedFlow
	// Switch is the index of the switch carrying the flow now.
	Switch int
	// Throughput is the flow's goodput over the latest interval, bytes/s,
	// without measurement noise (as Truth's Flow.Throughput).
	Throughput float64
}

// FlowTruths appends the ground truth of every protected flow, in the
// order of Protected, to dst[:0] and returns it; with enough capacity in
// dst it does not allocate. Before the first sample every throughput is 0.
func (f *Fabric) FlowTruths(dst []FlowTruth) []FlowTruth {
	f.mu.Lock()
	defer f.mu.Unlock()
	dst = dst[:0]
	for i, p := range f.flows {
		dst = append(dst, FlowTruth{Flow: p, Switch: f.e.streams[i].sw, Throughput: f.truthFlows[i].Throughput})
	}
	return dst
}

// Advance moves virtual time forward by d, simulating every step on the
// way, taking a telemetry sample at every multiple of Config.Interval and
// firing the tickers of Clock. It does not sleep. A negative d is an error.
func (f *Fabric) Advance(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("sim: advance by %v, want a non-negative duration", d)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now += d
	e := f.e
	for time.Duration(e.step+1)*f.cfg.Step <= f.now {
		for f.next < len(f.actions) && f.actions[f.next].step <= e.step {
			f.apply(f.actions[f.next])
			f.next++
		}
		e.advance()
		if e.step%f.perSmp == 0 {
			f.sample()
		}
	}
	for _, t := range f.tickers {
		t.fire(f.cfg.Epoch, f.now)
	}
	return nil
}

func (f *Fabric) apply(a action) {
	e := f.e
	for i := f.cgStream[a.cg]; i < f.cgStream[a.cg+1]; i++ {
		s := &e.streams[i]
		switch a.kind {
		case actArrive:
			e.start(s, a.sw)
		case actMove:
			e.move(s, a.sw)
		case actDepart:
			e.stop(s)
		}
	}
}

// sample turns the interval's counters into an observation (see the
// package documentation for the definition of every signal) and resets
// them.
func (f *Fabric) sample() {
	e, cfg := f.e, &f.cfg
	iv := cfg.Interval.Seconds()
	o := &f.truth
	f.readFabric(o, iv)
	congestion := 0.0
	for _, l := range o.Leaves {
		congestion += l.IngressRate
	}
	for i, b := range e.accFlow {
		f.truthFlows[i] = proflow.FlowSample{Throughput: b / iv * cfg.MSS / cfg.PacketSize, CongestionRate: congestion, AppLimited: min(1, e.accApp[i]/iv)}
		f.latency(&f.truthFlows[i], i, e.now())
	}
	o.Flow = f.truthFlows[0]

	m := &f.meas
	f.measureFabric(m, o, f.noise)
	// Latency is read from the sender's TCP stack (ss -ti) and the
	// application's own clock: exact, no noise, and no random draw.
	m.Flow = o.Flow
	m.Flow.Throughput, m.Flow.CongestionRate = f.noisy(o.Flow.Throughput), f.noisy(o.Flow.CongestionRate)
	// The other protected flows' readings draw their noise after every
	// reading of the one-flow fabric; F is the same reading for all.
	f.measFlows[0] = m.Flow
	for i := 1; i < len(f.measFlows); i++ {
		f.measFlows[i] = f.truthFlows[i]
		f.measFlows[i].Throughput, f.measFlows[i].CongestionRate = f.noisy(f.truthFlows[i].Throughput), m.Flow.CongestionRate
	}
	f.have = true

	clear(e.accTx)
	clear(e.accEv)
	clear(e.accIn)
	clear(e.accUp)
	clear(e.accFlow)
	clear(e.accApp)
	for p := range e.pairs {
		clear(e.pairs[p].bytes)
		clear(e.pairs[p].fwd)
		clear(e.pairs[p].rev)
	}
}

// readFabric writes into o, without noise, the time of the present step
// and every switch's and leaf's readings over the last iv seconds, from
// the accumulators the engine has filled since the last sample.
func (f *Fabric) readFabric(o *proflow.Observation, iv float64) {
	e, cfg := f.e, &f.cfg
	o.Time = cfg.Epoch.Add(time.Duration(e.step) * cfg.Step)
	elephant := cfg.ElephantFraction * cfg.BucketRate
	for k := range o.Switches {
		n, el := 0, 0.0
		for p := range e.pairs {
			ps := &e.pairs[p]
			if ps.fwd[k] {
				n++
			}
			if ps.rev[k] {
				n++
			}
			if r := ps.bytes[k] / iv; r > elephant {
				el += r
			}
		}
		o.Switches[k] = proflow.SwitchSample{TxRate: e.accTx[k] / iv, OverflowRate: e.accEv[k] / iv, FlowCount: float64(n), ElephantRate: el}
	}
	for p := range e.ports {
		o.Switches[e.ports[p].sw].QueueBytes += e.ports[p].backlog
	}
	for i, l := range cfg.CongestionLeaves {
		o.Leaves[i] = proflow.LeafSample{IngressRate: e.accIn[l] / iv, TransmitRate: e.accUp[l] / iv}
	}
}

// measureFabric writes into m the time, switches and leaves of o as
// measured, with noise drawn from rng.
func (f *Fabric) measureFabric(m, o *proflow.Observation, rng *rand.Rand) {
	m.Time = o.Time
	for k, s := range o.Switches {
		// The backlog is a gauge tc reads exactly: no noise, and no random
		// draw, so the other readings keep their noise.
		m.Switches[k] = proflow.SwitchSample{TxRate: f.noisyFrom(rng, s.TxRate), OverflowRate: f.noisyFrom(rng, s.OverflowRate), FlowCount: s.FlowCount, ElephantRate: f.noisyFrom(rng, s.ElephantRate), QueueBytes: s.QueueBytes}
	}
	for i, l := range o.Leaves {
		m.Leaves[i] = proflow.LeafSample{IngressRate: f.noisyFrom(rng, l.IngressRate), TransmitRate: f.noisyFrom(rng, l.TransmitRate)}
	}
}

// latency fills the latency fields of protected flow i's sample from the
// interval's RTT samples and, for request/response traffic, the
// completions of its requests and the oldest request still outstanding at
// time t (its age so far, a lower bound on its completion time); it
// resets them for the next interval without allocating.
func (f *Fabric) latency(fs *proflow.FlowSample, i int, t float64) {
	l := &f.e.lat[i]
	fs.SmoothedRTT = l.srtt
	fs.RTTP99 = p99(l.rtts)
	l.rtts = l.rtts[:0]
	a := f.e.streams[i].app
	if a == nil || a.kind != KindRR {
		return
	}
	fs.Completions = float64(len(a.done))
	if age, ok := a.oldest(t); ok {
		a.done = append(a.done, age)
	}
	fs.CompletionP99 = p99(a.done)
	a.done = a.done[:0]
}

// p99 returns the 99th percentile of v by nearest rank (0 for no values),
// sorting v in place.
func p99(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[int(math.Ceil(0.99*float64(len(v))))-1]
}

// noisy returns v with multiplicative Gaussian measurement noise of
// relative standard deviation Config.NoiseLevel, never negative.
func (f *Fabric) noisy(v float64) float64 { return f.noisyFrom(f.noise, v) }

// noisyFrom is noisy with the noise drawn from rng.
func (f *Fabric) noisyFrom(rng *rand.Rand, v float64) float64 {
	if f.cfg.NoiseLevel == 0 || v == 0 {
		return v
	}
	return max(0, v*(1+f.cfg.NoiseLevel*rng.NormFloat64()))
}

// Collect implements proflow.Telemetry: it fills obs with the latest
// sample, as measured (with noise). Before the first sample it returns an
// error wrapping proflow.ErrStale.
//
// When obs.FlowIDs lists flows (a multi-flow controller), Collect also
// writes the sample of FlowIDs[i] into obs.Flows[i]: that flow's goodput
// and the fabric-wide F_t of obs.Flow. A flow that is not protected on the
// fabric is an error. obs.Flow is always the primary protected flow's.
func (f *Fabric) Collect(ctx context.Context, obs *proflow.Observation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.latest(ctx, obs, "collect")
}

// latest fills obs with the latest sample, as measured, for the operation
// op (collect, peek) of ctx; f.mu is held.
func (f *Fabric) latest(ctx context.Context, obs *proflow.Observation, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sim: %s: %w", op, err)
	}
	if !f.have {
		return fmt.Errorf("sim: %s: no sample yet (the first is taken after %v of virtual time): %w", op, f.cfg.Interval, proflow.ErrStale)
	}
	if err := f.fill(obs, &f.meas, f.measFlows); err != nil {
		return fmt.Errorf("sim: %s: %w", op, err)
	}
	return nil
}

// Peek implements proflow.Peeker: it fills obs, as measured, with the
// rates since the last telemetry sample up to the present step of the
// simulation: every switch's transmit and overflow rates, flow count,
// elephant rate and backlog, and every leaf's rates, with the
// measurement noise of Collect drawn from a source of its own, so that
// peeking leaves every sample Collect returns unchanged. obs.Flow and
// obs.Flows are the last sample's. Right at a sample it returns that
// sample, as Collect does; before the first it returns an error wrapping
// proflow.ErrStale.
func (f *Fabric) Peek(ctx context.Context, obs *proflow.Observation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.latest(ctx, obs, "peek"); err != nil {
		return err
	}
	n := f.e.step % f.perSmp // steps since the last sample
	if n == 0 {
		return nil
	}
	f.readFabric(&f.peekTruth, (time.Duration(n) * f.cfg.Step).Seconds())
	f.measureFabric(obs, &f.peekTruth, f.peekRNG)
	return nil
}

// Truth fills obs with the latest sample without measurement noise, the
// ground truth the measurements are taken from, including obs.Flows for
// the flows in obs.FlowIDs as Collect does. It reports false before the
// first sample and when obs.FlowIDs names a flow that is not protected on
// the fabric.
func (f *Fabric) Truth(obs *proflow.Observation) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.have {
		return false
	}
	return f.fill(obs, &f.truth, f.truthFlows) == nil
}

// fill copies the sample src, and the per-flow samples flows (indexed like
// f.flows), into obs, reusing its storage and keeping its FlowIDs.
func (f *Fabric) fill(obs, src *proflow.Observation, flows []proflow.FlowSample) error {
	obs.Resize(f.topo)
	if len(obs.FlowIDs) == 0 {
		obs.CopyFrom(src)
		return nil
	}
	obs.Time, obs.Flow = src.Time, src.Flow
	copy(obs.Switches, src.Switches)
	copy(obs.Leaves, src.Leaves)
	for i, id := range obs.FlowIDs {
		j, ok := f.index[id]
		if !ok {
			return fmt.Errorf("flow_ids[%d]: %v is %s", i, id, f.notProtected(id))
		}
		obs.Flows[i] = flows[j]
	}
	return nil
}

// notProtected says that flow is not one of the fabric's protected flows,
// naming them (the first three).
func (f *Fabric) notProtected(flow proflow.FlowID) string {
	if len(f.flows) == 1 {
		return fmt.Sprintf("not the protected flow %v", f.flows[0].ID)
	}
	var b strings.Builder
	for i, p := range f.flows[:min(3, len(f.flows))] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.ID.String())
	}
	if len(f.flows) > 3 {
		b.WriteString(", …")
	}
	return fmt.Sprintf("not one of the %d protected flows (%s)", len(f.flows), b.String())
}

// onlyRerouted says that the simulator moves nothing but its protected
// flows.
func (f *Fabric) onlyRerouted() string {
	if len(f.flows) == 1 {
		return "the only flow the simulator reroutes"
	}
	return "the only flows the simulator reroutes"
}

// lookup returns the index of a protected flow and checks the switch
// index sw.
func (f *Fabric) lookup(flow proflow.FlowID, sw int) (int, error) {
	i, ok := f.index[flow]
	if !ok {
		return 0, fmt.Errorf("%s, %s", f.notProtected(flow), f.onlyRerouted())
	}
	if sw < 0 || sw >= f.cfg.Switches {
		return 0, &proflow.UnknownSwitchError{Index: sw, Known: slices.Clone(f.topo.Switches)}
	}
	return i, nil
}

// Place implements proflow.Enforcer: it moves a protected flow, both
// directions, to switch sw at the current virtual time. Placing it where
// it is does nothing. Only protected flows can be placed.
func (f *Fabric) Place(ctx context.Context, flow proflow.FlowID, sw int) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sim: place %v: %w", flow, err)
	}
	i, err := f.lookup(flow, sw)
	if err != nil {
		return fmt.Errorf("sim: place %v: %w", flow, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.e.move(&f.e.streams[i], sw)
	return nil
}

// PlaceBatch implements proflow.BatchEnforcer: it applies the placements
// in order at the current virtual time, as that many calls of Place would,
// with no simulated time passing between them. A placement of a flow that
// is not protected, or onto a switch that does not exist, fails alone in
// errs. A context already done fails the whole batch before anything is
// applied (every errs[i] says so); errs must have len(ps).
func (f *Fabric) PlaceBatch(ctx context.Context, ps []proflow.Placement, errs []error) error {
	if err := proflow.CheckBatch(ps, errs); err != nil {
		return fmt.Errorf("sim: place batch: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return proflow.FailBatch(errs, fmt.Errorf("sim: place batch: %w", err))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range ps {
		j, err := f.lookup(p.Flow, p.Switch)
		if err != nil {
			errs[i] = fmt.Errorf("sim: place %v: %w", p.Flow, err)
			continue
		}
		f.e.move(&f.e.streams[j], p.Switch)
		errs[i] = nil
	}
	return nil
}

// Locate implements proflow.Locator: it returns the switch carrying a
// protected flow.
func (f *Fabric) Locate(ctx context.Context, flow proflow.FlowID) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("sim: locate %v: %w", flow, err)
	}
	i, ok := f.index[flow]
	if !ok {
		return 0, fmt.Errorf("sim: locate %v: %s: %w", flow, f.notProtected(flow), proflow.ErrNotPlaced)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.e.streams[i].sw, nil
}

// ValidateFlow implements proflow.FlowValidator: it accepts every
// protected flow of the fabric. It refuses a flow whose hosts are not
// hosts of the fabric on two different leaves with an error wrapping
// proflow.ErrNotInFabric, and any other flow because the simulator
// reroutes only its protected flows.
func (f *Fabric) ValidateFlow(flow proflow.FlowID) error {
	if _, ok := f.index[flow]; ok {
		return nil
	}
	src, okSrc := f.hostOf(flow.Src)
	dst, okDst := f.hostOf(flow.Dst)
	if !okSrc || !okDst || src/f.cfg.HostsPerLeaf == dst/f.cfg.HostsPerLeaf {
		return fmt.Errorf("sim: flow %v: hosts 10.0.0.1..%d on two different leaves expected: %w", flow, f.cfg.Leaves*f.cfg.HostsPerLeaf, proflow.ErrNotInFabric)
	}
	return fmt.Errorf("sim: flow %v: %s, %s", flow, f.notProtected(flow), f.onlyRerouted())
}

// hostOf returns the index of the host with address a.
func (f *Fabric) hostOf(a netip.Addr) (int, bool) {
	if !a.Is4() {
		return 0, false
	}
	b := a.As4()
	h := int(b[3]) - 1
	if b[0] != 10 || b[1] != 0 || b[2] != 0 || h < 0 || h >= f.cfg.Leaves*f.cfg.HostsPerLeaf {
		return 0, false
	}
	return h, true
}

// Clock returns the fabric's virtual clock: Now is Fabric.Now, and tickers
// fire as Advance crosses their periods. A Controller given this clock can
// be driven by Step after each Advance, or by Run while another goroutine
// calls Advance.
func (f *Fabric) Clock() proflow.Clock { return fabricClock{f} }

type fabricClock struct{ f *Fabric }

// Now returns the fabric's virtual time.
func (c fabricClock) Now() time.Time { return c.f.Now() }

// NewTicker returns a ticker on virtual time. Like time.Ticker it drops
// ticks a slow receiver misses. A non-positive period is taken as one
// simulation step.
func (c fabricClock) NewTicker(d time.Duration) proflow.Ticker {
	f := c.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if d <= 0 {
		d = f.cfg.Step
	}
	t := &ticker{f: f, period: d, next: f.now + d, ch: make(chan time.Time, 1)}
	f.tickers = append(f.tickers, t)
	return t
}

type ticker struct {
	f      *Fabric
	period time.Duration
	next   time.Duration
	ch     chan time.Time
}

func (t *ticker) C() <-chan time.Time { return t.ch }

// Stop stops the ticker; no tick is sent after it returns.
func (t *ticker) Stop() {
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tickers = slices.DeleteFunc(f.tickers, func(x *ticker) bool { return x == t })
}

// fire sends the latest tick due at or before now, dropping the ones a slow
// receiver missed.
func (t *ticker) fire(epoch time.Time, now time.Duration) {
	if t.next > now {
		return
	}
	n := (now-t.next)/t.period + 1
	at := t.next + (n-1)*t.period
	t.next += n * t.period
	select {
	case t.ch <- epoch.Add(at):
	default:
	}
}
