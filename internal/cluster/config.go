package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow"
)

// Errors of a Member.
var (
	// ErrNotOwner is returned for a write to a flow whose shard this member
	// does not own, or no longer owns at etcd.
	ErrNotOwner = errors.New("cluster: shard not owned by this replica")
	// ErrNotWritable is returned for a write while the member's fence is
	// down: its lease may be about to expire, so it must not write.
	ErrNotWritable = errors.New("cluster: not writable (lease keepalives failing)")
	// ErrFlowDeleted is returned for a state SaveFlows did not write
	// because its flow is no longer in the shared set (deleted meanwhile):
	// a flow's state does not outlive it.
	ErrFlowDeleted = errors.New("cluster: flow deleted from the shared set")
	// ErrClosed is returned by a closed member.
	ErrClosed = errors.New("cluster: member closed")
	// ErrShardCount is returned by Join when the prefix was set up with
	// another shard count.
	ErrShardCount = errors.New("cluster: shard count differs from the prefix's")
)

// Config holds a member's settings. Start from DefaultConfig.
type Config struct {
	// Endpoints are the etcd client URLs, e.g. "http://127.0.0.1:2379".
	Endpoints []string
	// Prefix is the key prefix shared by the replicas (default "/proflow/");
	// a "/" is appended when missing.
	Prefix string
	// Replica names this replica, unique among the live ones; no "/".
	Replica string
	// LeaseTTL is the ownership lease's time to live (default 10 s); etcd
	// may raise it to its minimum (about 1.5 × its election timeout).
	LeaseTTL time.Duration
	// KeepAliveInterval is how often the lease is renewed (default TTL/6).
	KeepAliveInterval time.Duration
	// StopWritingAfter is how long after the last acknowledged keepalive
	// was sent the member stops being writable (default TTL/2; at most
	// TTL − KeepAliveInterval).
	StopWritingAfter time.Duration
	// BalanceInterval is how often the member balances the shards even when
	// no key changed (default TTL/3).
	BalanceInterval time.Duration
	// Shards is the number of shards flows are hashed into (default 64,
	// 1…4096); every replica of a prefix must use the same.
	Shards int
	// DialTimeout bounds the first connection (default 5 s).
	DialTimeout time.Duration
	// RequestTimeout bounds each etcd request the member makes (default
	// TTL/3): those it makes on its own, and within the caller's context
	// those of SaveFlows, LoadShard, ListFlows and the other calls, so that
	// an unreachable etcd fails them instead of holding the caller.
	RequestTimeout time.Duration
	// OnChange, when set, is called with the shards gained and lost each
	// time Owned changes (lost before the member releases them at etcd).
	OnChange func(gained, lost []int)
	// Clock is the source of time (default proflow.SystemClock). The fence
	// (Writable) also counts the host's uptime, suspended time included, so
	// that a Clock slower than real time cannot keep it up: etcd counts a
	// lease's TTL in real time.
	Clock proflow.Clock
	// Logger receives ownership changes at Info and failing requests at
	// Warn (default: discard).
	Logger *slog.Logger

	// uptime reads how long the host has run, suspended time included
	// (default hostUptime); tests replace it to suspend the host.
	uptime func() time.Duration
}

// DefaultConfig returns the defaults for replica name replica.
func DefaultConfig(replica string, endpoints ...string) Config {
	return Config{Endpoints: endpoints, Prefix: "/proflow/", Replica: replica, LeaseTTL: 10 * time.Second, Shards: 64, DialTimeout: 5 * time.Second}
}

// withDefaults fills the zero durations from the TTL.
func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = "/proflow/"
	}
	if !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 10 * time.Second
	}
	if c.Shards == 0 {
		c.Shards = 64
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 5 * time.Second
	}
	c.timings(c.LeaseTTL)
	if c.Clock == nil {
		c.Clock = proflow.SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.uptime == nil {
		c.uptime = hostUptime
	}
	return c
}

// timings sets the durations derived from ttl that the user left unset.
func (c *Config) timings(ttl time.Duration) {
	if c.KeepAliveInterval == 0 {
		c.KeepAliveInterval = ttl / 6
	}
	if c.StopWritingAfter == 0 {
		c.StopWritingAfter = ttl / 2
	}
	if c.BalanceInterval == 0 {
		c.BalanceInterval = ttl / 3
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = ttl / 3
	}
}

// Validate checks the settings, with the defaults applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case len(c.Endpoints) == 0:
		return errors.New("cluster: no etcd endpoints, want at least one URL")
	case c.Replica == "" || strings.Contains(c.Replica, "/"):
		return fmt.Errorf("cluster: replica name %q, want a non-empty name without \"/\"", c.Replica)
	case c.LeaseTTL < time.Second:
		return fmt.Errorf("cluster: lease TTL %v, want ≥ 1s", c.LeaseTTL)
	case c.Shards < 1 || c.Shards > 4096:
		return fmt.Errorf("cluster: %d shards, want 1…4096", c.Shards)
	case c.KeepAliveInterval <= 0 || c.KeepAliveInterval >= c.LeaseTTL/2:
		return fmt.Errorf("cluster: keepalive interval %v, want > 0 and < TTL/2 (%v)", c.KeepAliveInterval, c.LeaseTTL/2)
	case c.StopWritingAfter <= c.KeepAliveInterval || c.StopWritingAfter > c.LeaseTTL-c.KeepAliveInterval:
		return fmt.Errorf("cluster: stop writing after %v, want between the keepalive interval %v and TTL − interval %v",
			c.StopWritingAfter, c.KeepAliveInterval, c.LeaseTTL-c.KeepAliveInterval)
	case c.BalanceInterval <= 0 || c.RequestTimeout <= 0 || c.DialTimeout <= 0:
		return fmt.Errorf("cluster: balance interval %v, request timeout %v, dial timeout %v, want all > 0",
			c.BalanceInterval, c.RequestTimeout, c.DialTimeout)
	}
	return nil
}
