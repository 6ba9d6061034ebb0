package policy

import (
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// With Idle the gate admits a candidate without its votes at an idle
// sample of the flow (nothing delivered while application-limited for at
// least half the interval) when the candidate reads less loaded than the
// current switch (Decision.Relieves); the margin and the cooldown still
// hold, and a sample that delivers something, one not
// application-limited, or a candidate that does not relieve the current
// switch counts votes as without it.
func TestGateIdle(t *testing.T) {
	type step struct {
		thr, app float64   // the flow's sample
		scores   []float64 // the policy's scores; the current switch is 0
		want     proflow.Reason
		since    time.Duration // since the last reroute, 0 for none
		relieves []bool        // Decision.Relieves; nil for switch 1 relieving the current switch
	}
	better := []float64{0, 1, 0, 0}   // switch 1 beats the current by 1
	barely := []float64{0, 0.4, 0, 0} // by 0.4, under the margin
	cfg := GateConfig{Margin: 0.5, Votes: 5, Cooldown: 10 * time.Second, Idle: true}
	run := func(t *testing.T, cfg GateConfig, steps []step) {
		t.Helper()
		g := mustGate(t, cfg)
		for i, s := range steps {
			d := proflow.Decision{Time: at(float64(i)), Current: 0, Scores: s.scores, Throughput: s.thr, AppLimited: s.app, Best: -1, Target: -1, Relieves: s.relieves}
			if s.relieves == nil {
				d.Relieves = []bool{false, true, true, true}
			}
			if s.since > 0 {
				d.LastReroute = d.Time.Add(-s.since)
			}
			g.Admit(&d)
			if d.Err != nil {
				t.Fatalf("step %d: %v", i, d.Err)
			}
			if d.Reason != s.want {
				t.Errorf("step %d (throughput %v, app-limited %v): reason %q, want %q", i, s.thr, s.app, d.Reason, s.want)
			}
		}
	}
	t.Run("an idle sample waives the votes", func(t *testing.T) {
		run(t, cfg, []step{{1e6, 0, better, proflow.ReasonVotes, 0, nil}, {0, 1, better, proflow.ReasonRerouted, 0, nil}})
	})
	t.Run("the first idle sample waives them too", func(t *testing.T) {
		run(t, cfg, []step{{0, 0.5, better, proflow.ReasonRerouted, 0, nil}})
	})
	t.Run("the margin still holds", func(t *testing.T) {
		run(t, cfg, []step{{0, 1, barely, proflow.ReasonMargin, 0, nil}})
	})
	t.Run("the cooldown still holds", func(t *testing.T) {
		run(t, cfg, []step{{0, 1, better, proflow.ReasonCooldown, 3 * time.Second, nil}})
	})
	t.Run("a sample that delivers is not idle", func(t *testing.T) {
		run(t, cfg, []step{{1e3, 1, better, proflow.ReasonVotes, 0, nil}})
	})
	t.Run("a sample not application-limited is not idle", func(t *testing.T) {
		run(t, cfg, []step{{0, 0.4, better, proflow.ReasonVotes, 0, nil}})
	})
	t.Run("a candidate that does not relieve the current switch needs its votes", func(t *testing.T) {
		run(t, cfg, []step{{0, 1, better, proflow.ReasonVotes, 0, []bool{false, false, true, true}}})
	})
	t.Run("a decision without the marks relieves nothing", func(t *testing.T) {
		run(t, cfg, []step{{0, 1, better, proflow.ReasonVotes, 0, []bool{}}})
	})
	t.Run("off, the paper's gate counts votes at an idle sample", func(t *testing.T) {
		off := cfg
		off.Idle = false
		run(t, off, []step{{0, 1, better, proflow.ReasonVotes, 0, nil}})
	})
	t.Run("a bad sample is refused", func(t *testing.T) {
		g := mustGate(t, cfg)
		d := proflow.Decision{Time: at(0), Current: 0, Scores: better, Throughput: -1, Best: -1, Target: -1}
		g.Admit(&d)
		if d.Err == nil || d.Reason != proflow.ReasonPolicy || d.Target != -1 {
			t.Errorf("throughput -1: reason %q, target %d, err %v; want %q, -1 and an error", d.Reason, d.Target, d.Err, proflow.ReasonPolicy)
		}
	})
}
