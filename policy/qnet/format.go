package qnet

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/jsonend"
	"github.com/proflow-sdn/proflow/internal/safetensors"
	"github.com/proflow-sdn/proflow/telemetry"
)

// The model file format: a safetensors file whose metadata identifies it.
const (
	// Format is the value of the "format" metadata key.
	Format = "proflow-qnet"
	// FormatVersion is the "format_version" of a per-fabric network's file
	// (Metadata.QLayout empty): the version of every file written before
	// universal networks, read and written exactly as then.
	FormatVersion = "1"
	// FormatVersionUniversal is the "format_version" of a universal
	// network's file (Metadata.QLayout telemetry.CandidateLayout). Readers
	// that know only FormatVersion refuse such files by this version instead
	// of misreading their single output as a one-switch fabric.
	FormatVersionUniversal = "2"
	// MaxHeaderBytes is the largest JSON header Read accepts (100 MiB).
	MaxHeaderBytes = 100 << 20
	// MaxDataBytes is the largest tensor data section Read accepts (1 GiB).
	MaxDataBytes = 1 << 30
	// Activation is the hidden-layer activation recorded in "architecture";
	// it is the only one supported.
	Activation = "relu"
)

// Metadata keys of a model file.
const (
	KeyFormat        = "format"
	KeyFormatVersion = "format_version"
	KeyNumSwitches   = "num_switches"
	KeyNumLeaves     = "num_leaves"
	KeyStateLayout   = "state_layout"
	KeyStateDim      = "state_dim"
	KeyEncoder       = "encoder"
	KeyArchitecture  = "architecture"
	KeyMadeBy        = "made_by"
	KeyCorpus        = "corpus"
	KeySeed          = "seed"
	KeyCommit        = "commit"
	KeyCreated       = "created"
	// KeyQLayout names the input layout of a universal network
	// (Metadata.QLayout); files of FormatVersionUniversal carry it, files of
	// FormatVersion do not.
	KeyQLayout = "q_layout"
)

// requiredKeys must be present in every model file.
var requiredKeys = []string{KeyFormat, KeyFormatVersion, KeyNumSwitches, KeyNumLeaves, KeyStateLayout,
	KeyStateDim, KeyEncoder, KeyArchitecture}

// Metadata describes what a model was trained for and where it came from;
// the provenance fields are free-form.
//
// A per-fabric network (QLayout empty) maps a state to one Q-value per
// switch: the deployment that loads it must encode states exactly as the
// first five fields say. A universal network (QLayout
// telemetry.CandidateLayout, Universal) maps one candidate row
// (telemetry.EncoderConfig.EncodeCandidates) to one Q-value and serves a
// fabric of any size and bucket rate: NumSwitches, NumLeaves and Encoder
// then describe the reference fabric whose scaling the training used, and a
// deployment must agree with Encoder only with size and rate factored out
// (telemetry.EncoderConfig.ScalingMismatch).
type Metadata struct {
	// NumSwitches is |S|: the number of outputs of a per-fabric network,
	// the reference fabric's switch count for a universal one.
	NumSwitches int
	// NumLeaves is |L| (the reference fabric's, for a universal network).
	NumLeaves int
	// StateLayout names the state vector layout (telemetry.StateLayout).
	StateLayout string
	// StateDim is the number of inputs: the state dimension of a
	// per-fabric network, Encoder.CandidateDim() for a universal one.
	StateDim int
	// Encoder holds the scaling constants the training states were encoded with.
	Encoder telemetry.EncoderConfig
	// QLayout names the input layout of a universal network
	// (telemetry.CandidateLayout), or is empty for a per-fabric network,
	// whose input is the whole state.
	QLayout string

	// MadeBy names the program that made the model ("proflow train …").
	MadeBy string
	// Corpus identifies the training data.
	Corpus string
	// Seed is the training seed.
	Seed string
	// Commit is the source revision of the trainer.
	Commit string
	// Created is when the model was made (RFC 3339 by convention).
	Created string

	// Extra holds any other metadata keys, preserved on read and written
	// back; it must not use the keys above.
	Extra map[string]string
}

// NewMetadata returns the metadata of a model for states encoded with enc
// in enc's layout (enc.LayoutName()); fill in the provenance.
func NewMetadata(enc telemetry.EncoderConfig) Metadata {
	return Metadata{
		NumSwitches: enc.NumSwitches,
		NumLeaves:   enc.NumLeaves,
		StateLayout: enc.LayoutName(),
		StateDim:    enc.Dim(),
		Encoder:     enc,
	}
}

// NewUniversalMetadata returns the metadata of a universal network trained
// on candidate rows of states encoded with enc (QLayout
// telemetry.CandidateLayout, StateDim enc.CandidateDim()): enc's fabric is
// the reference whose scaling the training used. Fill in the provenance.
func NewUniversalMetadata(enc telemetry.EncoderConfig) Metadata {
	meta := NewMetadata(enc)
	meta.QLayout = telemetry.CandidateLayout
	meta.StateDim = enc.CandidateDim()
	return meta
}

// Universal reports whether m describes a universal network, one that
// scores candidate rows (QLayout telemetry.CandidateLayout) and so serves
// any fabric size.
func (m Metadata) Universal() bool { return m.QLayout == telemetry.CandidateLayout }

// outputs returns the number of outputs the network must have: 1 for a
// universal network, NumSwitches for a per-fabric one.
func (m Metadata) outputs() int {
	if m.QLayout != "" {
		return 1
	}
	return m.NumSwitches
}

// version returns the format_version of a file holding a network m
// describes.
func (m Metadata) version() string {
	if m.QLayout != "" {
		return FormatVersionUniversal
	}
	return FormatVersion
}

// architecture is the JSON value of the "architecture" key.
type architecture struct {
	Hidden     []int  `json:"hidden"`
	Activation string `json:"activation"`
}

// container is what a model file asks of the safetensors container.
var container = safetensors.Options{MaxHeaderBytes: MaxHeaderBytes, MaxDataBytes: MaxDataBytes, DTypes: []string{safetensors.F32}}

// Write writes m and meta to w as a model file (see the package
// documentation). It refuses metadata that does not describe m.
func Write(w io.Writer, m *Model, meta Metadata) error {
	if m == nil {
		return errors.New("qnet: write model: nil model")
	}
	if err := checkMetadata(meta, m.Hidden()); err != nil {
		return fmt.Errorf("qnet: write model: %w", err)
	}
	if err := checkAgainstModel(meta, m.InputDim(), m.OutputDim()); err != nil {
		return fmt.Errorf("qnet: write model: %w", err)
	}
	md, err := encodeMetadata(meta, m)
	if err != nil {
		return fmt.Errorf("qnet: write model: %w", err)
	}

	tensors := make([]safetensors.Tensor, 0, 2*len(m.w))
	for l := range m.w {
		in, out := int64(m.sizes[l]), int64(m.sizes[l+1])
		if i := nonFinite(m.w[l]); i >= 0 {
			return fmt.Errorf("qnet: write model: %w", &NonFiniteError{Tensor: weightName(l), Index: i, Value: m.w[l][i], Cols: int(in)})
		}
		if i := nonFinite(m.b[l]); i >= 0 {
			return fmt.Errorf("qnet: write model: %w", &NonFiniteError{Tensor: biasName(l), Index: i, Value: m.b[l][i]})
		}
		tensors = append(tensors,
			safetensors.Float32s(weightName(l), []int64{out, in}, m.w[l]),
			safetensors.Float32s(biasName(l), []int64{out}, m.b[l]))
	}
	if err := safetensors.Write(w, md, tensors); err != nil {
		return fmt.Errorf("qnet: write model: %w", err)
	}
	return nil
}

// appendFloats appends v to b as little-endian F32 data.
func appendFloats(b []byte, v []float32) []byte { return safetensors.AppendFloat32s(b, v) }

func encodeMetadata(meta Metadata, m *Model) (map[string]string, error) {
	enc, err := json.Marshal(meta.Encoder)
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	arch, err := json.Marshal(architecture{Hidden: m.Hidden(), Activation: Activation})
	if err != nil {
		return nil, fmt.Errorf("architecture: %w", err)
	}
	md := map[string]string{
		KeyFormat:        Format,
		KeyFormatVersion: meta.version(),
		KeyNumSwitches:   strconv.Itoa(meta.NumSwitches),
		KeyNumLeaves:     strconv.Itoa(meta.NumLeaves),
		KeyStateLayout:   meta.StateLayout,
		KeyStateDim:      strconv.Itoa(meta.StateDim),
		KeyEncoder:       string(enc),
		KeyArchitecture:  string(arch),
	}
	if meta.QLayout != "" {
		md[KeyQLayout] = meta.QLayout
	}
	for _, p := range [...]struct{ key, v string }{
		{KeyMadeBy, meta.MadeBy}, {KeyCorpus, meta.Corpus}, {KeySeed, meta.Seed},
		{KeyCommit, meta.Commit}, {KeyCreated, meta.Created},
	} {
		if p.v != "" {
			md[p.key] = p.v
		}
	}
	for k, v := range meta.Extra {
		if isKnownKey(k) {
			return nil, fmt.Errorf("metadata extra key %q is reserved", k)
		}
		md[k] = v
	}
	return md, nil
}

func isKnownKey(k string) bool {
	switch k {
	case KeyFormat, KeyFormatVersion, KeyNumSwitches, KeyNumLeaves, KeyStateLayout, KeyStateDim,
		KeyEncoder, KeyArchitecture, KeyMadeBy, KeyCorpus, KeySeed, KeyCommit, KeyCreated, KeyQLayout:
		return true
	}
	return false
}

// checkMetadata checks the fields of meta against each other and the
// architecture's hidden widths.
func checkMetadata(meta Metadata, hidden []int) error {
	if meta.NumSwitches < 1 {
		return formatErr("metadata."+KeyNumSwitches, "%d, want a positive integer", meta.NumSwitches)
	}
	if meta.NumLeaves < 0 {
		return formatErr("metadata."+KeyNumLeaves, "%d, want a non-negative integer", meta.NumLeaves)
	}
	if meta.StateDim < 1 {
		return formatErr("metadata."+KeyStateDim, "%d, want a positive integer", meta.StateDim)
	}
	if meta.StateLayout == "" {
		return formatErr("metadata."+KeyStateLayout, "empty, want the state layout name (%s)", telemetry.StateLayout)
	}
	// The sizes the architecture declares, checked before any tensor is
	// read (the tensors must then have exactly these shapes) and before
	// the encoder, whose own bounds a too-large network may exceed too.
	if err := checkLimits(len(hidden)+2, func(i int) int {
		switch i {
		case 0:
			return meta.StateDim
		case len(hidden) + 1:
			return meta.outputs()
		}
		return hidden[i-1]
	}); err != nil {
		e := formatErr("metadata."+KeyArchitecture, "state_dim %d, hidden %v, outputs %d: %v", meta.StateDim, hidden, meta.outputs(), err)
		e.Err = ErrTooLarge
		return e
	}
	if err := meta.Encoder.Validate(); err != nil {
		return formatErr("metadata."+KeyEncoder, "%v", err)
	}
	if meta.Encoder.NumSwitches != meta.NumSwitches {
		return formatErr("metadata."+KeyEncoder, "num_switches %d, but metadata num_switches is %d", meta.Encoder.NumSwitches, meta.NumSwitches)
	}
	if meta.Encoder.NumLeaves != meta.NumLeaves {
		return formatErr("metadata."+KeyEncoder, "num_leaves %d, but metadata num_leaves is %d", meta.Encoder.NumLeaves, meta.NumLeaves)
	}
	if telemetry.KnownLayout(meta.StateLayout) && meta.Encoder.LayoutName() != meta.StateLayout {
		return formatErr("metadata."+KeyEncoder, "layout %s, but metadata state_layout is %s", meta.Encoder.LayoutName(), meta.StateLayout)
	}
	switch meta.QLayout {
	case "":
	case telemetry.CandidateLayout:
		// The candidate rows are built from states in the encoder's layout.
		if meta.StateLayout != meta.Encoder.LayoutName() {
			return formatErr("metadata."+KeyStateLayout, "%s, but a universal network (q_layout %s) takes candidate rows of the encoder's layout %s",
				meta.StateLayout, meta.QLayout, meta.Encoder.LayoutName())
		}
		if meta.StateDim != meta.Encoder.CandidateDim() {
			return formatErr("metadata."+KeyStateDim, "%d, but candidate rows (q_layout %s) of layout %s have %d values",
				meta.StateDim, meta.QLayout, meta.StateLayout, meta.Encoder.CandidateDim())
		}
	default:
		return formatErr("metadata."+KeyQLayout, "unknown %q, want %q (a universal network) or none (a per-fabric network, format_version %q)",
			meta.QLayout, telemetry.CandidateLayout, FormatVersion)
	}
	if !meta.Universal() && meta.StateLayout == meta.Encoder.LayoutName() && meta.Encoder.Dim() != meta.StateDim {
		return formatErr("metadata."+KeyStateDim, "%d, but layout %s with %d switches and %d leaves has dimension %d",
			meta.StateDim, meta.StateLayout, meta.NumSwitches, meta.NumLeaves, meta.Encoder.Dim())
	}
	for i, h := range hidden {
		if h < 1 {
			return formatErr("metadata."+KeyArchitecture, "hidden[%d] is %d, want >= 1", i, h)
		}
	}
	return nil
}

// checkAgainstModel checks the metadata dimensions against the network's.
func checkAgainstModel(meta Metadata, in, out int) error {
	if meta.StateDim != in {
		return formatErr("metadata."+KeyStateDim, "%d, but %s takes %d inputs", meta.StateDim, weightName(0), in)
	}
	if meta.Universal() && out != 1 {
		return formatErr("metadata."+KeyQLayout, "%s, a universal network scoring one candidate row per output, but the network has %d outputs, want exactly 1",
			meta.QLayout, out)
	}
	if !meta.Universal() && meta.NumSwitches != out {
		return formatErr("metadata."+KeyNumSwitches, "%d, but the network has %d outputs", meta.NumSwitches, out)
	}
	return nil
}

// Read reads a model file written by Write (or by any safetensors writer
// that follows the package documentation). It refuses, with a *FormatError
// or *NonFiniteError that says what is wrong, any file that is truncated,
// malformed, inconsistent, or not a proflow Q-network of a known version.
func Read(r io.Reader) (*Model, Metadata, error) {
	h, err := safetensors.ReadHeader(r, container)
	if err != nil {
		return nil, Metadata{}, containerErr(err)
	}
	if h.Metadata == nil {
		return nil, Metadata{}, formatErr("metadata", "no %s in the header, want the proflow-qnet metadata", safetensors.MetadataKey)
	}
	meta, arch, err := decodeMetadata(h.Metadata)
	if err != nil {
		return nil, Metadata{}, err
	}
	sizes, err := checkTensors(h.Entries, meta, arch)
	if err != nil {
		return nil, Metadata{}, err
	}
	tensors, err := h.ReadData(r)
	if err != nil {
		return nil, Metadata{}, containerErr(err)
	}

	layers := make([]Layer, len(sizes)-1)
	for l := range layers {
		in, out := sizes[l], sizes[l+1]
		layer := Layer{In: in, Out: out}
		// The container checked the dtypes (F32 only) and the sizes.
		layer.Weight, _ = tensors[weightName(l)].AsFloat32s()
		layer.Bias, _ = tensors[biasName(l)].AsFloat32s()
		if i := nonFinite(layer.Weight); i >= 0 {
			return nil, Metadata{}, &NonFiniteError{Tensor: weightName(l), Index: i, Value: layer.Weight[i], Cols: in}
		}
		if i := nonFinite(layer.Bias); i >= 0 {
			return nil, Metadata{}, &NonFiniteError{Tensor: biasName(l), Index: i, Value: layer.Bias[i]}
		}
		layers[l] = layer
	}
	return build(sizes, layers), meta, nil
}

// containerErr turns a container error into a *FormatError (same section
// and problem, ErrTruncated for truncation); reader errors stay as they are.
func containerErr(err error) error {
	var se *safetensors.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("qnet: read model: %w", err)
	}
	e := formatErr(se.Section, "%s", se.Problem)
	switch {
	case errors.Is(se, safetensors.ErrTruncated):
		e.Err = ErrTruncated
	case errors.Is(se, safetensors.ErrTooLarge):
		e.Err = ErrTooLarge
	}
	return e
}

// checkTensors checks that the tensors are exactly the layers of the
// architecture, that their shapes chain and agree with the metadata, and
// returns the layer sizes.
func checkTensors(tensors map[string]safetensors.Entry, meta Metadata, arch architecture) ([]int, error) {
	nl := len(arch.Hidden) + 1
	want := make(map[string]bool, 2*nl)
	var missing []string
	for l := range nl {
		for _, name := range []string{weightName(l), biasName(l)} {
			want[name] = true
			if _, ok := tensors[name]; !ok {
				missing = append(missing, name)
			}
		}
	}
	if len(missing) > 0 {
		return nil, formatErr("tensors", "missing %s (architecture has %d layers)", strings.Join(missing, ", "), nl)
	}
	var extra []string
	for name := range tensors {
		if !want[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return nil, formatErr("tensors", "unexpected %s (architecture has %d layers: layers.0 to layers.%d)", strings.Join(extra, ", "), nl, nl-1)
	}

	sizes := make([]int, 0, nl+1)
	for l := range nl {
		wname, bname := weightName(l), biasName(l)
		ws, bs := tensors[wname].Shape, tensors[bname].Shape
		if len(ws) != 2 || ws[0] < 1 || ws[1] < 1 {
			return nil, formatErr("tensor "+wname, "shape %v, want [out, in] with positive sizes", ws)
		}
		if len(bs) != 1 || bs[0] != ws[0] {
			return nil, formatErr("tensor "+bname, "shape %v, want [%d] to match %s %v", bs, ws[0], wname, ws)
		}
		out, in := int(ws[0]), int(ws[1])
		if l == 0 {
			sizes = append(sizes, in)
		} else if in != sizes[l] {
			return nil, formatErr("tensor "+wname, "shape %v takes %d inputs, but %s gives %d outputs: layer shapes do not chain",
				ws, in, weightName(l-1), sizes[l])
		}
		if l < nl-1 && out != arch.Hidden[l] {
			return nil, formatErr("tensor "+wname, "shape %v has %d outputs, but architecture hidden[%d] is %d", ws, out, l, arch.Hidden[l])
		}
		sizes = append(sizes, out)
	}
	if err := checkAgainstModel(meta, sizes[0], sizes[len(sizes)-1]); err != nil {
		return nil, err
	}
	return sizes, nil
}

// decodeMetadata parses and checks the metadata strings.
func decodeMetadata(md map[string]string) (Metadata, architecture, error) {
	var meta Metadata
	var arch architecture
	f, ok := md[KeyFormat]
	if !ok {
		return meta, arch, formatErr("metadata", "no %q key, want %q: not a proflow Q-network file", KeyFormat, Format)
	}
	if f != Format {
		return meta, arch, formatErr("metadata."+KeyFormat, "unknown format %q, want %q", f, Format)
	}
	v, ok := md[KeyFormatVersion]
	if !ok {
		return meta, arch, formatErr("metadata", "missing key %s", KeyFormatVersion)
	}
	switch v {
	case FormatVersion:
		if _, ok := md[KeyQLayout]; ok {
			return meta, arch, formatErr("metadata."+KeyQLayout, "present in a format_version %q file, want it only in format_version %q (universal networks)",
				FormatVersion, FormatVersionUniversal)
		}
	case FormatVersionUniversal:
		q, ok := md[KeyQLayout]
		if !ok {
			return meta, arch, formatErr("metadata", "missing key %s, which format_version %q requires", KeyQLayout, FormatVersionUniversal)
		}
		if q == "" {
			return meta, arch, formatErr("metadata."+KeyQLayout, "empty, want %q in format_version %q", telemetry.CandidateLayout, FormatVersionUniversal)
		}
		meta.QLayout = q
	default:
		return meta, arch, formatErr("metadata."+KeyFormatVersion, "unknown version %q, want %q (per-fabric network) or %q (universal network)",
			v, FormatVersion, FormatVersionUniversal)
	}
	var missing []string
	for _, k := range requiredKeys {
		if _, ok := md[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return meta, arch, formatErr("metadata", "missing key(s) %s", strings.Join(missing, ", "))
	}

	var err error
	if meta.NumSwitches, err = atoi(md, KeyNumSwitches); err != nil {
		return meta, arch, err
	}
	if meta.NumLeaves, err = atoi(md, KeyNumLeaves); err != nil {
		return meta, arch, err
	}
	if meta.StateDim, err = atoi(md, KeyStateDim); err != nil {
		return meta, arch, err
	}
	meta.StateLayout = md[KeyStateLayout]
	if err := strictJSON(md[KeyEncoder], &meta.Encoder); err != nil {
		return meta, arch, formatErr("metadata."+KeyEncoder, "invalid encoder config %q: %v", md[KeyEncoder], err)
	}
	if err := strictJSON(md[KeyArchitecture], &arch); err != nil {
		return meta, arch, formatErr("metadata."+KeyArchitecture, "invalid %q: %v, want {\"hidden\":[…],\"activation\":\"relu\"}", md[KeyArchitecture], err)
	}
	if arch.Activation != Activation {
		return meta, arch, formatErr("metadata."+KeyArchitecture, "activation %q not supported, want %q", arch.Activation, Activation)
	}
	if err := checkMetadata(meta, arch.Hidden); err != nil {
		return meta, arch, err
	}
	meta.MadeBy, meta.Corpus, meta.Seed = md[KeyMadeBy], md[KeyCorpus], md[KeySeed]
	meta.Commit, meta.Created = md[KeyCommit], md[KeyCreated]
	for k, v := range md {
		if !isKnownKey(k) {
			if meta.Extra == nil {
				meta.Extra = make(map[string]string)
			}
			meta.Extra[k] = v
		}
	}
	return meta, arch, nil
}

func atoi(md map[string]string, key string) (int, error) {
	n, err := strconv.Atoi(md[key])
	if err != nil || n < 0 {
		return 0, formatErr("metadata."+key, "%q, want a non-negative decimal integer", md[key])
	}
	return n, nil
}

func strictJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if jsonend.End(dec) != nil {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Load reads the model file at path.
func Load(path string) (*Model, Metadata, error) {
	f, err := fileutil.Open(path)
	if err != nil {
		return nil, Metadata{}, fmt.Errorf("qnet: load model: %w", err)
	}
	defer f.Close()
	m, meta, err := Read(bufio.NewReader(f))
	if err != nil {
		var fe *FormatError
		var ne *NonFiniteError
		switch {
		case errors.As(err, &fe):
			fe.Path = path
		case errors.As(err, &ne):
			ne.Path = path
		default:
			err = fmt.Errorf("qnet: load model %s: %w", path, err)
		}
		return nil, Metadata{}, err
	}
	return m, meta, nil
}

// Save writes m and meta to path atomically: it writes a temporary file in
// the same directory, syncs it and renames it over path, so a reader never
// sees a partial model.
func Save(path string, m *Model, meta Metadata) error {
	if err := fileutil.WriteAtomic(path, func(w io.Writer) error { return Write(w, m, meta) }); err != nil {
		return fmt.Errorf("qnet: save model: %w", err)
	}
	return nil
}
