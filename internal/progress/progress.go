// Package progress draws a progress line for long jobs (sweeps, collection,
// training) on a terminal, and prints sparse plain lines when the output is
// not a terminal (CI logs), so that both stay readable.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Bar reports progress of a job of a known number of steps. It is safe for
// concurrent use: workers call Add as they finish.
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	label    string
	total    int
	done     int
	start    time.Time
	now      func() time.Time
	tty      bool
	lastLine time.Time
	lastPct  int
	finished bool
}

// New returns a bar for total steps that writes to w. On a terminal it
// redraws one line; elsewhere it prints a line every 10%.
func New(w io.Writer, label string, total int) *Bar {
	return newBar(w, label, total, time.Now, isTerminal(w))
}

func newBar(w io.Writer, label string, total int, now func() time.Time, tty bool) *Bar {
	b := &Bar{w: w, label: label, total: total, start: now(), now: now, tty: tty, lastPct: -1}
	return b
}

// Add records n finished steps.
func (b *Bar) Add(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	b.draw(false)
}

// Set records that done steps have finished in all.
func (b *Bar) Set(done int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = done
	b.draw(false)
}

// SetTotal changes the number of steps, for a job that learns its size
// as it goes.
func (b *Bar) SetTotal(total int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total = total
}

// Finish draws the final state and ends the line.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.draw(true)
	b.finished = true
}

func (b *Bar) draw(final bool) {
	if b.w == nil || b.finished {
		return
	}
	now := b.now()
	pct := 100
	if b.total > 0 {
		pct = min(100, 100*b.done/b.total)
	}
	elapsed := now.Sub(b.start)
	eta := ""
	if b.done > 0 && b.done < b.total {
		left := time.Duration(float64(elapsed) * float64(b.total-b.done) / float64(b.done))
		eta = " eta " + left.Round(time.Second).String()
	}
	if b.tty {
		if !final && now.Sub(b.lastLine) < 100*time.Millisecond {
			return
		}
		b.lastLine = now
		const width = 30
		fill := width * pct / 100
		fmt.Fprintf(b.w, "\r%s [%s%s] %d/%d %s%s   ", b.label, strings.Repeat("#", fill), strings.Repeat(".", width-fill),
			b.done, b.total, elapsed.Round(time.Second), eta)
		if final {
			fmt.Fprintln(b.w)
		}
		return
	}
	if !final && pct/10 == b.lastPct/10 {
		return
	}
	b.lastPct = pct
	fmt.Fprintf(b.w, "%s: %d/%d (%d%%) after %s%s\n", b.label, b.done, b.total, pct, elapsed.Round(time.Millisecond), eta)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
