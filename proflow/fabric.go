package main

import (
	"context"
	"fmt"

	"github.com/proflow-sdn/proflow/examples/ovsfabric/fabric"
)

func fabricCommand() command {
	return command{
		name:    "fabric",
		summary: "build, run or remove the Open vSwitch leaf/aggregation fabric (root; up|down|run)",
		run:     runFabric,
	}
}

func runFabric(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "up" && args[0] != "down" && args[0] != "run") {
		return fmt.Errorf("fabric: want a sub-command up, down or run (proflow fabric run -h for flags): %w", errUsage)
	}
	sub := args[0]
	fs := e.newFlags("fabric "+sub, "fabric "+sub+" [flags]")
	var flags fabric.CommandFlags
	flags.Register(fs)
	if err := parseFlags(fs, "fabric "+sub, args[1:]); err != nil {
		return err
	}
	fcfg := flags.Config(e.stderr)
	switch sub {
	case "down":
		if err := fabric.Down(ctx, fcfg); err != nil {
			return fmt.Errorf("fabric down: %w", err)
		}
		return nil
	case "up":
		f, err := fabric.Up(ctx, fcfg)
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
	err := flags.Experiment(fcfg, e.stdout).Run(ctx)
	if err != nil {
		return fmt.Errorf("fabric run: %w", err)
	}
	return nil
}
