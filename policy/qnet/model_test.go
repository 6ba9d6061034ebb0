package qnet

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// reference computes the network output in float64 with the textbook loop.
func reference(m *Model, x []float32) []float64 {
	in := make([]float64, len(x))
	for i, v := range x {
		in[i] = float64(v)
	}
	for l := range m.NumLayers() {
		layer := m.Layer(l)
		out := make([]float64, layer.Out)
		for o := range out {
			s := float64(layer.Bias[o])
			for i := range layer.In {
				s += float64(layer.Weight[o*layer.In+i]) * in[i]
			}
			if l < m.NumLayers()-1 && s < 0 {
				s = 0
			}
			out[o] = s
		}
		in = out
	}
	return in
}

func randomInput(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = 2*rng.Float32() - 1
	}
	return x
}

func TestForwardHandComputed(t *testing.T) {
	m, err := FromLayers([]Layer{
		{In: 2, Out: 2, Weight: []float32{1, 0, 0, -1}, Bias: []float32{0, 0}},
		{In: 2, Out: 2, Weight: []float32{1, 1, -3, 0}, Bias: []float32{0.5, 0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 2)
	if err := m.Forward(dst, []float32{1, 2}); err != nil {
		t.Fatal(err)
	}
	// Hidden: [1, -2] → ReLU → [1, 0]; output is linear, so -3 stays negative.
	if diff := cmp.Diff([]float32{1.5, -3}, dst); diff != "" {
		t.Errorf("Forward (-want +got):\n%s", diff)
	}
}

// Forward (with each kernel this machine has) agrees with the float64
// reference.
func TestForwardMatchesReference(t *testing.T) {
	kernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 7))
		for _, sizes := range [][]int{{34, 256, 256, 4}, {18, 5, 2}, {3, 1}, {7, 9, 1, 6, 3}, {34, 80, 200, 4}} {
			m, err := New(sizes, rng)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]float32, m.OutputDim())
			for range 5 {
				x := randomInput(rng, m.InputDim())
				if err := m.Forward(dst, x); err != nil {
					t.Fatal(err)
				}
				want := reference(m, x)
				for k := range dst {
					if d := math.Abs(float64(dst[k]) - want[k]); d > 1e-4*(1+math.Abs(want[k])) {
						t.Errorf("sizes %v: output %d = %v, float64 reference %v", sizes, k, dst[k], want[k])
					}
				}
			}
		}
	})
}

func TestForwardErrors(t *testing.T) {
	m, err := New([]int{4, 3, 2}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		dst, x []float32
		want   string
	}{
		{"short input", make([]float32, 2), make([]float32, 3), "input has 3 values, want 4"},
		{"long output", make([]float32, 3), make([]float32, 4), "output has room for 3 values, want 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := m.Forward(tc.dst, tc.x)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Forward = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// Forward does not allocate, not even on its first call: its row buffers
// come with the model (and with each clone).
func TestForwardDoesNotAllocate(t *testing.T) {
	kernels(t, func(t *testing.T) {
		m, err := New([]int{34, 256, 256, 4}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		x, dst := randomInput(rand.New(rand.NewPCG(3, 4)), 34), make([]float32, 4)
		for _, m := range []*Model{m, m.Clone()} {
			if n := testing.AllocsPerRun(50, func() {
				if err := m.Forward(dst, x); err != nil {
					t.Fatal(err)
				}
				if err := m.ForwardBatch(dst, x, 1); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("Forward and ForwardBatch of one row allocate %v times per call, want 0", n)
			}
			if m.bs != nil {
				t.Error("ForwardBatch of one row allocated the batch buffers")
			}
		}
	})
}

func TestNewAndFromLayersErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		name string
		f    func() error
		want string
	}{
		{"nil rng", func() error { _, err := New([]int{2, 2}, nil); return err }, "nil rng"},
		{"one size", func() error { _, err := New([]int{2}, rng); return err }, "want at least input and output"},
		{"zero width", func() error { _, err := New([]int{2, 0, 2}, rng); return err }, "size 1 is 0"},
		{"no layers", func() error { _, err := FromLayers(nil); return err }, "no layers"},
		{"no chain", func() error {
			_, err := FromLayers([]Layer{
				{In: 1, Out: 2, Weight: make([]float32, 2), Bias: make([]float32, 2)},
				{In: 3, Out: 1, Weight: make([]float32, 3), Bias: make([]float32, 1)},
			})
			return err
		}, "layer 1 takes 3 inputs but layer 0 gives 2 outputs"},
		{"weight length", func() error {
			_, err := FromLayers([]Layer{{In: 2, Out: 2, Weight: make([]float32, 3), Bias: make([]float32, 2)}})
			return err
		}, "weight has 3 values, want 2×2 = 4"},
		{"NaN", func() error {
			_, err := FromLayers([]Layer{{In: 2, Out: 2, Weight: []float32{0, 0, 0, float32(math.NaN())}, Bias: make([]float32, 2)}})
			return err
		}, "layers.0.weight[3] (row 1, column 1) is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.f()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestFromLayersCopies(t *testing.T) {
	w := []float32{1, 2}
	m, err := FromLayers([]Layer{{In: 2, Out: 1, Weight: w, Bias: []float32{0}}})
	if err != nil {
		t.Fatal(err)
	}
	w[0] = 100
	got := m.Layer(0)
	got.Weight[1] = 100
	if diff := cmp.Diff(Layer{In: 2, Out: 1, Weight: []float32{1, 2}, Bias: []float32{0}}, m.Layer(0)); diff != "" {
		t.Errorf("model changed through caller slices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2, 1}, m.Sizes()); diff != "" {
		t.Errorf("Sizes (-want +got):\n%s", diff)
	}
	if h := m.Hidden(); len(h) != 0 {
		t.Errorf("Hidden = %v, want none", h)
	}
}

// Clones have their own buffers: goroutines run Forward on their own inputs
// at once (go test -race checks it) and each gets what the model alone gets
// for its input.
func TestCloneConcurrent(t *testing.T) {
	m, err := New([]int{34, 64, 4}, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	xs, want, results := make([][]float32, 4), make([][]float32, 4), make([][]float32, 4)
	for g := range xs {
		xs[g], want[g], results[g] = randomInput(rng, 34), make([]float32, 4), make([]float32, 4)
		if err := m.Forward(want[g], xs[g]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range results {
		c := m.Clone()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if err := c.Forward(results[g], xs[g]); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for g, got := range results {
		if diff := cmp.Diff(want[g], got); diff != "" {
			t.Errorf("clone %d (-want +got):\n%s", g, diff)
		}
	}
}

func TestLayerOutOfRangeIsZero(t *testing.T) {
	m, err := New([]int{3, 4, 2}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []int{-1, 2, 99, math.MinInt} {
		if diff := cmp.Diff(Layer{}, m.Layer(l)); diff != "" {
			t.Errorf("Layer(%d) (-want +got):\n%s", l, diff)
		}
	}
	if got := m.Layer(1); got.In != 4 || got.Out != 2 || len(got.Weight) != 8 || len(got.Bias) != 2 {
		t.Errorf("Layer(1) = %d→%d with %d weights and %d biases, want 4→2 with 8 and 2", got.In, got.Out, len(got.Weight), len(got.Bias))
	}
}

func TestZeroModelIsSafe(t *testing.T) {
	for name, m := range map[string]*Model{"zero": {}, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			got := struct {
				In, Out, Layers int
				Hidden, Sizes   []int
				Layer           Layer
			}{m.InputDim(), m.OutputDim(), m.NumLayers(), m.Hidden(), m.Sizes(), m.Layer(0)}
			if diff := cmp.Diff(struct {
				In, Out, Layers int
				Hidden, Sizes   []int
				Layer           Layer
			}{}, got); diff != "" {
				t.Errorf("accessors of the zero Model (-want +got):\n%s", diff)
			}
			err := m.Forward(make([]float32, 1), make([]float32, 1))
			if err == nil || !strings.Contains(err.Error(), "no layers") {
				t.Errorf("Forward = %v, want an error saying the model has no layers", err)
			}
			if c := m.Clone(); c.NumLayers() != 0 || c.InputDim() != 0 {
				t.Errorf("Clone of the zero Model has %d layers and %d inputs, want 0 and 0", c.NumLayers(), c.InputDim())
			}
			var buf strings.Builder
			if err := Write(&buf, m, testMetadata(smallTopology())); err == nil {
				t.Error("Write of the zero Model succeeded")
			}
		})
	}
}
