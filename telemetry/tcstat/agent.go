package tcstat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow/internal/agenthttp"
)

// Report is the JSON an Agent serves.
type Report struct {
	// Time is when the agent read the counters.
	Time time.Time `json:"time"`
	// Interfaces holds the root qdisc counters per interface name.
	Interfaces map[string]Qdisc `json:"interfaces"`
}

// ReadFunc returns the root qdisc counters of the named devices. A device
// it cannot find is an error naming it.
type ReadFunc func(ctx context.Context, devs []string) (map[string]Qdisc, error)

// Defaults of AgentConfig.
const (
	// DefaultListen is the address the proflow tcstat command serves on:
	// loopback only.
	DefaultListen = "127.0.0.1:9101"
	// DefaultReadTimeout bounds one read of the counters.
	DefaultReadTimeout = 2 * time.Second
	// DefaultCacheFor is how long one read answers every request.
	DefaultCacheFor = 100 * time.Millisecond
)

// AgentConfig holds the settings of an Agent.
type AgentConfig struct {
	// Interfaces are the devices the agent reports (required). Each must
	// exist when the agent starts.
	Interfaces []string
	// NetNS is the path of the network namespace the interfaces live in,
	// for example /run/netns/fabric (default: the agent's own). It applies
	// to the netlink reader only, not to Read.
	NetNS string
	// Timeout bounds one read of the counters (default 2 s).
	Timeout time.Duration
	// CacheFor is how long one read answers every request (default 100 ms;
	// negative: every request reads). Reads are never concurrent: requests
	// that arrive during a read wait for it and share its result.
	CacheFor time.Duration
	// Token, when not empty, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN); requests without it get 401. It is
	// compared in constant time.
	Token string
	// Read replaces the netlink reader (tests, or another source of
	// counters).
	Read ReadFunc
	// Now stamps reports and times the cache (default time.Now).
	Now func() time.Time
	// Logger receives the errors behind the agent's 5xx answers, which
	// clients see only as a generic message (default: discard).
	Logger *slog.Logger
	// Registerer, when set, receives the agent's own metrics
	// (proflow_tcstat_*); nil registers none.
	Registerer prometheus.Registerer
	// Gatherer, when set, is served at /metrics after the qdisc counters
	// (for example the registry given as Registerer).
	Gatherer prometheus.Gatherer
}

var ifaceName = regexp.MustCompile(`^[A-Za-z0-9_.:@-]{1,15}$`)

// Agent serves tc qdisc counters over HTTP. Create it with NewAgent.
type Agent struct {
	cfg   AgentConfig
	token agenthttp.Bearer
	m     *agenthttp.Metrics

	sem    chan struct{} // one read at a time; holds last
	last   Report        // the newest read, shared within CacheFor
	lastAt time.Time     // by cfg.Now; zero: none
}

// NewAgent checks cfg, reads the counters once and returns an agent. An
// interface that does not exist or has no root qdisc is an error naming it.
func NewAgent(ctx context.Context, cfg AgentConfig) (*Agent, error) {
	if len(cfg.Interfaces) == 0 {
		return nil, errors.New("tcstat: agent: no interfaces, want at least one")
	}
	for _, d := range cfg.Interfaces {
		if !ifaceName.MatchString(d) {
			return nil, fmt.Errorf("tcstat: agent: interface name %q, want 1-15 characters of [A-Za-z0-9_.:@-]", d)
		}
	}
	if cfg.NetNS != "" && cfg.Read != nil {
		return nil, fmt.Errorf("tcstat: agent: network namespace %q is set with a custom Read, want one or the other", cfg.NetNS)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultReadTimeout
	}
	if cfg.CacheFor == 0 {
		cfg.CacheFor = DefaultCacheFor
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Interfaces = slices.Clone(cfg.Interfaces)
	if cfg.Read == nil {
		cfg.Read = netlinkReader(cfg.NetNS, cfg.Timeout)
	}
	a := &Agent{cfg: cfg, sem: make(chan struct{}, 1)}
	a.token = agenthttp.NewBearer(cfg.Token)
	m, err := agenthttp.NewMetrics(cfg.Registerer, agenthttp.MetricsOpts{Subsystem: "tcstat",
		PollHelp:     "Reads of the qdisc counters, by result (ok, error, joined: a recent read was reused).",
		DurationHelp: "Time one read of every served interface's qdisc counters took.",
		Results:      []string{"ok", "error", "joined"}, Timed: []string{"ok"}, Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16)})
	if err != nil {
		return nil, fmt.Errorf("tcstat: agent: metrics: %w", err)
	}
	a.m = m
	if _, err := a.snapshot(ctx); err != nil {
		a.m.Unregister(cfg.Registerer)
		return nil, fmt.Errorf("tcstat: agent: %w", err)
	}
	return a, nil
}

// Read reads the counters of the given interfaces (every configured one
// when devs is empty). An interface that is not configured is an error.
// A read younger than AgentConfig.CacheFor is reused.
func (a *Agent) Read(ctx context.Context, devs ...string) (Report, error) {
	if len(devs) == 0 {
		devs = a.cfg.Interfaces
	}
	if err := a.served(devs); err != nil {
		return Report{}, err
	}
	all, err := a.snapshot(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("tcstat: %w", err)
	}
	r := Report{Time: all.Time, Interfaces: make(map[string]Qdisc, len(devs))}
	for _, d := range devs {
		r.Interfaces[d] = all.Interfaces[d]
	}
	return r, nil
}

// served returns an error naming the first of devs the agent does not serve.
func (a *Agent) served(devs []string) error {
	for _, d := range devs {
		if !slices.Contains(a.cfg.Interfaces, d) {
			return fmt.Errorf("tcstat: interface %q is not served, want one of %v", d, a.cfg.Interfaces)
		}
	}
	return nil
}

// snapshot returns the counters of every configured interface, from the
// cache when it is fresh. Its errors have no "tcstat:" prefix yet.
func (a *Agent) snapshot(ctx context.Context) (Report, error) {
	select {
	case a.sem <- struct{}{}:
	case <-ctx.Done():
		return Report{}, fmt.Errorf("wait for a read in progress: %w", context.Cause(ctx))
	}
	defer func() { <-a.sem }()
	if !a.lastAt.IsZero() && a.cfg.CacheFor > 0 && a.cfg.Now().Sub(a.lastAt) < a.cfg.CacheFor {
		a.m.Poll("joined", 0)
		return a.last, nil
	}
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	all, err := a.cfg.Read(rctx, a.cfg.Interfaces)
	cancel()
	if err == nil {
		for _, d := range a.cfg.Interfaces {
			if _, ok := all[d]; !ok {
				err = fmt.Errorf("no root qdisc on interface %q", d)
				break
			}
		}
	}
	if err != nil {
		a.m.Poll("error", 0)
		return Report{}, fmt.Errorf("read qdiscs: %w", err)
	}
	a.m.Poll("ok", time.Since(start))
	a.lastAt = a.cfg.Now()
	a.last = Report{Time: a.lastAt, Interfaces: all}
	return a.last, nil
}

// internalError is all a client learns of a failure on the agent's side;
// the error itself goes to AgentConfig.Logger.
const internalError = "tcstat: internal error reading the qdisc counters; the agent's log has the details"

// ServeHTTP answers
//
//	GET /v1/qdisc[?dev=IFACE]  a Report (JSON)
//	GET /metrics               the counters in Prometheus text format
//
// With AgentConfig.Token set, a request without the bearer token gets 401.
func (a *Agent) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	sw := agenthttp.NewStatusWriter(w)
	defer func() { a.m.Request(sw.Code) }()
	if !agenthttp.Admit(sw, req, a.token, "tcstat", "/v1/qdisc", "/metrics") {
		return
	}
	devs := req.URL.Query()["dev"]
	if err := a.served(devs); err != nil {
		http.Error(sw, err.Error(), http.StatusNotFound)
		return
	}
	rep, err := a.Read(req.Context(), devs...)
	if err != nil {
		a.cfg.Logger.ErrorContext(req.Context(), "tcstat: answering with 500", "path", req.URL.Path, "remote", req.RemoteAddr, "err", err)
		http.Error(sw, internalError, http.StatusInternalServerError)
		return
	}
	if req.URL.Path == "/metrics" {
		a.serveMetrics(sw, req, rep)
		return
	}
	sw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(sw).Encode(rep)
}

// authorized reports whether req carries the configured bearer token (or
// none is configured), in constant time (agenthttp.Bearer).
func (a *Agent) authorized(req *http.Request) bool { return a.token.Authorized(req) }

// Serve serves a on ln until ctx ends, then shuts the server down and
// returns nil (or the error that stopped it). For TLS, pass a listener from
// tls.NewListener (see ServerTLSConfig).
func Serve(ctx context.Context, ln net.Listener, a *Agent) error {
	return agenthttp.Serve(ctx, ln, a, a.cfg.Logger, "tcstat")
}
