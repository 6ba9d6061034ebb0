package serve

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/telemetry"
)

// TestAgentPartsModelAndGate checks how serve builds the agent: no model
// path runs the embedded default model behind the gate it records, a model
// path loads that file, and a gate section wins over the model's gate.
func TestAgentPartsModelAndGate(t *testing.T) {
	topo := proflow.PaperTopology()
	_, recorded, err := policy.LoadModel("../../models/default.safetensors", telemetry.DefaultEncoderConfig(topo))
	if err != nil {
		t.Fatal(err)
	}
	override := &GateConfig{Margin: 0.5, Votes: 2, Cooldown: 3 * time.Second, Tolerance: 0.1}
	for _, tc := range []struct {
		name  string
		model string
		gate  *GateConfig
		want  policy.GateConfig
	}{
		{"embedded default", "", nil, recorded},
		{"model file", "../../models/default.safetensors", nil, recorded},
		{"gate section wins", "", override, policy.GateConfig{Margin: 0.5, Votes: 2, Cooldown: 3 * time.Second, Tolerance: 0.1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Policy: PolicyConfig{Kind: "agent", Model: tc.model}, Gate: tc.gate}
			parts, err := flowParts(c, topo)
			if err != nil {
				t.Fatal(err)
			}
			pol, err := parts.Policy(proflow.ProtectedFlow{})
			if err != nil {
				t.Fatal(err)
			}
			agent, ok := pol.(*policy.Agent)
			if !ok {
				t.Fatalf("policy %T, want *policy.Agent", pol)
			}
			if got, _ := agent.Gate(); got != recorded {
				t.Errorf("agent's recorded gate %+v, want the default model's %+v", got, recorded)
			}
			gate, err := parts.Gate(proflow.ProtectedFlow{})
			if err != nil {
				t.Fatal(err)
			}
			if g, ok := gate.(*policy.Gate); !ok || g.Config() != tc.want {
				t.Errorf("gate %#v, want a *policy.Gate with %+v", gate, tc.want)
			}
		})
	}
}

// TestAgentWithoutModelFileServes checks that a config with the agent and
// no policy.model, in a directory with no models/, validates and builds a
// service that runs the embedded default model.
func TestAgentWithoutModelFileServes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serve.yaml")
	cfg := strings.Replace(validSim, "kind: crowd", "kind: agent", 1) + "metrics: {listen: \"127.0.0.1:0\"}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load of an agent config without a model: %v", err)
	}
	if c.Policy.Model != "" {
		t.Errorf("policy.model defaulted to %q, want it absent (the embedded model)", c.Policy.Model)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := New(ctx, c, Options{LogOutput: io.Discard})
	if err != nil {
		t.Fatalf("New with the embedded default model: %v", err)
	}
	s.closeAll()
}
