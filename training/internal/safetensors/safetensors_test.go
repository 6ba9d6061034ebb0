package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
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
