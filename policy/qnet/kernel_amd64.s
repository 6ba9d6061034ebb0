//go:build amd64 && !purego

#include "textflag.h"

// func kernelAVX2(k int, a *float32, lda int, b, bias, c *float32, ldc int, relu bool)
//
// For r < 4 and c < 16: c[r*ldc+c] = bias[c] + Σ_{i<k} a[r*lda+i]·b[i*16+c],
// then max(·, 0) when relu (a NaN sum stays NaN). Y0–Y7 hold the 4×16 sums
// (row r in Y(2r), Y(2r+1)); per input i, Y8 and Y9 hold b's 16 values and
// Y10–Y13 the four rows' a values, broadcast.
TEXT ·kernelAVX2(SB), NOSPLIT, $0-57
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ bias+32(FP), AX
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R9
	MOVBQZX relu+56(FP), BX

	SHLQ $2, R8 // lda in bytes
	SHLQ $2, R9 // ldc in bytes
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12

	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y1, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y1, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7

	XORQ R13, R13
	TESTQ CX, CX
	JEQ  done

loop:
	VMOVUPS      (DI), Y8
	VMOVUPS      32(DI), Y9
	VBROADCASTSS (SI)(R13*4), Y10
	VBROADCASTSS (R10)(R13*4), Y11
	VBROADCASTSS (R11)(R13*4), Y12
	VBROADCASTSS (R12)(R13*4), Y13
	VFMADD231PS  Y8, Y10, Y0
	VFMADD231PS  Y9, Y10, Y1
	VFMADD231PS  Y8, Y11, Y2
	VFMADD231PS  Y9, Y11, Y3
	VFMADD231PS  Y8, Y12, Y4
	VFMADD231PS  Y9, Y12, Y5
	VFMADD231PS  Y8, Y13, Y6
	VFMADD231PS  Y9, Y13, Y7
	ADDQ         $64, DI
	INCQ         R13
	CMPQ         R13, CX
	JLT          loop

done:
	TESTQ BX, BX
	JEQ   store

	// max(0, s) returns its second operand, s, when s is NaN.
	VXORPS Y14, Y14, Y14
	VMAXPS Y0, Y14, Y0
	VMAXPS Y1, Y14, Y1
	VMAXPS Y2, Y14, Y2
	VMAXPS Y3, Y14, Y3
	VMAXPS Y4, Y14, Y4
	VMAXPS Y5, Y14, Y5
	VMAXPS Y6, Y14, Y6
	VMAXPS Y7, Y14, Y7

store:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R9, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R9, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R9, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

// func kernelRow4AVX2(k int, a, b *float32, pstride int, bias, c *float32, relu bool)
//
// One row, four panels: for p < 4 and j < 16, c[p*16+j] = bias[p*16+j] +
// Σ_{i<k} a[i]·b[p*pstride+i*16+j], then max(·, 0) when relu. Each sum
// starts at the bias and adds its k products in order, one fused
// multiply-add each, exactly as kernelAVX2 does for each of its rows, so a
// row gets the same bits from either kernel. Y0–Y7 hold the 64 sums (panel
// p in Y(2p), Y(2p+1)), Y8 the input a[i], broadcast; the weights are FMA
// memory operands.
TEXT ·kernelRow4AVX2(SB), NOSPLIT, $0-49
	MOVQ    k+0(FP), CX
	MOVQ    a+8(FP), SI
	MOVQ    b+16(FP), DI
	MOVQ    pstride+24(FP), R8
	MOVQ    bias+32(FP), AX
	MOVQ    c+40(FP), DX
	MOVBQZX relu+48(FP), BX

	SHLQ $2, R8 // pstride in bytes
	LEAQ (DI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12

	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS 64(AX), Y2
	VMOVUPS 96(AX), Y3
	VMOVUPS 128(AX), Y4
	VMOVUPS 160(AX), Y5
	VMOVUPS 192(AX), Y6
	VMOVUPS 224(AX), Y7

	XORQ  R13, R13 // byte offset of input i's 16 weights in each panel
	TESTQ CX, CX
	JEQ   row4done

row4loop:
	VBROADCASTSS (SI), Y8
	VFMADD231PS  (DI)(R13*1), Y8, Y0
	VFMADD231PS  32(DI)(R13*1), Y8, Y1
	VFMADD231PS  (R10)(R13*1), Y8, Y2
	VFMADD231PS  32(R10)(R13*1), Y8, Y3
	VFMADD231PS  (R11)(R13*1), Y8, Y4
	VFMADD231PS  32(R11)(R13*1), Y8, Y5
	VFMADD231PS  (R12)(R13*1), Y8, Y6
	VFMADD231PS  32(R12)(R13*1), Y8, Y7
	ADDQ         $4, SI
	ADDQ         $64, R13
	DECQ         CX
	JNZ          row4loop

row4done:
	TESTQ BX, BX
	JEQ   row4store

	VXORPS Y9, Y9, Y9
	VMAXPS Y0, Y9, Y0
	VMAXPS Y1, Y9, Y1
	VMAXPS Y2, Y9, Y2
	VMAXPS Y3, Y9, Y3
	VMAXPS Y4, Y9, Y4
	VMAXPS Y5, Y9, Y5
	VMAXPS Y6, Y9, Y6
	VMAXPS Y7, Y9, Y7

row4store:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, 128(DX)
	VMOVUPS Y5, 160(DX)
	VMOVUPS Y6, 192(DX)
	VMOVUPS Y7, 224(DX)
	VZEROUPPER
	RET

// func kernelRow1AVX2(k int, a, b, bias, c *float32, relu bool)
//
// One row, one panel: kernelRow4AVX2 for the panel at b alone, for the
// panels a layer has beyond a multiple of four (the output layer's one
// panel, for instance). Its two chains of fused multiply-adds wait on each
// other's latency, but the order of the sums is the same.
TEXT ·kernelRow1AVX2(SB), NOSPLIT, $0-41
	MOVQ    k+0(FP), CX
	MOVQ    a+8(FP), SI
	MOVQ    b+16(FP), DI
	MOVQ    bias+24(FP), AX
	MOVQ    c+32(FP), DX
	MOVBQZX relu+40(FP), BX

	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1

	TESTQ CX, CX
	JEQ   row1done

row1loop:
	VBROADCASTSS (SI), Y8
	VFMADD231PS  (DI), Y8, Y0
	VFMADD231PS  32(DI), Y8, Y1
	ADDQ         $4, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          row1loop

row1done:
	TESTQ BX, BX
	JEQ   row1store

	VXORPS Y9, Y9, Y9
	VMAXPS Y0, Y9, Y0
	VMAXPS Y1, Y9, Y1

row1store:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET
