// Package safetensors reads and writes the safetensors container
// (https://huggingface.co/docs/safetensors) that proflow's model and data
// files share (policy/qnet's Q-network files, training's dataset and
// dynamics-model files):
//
//	8 bytes     N, the header length, unsigned little-endian
//	N bytes     JSON header, padded with spaces
//	the rest    tensor data, little-endian, exactly as indexed by the header
//
// The header maps each tensor name to
// {"dtype":…,"shape":[…],"data_offsets":[begin,end]} (offsets relative to
// the start of the data) and "__metadata__" to a map of strings.
//
// This package owns the container and nothing else: what the metadata and
// the tensors must be is up to each file format. Write is deterministic
// (keys sorted, tensors in the order given) and pads the header with spaces
// so the data starts 8-byte aligned. ReadHeader and Read are strict: they
// refuse, with an *Error naming the part of the file at fault, a header
// longer than Options.MaxHeaderBytes, invalid JSON, duplicate keys (in the
// header, the metadata or a tensor entry), anything but spaces after the
// header object, unknown entry fields, metadata values that are not
// strings, unknown or unsupported dtypes, shapes that disagree with their
// offsets, offsets that do not tile the data section from 0 without gaps or
// overlaps, a data section over Options.MaxDataBytes, and trailing bytes.
// Every *Error matches ErrInvalid; one for input that ends early also
// matches ErrTruncated, and one for a header or data section over the
// limits also matches ErrTooLarge. Errors of the underlying reader are
// returned as they are.
//
// The dtypes supported are F32, I32 and U8; the other safetensors dtypes
// are recognised, and refused as unsupported.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Supported dtypes.
const (
	F32 = "F32"
	I32 = "I32"
	U8  = "U8"
)

// MaxHeaderBytes is the default bound on the JSON header (100 MiB), the
// reference implementation's.
const MaxHeaderBytes = 100 << 20

// MetadataKey is the header key of the metadata map; no tensor may use it.
const MetadataKey = "__metadata__"

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalid is matched by every *Error: input that is not a valid
	// safetensors file, as opposed to a failure of the reader.
	ErrInvalid = errors.New("invalid safetensors file")
	// ErrTruncated is matched by an *Error for input that ends early.
	ErrTruncated = errors.New("truncated file")
	// ErrTooLarge is matched by an *Error for a header longer than
	// Options.MaxHeaderBytes or a data section longer than
	// Options.MaxDataBytes; both are found before anything that long is read.
	ErrTooLarge = errors.New("file larger than the limits")
)

// Error reports what is wrong with a file.
type Error struct {
	// Section is the part of the file at fault: "header", "metadata",
	// "tensor NAME", "tensors" (the offsets of all of them) or "data".
	Section string
	// Problem says what is wrong and what was expected.
	Problem string
	// Err is ErrTruncated for input that ends early, ErrTooLarge for a
	// header or data section over the limits, otherwise nil.
	Err error
}

// Error returns "safetensors: SECTION: PROBLEM".
func (e *Error) Error() string { return "safetensors: " + e.Section + ": " + e.Problem }

// Unwrap returns the sentinel behind the error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every *Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

func invalid(section, format string, args ...any) *Error {
	return &Error{Section: section, Problem: fmt.Sprintf(format, args...)}
}

func truncated(section, format string, args ...any) *Error {
	e := invalid(section, format, args...)
	e.Err = ErrTruncated
	return e
}

func tooLarge(section, format string, args ...any) *Error {
	e := invalid(section, format, args...)
	e.Err = ErrTooLarge
	return e
}

// MaxEcho is how many bytes of a value read from a file Quote and Clip
// repeat in an error message, so that the message stays short whatever the
// file holds.
const MaxEcho = 64

// Clip returns s when it is at most MaxEcho bytes long; else its first
// MaxEcho bytes (whole characters) followed by "… (N more bytes)".
func Clip(s string) string {
	head, more := cut(s)
	if more == 0 {
		return head
	}
	return head + fmt.Sprintf("… (%d more bytes)", more)
}

// Quote returns s quoted as %q quotes it when it is at most MaxEcho bytes
// long; else its first MaxEcho bytes (whole characters) quoted, followed by
// "… (N more bytes)".
func Quote(s string) string {
	head, more := cut(s)
	if more == 0 {
		return strconv.Quote(head)
	}
	return strconv.Quote(head) + fmt.Sprintf("… (%d more bytes)", more)
}

// cut splits s after at most MaxEcho bytes, not inside a UTF-8 sequence,
// and returns the head and how many bytes follow it.
func cut(s string) (string, int) {
	if len(s) <= MaxEcho {
		return s, 0
	}
	n := MaxEcho
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], len(s) - n
}

// knownDTypes are the dtypes of the safetensors specification.
var knownDTypes = []string{"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64"}

// supportedDTypes are the dtypes this package reads and writes.
var supportedDTypes = []string{F32, I32, U8}

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

// Tensor is one named tensor: raw little-endian data of a dtype and shape.
type Tensor struct {
	Name  string
	DType string
	Shape []int64
	Data  []byte
}

// AppendFloat32s appends v to b, little-endian.
func AppendFloat32s(b []byte, v []float32) []byte {
	b = slices.Grow(b, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// Float32s returns a tensor holding v.
func Float32s(name string, shape []int64, v []float32) Tensor {
	return Tensor{Name: name, DType: F32, Shape: shape, Data: AppendFloat32s(nil, v)}
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

// entryJSON is a header entry as it is written.
type entryJSON struct {
	DType       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// Write writes the metadata and the tensors, in the given order, to w. The
// output depends only on the arguments: header keys are sorted and the
// header is padded with spaces so the data starts 8-byte aligned. A nil or
// empty meta writes no "__metadata__".
func Write(w io.Writer, meta map[string]string, tensors []Tensor) error {
	header := make(map[string]any, len(tensors)+1)
	if len(meta) > 0 {
		header[MetadataKey] = meta
	}
	var off int64
	for _, t := range tensors {
		if t.Name == MetadataKey || t.Name == "" {
			return fmt.Errorf("tensor name %q is reserved", t.Name)
		}
		if _, dup := header[t.Name]; dup {
			return fmt.Errorf("tensor %s written twice", t.Name)
		}
		size := elemSize(t.DType)
		if size == 0 {
			return fmt.Errorf("tensor %s: dtype %q not supported, want %s", t.Name, t.DType, oneOf(supportedDTypes))
		}
		span := int64(len(t.Data))
		switch n, res := shapeBytes(t.Shape, size, span); {
		case res == shapeNegative:
			return fmt.Errorf("tensor %s: shape %v has a negative dimension", t.Name, t.Shape)
		case res == shapeTooBig:
			return fmt.Errorf("tensor %s: shape %v does not fit its %d bytes of data", t.Name, t.Shape, span)
		case n != span:
			return fmt.Errorf("tensor %s: shape %v needs %d bytes of %s, have %d", t.Name, t.Shape, n, t.DType, span)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int64{}
		}
		header[t.Name] = entryJSON{DType: t.DType, Shape: shape, DataOffsets: []int64{off, off + span}}
		off += span
	}
	hdr, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	// Pad the header with spaces so the data starts 8-byte aligned, as the
	// safetensors reference implementation does.
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

// Options bound and narrow what ReadHeader accepts.
type Options struct {
	// MaxHeaderBytes bounds the JSON header; 0 means MaxHeaderBytes.
	MaxHeaderBytes int64
	// MaxDataBytes bounds the data section. It has no default: 0 accepts
	// only files whose tensors hold no data.
	MaxDataBytes int64
	// DTypes lists the dtypes accepted, a subset of F32, I32 and U8; none
	// means all three.
	DTypes []string
}

// Entry is a tensor's header entry.
type Entry struct {
	DType string
	Shape []int64
	// DataOffsets is [begin, end), relative to the start of the data.
	DataOffsets [2]int64
}

// Header is a checked header: its entries tile the data section.
type Header struct {
	// Metadata is the "__metadata__" map; nil when the header has none.
	Metadata map[string]string
	// Entries maps each tensor name to its entry.
	Entries map[string]Entry
	// DataBytes is the length of the data section.
	DataBytes int64
}

// Read reads a file (written by Write or any safetensors writer) whose data
// section is at most maxData bytes, of the dtypes F32, I32 and U8. It returns
// the metadata (nil if the file has none) and the tensors by name.
func Read(r io.Reader, maxData int64) (map[string]string, map[string]Tensor, error) {
	h, err := ReadHeader(r, Options{MaxDataBytes: maxData})
	if err != nil {
		return nil, nil, err
	}
	tensors, err := h.ReadData(r)
	if err != nil {
		return nil, nil, err
	}
	return h.Metadata, tensors, nil
}

// ReadHeader reads and checks the header length and the header, leaving r
// at the start of the data section for ReadData. A caller can check the
// metadata and the entries before reading any data.
func ReadHeader(r io.Reader, opt Options) (*Header, error) {
	maxHeader := opt.MaxHeaderBytes
	if maxHeader == 0 {
		maxHeader = MaxHeaderBytes
	}
	dtypes := opt.DTypes
	if len(dtypes) == 0 {
		dtypes = supportedDTypes
	}
	for _, dt := range dtypes {
		if elemSize(dt) == 0 {
			return nil, fmt.Errorf("safetensors: dtype %q in Options.DTypes not supported, want %s", dt, oneOf(supportedDTypes))
		}
	}

	var n [8]byte
	if got, err := io.ReadFull(r, n[:]); err != nil {
		if isEOF(err) {
			return nil, truncated("header", "file has %d bytes, want at least 8 (the header length)", got)
		}
		return nil, err
	}
	hlen := binary.LittleEndian.Uint64(n[:])
	if maxHeader < 0 || hlen > uint64(maxHeader) {
		return nil, tooLarge("header", "length %d bytes is absurd, want at most %d%s", hlen, maxHeader, sizeNote(maxHeader))
	}
	hdr, err := io.ReadAll(io.LimitReader(r, int64(hlen)))
	if err != nil {
		return nil, err
	}
	if uint64(len(hdr)) < hlen {
		return nil, truncated("header", "length %d bytes, but only %d bytes follow", hlen, len(hdr))
	}

	members, err := parseObject(hdr, "header")
	if err != nil {
		return nil, err
	}
	h := &Header{Entries: make(map[string]Entry, len(members))}
	for _, m := range members {
		if m.key == MetadataKey {
			if h.Metadata, err = parseMetadata(m.value); err != nil {
				return nil, err
			}
			continue
		}
		e, err := parseEntry(m.key, m.value, dtypes)
		if err != nil {
			return nil, err
		}
		h.Entries[m.key] = e
	}
	if h.DataBytes, err = checkOffsets(h.Entries); err != nil {
		return nil, err
	}
	if h.DataBytes > opt.MaxDataBytes {
		return nil, tooLarge("data", "%d bytes, more than the %d-byte limit", h.DataBytes, opt.MaxDataBytes)
	}
	return h, nil
}

// ReadData reads the data section that h indexes from r, which must end
// with it, and returns the tensors by name. They share one buffer.
func (h *Header) ReadData(r io.Reader) (map[string]Tensor, error) {
	total := h.DataBytes
	data, err := io.ReadAll(io.LimitReader(r, total))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) < total {
		return nil, truncated("data", "%d bytes, but the tensors' data_offsets need %d", len(data), total)
	}
	var extra [1]byte
	if k, err := io.ReadFull(r, extra[:]); k > 0 {
		return nil, invalid("data", "bytes follow the last tensor (at %d), want the buffer entirely indexed by data_offsets", total)
	} else if !isEOF(err) {
		return nil, err
	}
	tensors := make(map[string]Tensor, len(h.Entries))
	for name, e := range h.Entries {
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		tensors[name] = Tensor{Name: name, DType: e.DType, Shape: e.Shape, Data: data[b:end:end]}
	}
	return tensors, nil
}

func isEOF(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }

// sizeNote returns " (N MiB)" or " (N GiB)" for a round n, else "".
func sizeNote(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf(" (%d GiB)", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf(" (%d MiB)", n>>20)
	}
	return ""
}

// oneOf returns "A", "A or B", "A, B or C".
func oneOf(v []string) string {
	if len(v) <= 1 {
		return strings.Join(v, "")
	}
	return strings.Join(v[:len(v)-1], ", ") + " or " + v[len(v)-1]
}

func parseMetadata(raw json.RawMessage) (map[string]string, error) {
	members, err := parseObject(raw, "metadata")
	if err != nil {
		return nil, err
	}
	md := make(map[string]string, len(members))
	for _, m := range members {
		var s string
		if err := json.Unmarshal(m.value, &s); err != nil {
			return nil, invalid("metadata", "value of %s is %s, want a string", Quote(m.key), Clip(string(m.value)))
		}
		md[m.key] = s
	}
	return md, nil
}

func parseEntry(name string, raw json.RawMessage, dtypes []string) (Entry, error) {
	section := "tensor " + name
	var info entryJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		return Entry{}, invalid(section, "invalid entry %s: %s, want {\"dtype\",\"shape\",\"data_offsets\"}", Clip(string(raw)), Clip(err.Error()))
	}
	// The decoder keeps the last of duplicate fields; refuse them instead.
	if _, err := parseObject(raw, section); err != nil {
		return Entry{}, err
	}
	switch {
	case slices.Contains(dtypes, info.DType):
	case info.DType == "":
		return Entry{}, invalid(section, "no dtype, want %s", oneOf(dtypes))
	case slices.Contains(knownDTypes, info.DType):
		return Entry{}, invalid(section, "dtype %s not supported, want %s", info.DType, oneOf(dtypes))
	default:
		return Entry{}, invalid(section, "unknown dtype %s, want %s", Quote(info.DType), oneOf(dtypes))
	}
	if info.Shape == nil {
		return Entry{}, invalid(section, "no shape")
	}
	if len(info.DataOffsets) != 2 {
		return Entry{}, invalid(section, "data_offsets %v, want [begin, end]", info.DataOffsets)
	}
	begin, end := info.DataOffsets[0], info.DataOffsets[1]
	if begin < 0 || end < begin {
		return Entry{}, invalid(section, "data_offsets [%d, %d], want 0 <= begin <= end", begin, end)
	}
	switch n, res := shapeBytes(info.Shape, elemSize(info.DType), end-begin); {
	case res == shapeNegative:
		return Entry{}, invalid(section, "shape %v has a negative dimension", info.Shape)
	case res == shapeTooBig:
		return Entry{}, invalid(section, "shape %v does not fit data_offsets [%d, %d] (%d bytes)", info.Shape, begin, end, end-begin)
	case n != end-begin:
		return Entry{}, invalid(section, "shape %v needs %d bytes of %s but data_offsets [%d, %d] span %d bytes",
			info.Shape, n, info.DType, begin, end, end-begin)
	}
	return Entry{DType: info.DType, Shape: info.Shape, DataOffsets: [2]int64{begin, end}}, nil
}

// Results of shapeBytes.
const (
	shapeFits = iota
	shapeNegative
	shapeTooBig
)

// shapeBytes returns the number of bytes shape holds of a dtype of size
// bytes, or why it cannot say: a negative dimension (anywhere in the
// shape), or more elements than span bytes (checked without overflowing).
// A shape with a zero dimension, wherever it is, holds 0 bytes.
func shapeBytes(shape []int64, size, span int64) (int64, int) {
	for _, d := range shape {
		if d < 0 {
			return 0, shapeNegative
		}
	}
	if slices.Contains(shape, 0) {
		return 0, shapeFits
	}
	elems := int64(1)
	for _, d := range shape {
		if elems > span/d {
			return 0, shapeTooBig
		}
		elems *= d
	}
	if elems > math.MaxInt64/size {
		return 0, shapeTooBig
	}
	return elems * size, shapeFits
}

// checkOffsets checks that the entries tile the data section from 0 without
// gaps or overlaps, and returns its length.
func checkOffsets(entries map[string]Entry) (int64, error) {
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		oa, ob := entries[a].DataOffsets, entries[b].DataOffsets
		if oa[0] != ob[0] {
			return int(min(max(oa[0]-ob[0], -1), 1))
		}
		if oa[1] != ob[1] {
			return int(min(max(oa[1]-ob[1], -1), 1))
		}
		return strings.Compare(a, b)
	})
	var end int64
	prev := ""
	for _, name := range names {
		o := entries[name].DataOffsets
		switch {
		case o[0] < end:
			return 0, invalid("tensors", "%s [%d, %d] overlaps %s, which ends at %d", name, o[0], o[1], prev, end)
		case o[0] > end && prev == "":
			return 0, invalid("tensors", "data_offsets are not contiguous: %s begins at %d, want the first tensor at 0", name, o[0])
		case o[0] > end:
			return 0, invalid("tensors", "data_offsets are not contiguous: %d-byte gap between %s (ends at %d) and %s (begins at %d)",
				o[0]-end, prev, end, name, o[0])
		}
		end, prev = o[1], name
	}
	return end, nil
}

type member struct {
	key   string
	value json.RawMessage
}

// parseObject splits a JSON object into its members in order, refusing
// duplicate keys and anything after the object but spaces.
func parseObject(data []byte, section string) ([]member, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, invalid(section, "invalid JSON: want an object starting with '{'")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, invalid(section, "invalid JSON: %v", err)
	}
	var members []member
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalid(section, "invalid JSON: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, invalid(section, "invalid JSON: object key %v is not a string", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, invalid(section, "invalid JSON: value of %s: %v", Quote(key), err)
		}
		if seen[key] {
			return nil, invalid(section, "duplicate key %s", Quote(key))
		}
		seen[key] = true
		members = append(members, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, invalid(section, "invalid JSON: %v", err)
	}
	if rest := bytes.Trim(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, invalid(section, "invalid JSON: %d bytes of trailing data after the object", len(rest))
	}
	return members, nil
}
