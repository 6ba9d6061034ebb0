package fabric

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
// fabric down.
func (x Experiment) Run(ctx context.Context) error {
	fcfg, listen, polName, scenario, warm, dur, log, out := x.Fabric, x.Listen, x.Policy, x.Scenario, x.Warmup, x.Duration, x.Logger, x.Out
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if out == nil {
		out = io.Discard
	}
	rateBytes, err := ParseRate(fcfg.BucketRate)
	if err != nil {
		return err
	}
	topo := proflow.PaperTopology()
	topo.BucketRate = rateBytes
	flow := proflow.FlowID{Src: h1, Dst: h8, Proto: proflow.ProtoTCP, SrcPort: 40000, DstPort: 5201}

	// Controller side: OpenFlow server and tc agent.
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	ocfg := openflow.DefaultConfig()
	ocfg.Fabric, ocfg.Topology, ocfg.Flow, ocfg.Logger = openflow.PaperFabric(), topo, flow, log
	srv, err := openflow.NewServer(ocfg)
	if err != nil {
		return err
	}
	sctx, scancel := context.WithCancel(ctx)
	sdone := make(chan struct{})
	go func() { defer close(sdone); _ = srv.Serve(sctx, ln) }()
	defer func() { scancel(); <-sdone }()

	f, err := Up(ctx, fcfg)
	if err != nil {
		return err
	}
	defer func() {
		if err := f.Down(context.Background()); err != nil {
			log.Warn("fabric down", "error", err)
		}
	}()
	if err := srv.WaitReady(ctx); err != nil {
		return err
	}
	tel, stopAgent, err := overflowTelemetry(ctx, f, srv, topo)
	if err != nil {
		return err
	}
	defer stopAgent()

	// Traffic: the protected flow h1→h8 on agg1; sinks on h8 and h7.
	if err := srv.Place(ctx, flow, 0); err != nil {
		return err
	}
	fpSink, err := f.StartSink(ctx, "h8", 5201)
	if err != nil {
		return err
	}
	defer fpSink.Stop()
	congSink, err := f.StartSink(ctx, "h7", 5202)
	if err != nil {
		return err
	}
	defer congSink.Stop()
	time.Sleep(200 * time.Millisecond)
	snd, err := f.StartSender(ctx, "h1", "10.0.0.8:5201", SenderConfig{BindPort: 40000})
	if err != nil {
		return err
	}
	defer snd.Stop()

	var pol proflow.Policy
	switch polName {
	case "static":
		pol = policy.Static{}
	case "crowd":
		if pol, err = policy.NewCrowd(policy.DefaultCrowdConfig()); err != nil {
			return err
		}
	case "reactive":
		if pol, err = policy.NewReactive(policy.DefaultReactiveConfig()); err != nil {
			return err
		}
	default:
		return fmt.Errorf("policy %q, want static, crowd or reactive", polName)
	}
	enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
	if err != nil {
		return err
	}
	ccfg := proflow.DefaultConfig()
	ccfg.Topology, ccfg.Flow, ccfg.InitialSwitch = topo, flow, 0
	if log.Enabled(ctx, slog.LevelDebug) {
		ccfg.Logger = log // one record per decision
	}
	decisions := make(chan proflow.Decision, 256)
	ccfg.Observer = proflow.SendTo(decisions)
	ctrl, err := proflow.NewController(ccfg, tel, enc, pol, policy.Immediate(), srv)
	if err != nil {
		return err
	}
	cctx, ccancel := context.WithCancel(ctx)
	cdone := make(chan struct{})
	go func() { defer close(cdone); _ = ctrl.Run(cctx) }()
	defer func() { ccancel(); <-cdone }()

	start := time.Now()
	congestAt := start.Add(warm)
	end := congestAt.Add(dur)
	var senders []*Sender
	defer func() {
		for _, s := range senders {
			s.Stop()
		}
	}()
	fmt.Fprintf(out, "policy %s, scenario %s, bucket %s; warm-up %v, then %v\n", polName, scenario, fcfg.BucketRate, warm, dur)
	fmt.Fprintf(out, "%6s %10s %10s %8s %s\n", "t(s)", "f_p Mbit/s", "cong Mbit/s", "switch", "event")
	var pre, post []float64
	reroutes, firstReroute := 0, time.Duration(-1)
	congested := false
	var lastCong float64
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case r, ok := <-congSink.Reports():
			if ok {
				lastCong = float64(r.Bytes)
			}
			continue
		case r, ok := <-fpSink.Reports():
			if !ok {
				return errors.New("protected flow sink ended")
			}
			var events []string
			for len(decisions) > 0 {
				d := <-decisions
				if d.Rerouted {
					reroutes++
					events = append(events, "reroute "+topo.Switches[d.Current]+"→"+topo.Switches[d.Target])
					if congested && firstReroute < 0 {
						firstReroute = d.Time.Sub(congestAt)
					}
				}
			}
			if !congested && scenario == "s1" && time.Now().After(congestAt) {
				congested = true
				for n := 2; n <= 6; n++ {
					pair := proflow.FlowID{Src: netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), Dst: h7, Proto: proflow.ProtoTCP}
					if err := srv.Place(ctx, pair, 0); err != nil {
						return err
					}
					s, err := f.StartSender(ctx, fmt.Sprintf("h%d", n), "10.0.0.7:5202",
						SenderConfig{Streams: 2, RateBytesPerSec: 0.15 * topo.BucketRate})
					if err != nil {
						return err
					}
					senders = append(senders, s)
				}
				events = append(events, "5 congesters start on agg1")
			} else if scenario != "s1" && time.Now().After(congestAt) {
				congested = true
			}
			mb := float64(r.Bytes) * 8 / 1e6
			if congested {
				post = append(post, mb)
			} else if time.Since(start) > 3*time.Second {
				pre = append(pre, mb)
			}
			fmt.Fprintf(out, "%6.0f %10.2f %10.2f %8s %s\n", time.Since(start).Seconds(), mb, lastCong*8/1e6,
				topo.Switches[ctrl.Current()], strings.Join(events, "; "))
			if time.Now().After(end) {
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "\nsummary\t")
				fmt.Fprintf(tw, "policy\t%s\n", polName)
				fmt.Fprintf(tw, "f_p before congestion (mean)\t%.2f Mbit/s\n", meanOf(pre))
				fmt.Fprintf(tw, "f_p after congestion starts (mean)\t%.2f Mbit/s\n", meanOf(post))
				fmt.Fprintf(tw, "f_p last 10 s (mean)\t%.2f Mbit/s\n", meanOf(post[max(0, len(post)-10):]))
				fmt.Fprintf(tw, "reroutes\t%d\n", reroutes)
				if firstReroute >= 0 {
					fmt.Fprintf(tw, "first reroute after congestion\t%v\n", firstReroute.Round(100*time.Millisecond))
				}
				return tw.Flush()
			}
		}
	}
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
