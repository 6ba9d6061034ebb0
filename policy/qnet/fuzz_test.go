package qnet

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Read: it must never panic, every error
// must be a model-file error, and whatever it accepts must evaluate and
// survive a write/read round trip unchanged.
func FuzzRead(f *testing.F) {
	f.Add(validRaw(f).bytes(f))
	f.Add([]byte{})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, meta, err := Read(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalidModel) {
				t.Fatalf("Read error %v does not match ErrInvalidModel", err)
			}
			return
		}
		if m.InputDim() != meta.StateDim || m.OutputDim() != meta.NumSwitches {
			t.Fatalf("accepted model %v with state_dim %d and num_switches %d", m.Sizes(), meta.StateDim, meta.NumSwitches)
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
