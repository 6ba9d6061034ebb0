package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/jsonend"
	"github.com/proflow-sdn/proflow/internal/safetensors"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// Metadata keys (qnet.Metadata.Extra) under which a trained model records
// how it is meant to be run.
const (
	// ModelGateKey holds the stability gate the model was evaluated
	// behind, a GateConfig in JSON. A model without it runs behind
	// DefaultGateConfig.
	ModelGateKey = "gate_config"
	// ModelIntervalKey holds the control interval the model was trained
	// at, as a Go duration ("500ms"): the time between the states s_t and
	// s_{t+1} of its transitions, which the encoder's rates of change and
	// the gate's vote count are measured in. A model without it was
	// trained at the paper's 500 ms (proflow.DefaultInterval).
	ModelIntervalKey = "control_interval"
)

// maxGateConfigBytes bounds a GateConfig JSON file.
const maxGateConfigBytes = 1 << 16

// ModelGate returns the gate a model records under ModelGateKey, or
// DefaultGateConfig for a model that records none.
func ModelGate(meta qnet.Metadata) (GateConfig, error) {
	s, ok := meta.Extra[ModelGateKey]
	if !ok {
		return DefaultGateConfig(), nil
	}
	g, err := ReadGateConfig(strings.NewReader(s))
	if err != nil {
		return GateConfig{}, fmt.Errorf("policy: model metadata %s: %w", ModelGateKey, err)
	}
	return g, nil
}

// ModelInterval returns the control interval a model records under
// ModelIntervalKey, or proflow.DefaultInterval (500 ms, the paper's) for a
// model that records none.
func ModelInterval(meta qnet.Metadata) (time.Duration, error) {
	s, ok := meta.Extra[ModelIntervalKey]
	if !ok {
		return proflow.DefaultInterval, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("policy: model metadata %s %s, want a positive Go duration such as 500ms", ModelIntervalKey, safetensors.Quote(s))
	}
	return d, nil
}

// LoadModel loads the model file at path (see package qnet) and returns an
// agent for it, deployed with the state encoder configuration enc, together
// with the gate the model was evaluated behind (ModelGate). Run the agent
// behind NewGate of that GateConfig to get the controller the model's
// evaluation measured.
//
// When that gate counts forecasts (DistressConfig.Forecast), the agent
// also gets the dynamics model proflow train saved beside the file for
// enc's fabric (LoadForecasts, AttachForecast): it is part of the
// controller the evaluation measured. On a fabric none of them was
// trained for the agent forecasts nothing and the gate runs on measured
// samples alone; with no dynamics model beside the file at all LoadModel
// fails, naming the file it looked for.
func LoadModel(path string, enc telemetry.EncoderConfig) (*Agent, GateConfig, error) {
	a, err := LoadAgent(path, enc)
	if err != nil {
		return nil, GateConfig{}, err
	}
	g, err := a.Gate()
	if err != nil {
		return nil, GateConfig{}, fmt.Errorf("%w (model %s)", err, path)
	}
	if g.Distress.Forecast {
		fs, err := LoadForecasts(path)
		if err != nil {
			return nil, GateConfig{}, err
		}
		AttachForecast(a, fs)
	}
	return a, g, nil
}

// ReadModel reads a model file's contents from r, as LoadModel does from a
// path; name identifies the model in errors. Read bounds what it reads by
// qnet.MaxHeaderBytes and qnet.MaxDataBytes.
func ReadModel(r io.Reader, name string, enc telemetry.EncoderConfig) (*Agent, GateConfig, error) {
	m, meta, err := qnet.Read(r)
	if err != nil {
		return nil, GateConfig{}, fmt.Errorf("policy: read model %s: %w", name, err)
	}
	a, err := NewAgent(m, meta, enc)
	if err != nil {
		return nil, GateConfig{}, fmt.Errorf("%w (model %s)", err, name)
	}
	g, err := a.Gate()
	if err != nil {
		return nil, GateConfig{}, fmt.Errorf("%w (model %s)", err, name)
	}
	return a, g, nil
}

// Gate returns the stability gate the agent's model was evaluated behind
// (ModelGate of its metadata): DefaultGateConfig when the model records
// none.
func (a *Agent) Gate() (GateConfig, error) { return ModelGate(a.meta) }

// TrainedInterval returns the control interval the agent's model was
// trained at (ModelInterval): 500 ms when the model records none. It
// implements proflow.IntervalBound, so proflow.NewController refuses the
// agent in a controller running at another interval.
func (a *Agent) TrainedInterval() time.Duration { return a.interval }

// LoadGateConfig reads a GateConfig JSON file (see ReadGateConfig).
func LoadGateConfig(path string) (GateConfig, error) {
	f, err := fileutil.Open(path)
	if err != nil {
		return GateConfig{}, fmt.Errorf("policy: gate config: %w", err)
	}
	defer f.Close()
	g, err := ReadGateConfig(io.LimitReader(f, maxGateConfigBytes))
	if err != nil {
		return GateConfig{}, fmt.Errorf("policy: gate config %s: %w", path, err)
	}
	return g, nil
}

// ReadGateConfig reads one GateConfig JSON value from r: fields left out
// keep DefaultGateConfig's values, unknown fields are refused (see
// GateConfig.UnmarshalJSON), and the result is validated.
func ReadGateConfig(r io.Reader) (GateConfig, error) {
	g := DefaultGateConfig()
	dec := json.NewDecoder(r)
	if err := dec.Decode(&g); err != nil {
		return GateConfig{}, fmt.Errorf("decode: %w", err)
	}
	if jsonend.End(dec) != nil {
		return GateConfig{}, errors.New("decode: trailing data after the JSON object")
	}
	if err := g.Validate(); err != nil {
		return GateConfig{}, err
	}
	return g, nil
}

// UnmarshalJSON decodes a JSON object into c. Fields left out keep c's
// values; unknown fields are refused. The cooldown and the window are
// each either a number of nanoseconds (15000000000, what encoding/json
// writes for a time.Duration) or a Go duration string ("15s"), as is
// drain's horizon (DrainConfig.UnmarshalJSON).
func (c *GateConfig) UnmarshalJSON(data []byte) error {
	type plain GateConfig // no methods: no recursion
	v := struct {
		*plain
		Cooldown json.RawMessage `json:"cooldown"` // shadows plain's
		Window   json.RawMessage `json:"window"`   // shadows plain's
	}{plain: (*plain)(c)}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if err := setDuration(&c.Cooldown, "cooldown", v.Cooldown); err != nil {
		return err
	}
	return setDuration(&c.Window, "window", v.Window)
}

// UnmarshalJSON decodes a JSON object into c. Fields left out keep c's
// values; unknown fields are refused. The horizon is either a number of
// nanoseconds or a Go duration string ("2s").
func (c *DrainConfig) UnmarshalJSON(data []byte) error {
	type plain DrainConfig // no methods: no recursion
	v := struct {
		*plain
		Horizon json.RawMessage `json:"horizon"` // shadows plain's
	}{plain: (*plain)(c)}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	return setDuration(&c.Horizon, "horizon", v.Horizon)
}

// setDuration sets *dst from the decoded value of the duration field
// name; an absent or null one leaves *dst as it was.
func setDuration(dst *time.Duration, name string, raw json.RawMessage) error {
	if raw == nil || string(raw) == "null" {
		return nil
	}
	d, err := parseDuration(name, raw)
	if err != nil {
		return err
	}
	*dst = d
	return nil
}

// parseDuration reads the duration field name as nanoseconds or as a
// duration string.
func parseDuration(name string, raw json.RawMessage) (time.Duration, error) {
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("%s %s: %w", name, raw, err)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%s %q, want a Go duration such as \"15s\" or a number of nanoseconds", name, s)
		}
		return d, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("%s %s, want a Go duration such as \"15s\" or a number of nanoseconds", name, raw)
	}
	ns, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s %s, want a whole number of nanoseconds or a Go duration such as \"15s\"", name, raw)
	}
	return time.Duration(ns), nil
}
