package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// LatencyThresholdName names the latency-threshold reference policy
// (policy.LatencyThreshold) in sweeps and reports.
const LatencyThresholdName = "latency-threshold"

// LatencyOptions controls the calibration of the latency-threshold policy
// (policy.LatencyThreshold) on congestion-free traffic, the way App. E
// calibrates the reactive threshold: the most sensitive ratios that never
// fire on traffic that needs no move. Start from DefaultLatencyOptions.
type LatencyOptions struct {
	// Consecutive is the debounce the ratios are calibrated for
	// (policy.LatencyThresholdConfig.Consecutive).
	Consecutive int `json:"consecutive"`
	// From, To and Step span the candidate ratios r, of completion times
	// and of round trips alike.
	From float64 `json:"from"`
	To   float64 `json:"to"`
	Step float64 `json:"step"`
	// Settle bounds how long after a move its latency is looked at,
	// seconds.
	Settle float64 `json:"settle"`
}

// DefaultLatencyOptions returns the calibration's settings: a debounce of
// two samples, ratios 1.05 to 3 by 0.05, moves looked at for 60 s.
func DefaultLatencyOptions() LatencyOptions {
	return LatencyOptions{Consecutive: 2, From: 1.05, To: 3, Step: 0.05, Settle: 60}
}

// Validate reports every problem of the options at once.
func (o LatencyOptions) Validate() error {
	var errs []error
	if o.Consecutive < 1 {
		errs = append(errs, fmt.Errorf("consecutive %d samples, want >= 1", o.Consecutive))
	}
	if !(o.From > 1) || math.IsInf(o.To, 0) {
		errs = append(errs, fmt.Errorf("ratios %v to %v, want finite and above 1", o.From, o.To))
	}
	if err := checkSpan("from", "to", "step", o.From, o.To, o.Step); err != nil {
		errs = append(errs, err)
	}
	if !(o.Settle > 0) || math.IsInf(o.Settle, 0) {
		errs = append(errs, fmt.Errorf("settle %vs, want a finite number > 0", o.Settle))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eval: invalid latency-threshold calibration options: %w", err)
	}
	return nil
}

// LatencyPoint is one point of a latency-threshold false-alarm curve.
type LatencyPoint struct {
	Ratio float64 `json:"ratio"`
	// FalseAlarmRate is the fraction of congestion-free episodes in which
	// the policy would move the flow.
	FalseAlarmRate float64 `json:"false_alarm_rate"`
}

// LatencyReport is the calibration of the latency-threshold policy.
type LatencyReport struct {
	Options LatencyOptions `json:"options"`
	// Episodes is the number of congestion-free episodes replayed, Kinds
	// how many of them each kind of protected flow had (by the kind their
	// scenario names, as QuietKindEpisodes names it; bulk otherwise).
	Episodes int            `json:"episodes"`
	Kinds    map[string]int `json:"kinds"`
	// CompletionCurve is the false-alarm rate of each candidate
	// completion-time ratio with the round-trip ratio at Options.To;
	// RTTCurve that of each round-trip ratio with the completion ratio
	// calibrated.
	CompletionCurve []LatencyPoint `json:"completion_curve"`
	RTTCurve        []LatencyPoint `json:"rtt_curve"`
	// Moved is the number of episodes moved once between two idle
	// switches; Recovery the longest time, seconds, from such a move to
	// the end of the last sample at which the calibrated rule without a
	// cooldown would fire.
	Moved    int     `json:"moved"`
	Recovery float64 `json:"recovery"`
	// Config is the calibrated policy: the lowest ratios without a false
	// alarm, the options' debounce, and a cooldown of Recovery rounded up
	// to a whole second plus one second.
	Config policy.LatencyThresholdConfig `json:"config"`
}

// AnalyseLatency calibrates policy.LatencyThreshold. quiet are
// congestion-free episodes under a policy that never moves (the flow
// alone; include every kind of flow the policy will protect): the policy
// is replayed on every step the controller scored. First the completion
// ratio: the lowest that never fires with the round-trip ratio at the
// grid's top; then the round-trip ratio: the lowest that never fires with
// that completion ratio. The result is replayed last, so it never fires
// on quiet by construction. moved are congestion-free episodes in which
// the flow was moved once (LatencyMovedEpisodes): the latency after the move
// sets the cooldown. It refuses invalid options, no quiet episode, quiet
// traffic on which even the grid's top ratio fires, and moved episodes
// without a move.
func AnalyseLatency(quiet, moved []*trace.Episode, opt LatencyOptions) (*LatencyReport, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if len(quiet) == 0 {
		return nil, errors.New("eval: latency-threshold calibration: no congestion-free episode, want at least one")
	}
	if err := checkTraces("latency-threshold calibration", quiet); err != nil {
		return nil, err
	}
	r := &LatencyReport{Options: opt, Episodes: len(quiet), Kinds: map[string]int{}, Moved: len(moved)}
	for _, ep := range quiet {
		r.Kinds[episodeKind(ep)]++
	}
	cfg := policy.LatencyThresholdConfig{Ratio: opt.To, CompletionRatio: opt.To, Consecutive: opt.Consecutive}
	// lowest sets *ratio to the lowest point of the grid without a false
	// alarm and returns the curve.
	lowest := func(ratio *float64) ([]LatencyPoint, error) {
		var curve []LatencyPoint
		best := math.NaN()
		for i := range int(spanPoints(opt.From, opt.To, opt.Step)) {
			*ratio = math.Round((opt.From+float64(i)*opt.Step)*1e6) / 1e6
			rate, err := latencyFalseAlarms(quiet, cfg)
			if err != nil {
				return nil, err
			}
			curve = append(curve, LatencyPoint{Ratio: *ratio, FalseAlarmRate: rate})
			if rate == 0 && math.IsNaN(best) {
				best = *ratio
			}
		}
		if math.IsNaN(best) {
			return nil, fmt.Errorf("eval: latency-threshold calibration: every ratio from %v to %v fires on congestion-free traffic, want a grid that reaches a ratio without false alarms", opt.From, opt.To)
		}
		*ratio = best
		return curve, nil
	}
	var err error
	if r.CompletionCurve, err = lowest(&cfg.CompletionRatio); err != nil {
		return nil, err
	}
	if r.RTTCurve, err = lowest(&cfg.Ratio); err != nil {
		return nil, err
	}
	if rate, err := latencyFalseAlarms(quiet, cfg); err != nil || rate != 0 {
		return nil, fmt.Errorf("eval: latency-threshold calibration: ratios %v and %v false-alarm on %v of the congestion-free episodes (%v), want none", cfg.CompletionRatio, cfg.Ratio, rate, err)
	}
	for _, ep := range moved {
		rec, err := latencyRecovery(ep, cfg, opt.Settle)
		if err != nil {
			return nil, err
		}
		r.Recovery = math.Max(r.Recovery, rec)
	}
	cfg.Cooldown = time.Duration(math.Ceil(r.Recovery)+1) * time.Second
	r.Config = cfg
	return r, nil
}

// episodeKind returns the kind of a trace's protected flow as
// QuietKindEpisodes names it in the scenario ("quiet-rr-agg1"); bulk when
// the name states none.
func episodeKind(ep *trace.Episode) string {
	for _, k := range []string{sim.KindRate, sim.KindOnOff, sim.KindRR} {
		if strings.Contains(ep.Meta.Scenario, "-"+k+"-") {
			return k
		}
	}
	return sim.KindBulk
}

// latencyFalseAlarms returns the fraction of the episodes in which
// policy.LatencyThreshold with cfg would move the flow.
func latencyFalseAlarms(quiet []*trace.Episode, cfg policy.LatencyThresholdConfig) (float64, error) {
	alarms := 0
	for _, ep := range quiet {
		p, err := policy.NewLatencyThreshold(cfg)
		if err != nil {
			return 0, err
		}
		fired, err := replayMoves(ep, LatencyThresholdName, p)
		if err != nil {
			return 0, err
		}
		if fired {
			alarms++
		}
	}
	return float64(alarms) / float64(len(quiet)), nil
}

// latencyRecovery returns the time, seconds, from ep's first move to the
// end of the last sample within settle seconds after it at which
// policy.LatencyThreshold with cfg and no cooldown, replayed over the
// episode, would fire: the cooldown that keeps the rule from moving the
// flow again on what the move itself did to its latency. 0 when it never
// fires after the move.
func latencyRecovery(ep *trace.Episode, cfg policy.LatencyThresholdConfig, settle float64) (float64, error) {
	at, err := firstMove(ep, "latency-threshold calibration")
	if err != nil {
		return 0, err
	}
	cfg.Cooldown = 0
	p, err := policy.NewLatencyThreshold(cfg)
	if err != nil {
		return 0, err
	}
	t0 := ep.Steps[at].Time
	interval := time.Duration(ep.Meta.Interval).Seconds()
	scores := make([]float64, ep.Meta.Topology.NumSwitches())
	rec := 0.0
	for i := range ep.Steps {
		st := &ep.Steps[i]
		dt := st.Time.Sub(t0).Seconds()
		if dt > settle {
			break
		}
		if !scored(st) {
			continue
		}
		if err := p.Score(scores, &proflow.Input{Time: st.Time, Obs: st.Obs, Current: st.Switch}); err != nil {
			return 0, fmt.Errorf("eval: replay %s on %s step %d: %w", LatencyThresholdName, ep.Meta.Scenario, st.Seq, err)
		}
		if i > at && scores[st.Switch] != 1 {
			rec = dt + interval
		}
	}
	return rec, nil
}

// QuietKinds returns the kinds of protected flow, beside bulk, whose
// congestion-free episodes calibrate the latency-threshold policy: a
// constant-bitrate flow at half the bucket rate, bursts at full rate (2 s
// every 5 s from the start of the window), and request/response traffic
// (32 KiB requests, 100 a second, Poisson arrivals).
func QuietKinds() []sim.FlowKind {
	return []sim.FlowKind{
		{Kind: sim.KindRate, RateFraction: 0.5},
		{Kind: sim.KindOnOff, On: sim.Duration(2 * time.Second), Off: sim.Duration(3 * time.Second), From: sim.Duration(20 * time.Second)},
		{Kind: sim.KindRR, RequestBytes: 32 << 10, RequestRate: 100, Arrivals: sim.ArrivalsPoisson},
	}
}

// LatencyQuietEpisodes returns the specs of the latency-threshold
// calibration's congestion-free episodes beyond QuietEpisodes' bulk ones:
// n of each of QuietKinds (QuietKindEpisodes, prefix "quiet").
func LatencyQuietEpisodes(cfg sim.Config, n int, seed uint64) []sim.EpisodeSpec {
	var specs []sim.EpisodeSpec
	for _, k := range QuietKinds() {
		specs = append(specs, QuietKindEpisodes(cfg, k, n, seed, "quiet", nil)...)
	}
	return specs
}

// LatencyMovedEpisodes returns the specs of the latency-threshold
// calibration's moved episodes beyond MovedEpisodes' bulk ones: n of each
// of QuietKinds, each moved once to the next switch 10 s after the
// controller's baseline phase (QuietKindEpisodes, prefix "moved").
func LatencyMovedEpisodes(cfg sim.Config, n int, seed uint64) []sim.EpisodeSpec {
	var specs []sim.EpisodeSpec
	for _, k := range QuietKinds() {
		specs = append(specs, QuietKindEpisodes(cfg, k, n, seed, "moved", moveOnce(10*time.Second))...)
	}
	return specs
}

// CalibrateLatencyThreshold simulates the congestion-free episodes of the
// calibration on profile cfg and analyses them (AnalyseLatency): episodes
// episodes of the flow alone of each kind (bulk as QuietEpisodes, the
// others LatencyQuietEpisodes), and as many of each in which the flow is
// moved once (MovedEpisodes and LatencyMovedEpisodes). Seeds derive from seed as for proflow
// calibrate's no-congestion episodes.
func CalibrateLatencyThreshold(ctx context.Context, cfg sim.Config, episodes int, seed uint64, parallel int, opt LatencyOptions) (*LatencyReport, error) {
	if episodes < 1 {
		return nil, fmt.Errorf("eval: latency-threshold calibration: %d episodes, want >= 1", episodes)
	}
	quietSpecs := append(QuietEpisodes(cfg, episodes, seed, "quiet", nil), LatencyQuietEpisodes(cfg, episodes, seed)...)
	quiet, err := sim.RunMany(ctx, quietSpecs, parallel, nil)
	if err != nil {
		return nil, fmt.Errorf("eval: latency-threshold calibration: no-congestion episodes: %w", err)
	}
	moved, err := sim.RunMany(ctx, append(MovedEpisodes(cfg, episodes, seed), LatencyMovedEpisodes(cfg, episodes, seed)...), parallel, nil)
	if err != nil {
		return nil, fmt.Errorf("eval: latency-threshold calibration: moved episodes: %w", err)
	}
	return AnalyseLatency(quiet, moved, opt)
}

// WriteLatencyCalibration writes the latency-threshold calibration as
// Markdown: the two false-alarm curves, the recovery from a move and the
// settings.
func WriteLatencyCalibration(w io.Writer, r *LatencyReport) error {
	if w == nil || r == nil {
		return errors.New("eval: write latency-threshold calibration: the writer and the report are required")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Latency-threshold policy (policy.LatencyThreshold)\n\n")
	var kinds []string
	for _, k := range []string{sim.KindBulk, sim.KindRate, sim.KindOnOff, sim.KindRR} {
		if n := r.Kinds[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	fmt.Fprintf(&b, "Replayed on %d congestion-free episodes (the flow alone: %s) with a debounce of %d samples: "+
		"the lowest ratio of the latency to its healthy level (the lowest seen) that never fires is the most sensitive setting, as App. E picks ξ_th. "+
		"Completion times first, round trips at ratio %g; then round trips, completion times at their ratio.\n\n",
		r.Episodes, strings.Join(kinds, ", "), r.Options.Consecutive, r.Options.To)
	b.WriteString("| ratio | false alarms, completion p99 | false alarms, round trip |\n|---|---|---|\n")
	// The rows up to the first at which both curves stay at zero, then
	// the rest of the grid in one row.
	rate := func(c []LatencyPoint, i int) float64 {
		if i < len(c) {
			return c[i].FalseAlarmRate
		}
		return math.NaN()
	}
	last := 0
	for i := range r.CompletionCurve {
		if rate(r.CompletionCurve, i) != 0 || rate(r.RTTCurve, i) != 0 {
			last = i + 1
		}
	}
	for i, p := range r.CompletionCurve {
		if i > last && i < len(r.CompletionCurve)-1 {
			fmt.Fprintf(&b, "| %g – %g | 0%% | 0%% |\n", p.Ratio, r.CompletionCurve[len(r.CompletionCurve)-1].Ratio)
			break
		}
		fmt.Fprintf(&b, "| %g | %s | %s |\n", p.Ratio, pct(p.FalseAlarmRate), pct(rate(r.RTTCurve, i)))
	}
	c := r.Config
	fmt.Fprintf(&b, "\nLowest ratios without a false alarm: completion %g, round trip %g. Slowest settling of the latency after a move between two idle switches "+
		"(%d episodes; the last sample at which the rule without a cooldown would fire): %.1f s.\n\n", c.CompletionRatio, c.Ratio, r.Moved, r.Recovery)
	fmt.Fprintf(&b, "Settings: ratio %g, completion ratio %g, consecutive %d, cooldown %v (latency-threshold.json; "+
		"proflow evaluate -latency and serve's policy.latency_threshold take them).\n", c.Ratio, c.CompletionRatio, c.Consecutive, c.Cooldown)
	_, err := io.WriteString(w, b.String())
	return err
}

// LatencyThresholdPolicy returns the latency-threshold reference policy
// (policy.LatencyThreshold) with the settings cfg, named
// LatencyThresholdName, behind an immediate gate (it debounces and cools
// down by itself).
func LatencyThresholdPolicy(cfg policy.LatencyThresholdConfig) (PolicySpec, error) {
	if err := cfg.Validate(); err != nil {
		return PolicySpec{}, fmt.Errorf("eval: policy %s: %w", LatencyThresholdName, err)
	}
	return immediateSpec(LatencyThresholdName, func(proflow.Topology) (proflow.Policy, error) { return policy.NewLatencyThreshold(cfg) }), nil
}
