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
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/proflow-sdn/proflow/examples/ovsfabric/fabric"
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
		err = fabric.Experiment{Fabric: fcfg, Listen: *listen, Policy: *pol, Scenario: *scenario,
			Warmup: *warm, Duration: *dur, Out: os.Stdout, Logger: log}.Run(ctx)
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
