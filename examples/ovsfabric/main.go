// Command ovsfabric runs ProFlow against a real Open vSwitch fabric on one
// Linux machine: the paper's four aggregation switches, four leaves and
// eight hosts (network namespaces), OVS userspace bridges speaking OpenFlow
// 1.3 to the controller in this process, tc token buckets on every
// aggregation uplink, real TCP traffic.
//
//	sudo ovsfabric run -policy crowd -scenario s1   # build, run, print, tear down
//	sudo ovsfabric up                               # build and wait (Ctrl-C tears down)
//	sudo ovsfabric down                             # remove leftovers of a crashed run
//
// It needs root and `make ovs-deps` (openvswitch-switch, iproute2, ethtool).
// See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/examples/ovsfabric/fabric"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

func main() {
	fabric.MaybeRunTraffic() // the traffic generator re-executes this binary
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	prefix := fs.String("prefix", "pf-", "prefix of every namespace, link and bridge")
	runDir := fs.String("rundir", "/tmp/proflow-ovs", "OVS run directory")
	listen := fs.String("listen", "127.0.0.1:6653", "OpenFlow controller address")
	rate := fs.String("bucket", "10mbit", "tc tbf rate of every aggregation uplink (the paper: 200mbit; scaled for 2 cores)")
	pol := fs.String("policy", "crowd", "run: static, crowd or reactive")
	scenario := fs.String("scenario", "s1", "run: s1 (five congesters onto the protected flow's switch) or none")
	warm := fs.Duration("warmup", 10*time.Second, "run: protected flow alone before congestion")
	dur := fs.Duration("duration", 40*time.Second, "run: time after congestion starts")
	verbose := fs.Bool("v", false, "log controller decisions and fabric commands")
	_ = fs.Parse(os.Args[2:])

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fcfg := fabric.Config{Prefix: *prefix, RunDir: *runDir, Controller: "tcp:" + *listen, BucketRate: *rate, Logger: log}

	var err error
	switch os.Args[1] {
	case "down":
		err = fabric.Down(ctx, fcfg)
	case "up":
		var f *fabric.Fabric
		if f, err = fabric.Up(ctx, fcfg); err == nil {
			fmt.Printf("fabric up (controller expected at %s); Ctrl-C tears it down\n", *listen)
			<-ctx.Done()
			err = f.Down(context.Background())
		}
	case "run":
		err = run(ctx, fcfg, *listen, *pol, *scenario, *warm, *dur, log)
	default:
		usage()
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "ovsfabric:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ovsfabric run|up|down [flags]   (ovsfabric run -h for flags)")
	os.Exit(2)
}

var (
	h1 = netip.MustParseAddr("10.0.0.1")
	h7 = netip.MustParseAddr("10.0.0.7")
	h8 = netip.MustParseAddr("10.0.0.8")
)

func run(ctx context.Context, fcfg fabric.Config, listen, polName, scenario string, warm, dur time.Duration, log *slog.Logger) error {
	rateBytes, err := parseRate(fcfg.BucketRate)
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

	f, err := fabric.Up(ctx, fcfg)
	if err != nil {
		return err
	}
	defer func() {
		if err := f.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "ovsfabric: down:", err)
		}
	}()
	if err := srv.WaitReady(ctx); err != nil {
		return err
	}
	tel, err := overflowTelemetry(ctx, f, srv, topo)
	if err != nil {
		return err
	}

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
	snd, err := f.StartSender(ctx, "h1", "10.0.0.8:5201", fabric.SenderConfig{BindPort: 40000})
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
	var senders []*fabric.Sender
	defer func() {
		for _, s := range senders {
			s.Stop()
		}
	}()
	fmt.Printf("policy %s, scenario %s, bucket %s; warm-up %v, then %v\n", polName, scenario, fcfg.BucketRate, warm, dur)
	fmt.Printf("%6s %10s %10s %8s %s\n", "t(s)", "f_p Mbit/s", "cong Mbit/s", "switch", "event")
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
						fabric.SenderConfig{Streams: 2, RateBytesPerSec: 0.15 * topo.BucketRate})
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
			fmt.Printf("%6.0f %10.2f %10.2f %8s %s\n", time.Since(start).Seconds(), mb, lastCong*8/1e6,
				topo.Switches[ctrl.Current()], strings.Join(events, "; "))
			if time.Now().After(end) {
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "\nsummary\t")
				fmt.Fprintf(tw, "policy\t%s\n", polName)
				fmt.Fprintf(tw, "f_p before congestion (mean)\t%.2f Mbit/s\n", mean(pre))
				fmt.Fprintf(tw, "f_p after congestion starts (mean)\t%.2f Mbit/s\n", mean(post))
				fmt.Fprintf(tw, "f_p last 10 s (mean)\t%.2f Mbit/s\n", mean(post[max(0, len(post)-10):]))
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
// fabric's bucketed uplinks.
func overflowTelemetry(ctx context.Context, f *fabric.Fabric, srv *openflow.Server, topo proflow.Topology) (proflow.Telemetry, error) {
	tln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var devs []string
	var srcs []tcstat.Source
	for _, d := range f.UplinkDevs() {
		devs = append(devs, d...)
		srcs = append(srcs, tcstat.Source{Agent: "http://" + tln.Addr().String(), Interfaces: d})
	}
	agent, err := tcstat.NewAgent(tcstat.AgentConfig{Interfaces: devs})
	if err != nil {
		return nil, err
	}
	go func() { _ = tcstat.Serve(ctx, tln, agent) }()
	client, err := tcstat.NewClient(tcstat.ClientConfig{Topology: topo, Switches: srcs})
	if err != nil {
		return nil, err
	}
	return telemetry.Merge(srv, client)
}

func parseRate(s string) (float64, error) {
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

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
