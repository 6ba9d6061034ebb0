package qnet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
	"github.com/proflow-sdn/proflow/telemetry"
)

// maxErrorBytes bounds the message of any error Load returns, beyond the
// file's path: two clipped details and the fixed words around them.
const maxErrorBytes = 2*maxDetailBytes + 128

// allocated returns how many bytes f allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestNewRefusesNetworksBeyondTheLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name  string
		sizes []int
		want  string
	}{
		{"wide input (the issue's example)", []int{1 << 20, 1 << 20, 4},
			"dense layer 0 has 1048576 inputs, want at most qnet.MaxLayerWidth = 65536"},
		{"wide hidden layer", []int{34, 256, MaxLayerWidth + 1, 4},
			"dense layer 1 has 65537 outputs, want at most qnet.MaxLayerWidth = 65536"},
		{"wide output", []int{34, MaxLayerWidth + 1},
			"dense layer 0 has 65537 outputs"},
		{"too many parameters in one layer", []int{8192, 8192, 2},
			"dense layer 0 (8192→8192) brings the network to 67117056 parameters, want at most qnet.MaxParams = 67108864"},
		{"too many parameters in all", []int{4096, 4096, 4096, 4096, 4096, 2},
			"dense layer 3 (4096→4096) brings the network to 67125248 parameters"},
		{"too many layers", repeat(MaxLayers+2, 2), "65 dense layers, want at most qnet.MaxLayers = 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if n := allocated(func() { _, err = New(tc.sizes, rng) }); n > 1<<20 {
				t.Errorf("New allocated %d bytes before refusing, want under 1 MiB", n)
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New(%v) = %v, want an error matching ErrTooLarge containing %q", tc.sizes, err, tc.want)
			}
			layers := make([]Layer, len(tc.sizes)-1)
			for l := range layers {
				layers[l] = Layer{In: tc.sizes[l], Out: tc.sizes[l+1]} // no weights: the limits come first
			}
			if _, err := FromLayers(layers); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FromLayers = %v, want an error matching ErrTooLarge containing %q", err, tc.want)
			}
		})
	}
	// At the limits exactly, New works.
	for _, sizes := range [][]int{{MaxLayerWidth, 1}, repeat(MaxLayers+1, 2)} {
		if _, err := New(sizes, rng); err != nil {
			t.Errorf("New with %d sizes up to %d: %v, want a model", len(sizes), sizes[0], err)
		}
	}
}

// repeat returns n layer sizes of width w.
func repeat(n, w int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = w
	}
	return s
}

// smallData is the largest data section declaredFile writes (256 KiB).
const smallData = 1 << 18

// declaredFile returns a model file whose header declares a network of the
// given sizes, with offsets that agree with the shapes, and the length of
// the data section the header declares. The file holds that data (zeros)
// when withData is set and it is at most smallData bytes, and no data
// otherwise.
func declaredFile(t testing.TB, sizes []int, withData bool) ([]byte, int64) {
	t.Helper()
	enc := telemetry.DefaultEncoderConfig(smallTopology())
	enc.NumSwitches, enc.NumLeaves = sizes[len(sizes)-1], 0
	encJSON, err := json.Marshal(enc)
	if err != nil {
		t.Fatal(err)
	}
	arch, err := json.Marshal(architecture{Hidden: append([]int{}, sizes[1:len(sizes)-1]...), Activation: Activation})
	if err != nil {
		t.Fatal(err)
	}
	f := rawFile{meta: map[string]string{
		KeyFormat: Format, KeyFormatVersion: FormatVersion,
		KeyNumSwitches: itoa(sizes[len(sizes)-1]), KeyNumLeaves: "0", KeyStateLayout: "limits-test",
		KeyStateDim: itoa(sizes[0]), KeyEncoder: string(encJSON), KeyArchitecture: string(arch),
	}}
	var off int64
	for l := range len(sizes) - 1 {
		in, out := int64(sizes[l]), int64(sizes[l+1])
		f.tensors = append(f.tensors,
			rawTensor{name: weightName(l), dtype: "F32", shape: []int64{out, in}, offsets: []int64{off, off + 4*in*out}},
			rawTensor{name: biasName(l), dtype: "F32", shape: []int64{out}, offsets: []int64{off + 4*in*out, off + 4*in*out + 4*out}})
		off += 4*in*out + 4*out
	}
	if withData && off <= smallData {
		f.trailing = make([]byte, off)
	}
	return f.bytes(t), off
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestLoadRefusesHugeDeclaredNetworks loads files whose headers declare
// networks beyond the limits and hold no data: the error must be the size
// limit, found in the header (not a truncation found while reading data),
// and Load must not allocate for the declared tensors.
func TestLoadRefusesHugeDeclaredNetworks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		want  string
	}{
		// 4 TiB of declared data: the container's MaxDataBytes refuses it.
		{"the issue's example", []int{1 << 20, 1 << 20, 4}, "more than the 1073741824-byte limit"},
		// 88 MB of declared data, under MaxDataBytes: the width limit refuses it.
		{"wide hidden layer", []int{18, 1 << 20, 2}, "dense layer 0 has 1048576 outputs, want at most qnet.MaxLayerWidth = 65536"},
		// 64 MiB of parameters plus one layer: the parameter limit refuses it.
		{"too many parameters", []int{8192, 8192, 2}, "want at most qnet.MaxParams = 67108864"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "huge.safetensors")
			file, _ := declaredFile(t, tc.sizes, false)
			if err := os.WriteFile(path, file, 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			if n := allocated(func() { _, _, err = Load(path) }); n > 1<<20 {
				t.Errorf("Load allocated %d bytes, want under 1 MiB for a file of a few hundred bytes", n)
			}
			if !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrInvalidModel) || errors.Is(err, ErrTruncated) {
				t.Fatalf("Load = %v, want an error matching ErrTooLarge and ErrInvalidModel, not ErrTruncated", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Load = %q, want it to name %s and contain %q", err, path, tc.want)
			}
		})
	}
}

// TestReadErrorsAreShort feeds files with megabyte-long names and values:
// the errors must still be short.
func TestReadErrorsAreShort(t *testing.T) {
	long := strings.Repeat("é", 1<<19) // 1 MiB, two bytes a rune
	for _, tc := range []struct {
		name string
		raw  func(t *testing.T) []byte
		want string
	}{
		{"long format value", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta[KeyFormat] = long
			return f.bytes(t)
		}, "unknown format"},
		{"long architecture", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta[KeyArchitecture] = long
			return f.bytes(t)
		}, "metadata.architecture: invalid"},
		{"long tensor name", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors = append(f.tensors, rawTensor{name: long, dtype: "F32", shape: []int64{1}, data: floats(0)})
			return f.bytes(t)
		}, "tensors: unexpected"},
		{"long entry in the container", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors = append(f.tensors, rawTensor{name: long, dtype: "F32", shape: []int64{2}, data: floats(0)})
			return f.bytes(t)
		}, "needs 8 bytes of F32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Read(bytes.NewReader(tc.raw(t)))
			if err == nil || !errors.Is(err, ErrInvalidModel) {
				t.Fatalf("Read = %v, want an invalid-model error", err)
			}
			if msg := err.Error(); len(msg) > maxErrorBytes || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "more bytes)") {
				t.Errorf("Read error of %d bytes, want at most %d, containing %q and saying what was cut:\n%.300s…",
					len(msg), maxErrorBytes, tc.want, msg)
			}
		})
	}
}

// The encoder's sizes are bounded (telemetry.MaxSwitches,
// telemetry.MaxLeaves), so its Dim cannot wrap round: a file declaring
// num_leaves 9223372036854775807, whose Dim wraps round to 14, and a
// 14-input network, is refused.
func TestReadRefusesHugeFabric(t *testing.T) {
	enc := telemetry.DefaultEncoderConfig(smallTopology())
	enc.NumLeaves = 1<<63 - 1
	encJSON, err := json.Marshal(enc)
	if err != nil {
		t.Fatal(err)
	}
	f := validRaw(t)
	f.meta[KeyNumLeaves], f.meta[KeyEncoder], f.meta[KeyStateDim] = itoa(enc.NumLeaves), string(encJSON), itoa(enc.Dim())
	f.tensors = nil
	for l, sz := range [][2]int64{{int64(enc.Dim()), 5}, {5, 2}} {
		in, out := sz[0], sz[1]
		f.tensors = append(f.tensors,
			rawTensor{name: weightName(l), dtype: "F32", shape: []int64{out, in}, data: make([]byte, 4*in*out)},
			rawTensor{name: biasName(l), dtype: "F32", shape: []int64{out}, data: make([]byte, 4*out)})
	}
	_, _, err = Read(bytes.NewReader(f.bytes(t)))
	if want := "num_leaves 9223372036854775807, want 0..65536"; !errors.Is(err, ErrInvalidModel) || !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("Read = %v, want an invalid-model error containing %q", err, want)
	}
}

// A model path that is not a regular file is refused without blocking
// (os.Open blocked on a FIFO).
func TestLoadRefusesNonRegular(t *testing.T) {
	fileutiltest.RefusesNonRegular(t, "m.safetensors", func(path string) error {
		_, _, err := Load(path)
		return err
	})
}
