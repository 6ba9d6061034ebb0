package tcstat

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/agenthttp"
)

// Source names the interfaces whose overflow adds up to one aggregation
// switch's ξ_k, and the agent that serves them.
type Source struct {
	// Agent is the agent's base URL, for example "http://127.0.0.1:9310".
	Agent string `json:"agent"`
	// Interfaces are the devices of the switch's rate-limited uplinks.
	Interfaces []string `json:"interfaces"`
}

// Format is the form of the counters a Client asks agents for.
type Format string

// Formats of ClientConfig.Format.
const (
	// FormatJSON reads GET /v1/qdisc, a Report: proflow's agent only.
	FormatJSON Format = "json"
	// FormatPrometheus reads GET /metrics, the node_qdisc_* series in the
	// Prometheus text format: proflow's agent, or node_exporter with its
	// qdisc collector on. Reports are timed by the agent's
	// proflow_tcstat_read_timestamp_seconds where the answer has it, and by
	// the client's clock when the answer arrives otherwise
	// (node_exporter), so rates then include the network's jitter.
	FormatPrometheus Format = "prometheus"
)

// ClientConfig holds the settings of a Client.
type ClientConfig struct {
	// Topology fixes the switch order.
	Topology proflow.Topology
	// Switches[k] is the source of switch k's overflow (one per switch).
	Switches []Source
	// Format is what the client asks agents for (default FormatJSON).
	Format Format
	// Token, when not empty, is sent as the bearer token of every request
	// (the agents' AgentConfig.Token).
	Token string
	// Timeout bounds one HTTP request (default 1 s).
	Timeout time.Duration
	// MaxAge is the oldest report accepted (default 5 s; negative disables
	// the check). A report's age is Now minus the report's Time, that is
	// the client's clock minus the agent's: the check assumes the two hosts'
	// clocks agree (NTP) to well within MaxAge. Clock skew shifts every age
	// by the offset: an agent clock behind the client's makes fresh reports
	// look old (and refused as stale once the offset nears MaxAge), one
	// ahead hides that much staleness. Choose MaxAge well above the expected
	// skew, or disable the check where the clocks are not synchronised.
	// Rates are not affected: they use the agent's times only.
	MaxAge time.Duration
	// HTTPClient sends the requests (default: a client of its own). Give
	// it a transport with a tls.Config to check an agent's certificate or
	// present a client certificate.
	HTTPClient *http.Client
	// Now reads the client's clock (default time.Now).
	Now func() time.Time
}

// MaxReportBytes bounds an agent's answer.
const MaxReportBytes = 1 << 20

// Client polls tc agents and fills the overflow rates of an observation.
// It is a telemetry.Overlay. Create it with NewClient.
type Client struct {
	cfg    ClientConfig
	agents []string // distinct agent URLs

	mu    sync.Mutex
	reads map[string]agentReads // by agent URL
}

// agentReads holds the two newest distinct reads of one agent, those the
// rates of its switches come from.
type agentReads struct {
	prev, cur Report // cur is the newest
	two       bool   // prev is set
}

// NewClient checks cfg and returns a client.
func NewClient(cfg ClientConfig) (*Client, error) {
	if err := cfg.Topology.Validate(); err != nil {
		return nil, fmt.Errorf("tcstat: client: %w", err)
	}
	if len(cfg.Switches) != cfg.Topology.NumSwitches() {
		return nil, fmt.Errorf("tcstat: client: %d sources, want one per aggregation switch (%d)", len(cfg.Switches), cfg.Topology.NumSwitches())
	}
	c := &Client{cfg: cfg, reads: map[string]agentReads{}}
	for k, s := range cfg.Switches {
		u, err := url.Parse(s.Agent)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("tcstat: client: switch %s agent %q, want an http(s) URL", cfg.Topology.Switches[k], s.Agent)
		}
		if len(s.Interfaces) == 0 {
			return nil, fmt.Errorf("tcstat: client: switch %s has no interfaces", cfg.Topology.Switches[k])
		}
		if !slices.Contains(c.agents, s.Agent) {
			c.agents = append(c.agents, s.Agent)
		}
	}
	switch c.cfg.Format {
	case "":
		c.cfg.Format = FormatJSON
	case FormatJSON, FormatPrometheus:
	default:
		return nil, fmt.Errorf("tcstat: client: format %q, want %q or %q", cfg.Format, FormatJSON, FormatPrometheus)
	}
	if c.cfg.Timeout <= 0 {
		c.cfg.Timeout = time.Second
	}
	if c.cfg.MaxAge == 0 {
		c.cfg.MaxAge = 5 * time.Second
	}
	if c.cfg.HTTPClient == nil {
		c.cfg.HTTPClient = &http.Client{}
	}
	if c.cfg.Now == nil {
		c.cfg.Now = time.Now
	}
	return c, nil
}

// Fetch asks one agent for its report and checks it is complete for the
// interfaces this client needs from it.
func (c *Client) Fetch(ctx context.Context, agent string) (Report, error) {
	rep, err := c.fetch(ctx, agent)
	if err != nil {
		return Report{}, fmt.Errorf("tcstat: agent %s: %w", agent, err)
	}
	for k, s := range c.cfg.Switches {
		if s.Agent != agent {
			continue
		}
		for _, d := range s.Interfaces {
			if _, ok := rep.Interfaces[d]; !ok {
				return Report{}, fmt.Errorf("tcstat: agent %s: partial report: no interface %q (switch %s)", agent, d, c.cfg.Topology.Switches[k])
			}
		}
	}
	return rep, nil
}

func (c *Client) fetch(ctx context.Context, agent string) (Report, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	path, accept := "/v1/qdisc", "application/json"
	if c.cfg.Format == FormatPrometheus {
		path, accept = "/metrics", string(expfmt.NewFormat(expfmt.TypeTextPlain))
	}
	body, header, err := agenthttp.Get(ctx, c.cfg.HTTPClient, agent+path, accept, c.cfg.Token, MaxReportBytes)
	if err != nil {
		return Report{}, err
	}
	if c.cfg.Format == FormatJSON {
		return DecodeReport(body)
	}
	if f := expfmt.ResponseFormat(header); f.FormatType() != expfmt.TypeTextPlain {
		return Report{}, fmt.Errorf("answer of type %q, want the Prometheus text format", header.Get("Content-Type"))
	}
	rep, err := DecodeMetrics(body)
	if err == nil && rep.Time.IsZero() {
		rep.Time = c.cfg.Now()
	}
	return rep, err
}

// DecodeReport decodes an agent's JSON answer strictly: unknown fields, a
// missing time or interface map, and trailing data are errors.
func DecodeReport(b []byte) (Report, error) {
	var r Report
	if err := agenthttp.DecodeStrict(b, &r); err != nil {
		return Report{}, fmt.Errorf("malformed report: %w", err)
	}
	if r.Time.IsZero() {
		return Report{}, errors.New("malformed report: no time")
	}
	if r.Interfaces == nil {
		return Report{}, errors.New("malformed report: no interfaces")
	}
	return r, nil
}

// Overlay polls every agent (in parallel) and writes each switch's overflow
// rate into obs.Switches[k].OverflowRate and the bytes queued on its
// interfaces at the latest read (tc's backlog) into QueueBytes, leaving
// every other field alone.
// obs must already be sized for the topology (a southbound's Collect does
// that). The first call only records counters and returns an error wrapping
// proflow.ErrStale.
//
// A report with the same time as the agent's previous one is that read
// again: proflow's agent answers every request within its
// AgentConfig.CacheFor from one read. It brings nothing new, so the rates of
// the two newest distinct reads stand (ClientConfig.MaxAge still bounds how
// old they may get); while there is only one read, it is stale. A report
// older than the previous one is an error wrapping proflow.ErrStale.
func (c *Client) Overlay(ctx context.Context, obs *proflow.Observation) error {
	if len(obs.Switches) != c.cfg.Topology.NumSwitches() {
		return fmt.Errorf("tcstat: observation has %d switches, want %d (collect the primary source first)", len(obs.Switches), c.cfg.Topology.NumSwitches())
	}
	reps := make([]Report, len(c.agents))
	errs := make([]error, len(c.agents))
	var wg sync.WaitGroup
	for i, a := range c.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = c.Fetch(ctx, a)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[string]agentReads, len(c.agents))
	var stale error
	for i, a := range c.agents {
		rep := reps[i]
		if c.cfg.MaxAge > 0 {
			if age := now.Sub(rep.Time); age > c.cfg.MaxAge {
				return fmt.Errorf("tcstat: agent %s: report taken %v ago, want at most %v (by the agent's clock against the client's; they must agree): %w",
					a, age.Round(time.Millisecond), c.cfg.MaxAge, proflow.ErrStale)
			}
		}
		r, ok := c.reads[a]
		switch {
		case !ok:
			r.cur = rep
		case rep.Time.After(r.cur.Time):
			r.prev, r.cur, r.two = r.cur, rep, true
		case rep.Time.Equal(r.cur.Time):
			// The agent's cached read again: keep the two newest reads.
		default:
			return fmt.Errorf("tcstat: agent %s: report time %v goes back before the previous report's %v: %w",
				a, rep.Time.Format(time.RFC3339Nano), r.cur.Time.Format(time.RFC3339Nano), proflow.ErrStale)
		}
		if !r.two && stale == nil {
			stale = fmt.Errorf("tcstat: agent %s: one read so far (at %v), rates need two: %w",
				a, r.cur.Time.Format(time.RFC3339Nano), proflow.ErrStale)
		}
		next[a] = r
	}
	maps.Copy(c.reads, next)
	if stale != nil {
		return stale
	}
	for k, s := range c.cfg.Switches {
		r := c.reads[s.Agent]
		prev, cur := r.prev, r.cur
		dt := cur.Time.Sub(prev.Time).Seconds()
		total, backlog := 0.0, 0.0
		for _, d := range s.Interfaces {
			backlog += float64(cur.Interfaces[d].BacklogBytes)
			p, ok := prev.Interfaces[d]
			if !ok {
				continue // appeared since: counts from the next report
			}
			total += OverflowRate(p, cur.Interfaces[d], dt)
		}
		obs.Switches[k].OverflowRate = total
		obs.Switches[k].QueueBytes = backlog
	}
	return nil
}

// OverflowRate returns the overflow rate ξ between two samples of one qdisc
// taken dt seconds apart: tc overlimit events per second, the unit of
// proflow.SwitchSample.OverflowRate (the paper's App. A; its App. E prints
// the same numbers as "bytes/s"). A qdisc replaced in between (another Kind
// or Handle) or reset (Bytes, a 64-bit counter that never wraps, went down)
// counts cur's overlimits from zero.
func OverflowRate(prev, cur Qdisc, dt float64) float64 {
	if !(dt > 0) {
		return 0
	}
	if cur.Kind != prev.Kind || cur.Handle != prev.Handle || cur.Bytes < prev.Bytes {
		return float64(cur.Overlimits) / dt
	}
	return float64(delta32(prev.Overlimits, cur.Overlimits)) / dt
}

// delta32 is the increase of a 32-bit counter, wrapping when it went
// backwards from the top half of its range, reset otherwise.
func delta32(prev, cur uint64) uint64 {
	if cur >= prev {
		return cur - prev
	}
	if prev <= 1<<32-1 && prev >= 1<<31 && cur < 1<<31 {
		return cur + 1<<32 - prev
	}
	return cur
}
