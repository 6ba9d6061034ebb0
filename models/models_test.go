package models_test

import (
	"bytes"
	"errors"
	"os"
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
