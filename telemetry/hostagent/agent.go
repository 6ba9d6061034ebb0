package hostagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/agenthttp"
)

// Agent polls one socket's TCP_INFO and serves it over HTTP. Create it
// with New, run its poll loop with Run, serve it with Serve, and Close it
// when done.
type Agent struct {
	cfg    Config
	token  agenthttp.Bearer
	m      *agenthttp.Metrics
	closer func() error // the netlink reader's, nil for a custom Read

	mu      sync.Mutex
	window  []sample // polls that found the socket, oldest first, within cfg.Window
	latest  TCPInfo
	found   bool
	scratch []float64
}

// New checks cfg (zero durations take DefaultConfig's values) and opens
// the netlink reader in cfg.NetNS: a namespace that does not exist is an
// error. The socket itself need not exist yet.
func New(cfg Config) (*Agent, error) {
	d := DefaultConfig()
	if cfg.PollInterval == 0 {
		cfg.PollInterval = d.PollInterval
	}
	if cfg.Window == 0 {
		cfg.Window = d.Window
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = d.Timeout
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Agent{cfg: cfg, token: agenthttp.NewBearer(cfg.Token)}
	if cfg.Read == nil {
		r, err := newNetlinkReader(cfg.NetNS)
		if err != nil {
			return nil, fmt.Errorf("hostagent: %w", err)
		}
		a.cfg.Read = func(ctx context.Context, _ proflow.FlowID) (TCPInfo, error) {
			return r.read(ctx, cfg.Flow, cfg.Timeout)
		}
		a.closer = r.Close
	}
	m, err := agenthttp.NewMetrics(cfg.Registerer, agenthttp.MetricsOpts{Subsystem: "hostagent",
		PollHelp:     "Reads of the socket's TCP_INFO, by result (ok, missing: no such socket, error).",
		DurationHelp: "Time one inet_diag read took.",
		Results:      []string{"ok", "missing", "error"}, Timed: []string{"ok", "missing"}, Buckets: prometheus.ExponentialBuckets(10e-6, 2, 16)})
	if err != nil {
		if a.closer != nil {
			_ = a.closer()
		}
		return nil, fmt.Errorf("hostagent: metrics: %w", err)
	}
	a.m = m
	return a, nil
}

// Close releases the netlink sockets and unregisters the agent's metrics.
// Run and the handlers must have returned.
func (a *Agent) Close() error {
	a.m.Unregister(a.cfg.Registerer)
	if a.closer != nil {
		return a.closer()
	}
	return nil
}

// Run polls the socket every Config.PollInterval until ctx ends, then
// returns nil. A read error is logged and counted, never fatal: the
// socket may come and go.
func (a *Agent) Run(ctx context.Context) error {
	t := time.NewTicker(a.cfg.PollInterval)
	defer t.Stop()
	for {
		if err := a.Poll(ctx); err != nil && ctx.Err() == nil {
			a.cfg.Logger.WarnContext(ctx, "hostagent: poll", "flow", a.cfg.Flow.String(), "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Poll reads the socket once and adds the read to the window. A socket
// that does not exist is not an error: the report then says not found.
func (a *Agent) Poll(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	start := time.Now()
	info, err := a.cfg.Read(rctx, a.cfg.Flow)
	cancel()
	now := a.cfg.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.prune(now)
	switch {
	case errors.Is(err, ErrNoSocket):
		a.m.Poll("missing", time.Since(start))
		a.found, a.latest = false, TCPInfo{}
		return nil
	case err != nil:
		a.m.Poll("error", 0)
		a.found, a.latest = false, TCPInfo{}
		return fmt.Errorf("hostagent: read %v: %w", a.cfg.Flow, err)
	}
	a.m.Poll("ok", time.Since(start))
	s := sample{at: now, srtt: info.SRTT, acked: info.BytesAcked, appLimited: info.DeliveryRateAppLimited || info.Unacked == 0}
	// A poll holds a fresh RTT sample when new data was acknowledged
	// since the previous poll of the same connection (an ACK of new data
	// is what updates srtt); the first poll has nothing to compare with.
	if n := len(a.window); n > 0 && a.found {
		s.fresh = info.BytesAcked > a.window[n-1].acked
	}
	a.window = append(a.window, s)
	a.found, a.latest = true, info
	return nil
}

// prune drops the polls older than the window ending at now.
func (a *Agent) prune(now time.Time) {
	i := 0
	for i < len(a.window) && now.Sub(a.window[i].at) >= a.cfg.Window {
		i++
	}
	if i > 0 {
		a.window = append(a.window[:0], a.window[i:]...)
	}
}

// Report summarises the window ending now (Config.Now).
func (a *Agent) Report() Report {
	now := a.cfg.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.prune(now)
	r := Report{Time: now, Flow: a.cfg.Flow, Window: a.cfg.Window.Seconds(), Found: a.found, Info: a.latest}
	a.scratch = summarise(&r, a.window, a.scratch)
	return r
}

// internalError is all a client learns of a failure on the agent's side;
// the error itself goes to Config.Logger.
const internalError = "hostagent: internal error; the agent's log has the details"

// ServeHTTP answers
//
//	GET /v1/flow   a Report (JSON)
//	GET /metrics   the socket's TCP_INFO in Prometheus text format
//
// With Config.Token set, a request without the bearer token gets 401.
func (a *Agent) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	sw := agenthttp.NewStatusWriter(w)
	defer func() { a.m.Request(sw.Code) }()
	if !agenthttp.Admit(sw, req, a.token, "hostagent", "/v1/flow", "/metrics") {
		return
	}
	rep := a.Report()
	if req.URL.Path == "/metrics" {
		a.serveMetrics(sw, req, rep)
		return
	}
	sw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(sw).Encode(rep)
}

// Serve serves a on ln until ctx ends, then shuts the server down and
// returns nil (or the error that stopped it). It does not poll: run
// Agent.Run beside it. For TLS, pass a listener from tls.NewListener
// (tcstat.ServerTLSConfig makes the settings).
func Serve(ctx context.Context, ln net.Listener, a *Agent) error {
	return agenthttp.Serve(ctx, ln, a, a.cfg.Logger, "hostagent")
}
