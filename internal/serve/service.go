package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/models"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// undialled is the telemetry of a P4Runtime southbound Check does not
// dial: it only lets the tcstat overlay be built and checked.
type undialled struct{}

func (undialled) Collect(context.Context, *proflow.Observation) error {
	return errors.New("serve: P4Runtime client not dialled (check only)")
}

// Options are the collaborators of a Service that do not come from its
// config.
type Options struct {
	// LogOutput receives the log (at the config's log_level, in its
	// log_format; default os.Stderr).
	LogOutput io.Writer
}

// Service is proflow run as a service: one MultiController protecting the
// configured flows on the configured southbound, with Prometheus metrics,
// a health check and live reloads of the flow set.
//
// New builds it (and binds its listeners, so a taken port fails the
// start), Run runs it until its context ends, Reload applies a changed
// config while it runs. Reload is safe to call from any goroutine while
// Run runs.
type Service struct {
	cfg   Config // with defaults
	level *slog.LevelVar
	log   *slog.Logger
	reg   *prometheus.Registry
	sb    *southbound
	ctrl  *proflow.MultiController
	rep   *replica     // cluster mode only
	seeds []FlowConfig // cluster mode: the flows this config put in etcd

	metricsLn net.Listener
	evicted   prometheus.Counter // HTTP connections closed at maxHTTPConns

	modelGate   *policy.GateConfig // the gate the model records, once read (agent with a partial gate)
	modelGateOf string             // the policy.model modelGate was read from ("" the default model)

	reloadMu sync.Mutex // one reload at a time

	mu    sync.Mutex                               // guards flows and cfg's reloadable parts
	flows map[proflow.FlowID]proflow.ProtectedFlow // the protected set as configured

	lastStep atomic.Int64 // wall-clock unix nanoseconds of the latest step
	steps    atomic.Uint64
	stepsM   prometheus.Counter
	reloads  *prometheus.CounterVec
	cfgFlows prometheus.Gauge
}

// New builds the service of cfg (which Load has validated): the
// southbound, the telemetry, every flow's policy and the controller, with
// the configured flows added. It refuses, with the config field named,
// every value that only building can check: a model for another topology,
// a scenario that does not load, a flow the southbound cannot carry.
func New(ctx context.Context, cfg *Config, opts Options) (*Service, error) {
	return build(ctx, cfg, opts, false)
}

// Check runs the checks of New on cfg, through the same code, but binds
// no port, dials no switch or P4Runtime target, joins no cluster and runs
// nothing: what Check accepts New accepts, but for what only the network
// can refuse (a port taken, a target or etcd unreachable). It returns the
// config the service would run: every default filled in, the sim
// profile's interval, the gate that applies (the model's, or the config's
// keys over it).
func Check(ctx context.Context, cfg *Config) (Config, error) {
	s, err := build(ctx, cfg, Options{LogOutput: io.Discard}, true)
	if err != nil {
		return Config{}, err
	}
	s.closeAll()
	return s.cfg, nil
}

// build is New, and with check Check.
func build(ctx context.Context, cfg *Config, opts Options, check bool) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	c := cfg.WithDefaults()
	c.Dir = cfg.Dir
	if c.Flows.EtcdPrefix != "" {
		return nil, fmt.Errorf("serve: %w", &FieldError{Path: "flows.etcd_prefix", Problem: "not supported: in cluster mode the shared flow set is under cluster.prefix (flows/); leave flows out to take it from etcd, or give list or file to add to it"})
	}
	out := opts.LogOutput
	if out == nil {
		out = os.Stderr
	}
	s := &Service{cfg: c, level: new(slog.LevelVar), reg: prometheus.NewRegistry(), flows: map[proflow.FlowID]proflow.ProtectedFlow{}}
	s.level.Set(parseLevel(c.LogLevel))
	hopts := &slog.HandlerOptions{Level: s.level}
	var h slog.Handler = slog.NewTextHandler(out, hopts)
	if c.LogFormat == "json" {
		h = slog.NewJSONHandler(out, hopts)
	}
	// Every record, the southbound's, the cluster's and net/http's
	// included, passes the rate limit: a storm of failures logs a bounded
	// number of lines and counts the rest.
	lim := newLogLimiter(time.Now)
	h = limitHandler{next: h, lim: lim}
	base := slog.New(h) // package cluster names the replica in its records itself
	s.log = base
	if c.Cluster != nil { // replicas' logs, merged, still say whose
		s.log = base.With("replica", c.Cluster.Replica)
	}
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "proflow", Subsystem: "serve", Name: "reloads_total",
		Help: "Config reloads (SIGHUP), by result: ok (applied), error (the new config was refused or a flow could not be added)."}, []string{"result"})
	s.cfgFlows = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "proflow", Subsystem: "serve", Name: "configured_flows",
		Help: "Protected flows in the service's current config."})
	s.stepsM = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "proflow", Subsystem: "serve", Name: "steps_total",
		Help: "Controller steps (ticks) run; with proflow_serve_etcd_writes_total, the etcd writes per tick."})
	s.evicted = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "proflow", Subsystem: "serve", Name: "http_conns_evicted_total",
		Help: fmt.Sprintf("Connections to /metrics and /healthz closed before they sent a request or while idle, to admit a new one at the bound of %d open connections.", maxHTTPConns)})
	for _, r := range []string{"ok", "error"} {
		s.reloads.WithLabelValues(r)
	}
	s.reg.MustRegister(s.reloads, s.cfgFlows, s.stepsM, s.evicted, lim.suppressed)

	var err error
	var start []FlowConfig
	if c.Southbound.Sim == nil { // a real southbound measures the first configured flow
		if start, err = s.configuredFlows(&c, nil); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	ok := false
	defer func() {
		if !ok {
			s.closeAll()
		}
	}()
	var owner openflow.Owner
	if c.Cluster != nil && !check {
		// Join first: the OpenFlow server fences its writes by the
		// member's ownership.
		if s.rep, err = joinCluster(ctx, &c, s.reg, base, s.log); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		owner = ownerCookies(s.rep.m, s.rep.m.Shard)
	}
	if s.sb, err = buildSouthbound(ctx, &c, start, owner, s.reg, s.log, check); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if s.sb.kind == "sim" {
		if iv := s.sb.fab.Config().Interval; cfg.Interval != 0 && cfg.Interval != iv {
			return nil, fmt.Errorf("serve: %w", &FieldError{Path: "interval", Problem: fmt.Sprintf("%v, want the sim profile's sampling interval %v (or absent)", cfg.Interval, iv)})
		}
		// The simulator samples at its own interval: that is the
		// interval the service runs (and -check prints).
		c.Interval = s.sb.fab.Config().Interval
		s.cfg.Interval = c.Interval
	}
	if err := s.resolveGate(&c, s.sb.topo); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	s.cfg.Gate = c.Gate
	if o := c.Southbound.OpenFlow; o != nil && o.TLS == nil && !loopbackAddr(o.Listen) && !check {
		s.log.Warn("openflow: listening beyond loopback without TLS: anyone who reaches the port can act as a switch of the fabric",
			"listen", o.Listen)
	}
	parts, err := flowParts(&c, s.sb.topo)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	enf := s.sb.enf
	if s.rep != nil {
		enf = s.rep.enforcer(enf)
		switch s.sb.kind {
		case "sim":
			// Each replica runs its own copy of the simulated fabric: a
			// flow it takes over is moved in its copy to where the
			// previous owner placed it (through the data plane, so the
			// copy's counters follow).
			place := s.sb.enf.Place
			s.sb.adopt = func(ctx context.Context, flow proflow.FlowID, sw int) (int, error) {
				return sw, place(ctx, flow, sw)
			}
		case "openflow":
			if loc, ok := s.sb.enf.(proflow.Locator); ok {
				s.sb.adopt = locateAdopt(loc)
			}
		}
	}
	// Collect alone, never Peek: the service's controller takes no reading
	// between steps (the simulated fabric advances a whole interval at a
	// time, so a reading between two steps would find nothing new), and a
	// gate with a recheck moves at the step (policy.DrainConfig.Recheck).
	tel := proflow.Telemetry(proflow.TelemetryFunc(s.sb.tel.Collect))
	if s.sb.kind != "sim" {
		tel = flowSamples{tel: s.sb.tel, measured: s.sb.measured}
	}
	mc := proflow.DefaultMultiConfig()
	mc.Topology, mc.Interval, mc.Clock = s.sb.topo, c.Interval, s.sb.clock
	if s.sb.kind == "sim" {
		// Virtual time may run faster than the wall clock: bound a step's
		// calls in wall time by one wall-clock interval at least.
		mc.StepTimeout = max(c.Interval, time.Second)
	}
	mc.BaselineWarmup, mc.BaselineSamples = c.Baseline.Warmup, c.Baseline.Samples
	mc.Logger, mc.Registerer, mc.Joint, mc.Shadow = s.log, s.reg, jointPlacer(c.Joint), c.Shadow
	if mc.Cordoned, err = cordonIndices(s.sb.topo, c.Cordon); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	fs, err := s.configuredFlows(&c, s.sb)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if check && enf == nil { // P4Runtime, not dialled: no controller to check the flows against
		ok = true
		return s, nil
	}
	if s.ctrl, err = proflow.NewMultiController(mc, tel, parts, enf); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	switch {
	case check && s.sb.fab == nil:
		// Not connected to any switch: check each flow as the southbound
		// will, without locating it.
		if err := s.checkFlows(fs); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		ok = true
		return s, nil
	case check && s.rep == nil && c.Cluster != nil:
		ok = true // the flows go to etcd; nothing more to check here
		return s, nil
	}
	if s.rep != nil {
		if err := s.rep.seed(ctx, nil, fs); err != nil {
			return nil, fmt.Errorf("serve: cluster: add the configured flows: %w", err)
		}
		s.seeds = fs
	} else if err := s.applyFlows(ctx, fs); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if c.Metrics.Listen != "off" && !check {
		if s.metricsLn, err = net.Listen("tcp", c.Metrics.Listen); err != nil {
			return nil, fmt.Errorf("serve: %w", &FieldError{Path: "metrics.listen", Problem: err.Error()})
		}
	}
	ok = true
	return s, nil
}

// locateAdopt is the adopt of a southbound whose switches say where a flow
// is (OpenFlow): Locate adopts the previous owner's override rules, so the
// next placement replaces them by their exact cookie, and the switch they
// send the flow to wins over the stored placement (the previous owner may
// have moved the flow and stopped before saving, as Reconcile assumes). A
// flow with no override stays at the stored switch.
func locateAdopt(loc proflow.Locator) func(ctx context.Context, flow proflow.FlowID, stored int) (int, error) {
	return func(ctx context.Context, flow proflow.FlowID, stored int) (int, error) {
		sw, err := loc.Locate(ctx, flow)
		switch {
		case errors.Is(err, proflow.ErrNotPlaced):
			return stored, nil
		case err != nil:
			return stored, err
		}
		return sw, nil
	}
}

// checkFlows checks flows as adding them would, but without locating
// them on the switches (Check with a real southbound): the southbound
// must carry each (FlowValidator) at its configured switch.
func (s *Service) checkFlows(fs []FlowConfig) error {
	var errs []error
	for i, f := range fs {
		id, err := proflow.ParseFlowID(f.ID)
		if err == nil {
			if v, ok := s.sb.enf.(proflow.FlowValidator); ok {
				err = v.ValidateFlow(id)
			}
		}
		if err == nil && f.Switch != "" {
			_, err = s.sb.topo.SwitchIndex(f.Switch)
		}
		if err != nil {
			// Name the flow once: a southbound's error may name it already.
			problem := err.Error()
			if !strings.Contains(problem, f.ID) && (id == proflow.FlowID{} || !strings.Contains(problem, id.String())) {
				problem = f.ID + ": " + problem
			}
			errs = append(errs, &FieldError{Path: fmt.Sprintf("flows[%d]", i), Problem: problem})
		}
	}
	return errors.Join(errs...)
}

// resolveGate completes a partial gate section of an agent's config with
// the gate its model records (read once, then kept), and puts the model's
// gate in an absent section, so that c says the gate that applies.
func (s *Service) resolveGate(c *Config, topo proflow.Topology) error {
	if c.Policy.Kind != "agent" || (c.Gate != nil && !c.Gate.Partial()) {
		return nil
	}
	if s.modelGate == nil || c.Policy.Model != s.modelGateOf {
		encCfg := telemetry.DefaultEncoderConfig(topo)
		var base policy.GateConfig
		var err error
		if c.Policy.Model == "" {
			_, base, err = models.LoadDefault(encCfg)
		} else {
			_, base, err = policy.LoadModel(c.Path(c.Policy.Model), encCfg)
		}
		if err != nil {
			return &FieldError{Path: "policy.model", Problem: err.Error()}
		}
		s.modelGate, s.modelGateOf = &base, c.Policy.Model
	}
	g := GateConfig{omitted: allGateKeys}
	if c.Gate != nil {
		g = *c.Gate
	}
	full := g.over(*s.modelGate)
	c.Gate = &full
	return nil
}

// loopbackAddr reports whether a host:port listens on loopback only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func parseLevel(s string) slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(s)) // validated
	return l
}

// MetricsAddr returns the address /metrics is served on, or "" when off.
func (s *Service) MetricsAddr() string {
	if s.metricsLn == nil {
		return ""
	}
	return s.metricsLn.Addr().String()
}

// Flows returns the flows the controller protects.
func (s *Service) Flows() []proflow.ProtectedFlow { return s.ctrl.Flows() }

// Run runs the controller loop, the southbound and the HTTP endpoint until
// ctx ends, then stops them: the loop first, so nothing is written after
// it; placements stay as they are (no rule is removed; an OpenFlow
// override expires by its lease unless another controller refreshes it);
// connections are closed. It returns nil after a clean stop, or the error
// that stopped a part early.
func (s *Service) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	fail := func(part string, err error) {
		if err != nil && ctx.Err() == nil {
			cancel(fmt.Errorf("serve: %s: %w", part, err))
		}
	}
	var srv *http.Server
	if s.metricsLn != nil {
		srv = s.httpServer()
		ln := newConnBound(s.metricsLn, maxHTTPConns, s.evicted)
		srv.ConnState = ln.track
		wg.Go(func() {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				fail("metrics", err)
			}
		})
	}
	if s.sb.run != nil {
		wg.Go(func() { fail(s.sb.kind, s.sb.run(ctx)) })
	}
	if s.rep != nil {
		wg.Go(func() { s.rep.run(ctx, s) })
	}
	loopDone := make(chan struct{})
	go func() { defer close(loopDone); s.loop(ctx) }()
	s.log.Info("proflow serve running", "southbound", s.sb.kind, "flows", len(s.ctrl.Flows()),
		"policy", s.cfg.Policy.Kind, "joint", s.cfg.Joint, "metrics", s.MetricsAddr())

	<-ctx.Done()
	<-loopDone
	if srv != nil {
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = srv.Shutdown(sctx)
		scancel()
	}
	wg.Wait()
	s.closeAll()
	err := context.Cause(ctx)
	if errors.Is(err, context.Canceled) {
		s.log.Info("proflow serve stopped; placements left as they are")
		return nil
	}
	return err
}

// httpServer returns the server of /metrics and /healthz: bounded in the
// time a client may take to send its headers, keep an idle connection or
// read a reply, its own errors logged through the service's logger (and
// its rate limit), not the standard logger. Run serves it on a connBound
// listener, which bounds its open connections.
func (s *Service) httpServer() *http.Server {
	return &http.Server{Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute,
		WriteTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
}

// loop reconciles, then steps once per interval on the southbound's clock
// until ctx ends (MultiController.Run, with a record of every step for
// /healthz).
func (s *Service) loop(ctx context.Context) {
	if err := s.ctrl.Reconcile(ctx); err != nil {
		s.log.Warn("reconcile failed; keeping the configured placements", "error", err)
	}
	t := s.sb.clock.NewTicker(s.interval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			sum := s.ctrl.Step(ctx)
			s.steps.Add(1)
			s.stepsM.Inc()
			s.lastStep.Store(time.Now().UnixNano())
			if sum.Hold != "" {
				s.log.Debug("step held", "reason", sum.Hold, "error", sum.Err)
			}
			if s.rep != nil {
				s.rep.save(ctx, s, sum.Decisions)
			}
		}
	}
}

func (s *Service) interval() time.Duration {
	if s.sb.kind == "sim" {
		return s.sb.fab.Config().Interval
	}
	return s.cfg.Interval
}

// wallInterval is the wall time between steps.
func (s *Service) wallInterval() time.Duration {
	if s.sb.kind == "sim" {
		return time.Duration(float64(s.interval()) / s.cfg.Southbound.Sim.Speed)
	}
	return s.cfg.Interval
}

func (s *Service) closeAll() {
	if s.rep != nil {
		if err := s.rep.close(context.Background()); err != nil {
			s.log.Warn("leave the cluster", "error", err)
		}
	}
	if s.metricsLn != nil {
		s.metricsLn.Close()
	}
	if s.sb != nil && s.sb.close != nil {
		if err := s.sb.close(); err != nil {
			s.log.Warn("close southbound", "error", err)
		}
	}
}

// handler serves /metrics and /healthz: 200 while the loop has stepped
// within the last three intervals, 503 before the first step and after
// the loop stalled.
func (s *Service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		last := s.lastStep.Load()
		if last == 0 {
			http.Error(w, "starting: no step yet", http.StatusServiceUnavailable)
			return
		}
		if age := time.Since(time.Unix(0, last)); age > 3*s.wallInterval()+time.Second {
			http.Error(w, fmt.Sprintf("stalled: last step %v ago", age.Round(time.Millisecond)), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "ok: %d steps, %d flows\n", s.steps.Load(), len(s.ctrl.Flows()))
	})
	return mux
}

// configuredFlows returns the flow list of c: its list, its file, or with
// the sim southbound and neither, every protected flow of the scenario.
func (s *Service) configuredFlows(c *Config, sb *southbound) ([]FlowConfig, error) {
	fs, err := s.flowList(c, sb)
	// A weight left out is 1: "weight: 1" written later is no change.
	out := make([]FlowConfig, len(fs))
	errs := []error{err}
	for i, f := range fs {
		f.Weight = proflow.ProtectedFlow{Weight: f.Weight}.EffectiveWeight()
		out[i] = f
		// A switch name Validate could not check (no topology section: the
		// sim profile's) is checked against the fabric's.
		if sb != nil && f.Switch != "" {
			if _, serr := sb.topo.SwitchIndex(f.Switch); serr != nil {
				path := fmt.Sprintf("flows.list[%d].switch", i)
				if len(c.Flows.List) == 0 {
					path = fmt.Sprintf("flows.file: flows[%d].switch", i)
				}
				errs = append(errs, &FieldError{Path: path, Problem: fmt.Sprintf("%q, want one of the fabric's switches %s", f.Switch, strings.Join(sb.topo.Switches, ", "))})
			}
		}
	}
	return out, errors.Join(errs...)
}

func (s *Service) flowList(c *Config, sb *southbound) ([]FlowConfig, error) {
	f := c.Flows
	needSwitch := c.Southbound.Sim == nil
	switch {
	case len(f.List) > 0:
		return f.List, nil
	case f.File != "":
		return ReadFlowsFile(c.Path(f.File), needSwitch, c.Topology)
	case sb != nil && sb.fab != nil:
		var fs []FlowConfig
		for _, p := range sb.fab.Protected() {
			fs = append(fs, FlowConfig{ID: p.ID.String(), Weight: p.Weight})
		}
		return fs, nil
	}
	return nil, nil
}

// applyFlows makes the controller protect exactly fs: it removes the flows
// not in fs, adds the new ones (at the switch the southbound locates them
// on, else the configured one), and re-adds a flow whose weight changed
// (it learns its baseline again). It applies what it can and returns the
// failures joined.
func (s *Service) applyFlows(ctx context.Context, fs []FlowConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := make(map[proflow.FlowID]FlowConfig, len(fs))
	var order []proflow.FlowID
	for _, f := range fs {
		id, err := proflow.ParseFlowID(f.ID)
		if err != nil {
			return err // checked by Validate
		}
		want[id] = f
		order = append(order, id)
	}
	var errs []error
	removed, added := 0, 0
	for id, pf := range s.flows {
		f, keep := want[id]
		if keep && f.Weight == pf.Weight {
			continue
		}
		if err := s.ctrl.RemoveFlow(id); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(s.flows, id)
		removed++
		if keep {
			s.log.Info("flow weight changed; re-adding it (it learns its baseline again)", "flow", id.String(), "weight", f.Weight)
		}
	}
	for _, id := range order {
		if _, have := s.flows[id]; have {
			continue
		}
		f := want[id]
		pf := proflow.ProtectedFlow{ID: id, Weight: f.Weight}
		cur, err := s.startSwitch(ctx, f, id)
		if err == nil && s.sb.install != nil {
			err = s.sb.install(ctx, id, cur)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("flow %v: %w", id, err))
			continue
		}
		if err := s.ctrl.AddFlow(pf, cur); err != nil {
			errs = append(errs, err) // names the flow itself
			continue
		}
		s.flows[id] = pf
		added++
	}
	s.cfgFlows.Set(float64(len(s.flows)))
	if added+removed > 0 {
		s.log.Info("flow set applied", "added", added, "removed", removed, "flows", len(s.flows))
	}
	return errors.Join(errs...)
}

// startSwitch returns where the fabric carries a flow now: where the
// southbound locates it, else the configured switch.
func (s *Service) startSwitch(ctx context.Context, f FlowConfig, id proflow.FlowID) (int, error) {
	if loc, ok := s.sb.enf.(proflow.Locator); ok {
		lctx, cancel := context.WithTimeout(ctx, time.Second)
		sw, err := loc.Locate(lctx, id)
		cancel()
		if err == nil && sw >= 0 && sw < s.sb.topo.NumSwitches() {
			return sw, nil
		}
	}
	if s.sb.fab != nil && s.sb.enf != proflow.Enforcer(s.sb.fab) {
		// The simulator behind a P4Runtime target: base forwarding
		// carries a flow with no entry where the simulator has it.
		if sw, err := s.sb.fab.Locate(ctx, id); err == nil {
			return sw, nil
		}
	}
	if f.Switch == "" {
		return 0, fmt.Errorf("the southbound cannot locate it and it has no switch, want flows[].switch")
	}
	return s.sb.topo.SwitchIndex(f.Switch)
}

// ReloadFile loads the config file at path (SIGHUP) and applies it as
// Reload does. A file that no longer loads (broken YAML, deleted, a
// directory, a bad value) is refused like a refused config: logged by the
// service's logger, counted in proflow_serve_reloads_total{result="error"},
// nothing changed.
func (s *Service) ReloadFile(ctx context.Context, path string) error {
	cfg, err := Load(path)
	if err != nil {
		s.reloadRefused(err)
		return err
	}
	return s.Reload(ctx, cfg)
}

// Reload applies cfg, a re-read config, while the service runs: the flow
// set (added and removed flows, changed weights) and the log level, once
// the whole config is accepted. Other changes need a restart: they are
// logged and ignored. A refused flow is reported and the others are
// applied.
func (s *Service) Reload(ctx context.Context, cfg *Config) error {
	err := s.reload(ctx, cfg)
	if err != nil {
		s.reloadRefused(err)
		return err
	}
	s.reloads.WithLabelValues("ok").Inc()
	return nil
}

func (s *Service) reloadRefused(err error) {
	s.reloads.WithLabelValues("error").Inc()
	s.log.Error("reload refused or incomplete; the running config stays for what was not applied", "error", err)
}

func (s *Service) reload(ctx context.Context, cfg *Config) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("serve: reload: %w", err)
	}
	if err := checkReload(ctx, cfg); err != nil {
		return fmt.Errorf("serve: reload: %w", err)
	}
	c := cfg.WithDefaults()
	c.Dir = cfg.Dir
	if s.sb.kind == "sim" && cfg.Interval == 0 {
		c.Interval = s.cfg.Interval // the profile's, as at start
	}
	if err := s.resolveGate(&c, s.sb.topo); err != nil {
		return fmt.Errorf("serve: reload: %w", err)
	}
	fs, err := s.configuredFlows(&c, s.sb)
	if err != nil {
		return fmt.Errorf("serve: reload: %w", err)
	}
	cordoned, err := cordonIndices(s.sb.topo, c.Cordon)
	if err != nil {
		return fmt.Errorf("serve: reload: %w", err)
	}
	// Accepted: apply the log level, the cordons and the flow set, nothing
	// before.
	if changed := restartFields(s.cfg, c); len(changed) > 0 {
		s.log.Warn("reload: these settings need a restart; kept as they were", "fields", strings.Join(changed, ", "))
	}
	if c.LogLevel != s.cfg.LogLevel {
		s.level.Set(parseLevel(c.LogLevel))
		s.log.Info("reload: log level", "level", c.LogLevel)
	}
	if !slices.Equal(c.Cordon, s.cfg.Cordon) {
		_ = s.ctrl.SetCordoned(cordoned) // every index is in the topology
		s.log.Info("reload: cordoned switches", "cordon", strings.Join(c.Cordon, ","))
	}
	s.mu.Lock()
	s.cfg.LogLevel, s.cfg.Flows, s.cfg.Cordon = c.LogLevel, c.Flows, c.Cordon
	s.mu.Unlock()
	if s.rep != nil {
		s.mu.Lock()
		prev := s.seeds
		s.mu.Unlock()
		err := s.rep.seed(ctx, prev, fs)
		s.mu.Lock()
		if err != nil {
			// Some of prev's removals may not have happened: keep them in
			// the seeds, so that the next reload removes them again.
			s.seeds = unionFlows(fs, prev)
		} else {
			s.seeds = fs
		}
		s.mu.Unlock()
		if err != nil {
			return fmt.Errorf("serve: reload: cluster: %w", err)
		}
		return nil
	}
	if err := s.applyFlows(ctx, fs); err != nil {
		return fmt.Errorf("serve: reload: %w", err)
	}
	return nil
}

// checkReload refuses what only building can (a scenario that does not
// load, a gate the policy package refuses, a model for another interval),
// though most of it needs a restart to apply: a config the next start
// would refuse is not a reload that went well. The flows are left to the
// reload, which refuses those the fabric cannot carry one by one and
// applies the rest.
func checkReload(ctx context.Context, cfg *Config) error {
	cc := *cfg
	if cc.Southbound.Sim != nil {
		cc.Flows = FlowsConfig{} // the scenario's flows, which the fabric carries
	}
	if _, err := Check(ctx, &cc); err != nil && !onlyFlowErrors(err) {
		return err
	}
	return nil
}

// onlyFlowErrors reports whether every error err joins or wraps is a
// FieldError of one of the flows.
func onlyFlowErrors(err error) bool {
	switch e := err.(type) {
	case *FieldError:
		return strings.HasPrefix(e.Path, "flows[")
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			if !onlyFlowErrors(x) {
				return false
			}
		}
		return true
	case interface{ Unwrap() error }:
		return onlyFlowErrors(e.Unwrap())
	}
	return false
}

// unionFlows returns a's flows and those of b whose ID a lacks.
func unionFlows(a, b []FlowConfig) []FlowConfig {
	out := slices.Clone(a)
	for _, f := range b {
		if !slices.ContainsFunc(a, func(g FlowConfig) bool { return g.ID == f.ID }) {
			out = append(out, f)
		}
	}
	return out
}

// cordonIndices returns the indices in topo of the switches names.
func cordonIndices(topo proflow.Topology, names []string) ([]int, error) {
	idx := make([]int, 0, len(names))
	for i, name := range names {
		k, err := topo.SwitchIndex(name)
		if err != nil {
			return nil, &FieldError{Path: fmt.Sprintf("cordon[%d]", i), Problem: fmt.Sprintf("%q is not a switch of the topology, want one of %s", name, strings.Join(topo.Switches, ", "))}
		}
		idx = append(idx, k)
	}
	return idx, nil
}

// restartFields lists the top-level settings that differ between a and b
// and that only a restart applies (all but flows, log_level and cordon).
func restartFields(a, b Config) []string {
	var changed []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == "" || name == "-" || name == "flows" || name == "log_level" || name == "cordon" {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	return changed
}
