package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/proflow-sdn/proflow/internal/serve"
)

func serveCommand() command {
	return command{
		name:    "serve",
		summary: "run the controller as a service from a YAML config: many protected flows, Prometheus /metrics, SIGHUP reloads the flow set",
		run:     runServe,
	}
}

// runServe runs proflow serve: it loads the config (every bad value named
// by its field path), builds the service and runs it until SIGINT or
// SIGTERM, which stop it cleanly (exit 0, during the start too; placements
// are left as they are). SIGHUP re-reads the config file and applies a
// changed flow set; a config that no longer loads is logged by the
// service, counted, and the service keeps running. -check runs the same
// checks as the start (serve.Check) without binding ports or dialling.
func runServe(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("serve", "serve -config FILE [-check]\n\n"+
		"Runs a multi-flow controller from a YAML config (see examples/serve). SIGHUP re-reads FILE and applies a\n"+
		"changed flow set; SIGINT or SIGTERM stop the loop and exit 0, leaving placements as they are.")
	path := fs.String("config", "", "the service's YAML config `FILE` (required)")
	check := fs.Bool("check", false, "only check the config and print it with every default filled in")
	if err := parseFlags(fs, "serve", args); err != nil {
		return err
	}
	if *path == "" {
		return badFlag("serve", "config", `""`, "a YAML config file")
	}
	// Catch SIGHUP before anything else: its default action kills the
	// process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	cfg, err := serve.Load(*path)
	if err != nil {
		return err
	}
	if *check {
		eff, err := serve.Check(ctx, cfg)
		if err != nil {
			return err
		}
		out, err := eff.Effective()
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(out)
		return err
	}
	svc, err := serve.New(ctx, cfg, serve.Options{LogOutput: e.stderr})
	if err != nil {
		if ctx.Err() != nil { // SIGINT or SIGTERM during the start: a clean stop
			fmt.Fprintf(e.stderr, "proflow serve: stopped during the start (%v)\n", context.Cause(ctx))
			return nil
		}
		return err
	}
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	for {
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		case <-hup:
			_ = svc.ReloadFile(ctx, *path) // logged and counted by the service
		}
	}
}
