package proflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow/internal/nilcheck"
)

// Errors of a MultiController's flow set.
var (
	// ErrFlowProtected is returned by AddFlow for a flow the controller
	// already protects.
	ErrFlowProtected = errors.New("flow already protected")
	// ErrFlowNotProtected is returned for a flow the controller does not protect.
	ErrFlowNotProtected = errors.New("flow not protected")
)

// MultiConfig holds the settings of a MultiController. Start from
// DefaultMultiConfig. The fields mean what Config's do, for every flow.
type MultiConfig struct {
	// Topology describes the aggregation switches and congestion leaves.
	Topology Topology
	// Interval is the control interval (default 500 ms).
	Interval time.Duration
	// StepTimeout bounds telemetry and enforcement within one step, for all
	// flows together (default: Interval).
	StepTimeout time.Duration
	// MaxSampleAge is the oldest observation the controller acts on
	// (default 2×Interval; negative disables the check).
	MaxSampleAge time.Duration
	// MaxClockSkew is how far an observation's time may lie after the
	// controller clock's time (default: Interval); see Config.MaxClockSkew.
	MaxClockSkew time.Duration
	// Baseline, when set, is given to every flow when it is added, instead
	// of learning one per flow.
	Baseline *Baseline
	// BaselineWarmup and BaselineSamples shape each flow's own baseline
	// phase, which starts when the flow is added: DefaultMultiConfig sets 4
	// and 10; a zero BaselineSamples is 10, a zero BaselineWarmup discards
	// no sample.
	BaselineWarmup, BaselineSamples int
	// Clock is the source of time (default SystemClock).
	Clock Clock
	// Logger receives one record per flow per step (reroutes at Info, holds
	// caused by errors at Warn, the rest at Debug, each with the flow) and
	// one per step at Debug (default: discard).
	Logger *slog.Logger
	// Registerer, when set, receives the controller's Prometheus metrics
	// (proflow_multi_*). No metric has a flow label. Leave it nil for none.
	// MultiController.Close unregisters them, so that a controller replacing
	// this one can register on the same registerer.
	Registerer prometheus.Registerer
	// Observer, when set, is called synchronously with every flow's
	// Decision of every step. It must not block; see SendTo. A panic in it
	// is logged at Error and does not stop the controller.
	Observer func(Decision)
	// Joint is the joint placement step between the per-flow gates and the
	// enforcer (default Independent: no joint step). See Greedy.
	Joint JointPlacer
	// Shadow runs every flow without moving it (Config.Shadow): the joint
	// step's placements are reported (ReasonShadow) and never sent to the
	// enforcer.
	Shadow bool
	// Cordoned are switch indices no flow is moved to (Config.Cordoned);
	// MultiController.Cordon changes the set while it runs.
	Cordoned []int
}

// DefaultMultiConfig returns a MultiConfig for the paper's topology with
// every default filled in.
func DefaultMultiConfig() MultiConfig {
	return MultiConfig{Topology: PaperTopology(), Interval: DefaultInterval, BaselineWarmup: 4, BaselineSamples: 10}
}

// loop returns c's settings as a Config without a flow, so that both
// controllers share defaults and checks.
func (c MultiConfig) loop() Config {
	return Config{Topology: c.Topology, Interval: c.Interval, StepTimeout: c.StepTimeout,
		MaxSampleAge: c.MaxSampleAge, MaxClockSkew: c.MaxClockSkew, Baseline: c.Baseline,
		BaselineWarmup: c.BaselineWarmup, BaselineSamples: c.BaselineSamples, Clock: c.Clock,
		Logger: c.Logger, Registerer: c.Registerer, Observer: c.Observer, Shadow: c.Shadow, Cordoned: c.Cordoned}
}

func (c MultiConfig) withDefaults() MultiConfig {
	l := c.loop().withDefaults()
	c.Interval, c.StepTimeout, c.MaxSampleAge, c.MaxClockSkew = l.Interval, l.StepTimeout, l.MaxSampleAge, l.MaxClockSkew
	c.BaselineSamples, c.Clock, c.Logger = l.BaselineSamples, l.Clock, l.Logger
	if c.Joint == nil {
		c.Joint = Independent{}
	}
	return c
}

// Validate reports every problem of the configuration at once.
func (c MultiConfig) Validate() error {
	errs := c.loop().problems(false)
	if c.Joint != nil && nilcheck.IsNil(c.Joint) {
		errs = append(errs, fmt.Errorf("joint placer is a nil %T, want a usable one, or nil for Independent", c.Joint))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("proflow: invalid multi-flow controller config: %w", err)
	}
	return nil
}

// FlowParts builds the per-flow collaborators of a MultiController. The
// controller calls each function once per flow, in AddFlow.
//
// Encoders and gates must be one per flow: an encoder keeps the previous
// observation (rates of change) and the flow's baseline, a gate keeps its
// flow's vote streak. AddFlow refuses a gate that is a pointer (as
// policy.NewGate returns) another protected flow has. The Policy is per flow too, because the reference
// policies keep per-flow state (Reactive and Crowd count consecutive
// samples of the flow's switch over their thresholds). A policy that keeps
// none — the learned agent, whose scores depend on the state vector alone
// — may be shared: return the same value every time. The controller scores
// flows one after another in one goroutine, so sharing needs no locking,
// but AddFlow calls Reset on collaborators that are Resetters, from the
// caller's goroutine: a shared collaborator must not be a Resetter.
//
// Batch, when set, scores every flow in one call per step instead of the
// per-flow Policies (Policy may then be nil and is not called): the
// controller encodes all flows' states into one matrix and hands it to
// Batch.ScoreBatch (see BatchPolicy). Every flow's encoder must then have
// the same Dim; AddFlow refuses a flow whose encoder differs from the first
// flow's.
type FlowParts struct {
	Encoder func(ProtectedFlow) (StateEncoder, error)
	Policy  func(ProtectedFlow) (Policy, error)
	Gate    func(ProtectedFlow) (Gate, error)
	Batch   BatchPolicy
}

// check names the functions missing from p.
func (p FlowParts) check() error {
	var missing []string
	if p.Encoder == nil {
		missing = append(missing, "Encoder is nil, want a function returning each flow's state encoder")
	}
	if p.Policy == nil && p.Batch == nil {
		missing = append(missing, "Policy and Batch are both nil, want Policy returning each flow's policy, or Batch scoring all flows at once")
	}
	if p.Gate == nil {
		missing = append(missing, "Gate is nil, want a function returning each flow's gate")
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("FlowParts.%s", strings.Join(missing, "; FlowParts."))
}

// MultiController protects a set of flows, each with its own Telemetry
// sample, StateEncoder, Policy, Gate and baseline, against one fabric: the
// paper's loop run for every flow at once, with a joint placement step
// between the gates and the enforcer so that protected flows do not herd.
//
// One step collects one Observation (listing the flows in FlowIDs, the
// Telemetry fills Flows), decides each flow on a view of it whose Flow is
// that flow's sample (so encoders and policies written for one flow work
// unchanged), hands every admitted move to the JointPlacer, and sends the
// moves to the Enforcer: in one PlaceBatch call when it is a BatchEnforcer,
// else one Place per flow. With one flow and the Independent placer its
// decisions are those of a Controller with the same collaborators.
//
// Bad input never stops the loop. An unusable observation holds every
// flow; a flow's bad sample, or its encoder, policy or gate failing or
// panicking, holds that flow; an enforcer refusing a flow holds it and no
// other.
//
// AddFlow, RemoveFlow, Flows and Current are safe to call from any
// goroutine, also while Run is running; a flow added or removed joins or
// leaves at the start of the next step. Run, Step, Recheck and Reconcile
// must not be called concurrently with one another.
//
// When the Telemetry is a Peeker, a flow's gate that is a Rechecker may
// defer a move to one recheck before the next step (Decision.Recheck), as
// a Controller's does: Recheck makes the rechecks that are due, and Run
// calls it when they are.
type MultiController struct {
	cfg   MultiConfig
	tel   Telemetry
	parts FlowParts
	enf   Enforcer
	batch BatchEnforcer // enf, when it is one
	smp   sampler
	seq   uint64

	mu       sync.Mutex
	byID     map[FlowID]*protectedFlow // protected or about to be
	gates    map[Gate]FlowID           // the flow of each protected flow's gate that is a pointer
	adds     []*protectedFlow
	releases []FlowID // removed flows whose rules wait to be released
	changed  bool     // adds or removals wait for the next step
	batchDim int      // with FlowParts.Batch: every flow's state length, once a flow was added

	// The step's state, owned by the goroutine that steps.
	flows  []*protectedFlow
	obs    Observation
	view   Observation
	ds     []Decision
	cur    []int
	wishes []Wish
	dst    []int
	jin    JointInput
	ps     []Placement
	psFlow []int // flow index of ps[j]
	errs   []error
	moved  []int // by switch: flows moved there this step
	on     []int // by switch: flows there after the step
	bat    batchStep
	dl     stepDeadline // makes each step's context
	m      *multiMetrics
	marks  []bool  // the cordon marks of the step under way, read once when it began
	cord   cordons // read once per step for every flow's loop

	peek Peeker      // tel as a Peeker; nil when it is not one (no rechecks)
	due  []time.Time // by flow index: when the flow's deferred move is rechecked; zero for none
	rds  []Decision  // a recheck's decisions, of the rechecked flows only
	now  []int       // a recheck's flows: the indices of those due
}

// protectedFlow is one flow of a MultiController.
type protectedFlow struct {
	flowLoop
	pf      ProtectedFlow
	removed bool // guarded by MultiController.mu
}

// NewMultiController checks cfg and the collaborators and returns a
// controller protecting no flow yet; add flows with AddFlow. Nil and typed
// nil collaborators are refused, as are missing FlowParts functions and a
// FlowParts.Batch that is an IntervalBound trained at another interval than
// cfg.Interval (AddFlow refuses such a per-flow Policy likewise).
func NewMultiController(cfg MultiConfig, tel Telemetry, parts FlowParts, enf Enforcer) (*MultiController, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Topology, cfg.Baseline = cfg.Topology.clone(), cloneBaseline(cfg.Baseline)
	for _, c := range [...]struct {
		name string
		v    any
	}{{"telemetry", tel}, {"enforcer", enf}} {
		if err := usable(c.name, c.v); err != nil {
			return nil, fmt.Errorf("proflow: new multi-flow controller: %w", err)
		}
	}
	if err := parts.check(); err != nil {
		return nil, fmt.Errorf("proflow: new multi-flow controller: %w", err)
	}
	if parts.Batch != nil {
		if err := usable("batch policy", parts.Batch); err != nil {
			return nil, fmt.Errorf("proflow: new multi-flow controller: %w", err)
		}
		if err := checkInterval(parts.Batch, cfg.Interval); err != nil {
			return nil, fmt.Errorf("proflow: new multi-flow controller: batch policy: %w", err)
		}
	}
	m := &MultiController{cfg: cfg, tel: tel, parts: parts, enf: enf, byID: make(map[FlowID]*protectedFlow), gates: make(map[Gate]FlowID)}
	m.batch, _ = enf.(BatchEnforcer)
	m.peek, _ = tel.(Peeker)
	loop := cfg.loop()
	m.smp = loop.sampler()
	n := cfg.Topology.NumSwitches()
	m.moved, m.on = make([]int, n), make([]int, n)
	_ = m.cord.replace(cfg.Topology, cfg.Cordoned) // checked by Validate
	if cfg.Registerer != nil {
		var err error
		if m.m, err = newMultiMetrics(cfg.Registerer, cfg.Topology.Switches); err != nil {
			return nil, fmt.Errorf("proflow: new multi-flow controller: metrics: %w", err)
		}
	}
	return m, nil
}

// Close unregisters the controller's metrics from MultiConfig.Registerer,
// so that another controller can register its own there. It does not stop
// Run: call it once Run has returned. Close is idempotent, safe to call from
// any goroutine, and returns nil; a controller stepped after Close still
// works, with its metrics no longer gathered.
func (m *MultiController) Close() error {
	if m.m != nil {
		m.m.unregister()
	}
	return nil
}

// AddFlow protects f, which the fabric carries on switch current now. It
// builds the flow's encoder, policy and gate from the FlowParts, resets
// them, and gives the encoder MultiConfig.Baseline if set; otherwise the
// flow learns its own baseline in its first steps. The flow joins at the
// start of the next step, after the flows added before it.
//
// It refuses an invalid flow, a switch outside the topology, a flow
// already protected or whose reverse is (ErrFlowProtected: the
// southbounds place a connection's two directions with the same rules),
// one a FlowValidator enforcer could never place, failing or unusable
// collaborators, a gate another flow has, and a policy trained at another
// interval (ErrIntervalMismatch).
func (m *MultiController) AddFlow(f ProtectedFlow, current int) error {
	if err := m.newFlow(f, current, m.cfg.Baseline); err != nil {
		return fmt.Errorf("proflow: add flow %v: %w", f.ID, err)
	}
	return nil
}

// AddFlowResumed protects f as AddFlow does, resuming from a baseline it
// learnt before — under another controller, say, that protected the flow
// until it handed it over (a replica that takes over the flow from one that
// failed): the flow skips the baseline phase and is decided on from its
// first step, so that it neither re-learns a baseline on a congested switch
// nor flaps back. A nil b is AddFlow. It refuses an invalid b as well as
// what AddFlow refuses.
func (m *MultiController) AddFlowResumed(f ProtectedFlow, current int, b *Baseline) error {
	if b == nil {
		return m.AddFlow(f, current)
	}
	if err := b.Validate(); err != nil {
		return fmt.Errorf("proflow: add flow %v: resumed baseline: %w", f.ID, err)
	}
	if err := m.newFlow(f, current, b); err != nil {
		return fmt.Errorf("proflow: add flow %v: %w", f.ID, err)
	}
	return nil
}

// taken returns ErrFlowProtected when id or its reverse is protected;
// m.mu is held.
func (m *MultiController) taken(id FlowID) error {
	if _, dup := m.byID[id]; dup {
		return ErrFlowProtected
	}
	if r := id.Reverse(); r != id {
		if _, dup := m.byID[r]; dup {
			return fmt.Errorf("%w: its reverse %v is, and a connection's two directions take the same rules on the leaves", ErrFlowProtected, r)
		}
	}
	return nil
}

func (m *MultiController) newFlow(f ProtectedFlow, current int, b *Baseline) error {
	if err := f.check(); err != nil { // AddFlow names the flow
		return err
	}
	// Refused before its parts are built and reset: a factory that hands
	// back the flow's own live parts must not see them reset for nothing.
	m.mu.Lock()
	err := m.taken(f.ID)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	if fv, ok := m.enf.(FlowValidator); ok {
		if err := call("FlowValidator", "ValidateFlow", m.enf, func() error { return fv.ValidateFlow(f.ID) }); err != nil {
			return fmt.Errorf("the enforcer cannot carry it: %w", err)
		}
	}
	enc, err := build("encoder", m.parts.Encoder, f)
	if err != nil {
		return err
	}
	var pol Policy
	if m.parts.Batch == nil {
		if pol, err = build("policy", m.parts.Policy, f); err != nil {
			return err
		}
		if err := checkInterval(pol, m.cfg.Interval); err != nil {
			return err
		}
	}
	gate, err := build("gate", m.parts.Gate, f)
	if err != nil {
		return err
	}
	m.mu.Lock()
	err = m.sharedGate(gate, f.ID) // before Reset touches the other flow's gate
	m.mu.Unlock()
	if err != nil {
		return err
	}
	p := &protectedFlow{pf: f}
	if err := p.init(f.ID, m.cfg.Topology, enc, pol, gate, m.cfg.BaselineWarmup, m.cfg.BaselineSamples); err != nil {
		return err
	}
	if err := p.reset(current, b); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.taken(f.ID); err != nil {
		return err
	}
	if err := m.sharedGate(gate, f.ID); err != nil {
		return err
	}
	if m.parts.Batch != nil {
		if m.batchDim == 0 {
			m.batchDim = len(p.state)
		} else if len(p.state) != m.batchDim {
			return fmt.Errorf("its state encoder has dimension %d, the other flows' %d: FlowParts.Batch scores all flows' states as one matrix, want one dimension", len(p.state), m.batchDim)
		}
	}
	m.byID[f.ID] = p
	if gateKey(gate) {
		m.gates[gate] = f.ID
	}
	m.adds = append(m.adds, p)
	m.changed = true
	return nil
}

// sharedGate refuses gate for flow when another protected flow has the same
// one: a gate keeps its flow's vote streak and cooldown. Only gates that
// are pointers (policy.NewGate's *Gate) can be told apart; a func or struct
// value cannot. Call with mu held.
func (m *MultiController) sharedGate(gate Gate, flow FlowID) error {
	if !gateKey(gate) {
		return nil
	}
	owner, ok := m.gates[gate]
	if !ok || owner == flow {
		return nil
	}
	if p, ok := m.byID[owner]; !ok || p.gate != gate {
		return nil // the owner was removed, or protected again with a gate of its own
	}
	return fmt.Errorf("FlowParts.Gate returned the %T it returned for flow %v, want a gate of its own for every flow "+
		"(a gate keeps its flow's vote streak and cooldown): build a new one in each call", gate, owner)
}

// gateKey reports whether gate is a pointer, which sharedGate can compare.
func gateKey(gate Gate) bool {
	return reflect.TypeOf(gate).Kind() == reflect.Pointer
}

// build calls a FlowParts function and checks what it returns.
func build[T any](name string, factory func(ProtectedFlow) (T, error), f ProtectedFlow) (T, error) {
	var v T
	err := call("FlowParts", name, factory, func() (err error) { v, err = factory(f); return err })
	if err == nil {
		err = usable(name, v)
	}
	if err != nil {
		return v, fmt.Errorf("new %s: %w", name, err)
	}
	return v, nil
}

// RemoveFlow stops protecting flow from the start of the next step. When
// the Enforcer is a Releaser, that step first releases the flow — drops its
// override rules, so the fabric carries it on its default path — retrying
// in later steps while the release fails (StepSummary.Unreleased counts
// those waiting, and each failure is logged); a flow added again before its
// release is not released. Otherwise, and always in Shadow mode, which
// changes nothing on the fabric, the flow stays where it was last placed.
// It returns ErrFlowNotProtected for a flow not protected.
func (m *MultiController) RemoveFlow(flow FlowID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.byID[flow]
	if !ok {
		return fmt.Errorf("proflow: remove flow %v: %w", flow, ErrFlowNotProtected)
	}
	delete(m.byID, flow)
	if gateKey(p.gate) && m.gates[p.gate] == flow {
		delete(m.gates, p.gate)
	}
	p.removed = true
	m.changed = true
	return nil
}

// Flows returns the protected flows in flow index order, counting the
// additions and removals that wait for the next step as done.
func (m *MultiController) Flows() []ProtectedFlow {
	m.mu.Lock()
	defer m.mu.Unlock()
	fs := make([]ProtectedFlow, 0, len(m.byID))
	for _, list := range [...][]*protectedFlow{m.flows, m.adds} {
		for _, p := range list {
			if !p.removed {
				fs = append(fs, p.pf)
			}
		}
	}
	return fs
}

// Cordon marks switch sw as one no flow is moved to (on), or lifts the
// mark (off), for every flow from the next step on (Config.Cordoned). It
// is safe to call from any goroutine, also while Run is running, and fails
// only for a switch index outside the topology.
func (m *MultiController) Cordon(sw int, on bool) error { return m.cord.cordon(m.cfg.Topology, sw, on) }

// SetCordoned makes sws the cordoned switches for every flow, replacing
// the set at once (Config.Cordoned); nil lifts every cordon. It is safe to
// call from any goroutine, also while Run is running, and fails, changing
// nothing, for a switch index outside the topology.
func (m *MultiController) SetCordoned(sws []int) error { return m.cord.replace(m.cfg.Topology, sws) }

// Cordoned returns the indices of the cordoned switches, in increasing
// order. It is safe to call from any goroutine.
func (m *MultiController) Cordoned() []int { return m.cord.list() }

// Current returns the switch the controller believes carries flow, and
// whether the flow is protected.
func (m *MultiController) Current(flow FlowID) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.byID[flow]; ok {
		return int(p.current.Load()), true
	}
	return -1, false
}

// Baseline returns flow's episode baseline and whether it is known yet.
func (m *MultiController) Baseline(flow FlowID) (Baseline, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.byID[flow]; ok {
		if b := p.baseline.Load(); b != nil {
			return *b, true
		}
	}
	return Baseline{}, false
}

// apply makes the waiting additions and removals take effect.
func (m *MultiController) apply() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.changed {
		return
	}
	if _, ok := m.enf.(Releaser); ok && !m.cfg.Shadow { // a shadow changes nothing on the fabric
		for _, p := range m.flows {
			if p.removed {
				m.releases = append(m.releases, p.flow)
			}
		}
	}
	m.flows = slices.DeleteFunc(m.flows, func(p *protectedFlow) bool { return p.removed })
	for _, p := range m.adds {
		if !p.removed {
			m.flows = append(m.flows, p)
		}
	}
	clear(m.adds)
	m.adds, m.changed = m.adds[:0], false
}

// release asks a Releaser enforcer to drop the rules of the flows removed
// since, keeping those it could not release for the next step. A flow
// protected again meanwhile is left alone.
func (m *MultiController) release(ctx context.Context, s *StepSummary) {
	m.mu.Lock()
	pending := m.releases
	m.releases = nil
	m.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	rel := m.enf.(Releaser) // only a Releaser's removals are queued
	ctx, cancel := context.WithTimeout(ctx, m.cfg.StepTimeout)
	defer cancel()
	var failed []FlowID
	for _, f := range pending {
		m.mu.Lock()
		_, again := m.byID[f]
		m.mu.Unlock()
		if again {
			continue
		}
		if err := call("Releaser", "Release", m.enf, func() error { return rel.Release(ctx, f) }); err != nil {
			failed = append(failed, f)
			m.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "release failed; retrying next step",
				slog.String("flow", f.String()), slog.String("error", err.Error()))
			continue
		}
		s.Released++
	}
	m.mu.Lock()
	m.releases = append(failed, m.releases...)
	s.Unreleased = len(m.releases)
	m.mu.Unlock()
}

// Reconcile learns every protected flow's real placement from a Locator
// enforcer; a flow it has not placed (ErrNotPlaced) keeps the switch given
// to AddFlow. It returns the failures joined; each failed flow keeps its
// placement. Run calls it once before the loop.
func (m *MultiController) Reconcile(ctx context.Context) error {
	m.apply()
	loc, ok := m.enf.(Locator)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.StepTimeout)
	defer cancel()
	var errs []error
	for _, p := range m.flows {
		var sw int
		err := call("Locator", "Locate", loc, func() (err error) { sw, err = loc.Locate(ctx, p.flow); return err })
		switch {
		case err == nil && (sw < 0 || sw >= m.cfg.Topology.NumSwitches()):
			errs = append(errs, fmt.Errorf("flow %v: located %w", p.flow, unknownSwitch(m.cfg.Topology, sw)))
		case err == nil:
			p.current.Store(int64(sw))
		case !errors.Is(err, ErrNotPlaced):
			errs = append(errs, fmt.Errorf("locate %v: %w", p.flow, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("proflow: reconcile: %w", err)
	}
	return nil
}

// Run reconciles, then steps once per interval until ctx is cancelled, and
// returns ctx's error. A failed reconciliation is logged; the flows it
// could not locate keep their placements.
func (m *MultiController) Run(ctx context.Context) error {
	if err := m.Reconcile(ctx); err != nil {
		m.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "reconcile failed; keeping the given placements", slog.String("error", err.Error()))
	}
	m.dl.hold() // every step has ctx for parent: watch it once
	defer m.dl.release()
	return runEvery(ctx, m.cfg.Clock, m.cfg.Interval, func(ctx context.Context) {
		s := m.Step(ctx)
		m.recheckUntil(ctx, s.Time.Add(m.cfg.Interval))
	})
}

// recheckUntil makes, each when it is due on the controller's clock, the
// rechecks the last step asked for that come before end; a cancelled ctx
// ends the wait.
func (m *MultiController) recheckUntil(ctx context.Context, end time.Time) {
	for {
		next, ok := m.NextRecheck()
		if !ok || !next.Before(end) {
			return
		}
		if wait := next.Sub(m.cfg.Clock.Now()); wait > 0 {
			t := m.cfg.Clock.NewTicker(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
				t.Stop()
			}
		}
		if _, ok := m.Recheck(ctx); !ok {
			return // the clock is behind the recheck it waited for
		}
	}
}

// StepSummary is what one step of a MultiController did.
type StepSummary struct {
	// Seq numbers the controller's steps from 1.
	Seq uint64
	// Time is when the step ran (the controller's clock).
	Time time.Time
	// Decisions holds one Decision per protected flow, in flow index order.
	// It shares storage with the controller, which reuses it on the next
	// Step: Clone the decisions to keep them.
	Decisions []Decision
	// Hold and Err are the reason and error for which every flow was held
	// when the step's observation was unusable ("" and nil otherwise).
	Hold Reason
	Err  error
	// Admitted counts the moves the gates admitted; Rerouted the flows the
	// enforcer moved; JointHeld those the joint step held (ReasonJoint);
	// Shadowed the moves shadow mode did not make (ReasonShadow); Failed
	// the flows held for an error (Reason.Failed).
	Admitted, Rerouted, JointHeld, Shadowed, Failed int
	// Herding is the largest number of protected flows moved onto one
	// aggregation switch in this step, HerdingSwitch that switch (the lowest
	// index among equals), or -1 when no flow moved.
	Herding, HerdingSwitch int
	// Released counts the removed flows whose rules the step released
	// (RemoveFlow with a Releaser enforcer); Unreleased those still waiting
	// after it, because their release failed.
	Released, Unreleased int
	// Latency is the wall time the step took, telemetry to enforcement.
	Latency time.Duration
	// Recheck marks the summary of a recheck (MultiController.Recheck),
	// not of a step: Seq is the step's whose deferred moves it decides,
	// and Decisions holds the rechecked flows' alone.
	Recheck bool
}

// Step runs one iteration of the loop for every protected flow and returns
// its summary. A caller that steps by itself, rather than through Run,
// calls Recheck at each NextRecheck before the next step: a move a gate
// deferred is otherwise decided only at the next step.
//
// The Telemetry and the Enforcer are called with a context that ends at
// ctx's end, after StepTimeout, or when the step returns, whichever comes
// first: kept past the step, it reports context.Canceled (or the error it
// ended with before). Each step has a context of its own; a step whose
// collaborators never use theirs allocates nothing for it.
func (m *MultiController) Step(ctx context.Context) StepSummary {
	start := time.Now()
	m.apply()
	m.seq++
	s := StepSummary{Seq: m.seq, Time: m.cfg.Clock.Now(), HerdingSwitch: -1}
	m.marks = m.cord.snapshot() // one cordon set for every flow, the whole step
	n := len(m.flows)
	m.ds = slices.Grow(m.ds[:0], n)[:n]
	m.cur = slices.Grow(m.cur[:0], n)[:n]
	m.due = slices.Grow(m.due[:0], n)[:n]
	clear(m.due) // a step ends any recheck the last one asked for
	for i, p := range m.flows {
		p.begin(&m.ds[i], s.Seq, s.Time, m.marks)
		m.cur[i] = m.ds[i].Current
		m.ds[i].Recheckable = m.peek != nil && p.rechecks
	}
	s.Decisions = m.ds

	m.release(ctx, &s)
	if n > 0 {
		m.step(ctx, &s)
	}
	for i := range m.ds {
		if d := &m.ds[i]; d.Recheckable && d.Recheck > 0 && d.Recheck < m.cfg.Interval && d.Target < 0 && d.Err == nil {
			m.due[i] = s.Time.Add(d.Recheck)
		}
	}

	s.Latency = time.Since(start)
	m.summarise(&s)
	m.report(ctx, &s)
	return s
}

func (m *MultiController) step(ctx context.Context, s *StepSummary) {
	ctx, cancel := m.dl.start(ctx, m.cfg.StepTimeout)
	defer m.dl.stop(cancel)

	obs := &m.obs
	obs.FlowIDs = obs.FlowIDs[:0]
	for _, p := range m.flows {
		obs.FlowIDs = append(obs.FlowIDs, p.flow)
	}
	if reason, err := m.smp.sample(ctx, m.tel, obs, s.Time, true); err != nil {
		s.Hold, s.Err = reason, err
		for i := range m.ds {
			m.ds[i].Reason, m.ds[i].Err = reason, err
		}
		return
	}
	m.view = Observation{Time: obs.Time, Switches: obs.Switches, Leaves: obs.Leaves}
	if m.parts.Batch != nil {
		m.decideBatch()
	} else {
		for i, p := range m.flows {
			if m.flowView(i) {
				p.decide(&m.view, &m.ds[i])
			}
		}
	}
	m.joint()
	s.Admitted = len(m.wishes)
	m.enforce(ctx)
}

// NextRecheck returns when the earliest recheck the last step's gates
// asked for is due (Decision.Recheck), and false when none waits.
func (m *MultiController) NextRecheck() (time.Time, bool) {
	var next time.Time
	for _, t := range m.due {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next, !next.IsZero()
}

// Recheck decides the moves the last Step's gates deferred to a recheck
// that is due by now (NextRecheck; each such gate is a Rechecker and the
// Telemetry a Peeker): it peeks at the fabric's rates since the step's
// sample, sets each rechecked flow's Load from its current switch's, asks
// its gate's Recheck, and hands the moves the gates admit to the
// JointPlacer and the Enforcer as a step does. The summary has Recheck set
// and the decisions of the rechecked flows alone; the Observer, the logs
// and the decision and reroute metrics see them as a step's. Its
// decisions share the step's storage: Step and Recheck reuse it. It
// reports false, doing nothing, when no recheck is due. A failed peek
// holds the rechecked flows, and the next step decides. Run calls it when
// due.
func (m *MultiController) Recheck(ctx context.Context) (StepSummary, bool) {
	start := time.Now()
	now := m.cfg.Clock.Now()
	if next, ok := m.NextRecheck(); !ok || next.After(now) {
		return StepSummary{}, false
	}
	s := StepSummary{Seq: m.seq, Time: now, HerdingSwitch: -1, Recheck: true}
	m.marks = m.cord.snapshot()
	due := m.now[:0]
	for i, t := range m.due {
		d := &m.ds[i]
		m.flows[i].begin(d, m.seq, now, m.marks)
		m.cur[i] = d.Current
		if !t.IsZero() && !t.After(now) {
			m.due[i] = time.Time{}
			d.Recheckable, d.Rechecking = true, true
			due = append(due, i)
		}
	}
	m.now = due
	m.recheck(ctx, due)
	m.rds = m.rds[:0]
	for _, i := range due {
		m.rds = append(m.rds, m.ds[i])
	}
	s.Decisions = m.rds
	s.Admitted = len(m.wishes)
	s.Latency = time.Since(start)
	m.summarise(&s)
	m.report(ctx, &s)
	return s, true
}

// recheck peeks and rechecks the flows due (indices into m.flows), then
// places the moves their gates admit.
func (m *MultiController) recheck(ctx context.Context, due []int) {
	ctx, cancel := m.dl.start(ctx, m.cfg.StepTimeout)
	defer m.dl.stop(cancel)
	m.wishes = m.wishes[:0]
	obs := &m.obs
	obs.FlowIDs = obs.FlowIDs[:0]
	for _, p := range m.flows {
		obs.FlowIDs = append(obs.FlowIDs, p.flow)
	}
	obs.Resize(m.cfg.Topology)
	reason, err := m.smp.peek(ctx, m.peek, obs, len(m.flows))
	for _, i := range due {
		d := &m.ds[i]
		if err != nil {
			d.Reason, d.Err = reason, err
			continue
		}
		if d.Load, d.Err = peekedLoad(m.cfg.Topology, obs, d.Current); d.Err != nil {
			d.Reason = ReasonInvalid
			continue
		}
		m.flows[i].recheck(d)
	}
	if err != nil {
		return
	}
	m.joint()
	m.enforce(ctx)
}

// flowView makes m.view flow i's view of the step's observation. It
// returns false, with flow i's Decision held, when the flow's sample is
// unusable.
func (m *MultiController) flowView(i int) bool {
	if err := checkFlowSample(&m.obs, i, m.flows[i].flow); err != nil {
		m.ds[i].Reason, m.ds[i].Err = ReasonInvalid, err
		return false
	}
	m.view.Flow = m.obs.Flows[i]
	return true
}

// checkFlowSample checks flow i's entry of obs: the flow the controller
// listed, written by the Telemetry, with finite non-negative rates.
func checkFlowSample(obs *Observation, i int, flow FlowID) error {
	if i >= len(obs.FlowIDs) || i >= len(obs.Flows) || obs.FlowIDs[i] != flow {
		return &InvalidObservationError{Field: "flow_ids", Problem: fmt.Sprintf(
			"the telemetry changed the list of protected flows, want %v at index %d", flow, i)}
	}
	return checkFlow(obs, i)
}

// joint hands the admitted moves to the JointPlacer and turns its
// assignment into the step's placements.
func (m *MultiController) joint() {
	m.wishes = m.wishes[:0]
	for i, p := range m.flows {
		d := &m.ds[i]
		if d.Target < 0 {
			continue
		}
		var base float64
		if b := p.baseline.Load(); b != nil {
			base = b.Throughput
		}
		m.wishes = append(m.wishes, Wish{Flow: i, Weight: p.pf.EffectiveWeight(), Current: d.Current, Target: d.Target,
			Scores: d.Scores, Margin: d.Margin, Throughput: m.obs.Flows[i].Throughput, Baseline: base})
	}
	m.ps, m.psFlow = m.ps[:0], m.psFlow[:0]
	if len(m.wishes) == 0 {
		return
	}
	m.dst = slices.Grow(m.dst[:0], len(m.wishes))[:len(m.wishes)]
	for j := range m.dst {
		m.dst[j] = -1
	}
	m.jin = JointInput{Topology: m.cfg.Topology, Obs: &m.obs, Current: m.cur, Wishes: m.wishes}
	err := call("JointPlacer", "Assign", m.cfg.Joint, func() error { return m.cfg.Joint.Assign(m.dst, &m.jin) })
	m.jin = JointInput{}
	n := m.cfg.Topology.NumSwitches()
	for j, w := range m.wishes {
		d, to := &m.ds[w.Flow], m.dst[j]
		switch {
		case err != nil:
			d.Reason, d.Err, d.Target = ReasonPolicy, fmt.Errorf("proflow: joint placement: %w", err), -1
		case to >= n:
			d.Reason, d.Err, d.Target = ReasonPolicy, fmt.Errorf("proflow: joint placement: %w", unknownSwitch(m.cfg.Topology, to)), -1
		case to < 0 || to == w.Current:
			d.Reason, d.Target = ReasonJoint, -1
		default:
			d.Target = to
			m.ps = append(m.ps, Placement{Flow: d.Flow, Switch: to})
			m.psFlow = append(m.psFlow, w.Flow)
		}
	}
}

// enforce sends the step's placements to the enforcer and records in each
// flow's Decision whether it moved.
func (m *MultiController) enforce(ctx context.Context) {
	if len(m.ps) == 0 {
		return
	}
	if m.cfg.Shadow {
		for _, i := range m.psFlow {
			m.flows[i].shadowed(&m.ds[i])
		}
		return
	}
	if m.batch == nil {
		for j, pl := range m.ps {
			err := call("Enforcer", "Place", m.enf, func() error { return m.enf.Place(ctx, pl.Flow, pl.Switch) })
			m.placed(m.psFlow[j], err, nil)
		}
		return
	}
	m.errs = slices.Grow(m.errs[:0], len(m.ps))[:len(m.ps)]
	clear(m.errs)
	err := call("BatchEnforcer", "PlaceBatch", m.batch, func() error { return m.batch.PlaceBatch(ctx, m.ps, m.errs) })
	_, panicked := errors.AsType[*PanicError](err)
	for j := range m.ps {
		switch {
		case panicked:
			m.placed(m.psFlow[j], err, nil) // errs cannot be trusted
		default:
			m.placed(m.psFlow[j], m.errs[j], err)
		}
	}
	clear(m.errs) // keep no errors alive until the next step
}

// placed records the outcome of flow i's placement: err is its own error,
// batch the batch's (with err nil, the placement is known to be applied).
func (m *MultiController) placed(i int, err, batch error) {
	d := &m.ds[i]
	if err == nil {
		m.flows[i].moved(d)
		return
	}
	d.Reason = ReasonEnforcer
	if batch != nil {
		d.Err = fmt.Errorf("proflow: place %v on %s: %w (batch: %w)", d.Flow, m.cfg.Topology.Switches[d.Target], err, batch)
	} else {
		d.Err = fmt.Errorf("proflow: place %v on %s: %w", d.Flow, m.cfg.Topology.Switches[d.Target], err)
	}
}

// summarise counts the step's outcomes and its herding.
func (m *MultiController) summarise(s *StepSummary) {
	clear(m.moved)
	clear(m.on)
	for i := range s.Decisions {
		d := &s.Decisions[i]
		d.Latency = s.Latency
		switch {
		case d.Rerouted:
			s.Rerouted++
			m.moved[d.Target]++
			m.on[d.Target]++
		case d.Reason == ReasonJoint:
			s.JointHeld++
			m.on[d.Current]++
		case d.Reason == ReasonShadow:
			s.Shadowed++
			m.on[d.Current]++
		default:
			if d.Reason.Failed() {
				s.Failed++
			}
			m.on[d.Current]++
		}
	}
	for k, c := range m.moved {
		if c > s.Herding {
			s.Herding, s.HerdingSwitch = c, k
		}
	}
}

func (m *MultiController) report(ctx context.Context, s *StepSummary) {
	if m.m != nil {
		m.m.observe(s, m.on, m.marks)
	}
	log := m.cfg.Logger
	for i := range s.Decisions {
		d := &s.Decisions[i]
		if obs := m.cfg.Observer; obs != nil {
			observe(ctx, log, obs, d)
		}
		if log.Enabled(ctx, decisionLevel(d)) { // before formatting the flow
			logDecision(ctx, log, m.cfg.Topology, d, slog.String("flow", d.Flow.String()))
		}
	}
	if log.Enabled(ctx, slog.LevelDebug) {
		log.LogAttrs(ctx, slog.LevelDebug, "proflow step", slog.Uint64("seq", s.Seq), slog.Int("flows", len(s.Decisions)),
			slog.Int("admitted", s.Admitted), slog.Int("rerouted", s.Rerouted), slog.Int("joint_held", s.JointHeld), slog.Int("shadowed", s.Shadowed),
			slog.Int("failed", s.Failed), slog.Int("herding", s.Herding), slog.Duration("latency", s.Latency))
	}
}
