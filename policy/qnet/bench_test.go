package qnet

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkForward evaluates the default architecture, 34→256→256→4, one
// state at a time with the kernel this machine uses (the one-row assembly
// kernel where the CPU has AVX2 and FMA).
func BenchmarkForward(b *testing.B) {
	benchForward(b)
}

// BenchmarkForwardGo is BenchmarkForward with the Go kernel, the fallback
// where AVX2 or FMA is absent (and under the purego build tag).
func BenchmarkForwardGo(b *testing.B) {
	saved := haveAVX2
	haveAVX2 = false
	defer func() { haveAVX2 = saved }()
	benchForward(b)
}

func benchForward(b *testing.B) {
	m, err := New([]int{34, 256, 256, 4}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	x, dst := randomInput(rand.New(rand.NewPCG(3, 4)), 34), make([]float32, 4)
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Forward(dst, x); err != nil {
			b.Fatal(err)
		}
	}
}
