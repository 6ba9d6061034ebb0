//go:build torch

package torchq

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"
)

// MLP is a multilayer perceptron held by libtorch: dense layers with ReLU
// after every hidden layer and a linear output, the architecture of
// qnet.Model. Its variables live in a gotch VarStore under the names of the
// qnet model file, "layers.l.weight" (shape [out, in], PyTorch's nn.Linear
// layout, which is also qnet's row-major [out][in]) and "layers.l.bias", and
// each layer computes torch's linear(x, W, b) = x·Wᵀ + b.
//
// An MLP is not safe for concurrent use.
type MLP struct {
	vs    *nn.VarStore
	w, b  []*ts.Tensor
	sizes []int
	dev   gotch.Device
}

// NewMLP returns a trainable MLP with the given layer sizes (input,
// hidden..., output) on dev, initialised like qnet.New (and PyTorch's
// nn.Linear): weights and biases uniform in ±1/√in. The values are drawn
// from rng, not from libtorch's generator (gotch v0.7.0 has no binding for
// torch.manual_seed), so a seed fixes them on every device.
func NewMLP(sizes []int, dev gotch.Device, rng *rand.Rand) (*MLP, error) {
	if rng == nil {
		return nil, errors.New("torchq: new MLP: nil rng")
	}
	init, err := qnet.New(sizes, rng)
	if err != nil {
		return nil, fmt.Errorf("torchq: new MLP: %w", err)
	}
	return FromModel(init, dev, true)
}

// FromModel returns an MLP on dev holding a copy of m's weights; trainable
// says whether the optimiser may update them (a target network is not).
func FromModel(m *qnet.Model, dev gotch.Device, trainable bool) (*MLP, error) {
	defer lockThread()()
	if m == nil {
		return nil, errors.New("torchq: from model: nil model")
	}
	mlp := &MLP{vs: nn.NewVarStore(dev), sizes: m.Sizes(), dev: dev}
	root := mlp.vs.Root().Sub("layers")
	for l := range m.NumLayers() {
		layer := m.Layer(l)
		p := root.Sub(strconv.Itoa(l))
		w, err := addVar(p, "weight", layer.Weight, dev, trainable, int64(layer.Out), int64(layer.In))
		if err != nil {
			mlp.Close()
			return nil, fmt.Errorf("torchq: from model: layer %d: %w", l, err)
		}
		mlp.w = append(mlp.w, w)
		b, err := addVar(p, "bias", layer.Bias, dev, trainable, int64(layer.Out))
		if err != nil {
			mlp.Close()
			return nil, fmt.Errorf("torchq: from model: layer %d: %w", l, err)
		}
		mlp.b = append(mlp.b, b)
	}
	return mlp, nil
}

// addVar adds a variable holding data to the var store at p.
func addVar(p *nn.Path, name string, data []float32, dev gotch.Device, trainable bool, shape ...int64) (*ts.Tensor, error) {
	tp := newTape(dev)
	defer tp.free()
	x := tp.floats(data, shape...)
	if tp.err != nil {
		return nil, tp.err
	}
	// Add keeps its own handle (shallow clone or requires-grad view), so
	// the tape's may be dropped.
	return p.Add(name, x, trainable)
}

// Sizes returns the layer sizes: input, hidden..., output.
func (m *MLP) Sizes() []int { return append([]int(nil), m.sizes...) }

// Device returns the device holding the weights.
func (m *MLP) Device() gotch.Device { return m.dev }

// VarStore returns the gotch variable store (for optimisers and checkpoints).
func (m *MLP) VarStore() *nn.VarStore { return m.vs }

// forward records the network's output for x ([rows, in]) on tp.
func (m *MLP) forward(tp *tape, x *ts.Tensor) *ts.Tensor {
	h := x
	last := len(m.w) - 1
	for l := range m.w {
		h = tp.linear(h, m.w[l], m.b[l])
		if l < last {
			h = tp.relu(h)
		}
	}
	return h
}

// Forward evaluates the network, without gradients, on rows inputs stored
// row-major in x, and returns the rows×output values row-major.
func (m *MLP) Forward(x []float32, rows int) ([]float32, error) {
	defer lockThread()()
	in := m.sizes[0]
	if rows < 1 || len(x) != rows*in {
		return nil, fmt.Errorf("torchq: forward: %d values for %d rows of %d inputs", len(x), rows, in)
	}
	var out []float32
	err := withoutGrad(func() error {
		tp := newTape(m.dev)
		defer tp.free()
		out = tp.values(m.forward(tp, tp.floats(x, int64(rows), int64(in))))
		return tp.err
	})
	if err != nil {
		return nil, fmt.Errorf("torchq: forward: %w", err)
	}
	return out, nil
}

// Layers copies the weights out of libtorch as qnet layers. The weight
// variables already have qnet's [out, in] row-major layout; nothing is
// transposed.
func (m *MLP) Layers() ([]qnet.Layer, error) {
	defer lockThread()()
	layers := make([]qnet.Layer, len(m.w))
	for l := range m.w {
		tp := newTape(m.dev)
		w, b := tp.values(m.w[l]), tp.values(m.b[l])
		tp.free()
		if tp.err != nil {
			return nil, fmt.Errorf("torchq: export layer %d: %w", l, tp.err)
		}
		layers[l] = qnet.Layer{In: m.sizes[l], Out: m.sizes[l+1], Weight: w, Bias: b}
	}
	return layers, nil
}

// Model returns a pure-Go qnet.Model with a copy of the current weights.
func (m *MLP) Model() (*qnet.Model, error) {
	layers, err := m.Layers()
	if err != nil {
		return nil, err
	}
	q, err := qnet.FromLayers(layers)
	if err != nil {
		return nil, fmt.Errorf("torchq: export: %w", err)
	}
	return q, nil
}

// CopyFrom overwrites m's weights with src's; the sizes must match.
func (m *MLP) CopyFrom(src *MLP) error {
	defer lockThread()()
	if fmt.Sprint(m.sizes) != fmt.Sprint(src.sizes) {
		return fmt.Errorf("torchq: copy weights: sizes %v, source %v", m.sizes, src.sizes)
	}
	err := m.vs.Copy(src.vs)
	// VarStore.Copy leaves gradient tracking off (see withoutGrad).
	if gerr := enableGrad(); err == nil {
		err = gerr
	}
	if err != nil {
		return fmt.Errorf("torchq: copy weights: %w", err)
	}
	return nil
}

// Save writes a gotch checkpoint of the weights to path atomically (a
// temporary file renamed over path). Load reads it back into an MLP of the
// same sizes.
func (m *MLP) Save(path string) error {
	defer lockThread()()
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("torchq: checkpoint: %w", err)
	}
	tmp := f.Name()
	f.Close()
	if err := m.vs.Save(tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("torchq: checkpoint %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("torchq: checkpoint %s: %w", path, err)
	}
	return nil
}

// Load reads a checkpoint written by Save.
func (m *MLP) Load(path string) error {
	defer lockThread()()
	err := m.vs.Load(path)
	// VarStore.Load leaves gradient tracking off (see withoutGrad).
	if gerr := enableGrad(); err == nil {
		err = gerr
	}
	if err != nil {
		return fmt.Errorf("torchq: load checkpoint %s: %w", path, err)
	}
	return nil
}

// Close frees the weights. The MLP must not be used afterwards.
func (m *MLP) Close() {
	defer lockThread()()
	for _, x := range append(m.w, m.b...) {
		if x != nil {
			x.Drop()
		}
	}
	m.w, m.b = nil, nil
}
