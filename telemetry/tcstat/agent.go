package tcstat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"time"
)

// Report is the JSON an Agent serves.
type Report struct {
	// Time is when the agent read the counters.
	Time time.Time `json:"time"`
	// Interfaces holds the root qdisc counters per interface name.
	Interfaces map[string]Qdisc `json:"interfaces"`
}

// ReadFunc returns the output of `tc -s -j qdisc show` (every device).
type ReadFunc func(ctx context.Context) ([]byte, error)

// AgentConfig holds the settings of an Agent.
type AgentConfig struct {
	// Interfaces are the devices the agent reports (required).
	Interfaces []string
	// TC is the tc binary (default "tc", looked up in PATH).
	TC string
	// Timeout bounds one tc invocation (default 2 s).
	Timeout time.Duration
	// Read replaces running tc (tests, or another source of counters).
	Read ReadFunc
	// Now stamps reports (default time.Now).
	Now func() time.Time
}

var ifaceName = regexp.MustCompile(`^[A-Za-z0-9_.:@-]{1,15}$`)

// Agent serves tc qdisc counters over HTTP. Create it with NewAgent.
type Agent struct {
	cfg AgentConfig
}

// NewAgent checks cfg and returns an agent.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	if len(cfg.Interfaces) == 0 {
		return nil, errors.New("tcstat: agent: no interfaces, want at least one")
	}
	for _, d := range cfg.Interfaces {
		if !ifaceName.MatchString(d) {
			return nil, fmt.Errorf("tcstat: agent: interface name %q, want 1-15 characters of [A-Za-z0-9_.:@-]", d)
		}
	}
	if cfg.TC == "" {
		cfg.TC = "tc"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Interfaces = slices.Clone(cfg.Interfaces)
	a := &Agent{cfg: cfg}
	if cfg.Read == nil {
		a.cfg.Read = a.runTC
	}
	return a, nil
}

// runTC lists every device's qdiscs in one tc run (one process per
// request, whatever the number of interfaces).
func (a *Agent) runTC(ctx context.Context) ([]byte, error) {
	out, err := exec.CommandContext(ctx, a.cfg.TC, "-s", "-j", "qdisc", "show").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return nil, fmt.Errorf("%s: %w: %s", a.cfg.TC, err, ee.Stderr)
		}
		return nil, fmt.Errorf("%s: %w", a.cfg.TC, err)
	}
	return out, nil
}

// Read reads the counters of the given interfaces (every configured one
// when devs is empty). An interface that is not configured is an error.
func (a *Agent) Read(ctx context.Context, devs ...string) (Report, error) {
	if len(devs) == 0 {
		devs = a.cfg.Interfaces
	}
	for _, d := range devs {
		if !slices.Contains(a.cfg.Interfaces, d) {
			return Report{}, fmt.Errorf("tcstat: interface %q is not served, want one of %v", d, a.cfg.Interfaces)
		}
	}
	tctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	out, err := a.cfg.Read(tctx)
	cancel()
	if err != nil {
		return Report{}, fmt.Errorf("tcstat: read qdiscs: %w", err)
	}
	all, err := ParseTCAll(out)
	if err != nil {
		return Report{}, fmt.Errorf("tcstat: read qdiscs: %w", err)
	}
	r := Report{Interfaces: make(map[string]Qdisc, len(devs))}
	for _, d := range devs {
		q, ok := all[d]
		if !ok {
			return Report{}, fmt.Errorf("tcstat: read qdiscs: no root qdisc on interface %q (device missing?)", d)
		}
		r.Interfaces[d] = q
	}
	r.Time = a.cfg.Now()
	return r, nil
}

// ServeHTTP answers GET /v1/qdisc[?dev=IFACE] with a Report.
func (a *Agent) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/qdisc" {
		http.NotFound(w, req)
		return
	}
	if req.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "tcstat: method "+req.Method+" not allowed, want GET", http.StatusMethodNotAllowed)
		return
	}
	devs := req.URL.Query()["dev"]
	for _, d := range devs {
		if !slices.Contains(a.cfg.Interfaces, d) {
			http.Error(w, fmt.Sprintf("tcstat: interface %q is not served, want one of %v", d, a.cfg.Interfaces), http.StatusNotFound)
			return
		}
	}
	rep, err := a.Read(req.Context(), devs...)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(rep)
}

// Serve serves a on ln until ctx ends, then shuts the server down and
// returns nil (or the error that stopped it).
func Serve(ctx context.Context, ln net.Listener, a *Agent) error {
	srv := &http.Server{Handler: a, ReadHeaderTimeout: 5 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("tcstat: serve: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-errc
		return nil
	}
}
