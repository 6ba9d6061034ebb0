package training

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// TraceOptions says how EpisodeFromTrace finds an episode's baseline.
type TraceOptions struct {
	// BaselineWarmup and BaselineSamples are the controller's baseline phase
	// (proflow.Config): samples discarded, then samples averaged. A zero
	// BaselineWarmup selects the simulated fabric's (sim.Config's
	// ControllerWarmup, read from the trace), or for a trace without one
	// proflow.DefaultConfig()'s; a zero BaselineSamples selects
	// proflow.DefaultConfig()'s.
	BaselineWarmup, BaselineSamples int
	// Baseline, when set, is the episode's baseline (for a trace recorded
	// with a fixed proflow.Config.Baseline and no baseline phase).
	Baseline *proflow.Baseline
}

func (o TraceOptions) withDefaults(tr *trace.Episode) TraceOptions {
	d := proflow.DefaultConfig()
	if o.BaselineWarmup == 0 {
		o.BaselineWarmup = d.BaselineWarmup
		cfg := sim.DefaultConfig()
		if len(tr.Meta.SimConfig) > 0 && json.Unmarshal(tr.Meta.SimConfig, &cfg) == nil && cfg.Interval > 0 {
			o.BaselineWarmup = int(cfg.ControllerWarmup / cfg.Interval)
		}
	}
	if o.BaselineSamples == 0 {
		o.BaselineSamples = d.BaselineSamples
	}
	return o
}

// EpisodeFromTrace converts a recorded episode (package telemetry/trace:
// from the simulated fabric or from a controller on a real one) into a raw
// training Episode with the given id.
//
// The baseline is the one the controller learned: a proflow.BaselineEstimator
// with opt's warm-up and window replays the steps whose decision reason is
// proflow.ReasonBaseline, exactly as the controller fed it (a move or an
// unusable average restarts it). A trace without a baseline phase (a
// controller given a fixed baseline, or another recorder) is replayed from
// its first steps instead, whatever their reason; opt.Baseline overrides
// both.
//
// The episode starts after the warm-up samples (the protected flow's TCP
// ramp-up, which no placement changes) and holds every later step that has
// an observation, in order, with Placements[t] the switch that carried the
// flow during that observation's interval (trace.Step.Switch). A step
// without an observation (telemetry failed) is left out; the transition
// across it then spans two intervals and is still discounted by one γ
// (the dataset has no per-transition discount), which slightly overvalues
// what follows a gap. Simulated traces have no gaps.
func EpisodeFromTrace(tr *trace.Episode, id int, opt TraceOptions) (Episode, error) {
	if tr == nil {
		return Episode{}, errors.New("training: episode from trace: nil trace")
	}
	opt = opt.withDefaults(tr)
	name := fmt.Sprintf("training: episode from trace %s/%s seed %d", tr.Meta.Scenario, tr.Meta.Policy, tr.Meta.Seed)
	if err := tr.Meta.Validate(); err != nil {
		return Episode{}, fmt.Errorf("%s: %w", name, err)
	}
	var base proflow.Baseline
	switch {
	case opt.Baseline != nil:
		base = *opt.Baseline
	default:
		var err error
		base, err = replayBaseline(tr, opt, true)
		if errors.Is(err, proflow.ErrBaselinePending) {
			base, err = replayBaseline(tr, opt, false)
		}
		if err != nil {
			return Episode{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := base.Validate(); err != nil {
		return Episode{}, fmt.Errorf("%s: %w", name, err)
	}
	ep := Episode{ID: id, Baseline: base}
	seen := 0
	n := tr.Meta.Topology.NumSwitches()
	for i := range tr.Steps {
		st := &tr.Steps[i]
		if st.Obs == nil {
			continue
		}
		if seen++; seen <= opt.BaselineWarmup {
			continue
		}
		if st.Switch < 0 || st.Switch >= n {
			return Episode{}, fmt.Errorf("%s: step %d on switch %d, want 0..%d", name, st.Seq, st.Switch, n-1)
		}
		ep.Observations = append(ep.Observations, *st.Obs.Clone())
		ep.Placements = append(ep.Placements, st.Switch)
	}
	if len(ep.Observations) < 2 {
		return Episode{}, fmt.Errorf("%s: %d observations after the warm-up, want at least 2", name, len(ep.Observations))
	}
	return ep, nil
}

// replayBaseline feeds a BaselineEstimator like the controller does: the
// steps whose reason is ReasonBaseline (onlyPhase), or every step from the
// first, until it completes. It returns an error wrapping
// proflow.ErrBaselinePending when it never completes.
func replayBaseline(tr *trace.Episode, opt TraceOptions, onlyPhase bool) (proflow.Baseline, error) {
	est, err := proflow.NewBaselineEstimator(opt.BaselineWarmup, opt.BaselineSamples)
	if err != nil {
		return proflow.Baseline{}, err
	}
	var last error
	for i := range tr.Steps {
		st := &tr.Steps[i]
		if st.Obs == nil || (onlyPhase && st.Decision.Reason != proflow.ReasonBaseline) {
			continue
		}
		if !est.Add(st.Obs, st.Switch) {
			continue
		}
		b, err := est.Baseline()
		if err == nil {
			return b, nil
		}
		last = err
		est.Restart()
	}
	if last != nil {
		return proflow.Baseline{}, fmt.Errorf("no usable baseline (last: %v): %w", last, proflow.ErrBaselinePending)
	}
	have, want := est.Progress()
	return proflow.Baseline{}, fmt.Errorf("baseline has %d of %d samples: %w", have, want, proflow.ErrBaselinePending)
}
