package ovsfabric

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Sweep is an evaluation on the real fabric: every policy on every
// scenario, Repeats times, one episode after another (each on a fabric
// built for it, so every episode starts with a full bucket). Repeat r runs
// every scenario under every policy before repeat r+1 starts, so that a
// drift of the machine (another process taking the cores) spreads over the
// policies. Its episodes go to eval.Summarize like the simulated
// evaluation's.
type Sweep struct {
	// Experiment is the template of every episode: Fabric, Listen, Scale,
	// Warmup, Window, Out and Logger. Its Policy, Scenario, Seed, Repeat
	// and TraceFile are set per episode.
	Experiment Experiment
	Scenarios  []*sim.Scenario
	Policies   []eval.PolicySpec
	Repeats    int
	// Seed is the base seed; episode (scenario, r) is labelled with
	// eval.EpisodeSeed(Seed, scenario, r), as in the simulated evaluation.
	Seed uint64
	// TraceDir, when set, receives every episode's trace, named by
	// TraceName.
	TraceDir string
	// Progress, when set, is called after each episode.
	Progress func(SweepProgress)
}

// SweepProgress describes an episode that has just finished.
type SweepProgress struct {
	Done, Total int
	Episode     *eval.Episode
	// Took is the episode's wall-clock time, building and tearing down the
	// fabric included.
	Took time.Duration
}

// Window returns the shortest evaluation window of the sweep's episodes, as
// eval.Options.Window wants it.
func (s Sweep) Window() (time.Duration, error) {
	var w time.Duration
	for _, sc := range s.Scenarios {
		p, err := s.plan(sc)
		if err != nil {
			return 0, err
		}
		if d := p.End - p.CongestionStart; w == 0 || d < w {
			w = d
		}
	}
	return w, nil
}

func (s Sweep) plan(sc *sim.Scenario) (*Plan, error) {
	scale := s.Experiment.Scale
	if s.Experiment.Fabric.BucketRate != "" {
		rate, err := ParseRate(s.Experiment.Fabric.BucketRate)
		if err != nil {
			return nil, fmt.Errorf("ovsfabric: %w", err)
		}
		scale.BucketRateBytesPerSec = rate
	}
	p, err := scale.Plan(sc)
	if err != nil {
		return nil, err
	}
	return p.Retime(s.Experiment.Warmup, s.Experiment.Window), nil
}

// check refuses, before anything runs, what would fail later or mix up
// episodes: no scenario, policy or repeat, duplicate or unnamed ones, a
// policy that cannot run on a real fabric, a scenario the scaling refuses,
// and trace names that would leave TraceDir.
func (s Sweep) check() error {
	var errs []error
	if len(s.Scenarios) == 0 || len(s.Policies) == 0 || s.Repeats < 1 {
		errs = append(errs, fmt.Errorf("%d scenarios, %d policies, %d repeats: want at least one of each", len(s.Scenarios), len(s.Policies), s.Repeats))
	}
	seen := map[string]bool{}
	for i, sc := range s.Scenarios {
		if sc == nil || sc.Name == "" || seen[sc.Name] {
			errs = append(errs, fmt.Errorf("scenario %d: nil, unnamed or named as another, want unique names", i))
			continue
		}
		seen[sc.Name] = true
		if _, err := s.plan(sc); err != nil {
			errs = append(errs, err)
		}
	}
	seen = map[string]bool{}
	for i, p := range s.Policies {
		switch {
		case p.Name == "" || seen[p.Name]:
			errs = append(errs, fmt.Errorf("policy %d: unnamed or named as another (%q), want unique names", i, p.Name))
		case p.New == nil || p.ForScenario != nil:
			errs = append(errs, fmt.Errorf("policy %s: want a policy built per episode (reference or agent), not one that reads the scenario", p.Name))
		}
		seen[p.Name] = true
	}
	if s.TraceDir != "" {
		for _, sc := range s.Scenarios {
			for _, p := range s.Policies {
				if sc != nil && !filepath.IsLocal(TraceName(sc.Name, p.Name, 0)) {
					errs = append(errs, fmt.Errorf("trace file of scenario %q and policy %q would not lie in %s", sc.Name, p.Name, s.TraceDir))
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ovsfabric: invalid sweep: %w", err)
	}
	return nil
}

// Run runs the sweep and returns its episodes for eval.Summarize. It stops
// at the first failing episode and returns the episodes done before it
// with the error; their traces are already in TraceDir.
func (s Sweep) Run(ctx context.Context) ([]*eval.Episode, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	total := s.Repeats * len(s.Scenarios) * len(s.Policies)
	var out []*eval.Episode
	for r := range s.Repeats {
		for _, sc := range s.Scenarios {
			for _, p := range s.Policies {
				x := s.Experiment
				x.Policy, x.Scenario, x.Repeat, x.Seed = p, sc, r, eval.EpisodeSeed(s.Seed, sc.Name, r)
				if s.TraceDir != "" {
					x.TraceFile = filepath.Join(s.TraceDir, TraceName(sc.Name, p.Name, r))
				}
				start := time.Now()
				tr, err := x.Run(ctx)
				if err != nil {
					return out, fmt.Errorf("ovsfabric: episode %s/%s repeat %d: %w", sc.Name, p.Name, r, err)
				}
				e, err := eval.FromTrace(tr, r)
				if err != nil {
					return out, err
				}
				out = append(out, e)
				if s.Progress != nil {
					s.Progress(SweepProgress{Done: len(out), Total: total, Episode: e, Took: time.Since(start)})
				}
			}
		}
	}
	return out, nil
}
