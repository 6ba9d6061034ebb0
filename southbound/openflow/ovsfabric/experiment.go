package ovsfabric

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

var (
	h1 = netip.MustParseAddr("10.0.0.1")
	h7 = netip.MustParseAddr("10.0.0.7")
	h8 = netip.MustParseAddr("10.0.0.8")
)

// Experiment describes one closed-loop run on a real fabric.
type Experiment struct {
	// Fabric is the fabric to build (its Controller must point at Listen).
	Fabric Config
	// Listen is the OpenFlow controller's listen address.
	Listen string
	// Policy is static, crowd or reactive.
	Policy string
	// Scenario is "s1" (five congesters onto the protected flow's switch)
	// or "none".
	Scenario string
	// Warmup is how long the protected flow runs alone; Duration how long
	// the run goes on after congestion starts.
	Warmup, Duration time.Duration
	// Out receives the per-second table and the summary.
	Out io.Writer
	// Logger receives controller decisions at debug level.
	Logger *slog.Logger
}

// Run builds the fabric, starts the OpenFlow controller, a tc agent, the
// protected flow and (for s1) the congesters, runs the chosen policy, prints
// the protected flow's throughput every second and a summary, and tears the
// fabric down. Each step below undoes itself when Run returns.
func (x Experiment) Run(ctx context.Context) error {
	r, err := x.prepare()
	if err != nil {
		return err
	}
	defer r.undo()
	if err := r.startOpenFlow(ctx); err != nil {
		return err
	}
	if err := r.buildFabric(ctx); err != nil {
		return err
	}
	if err := r.startProtectedFlow(ctx); err != nil {
		return err
	}
	if err := r.startController(ctx); err != nil {
		return err
	}
	return r.follow(ctx)
}

// run is the state of one Experiment.Run, built up step by step.
type run struct {
	x       Experiment
	log     *slog.Logger
	out     io.Writer
	topo    proflow.Topology
	flow    proflow.FlowID
	pol     proflow.Policy
	cleanup []func() // undone in reverse order

	srv       *openflow.Server
	f         *Fabric
	tel       proflow.Telemetry
	fpSink    *Sink
	congSink  *Sink
	ctrl      *proflow.Controller
	decisions chan proflow.Decision

	// Timeline and what follow has seen.
	start, congestAt, end time.Time
	congested             bool
	pre, post             []float64 // f_p Mbit/s per second
	reroutes              int
	firstReroute          time.Duration
	lastCong              float64 // congesters' bytes in the last second
}

func (r *run) later(f func()) { r.cleanup = append(r.cleanup, f) }

func (r *run) undo() {
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		r.cleanup[i]()
	}
}

// prepare checks the settings and fixes the topology, the protected flow
// and the policy before anything is built.
func (x Experiment) prepare() (*run, error) {
	r := &run{x: x, log: x.Logger, out: x.Out, firstReroute: -1}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.out == nil {
		r.out = io.Discard
	}
	rateBytes, err := ParseRate(x.Fabric.BucketRate)
	if err != nil {
		return nil, err
	}
	r.topo = proflow.PaperTopology()
	r.topo.BucketRate = rateBytes
	r.flow = proflow.FlowID{Src: h1, Dst: h8, Proto: proflow.ProtoTCP, SrcPort: 40000, DstPort: 5201}
	switch x.Policy {
	case "static":
		r.pol = policy.Static{}
	case "crowd":
		r.pol, err = policy.NewCrowd(policy.DefaultCrowdConfig())
	case "reactive":
		r.pol, err = policy.NewReactive(policy.DefaultReactiveConfig())
	default:
		err = fmt.Errorf("policy %q, want static, crowd or reactive", x.Policy)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// startOpenFlow starts the OpenFlow controller the bridges will connect to.
func (r *run) startOpenFlow(ctx context.Context) error {
	ln, err := net.Listen("tcp", r.x.Listen)
	if err != nil {
		return err
	}
	ocfg := openflow.DefaultConfig()
	ocfg.Fabric, ocfg.Topology, ocfg.Flow, ocfg.Logger = openflow.PaperFabric(), r.topo, r.flow, r.log
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
		if err := f.Down(context.Background()); err != nil {
			r.log.Warn("fabric down", "error", err)
		}
	})
	if err := r.srv.WaitReady(ctx); err != nil {
		return err
	}
	tel, stopAgent, err := overflowTelemetry(ctx, f, r.srv, r.topo)
	if err != nil {
		return err
	}
	r.tel = tel
	r.later(stopAgent)
	return nil
}

// startProtectedFlow places the protected flow h1→h8 on agg1, starts the
// sinks on h8 (the protected flow) and h7 (the congesters) and the
// protected flow's sender.
func (r *run) startProtectedFlow(ctx context.Context) error {
	if err := r.srv.Place(ctx, r.flow, 0); err != nil {
		return err
	}
	var err error
	if r.fpSink, err = r.f.StartSink(ctx, "h8", 5201); err != nil {
		return err
	}
	r.later(r.fpSink.Stop)
	if r.congSink, err = r.f.StartSink(ctx, "h7", 5202); err != nil {
		return err
	}
	r.later(r.congSink.Stop)
	time.Sleep(200 * time.Millisecond)
	snd, err := r.f.StartSender(ctx, "h1", "10.0.0.8:5201", SenderConfig{BindPort: 40000})
	if err != nil {
		return err
	}
	r.later(snd.Stop)
	r.start = time.Now()
	r.congestAt = r.start.Add(r.x.Warmup)
	r.end = r.congestAt.Add(r.x.Duration)
	return nil
}

// startController runs the proflow controller with the policy on the
// fabric's telemetry and enforcer.
func (r *run) startController(ctx context.Context) error {
	enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(r.topo))
	if err != nil {
		return err
	}
	ccfg := proflow.DefaultConfig()
	ccfg.Topology, ccfg.Flow, ccfg.InitialSwitch = r.topo, r.flow, 0
	if r.log.Enabled(ctx, slog.LevelDebug) {
		ccfg.Logger = r.log // one record per decision
	}
	r.decisions = make(chan proflow.Decision, 256)
	ccfg.Observer = proflow.SendTo(r.decisions)
	if r.ctrl, err = proflow.NewController(ccfg, r.tel, enc, r.pol, policy.Immediate(), r.srv); err != nil {
		return err
	}
	r.goUntilUndone(ctx, func(ctx context.Context) { _ = r.ctrl.Run(ctx) })
	return nil
}

// goUntilUndone runs f on its own goroutine with a context that undo
// cancels, and makes undo wait for f to return.
func (r *run) goUntilUndone(ctx context.Context, f func(context.Context)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); f(ctx) }()
	r.later(func() { cancel(); <-done })
}

// follow prints a line per second of the protected flow's throughput,
// starts the congestion on time and prints the summary at the end.
func (r *run) follow(ctx context.Context) error {
	fmt.Fprintf(r.out, "policy %s, scenario %s, bucket %s; warm-up %v, then %v\n", r.x.Policy, r.x.Scenario, r.x.Fabric.BucketRate, r.x.Warmup, r.x.Duration)
	fmt.Fprintf(r.out, "%6s %10s %10s %8s %s\n", "t(s)", "f_p Mbit/s", "cong Mbit/s", "switch", "event")
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case rep, ok := <-r.congSink.Reports():
			if ok {
				r.lastCong = float64(rep.Bytes)
			}
		case rep, ok := <-r.fpSink.Reports():
			if !ok {
				return errors.New("protected flow sink ended")
			}
			if err := r.second(ctx, rep); err != nil {
				return err
			}
			if time.Now().After(r.end) {
				return r.summary()
			}
		}
	}
}

// second handles one report of the protected flow's sink: the decisions
// since the last one, the congestion when it is due, and the table's line.
func (r *run) second(ctx context.Context, rep SinkReport) error {
	events := r.drainDecisions()
	if !r.congested && time.Now().After(r.congestAt) {
		r.congested = true
		if r.x.Scenario == "s1" {
			if err := r.congest(ctx); err != nil {
				return err
			}
			events = append(events, "5 congesters start on agg1")
		}
	}
	mb := float64(rep.Bytes) * 8 / 1e6
	if r.congested {
		r.post = append(r.post, mb)
	} else if time.Since(r.start) > 3*time.Second {
		r.pre = append(r.pre, mb)
	}
	fmt.Fprintf(r.out, "%6.0f %10.2f %10.2f %8s %s\n", time.Since(r.start).Seconds(), mb, r.lastCong*8/1e6,
		r.topo.Switches[r.ctrl.Current()], strings.Join(events, "; "))
	return nil
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
		if r.congested && r.firstReroute < 0 {
			r.firstReroute = d.Time.Sub(r.congestAt)
		}
	}
	return events
}

// congest pins the host pairs h2…h6 → h7 onto agg1 and starts their
// senders: two streams each, capped at 15 % of the bucket.
func (r *run) congest(ctx context.Context) error {
	for n := 2; n <= 6; n++ {
		pair := proflow.FlowID{Src: netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), Dst: h7, Proto: proflow.ProtoTCP}
		if err := r.srv.Place(ctx, pair, 0); err != nil {
			return err
		}
		s, err := r.f.StartSender(ctx, fmt.Sprintf("h%d", n), "10.0.0.7:5202",
			SenderConfig{Streams: 2, RateBytesPerSec: 0.15 * r.topo.BucketRate})
		if err != nil {
			return err
		}
		r.later(s.Stop)
	}
	return nil
}

// summary prints the run's summary table.
func (r *run) summary() error {
	tw := tabwriter.NewWriter(r.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nsummary\t")
	fmt.Fprintf(tw, "policy\t%s\n", r.x.Policy)
	fmt.Fprintf(tw, "f_p before congestion (mean)\t%.2f Mbit/s\n", meanOf(r.pre))
	fmt.Fprintf(tw, "f_p after congestion starts (mean)\t%.2f Mbit/s\n", meanOf(r.post))
	fmt.Fprintf(tw, "f_p last 10 s (mean)\t%.2f Mbit/s\n", meanOf(r.post[max(0, len(r.post)-10):]))
	fmt.Fprintf(tw, "reroutes\t%d\n", r.reroutes)
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
