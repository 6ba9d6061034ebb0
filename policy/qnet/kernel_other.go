//go:build !amd64 || purego

package qnet

// haveAVX2 is false: there is no assembly kernel on this platform.
var haveAVX2 = false

// kernel computes a block of 4 rows × 16 columns (see kernelGo).
func kernel(k int, a []float32, lda int, b, bias, c []float32, ldc int, relu bool) {
	kernelGo(k, a, lda, b, bias, c, ldc, relu)
}

// denseRow computes one row of a dense layer (see denseRowGo).
func denseRow(c, a []float32, p *packedLayer, relu bool) {
	denseRowGo(c, a, p, relu)
}
