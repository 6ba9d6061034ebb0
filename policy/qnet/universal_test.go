package qnet

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// headerMetadata returns the __metadata__ of a model file's bytes.
func headerMetadata(t testing.TB, file []byte) map[string]string {
	t.Helper()
	hlen := binary.LittleEndian.Uint64(file)
	var header struct {
		Meta map[string]string `json:"__metadata__"`
	}
	if err := json.Unmarshal(file[8:8+hlen], &header); err != nil {
		t.Fatal(err)
	}
	return header.Meta
}

func TestNewUniversalMetadata(t *testing.T) {
	enc := telemetry.DefaultEncoderConfig(proflow.PaperTopology()).WithLayout(telemetry.StateLayoutV2)
	got := NewUniversalMetadata(enc)
	want := Metadata{NumSwitches: 4, NumLeaves: 3, StateLayout: telemetry.StateLayoutV2, StateDim: enc.CandidateDim(),
		Encoder: enc, QLayout: telemetry.CandidateLayout}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NewUniversalMetadata (-want +got):\n%s", diff)
	}
	if !got.Universal() {
		t.Error("Universal() = false for NewUniversalMetadata")
	}
	if NewMetadata(enc).Universal() {
		t.Error("Universal() = true for NewMetadata")
	}
}

func TestUniversalRoundTrip(t *testing.T) {
	enc := telemetry.DefaultEncoderConfig(proflow.PaperTopology()).WithLayout(telemetry.StateLayoutV2)
	rng := rand.New(rand.NewPCG(4, 4))
	m, err := New([]int{enc.CandidateDim(), 32, 1}, rng)
	if err != nil {
		t.Fatal(err)
	}
	meta := NewUniversalMetadata(enc)
	meta.MadeBy, meta.Seed, meta.Extra = "qnet test", "4", map[string]string{"note": "universal"}
	var buf bytes.Buffer
	if err := Write(&buf, m, meta); err != nil {
		t.Fatal(err)
	}
	md := headerMetadata(t, buf.Bytes())
	if md[KeyFormatVersion] != FormatVersionUniversal || md[KeyQLayout] != telemetry.CandidateLayout ||
		md[KeyStateDim] != "41" || md[KeyNumSwitches] != "4" {
		t.Errorf("header metadata %v, want format_version %q, q_layout %q, state_dim 41 and num_switches 4",
			md, FormatVersionUniversal, telemetry.CandidateLayout)
	}
	got, gotMeta, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(meta, gotMeta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	want, have := make([]float32, 1), make([]float32, 1)
	for i := range 10 {
		x := randomInput(rng, enc.CandidateDim())
		if err := m.Forward(want, x); err != nil {
			t.Fatal(err)
		}
		if err := got.Forward(have, x); err != nil {
			t.Fatal(err)
		}
		if math.Float32bits(want[0]) != math.Float32bits(have[0]) {
			t.Errorf("row %d: Q = %v after the round trip, want %v bit for bit", i, have[0], want[0])
		}
	}

	// A per-fabric network's file is still version 1, without q_layout.
	var v1 bytes.Buffer
	pm, err := New([]int{18, 5, 2}, rng)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(&v1, pm, NewMetadata(telemetry.DefaultEncoderConfig(smallTopology()))); err != nil {
		t.Fatal(err)
	}
	md = headerMetadata(t, v1.Bytes())
	if _, ok := md[KeyQLayout]; ok || md[KeyFormatVersion] != FormatVersion {
		t.Errorf("per-fabric header metadata %v, want format_version %q and no q_layout", md, FormatVersion)
	}
}

func TestWriteRefusesInconsistentUniversalMetadata(t *testing.T) {
	enc := telemetry.DefaultEncoderConfig(smallTopology())
	one, err := New([]int{enc.CandidateDim(), 5, 1}, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	two, err := New([]int{enc.CandidateDim(), 5, 2}, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		m      *Model
		change func(*Metadata)
		want   string
	}{
		{"two outputs", two, func(*Metadata) {}, "q_layout: proflow-candidate-v1, a universal network scoring one candidate row per output, but the network has 2 outputs, want exactly 1"},
		{"unknown q_layout", one, func(md *Metadata) { md.QLayout = "proflow-candidate-v9" }, `q_layout: unknown "proflow-candidate-v9"`},
		{"state_dim", one, func(md *Metadata) { md.StateDim = 18 }, "state_dim: 18, but candidate rows (q_layout proflow-candidate-v1) of layout proflow-state-v1 have 34 values"},
		{"state_layout", one, func(md *Metadata) { md.StateLayout = "custom" }, "state_layout: custom, but a universal network"},
		{"reserved extra", one, func(md *Metadata) { md.Extra = map[string]string{KeyQLayout: "x"} }, `extra key "q_layout" is reserved`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := NewUniversalMetadata(enc)
			tc.change(&meta)
			err := Write(new(bytes.Buffer), tc.m, meta)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Write = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestReadRefusesInconsistentUniversalFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  func(t *testing.T) []byte
		want string
	}{
		{"version 2 without q_layout", func(t *testing.T) []byte {
			f := validUniversalRaw(t)
			delete(f.meta, KeyQLayout)
			return f.bytes(t)
		}, `missing key q_layout, which format_version "2" requires`},
		{"empty q_layout", func(t *testing.T) []byte {
			f := validUniversalRaw(t)
			f.meta[KeyQLayout] = ""
			return f.bytes(t)
		}, `q_layout: empty, want "proflow-candidate-v1"`},
		{"unknown q_layout", func(t *testing.T) []byte {
			f := validUniversalRaw(t)
			f.meta[KeyQLayout] = "proflow-candidate-v9"
			return f.bytes(t)
		}, `q_layout: unknown "proflow-candidate-v9"`},
		{"q_layout in version 1", func(t *testing.T) []byte {
			f := validUniversalRaw(t)
			f.meta[KeyFormatVersion] = FormatVersion
			return f.bytes(t)
		}, `q_layout: present in a format_version "1" file`},
		{"per-fabric network as version 2", func(t *testing.T) []byte {
			f := validRaw(t)
			f.meta[KeyFormatVersion] = FormatVersionUniversal
			return f.bytes(t)
		}, `missing key q_layout`},
		{"two outputs", func(t *testing.T) []byte {
			f := validUniversalRaw(t)
			f.tensors[2].shape = []int64{2, 5}
			f.tensors[2].data = floats(make([]float32, 10)...)
			f.tensors[3].shape = []int64{2}
			f.tensors[3].data = floats(0, 0)
			return f.bytes(t)
		}, "the network has 2 outputs, want exactly 1"},
		{"state_dim not the candidate dimension", func(t *testing.T) []byte {
			f := validUniversalRaw(t)
			f.meta[KeyStateDim] = "18"
			return f.bytes(t)
		}, "state_dim: 18, but candidate rows (q_layout proflow-candidate-v1) of layout proflow-state-v1 have 34 values"},
		{"state_layout not the encoder's", func(t *testing.T) []byte {
			f := validUniversalRaw(t)
			f.meta[KeyStateLayout] = "custom-layout"
			return f.bytes(t)
		}, "state_layout: custom-layout, but a universal network (q_layout proflow-candidate-v1) takes candidate rows of the encoder's layout proflow-state-v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, err := Read(bytes.NewReader(tc.raw(t)))
			if err == nil {
				t.Fatalf("Read succeeded (model sizes %v), want an error containing %q", m.Sizes(), tc.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read error\n  %v\nwant a *FormatError containing\n  %s", err, tc.want)
			}
		})
	}
}
