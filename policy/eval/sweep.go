package eval

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// PolicySpec names a policy and builds it for each episode.
type PolicySpec struct {
	// Name names the policy in traces and reports.
	Name string
	// New builds the encoder, policy and gate of one episode.
	New sim.PolicyFactory
	// ForScenario, when set, replaces New for a policy that must know the
	// scenario (the oracle): Sweep.Run calls it once per scenario.
	ForScenario func(sc *sim.Scenario, cfg sim.Config) (sim.PolicyFactory, error)
	// Model is the metadata of a learned policy's model; nil for the
	// others.
	Model *qnet.Metadata
	// Note, when set, is something a report on this policy should say
	// (AgentPolicy: its gate counts forecasts the fabric has no dynamics
	// model for).
	Note string
}

// factoryFor returns the policy's factory for a scenario: ForScenario's
// when set, else New.
func (p PolicySpec) factoryFor(sc *sim.Scenario, cfg sim.Config) (sim.PolicyFactory, error) {
	if p.ForScenario == nil {
		return p.New, nil
	}
	f, err := p.ForScenario(sc, cfg)
	if err != nil {
		return nil, fmt.Errorf("eval: policy %s on scenario %s: %w", p.Name, sc.Name, err)
	}
	return f, nil
}

// ReferencePolicy returns one of the reference policies with its paper
// defaults: "static", "reactive", "crowd", "throughput-drop" (with
// policy.DefaultThroughputDropConfig, the testbed profile's calibration;
// ThroughputDropPolicy takes other settings) or "latency-threshold" (with
// policy.DefaultLatencyThresholdConfig, likewise; LatencyThresholdPolicy
// takes other settings), each behind an immediate gate
// (they debounce and cool down by themselves), or "oracle" (OraclePolicy:
// not deployable, it reads the scenario). The reactive threshold follows
// the bucket rate of the topology the factory is given
// (policy.ReactiveConfigFor: 27,000 at the paper's 200 Mbit/s, 1,350 at 10
// Mbit/s); the crowd threshold is a flow count and does not scale.
func ReferencePolicy(name string) (PolicySpec, error) {
	var build func(topo proflow.Topology) (proflow.Policy, error)
	switch name {
	case OracleName:
		return OraclePolicy(), nil
	case "static":
		build = func(proflow.Topology) (proflow.Policy, error) { return policy.Static{}, nil }
	case "reactive":
		build = func(topo proflow.Topology) (proflow.Policy, error) {
			return policy.NewReactive(policy.ReactiveConfigFor(topo.BucketRate))
		}
	case "crowd":
		build = func(proflow.Topology) (proflow.Policy, error) { return policy.NewCrowd(policy.DefaultCrowdConfig()) }
	case ThroughputDropName:
		return ThroughputDropPolicy(policy.DefaultThroughputDropConfig())
	case LatencyThresholdName:
		return LatencyThresholdPolicy(policy.DefaultLatencyThresholdConfig())
	default:
		return PolicySpec{}, fmt.Errorf("eval: unknown reference policy %q, want static, reactive, crowd, %s, %s or oracle", name, ThroughputDropName, LatencyThresholdName)
	}
	return immediateSpec(name, build), nil
}

// immediateSpec returns the policy named name that build makes for a
// topology, with the default encoder and behind an immediate gate (a
// reference policy debounces and cools down by itself).
func immediateSpec(name string, build func(topo proflow.Topology) (proflow.Policy, error)) PolicySpec {
	return PolicySpec{Name: name, New: func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
		enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
		if err != nil {
			return nil, nil, nil, err
		}
		p, err := build(topo)
		return enc, p, policy.Immediate(), err
	}}
}

// Metadata keys (qnet.Metadata.Extra) under which a model records the
// simulated world it was trained on.
const (
	ModelProfileKey       = "sim_profile"
	ModelProfileDigestKey = "sim_profile_digest"
)

// ProfileMismatch returns a warning for a report when the model was trained
// on another profile than cfg (by digest), or records none; "" when they
// match.
func ProfileMismatch(policyName string, meta qnet.Metadata, cfg sim.Config) string {
	name, digest := meta.Extra[ModelProfileKey], meta.Extra[ModelProfileDigestKey]
	switch {
	case digest == "":
		return fmt.Sprintf("Warning: the model of %s records no simulator profile; it is evaluated on profile %s (%s).", policyName, cfg.Name, cfg.Digest())
	case digest != cfg.Digest():
		return fmt.Sprintf("Warning: the model of %s was trained on profile %s (%s) and is evaluated on profile %s (%s).", policyName, name, digest, cfg.Name, cfg.Digest())
	}
	return ""
}

// ModelGateKey is the metadata key (qnet.Metadata.Extra) under which a
// model records the stability gate it was trained to run behind, as a
// GateConfig in JSON: policy.ModelGateKey.
const ModelGateKey = policy.ModelGateKey

// ModelGate returns the gate a model records, or policy.DefaultGateConfig
// for a model that records none: policy.ModelGate.
func ModelGate(meta qnet.Metadata) (policy.GateConfig, error) { return policy.ModelGate(meta) }

// LoadGateConfig reads a GateConfig JSON file: unknown fields refused,
// fields left out keep DefaultGateConfig's values, the result validated
// (policy.LoadGateConfig).
func LoadGateConfig(path string) (policy.GateConfig, error) { return policy.LoadGateConfig(path) }

// AgentPolicy returns the learned agent loaded once from a model file
// (policy.LoadModel, as a controller embedding the agent loads it), behind
// the stability gate gate; a zero GateConfig selects the gate the model
// records (policy.ModelGate). Every episode gets its own clone of the
// agent (sharing the weights). A per-fabric model must have been trained
// for the topology's encoder configuration; a universal one
// (qnet.Metadata.Universal) only for its scaling, and each episode deploys
// it on the episode's own topology.
//
// A gate that counts forecasts (policy.DistressConfig.Forecast) needs the
// dynamics models that proflow train saved beside the model
// (NAME.dynamics.safetensors, NAME.dynamics-SxL.safetensors;
// policy.LoadForecasts): each episode's agent gets the one that reads its
// states, and one on a fabric none of them was trained for runs without a
// forecast, on its measured samples alone, which PolicySpec.Note says for
// topo's fabric.
func AgentPolicy(name, modelPath string, gate policy.GateConfig, topo proflow.Topology) (PolicySpec, error) {
	// LoadAgent, not LoadModel: the dynamics models are read below only
	// when the gate in force counts forecasts, which another -gate may not.
	agent, err := policy.LoadAgent(modelPath, telemetry.DefaultEncoderConfig(topo))
	if err != nil {
		return PolicySpec{}, fmt.Errorf("eval: policy %s: %w", name, err)
	}
	recorded, err := agent.Gate()
	if err != nil {
		return PolicySpec{}, fmt.Errorf("eval: policy %s: %w (model %s)", name, err, modelPath)
	}
	if gate == (policy.GateConfig{}) {
		gate = recorded
	}
	if err := gate.Validate(); err != nil {
		return PolicySpec{}, err
	}
	var forecasts []*policy.Forecast
	var note string
	if gate.Distress.Forecast {
		if forecasts, err = policy.LoadForecasts(modelPath); err != nil {
			return PolicySpec{}, fmt.Errorf("eval: policy %s: %w", name, err)
		}
		if !policy.AttachForecast(agent.Clone(), forecasts) {
			note = fmt.Sprintf("The agent's gate counts its dynamics model's forecasts (distress.forecast), but no dynamics model beside %s was trained for the %d×%d fabric: there the agent runs on its measured samples alone.",
				modelPath, topo.NumSwitches(), topo.NumLeaves())
		}
	}
	meta := agent.Metadata()
	return PolicySpec{Name: name, Model: &meta, Note: note, New: func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
		// A universal model is deployed on the episode's own fabric; a
		// per-fabric one was checked against topo above.
		var a *policy.Agent
		if agent.Universal() {
			u, err := policy.NewAgent(agent.Model(), meta, telemetry.DefaultEncoderConfig(topo))
			if err != nil {
				return nil, nil, nil, fmt.Errorf("eval: policy %s: %w", name, err)
			}
			a = u
		} else {
			a = agent.Clone()
		}
		policy.AttachForecast(a, forecasts)
		enc, err := telemetry.NewEncoder(a.EncoderConfig())
		if err != nil {
			return nil, nil, nil, err
		}
		g, err := policy.NewGate(gate)
		if err != nil {
			return nil, nil, nil, err
		}
		return enc, a, g, nil
	}}, nil
}

// Sweep describes an evaluation on the simulated fabric: every policy on
// every scenario, Repeats times. Repeat r of a scenario uses the same seed
// for every policy, so policies are compared on the same traffic.
type Sweep struct {
	Scenarios []*sim.Scenario
	Policies  []PolicySpec
	Repeats   int
	// Seed is the base seed; each (scenario, repeat) derives its own.
	Seed uint64
	// Config is the simulated fabric (zero: sim.DefaultConfig()).
	Config sim.Config
	// Parallelism is the number of episodes simulated at once.
	Parallelism int
	// Progress, when set, is called after each episode.
	Progress func(done, total int)
	// SimProgress, when set, is called as simulated time advances inside
	// the episodes (every sim.ProgressEvery of an episode's virtual time),
	// with the virtual time done over the whole sweep and its total, so
	// that a sweep of few long episodes still shows progress. It may be
	// called from several goroutines at once, never concurrently with
	// itself.
	SimProgress func(done, total time.Duration)
	// TraceDir, when set, receives every episode's trace as
	// SCENARIO-POLICY-rREPEAT.jsonl.gz. Run refuses a sweep whose names
	// would put a trace file anywhere else.
	TraceDir string
}

// addSimProgress makes every episode report its virtual time to
// SimProgress, summed over the sweep.
func (s Sweep) addSimProgress(specs []sim.EpisodeSpec) {
	lengths := make([]time.Duration, len(specs))
	for i, sp := range specs {
		lengths[i] = sp.Scenario.Length()
	}
	for i, p := range episodeProgress(lengths, s.SimProgress) {
		specs[i].Progress = p
	}
}

// episodeProgress returns one progress callback per episode of the given
// lengths, each adding its episode's advance to the virtual time done and
// calling report with it and the sum of the lengths, never concurrently.
func episodeProgress(lengths []time.Duration, report func(done, total time.Duration)) []func(done, total time.Duration) {
	var total time.Duration
	for _, l := range lengths {
		total += l
	}
	var mu sync.Mutex
	var done time.Duration
	out := make([]func(done, total time.Duration), len(lengths))
	for i := range out {
		var last time.Duration // this episode's time already counted
		out[i] = func(d, _ time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			done += d - last
			last = d
			report(done, total)
		}
	}
	return out
}

// EpisodeSeed derives the seed of repeat r of a scenario from the base seed.
func EpisodeSeed(base uint64, scenario string, repeat int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", base, scenario, repeat)
	return h.Sum64()
}

// Run simulates the sweep and returns the episodes for Summarize. It
// refuses, before simulating anything, a nil or unnamed scenario or policy
// and two scenarios or two policies of the same name (their episodes and
// trace files would be indistinguishable).
//
// If writing a trace to TraceDir fails, Run still converts and returns every
// simulated episode, together with the failed writes' errors joined: the
// evaluation is not lost to a full disk.
func (s Sweep) Run(ctx context.Context) ([]*Episode, error) {
	if len(s.Scenarios) == 0 || len(s.Policies) == 0 || s.Repeats < 1 {
		return nil, errors.New("eval: sweep needs at least one scenario, one policy and one repeat")
	}
	if err := s.checkNames(); err != nil {
		return nil, err
	}
	cfg := s.Config
	if cfg.Switches == 0 {
		cfg = sim.DefaultConfig()
	}
	var specs []sim.EpisodeSpec
	for _, sc := range s.Scenarios {
		for _, p := range s.Policies {
			factory, err := p.factoryFor(sc, cfg)
			if err != nil {
				return nil, err
			}
			for r := 0; r < s.Repeats; r++ {
				specs = append(specs, sim.EpisodeSpec{
					Scenario: sc, Seed: EpisodeSeed(s.Seed, sc.Name, r), Config: s.Config,
					Policy: p.Name, NewPolicy: factory, Labels: map[string]string{"repeat": strconv.Itoa(r)},
				})
			}
		}
	}
	if s.SimProgress != nil {
		s.addSimProgress(specs)
	}
	paths, err := tracePaths(s.TraceDir, specs)
	if err != nil {
		return nil, err
	}
	traces, err := sim.RunMany(ctx, specs, s.Parallelism, s.Progress)
	if err != nil {
		return nil, err
	}
	eps := make([]*Episode, len(traces))
	var writeErrs []error
	for i, tr := range traces {
		if paths != nil {
			if err := trace.WriteFile(paths[i], tr); err != nil {
				writeErrs = append(writeErrs, fmt.Errorf("eval: sweep: keep trace: %w", err))
			}
		}
		if eps[i], err = FromTrace(tr, 0); err != nil {
			return nil, errors.Join(append([]error{err}, writeErrs...)...)
		}
		eps[i].SetKind(specs[i].Scenario.PrimaryKind(), cfg, specs[i].Scenario.Start())
	}
	return eps, errors.Join(writeErrs...)
}

// tracePaths returns the trace file of every spec in dir (nil when dir is
// empty), named SCENARIO-POLICY-rREPEAT.jsonl.gz. It refuses, before anything
// is simulated, a name that would not lie directly in dir (a scenario or
// policy name holding a path separator) and two episodes that would write
// the same file (scenario "a-b" under policy "c" and scenario "a" under
// policy "b-c").
func tracePaths(dir string, specs []sim.EpisodeSpec) ([]string, error) {
	if dir == "" {
		return nil, nil
	}
	var errs []error
	paths := make([]string, len(specs))
	seen := map[string]int{}
	for i, sp := range specs {
		name := fmt.Sprintf("%s-%s-r%s.jsonl.gz", sp.Scenario.Name, sp.Policy, sp.Labels["repeat"])
		j, dup := seen[name]
		switch {
		case strings.ContainsAny(name, `/\`) || !filepath.IsLocal(name):
			errs = append(errs, fmt.Errorf("trace file %q of scenario %q and policy %q would not lie directly in %s, want names without '/' or '\\'", name, sp.Scenario.Name, sp.Policy, dir))
		case dup:
			errs = append(errs, fmt.Errorf("trace file %s would hold the episodes of scenario %q under policy %q and of scenario %q under policy %q, want names that keep them apart",
				name, specs[j].Scenario.Name, specs[j].Policy, sp.Scenario.Name, sp.Policy))
		default:
			seen[name] = i
		}
		paths[i] = filepath.Join(dir, name)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("eval: invalid sweep: TraceDir: %w", err)
	}
	return paths, nil
}

// checkNames refuses nil, unnamed and duplicate scenarios and policies.
func (s Sweep) checkNames() error {
	var errs []error
	seen := map[string]int{}
	for i, sc := range s.Scenarios {
		switch {
		case sc == nil:
			errs = append(errs, fmt.Errorf("scenario %d is nil", i))
		case sc.Name == "":
			errs = append(errs, fmt.Errorf("scenario %d has no name", i))
		default:
			if j, dup := seen[sc.Name]; dup {
				errs = append(errs, fmt.Errorf("scenario name %q used at index %d and %d, want unique names", sc.Name, j, i))
			} else {
				seen[sc.Name] = i
			}
		}
	}
	seen = map[string]int{}
	for i, p := range s.Policies {
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("policy %d has no name", i))
			continue
		}
		if p.New == nil {
			errs = append(errs, fmt.Errorf("policy %d (%s) has no factory (New is nil)", i, p.Name))
		}
		if j, dup := seen[p.Name]; dup {
			errs = append(errs, fmt.Errorf("policy name %q used at index %d and %d, want unique names", p.Name, j, i))
		} else {
			seen[p.Name] = i
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("eval: invalid sweep: %w", err)
	}
	return nil
}
