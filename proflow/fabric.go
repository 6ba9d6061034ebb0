package main

import (
	"context"
	"flag"
	"fmt"
	"slices"

	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
)

func fabricCommand() command {
	return command{
		name:    "fabric",
		summary: "build, run or remove the Open vSwitch leaf/aggregation fabric (root; up|down|run)",
		run:     runFabric,
	}
}

// fabricSub is one of fabric's sub-commands and what it does.
type fabricSub struct{ name, summary string }

// fabricSubs are fabric's sub-commands, in the order fabric -h lists them.
var fabricSubs = []fabricSub{
	{"up", "build the fabric and wait; Ctrl-C tears it down"},
	{"down", "remove what a fabric left behind: namespaces, links, bridges, OVS daemons, the run directory"},
	{"run", "build the fabric, run the experiment, print its report and tear the fabric down"},
}

func runFabric(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && isHelpFlag(args[0]) {
		fmt.Fprint(e.stderr, "Usage: proflow fabric up|down|run [flags] (as root)\n\n")
		for _, s := range fabricSubs {
			fs, _ := fabricFlags(e, s.name, s.summary)
			fs.Usage()
			fmt.Fprintln(e.stderr)
		}
		return flag.ErrHelp
	}
	i := slices.IndexFunc(fabricSubs, func(s fabricSub) bool { return len(args) > 0 && s.name == args[0] })
	if i < 0 {
		got := "none"
		if len(args) > 0 {
			got = fmt.Sprintf("%q", args[0])
		}
		return fmt.Errorf("fabric: sub-command %s, want up, down or run (proflow fabric -h for their flags): %w", got, errUsage)
	}
	sub := args[0]
	fs, flags := fabricFlags(e, sub, fabricSubs[i].summary)
	if err := parseFlags(fs, "fabric "+sub, args[1:]); err != nil {
		return err
	}
	fcfg := flags.Config(e.stderr)
	switch sub {
	case "down":
		if err := ovsfabric.Down(ctx, fcfg); err != nil {
			return fmt.Errorf("fabric down: %w", err)
		}
		return nil
	case "up":
		f, err := ovsfabric.Up(ctx, fcfg)
		if err != nil {
			return fmt.Errorf("fabric up: %w", err)
		}
		fmt.Fprintf(e.stdout, "fabric up (controller expected at %s); Ctrl-C tears it down (a second Ctrl-C kills proflow at once; then run proflow fabric down)\n", flags.Listen)
		<-ctx.Done()
		if err := f.Down(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("fabric up: tear down: %w", err)
		}
		return nil
	}
	x, err := flags.Experiment(fcfg, e.stdout)
	if err != nil {
		return fmt.Errorf("fabric run: %w: %w", err, errUsage)
	}
	if err := x.Run(ctx); err != nil {
		return fmt.Errorf("fabric run: %w", err)
	}
	return nil
}

// fabricFlags returns the flag set of fabric's sub-command sub, holding only
// the flags sub takes, and the settings it fills.
func fabricFlags(e *env, sub, summary string) (*flag.FlagSet, *ovsfabric.CommandFlags) {
	fs := e.newFlags("fabric "+sub, "fabric "+sub+" [flags]\n\n"+summary)
	flags := new(ovsfabric.CommandFlags)
	flags.Register(fs, sub)
	return fs, flags
}
