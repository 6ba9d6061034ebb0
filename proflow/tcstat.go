package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

// tcstatTokenEnv names the environment variable that may hold the agent's
// bearer token (a flag's value would show in ps).
const tcstatTokenEnv = "PROFLOW_TCSTAT_TOKEN"

func tcstatCommand() command {
	return command{
		name:    "tcstat",
		summary: "serve tc qdisc counters (bytes, overlimits, drops, backlog) as JSON and Prometheus metrics over HTTP",
		run:     runTCStat,
	}
}

func runTCStat(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("tcstat", "tcstat -interfaces eth1,eth2 [-listen "+tcstat.DefaultListen+"] [-token-file FILE] [-tls-cert FILE -tls-key FILE [-tls-client-ca FILE]]\n\n"+
		"Serves GET /v1/qdisc (JSON) and GET /metrics (node_qdisc_* in the Prometheus text format).\n"+
		"Loopback only by default. The bearer token comes from -token-file or the environment variable "+tcstatTokenEnv+".")
	serving := e.addAgentFlags(fs, "tcstat", tcstat.DefaultListen, tcstatTokenEnv)
	ifaces := fs.String("interfaces", "", "comma-separated interfaces whose root qdisc is reported (required; each must exist)")
	netns := fs.String("netns", "", "network namespace file the interfaces live in, e.g. /run/netns/fabric (default: this one)")
	timeout := fs.Duration("timeout", tcstat.DefaultReadTimeout, "bound on one read of the counters")
	cacheFor := fs.Duration("cache", tcstat.DefaultCacheFor, "how long one read answers every request")
	if err := parseFlags(fs, "tcstat", args); err != nil {
		return err
	}
	var devs []string
	for _, d := range strings.Split(*ifaces, ",") {
		if d = strings.TrimSpace(d); d != "" {
			devs = append(devs, d)
		}
	}
	if len(devs) == 0 {
		return fmt.Errorf("tcstat: no interfaces in -interfaces %q, want at least one name: %w", *ifaces, errUsage)
	}
	if err := serving.check(tcstat.DefaultListen); err != nil {
		return err
	}
	if *cacheFor < 0 {
		return badFlag("tcstat", "cache", *cacheFor, "0 (no cache) or more")
	}
	if *timeout <= 0 {
		return badFlag("tcstat", "timeout", *timeout, "a positive duration")
	}
	token, err := serving.token()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.stderr, nil))
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cache := *cacheFor
	if cache == 0 {
		cache = -1 // the flag's 0 means no cache; the config's 0 means the default
	}
	agent, err := tcstat.NewAgent(ctx, tcstat.AgentConfig{Interfaces: devs, NetNS: *netns, Timeout: *timeout, CacheFor: cache,
		Token: token, Logger: log, Registerer: reg, Gatherer: reg})
	if err != nil {
		return err
	}
	ln, scheme, err := serving.listenTLS(ctx, token, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "tcstat: serving %s on %s://%s/v1/qdisc and /metrics (token: %v, client certificates: %v)\n",
		strings.Join(devs, ","), scheme, ln.Addr(), token != "", *serving.caFile != "")
	return tcstat.Serve(ctx, ln, agent)
}

// tcstatToken reads the bearer token from file (surrounding white space
// trimmed) or, without a file, from the environment; "" means none.
func tcstatToken(file string) (string, error) { return agentToken("tcstat", tcstatTokenEnv, file) }
