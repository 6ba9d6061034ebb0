// Package models embeds proflow's default agent, the universal Q-network
// trained on the simulator's testbed profile at several fabric sizes
// (default.safetensors in this directory; models/README.md says how it was
// trained and what it does), so that a controller can run the learned
// policy without a model file beside it.
//
//	agent, gate, err := models.LoadDefault(telemetry.DefaultEncoderConfig(topo))
//	if err != nil { ... }
//	enc, err := telemetry.NewEncoder(agent.EncoderConfig()) // the model's state layout
//	g, err := policy.NewGate(gate) // the gate the model was evaluated behind
//	ctrl, err := proflow.NewController(cfg, tel, enc, agent, g, enf)
//
// The default model is universal (policy.Agent.Universal): it scores each
// aggregation switch from that switch's telemetry, the current switch's,
// pooled leaf telemetry and the flow's, with shared weights, so it serves
// any number of aggregation switches (2 or more) and congestion leaves, and
// any bucket rate, since every rate is read in units of the topology's
// bucket rate. It fixes the state layout (v8), the encoder's scaling
// relative to the bucket rate and the 500 ms control interval:
// LoadDefault refuses an encoder configuration scaled otherwise and
// proflow.NewController another interval.
//
// The other files of this directory (the datacenter and ovs profiles'
// models, the dynamics models, the gate and training configurations) are
// not embedded; load them by path with policy.LoadModel.
//
// # Concurrency
//
// The functions are safe for concurrent use; each call returns its own
// agent and copy of the bytes.
package models

import (
	_ "embed" // for go:embed
	"strings"

	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/telemetry"
)

// defaultModel is default.safetensors; a string, so nothing can change it.
//
//go:embed default.safetensors
var defaultModel string

// DefaultName names the embedded default model in errors.
const DefaultName = "models/default.safetensors (embedded)"

// DefaultBytes returns a copy of the default model file's bytes.
func DefaultBytes() []byte { return []byte(defaultModel) }

// LoadDefault returns an agent for the embedded default model, deployed
// with the state encoder configuration enc, and the gate the model was
// evaluated behind, as policy.LoadModel does for a model file.
func LoadDefault(enc telemetry.EncoderConfig) (*policy.Agent, policy.GateConfig, error) {
	return policy.ReadModel(strings.NewReader(defaultModel), DefaultName, enc)
}
