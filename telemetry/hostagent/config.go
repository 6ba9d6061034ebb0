package hostagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow"
)

// Defaults of Config.
const (
	// DefaultListen is the address the proflow hostagent command serves
	// on: loopback only.
	DefaultListen = "127.0.0.1:9102"
	// DefaultPollInterval is how often the agent reads the socket's
	// TCP_INFO: fifty times per 500 ms control interval.
	DefaultPollInterval = 10 * time.Millisecond
	// DefaultWindow is the interval a report covers, the controller's
	// default control interval.
	DefaultWindow = 500 * time.Millisecond
	// DefaultReadTimeout bounds one read of the socket's TCP_INFO.
	DefaultReadTimeout = time.Second
)

// ErrNoSocket is what a ReadFunc returns, wrapped, when no TCP socket of
// the flow exists: the connection is not open (yet, or any more).
var ErrNoSocket = errors.New("hostagent: no TCP socket of the flow")

// ReadFunc reads the TCP_INFO of the sending socket of flow. It returns
// an error wrapping ErrNoSocket when there is none.
type ReadFunc func(ctx context.Context, flow proflow.FlowID) (TCPInfo, error)

// Config holds the settings of an Agent.
type Config struct {
	// Flow is the protected flow, as its sender sees it: Src and SrcPort
	// local, Dst and DstPort remote; protocol TCP. A port of 0 matches
	// any port (the first established socket between the two addresses
	// is read).
	Flow proflow.FlowID
	// NetNS is the path of the network namespace the sender's socket
	// lives in, for example /run/netns/h1 (default: the agent's own). It
	// applies to the netlink reader only, not to Read.
	NetNS string
	// PollInterval is how often the socket is read (default 10 ms).
	PollInterval time.Duration
	// Window is the interval a report summarises: its RTT percentile is
	// taken over the polls of the last Window (default 500 ms).
	Window time.Duration
	// Timeout bounds one read (default 1 s).
	Timeout time.Duration
	// Token, when not empty, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN); requests without it get 401. It is
	// compared in constant time.
	Token string
	// Read replaces the netlink reader (tests, or another source).
	Read ReadFunc
	// Now stamps polls and reports (default time.Now).
	Now func() time.Time
	// Logger receives read errors and the errors behind 5xx answers
	// (default: discard).
	Logger *slog.Logger
	// Registerer, when set, receives the agent's own metrics
	// (proflow_hostagent_polls_total, _http_requests_total); nil
	// registers none.
	Registerer prometheus.Registerer
	// Gatherer, when set, is served at /metrics after the socket's series
	// (for example the registry given as Registerer).
	Gatherer prometheus.Gatherer
}

// DefaultConfig returns the defaults; set Flow (and NetNS where the
// sender runs in another namespace) before use.
func DefaultConfig() Config {
	return Config{PollInterval: DefaultPollInterval, Window: DefaultWindow, Timeout: DefaultReadTimeout}
}

// MaxPollsPerWindow bounds Window / PollInterval, the samples a report's
// percentile is taken over.
const MaxPollsPerWindow = 100_000

// Validate reports every problem of c, naming each bad value. Zero
// durations are problems: start from DefaultConfig.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if err := c.Flow.Validate(); err != nil {
		add("flow: %w", err)
	} else if c.Flow.Proto != proflow.ProtoTCP {
		add("flow %v: protocol %d, want tcp (%d): TCP_INFO exists for TCP sockets only", c.Flow, c.Flow.Proto, proflow.ProtoTCP)
	}
	if c.PollInterval <= 0 {
		add("poll interval %v, want a positive duration such as %v", c.PollInterval, DefaultPollInterval)
	}
	if c.Window <= 0 {
		add("window %v, want a positive duration such as %v", c.Window, DefaultWindow)
	} else if c.PollInterval > 0 && c.Window < c.PollInterval {
		add("window %v is shorter than the poll interval %v, want at least one poll per window", c.Window, c.PollInterval)
	} else if c.PollInterval > 0 && c.Window/c.PollInterval > MaxPollsPerWindow {
		add("window %v holds %d polls of %v, want at most %d", c.Window, c.Window/c.PollInterval, c.PollInterval, MaxPollsPerWindow)
	}
	if c.Timeout <= 0 {
		add("read timeout %v, want a positive duration such as %v", c.Timeout, DefaultReadTimeout)
	}
	if c.NetNS != "" && c.Read != nil {
		add("network namespace %q is set with a custom Read, want one or the other", c.NetNS)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("hostagent: config: %w", err)
	}
	return nil
}
