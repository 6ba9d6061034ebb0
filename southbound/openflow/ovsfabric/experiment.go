package ovsfabric

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/hostagent"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// Ports of the traffic: the protected flow's (source and sink) and the
// congesters' sinks.
const (
	protectedSrcPort = 40000
	protectedDstPort = 5201
	congestionPort   = 5202
)

// Experiment describes one closed-loop episode on a real fabric: a scenario
// of the simulator, scaled by Scale, under one policy.
type Experiment struct {
	// Fabric is the fabric to build. Its Controller must point at Listen;
	// left empty, it points at the address Listen got (so Listen may be
	// "127.0.0.1:0"). Its BucketRate is the real bucket rate of Scale; Run
	// sets its burst and queue limit from Scale.
	Fabric Config
	// Listen is the OpenFlow controller's listen address.
	Listen string
	// Policy builds the episode's encoder, policy and gate
	// (eval.ReferencePolicy, eval.AgentPolicy). A policy that reads the
	// scenario (the oracle) is refused: the real fabric's timeline is not
	// the simulator's.
	Policy eval.PolicySpec
	// Scenario is the traffic, as the simulator reads it.
	Scenario *sim.Scenario
	// Scale maps the scenario onto the fabric; its BucketRateBytesPerSec
	// is taken from Fabric.BucketRate.
	Scale Scale
	// Warmup and Window, when not zero, replace the scaled scenario's
	// congestion start and evaluation window (Plan.Retime).
	Warmup, Window time.Duration
	// Seed and Repeat identify the episode in its trace (Meta.Seed and the
	// "repeat" label, as the simulated evaluation writes them); the real
	// fabric's traffic depends on Seed only through an rr flow's Poisson
	// arrivals.
	Seed   uint64
	Repeat int
	// Labels are added to the trace's labels.
	Labels map[string]string
	// TraceFile, when set, receives the episode's trace (trace.WriteFile;
	// a name ending in .gz is compressed).
	TraceFile string
	// Out receives a line per second and the summary.
	Out io.Writer
	// Logger receives controller decisions and fabric commands at debug
	// level.
	Logger *slog.Logger
}

// Run runs the episode: it starts the OpenFlow controller, builds the
// fabric, starts the protected flow alone and the proflow controller,
// starts, moves and stops the congesters as the scaled scenario says while
// printing the protected flow's throughput every second, prints a summary,
// tears everything down and returns the episode's trace (also written to
// TraceFile when set). Each step undoes itself when Run returns, whatever
// the reason: the episode's end, an error, ctx done, or a write to Out that
// failed (a closed pipe: the episode stops, as nobody reads it any more).
// An error of the teardown is returned too.
func (x Experiment) Run(ctx context.Context) (ep *trace.Episode, err error) {
	r, err := x.prepare()
	if err != nil {
		return nil, err
	}
	defer func() {
		r.undo()
		if r.downErr != nil {
			err = errors.Join(err, fmt.Errorf("ovsfabric: tear the fabric down: %w", r.downErr))
		}
	}()
	if err := r.startOpenFlow(ctx); err != nil {
		return nil, err
	}
	if err := r.buildFabric(ctx); err != nil {
		return nil, err
	}
	if err := r.startProtectedFlow(ctx); err != nil {
		return nil, err
	}
	if err := r.startController(ctx); err != nil {
		return nil, err
	}
	if err := r.follow(ctx); err != nil {
		return nil, err
	}
	return r.keepTrace()
}

// run is the state of one Experiment.Run, built up step by step.
type run struct {
	x       Experiment
	log     *slog.Logger
	out     *outWriter
	scale   Scale
	plan    *Plan
	wiring  openflow.Fabric
	topo    proflow.Topology
	flow    proflow.FlowID
	pairs   []proflow.FlowID // per congester: its host pair
	cleanup []func()         // undone in reverse order
	// ownController: the fabric's controller target is the listener's
	// address.
	ownController bool

	srv        *openflow.Server
	f          *Fabric
	agent      *hostagent.Agent // reads the protected flow's TCP_INFO in its sender's namespace
	rrLast     atomic.Pointer[RRReport]
	lat        latencies // per-second latency, for the summary
	downErr    error     // of the fabric's teardown
	tel        proflow.Telemetry
	fpSink     *Sink
	congBytes  atomic.Int64 // received by the congesters' sinks since the last line
	senders    []*Sender    // per congester, while it sends
	interval   time.Duration
	fpRate     atomic.Uint64 // math.Float64bits of the protected flow's last rate, bytes/s
	rec        *Recorder
	ctrl       *proflow.Controller
	stopCtrl   func()
	decisions  chan proflow.Decision
	secBytes   int64         // the protected flow's bytes since the last line
	secCovered time.Duration // the time those bytes cover

	// missesAtStart is TableMisses when the episode started; misses is
	// the difference at its end (-1 until then).
	missesAtStart, misses int64
	// bucketsLost counts the uplinks without their tbf at the end of the
	// episode (-1 before it ends); an episode with any ran on a fabric
	// without the buckets it describes.
	bucketsLost int

	// The timeline and what follow has seen.
	start        time.Time
	next         int // Plan.Events[next] is due next
	pre, post    []float64
	reroutes     int
	firstReroute time.Duration
}

func (r *run) later(f func()) { r.cleanup = append(r.cleanup, f) }

func (r *run) undo() {
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		r.cleanup[i]()
	}
}

// prepare checks the settings and fixes the plan, the topology, the hosts
// and the fabric's bucket before anything is built.
func (x Experiment) prepare() (*run, error) {
	r := &run{x: x, log: x.Logger, out: &outWriter{w: x.Out}, firstReroute: -1, misses: -1, bucketsLost: -1, interval: proflow.DefaultConfig().Interval}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.out.w == nil {
		r.out.w = io.Discard
	}
	if x.Policy.New == nil || x.Policy.ForScenario != nil {
		return nil, fmt.Errorf("ovsfabric: policy %q: want a policy built per episode (reference or agent), not one that reads the scenario", x.Policy.Name)
	}
	r.ownController = x.Fabric.Controller == ""
	x.Fabric = x.Fabric.withDefaults()
	rate, err := ParseRate(x.Fabric.BucketRate)
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: %w", err)
	}
	r.scale = x.Scale.withDefaults()
	r.scale.BucketRateBytesPerSec = rate
	plan, err := r.scale.Plan(x.Scenario)
	if err != nil {
		return nil, err
	}
	r.plan = plan.Retime(x.Warmup, x.Window)
	x.Fabric.BucketBurst = fmt.Sprintf("%.0f", r.scale.BucketBurstBytes())
	x.Fabric.BucketLimit = fmt.Sprintf("%.0f", r.scale.BucketLimitBytes())
	if x.Fabric.HLimitRate != "" {
		// The H-limit holds the precursor's reserve; the counted bucket
		// holds it plus what the H-limit passes above C for the testbed's
		// lag, scaled (HLimitLag).
		hrate, err := ParseRate(x.Fabric.HLimitRate)
		if err != nil {
			return nil, fmt.Errorf("ovsfabric: H-limit: %w", err)
		}
		lag := r.scale.Time(HLimitLag()).Seconds()
		x.Fabric.HLimitBurst = x.Fabric.BucketBurst
		x.Fabric.BucketBurst = fmt.Sprintf("%.0f", r.scale.BucketBurstBytes()+lag*max(0, hrate-rate))
	}
	r.x = x
	r.wiring = x.Fabric.Wiring
	r.topo = r.scale.Topology()
	if err := r.resolveHosts(); err != nil {
		return nil, err
	}
	return r, nil
}

// resolveHosts finds the addresses of the protected flow's and the
// congesters' hosts in the fabric's wiring.
func (r *run) resolveHosts() error {
	var errs []error
	addr := func(name string) netip.Addr {
		a, err := hostAddr(r.wiring, name)
		if err != nil {
			errs = append(errs, err)
		}
		return a
	}
	c := r.scale.Sim
	r.flow = proflow.FlowID{Src: addr(c.ProtectedSrc), Dst: addr(c.ProtectedDst), Proto: proflow.ProtoTCP,
		SrcPort: protectedSrcPort, DstPort: protectedDstPort}
	for _, g := range r.plan.Congesters {
		r.pairs = append(r.pairs, proflow.FlowID{Src: addr(g.Host), Dst: addr(g.Dst), Proto: proflow.ProtoTCP})
	}
	r.senders = make([]*Sender, len(r.plan.Congesters))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ovsfabric: scenario %s: %w", r.plan.Scenario, err)
	}
	return nil
}

// hostAddr returns the address of the host named name in the wiring.
func hostAddr(w openflow.Fabric, name string) (netip.Addr, error) {
	var names []string
	for _, lf := range w.Leaves {
		for _, h := range lf.Hosts {
			if h.Name == name {
				return h.Addr, nil
			}
			names = append(names, h.Name)
		}
	}
	return netip.Addr{}, fmt.Errorf("host %q is not in the fabric, want one of %s", name, strings.Join(names, " "))
}

// startOpenFlow starts the OpenFlow controller the bridges will connect to.
func (r *run) startOpenFlow(ctx context.Context) error {
	ln, err := net.Listen("tcp", r.x.Listen)
	if err != nil {
		return fmt.Errorf("ovsfabric: %w", err)
	}
	if r.ownController {
		r.x.Fabric.Controller = "tcp:" + ln.Addr().String()
	}
	ocfg := openflow.DefaultConfig()
	ocfg.Fabric, ocfg.Topology, ocfg.Flow, ocfg.Logger = r.wiring, r.topo, r.flow, r.log
	if r.srv, err = openflow.NewServer(ocfg); err != nil {
		ln.Close()
		return err
	}
	r.goUntilUndone(ctx, func(ctx context.Context) { _ = r.srv.Serve(ctx, ln) })
	return nil
}

// buildFabric builds the fabric, waits for every bridge to connect and
// starts the telemetry: OpenFlow merged with a tc agent on the uplinks.
func (r *run) buildFabric(ctx context.Context) error {
	f, err := Up(ctx, r.x.Fabric)
	if err != nil {
		return err
	}
	r.f = f
	r.later(func() {
		// ctx may be cancelled by now (Ctrl-C, a closed output): tear down
		// under a fresh, bounded context.
		tctx, cancel := TeardownContext(ctx)
		defer cancel()
		r.downErr = f.Down(tctx)
	})
	if err := r.srv.WaitReady(ctx); err != nil {
		return err
	}
	restored, err := f.EnsureBuckets(ctx)
	if err != nil {
		return err
	}
	if len(restored) > 0 {
		r.log.Warn("ovsfabric: tbf replaced after the fabric came up; put back", "uplinks", restored)
	}
	tel, stopAgent, err := overflowTelemetry(ctx, f, r.srv, r.topo)
	if err != nil {
		return err
	}
	r.later(stopAgent)
	if r.tel, err = r.latencyTelemetry(ctx, tel); err != nil {
		return err
	}
	return nil
}

// startProtectedFlow places the protected flow on its initial switch,
// starts the sinks (the protected flow's, and one per congester
// destination) and the protected flow's paced sender. The episode starts
// now.
func (r *run) startProtectedFlow(ctx context.Context) error {
	if err := r.srv.Place(ctx, r.flow, r.plan.ProtectedSwitch); err != nil {
		return err
	}
	c := r.scale.Sim
	var err error
	sinkCfg := SinkConfig{Report: r.interval, RcvBufBytes: r.x.Fabric.ProtectedRcvBufBytes}
	if r.plan.Kind.Kind == sim.KindRR {
		sinkCfg.ReplyEvery = r.plan.Kind.RequestBytes
	}
	if r.fpSink, err = r.f.StartSinkWith(ctx, c.ProtectedDst, protectedDstPort, sinkCfg); err != nil {
		return err
	}
	r.later(r.fpSink.Stop)
	seen := map[string]bool{}
	for _, g := range r.plan.Congesters {
		if seen[g.Dst] {
			continue
		}
		seen[g.Dst] = true
		s, err := r.f.StartSink(ctx, g.Dst, congestionPort)
		if err != nil {
			return err
		}
		r.later(s.Stop)
		go func() {
			for rep := range s.Reports() {
				r.congBytes.Add(rep.Bytes)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // the sinks listen
	if r.missesAtStart, err = r.f.TableMisses(ctx); err != nil {
		return err
	}
	snd, err := r.f.StartSender(ctx, c.ProtectedSrc, netip.AddrPortFrom(r.flow.Dst, protectedDstPort).String(),
		SenderConfig{BindPort: protectedSrcPort, RateBytesPerSec: r.plan.ProtectedRate, Kind: r.plan.Kind, Seed: r.x.Seed, Report: r.interval})
	if err != nil {
		return err
	}
	r.later(snd.Stop)
	go func() {
		for rep := range snd.Reports() {
			r.rrLast.Store(&rep)
		}
	}()
	r.start = time.Now()
	return nil
}

// startController runs the proflow controller with the policy on the
// fabric's telemetry and enforcer. Its baseline phase (ramp-up, then
// samples) must end before the congestion starts.
func (r *run) startController(ctx context.Context) error {
	enc, pol, gate, err := r.x.Policy.New(r.topo)
	if err != nil {
		return fmt.Errorf("ovsfabric: build policy %s: %w", r.x.Policy.Name, err)
	}
	ccfg := proflow.DefaultConfig()
	ccfg.Topology, ccfg.Flow, ccfg.InitialSwitch, ccfg.Interval = r.topo, r.flow, r.plan.ProtectedSwitch, r.interval
	ccfg.BaselineWarmup, ccfg.BaselineSamples, err = baselinePhase(r.plan.CongestionStart, ccfg.Interval, ccfg.BaselineWarmup, ccfg.BaselineSamples)
	if err != nil {
		return err
	}
	if r.log.Enabled(ctx, slog.LevelDebug) {
		ccfg.Logger = r.log // one record per decision
	}
	r.decisions = make(chan proflow.Decision, 256)
	r.rec = NewRecorder(r.tel, func() float64 { return math.Float64frombits(r.fpRate.Load()) })
	toFollow := proflow.SendTo(r.decisions)
	ccfg.Observer = func(d proflow.Decision) { r.rec.Observe(d); toFollow(d) }
	if r.ctrl, err = proflow.NewController(ccfg, r.rec, enc, pol, gate, r.srv); err != nil {
		return err
	}
	r.stopCtrl = r.goUntilUndone(ctx, func(ctx context.Context) { _ = r.ctrl.Run(ctx) })
	return nil
}

// keepTrace stops the controller and returns the episode's trace, written
// to TraceFile when set.
func (r *run) keepTrace() (*trace.Episode, error) {
	r.stopCtrl()
	ep, err := r.rec.Episode(r.traceMeta())
	if err != nil {
		return nil, err
	}
	if r.x.TraceFile != "" {
		if err := trace.WriteFile(r.x.TraceFile, ep); err != nil {
			return ep, fmt.Errorf("ovsfabric: keep trace: %w", err)
		}
	}
	return ep, nil
}

// baselinePhase fits the controller's baseline phase (warmup samples
// discarded, then samples averaged) into the time before the congestion
// starts, keeping one interval spare: fewer samples when it is short, an
// error when not even two fit.
func baselinePhase(congestionStart, interval time.Duration, warmup, samples int) (int, int, error) {
	fit := int(congestionStart/interval) - warmup - 1
	if fit < 2 {
		return 0, 0, fmt.Errorf("ovsfabric: congestion starts %v into the episode: too early for the controller's baseline phase (%d samples of %v to discard, then at least 2), want at least %v",
			congestionStart, warmup, interval, time.Duration(warmup+3)*interval)
	}
	return warmup, min(samples, fit), nil
}

// goUntilUndone runs f on its own goroutine with a context that undo
// cancels, and makes undo wait for f to return. It returns a function that
// does the same earlier.
func (r *run) goUntilUndone(ctx context.Context, f func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); f(ctx) }()
	stop = func() { cancel(); <-done }
	r.later(stop)
	return stop
}

// follow applies the plan's events when they are due, prints a line per
// second of the protected flow's throughput and the summary at the end.
func (r *run) follow(ctx context.Context) error {
	p := r.plan
	fmt.Fprintf(r.out, "scenario %s, policy %s, bucket %s (burst %s B, queue %s B); congestion at %v, end at %v\n",
		p.Scenario, r.x.Policy.Name, r.x.Fabric.BucketRate, r.x.Fabric.BucketBurst, r.x.Fabric.BucketLimit, p.CongestionStart, p.End)
	rl := r.f.RegimeLabels()
	fmt.Fprintf(r.out, "regime: rtt %s (hosts %s), congestion control %s, protected receive buffer %s, H-limit %s (burst %s)\n",
		rl[LabelRTT], rl[LabelRTTHosts], rl[LabelCongestionControl], rl[LabelRcvBuf], rl[LabelHLimitRate], rl[LabelHLimitBurst])
	fmt.Fprintf(r.out, "protected flow: %s\n", kindString(r.plan.Kind))
	fmt.Fprintf(r.out, "%6s %10s %11s %8s %8s %8s %s\n", "t(s)", "f_p Mbit/s", "cong Mbit/s", "srtt ms", "req p99", "switch", "events")
	if err := r.out.err; err != nil {
		return err
	}
	due := time.NewTimer(r.untilNextEvent())
	defer due.Stop()
	var events []string
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-due.C:
			ev, err := r.applyDue(ctx)
			if err != nil {
				return err
			}
			events = append(events, ev...)
			due.Reset(r.untilNextEvent())
		case rep, ok := <-r.fpSink.Reports():
			if !ok {
				return errors.New("ovsfabric: the protected flow's sink ended")
			}
			r.fpRate.Store(math.Float64bits(lastThroughput(rep, r.interval)))
			r.secBytes += rep.Bytes
			if r.secCovered += r.interval; r.secCovered < time.Second {
				continue
			}
			r.second(r.secBytes, append(events, r.drainDecisions()...))
			if err := r.out.err; err != nil {
				return err
			}
			events, r.secBytes, r.secCovered = nil, 0, 0
			if time.Since(r.start) >= p.End {
				n, err := r.f.TableMisses(ctx)
				if err != nil {
					return err
				}
				r.misses = n - r.missesAtStart
				lost, err := r.f.MissingBuckets(ctx)
				if err != nil {
					return err
				}
				if r.bucketsLost = len(lost); r.bucketsLost > 0 {
					r.log.Warn("ovsfabric: tbf replaced during the episode: its uplinks were not rate-limited", "uplinks", lost)
				}
				return r.summary()
			}
		}
	}
}

// untilNextEvent returns how long until the next event of the plan is due
// (a day when none is left).
func (r *run) untilNextEvent() time.Duration {
	if r.next >= len(r.plan.Events) {
		return 24 * time.Hour
	}
	return max(0, r.plan.Events[r.next].At-time.Since(r.start))
}

// applyDue applies every event of the plan that is due and describes them.
func (r *run) applyDue(ctx context.Context) ([]string, error) {
	var out []string
	for ; r.next < len(r.plan.Events) && r.plan.Events[r.next].At <= time.Since(r.start); r.next++ {
		e := r.plan.Events[r.next]
		if err := r.apply(ctx, e); err != nil {
			return out, fmt.Errorf("ovsfabric: scenario %s: %v of %s at %v: %w", r.plan.Scenario, e.Kind, r.plan.Congesters[e.Congester].Host, e.At, err)
		}
		desc := fmt.Sprintf("%s %v", r.plan.Congesters[e.Congester].Host, e.Kind)
		if e.Kind != Depart {
			desc += " " + r.topo.Switches[e.Switch]
		}
		out = append(out, desc)
	}
	return out, nil
}

// apply carries out one event: pin a host pair and start its sender, move
// it, or stop the sender.
func (r *run) apply(ctx context.Context, e Event) error {
	g := r.plan.Congesters[e.Congester]
	switch e.Kind {
	case Arrive, Move:
		if err := r.srv.Place(ctx, r.pairs[e.Congester], e.Switch); err != nil {
			return err
		}
		if e.Kind == Move || r.senders[e.Congester] != nil {
			return nil
		}
		s, err := r.f.StartSender(ctx, g.Host, netip.AddrPortFrom(r.pairs[e.Congester].Dst, congestionPort).String(),
			SenderConfig{Streams: g.Streams, RateBytesPerSec: g.RateBytesPerSec})
		if err != nil {
			return err
		}
		r.senders[e.Congester] = s
		r.later(func() {
			if r.senders[e.Congester] == s {
				s.Stop()
			}
		})
	case Depart:
		if s := r.senders[e.Congester]; s != nil {
			s.Stop()
			r.senders[e.Congester] = nil
		}
	}
	return nil
}

// second prints the line of a second's bytes of the protected flow.
func (r *run) second(bytes int64, events []string) {
	mb := float64(bytes) * 8 / 1e6
	t := time.Since(r.start)
	switch {
	case t >= r.plan.CongestionStart:
		r.post = append(r.post, mb)
	case t > 3*time.Second:
		r.pre = append(r.pre, mb)
	}
	srtt, req := r.secondLatency(t)
	fmt.Fprintf(r.out, "%6.0f %10.2f %11.2f %8s %8s %8s %s\n", t.Seconds(), mb, float64(r.congBytes.Swap(0))*8/1e6,
		srtt, req, r.topo.Switches[r.ctrl.Current()], strings.Join(events, "; "))
}

// drainDecisions counts the reroutes decided since the last call and
// describes them.
func (r *run) drainDecisions() []string {
	var events []string
	for len(r.decisions) > 0 {
		d := <-r.decisions
		if !d.Rerouted {
			continue
		}
		r.reroutes++
		events = append(events, "reroute "+r.topo.Switches[d.Current]+"→"+r.topo.Switches[d.Target])
		if at := d.Time.Sub(r.start) - r.plan.CongestionStart; at >= 0 && r.firstReroute < 0 {
			r.firstReroute = at
		}
	}
	return events
}

// outWriter is Experiment.Out that keeps the first write error, wrapped,
// and fails every write after it.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = fmt.Errorf("ovsfabric: print the episode's progress: %w", err)
		return n, o.err
	}
	return n, nil
}

// summary prints the episode's summary table.
func (r *run) summary() error {
	tw := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nsummary\t")
	fmt.Fprintf(tw, "scenario, policy\t%s, %s\n", r.plan.Scenario, r.x.Policy.Name)
	fmt.Fprintf(tw, "f_p before congestion (mean)\t%.2f Mbit/s\n", meanOf(r.pre))
	fmt.Fprintf(tw, "f_p after congestion starts (mean)\t%.2f Mbit/s\n", meanOf(r.post))
	fmt.Fprintf(tw, "f_p last 10 s (mean)\t%.2f Mbit/s\n", meanOf(r.post[max(0, len(r.post)-10):]))
	r.lat.summary(tw, r.plan.Kind.Kind == sim.KindRR)
	fmt.Fprintf(tw, "reroutes\t%d\n", r.reroutes)
	fmt.Fprintf(tw, "packets that found no rule (every bridge)\t%d\n", r.misses)
	fmt.Fprintf(tw, "uplinks without their tbf at the end\t%d\n", r.bucketsLost)
	if r.firstReroute >= 0 {
		fmt.Fprintf(tw, "first reroute after congestion\t%v\n", r.firstReroute.Round(100*time.Millisecond))
	}
	return tw.Flush()
}

// overflowTelemetry merges the OpenFlow telemetry with a tc agent on the
// fabric's bucketed uplinks. stop shuts the agent down and waits for it.
func overflowTelemetry(ctx context.Context, f *Fabric, srv *openflow.Server, topo proflow.Topology) (tel proflow.Telemetry, stop func(), err error) {
	tln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	var devs []string
	var srcs []tcstat.Source
	for _, d := range f.UplinkDevs() {
		devs = append(devs, d...)
		srcs = append(srcs, tcstat.Source{Agent: "http://" + tln.Addr().String(), Interfaces: d})
	}
	agent, err := tcstat.NewAgent(ctx, tcstat.AgentConfig{Interfaces: devs})
	if err != nil {
		tln.Close()
		return nil, nil, err
	}
	actx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = tcstat.Serve(actx, tln, agent) }()
	stop = func() { cancel(); <-done }
	client, err := tcstat.NewClient(tcstat.ClientConfig{Topology: topo, Switches: srcs})
	if err == nil {
		tel, err = telemetry.Merge(srv, client)
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	return tel, stop, nil
}

// ParseRate converts a tc rate such as "10mbit" to bytes per second.
func ParseRate(s string) (float64, error) {
	var v float64
	var unit string
	if _, err := fmt.Sscanf(strings.ToLower(s), "%f%s", &v, &unit); err != nil {
		return 0, fmt.Errorf("bucket rate %q, want for example 10mbit", s)
	}
	mult := map[string]float64{"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}[unit]
	if mult == 0 || v <= 0 {
		return 0, fmt.Errorf("bucket rate %q, want a positive number of kbit, mbit or gbit", s)
	}
	return v * mult / 8, nil
}

func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
