package policy

import (
	"math"
	"testing"
	"time"
)

// The backoff doubles the cooldown for every move in a row before a
// recovery, and a cooldown too long to double saturates instead of
// wrapping to a negative one (which would let the rule fire at once).
func TestBackoffSaturates(t *testing.T) {
	b := newBackoff()
	for i, cur := range []int{0, 1, 0, 1, 0, 1, 0} { // six moves, no recovery
		b.observe(cur)
		// The first move follows the start, a recovery: no doubling yet.
		if want := min(max(i-1, 0), maxBackoff); b.shift != want {
			t.Fatalf("after %d moves: shift %d, want %d", i, b.shift, want)
		}
	}
	if got := b.cooldown(2 * time.Second); got != 32*time.Second {
		t.Errorf("cooldown(2s) after six moves = %v, want 32s", got)
	}
	for _, base := range []time.Duration{math.MaxInt64 / 8, 1_000_000 * time.Hour, math.MaxInt64} {
		if got := b.cooldown(base); got != math.MaxInt64 {
			t.Errorf("cooldown(%v) after six moves = %v, want the longest time.Duration", base, got)
		}
	}
	if got := b.cooldown(math.MaxInt64 / 16); got != math.MaxInt64/16*16 {
		t.Errorf("cooldown(MaxInt64/16) = %v, want it doubled four times exactly", got)
	}
}
