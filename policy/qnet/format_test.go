package qnet

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// smallTopology has two switches and one congestion leaf: state dim 18.
func smallTopology() proflow.Topology {
	return proflow.Topology{Switches: []string{"a", "b"}, Leaves: []string{"l"}, BucketRate: 25e6}
}

func testMetadata(t proflow.Topology) Metadata {
	meta := NewMetadata(telemetry.DefaultEncoderConfig(t))
	meta.MadeBy = "qnet test"
	meta.Corpus = "none"
	meta.Seed = "42"
	meta.Commit = "0123abcd"
	meta.Created = "2026-01-02T03:04:05Z"
	meta.Extra = map[string]string{"note": "hello"}
	return meta
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := New([]int{34, 256, 256, 4}, rng)
	if err != nil {
		t.Fatal(err)
	}
	meta := testMetadata(proflow.PaperTopology())
	var buf bytes.Buffer
	if err := Write(&buf, m, meta); err != nil {
		t.Fatal(err)
	}
	got, gotMeta, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(meta, gotMeta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(m.Sizes(), got.Sizes()); diff != "" {
		t.Fatalf("sizes (-want +got):\n%s", diff)
	}
	for l := range m.NumLayers() {
		if diff := cmp.Diff(m.Layer(l), got.Layer(l)); diff != "" {
			t.Errorf("layer %d (-want +got):\n%s", l, diff)
		}
	}
	want, have := make([]float32, 4), make([]float32, 4)
	for i := range 20 {
		x := randomInput(rng, 34)
		if err := m.Forward(want, x); err != nil {
			t.Fatal(err)
		}
		if err := got.Forward(have, x); err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if math.Float32bits(want[k]) != math.Float32bits(have[k]) {
				t.Errorf("input %d: Q[%d] = %v after the round trip, want %v bit for bit", i, k, have[k], want[k])
			}
		}
	}
	// Writing again gives the same bytes: the header is deterministic.
	var again bytes.Buffer
	if err := Write(&again, got, gotMeta); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("re-written file differs from the original")
	}
	if hlen := binary.LittleEndian.Uint64(buf.Bytes()); (8+hlen)%8 != 0 {
		t.Errorf("data starts at %d, want 8-byte alignment", 8+hlen)
	}
}

func TestSaveLoad(t *testing.T) {
	m, err := New([]int{18, 5, 2}, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	meta := NewMetadata(telemetry.DefaultEncoderConfig(smallTopology()))
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	if err := Save(path, m, meta); err != nil {
		t.Fatal(err)
	}
	got, gotMeta, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(meta, gotMeta, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(m.Layer(1), got.Layer(1)); diff != "" {
		t.Errorf("layer 1 (-want +got):\n%s", diff)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after Save, want only the model (no temporary file)", len(entries))
	}

	// A failed Save leaves the old file in place and no temporary file.
	bad := meta
	bad.StateDim = 17
	if err := Save(path, m, bad); err == nil {
		t.Fatal("Save with inconsistent metadata succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries after a failed Save, want 1", len(entries))
	}
	if _, _, err := Load(path); err != nil {
		t.Errorf("old model unreadable after a failed Save: %v", err)
	}

	// Load names the file in format errors.
	if err := os.WriteFile(path, []byte{1, 0, 0, 0, 0, 0, 0, 0, '{'}, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(path)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Path != path || !strings.Contains(err.Error(), path) {
		t.Errorf("Load of a corrupt file = %v, want a *FormatError naming %s", err, path)
	}
	if _, _, err := Load(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file = %v, want os.ErrNotExist", err)
	}
}

func TestWriteRefusesInconsistentMetadata(t *testing.T) {
	m, err := New([]int{18, 5, 2}, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Metadata)
		want   string
	}{
		{"state dim", func(md *Metadata) { md.StateDim = 34 }, "state_dim: 34, but layout proflow-state-v1"},
		{"switches", func(md *Metadata) { md.NumSwitches = 3 }, "encoder: num_switches 2, but metadata num_switches is 3"},
		{"layout", func(md *Metadata) { md.StateLayout = "" }, "state_layout: empty"},
		{"encoder", func(md *Metadata) { md.Encoder.OverflowScale = 0 }, "overflow_scale 0"},
		{"reserved extra", func(md *Metadata) { md.Extra = map[string]string{"format": "x"} }, `extra key "format" is reserved`},
		{"dims vs network", func(md *Metadata) {
			*md = NewMetadata(telemetry.DefaultEncoderConfig(proflow.PaperTopology()))
		}, "state_dim: 34, but layers.0.weight takes 18 inputs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := NewMetadata(telemetry.DefaultEncoderConfig(smallTopology()))
			tc.change(&meta)
			err := Write(new(bytes.Buffer), m, meta)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Write = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// rawTensor and rawFile build model files field by field, so tests can
// corrupt any part of them.
type rawTensor struct {
	name    string
	dtype   string
	shape   []int64
	offsets []int64 // nil: computed from the data written so far
	data    []byte
}

type rawFile struct {
	meta     map[string]string // nil: no __metadata__
	tensors  []rawTensor
	headerFn func([]byte) []byte // rewrites the JSON header
	hlen     *uint64             // overrides the header length
	trailing []byte
	cut      int // bytes removed from the end
}

func (f rawFile) bytes(t testing.TB) []byte {
	t.Helper()
	header := map[string]any{}
	if f.meta != nil {
		header["__metadata__"] = f.meta
	}
	var data []byte
	for _, tn := range f.tensors {
		off := tn.offsets
		if off == nil {
			off = []int64{int64(len(data)), int64(len(data) + len(tn.data))}
		}
		header[tn.name] = map[string]any{"dtype": tn.dtype, "shape": tn.shape, "data_offsets": off}
		data = append(data, tn.data...)
	}
	hdr, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	if f.headerFn != nil {
		hdr = f.headerFn(hdr)
	}
	hlen := uint64(len(hdr))
	if f.hlen != nil {
		hlen = *f.hlen
	}
	out := binary.LittleEndian.AppendUint64(nil, hlen)
	out = append(out, hdr...)
	out = append(out, data...)
	out = append(out, f.trailing...)
	return out[:len(out)-f.cut]
}

func floats(v ...float32) []byte { return appendFloats(nil, v) }

// validRaw returns the raw form of a valid 18→5→2 model file.
func validRaw(t testing.TB) rawFile {
	return rawOf(t, []int{18, 5, 2}, NewMetadata(telemetry.DefaultEncoderConfig(smallTopology())))
}

// validUniversalRaw returns the raw form of a valid universal model file:
// 34→5→1 on candidate rows of the paper's layout.
func validUniversalRaw(t testing.TB) rawFile {
	return rawOf(t, []int{34, 5, 1}, NewUniversalMetadata(telemetry.DefaultEncoderConfig(smallTopology())))
}

// rawOf returns the raw form of the file Write makes of a random network
// of the given sizes described by meta.
func rawOf(t testing.TB, sizes []int, meta Metadata) rawFile {
	t.Helper()
	m, err := New(sizes, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, m, meta); err != nil {
		t.Fatal(err)
	}
	f := rawFile{meta: headerMetadata(t, buf.Bytes())}
	for l := range m.NumLayers() {
		layer := m.Layer(l)
		f.tensors = append(f.tensors,
			rawTensor{name: weightName(l), dtype: "F32", shape: []int64{int64(layer.Out), int64(layer.In)}, data: floats(layer.Weight...)},
			rawTensor{name: biasName(l), dtype: "F32", shape: []int64{int64(layer.Out)}, data: floats(layer.Bias...)})
	}
	return f
}

func u64(v uint64) *uint64 { return &v }

func TestReadRefusesCorruptFiles(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, tc := range []struct {
		name      string
		raw       func(t *testing.T) []byte
		want      string
		truncated bool
	}{
		{"empty", func(t *testing.T) []byte { return nil }, "file has 0 bytes, want at least 8", true},
		{"short length", func(t *testing.T) []byte { return []byte{1, 2, 3} }, "file has 3 bytes, want at least 8", true},
		{"header beyond file", func(t *testing.T) []byte {
			f := validRaw(t)
			return f.bytes(t)[:30]
		}, "but only 22 bytes follow", true},
		{"absurd header length", func(t *testing.T) []byte {
			f := validRaw(t)
			f.hlen = u64(1 << 40)
			return f.bytes(t)
		}, "length 1099511627776 bytes is absurd", false},
		{"invalid JSON", func(t *testing.T) []byte {
			f := validRaw(t)
			f.headerFn = func(h []byte) []byte { return append(h[:len(h)-1], ',') }
			return f.bytes(t)
		}, "header: invalid JSON", false},
		{"not an object", func(t *testing.T) []byte {
			f := validRaw(t)
			f.headerFn = func([]byte) []byte { return []byte(`[1,2]`) }
			return f.bytes(t)
		}, "want an object starting with '{'", false},
		{"trailing JSON", func(t *testing.T) []byte {
			f := validRaw(t)
			f.headerFn = func(h []byte) []byte { return append(h, "{}"...) }
			return f.bytes(t)
		}, "trailing data after the object", false},
		{"duplicate key", func(t *testing.T) []byte {
			f := validRaw(t)
			f.headerFn = func(h []byte) []byte {
				return append([]byte(`{"layers.0.bias":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},`), h[1:]...)
			}
			return f.bytes(t)
		}, `duplicate key "layers.0.bias"`, false},
		{"unknown dtype", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[1].dtype = "Q7"
			return f.bytes(t)
		}, `tensor layers.0.bias: unknown dtype "Q7", want F32`, false},
		{"unsupported dtype", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[0].dtype = "F64"
			return f.bytes(t)
		}, "tensor layers.0.weight: dtype F64 not supported, want F32", false},
		{"unknown tensor field", func(t *testing.T) []byte {
			f := validRaw(t)
			f.headerFn = func(h []byte) []byte {
				return bytes.Replace(h, []byte(`"dtype":"F32"`), []byte(`"dtype":"F32","order":"C"`), 1)
			}
			return f.bytes(t)
		}, `unknown field "order"`, false},
		{"metadata not strings", func(t *testing.T) []byte {
			f := validRaw(t)
			f.headerFn = func(h []byte) []byte {
				return bytes.Replace(h, []byte(`"num_leaves":"1"`), []byte(`"num_leaves":1`), 1)
			}
			return f.bytes(t)
		}, `value of "num_leaves" is 1, want a string`, false},
		{"shape offset mismatch", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[2].shape = []int64{2, 4}
			return f.bytes(t)
		}, "tensor layers.1.weight: shape [2 4] needs 32 bytes of F32 but data_offsets [380, 420] span 40 bytes", false},
		{"huge shape", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[2].shape = []int64{1 << 40, 1 << 40}
			return f.bytes(t)
		}, "does not fit data_offsets", false},
		{"negative shape", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[3].shape = []int64{-2}
			return f.bytes(t)
		}, "negative dimension", false},
		{"bad offsets", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[3].offsets = []int64{428}
			return f.bytes(t)
		}, "data_offsets [428], want [begin, end]", false},
		{"overlapping offsets", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[1].offsets = []int64{356, 376} // inside layers.0.weight [0, 360]
			return f.bytes(t)
		}, "layers.0.bias [356, 376] overlaps layers.0.weight, which ends at 360", false},
		{"gap between tensors", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[1].offsets = []int64{364, 384}
			f.tensors[1].data = append([]byte{0, 0, 0, 0}, f.tensors[1].data...)
			f.tensors[2].offsets = []int64{384, 424}
			f.tensors[3].offsets = []int64{424, 432}
			return f.bytes(t)
		}, "not contiguous: 4-byte gap between layers.0.weight (ends at 360) and layers.0.bias (begins at 364)", false},
		{"first tensor not at 0", func(t *testing.T) []byte {
			f := validRaw(t)
			for i := range f.tensors {
				f.tensors[i].offsets = nil
			}
			f.tensors[0].data = append([]byte{0, 0, 0, 0}, f.tensors[0].data...)
			f.tensors[0].offsets = []int64{4, 364}
			f.tensors[1].offsets = []int64{364, 384}
			f.tensors[2].offsets = []int64{384, 424}
			f.tensors[3].offsets = []int64{424, 432}
			return f.bytes(t)
		}, "layers.0.weight begins at 4, want the first tensor at 0", false},
		{"data shorter than offsets", func(t *testing.T) []byte {
			f := validRaw(t)
			f.cut = 5
			return f.bytes(t)
		}, "data: 423 bytes, but the tensors' data_offsets need 428", true},
		{"trailing data", func(t *testing.T) []byte {
			f := validRaw(t)
			f.trailing = []byte("polyglot")
			return f.bytes(t)
		}, "bytes follow the last tensor (at 428)", false},
		{"missing tensor", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors = f.tensors[:3]
			return f.bytes(t)
		}, "tensors: missing layers.1.bias (architecture has 2 layers)", false},
		{"extra tensor", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors = append(f.tensors, rawTensor{name: "layers.2.weight", dtype: "F32", shape: []int64{1}, data: floats(1)})
			return f.bytes(t)
		}, "tensors: unexpected layers.2.weight", false},
		{"layers do not chain", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[2].shape = []int64{2, 10}
			f.tensors[2].data = floats(make([]float32, 20)...)
			return f.bytes(t)
		}, "tensor layers.1.weight: shape [2 10] takes 10 inputs, but layers.0.weight gives 5 outputs: layer shapes do not chain", false},
		{"bias shape", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[1].shape = []int64{1, 5}
			return f.bytes(t)
		}, "tensor layers.0.bias: shape [1 5], want [5]", false},
		{"weight rank", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[0].shape = []int64{90}
			return f.bytes(t)
		}, "tensor layers.0.weight: shape [90], want [out, in]", false},
		{"architecture disagrees", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["architecture"] = `{"hidden":[6],"activation":"relu"}`
			return f.bytes(t)
		}, "has 5 outputs, but architecture hidden[0] is 6", false},
		{"architecture activation", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["architecture"] = `{"hidden":[5],"activation":"tanh"}`
			return f.bytes(t)
		}, `activation "tanh" not supported, want "relu"`, false},
		{"architecture JSON", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["architecture"] = `{"hidden":[5],"activation":"relu","dropout":0.1}`
			return f.bytes(t)
		}, `unknown field "dropout"`, false},
		{"NaN weight", func(t *testing.T) []byte {
			f := validRaw(t)
			copy(f.tensors[0].data[4*25:], floats(nan))
			return f.bytes(t)
		}, "tensor layers.0.weight[25] (row 1, column 7) is NaN", false},
		{"Inf bias", func(t *testing.T) []byte {
			f := validRaw(t)
			copy(f.tensors[3].data[4:], floats(inf))
			return f.bytes(t)
		}, "tensor layers.1.bias[1] is +Inf", false},
		{"no metadata", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta = nil
			return f.bytes(t)
		}, "no __metadata__", false},
		{"no format", func(t *testing.T) []byte {
			f := validRaw(t)
			delete(f.meta, "format")
			return f.bytes(t)
		}, `no "format" key, want "proflow-qnet"`, false},
		{"unknown format", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["format"] = "pt"
			return f.bytes(t)
		}, `unknown format "pt", want "proflow-qnet"`, false},
		{"unknown version", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["format_version"] = "3"
			return f.bytes(t)
		}, `format_version: unknown version "3", want "1" (per-fabric network) or "2" (universal network)`, false},
		{"missing metadata keys", func(t *testing.T) []byte {
			f := validRaw(t)
			delete(f.meta, "encoder")
			delete(f.meta, "state_dim")
			return f.bytes(t)
		}, "missing key(s) state_dim, encoder", false},
		{"bad integer", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["num_leaves"] = "one"
			return f.bytes(t)
		}, `num_leaves: "one", want a non-negative decimal integer`, false},
		{"bad encoder", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["encoder"] = `{"num_switches":2`
			return f.bytes(t)
		}, "metadata.encoder: invalid encoder config", false},
		{"state_dim not the first layer's input", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["state_layout"] = "custom-layout" // no layout rule to check state_dim against
			f.meta["state_dim"] = "17"
			return f.bytes(t)
		}, "state_dim: 17, but layers.0.weight takes 18 inputs", false},
		{"state_dim not the layout's", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["state_dim"] = "17"
			return f.bytes(t)
		}, "state_dim: 17, but layout proflow-state-v1 with 2 switches and 1 leaves has dimension 18", false},
		{"num_switches not the output size", func(t *testing.T) []byte {
			f := validRaw(t)
			f.tensors[2].shape = []int64{3, 5}
			f.tensors[2].data = floats(make([]float32, 15)...)
			f.tensors[3].shape = []int64{3}
			f.tensors[3].data = floats(0, 0, 0)
			return f.bytes(t)
		}, "num_switches: 2, but the network has 3 outputs", false},
		{"encoder disagrees with num_switches", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta["num_switches"] = "3"
			return f.bytes(t)
		}, "encoder: num_switches 2, but metadata num_switches is 3", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, err := Read(bytes.NewReader(tc.raw(t)))
			if err == nil {
				t.Fatalf("Read succeeded (model sizes %v), want an error containing %q", m.Sizes(), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read error\n  %v\nwant it to contain\n  %s", err, tc.want)
			}
			if !errors.Is(err, ErrInvalidModel) {
				t.Errorf("Read error %v does not match ErrInvalidModel", err)
			}
			if got := errors.Is(err, ErrTruncated); got != tc.truncated {
				t.Errorf("errors.Is(%v, ErrTruncated) = %v, want %v", err, got, tc.truncated)
			}
		})
	}
}

func TestNonFiniteErrorDetails(t *testing.T) {
	f := validRaw(t)
	copy(f.tensors[2].data[4*7:], floats(float32(math.Inf(-1))))
	_, _, err := Read(bytes.NewReader(f.bytes(t)))
	var ne *NonFiniteError
	if !errors.As(err, &ne) {
		t.Fatalf("Read = %v, want a *NonFiniteError", err)
	}
	want := &NonFiniteError{Tensor: "layers.1.weight", Index: 7, Value: float32(math.Inf(-1)), Cols: 5}
	if diff := cmp.Diff(want, ne); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestReadValidRaw(t *testing.T) {
	// The raw builder itself produces a readable file (so the corrupt cases
	// above fail for the reason they name).
	if _, _, err := Read(bytes.NewReader(validRaw(t).bytes(t))); err != nil {
		t.Fatal(err)
	}
	// Tensors may be stored in any order, and the header may carry spaces.
	f := validRaw(t)
	f.tensors[0], f.tensors[3] = f.tensors[3], f.tensors[0]
	f.headerFn = func(h []byte) []byte { return append(h, "   "...) }
	if _, _, err := Read(bytes.NewReader(f.bytes(t))); err != nil {
		t.Fatal(err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadIOError(t *testing.T) {
	_, _, err := Read(failingReader{})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || errors.Is(err, ErrInvalidModel) {
		t.Errorf("Read = %v, want the reader's error, not ErrInvalidModel", err)
	}
}
