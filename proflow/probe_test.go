package main

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
)

func TestProbeCommand(t *testing.T) {
	dir := t.TempDir()
	enc := telemetry.DefaultEncoderConfig(sim.DefaultConfig().Topology())
	m, err := qnet.New([]int{enc.Dim(), 16, enc.NumSwitches}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "model.safetensors")
	meta := qnet.NewMetadata(enc)
	meta.Corpus = "random weights"
	if err := qnet.Save(model, m, meta); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "probe")
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"probe", "-model", model, "-out", out}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{probeCSV, probeCrowdPNG, probeOverflowPNG} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	noTempFiles(t, out) // CSV and plots are written through a renamed temporary file
	csv, err := os.ReadFile(filepath.Join(out, probeCSV))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	// header + 4 switches × (29 flow counts + 61 overflow rates)
	if want := 1 + 4*(29+61); len(lines) != want {
		t.Errorf("%d CSV lines, want %d", len(lines), want)
	}
	if !strings.HasPrefix(lines[0], "sweep,switch,x,margin,best,q_agg1") {
		t.Errorf("CSV header %q", lines[0])
	}
	for _, want := range []string{"flip points", "crowd", "overflow", "k* = agg4", "random weights"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	e, _, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"probe", "-model", filepath.Join(dir, "none"), "-out", out}); err == nil {
		t.Error("missing model: no error")
	}
}
