package eval

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// The default latency-threshold settings are what the calibration measures
// on the testbed profile; the datacenter profile's latencies are noisier
// relative to its shorter round trip.
func TestCalibrateLatencyThresholdProfiles(t *testing.T) {
	for _, tc := range []struct {
		cfg  sim.Config
		want policy.LatencyThresholdConfig
	}{
		{sim.TestbedConfig(), policy.DefaultLatencyThresholdConfig()},
		{sim.DatacenterConfig(), policy.LatencyThresholdConfig{Ratio: 1.5, CompletionRatio: 1.25, Consecutive: 2, Cooldown: 3 * time.Second}},
	} {
		r, err := CalibrateLatencyThreshold(context.Background(), tc.cfg, 40, 1, 2, DefaultLatencyOptions())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, r.Config); diff != "" {
			t.Errorf("profile %s: calibrated config (-want +got):\n%s", tc.cfg.Name, diff)
		}
		wantKinds := map[string]int{sim.KindBulk: 40, sim.KindRate: 40, sim.KindOnOff: 40, sim.KindRR: 40}
		if r.Episodes != 160 || r.Moved != 160 || !cmp.Equal(r.Kinds, wantKinds) || len(r.CompletionCurve) != 40 || len(r.RTTCurve) != 40 {
			t.Errorf("profile %s: %d quiet (%v) and %d moved episodes, %d and %d curve points; want 160 (%v), 160, 40, 40",
				tc.cfg.Name, r.Episodes, r.Kinds, r.Moved, len(r.CompletionCurve), len(r.RTTCurve), wantKinds)
		}
		// The calibrated rule, replayed on fresh congestion-free episodes
		// of every kind with the same seeds, never moves the flow.
		quiet, err := sim.RunMany(context.Background(), append(QuietEpisodes(tc.cfg, 40, 1, "quiet", nil), LatencyQuietEpisodes(tc.cfg, 40, 1)...), 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rate, err := latencyFalseAlarms(quiet, r.Config); err != nil || rate != 0 {
			t.Errorf("profile %s: calibrated rule false-alarms on %v of the quiet episodes (%v), want none", tc.cfg.Name, rate, err)
		}
		// One step more sensitive on either ratio does false-alarm: the
		// calibration is the most sensitive setting, not merely a safe one.
		for _, c := range []policy.LatencyThresholdConfig{
			{Ratio: r.Config.Ratio - 0.05, CompletionRatio: r.Config.CompletionRatio, Consecutive: 2},
			{Ratio: r.Config.Ratio, CompletionRatio: r.Config.CompletionRatio - 0.05, Consecutive: 2},
		} {
			if rate, err := latencyFalseAlarms(quiet, c); err != nil || rate == 0 {
				t.Errorf("profile %s: %+v false-alarms on %v (%v), want some: the calibration is not the most sensitive setting", tc.cfg.Name, c, rate, err)
			}
		}
	}
}

// latencyTrace is a scored episode whose flow has the given RTT p99s and
// completion p99s (nil: none), one sample per 500 ms.
func latencyTrace(rtts, completions []float64) *trace.Episode {
	ep := flowTrace(make([]float64, len(rtts))...)
	for i := range ep.Steps {
		ep.Steps[i].Obs.Flow.RTTP99 = rtts[i]
		if completions != nil {
			ep.Steps[i].Obs.Flow.CompletionP99 = completions[i]
		}
	}
	return ep
}

func TestAnalyseLatency(t *testing.T) {
	// One episode's RTT stays at 1.3 × its lowest for two samples:
	// round-trip ratios below 1.3 fire on it, 1.3 does not (strict). Its
	// completion times reach 1.5 × their lowest once only, and then twice
	// with a gap: no ratio of the grid fires on them.
	quiet := []*trace.Episode{
		latencyTrace([]float64{10, 10, 13, 13, 10}, nil),
		latencyTrace([]float64{10, 10, 10, 10, 10, 10}, []float64{20, 30, 20, 30, 20, 20}),
	}
	// A move at step 2 (1 s); the RTT is high at 1.5 s and 2 s, so the
	// rule without a cooldown would fire at 2 s, 1 s after the move: the
	// recovery ends at 1.5 s.
	moved := latencyTrace([]float64{10, 10, 10, 20, 20, 10, 10}, nil)
	moved.Steps[2].Decision.Rerouted = true
	opt := LatencyOptions{Consecutive: 2, From: 1.1, To: 1.4, Step: 0.1, Settle: 60}
	r, err := AnalyseLatency(quiet, []*trace.Episode{moved}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]LatencyPoint{{1.1, 0}, {1.2, 0}, {1.3, 0}, {1.4, 0}}, r.CompletionCurve); diff != "" {
		t.Errorf("completion curve (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]LatencyPoint{{1.1, 0.5}, {1.2, 0.5}, {1.3, 0}, {1.4, 0}}, r.RTTCurve); diff != "" {
		t.Errorf("round-trip curve (-want +got):\n%s", diff)
	}
	want := policy.LatencyThresholdConfig{Ratio: 1.3, CompletionRatio: 1.1, Consecutive: 2, Cooldown: 3 * time.Second}
	if r.Recovery != 1.5 || r.Config != want {
		t.Errorf("recovery %vs, config %+v; want 1.5s, %+v", r.Recovery, r.Config, want)
	}
	if diff := cmp.Diff(map[string]int{sim.KindBulk: 2}, r.Kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	var b bytes.Buffer
	if err := WriteLatencyCalibration(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| 1.2 | 0% | 50% |", "| 1.4 | 0% | 0% |", "completion 1.1, round trip 1.3", "Settings: ratio 1.3, completion ratio 1.1, consecutive 2, cooldown 3s"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("calibration Markdown lacks %q:\n%s", s, b.String())
		}
	}
	// On a longer grid the rows after both curves reach zero for good
	// are one.
	long, err := AnalyseLatency(quiet, nil, LatencyOptions{Consecutive: 2, From: 1.1, To: 2, Step: 0.1, Settle: 60})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteLatencyCalibration(&b, long); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| 1.3 | 0% | 0% |\n| 1.4 – 2 | 0% | 0% |\n") {
		t.Errorf("long grid: want the rows from 1.4 to 2 as one:\n%s", b.String())
	}
	// A grid where every ratio fires is refused, naming the grid.
	opt.To = 1.2
	if _, err := AnalyseLatency(quiet, nil, opt); err == nil || !strings.Contains(err.Error(), "every ratio from 1.1 to 1.2 fires") {
		t.Errorf("all-firing grid: %v", err)
	}
	opt.To = 1.4
	if _, err := AnalyseLatency(quiet, quiet[:1], opt); err == nil || !strings.Contains(err.Error(), "has no move") {
		t.Errorf("moved episode without a move: %v", err)
	}
	if _, err := AnalyseLatency(nil, nil, opt); err == nil || !strings.Contains(err.Error(), "no congestion-free episode") {
		t.Errorf("no quiet episode: %v", err)
	}
	if _, err := AnalyseLatency(quiet, nil, LatencyOptions{From: 0.9, To: 1.4, Step: 0.1, Settle: 60}); err == nil ||
		!strings.Contains(err.Error(), "consecutive 0") || !strings.Contains(err.Error(), "ratios 0.9 to 1.4, want finite and above 1") {
		t.Errorf("bad options: %v", err)
	}
}

// The latency-threshold calibration's extra quiet episodes leave
// QuietEpisodes, the throughput-drop calibration's, as they were: same
// names, seeds and (bulk) kind.
func TestQuietKindEpisodes(t *testing.T) {
	cfg := sim.TestbedConfig()
	bulk := QuietEpisodes(cfg, 5, 1, "quiet", nil)
	if bulk[1].Scenario.Name != "quiet-agg2" || bulk[1].Seed != EpisodeSeed(1, "quiet-agg2/1", 0) || !bulk[1].Scenario.PrimaryKind().IsBulk() {
		t.Errorf("QuietEpisodes[1] = %s seed %d kind %s, want quiet-agg2, EpisodeSeed(1, quiet-agg2/1, 0), bulk",
			bulk[1].Scenario.Name, bulk[1].Seed, bulk[1].Scenario.PrimaryKind().Name())
	}
	kinds := LatencyQuietEpisodes(cfg, 5, 1)
	if len(kinds) != 15 {
		t.Fatalf("%d episodes of the other kinds, want 15", len(kinds))
	}
	rr := kinds[11]
	if rr.Scenario.Name != "quiet-rr-agg2" || rr.Seed != EpisodeSeed(1, "quiet-rr-agg2/1", 0) || rr.Scenario.PrimaryKind().Name() != sim.KindRR {
		t.Errorf("rr episode 1 = %s seed %d kind %s, want quiet-rr-agg2, EpisodeSeed(1, quiet-rr-agg2/1, 0), rr", rr.Scenario.Name, rr.Seed, rr.Scenario.PrimaryKind().Name())
	}
	for _, sp := range kinds {
		if err := sp.Scenario.Validate(cfg); err != nil {
			t.Errorf("%s: %v", sp.Scenario.Name, err)
		}
	}
	if got := LatencyMovedEpisodes(cfg, 5, 1); len(got) != 15 || got[0].Scenario.Name != "moved-rate-agg1" {
		t.Errorf("%d moved episodes, the first %s; want 15 (5 of each kind but bulk), moved-rate-agg1", len(got), got[0].Scenario.Name)
	}
}

func TestLatencyThresholdPolicy(t *testing.T) {
	if _, err := LatencyThresholdPolicy(policy.LatencyThresholdConfig{Ratio: 1, CompletionRatio: 2, Consecutive: 1}); err == nil ||
		!strings.Contains(err.Error(), "policy latency-threshold") || !strings.Contains(err.Error(), "ratio 1, want a finite number > 1") {
		t.Errorf("bad config: %v", err)
	}
	spec, err := ReferencePolicy(LatencyThresholdName)
	if err != nil || spec.Name != LatencyThresholdName {
		t.Fatalf("ReferencePolicy(%s) = %v, %v", LatencyThresholdName, spec.Name, err)
	}
	_, p, _, err := spec.New(sim.TestbedConfig().Topology())
	if err != nil {
		t.Fatal(err)
	}
	if lt, ok := p.(*policy.LatencyThreshold); !ok || lt.Config() != policy.DefaultLatencyThresholdConfig() {
		t.Errorf("ReferencePolicy(%s) builds %T, want a *policy.LatencyThreshold with the defaults", LatencyThresholdName, p)
	}
}
