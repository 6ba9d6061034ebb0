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
