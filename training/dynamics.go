package training

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/safetensors"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// DynamicsModel is the learned dynamics model f_ψ(s, onehot(k)) → s' in pure
// Go: an MLP (ReLU hidden layers, linear output) that reads the state
// followed by the one-hot of the action and predicts the change of the
// state; Predict adds the change and projects the result with ClampState.
//
// Predict writes into buffers the model owns: a DynamicsModel is not safe
// for concurrent use; Clone gives another goroutine its own.
type DynamicsModel struct {
	enc telemetry.EncoderConfig
	net *qnet.Model
	in  []float32
	out []float32
}

// NewDynamicsModel returns a dynamics model for states encoded with enc. net
// must take enc.Dim()+enc.NumSwitches inputs and give enc.Dim() outputs.
func NewDynamicsModel(enc telemetry.EncoderConfig, net *qnet.Model) (*DynamicsModel, error) {
	if err := enc.Validate(); err != nil {
		return nil, fmt.Errorf("training: new dynamics model: %w", err)
	}
	if net == nil {
		return nil, errors.New("training: new dynamics model: nil network")
	}
	dim, nS := enc.Dim(), enc.NumSwitches
	if net.InputDim() != dim+nS || net.OutputDim() != dim {
		return nil, fmt.Errorf("training: new dynamics model: network is %d→%d, want %d→%d (state+action → state change)",
			net.InputDim(), net.OutputDim(), dim+nS, dim)
	}
	return &DynamicsModel{enc: enc, net: net.Clone(), in: make([]float32, dim+nS), out: make([]float32, dim)}, nil
}

// Encoder returns the state encoder configuration the model predicts in.
func (d *DynamicsModel) Encoder() telemetry.EncoderConfig { return d.enc }

// Net returns the underlying network (shared, not copied).
func (d *DynamicsModel) Net() *qnet.Model { return d.net }

// Clone returns a model sharing the weights with its own buffers.
func (d *DynamicsModel) Clone() *DynamicsModel {
	return &DynamicsModel{enc: d.enc, net: d.net.Clone(), in: make([]float32, len(d.in)), out: make([]float32, len(d.out))}
}

// Predict writes into dst the predicted next state after placing the flow
// on switch action from state s: s + f_ψ(s, onehot(action)), projected with
// ClampState (so action is the next state's current switch). dst may alias s.
func (d *DynamicsModel) Predict(dst, s []float32, action int) error {
	dim, nS := d.enc.Dim(), d.enc.NumSwitches
	if len(s) != dim || len(dst) != dim {
		return fmt.Errorf("training: predict: states of %d and %d values, want %d", len(s), len(dst), dim)
	}
	if action < 0 || action >= nS {
		return fmt.Errorf("training: predict: action %d, want a switch 0..%d", action, nS-1)
	}
	copy(d.in, s)
	oh := d.in[dim:]
	clear(oh)
	oh[action] = 1
	if err := d.net.Forward(d.out, d.in); err != nil {
		return fmt.Errorf("training: predict: %w", err)
	}
	for i, delta := range d.out {
		dst[i] = s[i] + delta
	}
	return ClampState(d.enc, dst, action)
}

// Provenance describes where a model came from; every field is free-form.
type Provenance struct {
	// MadeBy names the program ("proflow train"), Corpus the training data,
	// Seed the training seed, Commit the source revision and Created the
	// time (RFC 3339 by convention), as in qnet.Metadata.
	MadeBy, Corpus, Seed, Commit, Created string
}

// DynamicsFormat is the "format" metadata value of a dynamics-model file;
// DynamicsFormatVersion the version this package reads and writes.
const (
	DynamicsFormat        = policy.DynamicsFormat
	DynamicsFormatVersion = policy.DynamicsFormatVersion
)

// WriteDynamics writes d to w: a safetensors file like a qnet model file
// (tensors "layers.l.weight" [out, in] and "layers.l.bias" [out]) whose
// metadata holds "format" = "proflow-dynamics", "format_version",
// "encoder" (JSON), "state_layout", "architecture" (JSON hidden widths) and
// the provenance keys made_by, corpus, seed, commit and created.
func WriteDynamics(w io.Writer, d *DynamicsModel, p Provenance) error {
	if d == nil {
		return errors.New("training: write dynamics model: nil model")
	}
	enc, err := json.Marshal(d.enc)
	if err != nil {
		return fmt.Errorf("training: write dynamics model: %w", err)
	}
	arch, err := json.Marshal(map[string]any{"hidden": d.net.Hidden(), "activation": qnet.Activation})
	if err != nil {
		return fmt.Errorf("training: write dynamics model: %w", err)
	}
	meta := map[string]string{
		"format": DynamicsFormat, "format_version": DynamicsFormatVersion,
		"encoder": string(enc), "state_layout": d.enc.LayoutName(), "architecture": string(arch),
	}
	for k, v := range map[string]string{"made_by": p.MadeBy, "corpus": p.Corpus, "seed": p.Seed, "commit": p.Commit, "created": p.Created} {
		if v != "" {
			meta[k] = v
		}
	}
	var tensors []safetensors.Tensor
	for l := range d.net.NumLayers() {
		layer := d.net.Layer(l)
		tensors = append(tensors,
			safetensors.Float32s(layerName(l, "weight"), []int64{int64(layer.Out), int64(layer.In)}, layer.Weight),
			safetensors.Float32s(layerName(l, "bias"), []int64{int64(layer.Out)}, layer.Bias))
	}
	if err := safetensors.Write(w, meta, tensors); err != nil {
		return fmt.Errorf("training: write dynamics model: %w", err)
	}
	return nil
}

func layerName(l int, kind string) string { return "layers." + strconv.Itoa(l) + "." + kind }

// ReadDynamics reads a dynamics-model file written by WriteDynamics.
func ReadDynamics(r io.Reader) (*DynamicsModel, Provenance, error) {
	d, p, err := readDynamics(r)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("training: read dynamics model: %w", err)
	}
	return d, p, nil
}

func readDynamics(r io.Reader) (*DynamicsModel, Provenance, error) {
	f, meta, err := policy.ReadForecast(r, "")
	if err != nil {
		// ReadForecast wraps its cause once with its own prefix; the
		// callers here add theirs.
		return nil, Provenance{}, errors.Unwrap(err)
	}
	d, err := NewDynamicsModel(f.Encoder(), f.Net())
	if err != nil {
		return nil, Provenance{}, err
	}
	p := Provenance{MadeBy: meta["made_by"], Corpus: meta["corpus"], Seed: meta["seed"], Commit: meta["commit"], Created: meta["created"]}
	return d, p, nil
}

// SaveDynamics writes d to path atomically.
func SaveDynamics(path string, d *DynamicsModel, p Provenance) error {
	return atomicWrite(path, func(w io.Writer) error { return WriteDynamics(w, d, p) })
}

// LoadDynamics reads the dynamics-model file at path.
func LoadDynamics(path string) (*DynamicsModel, Provenance, error) {
	f, err := fileutil.Open(path)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("training: load dynamics model: %w", err)
	}
	defer f.Close()
	d, p, err := readDynamics(bufio.NewReader(f))
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("training: load dynamics model %s: %w", path, err)
	}
	return d, p, nil
}
