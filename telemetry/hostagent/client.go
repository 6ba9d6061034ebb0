package hostagent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/agenthttp"
	"github.com/proflow-sdn/proflow/telemetry"
)

// MaxReportBytes bounds an agent's answer.
const MaxReportBytes = 64 << 10

// ClientConfig holds the settings of a Client.
type ClientConfig struct {
	// Agent is the agent's base URL, for example "http://127.0.0.1:9102".
	Agent string
	// Flow is the flow the agent must report (its Config.Flow): a report
	// of another flow is an error. In an observation with FlowIDs (several
	// protected flows) the client writes the entry of this flow.
	Flow proflow.FlowID
	// Token, when not empty, is sent as the bearer token of every request.
	Token string
	// Timeout bounds one request (default 1 s).
	Timeout time.Duration
	// MaxAge is the oldest report accepted, by the client's clock against
	// the agent's (default 5 s; negative disables the check).
	MaxAge time.Duration
	// HTTPClient sends the requests (default: a client of its own).
	HTTPClient *http.Client
	// Now reads the client's clock (default time.Now).
	Now func() time.Time
}

// Client asks a host agent for the protected flow's round-trip times and
// writes them into an observation. It is a telemetry.Overlay. Create it
// with NewClient; it is safe for concurrent use.
type Client struct {
	cfg ClientConfig
}

// NewClient checks cfg and returns a client.
func NewClient(cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(cfg.Agent)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("hostagent: client: agent %q, want an http(s) URL such as http://%s", cfg.Agent, DefaultListen)
	}
	if err := cfg.Flow.Validate(); err != nil {
		return nil, fmt.Errorf("hostagent: client: flow: %w", err)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Second
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = 5 * time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg}, nil
}

// Fetch asks the agent for its report and checks it is of the client's
// flow and fresh enough; a stale one wraps proflow.ErrStale.
func (c *Client) Fetch(ctx context.Context) (Report, error) {
	rep, err := c.fetch(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("hostagent: agent %s: %w", c.cfg.Agent, err)
	}
	if rep.Flow != c.cfg.Flow {
		return Report{}, fmt.Errorf("hostagent: agent %s reports flow %v, want %v", c.cfg.Agent, rep.Flow, c.cfg.Flow)
	}
	if c.cfg.MaxAge > 0 {
		if age := c.cfg.Now().Sub(rep.Time); age > c.cfg.MaxAge {
			return Report{}, fmt.Errorf("hostagent: agent %s: report made %v ago, want at most %v (by the agent's clock against the client's): %w",
				c.cfg.Agent, age.Round(time.Millisecond), c.cfg.MaxAge, proflow.ErrStale)
		}
	}
	return rep, nil
}

func (c *Client) fetch(ctx context.Context) (Report, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	body, _, err := agenthttp.Get(ctx, c.cfg.HTTPClient, c.cfg.Agent+"/v1/flow", "application/json", c.cfg.Token, MaxReportBytes)
	if err != nil {
		return Report{}, err
	}
	return DecodeReport(body)
}

// DecodeReport decodes an agent's JSON answer strictly: unknown fields,
// trailing data, a missing time or flow, and round-trip times that are
// negative or not finite are errors.
func DecodeReport(b []byte) (Report, error) {
	var r Report
	if err := agenthttp.DecodeStrict(b, &r); err != nil {
		return Report{}, fmt.Errorf("malformed report: %w", err)
	}
	if r.Time.IsZero() {
		return Report{}, errors.New("malformed report: no time")
	}
	if !r.Flow.Src.IsValid() {
		return Report{}, errors.New("malformed report: no flow")
	}
	for _, v := range []struct {
		name string
		v    float64
	}{{"srtt", r.SmoothedRTT}, {"rtt_p99", r.RTTP99}, {"rtt_p50", r.RTTP50}, {"window", r.Window}, {"info.srtt", r.Info.SRTT}} {
		if !(v.v >= 0) || v.v > 3600 {
			return Report{}, fmt.Errorf("malformed report: %s = %v, want seconds in [0, 3600]", v.name, v.v)
		}
	}
	if !(r.AppLimited >= 0 && r.AppLimited <= 1) {
		return Report{}, fmt.Errorf("malformed report: app_limited = %v, want a share in [0, 1]", r.AppLimited)
	}
	if r.Samples > r.Polls || r.Polls < 0 || r.Samples < 0 {
		return Report{}, fmt.Errorf("malformed report: %d samples of %d polls, want 0 ≤ samples ≤ polls", r.Samples, r.Polls)
	}
	return r, nil
}

// Overlay fetches the agent's report and writes its SmoothedRTT, RTTP99
// and AppLimited into the flow's sample: obs.Flow, or the entry of
// obs.Flows whose FlowIDs entry is the client's flow when obs lists flows.
// Every other field is left alone. A socket the agent did not find leaves
// them zero (unknown): SmoothedRTT when its latest poll missed the socket,
// RTTP99 and AppLimited when no poll of the window found it (RTTP99 also
// when none saw an acknowledgement).
func (c *Client) Overlay(ctx context.Context, obs *proflow.Observation) error {
	rep, err := c.Fetch(ctx)
	if err != nil {
		return err
	}
	fs := &obs.Flow
	if len(obs.FlowIDs) > 0 {
		fs = nil
		for i, id := range obs.FlowIDs {
			if id == c.cfg.Flow && i < len(obs.Flows) {
				fs = &obs.Flows[i]
				break
			}
		}
		if fs == nil {
			return fmt.Errorf("hostagent: observation lists flows %v without %v, want the agent's flow among them", obs.FlowIDs, c.cfg.Flow)
		}
	}
	fs.SmoothedRTT, fs.RTTP99, fs.AppLimited = rep.SmoothedRTT, rep.RTTP99, rep.AppLimited
	return nil
}

// Wrap returns a Telemetry that collects from tel and then writes the
// agent's round-trip times and application-limited share into the flow's
// sample (telemetry.Merge with c as its overlay).
func Wrap(tel proflow.Telemetry, c *Client) (proflow.Telemetry, error) {
	if c == nil {
		return nil, errors.New("hostagent: wrap: client is nil, want one from NewClient")
	}
	return telemetry.Merge(tel, c)
}
