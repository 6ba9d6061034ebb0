package qnet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Read: it must never panic, every error
// must be a short model-file error, and whatever it accepts must evaluate and
// survive a write/read round trip unchanged.
func FuzzRead(f *testing.F) {
	f.Add(validRaw(f).bytes(f))
	f.Add(validUniversalRaw(f).bytes(f))
	f.Add([]byte{})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, meta, err := Read(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalidModel) {
				t.Fatalf("Read error %v does not match ErrInvalidModel", err)
			}
			if len(err.Error()) > maxErrorBytes {
				t.Fatalf("Read error of %d bytes, want at most %d: %.200s…", len(err.Error()), maxErrorBytes, err)
			}
			return
		}
		if m.InputDim() != meta.StateDim || m.OutputDim() != meta.outputs() {
			t.Fatalf("accepted model %v with state_dim %d, num_switches %d and q_layout %q", m.Sizes(), meta.StateDim, meta.NumSwitches, meta.QLayout)
		}
		dst := make([]float32, m.OutputDim())
		if err := m.Forward(dst, make([]float32, m.InputDim())); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, m, meta); err != nil {
			t.Fatalf("Write of an accepted model: %v", err)
		}
		m2, _, err := Read(&buf)
		if err != nil {
			t.Fatalf("Read of a re-written model: %v", err)
		}
		for l := range m.NumLayers() {
			a, b := m.Layer(l), m2.Layer(l)
			if !bytes.Equal(appendFloats(nil, a.Weight), appendFloats(nil, b.Weight)) ||
				!bytes.Equal(appendFloats(nil, a.Bias), appendFloats(nil, b.Bias)) {
				t.Fatalf("layer %d changed in the round trip", l)
			}
		}
	})
}

// FuzzLoadSizes loads files whose headers declare networks of fuzzed layer
// sizes, with offsets that agree with the shapes, through Load. The data is
// there when it is small (at most smallData bytes) and data is set, and
// missing otherwise. Load must never run out of memory or panic: it allocates at
// most a few MiB whatever the header declares, refuses every network
// beyond MaxLayers, MaxLayerWidth or MaxParams with an error matching
// ErrTooLarge, accepts every sound network within them whose data is
// there, and keeps every error message short.
//
// sizes holds the layer sizes as unsigned varints, each taken modulo 2^24
// (so that offsets never overflow) and at most MaxLayers+8 of them.
func FuzzLoadSizes(f *testing.F) {
	for _, s := range []struct {
		sizes []uint64
		data  bool
	}{
		{[]uint64{34, 256, 256, 4}, true},      // the default network
		{[]uint64{18, 5, 2}, true},             // a small one
		{[]uint64{18, 5, 2}, false},            // a small one, data missing
		{[]uint64{1 << 20, 1 << 20, 4}, false}, // the example
		{[]uint64{18, MaxLayerWidth + 1, 2}, false},
		{[]uint64{4096, 4096, 4096, 4096, 4096, 2}, false},
		{[]uint64{8192, 8192, 2}, false},
		{[]uint64{0, 3, 2}, true},
		{[]uint64{3, 1}, true},
	} {
		f.Add(appendUvarints(nil, s.sizes), s.data)
	}
	f.Add(appendUvarints(nil, repeatU(MaxLayers+2, 2)), true)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte, data bool) {
		sizes := decodeSizes(raw)
		if len(sizes) < 2 {
			return
		}
		file, total := declaredFile(t, sizes, data)
		path := filepath.Join(dir, "model.safetensors")
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		var m *Model
		var err error
		if n := allocated(func() { m, _, err = Load(path) }); n > 8<<20+4*uint64(len(file)) {
			t.Fatalf("Load of a %d-byte file declaring sizes %v allocated %d bytes", len(file), sizes, n)
		}
		tooLarge := checkLimits(len(sizes), func(i int) int { return sizes[i] }) != nil
		sound := sizes[len(sizes)-1] >= 2 && !slices.Contains(sizes, 0) // else the metadata is wrong
		if err != nil {
			if !errors.Is(err, ErrInvalidModel) {
				t.Fatalf("Load error %v does not match ErrInvalidModel", err)
			}
			if n := len(err.Error()) - len(path); n > maxErrorBytes {
				t.Fatalf("Load error of %d bytes beyond the path, want at most %d: %.200s…", n, maxErrorBytes, err)
			}
		}
		switch {
		case tooLarge && sound && !errors.Is(err, ErrTooLarge):
			t.Fatalf("Load of sizes %v beyond the limits = %v, want an error matching ErrTooLarge", sizes, err)
		case !tooLarge && errors.Is(err, ErrTooLarge):
			t.Fatalf("Load of sizes %v within the limits = %v, want no size-limit error", sizes, err)
		case !tooLarge && sound && total <= smallData && data && err != nil:
			t.Fatalf("Load of sizes %v with their data = %v, want a model", sizes, err)
		case err == nil && !slices.Equal(m.Sizes(), sizes):
			t.Fatalf("Load of sizes %v gave a model of sizes %v", sizes, m.Sizes())
		}
	})
}

// decodeSizes reads up to MaxLayers+8 unsigned varints modulo 2^24.
func decodeSizes(raw []byte) []int {
	var sizes []int
	for len(raw) > 0 && len(sizes) < MaxLayers+8 {
		v, n := binary.Uvarint(raw)
		if n <= 0 {
			break
		}
		sizes, raw = append(sizes, int(v%(1<<24))), raw[n:]
	}
	return sizes
}

func appendUvarints(b []byte, v []uint64) []byte {
	for _, x := range v {
		b = binary.AppendUvarint(b, x)
	}
	return b
}

func repeatU(n int, w uint64) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = w
	}
	return s
}
