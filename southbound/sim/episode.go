package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/workpool"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// PolicyFactory builds the policy side of a controller for one episode: the
// state encoder, the policy and the gate. It is called once per episode, so
// every episode gets fresh, unshared instances (RunMany calls it from
// several goroutines at once).
type PolicyFactory func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error)

// EpisodeSpec says what one simulated episode runs.
type EpisodeSpec struct {
	// Scenario is the traffic. Required.
	Scenario *Scenario
	// Seed drives every random choice of the episode.
	Seed uint64
	// Config is the fabric; a zero Config means DefaultConfig().
	Config Config
	// Policy names the policy in the trace (for example "reactive").
	Policy string
	// NewPolicy builds the encoder, policy and gate. Required.
	NewPolicy PolicyFactory
	// Controller, when set, adjusts the controller's configuration after
	// RunEpisode has filled in the topology, flow, initial switch, clock
	// and interval (for example to set a fixed Baseline or a Logger).
	Controller func(*proflow.Config)
	// Labels are copied into the trace's metadata.
	Labels map[string]string
	// Progress, when set, is called as the episode advances with the
	// simulated time done and the episode's length: every ProgressEvery of
	// simulated time and once at the end, on the goroutine running the
	// episode (RunMany runs several at once). It does not change the trace.
	Progress func(done, total time.Duration)
}

// ProgressEvery is how much simulated time passes between two calls of
// EpisodeSpec.Progress.
const ProgressEvery = 5 * time.Second

// RunEpisode simulates one episode under a proflow.Controller and returns
// its trace. The controller runs on the fabric's virtual clock, exactly as
// it would run against a real fabric: it reconciles (Locate), learns its
// baseline while the protected flow runs alone before CongestionStart, and
// then steps once per interval until the end of the scenario, each step
// right after the fabric has simulated that interval. When a step's gate
// defers a move to a recheck before the next step (proflow.Decision
// Recheck), the fabric is simulated up to it, the controller rechecks
// (Fabric.Peek), and the recheck is recorded in that step
// (trace.Step.Recheck). The result depends only on the spec.
func RunEpisode(ctx context.Context, spec EpisodeSpec) (*trace.Episode, error) {
	if spec.Scenario == nil {
		return nil, errors.New("sim: run episode: scenario is nil")
	}
	if spec.NewPolicy == nil {
		return nil, fmt.Errorf("sim: run episode %s: policy factory is nil", spec.Scenario.Name)
	}
	cfg := spec.Config
	if cfg.Switches == 0 {
		cfg = DefaultConfig()
	}
	name := spec.Scenario.Name
	f, err := New(cfg, spec.Scenario, spec.Seed)
	if err != nil {
		return nil, fmt.Errorf("sim: run episode %s: %w", name, err)
	}
	topo := f.Topology()
	enc, pol, gate, err := spec.NewPolicy(topo)
	if err != nil {
		return nil, fmt.Errorf("sim: run episode %s: build policy %q: %w", name, spec.Policy, err)
	}
	cc := proflow.DefaultConfig()
	cc.Topology, cc.Flow, cc.InitialSwitch = topo, f.Flow(), f.InitialSwitch()
	cc.Clock, cc.Interval = f.Clock(), cfg.Interval
	cc.BaselineWarmup = int(cfg.ControllerWarmup / cfg.Interval)
	if spec.Controller != nil {
		spec.Controller(&cc)
	}
	rec := &recorder{tel: f}
	ctrl, err := proflow.NewController(cc, rec, enc, pol, gate, f)
	if err != nil {
		return nil, fmt.Errorf("sim: run episode %s: %w", name, err)
	}
	if err := ctrl.Reconcile(ctx); err != nil {
		return nil, fmt.Errorf("sim: run episode %s: %w", name, err)
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sim: run episode %s: encode config: %w", name, err)
	}
	ep := &trace.Episode{Meta: trace.Meta{
		Format: trace.Format, Source: "sim", Scenario: name, Policy: spec.Policy, Seed: spec.Seed,
		Topology: topo, Flow: f.Flow(), InitialSwitch: f.InitialSwitch(), Interval: trace.Duration(cfg.Interval),
		Start: f.Start(), CongestionStart: f.CongestionStart(), End: f.End(),
		SimConfig: cfgJSON, Labels: spec.Labels,
	}}
	steps := int(spec.Scenario.Length() / cfg.Interval)
	ep.Steps = make([]trace.Step, 0, min(steps, 1<<16)) // a long episode grows it as it runs
	every := max(1, int(ProgressEvery/cfg.Interval))
	var truth proflow.Observation
	var wait time.Duration // the recheck the last step asked for (Decision.Recheck)
	for i := range steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("sim: run episode %s: %w", name, err)
		}
		if wait > 0 && wait < cfg.Interval {
			// The last step's gate deferred a move to a recheck before
			// this step: simulate up to it, recheck, and on to this step.
			if err := f.Advance(wait); err != nil {
				return nil, fmt.Errorf("sim: run episode %s: %w", name, err)
			}
			if rd, ok := ctrl.Recheck(ctx); ok {
				ep.Steps[len(ep.Steps)-1].Recheck = &trace.Recheck{Time: rd.Time, Load: rd.Load, Decision: trace.FromDecision(rd)}
			}
			wait = cfg.Interval - wait
		} else {
			wait = cfg.Interval
		}
		if err := f.Advance(wait); err != nil {
			return nil, fmt.Errorf("sim: run episode %s: %w", name, err)
		}
		rec.have = false
		d := ctrl.Step(ctx)
		st := trace.Step{Seq: d.Seq, Time: d.Time, Switch: d.Current, Decision: trace.FromDecision(d)}
		switch d.Reason {
		case proflow.ReasonTelemetry, proflow.ReasonInvalid, proflow.ReasonStale:
			// The step acted on no observation.
		default:
			if rec.have {
				st.Obs = rec.obs.Clone()
			}
		}
		if f.Truth(&truth) {
			st.Throughput = truth.Flow.Throughput
		}
		wait = d.Recheck
		ep.Steps = append(ep.Steps, st)
		if done := i + 1; spec.Progress != nil && (done%every == 0 || done == steps) {
			spec.Progress(time.Duration(done)*cfg.Interval, time.Duration(steps)*cfg.Interval)
		}
	}
	return ep, nil
}

// RunMany runs specs on parallelism worker goroutines (at least one) and
// returns their traces in the order of specs. Every episode depends only on
// its spec, so the result does not depend on parallelism. progress, when
// set, is called after each finished episode with the number done so far;
// calls never overlap. A failing episode stops the others; RunMany returns
// the first failure in spec order.
func RunMany(ctx context.Context, specs []EpisodeSpec, parallelism int, progress func(done, total int)) ([]*trace.Episode, error) {
	out := make([]*trace.Episode, len(specs))
	errs := workpool.Run(ctx, len(specs), parallelism, func(ctx context.Context, i int) (err error) {
		out[i], err = RunEpisode(ctx, specs[i])
		return err
	}, progress)
	// Report the first real failure in spec order, not the cancellations it
	// caused in the episodes running beside it.
	first := workpool.First(ctx, errs)
	if first >= 0 {
		return nil, fmt.Errorf("sim: episode %d (%s, seed %d): %w", first, specName(specs[first]), specs[first].Seed, errs[first])
	}
	for _, ep := range out {
		if ep == nil {
			return nil, fmt.Errorf("sim: run many: %w", context.Cause(ctx))
		}
	}
	return out, nil
}

func specName(s EpisodeSpec) string {
	if s.Scenario == nil {
		return "<nil scenario>"
	}
	return s.Scenario.Name
}

// recorder is the controller's Telemetry in RunEpisode: it passes Collect
// through to the fabric and keeps a copy of exactly what the controller
// received, so that a trace step records the observation the controller
// acted on rather than a second reading.
type recorder struct {
	tel  *Fabric
	obs  proflow.Observation
	have bool // obs holds the last successful Collect of the current step
}

// Collect implements proflow.Telemetry.
func (r *recorder) Collect(ctx context.Context, obs *proflow.Observation) error {
	r.have = false
	if err := r.tel.Collect(ctx, obs); err != nil {
		return err
	}
	r.obs.CopyFrom(obs)
	r.have = true
	return nil
}

// Peek implements proflow.Peeker: it passes Peek through to the fabric
// (sim.Fabric.Peek), so that the controller can recheck a move its gate
// deferred; the trace keeps the step's observation, not the peek.
func (r *recorder) Peek(ctx context.Context, obs *proflow.Observation) error {
	return r.tel.Peek(ctx, obs)
}
