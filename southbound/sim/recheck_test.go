package sim_test

import (
	"context"
	"errors"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// Peek reads the rates since the last sample without changing any sample
// Collect returns, and reads, where nothing changes, what the interval's
// sample then reads.
func TestFabricPeek(t *testing.T) {
	ctx := t.Context()
	cfg := sim.DefaultConfig()
	sc := mustScenario(t, "S1")
	plain, err := sim.New(cfg, sc, 3)
	if err != nil {
		t.Fatal(err)
	}
	peeked, err := sim.New(cfg, sc, 3)
	if err != nil {
		t.Fatal(err)
	}
	var obs proflow.Observation
	if err := peeked.Peek(ctx, &obs); !errors.Is(err, proflow.ErrStale) {
		t.Errorf("Peek before the first sample: %v, want ErrStale", err)
	}
	half := cfg.Interval / 2
	var a, b, p proflow.Observation
	k := peeked.InitialSwitch()
	for i := range int(sc.Length() / cfg.Interval) {
		if err := plain.Advance(cfg.Interval); err != nil {
			t.Fatal(err)
		}
		if err := peeked.Advance(half); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if err := peeked.Peek(ctx, &p); err != nil {
				t.Fatalf("interval %d: Peek: %v", i, err)
			}
			if want := peeked.Now(); !p.Time.Equal(want) {
				t.Fatalf("interval %d: peek dated %v, want the half interval %v", i, p.Time, want)
			}
		}
		if err := peeked.Advance(cfg.Interval - half); err != nil {
			t.Fatal(err)
		}
		if err := plain.Collect(ctx, &a); err != nil {
			t.Fatal(err)
		}
		if err := peeked.Collect(ctx, &b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, b, cmpopts.EquateComparable(netip.Addr{})); diff != "" {
			t.Fatalf("interval %d: the sample after a peek differs (-without +with):\n%s", i, diff)
		}
		// Before congestion the flow runs alone at a steady rate: the
		// half interval's load is the whole interval's, within the noise.
		if i > 4 && i < int(sc.Start()/cfg.Interval)-1 {
			if got, want := p.Switches[k].TxRate, b.Switches[k].TxRate; math.Abs(got-want) > 0.1*want {
				t.Errorf("interval %d: peek tx rate %.0f, sample's %.0f; want them within 10%%", i, got, want)
			}
		}
	}
	// At a sample, a peek reads that sample.
	if err := peeked.Peek(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(b, p, cmpopts.EquateComparable(netip.Addr{})); diff != "" {
		t.Errorf("peek at a sample differs from Collect (-collect +peek):\n%s", diff)
	}
}

// Behind a gate with Drain.Recheck, RunEpisode rechecks the moves the gate
// defers within the interval and records each recheck in its step; where
// the crowd stays, the recheck makes the move.
func TestRunEpisodeRechecks(t *testing.T) {
	factory := func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
		pol := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
			scores[(in.Current+1)%len(scores)] = 1 // always the next switch
			return nil
		})
		g, err := policy.NewGate(policy.GateConfig{Margin: 0.5, Votes: 1, Cooldown: time.Hour,
			Drain: policy.DrainConfig{Depth: 10, Horizon: 2 * time.Second, Recheck: 300 * time.Millisecond}})
		return oneDimEncoder{}, pol, g, err
	}
	run := func() *trace.Episode {
		ep, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{Scenario: mustScenario(t, "S1"), Seed: 2, Policy: "recheck", NewPolicy: factory})
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	ep := run()
	if err := ep.Validate(); err != nil {
		t.Fatalf("trace: %v", err)
	}
	rechecks, moves := 0, 0
	for i, s := range ep.Steps {
		if s.Decision.Rerouted {
			t.Errorf("step %d moved at the step, want the move deferred to its recheck", i)
		}
		rc := s.Recheck
		if rc == nil {
			continue
		}
		rechecks++
		if want := s.Time.Add(time.Duration(s.Decision.Recheck)); !rc.Time.Equal(want) || s.Decision.Recheck <= 0 {
			t.Errorf("step %d: recheck at %v, want the %v the step asked for (%v)", i, rc.Time, time.Duration(s.Decision.Recheck), want)
		}
		if to, at, ok := s.Moved(); ok {
			moves++
			if at != rc.Time || i+1 >= len(ep.Steps) || ep.Steps[i+1].Switch != to {
				t.Errorf("step %d: moved to %d at %v, but the next step is on %d", i, to, at, ep.Steps[i+1].Switch)
			}
		}
	}
	if rechecks == 0 || moves != 1 {
		t.Errorf("%d rechecks, %d moves at a recheck; want rechecks and one move (the cooldown holds the rest)", rechecks, moves)
	}
	if diff := cmp.Diff(ep, run(), cmpopts.EquateComparable(netip.Addr{})); diff != "" {
		t.Errorf("a second run differs:\n%s", diff)
	}
}
