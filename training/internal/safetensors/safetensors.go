// Package safetensors reads and writes the safetensors container
// (https://huggingface.co/docs/safetensors) that training's dataset and
// dynamics-model files use:
//
//	8 bytes     N, the header length, unsigned little-endian
//	N bytes     JSON header, padded with spaces to a multiple of 8 bytes
//	the rest    tensor data, little-endian, exactly as indexed by the header
//
// The header maps each tensor name to
// {"dtype":…,"shape":[…],"data_offsets":[begin,end]} and "__metadata__" to a
// map of strings. Only the dtypes F32, I32 and U8 are supported. Read refuses
// duplicate keys, offsets that do not tile the data section from 0, shapes
// that disagree with their offsets and trailing bytes.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

// Supported dtypes.
const (
	F32 = "F32"
	I32 = "I32"
	U8  = "U8"
)

// MaxHeaderBytes is the largest header Read accepts (100 MiB).
const MaxHeaderBytes = 100 << 20

// ErrTruncated is wrapped by Read's error when the input ends early.
var ErrTruncated = errors.New("truncated file")

// Tensor is one named tensor: raw little-endian data of a dtype and shape.
type Tensor struct {
	Name  string
	DType string
	Shape []int64
	Data  []byte
}

// elemSize returns the byte size of one element of dtype, or 0 if unsupported.
func elemSize(dtype string) int64 {
	switch dtype {
	case F32, I32:
		return 4
	case U8:
		return 1
	}
	return 0
}

// Float32s returns a tensor holding v.
func Float32s(name string, shape []int64, v []float32) Tensor {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return Tensor{Name: name, DType: F32, Shape: shape, Data: b}
}

// Int32s returns a tensor holding v.
func Int32s(name string, shape []int64, v []int32) Tensor {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return Tensor{Name: name, DType: I32, Shape: shape, Data: b}
}

// Bytes returns a U8 tensor holding v.
func Bytes(name string, shape []int64, v []byte) Tensor {
	return Tensor{Name: name, DType: U8, Shape: shape, Data: append([]byte(nil), v...)}
}

// AsFloat32s decodes an F32 tensor.
func (t Tensor) AsFloat32s() ([]float32, error) {
	if t.DType != F32 {
		return nil, fmt.Errorf("tensor %s is %s, want F32", t.Name, t.DType)
	}
	v := make([]float32, len(t.Data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v, nil
}

// AsInt32s decodes an I32 tensor.
func (t Tensor) AsInt32s() ([]int32, error) {
	if t.DType != I32 {
		return nil, fmt.Errorf("tensor %s is %s, want I32", t.Name, t.DType)
	}
	v := make([]int32, len(t.Data)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v, nil
}

// AsBytes returns the data of a U8 tensor.
func (t Tensor) AsBytes() ([]byte, error) {
	if t.DType != U8 {
		return nil, fmt.Errorf("tensor %s is %s, want U8", t.Name, t.DType)
	}
	return t.Data, nil
}

// NumElements returns the product of the shape.
func (t Tensor) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

type entry struct {
	DType       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

const metadataKey = "__metadata__"

// Write writes the tensors, in the given order, and the metadata to w.
func Write(w io.Writer, meta map[string]string, tensors []Tensor) error {
	header := make(map[string]any, len(tensors)+1)
	if len(meta) > 0 {
		header[metadataKey] = meta
	}
	var off int64
	for _, t := range tensors {
		if t.Name == metadataKey || t.Name == "" {
			return fmt.Errorf("tensor name %q is reserved", t.Name)
		}
		if _, dup := header[t.Name]; dup {
			return fmt.Errorf("tensor %s written twice", t.Name)
		}
		size := elemSize(t.DType)
		if size == 0 {
			return fmt.Errorf("tensor %s: dtype %q not supported, want F32, I32 or U8", t.Name, t.DType)
		}
		for _, d := range t.Shape {
			if d < 0 {
				return fmt.Errorf("tensor %s: shape %v has a negative dimension", t.Name, t.Shape)
			}
		}
		if n := t.NumElements() * size; n != int64(len(t.Data)) {
			return fmt.Errorf("tensor %s: shape %v needs %d bytes of %s, have %d", t.Name, t.Shape, n, t.DType, len(t.Data))
		}
		shape := t.Shape
		if shape == nil {
			shape = []int64{}
		}
		header[t.Name] = entry{DType: t.DType, Shape: shape, DataOffsets: []int64{off, off + int64(len(t.Data))}}
		off += int64(len(t.Data))
	}
	hdr, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	for (8+len(hdr))%8 != 0 {
		hdr = append(hdr, ' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(hdr)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for _, t := range tensors {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// Read reads a file written by Write. maxData bounds the data section, in
// bytes. The tensors are returned by name.
func Read(r io.Reader, maxData int64) (map[string]string, map[string]Tensor, error) {
	var n [8]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		if isEOF(err) {
			return nil, nil, fmt.Errorf("header length: %w", ErrTruncated)
		}
		return nil, nil, err
	}
	hlen := binary.LittleEndian.Uint64(n[:])
	if hlen > MaxHeaderBytes {
		return nil, nil, fmt.Errorf("header length %d bytes, want at most %d", hlen, MaxHeaderBytes)
	}
	hdr, err := io.ReadAll(io.LimitReader(r, int64(hlen)))
	if err != nil {
		return nil, nil, err
	}
	if uint64(len(hdr)) < hlen {
		return nil, nil, fmt.Errorf("header of %d bytes, only %d follow: %w", hlen, len(hdr), ErrTruncated)
	}
	members, err := parseObject(hdr)
	if err != nil {
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	var meta map[string]string
	entries := make(map[string]entry, len(members))
	for _, m := range members {
		if m.key == metadataKey {
			if err := json.Unmarshal(m.value, &meta); err != nil {
				return nil, nil, fmt.Errorf("header: %s: %v, want a map of strings", metadataKey, err)
			}
			continue
		}
		var e entry
		dec := json.NewDecoder(bytes.NewReader(m.value))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, nil, fmt.Errorf("header: tensor %s: %v", m.key, err)
		}
		if err := checkEntry(m.key, e); err != nil {
			return nil, nil, fmt.Errorf("header: %w", err)
		}
		entries[m.key] = e
	}
	total, err := checkOffsets(entries)
	if err != nil {
		return nil, nil, fmt.Errorf("header: %w", err)
	}
	if total > maxData {
		return nil, nil, fmt.Errorf("data section of %d bytes, want at most %d", total, maxData)
	}
	data, err := io.ReadAll(io.LimitReader(r, total))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) < total {
		return nil, nil, fmt.Errorf("data section of %d bytes, only %d follow: %w", total, len(data), ErrTruncated)
	}
	var extra [1]byte
	if k, _ := r.Read(extra[:]); k > 0 {
		return nil, nil, fmt.Errorf("trailing bytes after the %d-byte data section", total)
	}
	tensors := make(map[string]Tensor, len(entries))
	for name, e := range entries {
		tensors[name] = Tensor{Name: name, DType: e.DType, Shape: e.Shape, Data: data[e.DataOffsets[0]:e.DataOffsets[1]:e.DataOffsets[1]]}
	}
	return meta, tensors, nil
}

func isEOF(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }

func checkEntry(name string, e entry) error {
	size := elemSize(e.DType)
	if size == 0 {
		return fmt.Errorf("tensor %s: dtype %q not supported, want F32, I32 or U8", name, e.DType)
	}
	if e.Shape == nil {
		return fmt.Errorf("tensor %s: no shape", name)
	}
	if len(e.DataOffsets) != 2 || e.DataOffsets[0] < 0 || e.DataOffsets[1] < e.DataOffsets[0] {
		return fmt.Errorf("tensor %s: data_offsets %v, want [begin, end] with 0 <= begin <= end", name, e.DataOffsets)
	}
	span := e.DataOffsets[1] - e.DataOffsets[0]
	elems := int64(1)
	for _, d := range e.Shape {
		if d < 0 {
			return fmt.Errorf("tensor %s: shape %v has a negative dimension", name, e.Shape)
		}
		if d != 0 && elems > span/d {
			return fmt.Errorf("tensor %s: shape %v does not fit its %d bytes", name, e.Shape, span)
		}
		elems *= d
	}
	if elems*size != span {
		return fmt.Errorf("tensor %s: shape %v needs %d bytes of %s, data_offsets span %d", name, e.Shape, elems*size, e.DType, span)
	}
	return nil
}

// checkOffsets checks that the entries tile [0, total) and returns total.
func checkOffsets(entries map[string]entry) (int64, error) {
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := entries[names[i]].DataOffsets, entries[names[j]].DataOffsets
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		if a[1] != b[1] {
			return a[1] < b[1]
		}
		return names[i] < names[j]
	})
	var end int64
	for _, name := range names {
		o := entries[name].DataOffsets
		if o[0] != end {
			return 0, fmt.Errorf("tensor %s at [%d, %d]: data_offsets do not tile the data section (want it to begin at %d)", name, o[0], o[1], end)
		}
		end = o[1]
	}
	return end, nil
}

type member struct {
	key   string
	value json.RawMessage
}

// parseObject splits a JSON object into its members, refusing duplicate keys
// and anything but spaces after the object.
func parseObject(data []byte) ([]member, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New("invalid JSON: want an object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	var members []member
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("invalid JSON: key %v is not a string", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("invalid JSON: value of %q: %v", key, err)
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		members = append(members, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if rest := bytes.TrimRight(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("invalid JSON: %d bytes after the object", len(rest))
	}
	return members, nil
}
