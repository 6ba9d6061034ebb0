package proflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow/internal/nilcheck"
)

// DefaultInterval is the control interval of the paper: one decision every 500 ms.
const DefaultInterval = 500 * time.Millisecond

// Config holds the settings of a Controller. Start from DefaultConfig.
type Config struct {
	// Topology describes the aggregation switches and congestion leaves.
	Topology Topology
	// Flow is the protected flow f_p.
	Flow FlowID
	// InitialSwitch is the index of the switch carrying the flow at start.
	// If the Enforcer is a Locator, the placement it reads back wins.
	InitialSwitch int
	// PlaceInitial makes Reconcile install the initial placement explicitly.
	PlaceInitial bool
	// Interval is the control interval (default 500 ms).
	Interval time.Duration
	// StepTimeout bounds telemetry and enforcement within one step
	// (default: Interval).
	StepTimeout time.Duration
	// MaxSampleAge is the oldest observation the controller acts on
	// (default 2×Interval; negative disables the check).
	MaxSampleAge time.Duration
	// MaxClockSkew is how far an observation's time may lie after the
	// controller clock's time when the observation arrives, allowing for
	// clock skew between the telemetry source and the controller (default:
	// Interval). A sample dated further ahead is refused as invalid and does
	// not count as the latest sample, so it cannot make later, correctly
	// dated samples look as if they did not advance. The check cannot be
	// disabled: a negative value is an error.
	MaxClockSkew time.Duration
	// Baseline, when set, is used instead of learning one.
	Baseline *Baseline
	// BaselineWarmup is how many samples the baseline phase discards first
	// (the protected flow's ramp-up): DefaultConfig sets 4 (2 s); zero
	// discards none.
	BaselineWarmup int
	// BaselineSamples is how many samples the baseline phase averages
	// (default 10, i.e. 5 s).
	BaselineSamples int
	// Clock is the source of time (default SystemClock). A nil pointer
	// (or func, map or channel) of a Clock type is refused: only nil itself
	// means the default.
	Clock Clock
	// Logger receives one record per decision (default: discard).
	// Reroutes are logged at Info, holds caused by errors at Warn,
	// everything else at Debug.
	Logger *slog.Logger
	// Registerer, when set, receives the controller's Prometheus metrics.
	// Leave it nil for no metrics; a nil *prometheus.Registry is refused.
	// To run several controllers on one registry, wrap the registerer of
	// every one of them with distinct labels (prometheus.WrapRegistererWith,
	// e.g. {"flow": "..."}); an unwrapped one beside wrapped ones conflicts.
	// Controller.Close unregisters them, so that a controller replacing this
	// one can register on the same registerer.
	Registerer prometheus.Registerer
	// Observer, when set, is called synchronously with every Decision.
	// It must not block; see SendTo for a channel. A panic in it is logged
	// at Error and does not stop the controller.
	Observer func(Decision)
	// Shadow runs the controller without moving the flow: every step
	// reads the telemetry, scores and gates as usual, and a move the gate
	// admits is reported (ReasonShadow, with its Target) instead of sent
	// to the enforcer, whose Place is never called. The flow stays where
	// Reconcile found it; the gate's cooldown runs from each move not
	// made. Use it to watch what a policy would do on a live fabric
	// before letting it act. It excludes PlaceInitial.
	Shadow bool
	// Cordoned are switch indices no flow is moved to, from the start
	// (Controller.Cordon changes the set while the controller runs): each
	// step lowers their scores below every other switch's before the gate
	// sees them, so the gate picks the best switch that is not cordoned,
	// and stays when none beats the current one. A flow already on a
	// cordoned switch stays until its policy prefers another.
	Cordoned []int
}

// DefaultConfig returns a Config for the paper's topology with every
// default filled in; set Flow before use.
func DefaultConfig() Config {
	return Config{
		Topology:        PaperTopology(),
		Interval:        DefaultInterval,
		BaselineWarmup:  4,
		BaselineSamples: 10,
	}
}

// withDefaults fills zero fields with defaults.
func (c Config) withDefaults() Config {
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	// Derived from a valid interval only: a bad one is reported once, by
	// Validate, not again as each setting derived from it.
	if c.StepTimeout == 0 && c.Interval > 0 {
		c.StepTimeout = c.Interval
	}
	if c.MaxSampleAge == 0 && c.Interval > 0 {
		c.MaxSampleAge = 2 * c.Interval
	}
	if c.MaxClockSkew == 0 && c.Interval > 0 {
		c.MaxClockSkew = c.Interval
	}
	if c.BaselineSamples == 0 {
		c.BaselineSamples = 10
	}
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	if err := errors.Join(c.problems(true)...); err != nil {
		return fmt.Errorf("proflow: invalid controller config: %w", err)
	}
	return nil
}

// problems lists every problem of the configuration; without oneFlow, it
// skips Flow and InitialSwitch, which a MultiController does not use.
func (c Config) problems(oneFlow bool) []error {
	var errs []error
	if err := c.Topology.Validate(); err != nil {
		errs = append(errs, err)
	}
	if oneFlow {
		if p := c.Flow.problem(); p != "" {
			errs = append(errs, fmt.Errorf("flow: %s", p))
		}
		if n := c.Topology.NumSwitches(); c.InitialSwitch < 0 || c.InitialSwitch >= n {
			errs = append(errs, fmt.Errorf("initial switch %d out of range, want 0..%d", c.InitialSwitch, n-1))
		}
		if c.Shadow && c.PlaceInitial {
			errs = append(errs, errors.New("shadow and place-initial both set: shadow mode never places the flow, want at most one of them"))
		}
	}
	for _, k := range c.Cordoned {
		if n := c.Topology.NumSwitches(); k < 0 || k >= n {
			errs = append(errs, fmt.Errorf("cordoned switch %d out of range, want 0..%d", k, n-1))
		}
	}
	if c.Interval < 0 {
		errs = append(errs, fmt.Errorf("interval %v, want a positive duration", c.Interval))
	}
	if c.StepTimeout < 0 {
		errs = append(errs, fmt.Errorf("step timeout %v, want a positive duration", c.StepTimeout))
	}
	if c.MaxClockSkew < 0 {
		errs = append(errs, fmt.Errorf("max clock skew %v, want a positive duration (zero: one interval)", c.MaxClockSkew))
	}
	if c.BaselineWarmup < 0 || c.BaselineSamples < 0 {
		errs = append(errs, fmt.Errorf("baseline warm-up %d and window %d samples, want non-negative", c.BaselineWarmup, c.BaselineSamples))
	}
	if c.Baseline != nil {
		if err := c.Baseline.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Clock != nil && nilcheck.IsNil(c.Clock) {
		errs = append(errs, fmt.Errorf("clock is a nil %T, want a usable clock, or nil for the system clock", c.Clock))
	}
	if c.Registerer != nil && nilcheck.IsNil(c.Registerer) {
		errs = append(errs, fmt.Errorf("registerer is a nil %T, want a usable registerer, or nil for no metrics", c.Registerer))
	}
	return errs
}

// Controller runs the proactive placement loop for one protected flow:
// Telemetry → StateEncoder → Policy → Gate → Enforcer, once per interval.
//
// Bad input never stops the loop: a telemetry error, an invalid or stale
// observation, an encoder or policy failure, or an enforcer error holds the
// current placement and is reported in that step's Decision. So does a
// panic in any collaborator's method: the controller recovers it and
// reports a *PanicError that names the method and carries the stack.
//
// A gate that is a Rechecker may defer a move to one recheck before the
// next step (Decision.Recheck) when the Telemetry is a Peeker: Recheck
// then reads the fabric's rates since the step's sample and makes the move
// only if the gate still admits it (Run calls it when due).
//
// Run, Step, Recheck, Reset and Reconcile must not be called concurrently
// with one another: they share the controller's per-episode state without
// locking (Run itself calls Reconcile, Step and Recheck). Current and Baseline are safe to
// call from any goroutine, also while Run is running.
type Controller struct {
	cfg Config
	tel Telemetry
	enf Enforcer
	fl  flowLoop
	smp sampler
	seq uint64

	obs  Observation
	d    Decision
	m    *metrics
	cord cordons

	peek       Peeker // tel as a Peeker; nil when it is not one (no rechecks)
	recheckSeq uint64 // the step whose deferred move awaits its recheck; 0 for none
	peeked     Observation
}

// NewController checks cfg and the collaborators and returns a controller
// ready to Run. The controller keeps its own copies of cfg.Topology's slices
// and of *cfg.Baseline, so the caller may reuse or change them afterwards.
// The collaborators are used only by this controller.
//
// Every collaborator must be usable: nil is refused, and so is a typed nil
// (a nil pointer, func, map or channel in the interface, such as the
// *policy.Agent that policy.LoadAgent returns with its error). When the
// Enforcer is a FlowValidator, NewController refuses a cfg.Flow it could
// never place (errors.Is(err, ErrNotInFabric) for hosts outside the fabric).
// A policy that is an IntervalBound trained at another interval than
// cfg.Interval is refused (errors.Is(err, ErrIntervalMismatch)).
func NewController(cfg Config, tel Telemetry, enc StateEncoder, pol Policy, gate Gate, enf Enforcer) (*Controller, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Topology, cfg.Baseline = cfg.Topology.clone(), cloneBaseline(cfg.Baseline)
	for _, c := range [...]struct {
		name string
		v    any
	}{{"telemetry", tel}, {"state encoder", enc}, {"policy", pol}, {"gate", gate}, {"enforcer", enf}} {
		if err := usable(c.name, c.v); err != nil {
			return nil, fmt.Errorf("proflow: new controller: %w", err)
		}
	}
	if err := checkInterval(pol, cfg.Interval); err != nil {
		return nil, fmt.Errorf("proflow: new controller: %w", err)
	}
	c := &Controller{cfg: cfg, tel: tel, enf: enf, smp: cfg.sampler()}
	c.peek, _ = tel.(Peeker)
	_ = c.cord.replace(cfg.Topology, cfg.Cordoned) // checked by Validate
	if err := c.fl.init(cfg.Flow, cfg.Topology, enc, pol, gate, cfg.BaselineWarmup, cfg.BaselineSamples); err != nil {
		return nil, fmt.Errorf("proflow: new controller: %w", err)
	}
	if fv, ok := enf.(FlowValidator); ok {
		if err := call("FlowValidator", "ValidateFlow", enf, func() error { return fv.ValidateFlow(cfg.Flow) }); err != nil {
			return nil, fmt.Errorf("proflow: new controller: the enforcer cannot carry flow %v: %w", cfg.Flow, err)
		}
	}
	c.obs.Resize(cfg.Topology)
	c.d.Scores = make([]float64, 0, cfg.Topology.NumSwitches())
	if err := c.Reset(cfg.InitialSwitch); err != nil {
		return nil, fmt.Errorf("proflow: new controller: %w", err)
	}
	if cfg.Registerer != nil { // last: nothing to unregister on an error above
		var err error
		if c.m, err = newMetrics(cfg.Registerer, cfg.Topology.Switches); err != nil {
			return nil, fmt.Errorf("proflow: new controller: metrics: %w", err)
		}
	}
	return c, nil
}

// Close unregisters the controller's metrics from Config.Registerer, so
// that another controller can register its own there. It does not stop Run:
// call it once Run has returned. Close is idempotent, safe to call from any
// goroutine, and returns nil; a controller stepped after Close still works,
// with its metrics no longer gathered.
func (c *Controller) Close() error {
	if c.m != nil {
		c.m.unregister()
	}
	return nil
}

// Cordon marks switch sw as one the flow is not moved to (on), or lifts
// the mark (off), from the next step on (Config.Cordoned). It is safe to
// call from any goroutine, also while Run is running, and fails only for a
// switch index outside the topology.
func (c *Controller) Cordon(sw int, on bool) error { return c.cord.cordon(c.cfg.Topology, sw, on) }

// SetCordoned makes sws the cordoned switches, replacing the set at once
// (Config.Cordoned); nil lifts every cordon. It is safe to call from any
// goroutine, also while Run is running, and fails, changing nothing, for a
// switch index outside the topology.
func (c *Controller) SetCordoned(sws []int) error { return c.cord.replace(c.cfg.Topology, sws) }

// Cordoned returns the indices of the cordoned switches, in increasing
// order. It is safe to call from any goroutine.
func (c *Controller) Cordoned() []int { return c.cord.list() }

// Reset starts a new episode with the flow on switch current: the encoder,
// policy and gate forget their history and, unless Config.Baseline is set,
// the baseline is learned again.
func (c *Controller) Reset(current int) error {
	if n := c.cfg.Topology.NumSwitches(); current >= 0 && current < n {
		c.smp.lastObsTime, c.seq, c.recheckSeq = time.Time{}, 0, 0
	}
	return c.fl.reset(current, c.cfg.Baseline)
}

// Current returns the index of the switch the controller believes carries
// the protected flow.
func (c *Controller) Current() int { return int(c.fl.current.Load()) }

// Baseline returns the episode baseline and whether it is known yet.
func (c *Controller) Baseline() (Baseline, bool) {
	if b := c.fl.baseline.Load(); b != nil {
		return *b, true
	}
	return Baseline{}, false
}

// Reconcile learns the flow's real placement from a Locator enforcer, or
// installs the initial placement when Config.PlaceInitial is set. Run calls
// it once before the loop; call it yourself when driving Step directly.
func (c *Controller) Reconcile(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StepTimeout)
	defer cancel()
	if loc, ok := c.enf.(Locator); ok {
		var sw int
		err := call("Locator", "Locate", loc, func() (err error) { sw, err = loc.Locate(ctx, c.cfg.Flow); return err })
		switch {
		case err == nil:
			if sw < 0 || sw >= c.cfg.Topology.NumSwitches() {
				return fmt.Errorf("proflow: reconcile: located %w", unknownSwitch(c.cfg.Topology, sw))
			}
			c.fl.current.Store(int64(sw))
			return nil
		case !errors.Is(err, ErrNotPlaced):
			return fmt.Errorf("proflow: reconcile: locate %v: %w", c.cfg.Flow, err)
		}
	}
	if c.cfg.PlaceInitial {
		if err := c.place(ctx, c.Current()); err != nil {
			return fmt.Errorf("proflow: reconcile: place %v on %s: %w", c.cfg.Flow, c.cfg.Topology.Switches[c.Current()], err)
		}
	}
	return nil
}

// Run reconciles, then steps once per interval until ctx is cancelled, and
// returns ctx's error. A failed reconciliation is logged and the loop runs
// with Config.InitialSwitch. When a step's gate defers a move to a recheck
// that comes before the next step (Decision.Recheck), Run waits for it on
// Config.Clock and calls Recheck.
func (c *Controller) Run(ctx context.Context) error {
	if err := c.Reconcile(ctx); err != nil {
		c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "reconcile failed; keeping the configured placement",
			slog.String("error", err.Error()), slog.String("switch", c.cfg.Topology.Switches[c.Current()]))
	}
	return runEvery(ctx, c.cfg.Clock, c.cfg.Interval, func(ctx context.Context) {
		if d := c.Step(ctx); c.recheckSeq != 0 {
			c.waitRecheck(ctx, d.Recheck)
		}
	})
}

// waitRecheck waits after on the controller's clock, then rechecks; a
// cancelled ctx ends the wait without a recheck.
func (c *Controller) waitRecheck(ctx context.Context, after time.Duration) {
	t := c.cfg.Clock.NewTicker(after)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
		c.Recheck(ctx)
	}
}

// runEvery calls step once per interval of clock until ctx is cancelled,
// and returns ctx's error.
func runEvery(ctx context.Context, clock Clock, interval time.Duration, step func(context.Context)) error {
	t := clock.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C():
			step(ctx)
		}
	}
}

// Step runs one iteration of the loop and returns its Decision. The
// Decision's Scores are reused by the next Step or Recheck; Clone it to
// keep it. A caller that steps by itself, rather than through Run, calls
// Recheck Decision.Recheck after a step that set it (when that comes
// before the next step): a move the gate deferred is otherwise decided
// only at the next step, later than the gate meant.
func (c *Controller) Step(ctx context.Context) Decision {
	start := time.Now()
	d := &c.d
	c.seq++
	c.recheckSeq = 0 // a step ends any recheck the last one asked for
	c.fl.begin(d, c.seq, c.cfg.Clock.Now(), c.cord.snapshot())
	d.Recheckable = c.peek != nil && c.fl.rechecks

	c.step(ctx, d)
	if d.Recheckable && d.Recheck > 0 && d.Recheck < c.cfg.Interval && d.Target < 0 && d.Err == nil {
		c.recheckSeq = d.Seq
	}

	d.Latency = time.Since(start)
	c.report(ctx, d)
	return *d
}

func (c *Controller) step(ctx context.Context, d *Decision) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StepTimeout)
	defer cancel()

	if reason, err := c.smp.sample(ctx, c.tel, &c.obs, d.Time, false); err != nil {
		d.Reason, d.Err = reason, err
		return
	}
	if c.fl.decide(&c.obs, d); d.Target >= 0 {
		c.carryOut(ctx, d)
	}
}

// carryOut makes the move to d.Target that a step or a recheck admitted:
// in shadow mode it records the move not made, otherwise it asks the
// enforcer and records the move, or holds on its error.
func (c *Controller) carryOut(ctx context.Context, d *Decision) {
	if c.cfg.Shadow {
		c.fl.shadowed(d)
		return
	}
	if err := c.place(ctx, d.Target); err != nil {
		d.Reason = ReasonEnforcer
		d.Err = fmt.Errorf("proflow: place %v on %s: %w", c.cfg.Flow, c.cfg.Topology.Switches[d.Target], err)
		return
	}
	c.fl.moved(d)
}

// Recheck decides the move the last Step's gate deferred to a recheck
// (Decision.Recheck; the gate is a Rechecker and the Telemetry a Peeker):
// it peeks at the fabric's rates since that step's sample, sets the
// Decision's Load from the current switch's, asks the gate's Recheck, and
// moves the flow if the gate admits the move, as a step does (shadow mode
// and a failed enforcer included; a destination cordoned since the step
// is not moved to). The Decision it returns and reports (Config.Observer,
// the metrics) has Rechecking set and the step's Seq. Call it
// Decision.Recheck after the step, before the next Step; Run does. It
// reports false, doing nothing, when the last step deferred nothing or
// its recheck was made. A failed peek holds the placement, and the next
// step decides.
func (c *Controller) Recheck(ctx context.Context) (Decision, bool) {
	seq := c.recheckSeq
	if seq == 0 {
		return Decision{}, false
	}
	c.recheckSeq = 0
	start := time.Now()
	d := &c.d
	c.fl.begin(d, seq, c.cfg.Clock.Now(), c.cord.snapshot())
	d.Recheckable, d.Rechecking = true, true

	c.recheck(ctx, d)

	d.Latency = time.Since(start)
	c.report(ctx, d)
	return *d, true
}

func (c *Controller) recheck(ctx context.Context, d *Decision) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StepTimeout)
	defer cancel()

	obs := &c.peeked
	obs.Resize(c.cfg.Topology)
	if reason, err := c.smp.peek(ctx, c.peek, obs, -1); err != nil {
		d.Reason, d.Err = reason, err
		return
	}
	var err error
	if d.Load, err = peekedLoad(c.cfg.Topology, obs, d.Current); err != nil {
		d.Reason, d.Err = ReasonInvalid, err
		return
	}
	if c.fl.recheck(d); d.Target >= 0 {
		c.carryOut(ctx, d)
	}
}

// place asks the enforcer to put the protected flow on switch sw.
func (c *Controller) place(ctx context.Context, sw int) error {
	return call("Enforcer", "Place", c.enf, func() error { return c.enf.Place(ctx, c.cfg.Flow, sw) })
}

// clone returns a copy of t that shares no slices with it.
func (t Topology) clone() Topology {
	t.Switches, t.Leaves = slices.Clone(t.Switches), slices.Clone(t.Leaves)
	return t
}

// cloneBaseline returns a copy of *b, or nil.
func cloneBaseline(b *Baseline) *Baseline {
	if b == nil {
		return nil
	}
	c := *b
	return &c
}

// usable refuses nil and typed nil collaborators.
func usable(name string, v any) error {
	switch {
	case v == nil:
		return fmt.Errorf("%s is nil", name)
	case nilcheck.IsNil(v):
		return fmt.Errorf("%s is a nil %T, want a usable one (was it returned together with an error?)", name, v)
	}
	return nil
}

// call runs f, a call of method iface.method on the collaborator impl, and
// turns a panic inside it into a *PanicError, so that a faulty collaborator
// costs one step, not the controller.
func call(iface, method string, impl any, f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Interface: iface, Method: method, Type: fmt.Sprintf("%T", impl), Value: v, Stack: debug.Stack()}
		}
	}()
	return f()
}

func (c *Controller) report(ctx context.Context, d *Decision) {
	if c.m != nil {
		c.m.observe(d, c.fl.marks)
	}
	if obs := c.cfg.Observer; obs != nil {
		observe(ctx, c.cfg.Logger, obs, d)
	}
	logDecision(ctx, c.cfg.Logger, c.cfg.Topology, d)
}

// observe hands the final decision d to obs; a panic in obs is logged at
// Error and costs nothing else: the step is done, so there is nothing to
// hold.
func observe(ctx context.Context, log *slog.Logger, obs func(Decision), d *Decision) {
	if err := call("Observer", "Observe", obs, func() error { obs(*d); return nil }); err != nil {
		log.LogAttrs(ctx, slog.LevelError, "proflow observer failed", slog.Uint64("seq", d.Seq), slog.String("flow", d.Flow.String()), slog.Any("error", err))
	}
}

// logDecision writes one record for d on log: reroutes at Info, holds
// caused by errors at Warn, everything else at Debug. The extra attributes
// follow the decision's own.
func logDecision(ctx context.Context, log *slog.Logger, topo Topology, d *Decision, extra ...slog.Attr) {
	level := decisionLevel(d)
	if !log.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{
		slog.Uint64("seq", d.Seq),
		slog.Time("at", d.Time),
		slog.String("reason", string(d.Reason)),
		slog.String("current", topo.Switches[d.Current]),
		slog.Any("scores", d.Scores),
		slog.Float64("margin", d.Margin),
		slog.Int("votes", d.Votes),
		slog.Duration("cooldown", d.Cooldown),
		slog.Duration("latency", d.Latency),
	}
	if d.Target >= 0 {
		attrs = append(attrs, slog.String("target", topo.Switches[d.Target]))
	}
	switch {
	case d.Rechecking:
		attrs = append(attrs, slog.Bool("recheck", true), slog.Float64("load", d.Load))
	case d.Recheck > 0:
		attrs = append(attrs, slog.Duration("recheck_after", d.Recheck))
	}
	if d.Err != nil {
		attrs = append(attrs, slog.String("error", d.Err.Error()))
		if pe, ok := errors.AsType[*PanicError](d.Err); ok {
			attrs = append(attrs, slog.String("stack", string(pe.Stack)))
		}
	}
	attrs = append(attrs, extra...)
	log.LogAttrs(ctx, level, "proflow decision", attrs...)
}

// decisionLevel is the level d is logged at.
func decisionLevel(d *Decision) slog.Level {
	switch {
	case d.Rerouted, d.Reason == ReasonShadow:
		return slog.LevelInfo
	case d.Err != nil:
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

// SendTo returns an Observer that sends a clone of every Decision to ch
// without blocking: when ch is full the decision is dropped, so a slow reader
// never stalls the control loop.
func SendTo(ch chan<- Decision) func(Decision) {
	return func(d Decision) {
		select {
		case ch <- d.Clone():
		default:
		}
	}
}
