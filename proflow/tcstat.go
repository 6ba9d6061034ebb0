package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

func tcstatCommand() command {
	return command{
		name:    "tcstat",
		summary: "serve tc qdisc counters (bytes, overlimits, drops, backlog) as JSON over HTTP",
		run:     runTCStat,
	}
}

func runTCStat(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("tcstat", "tcstat -interfaces eth1,eth2 [-listen :9101]")
	listen := fs.String("listen", ":9101", "address to serve GET /v1/qdisc on")
	ifaces := fs.String("interfaces", "", "comma-separated interfaces whose root qdisc is reported (required)")
	tc := fs.String("tc", "tc", "tc binary")
	timeout := fs.Duration("timeout", 2*time.Second, "bound on one tc run")
	if err := parseFlags(fs, "tcstat", args); err != nil {
		return err
	}
	var devs []string
	for _, d := range strings.Split(*ifaces, ",") {
		if d = strings.TrimSpace(d); d != "" {
			devs = append(devs, d)
		}
	}
	agent, err := tcstat.NewAgent(tcstat.AgentConfig{Interfaces: devs, TC: *tc, Timeout: *timeout})
	if err != nil {
		return fmt.Errorf("tcstat: %w", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("tcstat: -listen: %w", err)
	}
	fmt.Fprintf(e.stderr, "tcstat: serving %s on http://%s/v1/qdisc\n", strings.Join(devs, ","), ln.Addr())
	if err := tcstat.Serve(ctx, ln, agent); err != nil {
		return fmt.Errorf("tcstat: serve on %s: %w", ln.Addr(), err)
	}
	return nil
}
