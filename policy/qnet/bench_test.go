package qnet

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkForward evaluates the default architecture, 34→256→256→4.
func BenchmarkForward(b *testing.B) {
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
