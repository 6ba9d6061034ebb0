package qnet

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Size limits of a Model. New and FromLayers check them before they
// allocate, and Read checks them against the file's header before it reads
// any tensor data, so that a typo in the layer sizes or a corrupt or hostile
// model file is an error (matching ErrTooLarge) instead of an exhausted
// memory. The default network (34→256→256→4, about 75,000 parameters) is far
// below them.
const (
	// MaxLayers bounds the number of dense layers.
	MaxLayers = 64
	// MaxLayerWidth bounds every layer size: the input, each hidden layer
	// and the output (65,536 units).
	MaxLayerWidth = 1 << 16
	// MaxParams bounds the number of weights and biases of the whole
	// network (2^26, that is 256 MiB of float32).
	MaxParams = 1 << 26
)

// Layer is one dense layer y = W·x + b of a Model, in the PyTorch nn.Linear
// convention: Weight holds Out rows of In columns, row-major, so the weight
// of input i in output o is Weight[o*In+i].
type Layer struct {
	In, Out int
	Weight  []float32 // len Out*In
	Bias    []float32 // len Out
}

// Model is a multilayer perceptron Q-network: dense layers with ReLU after
// every hidden layer and a linear output, one output (Q-value) per
// aggregation switch. Its weights never change after construction.
//
// Forward writes into preallocated activation buffers, so a Model is not safe
// for concurrent use; give each goroutine its own Clone, which shares the
// weights.
//
// Build a Model with New, FromLayers or Read. The zero Model has no layers:
// its accessors return zero values (InputDim and OutputDim 0, Hidden, Sizes
// and Layer empty), Clone returns another zero Model, and Forward and Write
// return an error. A nil *Model behaves the same (its Clone is nil).
type Model struct {
	sizes []int       // [input, hidden..., output]
	w, b  [][]float32 // per layer
	row   [][]float32 // one row's activations of each layer, padded to its packed cols: Forward's buffers

	packed []packedLayer // the weights packed for the kernels, shared by clones
	bs     *batchScratch // ForwardBatch's buffers, allocated by its first call of more than one row
}

// New returns a model with the given layer sizes (input, hidden..., output)
// and weights and biases drawn uniformly from ±1/√in of each layer, PyTorch's
// nn.Linear default. All randomness comes from rng.
func New(sizes []int, rng *rand.Rand) (*Model, error) {
	if rng == nil {
		return nil, fmt.Errorf("qnet: new model: nil rng")
	}
	if err := checkSizes(sizes); err != nil {
		return nil, fmt.Errorf("qnet: new model: %w", err)
	}
	layers := make([]Layer, len(sizes)-1)
	for l := range layers {
		in, out := sizes[l], sizes[l+1]
		bound := float32(1 / math.Sqrt(float64(in)))
		layer := Layer{In: in, Out: out, Weight: make([]float32, out*in), Bias: make([]float32, out)}
		for i := range layer.Weight {
			layer.Weight[i] = (2*rng.Float32() - 1) * bound
		}
		for i := range layer.Bias {
			layer.Bias[i] = (2*rng.Float32() - 1) * bound
		}
		layers[l] = layer
	}
	return build(sizes, layers), nil
}

// FromLayers returns a model with copies of the given layers, which must
// chain (each layer's In is the previous layer's Out) and hold only finite
// numbers.
func FromLayers(layers []Layer) (*Model, error) {
	if len(layers) == 0 {
		return nil, fmt.Errorf("qnet: from layers: no layers, want at least one")
	}
	if err := checkLimits(len(layers)+1, func(i int) int {
		if i == 0 {
			return layers[0].In
		}
		return layers[i-1].Out
	}); err != nil {
		return nil, fmt.Errorf("qnet: from layers: %w", err)
	}
	sizes := []int{layers[0].In}
	cp := make([]Layer, len(layers))
	for l, layer := range layers {
		if layer.In < 1 || layer.Out < 1 {
			return nil, fmt.Errorf("qnet: from layers: layer %d is %d→%d, want positive sizes", l, layer.In, layer.Out)
		}
		if layer.In != sizes[l] {
			return nil, fmt.Errorf("qnet: from layers: layer %d takes %d inputs but layer %d gives %d outputs", l, layer.In, l-1, sizes[l])
		}
		if len(layer.Weight) != layer.In*layer.Out {
			return nil, fmt.Errorf("qnet: from layers: layer %d weight has %d values, want %d×%d = %d", l, len(layer.Weight), layer.Out, layer.In, layer.In*layer.Out)
		}
		if len(layer.Bias) != layer.Out {
			return nil, fmt.Errorf("qnet: from layers: layer %d bias has %d values, want %d", l, len(layer.Bias), layer.Out)
		}
		if i := nonFinite(layer.Weight); i >= 0 {
			return nil, fmt.Errorf("qnet: from layers: %w", &NonFiniteError{Tensor: weightName(l), Index: i, Value: layer.Weight[i], Cols: layer.In})
		}
		if i := nonFinite(layer.Bias); i >= 0 {
			return nil, fmt.Errorf("qnet: from layers: %w", &NonFiniteError{Tensor: biasName(l), Index: i, Value: layer.Bias[i]})
		}
		cp[l] = Layer{In: layer.In, Out: layer.Out,
			Weight: append([]float32(nil), layer.Weight...), Bias: append([]float32(nil), layer.Bias...)}
		sizes = append(sizes, layer.Out)
	}
	return build(sizes, cp), nil
}

func checkSizes(sizes []int) error {
	if len(sizes) < 2 {
		return fmt.Errorf("layer sizes %v, want at least input and output", sizes)
	}
	if err := checkLimits(len(sizes), func(i int) int { return sizes[i] }); err != nil {
		return err
	}
	for i, n := range sizes {
		if n < 1 {
			return fmt.Errorf("layer sizes %v: size %d is %d, want >= 1", sizes, i, n)
		}
	}
	return nil
}

// checkLimits checks a network of n layer sizes (input, hidden..., output;
// size(i) returns size i) against MaxLayers, MaxLayerWidth and MaxParams,
// without overflowing. Sizes below 1 are left to the caller. The error
// names the dense layer and the limit, and wraps ErrTooLarge.
func checkLimits(n int, size func(i int) int) error {
	if n-1 > MaxLayers {
		return fmt.Errorf("%d dense layers, want at most qnet.MaxLayers = %d: %w", n-1, MaxLayers, ErrTooLarge)
	}
	for i := range n {
		if w := size(i); w > MaxLayerWidth {
			l, side := i-1, "outputs"
			if i == 0 {
				l, side = 0, "inputs"
			}
			return fmt.Errorf("dense layer %d has %d %s, want at most qnet.MaxLayerWidth = %d: %w", l, w, side, MaxLayerWidth, ErrTooLarge)
		}
	}
	var params int64
	for l := range n - 1 {
		in, out := int64(max(size(l), 0)), int64(max(size(l+1), 0))
		if params += in*out + out; params > MaxParams {
			return fmt.Errorf("dense layer %d (%d→%d) brings the network to %d parameters, want at most qnet.MaxParams = %d: %w",
				l, in, out, params, MaxParams, ErrTooLarge)
		}
	}
	return nil
}

// build assembles a model that takes ownership of layers.
func build(sizes []int, layers []Layer) *Model {
	m := &Model{sizes: append([]int(nil), sizes...), w: make([][]float32, len(layers)), b: make([][]float32, len(layers))}
	for l, layer := range layers {
		m.w[l], m.b[l] = layer.Weight, layer.Bias
	}
	m.packed = pack(m.sizes, m.w, m.b)
	m.allocBuffers()
	return m
}

// allocBuffers gives m its own row buffers (Forward's), one per layer: 2 KiB
// for 34→256→256→4.
func (m *Model) allocBuffers() {
	if len(m.sizes) < 2 {
		return // the zero Model
	}
	m.row = make([][]float32, len(m.packed))
	for l := range m.row {
		m.row[l] = make([]float32, m.packed[l].cols)
	}
}

// Clone returns a model that shares m's weights but has its own activation
// buffers, for use in another goroutine.
func (m *Model) Clone() *Model {
	if m == nil {
		return nil
	}
	c := &Model{sizes: m.sizes, w: m.w, b: m.b, packed: m.packed}
	c.allocBuffers()
	return c
}

// empty reports whether m is the zero Model (no layers).
func (m *Model) empty() bool { return m == nil || len(m.sizes) < 2 }

// InputDim returns the length of the input vector (the state dimension),
// or 0 for the zero Model.
func (m *Model) InputDim() int {
	if m.empty() {
		return 0
	}
	return m.sizes[0]
}

// OutputDim returns the number of outputs (one Q-value per switch), or 0
// for the zero Model.
func (m *Model) OutputDim() int {
	if m.empty() {
		return 0
	}
	return m.sizes[len(m.sizes)-1]
}

// Hidden returns the widths of the hidden layers (none for the zero Model).
func (m *Model) Hidden() []int {
	if m.empty() {
		return nil
	}
	return append([]int(nil), m.sizes[1:len(m.sizes)-1]...)
}

// Sizes returns the layer sizes: input, hidden..., output.
func (m *Model) Sizes() []int {
	if m.empty() {
		return nil
	}
	return append([]int(nil), m.sizes...)
}

// NumLayers returns the number of dense layers.
func (m *Model) NumLayers() int {
	if m.empty() {
		return 0
	}
	return len(m.w)
}

// Layer returns a copy of dense layer l (0 ≤ l < NumLayers). For l out of
// that range, including any l of the zero Model, it returns the zero Layer
// (In and Out 0, no weights).
func (m *Model) Layer(l int) Layer {
	if m.empty() || l < 0 || l >= len(m.w) || l+1 >= len(m.sizes) {
		return Layer{}
	}
	return Layer{In: m.sizes[l], Out: m.sizes[l+1],
		Weight: append([]float32(nil), m.w[l]...), Bias: append([]float32(nil), m.b[l]...)}
}

// Forward computes the network's output for input x into dst. len(x) must be
// InputDim and len(dst) OutputDim, and dst must not overlap x. It does not
// allocate (except for the error on a length mismatch).
//
// It is ForwardBatch of one row, through the same packed weights and a
// one-row variant of its kernel (AVX2/FMA assembly where the CPU has it, Go
// elsewhere): its outputs are the same bits as that row's in any
// ForwardBatch. Each sum starts at the bias and adds its products in input
// order, in float32 (fused multiply-adds in the assembly kernel); the result
// agrees with libtorch on the same weights up to float32 rounding, not bit
// for bit. About 2.5 µs for 34→256→256→4 with the assembly kernel
// (BenchmarkForward; docs/performance.md).
func (m *Model) Forward(dst []float32, x []float32) error {
	if m.empty() || len(m.w) != len(m.sizes)-1 || len(m.packed) != len(m.w) {
		return errors.New("qnet: forward: the model has no layers (the zero Model), want one from New, FromLayers or Read")
	}
	if len(x) != m.sizes[0] {
		return fmt.Errorf("qnet: forward: input has %d values, want %d", len(x), m.sizes[0])
	}
	if out := m.sizes[len(m.sizes)-1]; len(dst) != out {
		return fmt.Errorf("qnet: forward: output has room for %d values, want %d", len(dst), out)
	}
	m.forwardRow(dst, x)
	return nil
}

// nonFinite returns the index of the first NaN or infinite value, or -1.
func nonFinite(v []float32) int {
	for i, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return i
		}
	}
	return -1
}

func weightName(l int) string { return fmt.Sprintf("layers.%d.weight", l) }
func biasName(l int) string   { return fmt.Sprintf("layers.%d.bias", l) }
