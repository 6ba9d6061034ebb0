//go:build linux

package cluster

import (
	"time"

	"golang.org/x/sys/unix"
)

// hostUptime returns CLOCK_BOOTTIME: the time since the host booted,
// suspended time included, which Go's monotonic clock (CLOCK_MONOTONIC on
// Linux) leaves out. It returns 0 if the clock cannot be read, and then the
// fence counts Config.Clock alone.
func hostUptime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
