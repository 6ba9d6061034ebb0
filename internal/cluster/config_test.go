package cluster

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig("r1", "http://127.0.0.1:2379")
	if err := ok.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(*Config)
	}{
		{"no endpoints", "endpoints", func(c *Config) { c.Endpoints = nil }},
		{"no replica", "replica name", func(c *Config) { c.Replica = "" }},
		{"slash in replica", "replica name", func(c *Config) { c.Replica = "a/b" }},
		{"short TTL", "lease TTL", func(c *Config) { c.LeaseTTL = 500 * time.Millisecond }},
		{"too many shards", "shards", func(c *Config) { c.Shards = 5000 }},
		{"slow keepalive", "keepalive interval", func(c *Config) { c.KeepAliveInterval = 6 * time.Second }},
		{"guard too late", "stop writing after", func(c *Config) { c.StopWritingAfter = 9900 * time.Millisecond }},
		{"guard before a keepalive", "stop writing after", func(c *Config) { c.StopWritingAfter = time.Second }},
	} {
		c := ok
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}
