package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestRoundTrip(t *testing.T) {
	meta := map[string]string{"format": "x", "n": "3"}
	in := []Tensor{
		Float32s("f", []int64{2, 3}, []float32{1, 2, 3, 4, 5, -6.5}),
		Int32s("i", []int64{3}, []int32{-1, 0, 7}),
		Bytes("b", []int64{3}, []byte{0, 1, 1}),
		Float32s("empty", []int64{0, 34}, nil),
	}
	var buf bytes.Buffer
	if err := Write(&buf, meta, in); err != nil {
		t.Fatal(err)
	}
	if hlen := binary.LittleEndian.Uint64(buf.Bytes()); (8+hlen)%8 != 0 {
		t.Errorf("data starts at %d, want 8-byte alignment", 8+hlen)
	}
	gotMeta, got, err := Read(bytes.NewReader(buf.Bytes()), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(meta, gotMeta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	f, _ := got["f"].AsFloat32s()
	i, _ := got["i"].AsInt32s()
	b, _ := got["b"].AsBytes()
	if !cmp.Equal(f, []float32{1, 2, 3, 4, 5, -6.5}) || !cmp.Equal(i, []int32{-1, 0, 7}) || !cmp.Equal(b, []byte{0, 1, 1}) {
		t.Errorf("read back %v %v %v", f, i, b)
	}
	if !cmp.Equal(got["empty"].Shape, []int64{0, 34}) {
		t.Errorf("empty tensor shape %v", got["empty"].Shape)
	}
	if _, err := got["f"].AsInt32s(); err == nil {
		t.Error("F32 read as I32: no error")
	}
	if _, _, err := Read(bytes.NewReader(buf.Bytes()), 10); err == nil {
		t.Error("data over the limit: no error")
	}
	for n := 0; n < buf.Len(); n += 7 {
		if _, _, err := Read(bytes.NewReader(buf.Bytes()[:n]), 1<<20); !errors.Is(err, ErrTruncated) {
			t.Fatalf("truncated to %d bytes: %v, want ErrTruncated", n, err)
		}
	}
}

func TestWriteRefuses(t *testing.T) {
	for name, ts := range map[string][]Tensor{
		"dtype":     {{Name: "x", DType: "F16", Shape: []int64{1}, Data: []byte{0, 0}}},
		"size":      {{Name: "x", DType: F32, Shape: []int64{2}, Data: []byte{0, 0, 0, 0}}},
		"duplicate": {Int32s("x", []int64{1}, []int32{1}), Int32s("x", []int64{1}, []int32{1})},
		"reserved":  {Int32s("__metadata__", []int64{1}, []int32{1})},
	} {
		if err := Write(&bytes.Buffer{}, nil, ts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func header(h string) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(h)))
	b.WriteString(h)
	return b.Bytes()
}

func TestReadRefuses(t *testing.T) {
	for name, file := range map[string][]byte{
		"duplicate key": append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`), 0),
		"gap":           append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`), 0, 0),
		"overlap":       append(header(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`), 0, 0),
		"shape":         append(header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`), 0, 0, 0, 0),
		"dtype":         append(header(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`), make([]byte, 8)...),
		"unknown field": append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}}`), 0),
		"not an object": header(`[]`),
		"trailing json": header(`{} x`),
		"huge header":   {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
		"bad metadata":  header(`{"__metadata__":{"a":1}}`),
		"huge shape":    append(header(`{"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,1]}}`), 0),
	} {
		if _, _, err := Read(bytes.NewReader(file), 1<<20); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestReadErrors(t *testing.T) {
	f32 := Options{MaxDataBytes: 1 << 20, DTypes: []string{F32}}
	all := Options{MaxDataBytes: 1 << 20}
	for _, tc := range []struct {
		name      string
		file      []byte
		opt       Options
		section   string
		want      string
		truncated bool
	}{
		{"empty", nil, all, "header", "file has 0 bytes, want at least 8", true},
		{"short length", []byte{1, 2, 3}, all, "header", "file has 3 bytes, want at least 8", true},
		{"header beyond file", header(`{}`)[:9], all, "header", "length 2 bytes, but only 1 bytes follow", true},
		{"absurd header", []byte{0, 0, 0, 0, 0, 1, 0, 0}, all, "header", "length 1099511627776 bytes is absurd, want at most 104857600 (100 MiB)", false},
		{"header over a custom limit", header(`{"__metadata__":{"a":"b"}}`), Options{MaxHeaderBytes: 16}, "header", "is absurd, want at most 16", false},
		{"not an object", header(`[]`), all, "header", "want an object starting with '{'", false},
		{"invalid JSON", header(`{"a":`), all, "header", "invalid JSON", false},
		{"trailing JSON", header(`{} x`), all, "header", "1 bytes of trailing data after the object", false},
		{"duplicate key", append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`), 0),
			all, "header", `duplicate key "a"`, false},
		{"duplicate entry field", append(header(`{"a":{"dtype":"U8","dtype":"F32","shape":[1],"data_offsets":[0,1]}}`), 0),
			all, "tensor a", `duplicate key "dtype"`, false},
		{"duplicate metadata key", header(`{"__metadata__":{"k":"1","k":"2"}}`), all, "metadata", `duplicate key "k"`, false},
		{"metadata not strings", header(`{"__metadata__":{"a":1}}`), all, "metadata", `value of "a" is 1, want a string`, false},
		{"metadata not an object", header(`{"__metadata__":null}`), all, "metadata", "want an object", false},
		{"unknown field", append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}}`), 0),
			all, "tensor a", `unknown field "x"`, false},
		{"no dtype", append(header(`{"a":{"shape":[1],"data_offsets":[0,1]}}`), 0), all, "tensor a", "no dtype, want F32, I32 or U8", false},
		{"unknown dtype", append(header(`{"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}}`), 0), all, "tensor a", `unknown dtype "Q7", want F32, I32 or U8`, false},
		{"unsupported dtype", append(header(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`), make([]byte, 8)...),
			all, "tensor a", "dtype F64 not supported, want F32, I32 or U8", false},
		{"dtype not among the options'", append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`), 0),
			f32, "tensor a", "dtype U8 not supported, want F32", false},
		{"no shape", append(header(`{"a":{"dtype":"U8","data_offsets":[0,1]}}`), 0), all, "tensor a", "no shape", false},
		{"offsets not a pair", append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[1]}}`), 0), all, "tensor a", "data_offsets [1], want [begin, end]", false},
		{"offsets reversed", header(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[2,1]}}`), all, "tensor a", "data_offsets [2, 1], want 0 <= begin <= end", false},
		{"negative shape", header(`{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}}`), all, "tensor a", "shape [-1] has a negative dimension", false},
		{"shape mismatch", append(header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`), 0, 0, 0, 0),
			all, "tensor a", "shape [2] needs 8 bytes of F32 but data_offsets [0, 4] span 4 bytes", false},
		{"huge shape", append(header(`{"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,1]}}`), 0),
			all, "tensor a", "shape [4294967296 4294967296] does not fit data_offsets [0, 1] (1 bytes)", false},
		{"shape overflowing in bytes", header(`{"a":{"dtype":"F32","shape":[6917529027641081855],"data_offsets":[0,9223372036854775804]}}`),
			Options{MaxDataBytes: math.MaxInt64}, "tensor a", "does not fit data_offsets", false},
		{"first not at 0", append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`), 0, 0),
			all, "tensors", "data_offsets are not contiguous: a begins at 1, want the first tensor at 0", false},
		{"gap", append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[3,4]}}`), 0, 0, 0, 0),
			all, "tensors", "2-byte gap between a (ends at 1) and b (begins at 3)", false},
		{"overlap", append(header(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`), 0, 0),
			all, "tensors", "b [1, 2] overlaps a, which ends at 2", false},
		{"data over the limit", append(header(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`), 0, 0),
			Options{MaxDataBytes: 1}, "data", "2 bytes, more than the 1-byte limit", false},
		{"data cut short", append(header(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`), 0),
			all, "data", "1 bytes, but the tensors' data_offsets need 2", true},
		{"trailing data", append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`), 0, 0),
			all, "data", "bytes follow the last tensor (at 1)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := readFile(tc.file, tc.opt)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want an *Error", err)
			}
			if se.Section != tc.section || !strings.Contains(se.Problem, tc.want) {
				t.Errorf("error %q, want section %q and a problem containing %q", err, tc.section, tc.want)
			}
			if want := "safetensors: " + tc.section + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			if got := errors.Is(err, ErrTruncated); got != tc.truncated {
				t.Errorf("errors.Is(%v, ErrTruncated) = %v, want %v", err, got, tc.truncated)
			}
		})
	}
}

// TestReadErrorsTooLarge checks that the header and data-size limits, and
// only they, match ErrTooLarge.
func TestReadErrorsTooLarge(t *testing.T) {
	entry := header(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`)
	for _, tc := range []struct {
		name string
		file []byte
		opt  Options
		want bool
	}{
		{"absurd header", []byte{0, 0, 0, 0, 0, 1, 0, 0}, Options{MaxDataBytes: 1}, true},
		{"header over a custom limit", entry, Options{MaxHeaderBytes: 16, MaxDataBytes: 2}, true},
		{"data over the limit", append(entry, 0, 0), Options{MaxDataBytes: 1}, true},
		{"data cut short", append(entry, 0), Options{MaxDataBytes: 2}, false},
		{"shape mismatch", append(header(`{"a":{"dtype":"U8","shape":[3],"data_offsets":[0,2]}}`), 0, 0), Options{MaxDataBytes: 2}, false},
	} {
		if err := readFile(tc.file, tc.opt); errors.Is(err, ErrTooLarge) != tc.want {
			t.Errorf("%s: errors.Is(%v, ErrTooLarge) = %v, want %v", tc.name, err, !tc.want, tc.want)
		}
	}
}

// readFile reads file with ReadHeader and ReadData on one reader.
func readFile(file []byte, opt Options) error {
	r := bytes.NewReader(file)
	h, err := ReadHeader(r, opt)
	if err != nil {
		return err
	}
	_, err = h.ReadData(r)
	return err
}

func TestReadHeaderThenData(t *testing.T) {
	var buf bytes.Buffer
	in := []Tensor{Float32s("w", []int64{2}, []float32{1, 2}), Bytes("b", []int64{3}, []byte{7, 8, 9})}
	if err := Write(&buf, map[string]string{"k": "v"}, in); err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(buf.Bytes())
	h, err := ReadHeader(r, Options{MaxDataBytes: 11})
	if err != nil {
		t.Fatal(err)
	}
	want := &Header{
		Metadata: map[string]string{"k": "v"},
		Entries: map[string]Entry{
			"w": {DType: F32, Shape: []int64{2}, DataOffsets: [2]int64{0, 8}},
			"b": {DType: U8, Shape: []int64{3}, DataOffsets: [2]int64{8, 11}},
		},
		DataBytes: 11,
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if int(r.Size())-r.Len() != buf.Len()-11 {
		t.Errorf("ReadHeader consumed %d bytes, want the %d before the data", int(r.Size())-r.Len(), buf.Len()-11)
	}
	got, err := h.ReadData(r)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]Tensor{"w": in[0], "b": in[1]}, got); diff != "" {
		t.Errorf("tensors (-want +got):\n%s", diff)
	}

	// No metadata: nil; empty metadata: empty, not nil.
	h, err = ReadHeader(bytes.NewReader(header(`{}`)), Options{})
	if err != nil || h.Metadata != nil {
		t.Errorf("no metadata: %v, %v, want nil metadata", h, err)
	}
	h, err = ReadHeader(bytes.NewReader(header(`{"__metadata__":{}}`)), Options{})
	if err != nil || h.Metadata == nil || len(h.Metadata) != 0 {
		t.Errorf("empty metadata: %v, %v, want an empty map", h, err)
	}
	// Options.DTypes outside the supported ones is a caller's error, not a file's.
	if _, err := ReadHeader(bytes.NewReader(header(`{}`)), Options{DTypes: []string{"F16"}}); err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("ReadHeader with DTypes F16 = %v, want a usage error", err)
	}
}

type failingReader struct{ after []byte }

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.after) > 0 {
		n := copy(p, f.after)
		f.after = f.after[n:]
		return n, nil
	}
	return 0, errors.New("disk on fire")
}

func TestReadIOError(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, nil, []Tensor{Bytes("b", []int64{2}, []byte{1, 2})}); err != nil {
		t.Fatal(err)
	}
	// Fail in the length, the header, the data and after the data.
	for _, n := range []int{0, 4, 8, 12, buf.Len() - 1, buf.Len()} {
		_, _, err := Read(&failingReader{after: buf.Bytes()[:n]}, 1<<20)
		if err == nil || !strings.Contains(err.Error(), "disk on fire") || errors.Is(err, ErrInvalid) {
			t.Errorf("reader failing after %d bytes: %v, want the reader's error, not ErrInvalid", n, err)
		}
	}
}

func TestWriteDeterministic(t *testing.T) {
	meta := map[string]string{"z": "1", "a": "2", "m": "3"}
	in := []Tensor{Int32s("z", []int64{1}, []int32{5}), Float32s("a", []int64{1, 2}, []float32{1, 2}), Bytes("m", []int64{}, []byte{1})}
	var first bytes.Buffer
	if err := Write(&first, meta, in); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		var again bytes.Buffer
		if err := Write(&again, maps.Clone(meta), in); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), again.Bytes()) {
			t.Fatal("Write gave different bytes for the same arguments")
		}
	}
	hlen := binary.LittleEndian.Uint64(first.Bytes())
	hdr := first.Bytes()[8 : 8+hlen]
	want := `{"__metadata__":{"a":"2","m":"3","z":"1"},"a":{"dtype":"F32","shape":[1,2],"data_offsets":[4,12]},` +
		`"m":{"dtype":"U8","shape":[],"data_offsets":[12,13]},"z":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}`
	if got := strings.TrimRight(string(hdr), " "); got != want {
		t.Errorf("header\n  %s\nwant\n  %s", got, want)
	}
	if (8+hlen)%8 != 0 {
		t.Errorf("data starts at %d, want 8-byte alignment", 8+hlen)
	}
	if err := Write(&bytes.Buffer{}, nil, []Tensor{{Name: "x", DType: U8, Shape: []int64{1 << 32, 1 << 32}}}); err == nil {
		t.Error("Write of a shape whose size overflows: no error")
	}
}

// FuzzRead: Read never panics, refuses with an *Error or accepts, and what
// it accepts survives a Write and Read unchanged.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, map[string]string{"k": "v"}, []Tensor{
		Float32s("f", []int64{2}, []float32{1, 2}), Int32s("i", []int64{1, 1}, []int32{3}), Bytes("b", []int64{0}, nil),
	}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(header(`{}`))
	f.Add(append(header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`), 7))
	f.Fuzz(func(t *testing.T, data []byte) {
		meta, tensors, err := Read(bytes.NewReader(data), 1<<16)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		in := slices.Collect(maps.Values(tensors))
		slices.SortFunc(in, func(a, b Tensor) int { return strings.Compare(a.Name, b.Name) })
		var out bytes.Buffer
		if err := Write(&out, meta, in); err != nil {
			t.Fatalf("Write of an accepted file: %v", err)
		}
		meta2, tensors2, err := Read(&out, 1<<16)
		if err != nil {
			t.Fatalf("Read of a re-written file: %v", err)
		}
		if len(meta) == 0 {
			meta = nil // Write writes no empty metadata
		}
		if diff := cmp.Diff(meta, meta2, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("metadata changed (-first +second):\n%s", diff)
		}
		if diff := cmp.Diff(tensors, tensors2, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("tensors changed (-first +second):\n%s", diff)
		}
	})
}

// A zero dimension anywhere in the shape makes an empty tensor, which
// Write writes and Read reads back; a negative dimension is refused first.
func TestEmptyShapes(t *testing.T) {
	for _, shape := range [][]int64{{0}, {0, 2}, {2, 0}, {3, 0}, {3, 0, 5}, {4294967296, 4294967296, 0}} {
		var buf bytes.Buffer
		if err := Write(&buf, nil, []Tensor{{Name: "e", DType: F32, Shape: shape}, Bytes("b", []int64{1}, []byte{7})}); err != nil {
			t.Errorf("Write shape %v: %v, want an empty tensor", shape, err)
			continue
		}
		_, got, err := Read(bytes.NewReader(buf.Bytes()), 1<<20)
		if err != nil {
			t.Errorf("Read shape %v: %v, want an empty tensor", shape, err)
			continue
		}
		if e := got["e"]; !slices.Equal(e.Shape, shape) || len(e.Data) != 0 {
			t.Errorf("read shape %v with %d bytes, want %v and none", e.Shape, len(e.Data), shape)
		}
	}
	if err := readFile(header(`{"a":{"dtype":"U8","shape":[2,0],"data_offsets":[0,0]}}`), Options{}); err != nil {
		t.Errorf("shape [2,0] at [0,0]: %v, want an empty tensor", err)
	}
	for _, shape := range []string{"[0,-1]", "[2,0,-3]", "[4294967296,4294967296,-1]"} {
		err := readFile(header(`{"a":{"dtype":"U8","shape":`+shape+`,"data_offsets":[0,0]}}`), Options{})
		if err == nil || !strings.Contains(err.Error(), "has a negative dimension") {
			t.Errorf("shape %s: %v, want a negative dimension refused", shape, err)
		}
	}
	if err := Write(&bytes.Buffer{}, nil, []Tensor{{Name: "x", DType: U8, Shape: []int64{0, -1}}}); err == nil ||
		!strings.Contains(err.Error(), "has a negative dimension") {
		t.Errorf("Write shape [0 -1]: %v, want a negative dimension refused", err)
	}
}

// Errors quote at most MaxEcho bytes of a value from the file and say how
// much they left out.
func TestReadErrorsQuoteBoundedValues(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"metadata value not a string", header(`{"__metadata__":{"` + long + `":[` + strings.Repeat("1,", 1<<19) + `1]}}`),
			`value of "xxxx`},
		{"invalid entry", header(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"` + long + `":1}}`), "invalid entry {"},
		{"invalid entry value", header(`{"a":{"dtype":"` + long + `","shape":1,"data_offsets":[0,1]}}`), "invalid entry {"},
		{"duplicate key", header(`{"__metadata__":{"` + long + `":"1","` + long + `":"2"}}`), `duplicate key "xxxx`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := readFile(tc.file, Options{MaxDataBytes: 1 << 20})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %.300v…, want one containing %q", err, tc.want)
			}
			if msg := err.Error(); len(msg) > 512 || !strings.Contains(msg, "more bytes)") {
				t.Errorf("error of %d bytes, want at most 512 saying what was cut: %.300s…", len(msg), msg)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"500ms", `"500ms"`},
		{strings.Repeat("a", MaxEcho), `"` + strings.Repeat("a", MaxEcho) + `"`},
		{strings.Repeat("a", MaxEcho+10), `"` + strings.Repeat("a", MaxEcho) + `"… (10 more bytes)`},
		// Cut on a character boundary: 63 bytes of a, then a two-byte é.
		{strings.Repeat("a", MaxEcho-1) + "é" + "b", `"` + strings.Repeat("a", MaxEcho-1) + `"… (3 more bytes)`},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%.80q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := Clip(strings.Repeat("b", MaxEcho+1)); got != strings.Repeat("b", MaxEcho)+"… (1 more bytes)" {
		t.Errorf("Clip = %s", got)
	}
}
