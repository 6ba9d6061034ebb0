package sim

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// An rr flow's retransmission after a move while it is idle carries only
// what its application wrote: delivered bytes never run ahead of issued
// ones (the testbed profile's move costs a timeout).
func TestRRProbeCarriesOnlyWrittenBytes(t *testing.T) {
	sc := &Scenario{Name: "rrlow", ProtectedSwitch: "agg1",
		ProtectedKind: FlowKind{Kind: KindRR, RequestBytes: 1000, RequestRate: 1}}
	f, err := New(TestbedConfig(), sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	a := f.e.streams[0].app
	if err := f.Advance(20500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := f.Place(context.Background(), f.Flow(), 1); err != nil {
		t.Fatal(err)
	}
	for range 40 {
		if err := f.Advance(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if a.delivered > a.issued+1e-6 {
			t.Fatalf("at %v: %.0f bytes delivered, %.0f issued: the retransmission carried bytes never written", f.now, a.delivered, a.issued)
		}
	}
}

// A capped stream sends at most its cap from its first step on, the step
// its handshake completes in included.
func TestCapHoldsFromTheFirstStep(t *testing.T) {
	const capBps = 1e6 / 8 // 1 Mbit/s
	sc := &Scenario{Name: "cap", ProtectedSwitch: "agg2", Congesters: []Congester{{Host: "h2",
		Streams: 1, StreamCap: Rate(capBps), Arrive: Duration(time.Second), Switch: "agg1"}}}
	for _, cfg := range []Config{DatacenterConfig(), TestbedConfig()} {
		f, err := New(cfg, sc, 1)
		if err != nil {
			t.Fatal(err)
		}
		limit := capBps*cfg.Step.Seconds() + 1e-6
		for f.now < 3*time.Second {
			if err := f.Advance(cfg.Step); err != nil {
				t.Fatal(err)
			}
			for i := range f.e.streams {
				if s := &f.e.streams[i]; s.capRate > 0 && s.send > limit {
					t.Fatalf("%s at %v: a stream capped at %.0f B/s offered %.0f B in a %v step, want at most %.0f", cfg.Name, f.now, capBps, s.send, cfg.Step, limit)
				}
			}
		}
	}
}

// WindowLoad leaves the scenario as it was: concurrent calls on one
// scenario do not write into its moves (go test -race).
func TestWindowLoadLeavesMoves(t *testing.T) {
	cfg := DefaultConfig()
	sc, err := ReadScenario(strings.NewReader(`{"name": "mv", "protected_switch": "agg1", "congesters": [
		{"host": "h2", "switch": "agg1", "arrive": "1s", "moves": [{"at": "10s", "switch": "agg2"}, {"at": "20s", "switch": "agg3"}, {"at": "30s", "switch": "agg4"}]}]}`), cfg)
	if err != nil {
		t.Fatal(err)
	}
	moves := sc.Congesters[0].Moves
	spare := moves[:cap(moves)]
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := sc.WindowLoad(cfg); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := len(moves); i < len(spare); i++ {
		if spare[i] != (Move{}) {
			t.Errorf("WindowLoad wrote %+v past the scenario's moves", spare[i])
		}
	}
}
