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
