package southboundtest

import (
	"context"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
)

// ManualClock is a proflow.Clock whose time moves only when Advance is
// called, so tests drive a Controller's Run loop tick by tick without
// sleeping. It is safe for concurrent use.
//
// Its tickers behave like time.Ticker: each has a channel with a buffer of
// one, and a tick that finds the buffer full is dropped, so a slow reader
// sees at most one pending tick.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers map[*manualTicker]struct{}
	changed chan struct{} // closed and replaced whenever the set of tickers changes
}

var _ proflow.Clock = (*ManualClock)(nil)

// NewManualClock returns a clock that reads start until it is advanced.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start, tickers: make(map[*manualTicker]struct{}), changed: make(chan struct{})}
}

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTicker returns a ticker that fires every d of clock time. Like
// time.NewTicker it panics if d is not positive.
func (c *ManualClock) NewTicker(d time.Duration) proflow.Ticker {
	if d <= 0 {
		panic("southboundtest: non-positive interval for ManualClock.NewTicker")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTicker{clock: c, period: d, next: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.tickers[t] = struct{}{}
	c.notifyLocked()
	return t
}

// Advance moves the clock forward by d (a negative d is treated as zero) and
// fires every ticker whose next tick falls within the new time. A ticker
// whose period is crossed several times fires once; its next tick is the
// first one after the new time, as time.Ticker drops ticks for a slow reader.
// The sends do not block.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	for t := range c.tickers {
		if c.now.Before(t.next) {
			continue
		}
		select {
		case t.ch <- c.now:
		default:
		}
		missed := c.now.Sub(t.next) / t.period
		t.next = t.next.Add((missed + 1) * t.period)
	}
}

// Tickers returns the number of tickers created and not yet stopped.
func (c *ManualClock) Tickers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.tickers)
}

// BlockUntil waits until at least n tickers exist (created and not stopped),
// so a test knows a loop has started its ticker before it calls Advance. It
// returns ctx's error if ctx ends first.
func (c *ManualClock) BlockUntil(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		have, changed := len(c.tickers), c.changed
		c.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *ManualClock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

type manualTicker struct {
	clock  *ManualClock
	period time.Duration
	next   time.Time // guarded by clock.mu
	ch     chan time.Time
}

func (t *manualTicker) C() <-chan time.Time { return t.ch }

// Stop turns the ticker off; like time.Ticker.Stop it does not close C.
func (t *manualTicker) Stop() {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.tickers[t]; ok {
		delete(c.tickers, t)
		c.notifyLocked()
	}
}
