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
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// DropOptions controls the calibration of the throughput-drop policy
// (policy.ThroughputDrop) on congestion-free traffic, the way App. E
// calibrates the reactive threshold: the most sensitive setting that
// never fires on traffic that needs no move. Start from
// DefaultDropOptions.
type DropOptions struct {
	// Consecutive is the debounce the fractions are calibrated for
	// (policy.ThroughputDropConfig.Consecutive).
	Consecutive int `json:"consecutive"`
	// From, To and Step span the candidate fractions f.
	From float64 `json:"from"`
	To   float64 `json:"to"`
	Step float64 `json:"step"`
	// Smoothing is the healthy level's α (policy.ThroughputDropConfig.Smoothing).
	Smoothing float64 `json:"smoothing"`
	// Settle bounds how long after a move its dip is looked for, seconds.
	Settle float64 `json:"settle"`
}

// DefaultDropOptions returns the calibration's settings: a debounce of two
// samples, fractions 0.50 to 0.95 by 0.05, α 0.1, dips looked for up to
// 60 s after a move.
func DefaultDropOptions() DropOptions {
	return DropOptions{Consecutive: 2, From: 0.5, To: 0.95, Step: 0.05, Smoothing: 0.1, Settle: 60}
}

// Validate reports every problem of the options at once.
func (o DropOptions) Validate() error {
	var errs []error
	if o.Consecutive < 1 {
		errs = append(errs, fmt.Errorf("consecutive %d samples, want >= 1", o.Consecutive))
	}
	if !(o.From > 0 && o.To < 1) {
		errs = append(errs, fmt.Errorf("fractions %v to %v, want within (0, 1)", o.From, o.To))
	}
	if err := checkSpan("from", "to", "step", o.From, o.To, o.Step); err != nil {
		errs = append(errs, err)
	}
	if !(o.Smoothing > 0 && o.Smoothing <= 1) {
		errs = append(errs, fmt.Errorf("smoothing %v, want in (0, 1]", o.Smoothing))
	}
	if !(o.Settle > 0) || math.IsInf(o.Settle, 0) {
		errs = append(errs, fmt.Errorf("settle %vs, want a finite number > 0", o.Settle))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eval: invalid throughput-drop calibration options: %w", err)
	}
	return nil
}

// DropPoint is one point of the throughput-drop false-alarm curve.
type DropPoint struct {
	Fraction float64 `json:"fraction"`
	// FalseAlarmRate is the fraction of congestion-free episodes in which
	// the policy would move the flow.
	FalseAlarmRate float64 `json:"false_alarm_rate"`
}

// DropReport is the calibration of the throughput-drop policy.
type DropReport struct {
	Options DropOptions `json:"options"`
	// Episodes is the number of congestion-free episodes replayed.
	Episodes int `json:"episodes"`
	// Curve is the false-alarm rate of each candidate fraction.
	Curve []DropPoint `json:"curve"`
	// Highest is the highest fraction with no false alarm; NaN if none.
	Highest float64 `json:"highest"`
	// Moved is the number of episodes moved once between two idle
	// switches; Recovery the longest time, seconds, from such a move to
	// the end of the last sample below Highest × the level before it.
	Moved    int     `json:"moved"`
	Recovery float64 `json:"recovery"`
	// Config is the calibrated policy: Highest, the options' debounce and
	// α, and a cooldown of Recovery rounded up to a whole second plus one
	// second, so the dip of a move on an idle path never fires again.
	Config policy.ThroughputDropConfig `json:"config"`
}

// AnalyseDrop calibrates policy.ThroughputDrop. quiet are congestion-free
// episodes under a policy that never moves (the flow alone): the policy is
// replayed on every step the controller scored, for every candidate
// fraction, and Highest is the highest fraction that never fires. moved
// are congestion-free episodes in which the flow was moved once (see
// CalibrateThroughputDrop): the dip after the move sets the cooldown. It
// refuses invalid options, no quiet episode, a fraction grid in which
// every point false-alarms, and moved episodes without a move.
func AnalyseDrop(quiet, moved []*trace.Episode, opt DropOptions) (*DropReport, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if err := checkTraces("throughput-drop calibration", quiet); err != nil {
		return nil, err
	}
	r := &DropReport{Options: opt, Episodes: len(quiet), Highest: math.NaN(), Moved: len(moved)}
	n := int(spanPoints(opt.From, opt.To, opt.Step))
	for i := range n {
		f := opt.From + float64(i)*opt.Step
		f = math.Round(f*1e6) / 1e6
		cfg := policy.ThroughputDropConfig{Fraction: f, Consecutive: opt.Consecutive, Smoothing: opt.Smoothing}
		alarms := 0
		for _, ep := range quiet {
			fired, err := replayFires(ep, cfg)
			if err != nil {
				return nil, err
			}
			if fired {
				alarms++
			}
		}
		rate := float64(alarms) / float64(len(quiet))
		r.Curve = append(r.Curve, DropPoint{Fraction: f, FalseAlarmRate: rate})
		if rate == 0 {
			r.Highest = f
		}
	}
	if math.IsNaN(r.Highest) {
		return nil, fmt.Errorf("eval: throughput-drop calibration: every fraction from %v to %v fires on congestion-free traffic, want a grid that reaches a fraction without false alarms", opt.From, opt.To)
	}
	for _, ep := range moved {
		rec, err := moveRecovery(ep, r.Highest, opt.Settle)
		if err != nil {
			return nil, err
		}
		r.Recovery = math.Max(r.Recovery, rec)
	}
	r.Config = policy.ThroughputDropConfig{Fraction: r.Highest, Consecutive: opt.Consecutive, Smoothing: opt.Smoothing,
		Cooldown: time.Duration(math.Ceil(r.Recovery)+1) * time.Second}
	return r, nil
}

// scored reports whether the controller scored the step (it was past the
// baseline phase and held a valid observation).
func scored(st *trace.Step) bool {
	return st.Obs != nil && st.Decision.Reason != proflow.ReasonBaseline && st.Decision.Reason != ""
}

// replayFires replays policy.ThroughputDrop with cfg over the steps of ep
// that the controller scored and reports whether it would have moved the
// flow.
func replayFires(ep *trace.Episode, cfg policy.ThroughputDropConfig) (bool, error) {
	p, err := policy.NewThroughputDrop(cfg)
	if err != nil {
		return false, err
	}
	return replayMoves(ep, ThroughputDropName, p)
}

// replayMoves replays p (named name) over the steps of ep that the
// controller scored and reports whether it would have moved the flow.
func replayMoves(ep *trace.Episode, name string, p proflow.Policy) (bool, error) {
	scores := make([]float64, ep.Meta.Topology.NumSwitches())
	for i := range ep.Steps {
		st := &ep.Steps[i]
		if !scored(st) {
			continue
		}
		if err := p.Score(scores, &proflow.Input{Time: st.Time, Obs: st.Obs, Current: st.Switch}); err != nil {
			return false, fmt.Errorf("eval: replay %s on %s step %d: %w", name, ep.Meta.Scenario, st.Seq, err)
		}
		if scores[st.Switch] != 1 {
			return true, nil
		}
	}
	return false, nil
}

// moveRecovery returns the time, seconds, from ep's first move to the end
// of the last sample within settle seconds after it whose throughput is
// below frac × the mean throughput of the 5 s before the move.
func moveRecovery(ep *trace.Episode, frac, settle float64) (float64, error) {
	at, err := firstMove(ep, "throughput-drop calibration")
	if err != nil {
		return 0, err
	}
	t0 := ep.Steps[at].Time
	var before []float64
	for i := at - 1; i >= 0 && t0.Sub(ep.Steps[i].Time) <= 5*time.Second; i-- {
		before = append(before, ep.Steps[i].Throughput)
	}
	level := mean(before)
	if !(level > 0) {
		return 0, fmt.Errorf("eval: throughput-drop calibration: moved episode %s (seed %d) has no throughput in the 5 s before its move", ep.Meta.Scenario, ep.Meta.Seed)
	}
	interval := time.Duration(ep.Meta.Interval).Seconds()
	rec := 0.0
	for i := at + 1; i < len(ep.Steps); i++ {
		dt := ep.Steps[i].Time.Sub(t0).Seconds()
		if dt > settle {
			break
		}
		if ep.Steps[i].Throughput < frac*level {
			rec = dt + interval
		}
	}
	return rec, nil
}

// firstMove returns the index of ep's first rerouted step, or an error
// naming the calibration what when it has none.
func firstMove(ep *trace.Episode, what string) (int, error) {
	for i := range ep.Steps {
		if _, _, ok := ep.Steps[i].Moved(); ok {
			return i, nil
		}
	}
	return 0, fmt.Errorf("eval: %s: moved episode %s (seed %d) has no move", what, ep.Meta.Scenario, ep.Meta.Seed)
}

// CalibrateThroughputDrop simulates the congestion-free episodes of the
// calibration on profile cfg and analyses them (AnalyseDrop): episodes
// episodes of the flow alone, spread over the aggregation switches as
// proflow calibrate spreads them, and as many in which the flow is moved
// once, 10 s after the controller's baseline phase, to the next switch
// (both idle). Seeds derive from seed as for proflow calibrate's
// no-congestion episodes; the moved ones from "moved-" names.
func CalibrateThroughputDrop(ctx context.Context, cfg sim.Config, episodes int, seed uint64, parallel int, opt DropOptions) (*DropReport, error) {
	if episodes < 1 {
		return nil, fmt.Errorf("eval: throughput-drop calibration: %d episodes, want >= 1", episodes)
	}
	quiet, err := sim.RunMany(ctx, QuietEpisodes(cfg, episodes, seed, "quiet", nil), parallel, nil)
	if err != nil {
		return nil, fmt.Errorf("eval: throughput-drop calibration: no-congestion episodes: %w", err)
	}
	moved, err := sim.RunMany(ctx, MovedEpisodes(cfg, episodes, seed), parallel, nil)
	if err != nil {
		return nil, fmt.Errorf("eval: throughput-drop calibration: moved episodes: %w", err)
	}
	return AnalyseDrop(quiet, moved, opt)
}

// QuietEpisodes returns the specs of n congestion-free episodes on profile
// cfg, the flow alone on switch i mod |S| in episode i: scenario
// "PREFIX-SWITCH", seed EpisodeSeed(seed, "PREFIX-SWITCH/i", 0). They run
// the static policy, or newPolicy when it is not nil.
func QuietEpisodes(cfg sim.Config, n int, seed uint64, prefix string, newPolicy sim.PolicyFactory) []sim.EpisodeSpec {
	return QuietKindEpisodes(cfg, sim.FlowKind{}, n, seed, prefix, newPolicy)
}

// QuietKindEpisodes is QuietEpisodes with a protected flow of kind k: for
// a bulk k (the zero FlowKind included) the same specs; for the other
// kinds scenario "PREFIX-KIND-SWITCH" with seed
// EpisodeSeed(seed, "PREFIX-KIND-SWITCH/i", 0).
func QuietKindEpisodes(cfg sim.Config, k sim.FlowKind, n int, seed uint64, prefix string, newPolicy sim.PolicyFactory) []sim.EpisodeSpec {
	if !k.IsBulk() {
		prefix += "-" + k.Name()
	}
	name := "static"
	if newPolicy == nil {
		static, _ := ReferencePolicy("static")
		newPolicy = static.New
	} else {
		name = prefix
	}
	specs := make([]sim.EpisodeSpec, 0, n)
	for i := range n {
		sw := cfg.Topology().Switches[i%cfg.Switches]
		sc := &sim.Scenario{Name: prefix + "-" + sw, ProtectedSwitch: sw, ProtectedKind: k}
		specs = append(specs, sim.EpisodeSpec{Scenario: sc, Seed: EpisodeSeed(seed, fmt.Sprintf("%s/%d", sc.Name, i), 0),
			Config: cfg, Policy: name, NewPolicy: newPolicy})
	}
	return specs
}

// MovedEpisodes returns the specs of the calibration's n moved episodes
// on profile cfg: the flow alone on switch i mod |S| in episode i, moved
// once to the next switch 10 s after the controller's baseline phase
// (scenario "moved-SWITCH", seed EpisodeSeed(seed, "moved-SWITCH/i", 0)).
func MovedEpisodes(cfg sim.Config, n int, seed uint64) []sim.EpisodeSpec {
	return QuietEpisodes(cfg, n, seed, "moved", moveOnce(10*time.Second))
}

// WriteDropCalibration writes the throughput-drop calibration as Markdown:
// the false-alarm curve, the recovery from a move and the settings.
func WriteDropCalibration(w io.Writer, r *DropReport) error {
	if w == nil || r == nil {
		return errors.New("eval: write throughput-drop calibration: the writer and the report are required")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Throughput-drop policy (policy.ThroughputDrop)\n\n")
	fmt.Fprintf(&b, "Replayed on %d congestion-free episodes (the flow alone) with a debounce of %d samples and α %g: "+
		"the highest fraction that never fires is the most sensitive setting, as App. E picks ξ_th.\n\n",
		r.Episodes, r.Options.Consecutive, r.Options.Smoothing)
	b.WriteString("| fraction | false-alarm rate |\n|---|---|\n")
	for _, p := range r.Curve {
		fmt.Fprintf(&b, "| %g | %s |\n", p.Fraction, pct(p.FalseAlarmRate))
	}
	fmt.Fprintf(&b, "\nHighest fraction without a false alarm: %g. Slowest recovery from a move between two idle switches "+
		"(%d episodes; last sample below the fraction of the level before the move): %.1f s.\n\n", r.Highest, r.Moved, r.Recovery)
	fmt.Fprintf(&b, "Settings: fraction %g, consecutive %d, cooldown %v, smoothing %g (throughput-drop.json; "+
		"proflow evaluate -drop and serve's policy.throughput_drop take them).\n", r.Config.Fraction, r.Config.Consecutive, r.Config.Cooldown, r.Config.Smoothing)
	_, err := io.WriteString(w, b.String())
	return err
}

// moveOnce returns a factory of a policy that moves the flow once, after
// delay from the first step it scores, to the next switch (by index),
// behind an immediate gate.
func moveOnce(delay time.Duration) sim.PolicyFactory {
	return func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
		enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
		if err != nil {
			return nil, nil, nil, err
		}
		var first time.Time
		moved := false
		p := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
			if first.IsZero() {
				first = in.Time
			}
			clear(scores)
			dest := in.Current
			if !moved && in.Time.Sub(first) >= delay {
				moved, dest = true, (in.Current+1)%len(scores)
			}
			scores[dest] = 1
			return nil
		})
		return enc, p, policy.Immediate(), nil
	}
}

// ThroughputDropPolicy returns the throughput-drop reference policy
// (policy.ThroughputDrop) with the settings cfg, named ThroughputDropName,
// behind an immediate gate (it debounces and cools down by itself).
func ThroughputDropPolicy(cfg policy.ThroughputDropConfig) (PolicySpec, error) {
	if err := cfg.Validate(); err != nil {
		return PolicySpec{}, fmt.Errorf("eval: policy %s: %w", ThroughputDropName, err)
	}
	return immediateSpec(ThroughputDropName, func(proflow.Topology) (proflow.Policy, error) { return policy.NewThroughputDrop(cfg) }), nil
}
