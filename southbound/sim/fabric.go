package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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
	mu       sync.Mutex
	cfg      Config
	sc       *Scenario
	topo     proflow.Topology
	flow     proflow.FlowID
	e        *engine
	noise    *rand.Rand
	actions  []action
	next     int
	now      time.Duration // virtual time since the start of the episode
	perSmp   int64         // steps per telemetry sample
	cgStream []int         // first stream of each congester
	tickers  []*ticker

	have  bool
	truth proflow.Observation // latest sample, without noise
	meas  proflow.Observation // latest sample, as measured (with noise)
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
		cfg:    cfg,
		sc:     sc,
		topo:   cfg.Topology(),
		flow:   cfg.Flow(),
		e:      newEngine(cfg, seed),
		noise:  rand.New(rand.NewPCG(seed, 0x6e6f697365)),
		perSmp: int64(cfg.Interval / cfg.Step),
	}
	e := f.e
	src, _ := cfg.hostIndex(cfg.ProtectedSrc)
	dst, _ := cfg.hostIndex(cfg.ProtectedDst)
	sw, _ := cfg.switchIndex(sc.ProtectedSwitch)
	e.streams = append(e.streams, stream{pair: e.addPair(src, dst), src: src, dst: dst, protected: true})
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
	e.start(&e.streams[0], sw)
	f.truth.Resize(f.topo)
	f.meas.Resize(f.topo)
	return f, nil
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

// Flow returns the protected flow.
func (f *Fabric) Flow() proflow.FlowID { return f.flow }

// InitialSwitch returns the index of the switch the protected flow starts on.
func (f *Fabric) InitialSwitch() int {
	k, _ := f.cfg.switchIndex(f.sc.ProtectedSwitch)
	return k
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

// Current returns the index of the switch carrying the protected flow.
func (f *Fabric) Current() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.e.streams[0].sw
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
	congestion := 0.0
	for i, l := range cfg.CongestionLeaves {
		o.Leaves[i] = proflow.LeafSample{IngressRate: e.accIn[l] / iv, TransmitRate: e.accUp[l] / iv}
		congestion += o.Leaves[i].IngressRate
	}
	o.Flow = proflow.FlowSample{Throughput: e.accProt / iv * cfg.MSS / cfg.PacketSize, CongestionRate: congestion}

	m := &f.meas
	m.Time = o.Time
	for k, s := range o.Switches {
		m.Switches[k] = proflow.SwitchSample{TxRate: f.noisy(s.TxRate), OverflowRate: f.noisy(s.OverflowRate), FlowCount: s.FlowCount, ElephantRate: f.noisy(s.ElephantRate)}
	}
	for i, l := range o.Leaves {
		m.Leaves[i] = proflow.LeafSample{IngressRate: f.noisy(l.IngressRate), TransmitRate: f.noisy(l.TransmitRate)}
	}
	m.Flow = proflow.FlowSample{Throughput: f.noisy(o.Flow.Throughput), CongestionRate: f.noisy(o.Flow.CongestionRate)}
	f.have = true

	clear(e.accTx)
	clear(e.accEv)
	clear(e.accIn)
	clear(e.accUp)
	e.accProt = 0
	for p := range e.pairs {
		clear(e.pairs[p].bytes)
		clear(e.pairs[p].fwd)
		clear(e.pairs[p].rev)
	}
}

// noisy returns v with multiplicative Gaussian measurement noise of
// relative standard deviation Config.NoiseLevel, never negative.
func (f *Fabric) noisy(v float64) float64 {
	if f.cfg.NoiseLevel == 0 || v == 0 {
		return v
	}
	return max(0, v*(1+f.cfg.NoiseLevel*f.noise.NormFloat64()))
}

// Collect implements proflow.Telemetry: it fills obs with the latest
// sample, as measured (with noise). Before the first sample it returns an
// error wrapping proflow.ErrStale.
func (f *Fabric) Collect(ctx context.Context, obs *proflow.Observation) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sim: collect: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.have {
		return fmt.Errorf("sim: collect: no sample yet (the first is taken after %v of virtual time): %w", f.cfg.Interval, proflow.ErrStale)
	}
	obs.Resize(f.topo)
	obs.CopyFrom(&f.meas)
	return nil
}

// Truth fills obs with the latest sample without measurement noise, the
// ground truth the measurements are taken from. It reports false before
// the first sample.
func (f *Fabric) Truth(obs *proflow.Observation) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.have {
		return false
	}
	obs.Resize(f.topo)
	obs.CopyFrom(&f.truth)
	return true
}

// Place implements proflow.Enforcer: it moves the protected flow, both
// directions, to switch sw at the current virtual time. Placing it where
// it is does nothing. Only the protected flow can be placed.
func (f *Fabric) Place(ctx context.Context, flow proflow.FlowID, sw int) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sim: place %v: %w", flow, err)
	}
	if flow != f.flow {
		return fmt.Errorf("sim: place %v: not the protected flow %v, the only flow the simulator reroutes", flow, f.flow)
	}
	if sw < 0 || sw >= f.cfg.Switches {
		return fmt.Errorf("sim: place %v: %w", flow, &proflow.UnknownSwitchError{Index: sw, Known: slices.Clone(f.topo.Switches)})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.e.move(&f.e.streams[0], sw)
	return nil
}

// Locate implements proflow.Locator: it returns the switch carrying the
// protected flow.
func (f *Fabric) Locate(ctx context.Context, flow proflow.FlowID) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("sim: locate %v: %w", flow, err)
	}
	if flow != f.flow {
		return 0, fmt.Errorf("sim: locate %v: not the protected flow %v: %w", flow, f.flow, proflow.ErrNotPlaced)
	}
	return f.Current(), nil
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
