package eval_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/models"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

const defaultModel = "../../models/default.safetensors"

// readmeController builds the encoder, agent and gate exactly as the README
// ("Using it in your controller", Example_embedding) does, with load as
// the model loader.
func readmeController(load func(telemetry.EncoderConfig) (*policy.Agent, policy.GateConfig, error)) sim.PolicyFactory {
	return func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
		encCfg := telemetry.DefaultEncoderConfig(topo)
		agent, gateCfg, err := load(encCfg)
		if err != nil {
			return nil, nil, nil, err
		}
		enc, err := telemetry.NewEncoder(agent.EncoderConfig())
		if err != nil {
			return nil, nil, nil, err
		}
		gate, err := policy.NewGate(gateCfg)
		if err != nil {
			return nil, nil, nil, err
		}
		return enc, agent, gate, nil
	}
}

// TestREADMEControllerIsEvaluatedController checks that the controller a
// user builds by following the README is the one eval.AgentPolicy
// evaluates: on one simulated episode (scenario N2 on the testbed profile,
// where a crowd comes and leaves within 6 s and the evaluated agent stays),
// both decide identically at every step, and so does the embedded default
// model. The same agent behind DefaultGateConfig (what the README used to
// show) moves the flow there, so the test tells the two apart.
func TestREADMEControllerIsEvaluatedController(t *testing.T) {
	cfg := sim.TestbedConfig()
	sc, err := sim.BuiltinScenario("N2")
	if err != nil {
		t.Fatal(err)
	}
	evaluated, err := eval.AgentPolicy("agent", defaultModel, policy.GateConfig{}, cfg.Topology())
	if err != nil {
		t.Fatal(err)
	}
	run := func(f sim.PolicyFactory) []trace.Step {
		t.Helper()
		ep, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{Scenario: sc, Seed: 1, Config: cfg, Policy: "agent", NewPolicy: f})
		if err != nil {
			t.Fatal(err)
		}
		return ep.Steps
	}
	want := run(evaluated.New)
	if len(want) == 0 {
		t.Fatal("the episode has no steps")
	}

	for _, tc := range []struct {
		name string
		load func(telemetry.EncoderConfig) (*policy.Agent, policy.GateConfig, error)
	}{
		{"README: policy.LoadModel", func(enc telemetry.EncoderConfig) (*policy.Agent, policy.GateConfig, error) {
			return policy.LoadModel(defaultModel, enc)
		}},
		{"embedded: models.LoadDefault", models.LoadDefault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := run(readmeController(tc.load))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the controller built as the README does decides otherwise than eval.AgentPolicy's (-evaluated +README):\n%s", diff)
			}
		})
	}

	old := run(readmeController(func(enc telemetry.EncoderConfig) (*policy.Agent, policy.GateConfig, error) {
		a, err := policy.LoadAgent(defaultModel, enc)
		return a, policy.DefaultGateConfig(), err
	}))
	if n, m := reroutes(want), reroutes(old); n != 0 || m == 0 {
		t.Errorf("N2: %d reroutes behind the model's gate and %d behind DefaultGateConfig, want 0 and some: the test no longer separates the two constructions", n, m)
	}
}

// reroutes counts the steps that moved the flow.
func reroutes(steps []trace.Step) int {
	n := 0
	for _, s := range steps {
		if s.Decision.Rerouted {
			n++
		}
	}
	return n
}
