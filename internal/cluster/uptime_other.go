//go:build !linux

package cluster

import "time"

// hostUptime returns the wall clock, which goes on while the host is
// suspended (Go's monotonic clock may not). A step of the wall clock moves
// it too: forward, the fence goes down early (until the next acknowledged
// keepalive); backward, Config.Clock alone counts until it catches up.
func hostUptime() time.Duration { return time.Duration(time.Now().UnixNano()) }
