package training

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
	"github.com/proflow-sdn/proflow/policy/qnet"
)

func testDynamics(t *testing.T) *DynamicsModel {
	t.Helper()
	enc := testEncoder()
	net, err := qnet.New([]int{enc.Dim() + enc.NumSwitches, 16, enc.Dim()}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDynamicsModel(enc, net)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDynamicsPredict(t *testing.T) {
	d := testDynamics(t)
	enc := d.Encoder()
	rng := rand.New(rand.NewPCG(2, 2))
	s := randomState(enc, rng, 1)
	got := make([]float32, enc.Dim())
	if err := d.Predict(got, s, 3); err != nil {
		t.Fatal(err)
	}
	// By hand: s + net([s, onehot(3)]), clamped with the flow on 3.
	in := append(append([]float32(nil), s...), 0, 0, 0, 1)
	delta := make([]float32, enc.Dim())
	if err := d.Net().Forward(delta, in); err != nil {
		t.Fatal(err)
	}
	want := make([]float32, enc.Dim())
	for i := range want {
		want[i] = s[i] + delta[i]
	}
	if err := ClampState(enc, want, 3); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Predict (-want +got):\n%s", diff)
	}
	if k, err := Placement(enc, got); err != nil || k != 3 {
		t.Errorf("predicted placement %d, %v; want 3", k, err)
	}
	// dst may alias s.
	if err := d.Clone().Predict(s, s, 3); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Predict in place (-want +got):\n%s", diff)
	}
	if err := d.Predict(got, s, 4); err == nil {
		t.Error("action 4 of 4: no error")
	}
	if err := d.Predict(got[:3], s, 0); err == nil {
		t.Error("short dst: no error")
	}
	wrong, _ := qnet.New([]int{enc.Dim(), 4, enc.Dim()}, rng)
	if _, err := NewDynamicsModel(enc, wrong); err == nil {
		t.Error("network without action inputs: no error")
	}
}

func TestDynamicsRoundTrip(t *testing.T) {
	d := testDynamics(t)
	p := Provenance{MadeBy: "test", Corpus: "toy", Seed: "1", Commit: "abc", Created: "2026-01-01T00:00:00Z"}
	path := filepath.Join(t.TempDir(), "dyn.safetensors")
	if err := SaveDynamics(path, d, p); err != nil {
		t.Fatal(err)
	}
	back, gotP, err := LoadDynamics(path)
	if err != nil {
		t.Fatal(err)
	}
	if gotP != p {
		t.Errorf("provenance %+v, want %+v", gotP, p)
	}
	if back.Encoder() != d.Encoder() {
		t.Errorf("encoder %+v, want %+v", back.Encoder(), d.Encoder())
	}
	for l := range d.Net().NumLayers() {
		if diff := cmp.Diff(d.Net().Layer(l), back.Net().Layer(l)); diff != "" {
			t.Errorf("layer %d (-wrote +read):\n%s", l, diff)
		}
	}
	// A Q-network file is not a dynamics model.
	var buf bytes.Buffer
	enc := testEncoder()
	q, _ := qnet.New([]int{enc.Dim(), 8, enc.NumSwitches}, rand.New(rand.NewPCG(1, 1)))
	if err := qnet.Write(&buf, q, qnet.NewMetadata(enc)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadDynamics(&buf); err == nil {
		t.Error("reading a Q-network file as a dynamics model: no error")
	}
}

// A dynamics-model path that is not a regular file is refused without
// blocking (os.Open blocked on a FIFO).
func TestLoadDynamicsRefusesNonRegular(t *testing.T) {
	fileutiltest.RefusesNonRegular(t, "m.dynamics.safetensors", func(path string) error {
		_, _, err := LoadDynamics(path)
		return err
	})
}
