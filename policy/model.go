package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
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
// drain's horizon (DrainConfig.UnmarshalJSON). An error names the field by
// its path ("drain.horizon") and says what it wants, quoting at most 64
// bytes of the input.
func (c *GateConfig) UnmarshalJSON(data []byte) error {
	type plain GateConfig // no methods: no recursion
	v := struct {
		*plain
		Cooldown json.RawMessage `json:"cooldown"` // shadows plain's
		Window   json.RawMessage `json:"window"`   // shadows plain's
		Distress json.RawMessage `json:"distress"` // shadows plain's: decoded below, its errors named
		Drain    json.RawMessage `json:"drain"`    // shadows plain's: decoded below, its errors named
	}{plain: (*plain)(c)}
	if err := decodeFields(data, &v, "", reflect.TypeFor[GateConfig]()); err != nil {
		return err
	}
	if err := setDuration(&c.Cooldown, "cooldown", v.Cooldown); err != nil {
		return err
	}
	if err := setDuration(&c.Window, "window", v.Window); err != nil {
		return err
	}
	if present(v.Distress) {
		if err := decodeFields(v.Distress, &c.Distress, "distress", reflect.TypeFor[DistressConfig]()); err != nil {
			return err
		}
	}
	if present(v.Drain) {
		return c.Drain.decode(v.Drain, "drain")
	}
	return nil
}

// UnmarshalJSON decodes a JSON object into c. Fields left out keep c's
// values; unknown fields are refused. The horizon is either a number of
// nanoseconds or a Go duration string ("2s").
func (c *DrainConfig) UnmarshalJSON(data []byte) error { return c.decode(data, "") }

// decode is UnmarshalJSON for the drain settings at path in a larger
// object ("drain" in a gate's), which errors name.
func (c *DrainConfig) decode(data []byte, path string) error {
	type plain DrainConfig // no methods: no recursion
	v := struct {
		*plain
		Horizon json.RawMessage `json:"horizon"` // shadows plain's
	}{plain: (*plain)(c)}
	if err := decodeFields(data, &v, path, reflect.TypeFor[DrainConfig]()); err != nil {
		return err
	}
	return setDuration(&c.Horizon, fieldPath(path, "horizon"), v.Horizon)
}

// present reports whether a field's raw value was given: absent and null
// leave the field as it was.
func present(raw json.RawMessage) bool { return raw != nil && string(raw) != "null" }

// decodeFields decodes the JSON object data into dst, refusing unknown
// fields. dst decodes the fields of typ, the configuration at path (""
// for the top level), which an error names: the field by its path, and
// what it wants.
func decodeFields(data []byte, dst any, path string, typ reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fieldError(path, typ, err)
	}
	return nil
}

// jsonFieldError is an error of decoding a configuration's JSON restated
// in the JSON's terms; it unwraps to the decoder's error.
type jsonFieldError struct {
	msg string
	err error
}

func (e *jsonFieldError) Error() string { return e.msg }
func (e *jsonFieldError) Unwrap() error { return e.err }

// fieldError restates err, an error of decoding the object of typ at
// path: a value of the wrong type names its field's path (not encoding/json's
// Go field path, ".plain.votes") and the JSON it wants; an unknown field
// is quoted, clipped, with the fields typ has. Other errors pass as they are.
func fieldError(path string, typ reflect.Type, err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		var names []string
		for name := range strings.SplitSeq(te.Field, ".") {
			if name != "" && name != "plain" { // the embedded type of an UnmarshalJSON
				names = append(names, name)
			}
		}
		field, want := fieldPath(path, strings.Join(names, ".")), wantJSON(te.Type)
		if num, ok := strings.CutPrefix(te.Value, "number "); ok && field != "" {
			return &jsonFieldError{fmt.Sprintf("%s %s, want %s", field, safetensors.Clip(num), want), err}
		}
		got := map[string]string{"string": "a string", "number": "a number", "bool": "a boolean", "array": "an array", "object": "an object"}[te.Value]
		if got == "" {
			got = safetensors.Clip(te.Value)
		}
		if field == "" {
			return &jsonFieldError{fmt.Sprintf("%s, want %s", got, want), err}
		}
		return &jsonFieldError{fmt.Sprintf("%s: %s, want %s", field, got, want), err}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if n, uerr := strconv.Unquote(name); uerr == nil {
			name = n
		}
		msg := fmt.Sprintf("unknown field %s, want one of %s", safetensors.Quote(name), strings.Join(jsonFields(typ), ", "))
		if path != "" {
			msg = path + ": " + msg
		}
		return &jsonFieldError{msg, err}
	}
	return err
}

// fieldPath joins the path of an object and the name of its field.
func fieldPath(path, name string) string {
	switch {
	case path == "":
		return name
	case name == "":
		return path
	}
	return path + "." + name
}

// wantJSON says what JSON a value of type t is read from.
func wantJSON(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number >= 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	}
	return "a JSON value for " + t.String()
}

// jsonFields returns the JSON names of the fields of the struct type t,
// in order.
func jsonFields(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case name == "":
			names = append(names, f.Name)
		default:
			names = append(names, name)
		}
	}
	return names
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
			return 0, fmt.Errorf("%s %s: %w", name, safetensors.Clip(string(raw)), err)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%s %s, want a Go duration such as \"15s\" or a number of nanoseconds", name, safetensors.Quote(s))
		}
		return d, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("%s %s, want a Go duration such as \"15s\" or a number of nanoseconds", name, safetensors.Clip(string(raw)))
	}
	ns, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s %s, want a whole number of nanoseconds or a Go duration such as \"15s\"", name, safetensors.Clip(string(raw)))
	}
	return time.Duration(ns), nil
}
