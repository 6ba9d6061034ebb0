package serve

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bounds of the service's log (logLimiter): per level (info and above) and
// message, at most logBurst records per logWindow; every attribute value
// clipped to maxLogValue bytes. With M distinct messages the log grows by
// at most M × logBurst records per window whatever the load: the messages
// are constants of the code, and those that are not (net/http's) share one
// budget beyond maxLogKeys.
const (
	logWindow   = 10 * time.Second
	logBurst    = 20
	maxLogKeys  = 256
	maxLogValue = 2048
)

// logLimiter is the state behind limitHandler, shared by every logger
// derived from the service's.
type logLimiter struct {
	now        func() time.Time
	suppressed *prometheus.CounterVec // by level

	mu   sync.Mutex
	keys map[logKey]*logCount
}

type logKey struct {
	level slog.Level
	msg   string
}

type logCount struct {
	start   time.Time
	n       int // records passed in the window from start
	dropped int // records dropped since the last one passed
}

func newLogLimiter(now func() time.Time) *logLimiter {
	l := &logLimiter{now: now, keys: map[logKey]*logCount{},
		suppressed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "proflow", Subsystem: "serve", Name: "log_records_suppressed_total",
			Help: "Log records dropped by the log's rate limit (per level and message, 20 records per 10 s pass), by level."}, []string{"level"})}
	for _, lv := range []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		l.suppressed.WithLabelValues(lv.String())
	}
	return l
}

// admit reports whether a record of level and msg passes, and how many of
// its kind were dropped since the last that passed.
func (l *logLimiter) admit(level slog.Level, msg string) (bool, int) {
	if level < slog.LevelInfo {
		return true, 0 // debug is asked for, record by record
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	k := logKey{level, msg}
	c, ok := l.keys[k]
	if !ok {
		if len(l.keys) >= maxLogKeys {
			k.msg = "" // one shared budget for messages beyond the bound
			c = l.keys[k]
		}
		if c == nil {
			c = &logCount{start: now}
			l.keys[k] = c
		}
	}
	if now.Sub(c.start) >= logWindow {
		c.start, c.n = now, 0
	}
	if c.n >= logBurst {
		c.dropped++
		l.suppressed.WithLabelValues(level.String()).Inc()
		return false, 0
	}
	c.n++
	dropped := c.dropped
	c.dropped = 0
	return true, dropped
}

// limitHandler is a slog.Handler that rate-limits and clips the records it
// passes to next (see logLimiter).
type limitHandler struct {
	next slog.Handler
	lim  *logLimiter
}

func (h limitHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h limitHandler) Handle(ctx context.Context, r slog.Record) error {
	ok, dropped := h.lim.admit(r.Level, r.Message)
	if !ok {
		return nil
	}
	out := slog.NewRecord(r.Time, r.Level, clip(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(clipAttr(a))
		return true
	})
	if dropped > 0 {
		out.AddAttrs(slog.Int("suppressed_before", dropped))
	}
	return h.next.Handle(ctx, out)
}

func (h limitHandler) WithAttrs(as []slog.Attr) slog.Handler {
	cs := make([]slog.Attr, len(as))
	for i, a := range as {
		cs[i] = clipAttr(a)
	}
	return limitHandler{next: h.next.WithAttrs(cs), lim: h.lim}
}

func (h limitHandler) WithGroup(name string) slog.Handler {
	return limitHandler{next: h.next.WithGroup(name), lim: h.lim}
}

// clipAttr clips a string, error or Stringer value to maxLogValue bytes.
func clipAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if len(v.String()) > maxLogValue {
			return slog.String(a.Key, clip(v.String()))
		}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			return a
		}
		if len(s) > maxLogValue {
			return slog.String(a.Key, clip(s))
		}
	case slog.KindGroup:
		as := v.Group()
		cs := make([]any, len(as))
		for i, g := range as {
			cs[i] = clipAttr(g)
		}
		return slog.Group(a.Key, cs...)
	}
	return a
}

func clip(s string) string {
	if len(s) <= maxLogValue {
		return s
	}
	cut := maxLogValue
	for cut > 0 && s[cut]&0xc0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)-cut) + " more bytes)"
}
