//go:build amd64 && !purego

package qnet

import "golang.org/x/sys/cpu"

// haveAVX2 reports whether the assembly kernel can run: AVX2 and FMA, with
// the operating system saving the ymm registers.
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kernelAVX2 is kernelGo in AVX2 and FMA assembly (kernel_amd64.s). a must
// hold 4 rows of lda values with k ≤ lda, b k×16 values, bias 16 and c 4 rows
// of ldc values with 16 ≤ ldc.
//
//go:noescape
func kernelAVX2(k int, a *float32, lda int, b, bias, c *float32, ldc int, relu bool)

// kernel computes a block of 4 rows × 16 columns (see kernelGo).
func kernel(k int, a []float32, lda int, b, bias, c []float32, ldc int, relu bool) {
	if !haveAVX2 || k == 0 {
		kernelGo(k, a, lda, b, bias, c, ldc, relu)
		return
	}
	// The bounds the assembly relies on, checked once per block.
	_ = a[3*lda+k-1]
	_ = b[k*panelCols-1]
	_ = bias[panelCols-1]
	_ = c[3*ldc+panelCols-1]
	kernelAVX2(k, &a[0], lda, &b[0], &bias[0], &c[0], ldc, relu)
}

// kernelRow4AVX2 is one row of kernelAVX2 over four panels (kernel_amd64.s):
// a must hold k values, b four panels of k×16 values pstride apart, bias
// and c 64 values.
//
//go:noescape
func kernelRow4AVX2(k int, a, b *float32, pstride int, bias, c *float32, relu bool)

// kernelRow1AVX2 is kernelRow4AVX2 over one panel: b holds k×16 values,
// bias and c 16.
//
//go:noescape
func kernelRow1AVX2(k int, a, b, bias, c *float32, relu bool)

// denseRow computes one row of a dense layer (see denseRowGo), four panels
// per kernel call where the CPU has AVX2 and FMA.
func denseRow(c, a []float32, p *packedLayer, relu bool) {
	k := p.k
	if !haveAVX2 || k == 0 {
		denseRowGo(c, a, p, relu)
		return
	}
	ps, np := k*panelCols, p.cols/panelCols
	// The bounds the assembly relies on, checked once per layer.
	_ = a[k-1]
	_ = c[p.cols-1]
	_ = p.panels[np*ps-1]
	_ = p.bias[p.cols-1]
	panel := 0
	for ; panel+4 <= np; panel += 4 {
		kernelRow4AVX2(k, &a[0], &p.panels[panel*ps], ps, &p.bias[panel*panelCols], &c[panel*panelCols], relu)
	}
	for ; panel < np; panel++ {
		kernelRow1AVX2(k, &a[0], &p.panels[panel*ps], &p.bias[panel*panelCols], &c[panel*panelCols], relu)
	}
}
