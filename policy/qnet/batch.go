package qnet

import (
	"errors"
	"fmt"
)

// Shape of the batched forward pass (ForwardBatch).
const (
	// batchRows is how many states ForwardBatch carries through all layers
	// before it starts on the next ones: their activations (64 rows of the
	// widest layer, 64 KiB at 256 units) stay in the core's cache while the
	// weights (300 KiB for 34→256→256→4) are read once per chunk.
	batchRows = 64
	// panelCols is the width of a weight panel: the kernel computes
	// kernelRows states × panelCols outputs at once.
	panelCols = 16
	// kernelRows is the number of states (rows) of one kernel call.
	kernelRows = 4
)

// packedLayer is a dense layer's weights rearranged for the batched kernel:
// the transposed weight matrix cut into panels of panelCols output columns,
// each panel k rows (inputs) of panelCols values, contiguous, so that the
// kernel streams one panel through the cache per block of states. Outputs
// beyond out and inputs beyond in are zero, so padded columns of one layer's
// activations are 0 (ReLU(0 + 0)) and add nothing to the next layer.
type packedLayer struct {
	in, out int       // the layer's true sizes
	k       int       // inputs a panel holds: in for the first layer, the previous layer's cols after
	cols    int       // out rounded up to panelCols
	panels  []float32 // cols/panelCols panels of k×panelCols; the weight of input i in output p*panelCols+c is panels[p*k*panelCols+i*panelCols+c]
	bias    []float32 // cols values
}

// pack returns the packed form of every layer of m. It is computed once,
// when the model is built, and shared by its clones (weights never change).
func pack(sizes []int, w, b [][]float32) []packedLayer {
	pl := make([]packedLayer, len(w))
	for l := range w {
		in, out := sizes[l], sizes[l+1]
		k := in
		if l > 0 {
			k = pl[l-1].cols
		}
		cols := (out + panelCols - 1) / panelCols * panelCols
		p := packedLayer{in: in, out: out, k: k, cols: cols,
			panels: make([]float32, cols*k), bias: make([]float32, cols)}
		copy(p.bias, b[l])
		for o := range out {
			panel, c := o/panelCols, o%panelCols
			base := panel * k * panelCols
			row := w[l][o*in : o*in+in]
			for i, v := range row {
				p.panels[base+i*panelCols+c] = v
			}
		}
		pl[l] = p
	}
	return pl
}

// batchScratch holds ForwardBatch's buffers: one chunk of activations per
// hidden layer and the chunk's padded output.
type batchScratch struct {
	act [][]float32 // per hidden layer, batchRows × cols
	out []float32   // batchRows × cols of the output layer
}

func (m *Model) scratch() *batchScratch {
	if m.bs != nil {
		return m.bs
	}
	bs := &batchScratch{act: make([][]float32, len(m.packed)-1)}
	for l := range bs.act {
		bs.act[l] = make([]float32, batchRows*m.packed[l].cols)
	}
	bs.out = make([]float32, batchRows*m.packed[len(m.packed)-1].cols)
	m.bs = bs
	return bs
}

// ForwardBatch computes the network's outputs for n inputs at once: states
// holds n rows of InputDim values, row-major (row j is states[j*in :
// (j+1)*in]), and dst receives n rows of OutputDim values, row-major. len
// must be exactly n*InputDim and n*OutputDim; dst must not overlap states.
// n = 0 is a no-op.
//
// The first call of more than one row allocates the model's batch buffers
// (about 64 rows of every layer, 140 KiB for 34→256→256→4); later calls do
// not allocate (except for the error on a length mismatch). One row (n = 1,
// which is Forward) uses the small row buffers every Model and Clone comes
// with and never allocates. Like Forward it writes into buffers the Model
// owns: one Model must not run ForwardBatch or Forward in two goroutines at
// once; give each goroutine its own Clone (clones share the weights, not the
// buffers).
//
// Every output is the same bits as Forward's on the same row: a row's
// outputs do not depend on the other rows, n or the row's position. They
// agree with a textbook float32 or float64 loop, and with libtorch, up to
// float32 rounding, not bit for bit.
//
// # Kernel
//
// The states go through the network 64 rows at a time, all layers before
// the next 64. A dense layer is a product of the chunk's activations with
// the transposed weights, packed once per model into panels of 16 output
// columns; a kernel computes 4 rows × 16 columns per call, with the bias
// added first and ReLU applied on the way out. On amd64 with AVX2 and FMA
// the kernel is assembly (8 ymm accumulators, one broadcast and two fused
// multiply-adds per input and row); elsewhere, or built with the purego tag,
// it is Go with 4×4 register blocking.
//
// Rows that do not fill a block of 4 (the last n mod 4 of a chunk, and the
// one row of Forward) go through a one-row variant of the same kernel: 1
// row × 64 columns (four panels) per call in assembly, again 8 ymm
// accumulators, one broadcast and eight fused multiply-adds per input, or 1
// × 8 in Go. Each output's sum starts at the bias and adds its products in
// input order in both, so the variants give the same bits. One state of
// 34→256→256→4 takes about 2.5 µs this way (BenchmarkForward, one core).
//
// Measured for issue 13 (BenchmarkQForwardBatch: one core of the 2-core
// development machine, AMD EPYC, otherwise idle, go1.26, median of 3;
// 10,000 states of 34→H→H→4):
//
//	kernel                                H = 256               H = 128
//	assembly (AVX2/FMA)                   16.6 ms, 91 GFLOP/s   4.7 ms
//	Go kernel                             349 ms, 4.3 GFLOP/s   105 ms
//	gonum Sgemm on 64×64 blocks (serial)  155 ms, 9.7 GFLOP/s   53 ms
//	Forward once per state                251 ms, 6.0 GFLOP/s   76 ms
//
// (Forward was then a scalar loop of its own; it is now the one-row
// kernel.)
//
// gonum's Sgemm (pure Go around a 4-wide SSE axpy, no FMA; called on blocks
// below its threshold for going parallel, so that it stays on one goroutine
// and does not allocate) and the scalar Go kernel are far from the 50 ms
// a 10,000-flow step may take; the assembly kernel is the default.
func (m *Model) ForwardBatch(dst, states []float32, n int) error {
	if m.empty() || len(m.w) != len(m.sizes)-1 || len(m.packed) != len(m.w) {
		return errors.New("qnet: forward batch: the model has no layers (the zero Model), want one from New, FromLayers or Read")
	}
	in, out := m.sizes[0], m.sizes[len(m.sizes)-1]
	if n < 0 {
		return fmt.Errorf("qnet: forward batch: %d rows, want n >= 0", n)
	}
	if len(states) != n*in {
		return fmt.Errorf("qnet: forward batch: states has %d values, want n×input = %d×%d = %d", len(states), n, in, n*in)
	}
	if len(dst) != n*out {
		return fmt.Errorf("qnet: forward batch: output has room for %d values, want n×output = %d×%d = %d", len(dst), n, out, n*out)
	}
	switch n {
	case 0:
		return nil
	case 1:
		m.forwardRow(dst, states)
		return nil
	}
	bs := m.scratch()
	for r0 := 0; r0 < n; r0 += batchRows {
		rows := min(batchRows, n-r0)
		m.forwardChunk(bs, dst[r0*out:(r0+rows)*out], states[r0*in:(r0+rows)*in], rows)
	}
	return nil
}

// forwardChunk runs rows ≤ batchRows states through every layer: the
// rows of whole blocks of kernelRows through kernel, the rest one by one
// through the one-row kernel (denseRow), which sums in the same order.
func (m *Model) forwardChunk(bs *batchScratch, dst, states []float32, rows int) {
	a, lda := states, m.sizes[0]
	last := len(m.packed) - 1
	for l := range m.packed {
		p := &m.packed[l]
		c := bs.out
		if l < last {
			c = bs.act[l]
		}
		denseBatch(c, p.cols, a, lda, p, rows, l < last)
		a, lda = c, p.cols
	}
	out := m.sizes[len(m.sizes)-1]
	cols := m.packed[last].cols
	for r := range rows {
		copy(dst[r*out:r*out+out], bs.out[r*cols:r*cols+out])
	}
}

// forwardRow runs one state x through every layer with the one-row kernel,
// in the model's row buffers, and writes the outputs into dst. Forward and
// ForwardBatch of one row use it.
func (m *Model) forwardRow(dst, x []float32) {
	a := x
	last := len(m.packed) - 1
	for l := range m.packed {
		denseRow(m.row[l], a, &m.packed[l], l < last)
		a = m.row[l]
	}
	copy(dst, a[:len(dst)])
}

// denseBatch computes c = a·Wᵀ + b (and ReLU when relu) for rows states:
// a holds rows of lda values, of which the first p.k are the layer's
// inputs, and c rows of ldc ≥ p.cols values.
func denseBatch(c []float32, ldc int, a []float32, lda int, p *packedLayer, rows int, relu bool) {
	k := p.k
	full := rows / kernelRows * kernelRows
	for panel := range p.cols / panelCols {
		b := p.panels[panel*k*panelCols : (panel+1)*k*panelCols]
		bias := p.bias[panel*panelCols : (panel+1)*panelCols]
		for r := 0; r < full; r += kernelRows {
			kernel(k, a[r*lda:], lda, b, bias, c[r*ldc+panel*panelCols:], ldc, relu)
		}
	}
	for r := full; r < rows; r++ {
		denseRow(c[r*ldc:r*ldc+p.cols], a[r*lda:r*lda+k], p, relu)
	}
}

// kernelGo computes kernelRows × panelCols outputs: for r < 4 and c < 16,
// dst[r*ldc+c] = bias[c] + Σ_i a[r*lda+i]·b[i*16+c], then ReLU when relu.
// It keeps a 4×4 block of sums in registers at a time.
func kernelGo(k int, a []float32, lda int, b, bias, dst []float32, ldc int, relu bool) {
	a0, a1, a2, a3 := a[:k], a[lda:lda+k], a[2*lda:2*lda+k], a[3*lda:3*lda+k]
	b = b[:k*panelCols]
	for c0 := 0; c0 < panelCols; c0 += 4 {
		bb := bias[c0 : c0+4 : c0+4]
		s00, s01, s02, s03 := bb[0], bb[1], bb[2], bb[3]
		s10, s11, s12, s13 := s00, s01, s02, s03
		s20, s21, s22, s23 := s00, s01, s02, s03
		s30, s31, s32, s33 := s00, s01, s02, s03
		for i := range k {
			w := b[i*panelCols+c0 : i*panelCols+c0+4 : i*panelCols+c0+4]
			w0, w1, w2, w3 := w[0], w[1], w[2], w[3]
			x := a0[i]
			s00 += x * w0
			s01 += x * w1
			s02 += x * w2
			s03 += x * w3
			x = a1[i]
			s10 += x * w0
			s11 += x * w1
			s12 += x * w2
			s13 += x * w3
			x = a2[i]
			s20 += x * w0
			s21 += x * w1
			s22 += x * w2
			s23 += x * w3
			x = a3[i]
			s30 += x * w0
			s31 += x * w1
			s32 += x * w2
			s33 += x * w3
		}
		store4(dst[c0:c0+4], s00, s01, s02, s03, relu)
		store4(dst[ldc+c0:ldc+c0+4], s10, s11, s12, s13, relu)
		store4(dst[2*ldc+c0:2*ldc+c0+4], s20, s21, s22, s23, relu)
		store4(dst[3*ldc+c0:3*ldc+c0+4], s30, s31, s32, s33, relu)
	}
}

// store4 writes four sums, through ReLU when relu (NaN passes, as in
// Forward).
func store4(dst []float32, s0, s1, s2, s3 float32, relu bool) {
	dst = dst[:4:4]
	if relu {
		if s0 < 0 {
			s0 = 0
		}
		if s1 < 0 {
			s1 = 0
		}
		if s2 < 0 {
			s2 = 0
		}
		if s3 < 0 {
			s3 = 0
		}
	}
	dst[0], dst[1], dst[2], dst[3] = s0, s1, s2, s3
}

// denseRowGo computes one row of a dense layer: c[j] = bias[j] + Σ_i
// a[i]·W[j][i] for every column j < p.cols, then ReLU when relu. Each sum
// starts at the bias and adds its products in input order, as kernelGo
// does for each of its rows, so a row gets the same bits from either.
func denseRowGo(c, a []float32, p *packedLayer, relu bool) {
	k := p.k
	for panel := range p.cols / panelCols {
		kernelRowGo(k, a, p.panels[panel*k*panelCols:(panel+1)*k*panelCols],
			p.bias[panel*panelCols:(panel+1)*panelCols], c[panel*panelCols:(panel+1)*panelCols], relu)
	}
}

// kernelRowGo computes one row × panelCols outputs: dst[c] = bias[c] +
// Σ_i a[i]·b[i*16+c], then ReLU when relu, four sums at a time and two
// inputs per iteration (each sum still adds its products in input order).
// Four sums beat eight here: on amd64, a panel of 256 inputs took about a
// quarter less time than with eight sums and one input per iteration, and
// 34→256→256→4 (BenchmarkForwardGo) a little less than the textbook loop
// of four partial sums per output that Forward used to be.
func kernelRowGo(k int, a, b, bias, dst []float32, relu bool) {
	a = a[:k]
	b = b[:k*panelCols]
	for c0 := 0; c0 < panelCols; c0 += 4 {
		bb := bias[c0 : c0+4 : c0+4]
		s0, s1, s2, s3 := bb[0], bb[1], bb[2], bb[3]
		i := 0
		for ; i+2 <= k; i += 2 {
			x0, x1 := a[i], a[i+1]
			w := b[i*panelCols+c0 : i*panelCols+c0+panelCols+4 : i*panelCols+c0+panelCols+4]
			s0 += x0 * w[0]
			s1 += x0 * w[1]
			s2 += x0 * w[2]
			s3 += x0 * w[3]
			s0 += x1 * w[panelCols]
			s1 += x1 * w[panelCols+1]
			s2 += x1 * w[panelCols+2]
			s3 += x1 * w[panelCols+3]
		}
		if i < k {
			x := a[i]
			w := b[i*panelCols+c0 : i*panelCols+c0+4 : i*panelCols+c0+4]
			s0 += x * w[0]
			s1 += x * w[1]
			s2 += x * w[2]
			s3 += x * w[3]
		}
		store4(dst[c0:c0+4], s0, s1, s2, s3, relu)
	}
}
