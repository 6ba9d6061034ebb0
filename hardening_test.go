package proflow_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/syncbuf"
)

// A panic in the Observer is logged and stops nothing: the step returns
// its decision, the next step runs.
func TestObserverPanicDoesNotEscape(t *testing.T) {
	var log syncbuf.Buffer
	r := newRig(t, func(c *proflow.Config) {
		c.Observer = func(proflow.Decision) { panic("observer boom") }
		c.Logger = slog.New(slog.NewTextHandler(&log, nil))
	})
	r.scores = []float64{0, 1, 0, 0}
	d := r.step()
	if !d.Rerouted || r.placement() != 1 {
		t.Errorf("step with a panicking observer: %s, rerouted %v, placement %d; want the move made", d.Reason, d.Rerouted, r.placement())
	}
	if !strings.Contains(log.String(), "proflow observer failed") || !strings.Contains(log.String(), "observer boom") {
		t.Errorf("log lacks the observer's panic:\n%s", log.String())
	}
	fr := newFlowRig(t, func(c *proflow.MultiConfig) {
		c.Observer = func(proflow.Decision) { panic("observer boom") }
	}, nil)
	fr.add(1, 0, 0)
	fr.setScores(1, 0, 1, 0, 0)
	if s := fr.step(); s.Rerouted != 1 {
		t.Errorf("multi step with a panicking observer: %d rerouted, want 1", s.Rerouted)
	}
}

// A shadow MultiController changes nothing on the fabric, not even when a
// flow is removed from it: a Releaser enforcer is never asked to release.
func TestShadowNeverReleases(t *testing.T) {
	var rel *releasingEnforcer
	r := newFlowRig(t, func(c *proflow.MultiConfig) { c.Shadow = true }, func(f *flowFabric) proflow.Enforcer {
		rel = &releasingEnforcer{Enforcer: f}
		return rel
	})
	r.add(1, 0, 0)
	r.step()
	if err := r.ctrl.RemoveFlow(flowN(1)); err != nil {
		t.Fatal(err)
	}
	s := r.step()
	rel.mu.Lock()
	defer rel.mu.Unlock()
	if len(rel.released) != 0 || s.Released != 0 {
		t.Errorf("shadow controller released %v (summary %d), want nothing", rel.released, s.Released)
	}
}

// A gate that admits a "move" to the current switch, or writes the
// placement, moves nothing and reports no reroute.
func TestGateCannotFakeAMove(t *testing.T) {
	r := newRig(t, nil)
	r.gate = func(d *proflow.Decision) {
		d.Best, d.Target, d.Reason = d.Current, d.Current, proflow.ReasonRerouted
	}
	if d := r.step(); d.Reason != proflow.ReasonStay || d.Rerouted || d.Target != -1 {
		t.Errorf("a gate admitting the current switch: reason %s, rerouted %v, target %d; want stay", d.Reason, d.Rerouted, d.Target)
	}
	bad := newFlowRigWithGate(t, proflow.GateFunc(func(d *proflow.Decision) { d.Current, d.Reason = 9, proflow.ReasonStay }))
	bad.add(1, 0, 2)
	s := bad.step()
	if len(s.Decisions) != 1 || s.Decisions[0].Current != 2 {
		t.Fatalf("a gate writing the placement: %+v, want the step to keep the flow's switch 2", s.Decisions)
	}
}

// A refused duplicate AddFlow does not reset the live flow's parts.
func TestDuplicateAddFlowResetsNothing(t *testing.T) {
	g := &countingGate{}
	r := newFlowRigWithGate(t, g)
	r.add(1, 0, 0)
	before := g.resets
	if err := r.ctrl.AddFlow(proflow.ProtectedFlow{ID: flowN(1)}, 0); !errors.Is(err, proflow.ErrFlowProtected) {
		t.Fatalf("second AddFlow = %v, want ErrFlowProtected", err)
	}
	if g.resets != before {
		t.Errorf("the refused AddFlow reset the live gate (%d resets, %d before)", g.resets, before)
	}
}

// A bad Interval is reported once, not again as each setting derived
// from it.
func TestNegativeIntervalReportedOnce(t *testing.T) {
	cfg := proflow.DefaultConfig()
	cfg.Flow = testFlow
	cfg.Interval = -time.Second
	_, err := proflow.NewController(cfg, nil, nil, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "interval -1s") {
		t.Fatalf("NewController with interval -1s = %v, want the interval named", err)
	}
	for _, derived := range []string{"step timeout -1s", "max clock skew -1s", "max sample age -2s"} {
		if strings.Contains(err.Error(), derived) {
			t.Errorf("error %q also reports %q, which the config did not set", err, derived)
		}
	}
}

// countingGate admits nothing and counts its resets.
type countingGate struct{ resets int }

func (g *countingGate) Admit(d *proflow.Decision) { d.Target, d.Reason = -1, proflow.ReasonStay }
func (g *countingGate) Reset()                    { g.resets++ }

// newFlowRigWithGate is newFlowRig whose every flow gets gate g.
func newFlowRigWithGate(t *testing.T, g proflow.Gate) *flowRig {
	t.Helper()
	return newFlowRigWith(t, func(p *proflow.FlowParts) {
		p.Gate = func(proflow.ProtectedFlow) (proflow.Gate, error) { return g, nil }
	})
}

// newFlowRigWith is newFlowRig with its parts changed by mod.
func newFlowRigWith(t *testing.T, mod func(*proflow.FlowParts)) *flowRig {
	t.Helper()
	r := newFlowRig(t, nil, nil)
	r.ctrl.Close()
	cfg := proflow.DefaultMultiConfig()
	cfg.Clock = r.clock
	b := testBaseline
	cfg.Baseline = &b
	parts := r.parts()
	mod(&parts)
	ctrl, err := proflow.NewMultiController(cfg, r.fab, parts, r.fab)
	if err != nil {
		t.Fatal(err)
	}
	r.ctrl = ctrl
	return r
}

// forecastingBatch scores switch 1 above the rest for every row and
// forecasts 42 B/s for whichever flow it is asked about.
type forecastingBatch struct{ asked int }

func (b *forecastingBatch) ScoreBatch(scores []float64, in *proflow.BatchInput) error {
	for j := range in.N {
		scores[j*4+1] = 1
	}
	return nil
}

func (b *forecastingBatch) Forecast(f *proflow.FlowForecast, in *proflow.Input) error {
	b.asked++
	*f = proflow.FlowForecast{OK: true, Throughput: 42}
	return nil
}

// A BatchPolicy that is a Forecaster forecasts on the batched path as a
// Policy does on the per-flow one: the gate sees the forecast.
func TestBatchPathForecasts(t *testing.T) {
	batch := &forecastingBatch{}
	var seen []proflow.FlowForecast
	r := newFlowRigWith(t, func(p *proflow.FlowParts) {
		p.Policy, p.Batch = nil, batch
		p.Gate = func(proflow.ProtectedFlow) (proflow.Gate, error) {
			return proflow.GateFunc(func(d *proflow.Decision) {
				seen = append(seen, d.Forecast)
				d.Target, d.Reason = -1, proflow.ReasonVotes
			}), nil
		}
	})
	r.add(1, 0, 0)
	r.add(2, 0, 0)
	r.step()
	if batch.asked != 2 || len(seen) != 2 || !seen[0].OK || seen[1].Throughput != 42 {
		t.Errorf("batched step: %d forecasts asked, the gates saw %+v; want both flows' forecasts", batch.asked, seen)
	}
}

// A flow whose reverse is protected is refused: the southbounds place a
// connection's two directions with the same rules.
func TestMultiRefusesTheReverseFlow(t *testing.T) {
	r := newFlowRig(t, nil, nil)
	r.add(1, 0, 0)
	err := r.ctrl.AddFlow(proflow.ProtectedFlow{ID: flowN(1).Reverse()}, 1)
	if !errors.Is(err, proflow.ErrFlowProtected) || !strings.Contains(err.Error(), "its reverse") {
		t.Errorf("AddFlow of flow 1's reverse = %v, want ErrFlowProtected naming the reverse", err)
	}
}
