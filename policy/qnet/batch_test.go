package qnet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// kernels runs f once with each kernel this machine has: the assembly
// kernel where the CPU has AVX2 and FMA, and the Go kernel always.
func kernels(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := haveAVX2
	t.Cleanup(func() { haveAVX2 = saved })
	if saved {
		t.Run("asm", f)
	}
	haveAVX2 = false
	t.Run("go", f)
	haveAVX2 = saved
}

// closeTo reports whether got agrees with want (a reference's output, such
// as forwardLoop's) up to float32 rounding of sums of terms as large as
// scale.
func closeTo(got, want, scale float32) bool {
	return math.Abs(float64(got-want)) <= 1e-5*float64(scale+1)
}

// forwardLoop is the textbook float32 forward pass on the unpacked weights,
// four partial sums per output (what Forward was before it used the
// one-row kernel): the kernels' float32 reference.
func forwardLoop(m *Model, dst, x []float32) {
	in := x
	last := len(m.w) - 1
	for l := range m.w {
		out := dst
		if l < last {
			out = make([]float32, m.sizes[l+1])
		}
		n := len(in)
		for o := range out {
			row := m.w[l][o*n : o*n+n]
			var s0, s1, s2, s3 float32
			i := 0
			for ; i+4 <= n; i += 4 {
				s0 += row[i] * in[i]
				s1 += row[i+1] * in[i+1]
				s2 += row[i+2] * in[i+2]
				s3 += row[i+3] * in[i+3]
			}
			for ; i < n; i++ {
				s0 += row[i] * in[i]
			}
			out[o] = m.b[l][o] + ((s0 + s1) + (s2 + s3))
			if l < last && out[o] < 0 {
				out[o] = 0
			}
		}
		in = out
	}
}

// ForwardBatch agrees with the float32 loop up to rounding, and Forward
// gives each row's outputs bit for bit.
func TestForwardBatchMatchesForward(t *testing.T) {
	kernels(t, func(t *testing.T) {
		for _, sizes := range [][]int{
			{34, 256, 256, 4}, {34, 128, 128, 4}, {5, 7, 3}, {3, 17, 33, 1}, {10, 2}, {1, 1}, {40, 16, 16, 20}, {34, 80, 200, 4},
		} {
			m, err := New(sizes, rand.New(rand.NewPCG(uint64(len(sizes)), uint64(sizes[1]))))
			if err != nil {
				t.Fatal(err)
			}
			in, out := m.InputDim(), m.OutputDim()
			for _, n := range []int{0, 1, 3, 4, 5, 63, 64, 65, 130, 257} {
				rng := rand.New(rand.NewPCG(uint64(n), 7))
				states := randomInput(rng, n*in)
				got := make([]float32, n*out)
				if err := m.ForwardBatch(got, states, n); err != nil {
					t.Fatalf("%v n=%d: %v", sizes, n, err)
				}
				want, fwd := make([]float32, out), make([]float32, out)
				for r := range n {
					x := states[r*in : (r+1)*in]
					forwardLoop(m, want, x)
					if err := m.Forward(fwd, x); err != nil {
						t.Fatal(err)
					}
					for k := range out {
						if g, w := got[r*out+k], want[k]; !closeTo(g, w, float32(math.Abs(float64(w)))) {
							t.Fatalf("%v n=%d row %d output %d: ForwardBatch %v, float32 loop %v", sizes, n, r, k, g, w)
						}
						if g, f := got[r*out+k], fwd[k]; g != f {
							t.Fatalf("%v n=%d row %d output %d: ForwardBatch %v, Forward %v, want the same bits", sizes, n, r, k, g, f)
						}
					}
				}
			}
		}
	})
}

// The rows are independent: a row's outputs are the same bits whatever the
// batch around it.
func TestForwardBatchRowsIndependent(t *testing.T) {
	kernels(t, func(t *testing.T) {
		m, err := New([]int{34, 128, 128, 4}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		const n = 150
		states := randomInput(rand.New(rand.NewPCG(3, 4)), n*34)
		all := make([]float32, n*4)
		if err := m.ForwardBatch(all, states, n); err != nil {
			t.Fatal(err)
		}
		one := make([]float32, 4)
		for r := range n {
			if err := m.ForwardBatch(one, states[r*34:(r+1)*34], 1); err != nil {
				t.Fatal(err)
			}
			for k := range 4 {
				if one[k] != all[r*4+k] {
					t.Fatalf("row %d output %d: %v alone, %v in a batch of %d", r, k, one[k], all[r*4+k], n)
				}
			}
		}
	})
}

// A NaN input gives NaN outputs, through ReLU, in a block of kernelRows
// rows (row 1) and through the one-row kernel (row 4), as in the float32
// loop.
func TestForwardBatchNaN(t *testing.T) {
	kernels(t, func(t *testing.T) {
		m, err := New([]int{3, 16, 2}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		nan := float32(math.NaN())
		states := []float32{1, 2, 3, nan, 0, 0, 1, 1, 1, 0, 1, 0, 0, nan, 0}
		got := make([]float32, 10)
		if err := m.ForwardBatch(got, states, 5); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, 2)
		for _, r := range []int{1, 4} {
			forwardLoop(m, want, states[3*r:3*r+3])
			for k := range 2 {
				if !math.IsNaN(float64(got[2*r+k])) || !math.IsNaN(float64(want[k])) {
					t.Errorf("row %d output %d for a NaN input: ForwardBatch %v, float32 loop %v, want NaN from both", r, k, got[2*r+k], want[k])
				}
			}
		}
	})
}

func TestForwardBatchErrors(t *testing.T) {
	m, err := New([]int{3, 4, 2}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		m           *Model
		dst, states []float32
		n           int
		want        string
	}{
		{"zero model", &Model{}, nil, nil, 0, "no layers"},
		{"nil model", nil, nil, nil, 0, "no layers"},
		{"negative n", m, nil, nil, -1, "want n >= 0"},
		{"short states", m, make([]float32, 4), make([]float32, 5), 2, "states has 5 values, want n×input = 2×3 = 6"},
		{"short dst", m, make([]float32, 3), make([]float32, 6), 2, "output has room for 3 values, want n×output = 2×2 = 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.ForwardBatch(tc.dst, tc.states, tc.n)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ForwardBatch = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if err := m.ForwardBatch(nil, nil, 0); err != nil {
		t.Errorf("ForwardBatch of 0 rows = %v, want nil", err)
	}
}

func TestForwardBatchDoesNotAllocate(t *testing.T) {
	m, err := New([]int{34, 256, 256, 4}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	const n = 301
	states, dst := randomInput(rand.New(rand.NewPCG(3, 4)), n*34), make([]float32, n*4)
	if err := m.ForwardBatch(dst, states, n); err != nil { // allocates the buffers
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(10, func() {
		if err := m.ForwardBatch(dst, states, n); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("ForwardBatch allocates %v times per call after the first, want 0", a)
	}
}

// Clones have their own batch buffers: two goroutines run ForwardBatch at
// once (go test -race checks it) and get what one model alone gets.
func TestForwardBatchClones(t *testing.T) {
	m, err := New([]int{34, 64, 4}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	states := randomInput(rand.New(rand.NewPCG(3, 4)), n*34)
	want := make([]float32, n*4)
	if err := m.ForwardBatch(want, states, n); err != nil {
		t.Fatal(err)
	}
	done := make(chan []float32)
	for range 2 {
		c := m.Clone()
		go func() {
			got := make([]float32, n*4)
			for range 20 {
				if err := c.ForwardBatch(got, states, n); err != nil {
					t.Error(err)
				}
			}
			done <- got
		}()
	}
	for range 2 {
		got := <-done
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("clone output %d = %v, want %v", i, got[i], want[i])
			}
		}
	}
}

// forwardBatchGonum is the batched forward pass through gonum's Sgemm, kept
// for BenchmarkQForwardBatch's comparison: per chunk of 64 rows and per
// layer, C = bias, C += A·Wᵀ, ReLU. Sgemm is called on 64 × 64 blocks of C,
// below gonum's threshold for going parallel, so that it runs on the
// calling goroutine without allocating.
type forwardBatchGonum struct {
	m   *Model
	wt  [][]float32 // per layer, in×out: the transposed weights
	act [][]float32 // per layer, batchRows×out
}

func newForwardBatchGonum(m *Model) *forwardBatchGonum {
	g := &forwardBatchGonum{m: m}
	for l := range m.w {
		in, out := m.sizes[l], m.sizes[l+1]
		wt := make([]float32, in*out)
		for o := range out {
			for i := range in {
				wt[i*out+o] = m.w[l][o*in+i]
			}
		}
		g.wt = append(g.wt, wt)
		g.act = append(g.act, make([]float32, batchRows*out))
	}
	return g
}

func (g *forwardBatchGonum) forward(dst, states []float32, n int) {
	var impl gonum.Implementation
	sizes := g.m.sizes
	last := len(g.wt) - 1
	for r0 := 0; r0 < n; r0 += batchRows {
		rows := min(batchRows, n-r0)
		a, lda := states[r0*sizes[0]:], sizes[0]
		for l, wt := range g.wt {
			in, out := sizes[l], sizes[l+1]
			c := g.act[l]
			for r := range rows {
				copy(c[r*out:(r+1)*out], g.m.b[l])
			}
			for j := 0; j < out; j += 64 {
				cols := min(64, out-j)
				impl.Sgemm(blas.NoTrans, blas.NoTrans, rows, cols, in, 1, a, lda, wt[j:], out, 1, c[j:], out)
			}
			if l < last {
				for i, v := range c[:rows*out] {
					if v < 0 {
						c[i] = 0
					}
				}
			}
			a, lda = c, out
		}
		out := sizes[len(sizes)-1]
		copy(dst[r0*out:(r0+rows)*out], g.act[last][:rows*out])
	}
}

func TestForwardBatchGonumMatchesForward(t *testing.T) {
	m, err := New([]int{34, 128, 128, 4}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	const n = 130
	states := randomInput(rand.New(rand.NewPCG(3, 4)), n*34)
	got, want := make([]float32, n*4), make([]float32, n*4)
	newForwardBatchGonum(m).forward(got, states, n)
	if err := m.ForwardBatch(want, states, n); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if !closeTo(got[i], want[i], float32(math.Abs(float64(want[i])))) {
			t.Fatalf("output %d: gonum %v, ForwardBatch %v", i, got[i], want[i])
		}
	}
}

// BenchmarkQForwardBatch evaluates 10,000 states of 34→H→H→4 for H = 128
// and 256 with every kernel: the one ForwardBatch uses on this machine
// ("batch"), the Go kernel ("batch-go"), gonum's Sgemm ("gonum") and
// Forward once per state ("loop", the one-row kernel). Run it on one core:
// -cpu 1.
func BenchmarkQForwardBatch(b *testing.B) {
	const n = 10000
	for _, h := range []int{128, 256} {
		m, err := New([]int{34, h, h, 4}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			b.Fatal(err)
		}
		states, dst := randomInput(rand.New(rand.NewPCG(3, 4)), n*34), make([]float32, n*4)
		flops := float64(2 * n * (34*h + h*h + h*4))
		run := func(name string, f func()) {
			b.Run(fmt.Sprintf("H=%d/%s", h, name), func(b *testing.B) {
				f() // warm up: buffers
				b.ReportAllocs()
				for b.Loop() {
					f()
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(ns/n, "ns/flow")
				b.ReportMetric(flops/ns, "GFLOP/s")
			})
		}
		batch := func() {
			if err := m.ForwardBatch(dst, states, n); err != nil {
				b.Fatal(err)
			}
		}
		if haveAVX2 {
			run("batch", batch)
		}
		run("batch-go", func() {
			saved := haveAVX2
			haveAVX2 = false
			batch()
			haveAVX2 = saved
		})
		g := newForwardBatchGonum(m)
		run("gonum", func() { g.forward(dst, states, n) })
		run("loop", func() {
			for r := range n {
				if err := m.Forward(dst[r*4:(r+1)*4], states[r*34:(r+1)*34]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
