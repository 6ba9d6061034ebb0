package policy

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// forecastStep is one Admit of a distress gate that counts forecasts.
type forecastStep struct {
	phi      float64 // the flow's measured throughput, bytes/s
	forecast float64 // the policy's forecast of it, bytes/s; < 0 for none
	appl     float64 // the forecast's application-limited share
	target   int
	reason   proflow.Reason
}

func runForecast(t *testing.T, g *Gate, steps []forecastStep) {
	t.Helper()
	for i, s := range steps {
		d := proflow.Decision{Time: at(0.5 * float64(i)), Current: 0, Scores: []float64{0, 1}, Throughput: s.phi, Best: -1, Target: -1}
		if s.forecast >= 0 {
			d.Forecast = proflow.FlowForecast{OK: true, Throughput: s.forecast, AppLimited: s.appl}
		}
		g.Admit(&d)
		if d.Err != nil {
			t.Fatalf("step %d: unexpected error %v", i, d.Err)
		}
		if d.Target != s.target || d.Reason != s.reason {
			t.Errorf("step %d (φ %g, forecast %g): target %d reason %s, want %d %s", i, s.phi, s.forecast, d.Target, d.Reason, s.target, s.reason)
		}
	}
}

// With Forecast, Consecutive forecasts below the level make distress while
// the flow's own samples are still healthy; without it, the same
// forecasts change nothing.
func TestGateDistressForecast(t *testing.T) {
	base := DistressConfig{Fraction: 0.9, Consecutive: 2, Smoothing: 0.1}
	cfg := GateConfig{Margin: 0.2, Votes: 20, Cooldown: 15 * time.Second, Distress: base}
	cfg.Distress.Forecast = true
	const healthy, low = 20e6, 10e6
	votes, moved := proflow.ReasonVotes, proflow.ReasonRerouted

	t.Run("two low forecasts in a row move the flow", func(t *testing.T) {
		g, _ := NewGate(cfg)
		runForecast(t, g, []forecastStep{
			{healthy, healthy, 0, -1, votes},
			{healthy, low, 0, -1, votes}, // one low forecast is not distress
			{healthy, healthy, 0, -1, votes},
			{healthy, low, 0, -1, votes},
			{healthy, low, 0, 1, moved},
		})
	})
	t.Run("a step without a forecast ends the run", func(t *testing.T) {
		g, _ := NewGate(cfg)
		runForecast(t, g, []forecastStep{
			{healthy, healthy, 0, -1, votes},
			{healthy, low, 0, -1, votes},
			{healthy, -1, 0, -1, votes},
			{healthy, low, 0, -1, votes},
		})
	})
	t.Run("an application-limited forecast is not low", func(t *testing.T) {
		g, _ := NewGate(cfg)
		runForecast(t, g, []forecastStep{
			{healthy, healthy, 0, -1, votes},
			{healthy, low, 0.5, -1, votes},
			{healthy, low, 0.9, -1, votes},
			{healthy, low, 0.9, -1, votes},
		})
	})
	t.Run("off, the forecasts change nothing", func(t *testing.T) {
		off := cfg
		off.Distress = base
		g, _ := NewGate(off)
		runForecast(t, g, []forecastStep{
			{healthy, healthy, 0, -1, votes},
			{healthy, low, 0, -1, votes},
			{healthy, low, 0, -1, votes},
			{healthy, low, 0, -1, votes},
		})
	})
	t.Run("low samples still make distress", func(t *testing.T) {
		g, _ := NewGate(cfg)
		runForecast(t, g, []forecastStep{
			{healthy, healthy, 0, -1, votes},
			{low, healthy, 0, -1, votes},
			{low, healthy, 0, 1, moved},
		})
	})

	// A forecast the gate cannot compare holds the placement, naming it.
	g, _ := NewGate(cfg)
	for _, f := range []proflow.FlowForecast{
		{OK: true, Throughput: -1},
		{OK: true, Throughput: math.Inf(1)},
		{OK: true, Throughput: math.NaN()},
		{OK: true, Throughput: 1, AppLimited: 2},
	} {
		d := proflow.Decision{Time: at(0), Current: 0, Scores: []float64{0, 1}, Throughput: healthy, Forecast: f, Best: -1, Target: -1}
		g.Admit(&d)
		if d.Err == nil || !strings.Contains(d.Err.Error(), "forecast throughput") || d.Target != -1 || d.Reason != proflow.ReasonPolicy {
			t.Errorf("forecast %+v: target %d, reason %s, error %v; want a held placement and the forecast named", f, d.Target, d.Reason, d.Err)
		}
	}
}
