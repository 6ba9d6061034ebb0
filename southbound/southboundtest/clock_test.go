package southboundtest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestManualClockNowMovesOnlyByAdvance(t *testing.T) {
	c := southboundtest.NewManualClock(epoch)
	if got := c.Now(); !got.Equal(epoch) {
		t.Fatalf("Now() = %v, want %v", got, epoch)
	}
	c.Advance(1500 * time.Millisecond)
	c.Advance(-time.Hour) // ignored
	if got, want := c.Now(), epoch.Add(1500*time.Millisecond); !got.Equal(want) {
		t.Errorf("Now() after Advance = %v, want %v", got, want)
	}
}

// ticks drains every tick pending on ch.
func ticks(ch <-chan time.Time) []time.Time {
	var got []time.Time
	for {
		select {
		case tk := <-ch:
			got = append(got, tk)
		default:
			return got
		}
	}
}

func TestManualClockTicker(t *testing.T) {
	c := southboundtest.NewManualClock(epoch)
	tk := c.NewTicker(time.Second)
	defer tk.Stop()

	c.Advance(999 * time.Millisecond)
	if got := ticks(tk.C()); len(got) != 0 {
		t.Fatalf("ticks before one period = %v, want none", got)
	}
	c.Advance(time.Millisecond)
	if got := ticks(tk.C()); len(got) != 1 || !got[0].Equal(epoch.Add(time.Second)) {
		t.Fatalf("ticks at one period = %v, want one at %v", got, epoch.Add(time.Second))
	}
	// Crossing three periods without reading delivers one tick and drops the
	// rest, like time.Ticker; the next tick is the first after the new time.
	c.Advance(3*time.Second + 500*time.Millisecond) // now 4.5 s
	if got := ticks(tk.C()); len(got) != 1 {
		t.Fatalf("ticks after crossing three periods = %v, want exactly one", got)
	}
	c.Advance(400 * time.Millisecond) // 4.9 s
	if got := ticks(tk.C()); len(got) != 0 {
		t.Fatalf("ticks at 4.9 s = %v, want none (next tick at 5 s)", got)
	}
	c.Advance(100 * time.Millisecond) // 5 s
	if got := ticks(tk.C()); len(got) != 1 {
		t.Fatalf("ticks at 5 s = %v, want one", got)
	}
	// An unread tick blocks nothing: the second is dropped.
	c.Advance(time.Second)
	c.Advance(time.Second)
	if got := ticks(tk.C()); len(got) != 1 || !got[0].Equal(epoch.Add(6*time.Second)) {
		t.Fatalf("ticks with an unread tick = %v, want only the first, at 6 s", got)
	}

	tk.Stop()
	tk.Stop() // idempotent
	c.Advance(10 * time.Second)
	if got := ticks(tk.C()); len(got) != 0 {
		t.Fatalf("ticks after Stop = %v, want none", got)
	}
	if n := c.Tickers(); n != 0 {
		t.Errorf("Tickers() after Stop = %d, want 0", n)
	}
}

func TestManualClockNewTickerPanicsOnNonPositivePeriod(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewTicker(0) did not panic")
		}
	}()
	southboundtest.NewManualClock(epoch).NewTicker(0)
}

func TestManualClockBlockUntil(t *testing.T) {
	c := southboundtest.NewManualClock(epoch)
	done := make(chan error, 1)
	go func() { done <- c.BlockUntil(t.Context(), 2) }()

	c.NewTicker(time.Second)
	select {
	case err := <-done:
		t.Fatalf("BlockUntil(2) returned %v with one ticker", err)
	default:
	}
	tk := c.NewTicker(time.Second)
	if err := <-done; err != nil {
		t.Fatalf("BlockUntil(2) = %v, want nil", err)
	}

	tk.Stop()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.BlockUntil(ctx, 2); err != context.Canceled {
		t.Errorf("BlockUntil with one ticker and a cancelled context = %v, want context.Canceled", err)
	}
	if err := c.BlockUntil(ctx, 1); err != nil {
		t.Errorf("BlockUntil(1) with one ticker = %v, want nil even with a cancelled context", err)
	}
}

func TestManualClockConcurrent(t *testing.T) {
	c := southboundtest.NewManualClock(epoch)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk := c.NewTicker(time.Millisecond)
			for range 100 {
				c.Advance(time.Millisecond)
				_ = c.Now()
				ticks(tk.C())
			}
			tk.Stop()
		}()
	}
	wg.Wait()
	if got, want := c.Now(), epoch.Add(400*time.Millisecond); !got.Equal(want) {
		t.Errorf("Now() after 400 concurrent advances of 1 ms = %v, want %v", got, want)
	}
}
