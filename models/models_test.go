package models_test

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/models"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/telemetry"
)

// TestDefaultBytesIsTheFile fails when default.safetensors is retrained and
// the embedded copy is stale: go:embed reads the file at build time, so
// this holds unless the test binary predates the file.
func TestDefaultBytesIsTheFile(t *testing.T) {
	file, err := os.ReadFile("default.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(models.DefaultBytes(), file) {
		t.Errorf("models.DefaultBytes() (%d bytes) differs from default.safetensors (%d bytes)", len(models.DefaultBytes()), len(file))
	}
	b := models.DefaultBytes()
	b[0] ^= 0xff
	if !bytes.Equal(models.DefaultBytes(), file) {
		t.Error("changing DefaultBytes' result changed the embedded model")
	}
}

// TestLoadDefault checks that the embedded model loads as the file does:
// same metadata, same gate, same trained interval.
func TestLoadDefault(t *testing.T) {
	enc := telemetry.DefaultEncoderConfig(proflow.PaperTopology())
	agent, gate, err := models.LoadDefault(enc)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, fileGate, err := policy.LoadModel("default.safetensors", enc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromFile.Metadata(), agent.Metadata()); diff != "" {
		t.Errorf("embedded model's metadata differs from the file's (-file +embedded):\n%s", diff)
	}
	if gate != fileGate {
		t.Errorf("embedded model's gate %+v, the file's %+v", gate, fileGate)
	}
	if got := agent.TrainedInterval(); got != 500*time.Millisecond {
		t.Errorf("TrainedInterval() = %v, want 500ms", got)
	}

	other := enc
	other.RateScale /= 20
	if _, _, err := models.LoadDefault(other); !errors.Is(err, policy.ErrModelMismatch) {
		t.Errorf("LoadDefault with a 10 Mbit/s encoder = %v, want ErrModelMismatch", err)
	}
}

// The embedded dynamics models are the files', and the embedded default
// forecasts as the file loaded by policy.LoadModel does, on the paper's
// fabric.
func TestEmbeddedDynamics(t *testing.T) {
	names := models.DynamicsNames()
	if want := []string{"default.dynamics-2x3.safetensors", "default.dynamics-4x7.safetensors", "default.dynamics-8x3.safetensors", "default.dynamics.safetensors"}; !slices.Equal(names, want) {
		t.Fatalf("embedded dynamics models %v, want %v", names, want)
	}
	for _, n := range names {
		file, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		b, err := models.DynamicsBytes(n)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, file) {
			t.Errorf("embedded %s (%d bytes) differs from the file (%d bytes)", n, len(b), len(file))
		}
	}
	if _, err := models.DynamicsBytes("none.safetensors"); err == nil || !strings.Contains(err.Error(), "default.dynamics.safetensors") {
		t.Errorf("an unknown name: error %v, want the embedded names listed", err)
	}
	enc := telemetry.DefaultEncoderConfig(proflow.PaperTopology())
	embedded, gate, err := models.LoadDefault(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !gate.Distress.Forecast {
		t.Fatalf("the default model's gate %+v counts no forecasts; models/gate-testbed.json does", gate)
	}
	file, _, err := policy.LoadModel("default.safetensors", enc)
	if err != nil {
		t.Fatal(err)
	}
	in := &proflow.Input{State: make(proflow.State, enc.WithLayout(embedded.EncoderConfig().LayoutName()).Dim()), Current: 2}
	for i := range in.State {
		in.State[i] = float32(i%7) / 7
	}
	var a, b proflow.FlowForecast
	if err := embedded.Forecast(&a, in); err != nil {
		t.Fatal(err)
	}
	if err := file.Forecast(&b, in); err != nil {
		t.Fatal(err)
	}
	if !a.OK || a != b {
		t.Errorf("embedded forecast %+v, the file's %+v; want the same forecast", a, b)
	}
}
