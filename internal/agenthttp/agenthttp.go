// Package agenthttp holds what proflow's telemetry agents (tcstat,
// hostagent) and their clients share on the HTTP side: the bearer-token
// check and the answers to requests an agent does not serve, a response
// writer that remembers its status code, the agent's own metrics, a
// server that runs until its context ends, and the client's GET.
package agenthttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow/internal/jsonend"
	"github.com/proflow-sdn/proflow/internal/promreg"
)

// Bearer checks the bearer token of a request. The zero value accepts
// every request (no token configured).
type Bearer struct {
	set    bool
	digest [sha256.Size]byte
}

// NewBearer returns a check of token; an empty token accepts every request.
func NewBearer(token string) Bearer {
	if token == "" {
		return Bearer{}
	}
	return Bearer{set: true, digest: sha256.Sum256([]byte(token))}
}

// Authorized reports whether req carries the token (or none is
// configured). The scheme is matched without regard to case, as HTTP's
// authentication schemes are (RFC 9110, section 11.1). Digests of equal
// length are compared in constant time, so neither the token nor its
// length leaks through timing.
func (b Bearer) Authorized(req *http.Request) bool {
	if !b.set {
		return true
	}
	scheme, got, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimLeft(got, " ")))
	return subtle.ConstantTimeCompare(sum[:], b.digest[:]) == 1
}

// StatusWriter remembers the status code written, for a request metric.
type StatusWriter struct {
	http.ResponseWriter
	// Code is the status written (200 until WriteHeader is called).
	Code int
}

// NewStatusWriter wraps w.
func NewStatusWriter(w http.ResponseWriter) *StatusWriter {
	return &StatusWriter{ResponseWriter: w, Code: http.StatusOK}
}

// WriteHeader records code and writes it.
func (w *StatusWriter) WriteHeader(code int) {
	w.Code = code
	w.ResponseWriter.WriteHeader(code)
}

// Serve serves h on ln until ctx ends, then shuts the server down and
// returns nil (or the error that stopped it, prefixed with component).
// The server's own errors go to log at warning level.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger, component string) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: serve on %s: %w", component, ln.Addr(), err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-errc
		return nil
	}
}

// Admit answers the requests an agent does not serve and reports whether
// req may go on: 401 with a Bearer challenge in realm without the token,
// 404 for a path not among paths, 405 for a method other than GET or
// HEAD. Messages start with component.
func Admit(w http.ResponseWriter, req *http.Request, b Bearer, component string, paths ...string) bool {
	if !b.Authorized(req) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+component+`"`)
		http.Error(w, component+": missing or wrong bearer token", http.StatusUnauthorized)
		return false
	}
	if !slices.Contains(paths, req.URL.Path) {
		http.NotFound(w, req)
		return false
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, component+": method "+req.Method+" not allowed, want GET", http.StatusMethodNotAllowed)
		return false
	}
	return true
}

// Get sends GET url with accept and, when token is not empty, the bearer
// token, and returns the body of a 200 answer of at most maxBytes. Any
// other status is an error quoting the start of the body.
func Get(ctx context.Context, c *http.Client, url, accept, token string, maxBytes int64) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", accept)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(body[:min(len(body), 200)]))
	}
	if int64(len(body)) > maxBytes {
		return nil, nil, fmt.Errorf("answer exceeds %d bytes", maxBytes)
	}
	return body, resp.Header, nil
}

// Metrics are an agent's own collectors: polls by result, the duration
// of the successful ones, and HTTP requests by status code. A nil
// *Metrics records nothing.
type Metrics struct {
	polls    *prometheus.CounterVec
	pollDur  prometheus.Histogram
	requests *prometheus.CounterVec
	timed    []string
	all      []prometheus.Collector
}

// MetricsOpts names an agent's metrics: proflow_SUBSYSTEM_polls_total,
// _poll_duration_seconds and _http_requests_total.
type MetricsOpts struct {
	Subsystem string
	// PollHelp and DurationHelp are the help of the poll series.
	PollHelp, DurationHelp string
	// Results are the poll results every series starts with at 0; Timed
	// those whose duration is observed.
	Results, Timed []string
	// Buckets of the duration histogram.
	Buckets []float64
}

// requestCodes are the status codes every request series starts with.
var requestCodes = []int{http.StatusOK, http.StatusUnauthorized, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusInternalServerError}

// NewMetrics registers an agent's metrics on reg; nil reg registers none
// and returns a nil *Metrics.
func NewMetrics(reg prometheus.Registerer, o MetricsOpts) (*Metrics, error) {
	if reg == nil {
		return nil, nil
	}
	const ns = "proflow"
	m := &Metrics{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: o.Subsystem, Name: "polls_total", Help: o.PollHelp}, []string{"result"}),
		pollDur: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: o.Subsystem, Name: "poll_duration_seconds",
			Help: o.DurationHelp, Buckets: o.Buckets}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: o.Subsystem, Name: "http_requests_total",
			Help: "HTTP requests answered, by status code (401: missing or wrong bearer token)."}, []string{"code"}),
		timed: o.Timed,
	}
	for _, r := range o.Results {
		m.polls.WithLabelValues(r)
	}
	for _, c := range requestCodes {
		m.requests.WithLabelValues(strconv.Itoa(c))
	}
	m.all = []prometheus.Collector{m.polls, m.pollDur, m.requests}
	if err := promreg.RegisterAll(reg, m.all...); err != nil {
		return nil, err
	}
	return m, nil
}

// Poll counts a poll with result that took d.
func (m *Metrics) Poll(result string, d time.Duration) {
	if m == nil {
		return
	}
	m.polls.WithLabelValues(result).Inc()
	if slices.Contains(m.timed, result) {
		m.pollDur.Observe(d.Seconds())
	}
}

// Request counts an answer with status code.
func (m *Metrics) Request(code int) {
	if m != nil {
		m.requests.WithLabelValues(strconv.Itoa(code)).Inc()
	}
}

// Unregister removes the metrics from reg.
func (m *Metrics) Unregister(reg prometheus.Registerer) {
	if m != nil {
		promreg.UnregisterAll(reg, m.all...)
	}
}

// DecodeStrict decodes one JSON value of b into v: unknown fields and
// data after the value are errors.
func DecodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if jsonend.End(dec) != nil {
		return errors.New("data after the JSON object")
	}
	return nil
}
