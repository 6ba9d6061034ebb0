package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPlainLinesEveryTenPercent(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	b := newBar(&buf, "sweep", 20, func() time.Time { clock = clock.Add(time.Second); return clock }, false)
	for i := 0; i < 20; i++ {
		b.Add(1)
	}
	b.Finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// 10%, 20%, …, 100% once each, plus the final line.
	if len(lines) != 11 {
		t.Fatalf("%d lines, want 11:\n%s", len(lines), buf.String())
	}
	if !strings.HasPrefix(lines[0], "sweep: 2/20 (10%)") || !strings.HasPrefix(lines[10], "sweep: 20/20 (100%)") {
		t.Errorf("unexpected lines:\n%s", buf.String())
	}
}

func TestTerminalRedrawsOneLine(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	b := newBar(&buf, "train", 4, func() time.Time { clock = clock.Add(time.Second); return clock }, true)
	b.Add(2)
	b.Finish()
	b.Finish() // idempotent
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "\rtrain [###############...............] 2/4") {
		t.Errorf("output %q", out)
	}
}

func TestNilBarIsANoOp(t *testing.T) {
	var b *Bar
	b.Add(1)
	b.Set(2)
	b.Finish()
}
