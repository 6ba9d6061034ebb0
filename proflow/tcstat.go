package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

// tcstatTokenEnv names the environment variable that may hold the agent's
// bearer token (a flag's value would show in ps).
const tcstatTokenEnv = "PROFLOW_TCSTAT_TOKEN"

// maxTokenFileBytes bounds -token-file.
const maxTokenFileBytes = 64 << 10

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
	listen := fs.String("listen", tcstat.DefaultListen, "address to serve on (a non-loopback address should have a token or client certificates)")
	ifaces := fs.String("interfaces", "", "comma-separated interfaces whose root qdisc is reported (required; each must exist)")
	netns := fs.String("netns", "", "network namespace file the interfaces live in, e.g. /run/netns/fabric (default: this one)")
	timeout := fs.Duration("timeout", tcstat.DefaultReadTimeout, "bound on one read of the counters")
	cacheFor := fs.Duration("cache", tcstat.DefaultCacheFor, "how long one read answers every request")
	tokenFile := fs.String("token-file", "", "file holding the bearer token every request must carry (or set "+tcstatTokenEnv+")")
	certFile := fs.String("tls-cert", "", "serve HTTPS with this certificate (PEM; needs -tls-key)")
	keyFile := fs.String("tls-key", "", "private key of -tls-cert (PEM)")
	clientCA := fs.String("tls-client-ca", "", "require client certificates signed by a CA in this file (PEM; needs -tls-cert)")
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
	if (*certFile == "") != (*keyFile == "") {
		return badFlag("tcstat", "tls-cert", fmt.Sprintf("%q with -tls-key %q", *certFile, *keyFile), "both or neither")
	}
	if *clientCA != "" && *certFile == "" {
		return badFlag("tcstat", "tls-client-ca", *clientCA, "it only with -tls-cert and -tls-key")
	}
	if *cacheFor < 0 {
		return badFlag("tcstat", "cache", *cacheFor, "0 (no cache) or more")
	}
	if *timeout <= 0 {
		return badFlag("tcstat", "timeout", *timeout, "a positive duration")
	}
	if _, port, err := net.SplitHostPort(*listen); err != nil {
		return badFlag("tcstat", "listen", fmt.Sprintf("%q", *listen), "host:port such as "+tcstat.DefaultListen)
	} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return badFlag("tcstat", "listen", fmt.Sprintf("%q", *listen), "a port number 0…65535")
	}
	token, err := tcstatToken(*tokenFile)
	if err != nil {
		return err
	}
	var tlsCfg *tls.Config
	if *certFile != "" {
		if tlsCfg, err = tcstat.ServerTLSConfig(*certFile, *keyFile, *clientCA); err != nil {
			return err
		}
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
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", *listen)
	if err != nil {
		return fmt.Errorf("tcstat: -listen %s: %w", *listen, err)
	}
	scheme := "http"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(ln, tlsCfg), "https"
	}
	if token == "" && *clientCA == "" && !isLoopback(ln.Addr()) {
		log.Warn("tcstat: serving beyond loopback without a bearer token or client certificates: anyone who reaches the port reads the counters",
			"addr", ln.Addr().String())
	}
	fmt.Fprintf(e.stderr, "tcstat: serving %s on %s://%s/v1/qdisc and /metrics (token: %v, client certificates: %v)\n",
		strings.Join(devs, ","), scheme, ln.Addr(), token != "", *clientCA != "")
	return tcstat.Serve(ctx, ln, agent)
}

// tcstatToken reads the bearer token from file (surrounding white space
// trimmed) or, without a file, from the environment; "" means none.
func tcstatToken(file string) (string, error) {
	env, inEnv := os.LookupEnv(tcstatTokenEnv)
	if file == "" {
		if inEnv && strings.TrimSpace(env) == "" {
			return "", fmt.Errorf("tcstat: %s is set but empty, want a token or the variable unset", tcstatTokenEnv)
		}
		return strings.TrimSpace(env), nil
	}
	if inEnv {
		return "", badFlag("tcstat", "token-file", file, fmt.Sprintf("it or %s, not both", tcstatTokenEnv))
	}
	// A regular file of at most 64 KiB: /dev/zero would be read until
	// memory runs out, a FIFO would block.
	b, err := fileutil.ReadFile(file, maxTokenFileBytes)
	if err != nil {
		return "", fmt.Errorf("tcstat: -token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("tcstat: -token-file %s is empty, want a token", file)
	}
	return token, nil
}

// isLoopback reports whether addr is a TCP address on a loopback IP.
func isLoopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
