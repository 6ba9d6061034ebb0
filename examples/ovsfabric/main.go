// Command ovsfabric runs ProFlow against a real Open vSwitch fabric on one
// Linux machine: the paper's four aggregation switches, four leaves and
// eight hosts (network namespaces), OVS userspace bridges speaking OpenFlow
// 1.3 to the controller in this process, tc token buckets on every
// aggregation uplink, real TCP traffic.
//
//	sudo ovsfabric run -policy crowd -scenario S1   # build, run, print, tear down
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
	"os"
	"os/signal"
	"syscall"

	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
)

func main() {
	ovsfabric.MaybeRunTraffic() // the traffic generator re-executes this binary
	if len(os.Args) < 2 || (os.Args[1] != "up" && os.Args[1] != "down" && os.Args[1] != "run") {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	var flags ovsfabric.CommandFlags
	flags.Register(fs, os.Args[1])
	_ = fs.Parse(os.Args[2:])

	// Ctrl-C or SIGTERM cancels ctx, and every way out below tears the
	// fabric down; after the first signal a second one kills at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	// A closed stdout (ovsfabric run | head) must fail the write, which
	// stops the episode and tears down, not kill the process with SIGPIPE
	// half-way (os/signal: SIGPIPE).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	fcfg := flags.Config(os.Stderr)

	var err error
	switch os.Args[1] {
	case "down":
		err = ovsfabric.Down(ctx, fcfg)
	case "up":
		var f *ovsfabric.Fabric
		if f, err = ovsfabric.Up(ctx, fcfg); err == nil {
			fmt.Printf("fabric up (controller expected at %s); Ctrl-C tears it down\n", flags.Listen)
			<-ctx.Done()
			tctx, cancel := ovsfabric.TeardownContext(ctx)
			err = f.Down(tctx)
			cancel()
		}
	case "run":
		var x ovsfabric.Experiment
		if x, err = flags.Experiment(fcfg, os.Stdout); err == nil {
			_, err = x.Run(ctx)
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "ovsfabric:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ovsfabric run|up|down [flags]   (ovsfabric run|up|down -h for each one's flags)")
	os.Exit(2)
}
