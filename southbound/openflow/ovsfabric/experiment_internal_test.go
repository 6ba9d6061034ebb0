package ovsfabric

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// The baseline phase fits before the congestion: the default (4 discarded,
// 10 averaged) where there is room, fewer samples where there is less, an
// error where not even two fit.
func TestBaselinePhase(t *testing.T) {
	for _, c := range []struct {
		start            time.Duration
		warmup, samples  int
		wantErrSubstring string
	}{
		{10 * time.Second, 4, 10, ""},
		{5 * time.Second, 4, 5, ""},
		{3500 * time.Millisecond, 4, 2, ""},
		{3 * time.Second, 0, 0, "too early"},
	} {
		w, s, err := baselinePhase(c.start, 500*time.Millisecond, 4, 10)
		if c.wantErrSubstring != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrSubstring) {
				t.Errorf("start %v: %v, want an error containing %q", c.start, err, c.wantErrSubstring)
			}
			continue
		}
		if err != nil || w != c.warmup || s != c.samples {
			t.Errorf("start %v: warmup %d, samples %d, %v; want %d, %d", c.start, w, s, err, c.warmup, c.samples)
		}
	}
}

func TestHostAddr(t *testing.T) {
	w := openflow.PaperFabric()
	if a, err := hostAddr(w, "h7"); err != nil || a != netip.MustParseAddr("10.0.0.7") {
		t.Errorf("hostAddr(h7) = %v, %v; want 10.0.0.7", a, err)
	}
	if _, err := hostAddr(w, "h9"); err == nil || !strings.Contains(err.Error(), `"h9"`) || !strings.Contains(err.Error(), "h8") {
		t.Errorf("hostAddr(h9) = %v, want an error naming h9 and the hosts there are", err)
	}
}
