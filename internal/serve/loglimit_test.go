package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Issue 24: 20,000 flows with no switch connected wrote 220,000 WARN lines
// in 8 s, one of them 2.7 MB. The service's log passes at most logBurst
// records of a level and message per window, counts the others, and
// clips long values.
func TestLogLimiterBoundsFloods(t *testing.T) {
	now := time.Unix(0, 0)
	lim := newLogLimiter(func() time.Time { return now })
	var out bytes.Buffer
	log := slog.New(limitHandler{next: slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}), lim: lim})
	huge := strings.Repeat("x", 3<<20)
	for i := range 1000 {
		log.Warn("proflow decision", "flow", i, "error", huge)
		log.Debug("step", "i", i)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if want := logBurst + 1000; len(lines) != want {
		t.Fatalf("%d lines, want %d (the burst of warnings and every debug record)", len(lines), want)
	}
	for _, l := range lines {
		if len(l) > 2*maxLogValue+200 {
			t.Fatalf("a line of %d bytes, want at most about %d", len(l), maxLogValue)
		}
	}
	if got := testutil.ToFloat64(lim.suppressed.WithLabelValues("WARN")); got != 1000-logBurst {
		t.Errorf("suppressed{WARN} = %v, want %d", got, 1000-logBurst)
	}
	// The next window passes again and says how many were dropped.
	now = now.Add(logWindow)
	out.Reset()
	log.Warn("proflow decision", "flow", 1000)
	var rec map[string]any
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if got := rec["suppressed_before"]; got != float64(1000-logBurst) {
		t.Errorf("suppressed_before = %v, want %d", got, 1000-logBurst)
	}
	// Distinct messages beyond maxLogKeys share one budget: the map stays
	// bounded.
	for i := range 10 * maxLogKeys {
		log.Error("http: error from " + strings.Repeat("y", i%7) + string(rune('a'+i%26)) + time.Duration(i).String())
	}
	if n := len(lim.keys); n > maxLogKeys+1 {
		t.Errorf("%d keys, want at most %d", n, maxLogKeys+1)
	}
}

// Issue 24: net/http's errors went to the standard logger; they go through
// the service's (JSON under log_format: json, rate-limited).
func TestHTTPServerLogsThroughService(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	c := simConfig(t, "")
	c.LogFormat = "json"
	s, err := New(ctx, c, Options{LogOutput: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer s.closeAll()
	srv := s.httpServer()
	if srv.IdleTimeout <= 0 || srv.ReadHeaderTimeout <= 0 {
		t.Errorf("IdleTimeout %v, ReadHeaderTimeout %v, want both set", srv.IdleTimeout, srv.ReadHeaderTimeout)
	}
	out.Reset()
	srv.ErrorLog.Printf("http: TLS handshake error from 127.0.0.1:1: EOF")
	var rec map[string]any
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatalf("net/http's error logged as %q, want a JSON record: %v", out.String(), err)
	}
	if rec["level"] != "WARN" || !strings.Contains(rec["msg"].(string), "TLS handshake error") {
		t.Errorf("record %v, want the error at WARN", rec)
	}
}
