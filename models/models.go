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
// Its gate counts the forecasts of the dynamics models trained with it
// (policy.DistressConfig.Forecast): those are embedded too
// (default.dynamics.safetensors for the paper's 4×3 fabric and
// default.dynamics-SxL.safetensors for the other training sizes), and
// LoadDefault gives the agent the one of its fabric, as policy.LoadModel
// does from the files. On a fabric none was trained for the agent
// forecasts nothing and the gate runs on measured samples alone.
//
// The other files of this directory (the datacenter and ovs profiles'
// models and dynamics models, the gate and training configurations) are
// not embedded; load them by path with policy.LoadModel.
//
// # Concurrency
//
// The functions are safe for concurrent use; each call returns its own
// agent and copy of the bytes.
package models

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/telemetry"
)

// defaultModel is default.safetensors; a string, so nothing can change it.
//
//go:embed default.safetensors
var defaultModel string

// dynamics holds the default model's dynamics models.
//
//go:embed default.dynamics.safetensors default.dynamics-2x3.safetensors default.dynamics-4x7.safetensors default.dynamics-8x3.safetensors
var dynamics embed.FS

// DynamicsNames lists the embedded dynamics models' file names, in name
// order.
func DynamicsNames() []string {
	entries, _ := fs.ReadDir(dynamics, ".") // the embedded root always reads
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// DynamicsBytes returns a copy of the embedded dynamics model file name
// (one of DynamicsNames), or an error naming the files there are.
func DynamicsBytes(name string) ([]byte, error) {
	b, err := dynamics.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("models: no embedded dynamics model %q (there are %s)", name, strings.Join(DynamicsNames(), ", "))
	}
	return b, nil
}

// DefaultName names the embedded default model in errors.
const DefaultName = "models/default.safetensors (embedded)"

// DefaultBytes returns a copy of the default model file's bytes.
func DefaultBytes() []byte { return []byte(defaultModel) }

// LoadDefault returns an agent for the embedded default model, deployed
// with the state encoder configuration enc, and the gate the model was
// evaluated behind, as policy.LoadModel does for a model file: when that
// gate counts forecasts, the agent gets the embedded dynamics model of
// enc's fabric.
func LoadDefault(enc telemetry.EncoderConfig) (*policy.Agent, policy.GateConfig, error) {
	a, g, err := policy.ReadModel(strings.NewReader(defaultModel), DefaultName, enc)
	if err != nil || !g.Distress.Forecast {
		return a, g, err
	}
	var fcs []*policy.Forecast
	for _, n := range DynamicsNames() {
		b, _ := dynamics.ReadFile(n) // listed, so present
		f, _, err := policy.ReadForecast(strings.NewReader(string(b)), "models/"+n+" (embedded)")
		if err != nil {
			return nil, policy.GateConfig{}, err
		}
		fcs = append(fcs, f)
	}
	policy.AttachForecast(a, fcs)
	return a, g, nil
}
