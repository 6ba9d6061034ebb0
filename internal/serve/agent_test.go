package serve

import (
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
