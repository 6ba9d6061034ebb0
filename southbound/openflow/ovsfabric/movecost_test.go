package ovsfabric

import (
	"testing"
	"time"
)

func TestRateLogRecovery(t *testing.T) {
	at := time.Unix(1000, 0)
	var l rateLog
	// 100 ms reports: 10 kB each (100 kB/s) until the move, 1 kB for 1 s
	// after it, then 10 kB again.
	for i := -20; i < 40; i++ {
		b := int64(10_000)
		if i >= 0 && i < 10 {
			b = 1_000
		}
		l.reps = append(l.reps, SinkReport{Time: at.Add(time.Duration(i+1) * moveReport), Bytes: b})
	}
	if got := l.mean(at.Add(-time.Second), at); got != 100_000 {
		t.Errorf("mean before the move %v B/s, want 100000", got)
	}
	if got := l.recovery(at, at.Add(4*time.Second), 90_000); got != time.Second {
		t.Errorf("recovery %v, want 1s (the first 500 ms at 90%% starts then)", got)
	}
	if got := l.recovery(at, at.Add(1200*time.Millisecond), 90_000); got != -1 {
		t.Errorf("recovery within 1.2 s %v, want -1", got)
	}
}
