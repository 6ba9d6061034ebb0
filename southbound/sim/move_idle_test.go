package sim

import (
	"context"
	"testing"
	"time"
)

// An on/off flow moved in one of its idle gaps, with nothing in flight,
// keeps its window under every move model; moved in a burst it pays the
// profile's move cost (H-move's timeout on the testbed profile, the
// halved window on the default one).
func TestMoveIdleConnectionCostsNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		timeout bool
	}{
		{"testbed", TestbedConfig(), true},
		{"default", DefaultConfig(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := BuiltinScenario("O1") // 3 s bursts, 2 s gaps from the window's start
			if err != nil {
				t.Fatal(err)
			}
			sc.Congesters = nil
			f, err := New(tc.cfg, sc, 1)
			if err != nil {
				t.Fatal(err)
			}
			k := sc.ProtectedKind
			// advance to the start of the interval containing at; report
			// the protected stream there.
			at := func(d time.Duration) *stream {
				t.Helper()
				if err := f.Advance(d - f.Elapsed()); err != nil {
					t.Fatal(err)
				}
				return &f.e.streams[f.index[f.Flow()]]
			}
			place := func(s *stream) {
				t.Helper()
				to := 1
				if s.sw == 1 {
					to = 2
				}
				if err := f.Place(context.Background(), f.Flow(), to); err != nil {
					t.Fatal(err)
				}
			}
			start := sc.Start()
			gap := start + time.Duration(k.On) + time.Second           // 1 s into the first gap
			burst := start + time.Duration(k.On+k.Off) + 2*time.Second // 2 s into the second burst
			if k.Sending(gap) || !k.Sending(burst) {
				t.Fatalf("O1 sending at %v: %v, at %v: %v, want a gap and a burst", gap, k.Sending(gap), burst, k.Sending(burst))
			}
			s := at(gap)
			if s.ph != phSS && s.ph != phCA {
				t.Fatalf("phase %v in the gap, want an open connection", s.ph)
			}
			cwnd, ph := s.cwnd, s.ph
			place(s)
			if s.cwnd != cwnd || s.ph != ph {
				t.Errorf("moved idle: window %.1f in phase %v, want %.1f in %v (nothing in flight to lose or reorder)", s.cwnd, s.ph, cwnd, ph)
			}
			s = at(burst)
			if e := f.e; e.idle(s) {
				t.Fatalf("idle 2 s into a burst (queued %.0f B, last sent %.2f s ago)", s.queued(), e.now()-s.app.lastSend)
			}
			cwnd = s.cwnd
			place(s)
			switch {
			case tc.timeout && s.ph != phRTO:
				t.Errorf("moved in a burst: phase %v, want a retransmission timeout (H-move)", s.ph)
			case !tc.timeout && s.cwnd >= cwnd:
				t.Errorf("moved in a burst: window %.1f, was %.1f, want it reduced (reordering)", s.cwnd, cwnd)
			}
		})
	}
}
