// Package models embeds proflow's default agent, the Q-network trained on
// the simulator's testbed profile (default.safetensors in this directory;
// models/README.md says how it was trained and what it does), so that a
// controller can run the learned policy without a model file beside it.
//
//	agent, gate, err := models.LoadDefault(telemetry.DefaultEncoderConfig(topo))
//	if err != nil { ... }
//	g, err := policy.NewGate(gate) // the gate the model was evaluated behind
//	ctrl, err := proflow.NewController(cfg, tel, enc, agent, g, enf)
//
// The default model fits the paper's topology (4 aggregation switches, 4
// leaves), 200 Mbit/s buckets (the encoder's rate_scale) and the 500 ms
// control interval; LoadDefault refuses another encoder configuration and
// proflow.NewController another interval. Train a model for another fabric
// with make model (models/README.md).
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
