package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

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
	prefix := fs.String("prefix", "pf-", "prefix of every namespace, link and bridge")
	runDir := fs.String("rundir", "/tmp/proflow-ovs", "OVS run directory")
	listen := fs.String("listen", "127.0.0.1:6653", "OpenFlow controller address")
	rate := fs.String("bucket", "10mbit", "tc tbf rate of every aggregation uplink (the paper: 200mbit; scaled down for 2 cores)")
	pol := fs.String("policy", "crowd", "run: static, crowd or reactive")
	scenario := fs.String("scenario", "s1", "run: s1 (five congesters onto the protected flow's switch) or none")
	warm := fs.Duration("warmup", 10*time.Second, "run: protected flow alone before congestion")
	dur := fs.Duration("duration", 40*time.Second, "run: time after congestion starts")
	verbose := fs.Bool("v", false, "log controller decisions and fabric commands")
	if err := parseFlags(fs, "fabric "+sub, args[1:]); err != nil {
		return err
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	fcfg := fabric.Config{Prefix: *prefix, RunDir: *runDir, Controller: "tcp:" + *listen, BucketRate: *rate, Logger: log}
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
		fmt.Fprintf(e.stdout, "fabric up (controller expected at %s); Ctrl-C tears it down (a second Ctrl-C kills proflow at once; then run proflow fabric down)\n", *listen)
		<-ctx.Done()
		if err := f.Down(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("fabric up: tear down: %w", err)
		}
		return nil
	}
	err := fabric.Experiment{Fabric: fcfg, Listen: *listen, Policy: *pol, Scenario: *scenario,
		Warmup: *warm, Duration: *dur, Out: e.stdout, Logger: log}.Run(ctx)
	if err != nil {
		return fmt.Errorf("fabric run: %w", err)
	}
	return nil
}
