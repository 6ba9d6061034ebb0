package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry/hostagent"
)

// hostagentTokenEnv names the environment variable that may hold the host
// agent's bearer token.
const hostagentTokenEnv = "PROFLOW_HOSTAGENT_TOKEN"

func hostagentCommand() command {
	return command{
		name:    "hostagent",
		summary: "serve a TCP socket's TCP_INFO (srtt, its window p99, cwnd, retransmits) as JSON and Prometheus metrics over HTTP",
		run:     runHostAgent,
	}
}

func runHostAgent(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("hostagent", "hostagent -flow 'tcp SRC:PORT->DST:PORT' [-netns FILE] [-listen "+hostagent.DefaultListen+"] [-token-file FILE] [-tls-cert FILE -tls-key FILE [-tls-client-ca FILE]]\n\n"+
		"Reads the TCP_INFO of the flow's sending socket (local SRC:PORT, remote DST:PORT; port 0: any) over inet_diag\n"+
		"every -poll and serves GET /v1/flow (JSON: the latest TCP_INFO, srtt and the p50/p99 of the srtt polled\n"+
		"over the last -window, and the share of its polls with the sender application-limited) and GET /metrics\n"+
		"(proflow_tcp_* in the Prometheus text format).\n"+
		"Loopback only by default. The bearer token comes from -token-file or the environment variable "+hostagentTokenEnv+".")
	serving := e.addAgentFlags(fs, "hostagent", hostagent.DefaultListen, hostagentTokenEnv)
	flowText := fs.String("flow", "", "the flow as its sender sees it, e.g. 'tcp 10.0.0.1:40000->10.0.0.8:5201' (required)")
	netns := fs.String("netns", "", "network namespace file the sender's socket lives in, e.g. /run/netns/pf-h1 (default: this one)")
	poll := fs.Duration("poll", hostagent.DefaultPollInterval, "how often the socket's TCP_INFO is read")
	window := fs.Duration("window", hostagent.DefaultWindow, "the interval a report's RTT percentiles cover")
	timeout := fs.Duration("timeout", hostagent.DefaultReadTimeout, "bound on one read")
	if err := parseFlags(fs, "hostagent", args); err != nil {
		return err
	}
	if *flowText == "" {
		return fmt.Errorf("hostagent: no -flow, want one such as 'tcp 10.0.0.1:40000->10.0.0.8:5201': %w", errUsage)
	}
	flow, err := proflow.ParseFlowID(*flowText)
	if err != nil {
		return badFlag("hostagent", "flow", fmt.Sprintf("%q", *flowText), "'tcp SRC:PORT->DST:PORT' ("+err.Error()+")")
	}
	if err := serving.check(hostagent.DefaultListen); err != nil {
		return err
	}
	cfg := hostagent.DefaultConfig()
	cfg.Flow, cfg.NetNS, cfg.PollInterval, cfg.Window, cfg.Timeout = flow, *netns, *poll, *window, *timeout
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", err, errUsage)
	}
	token, err := serving.token()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg.Token, cfg.Logger, cfg.Registerer, cfg.Gatherer = token, log, reg, reg
	agent, err := hostagent.New(cfg)
	if err != nil {
		return err
	}
	defer agent.Close()
	ln, scheme, err := serving.listenTLS(ctx, token, log)
	if err != nil {
		return err
	}
	// One read before the address is announced, so that the first request
	// sees the socket as it is, not a window no poll has filled yet.
	if err := agent.Poll(ctx); err != nil {
		log.WarnContext(ctx, "hostagent: poll", "flow", flow.String(), "err", err)
	}
	fmt.Fprintf(e.stderr, "hostagent: reading %v every %v, serving on %s://%s/v1/flow and /metrics (token: %v, client certificates: %v)\n",
		flow, *poll, scheme, ln.Addr(), token != "", *serving.caFile != "")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	polled := make(chan error, 1)
	go func() { polled <- agent.Run(ctx) }()
	err = hostagent.Serve(ctx, ln, agent)
	cancel()
	return errors.Join(err, <-polled)
}
