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

// A universal model is probed on the profile's fabric of any size: six
// switches give six switches' sweeps; a per-fabric model of four switches
// is refused there, naming both sizes.
func TestProbeUniversalOnAnySize(t *testing.T) {
	dir := t.TempDir()
	enc := telemetry.DefaultEncoderConfig(sim.DefaultConfig().Topology()).WithLayout(telemetry.StateLayoutV2)
	m, err := qnet.New([]int{enc.CandidateDim(), 16, 1}, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "universal.safetensors")
	if err := qnet.Save(model, m, qnet.NewUniversalMetadata(enc)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "probe")
	e, _, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"probe", "-fabric", "6x3", "-model", model, "-out", out}); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(out, probeCSV))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if want := 1 + 6*(29+61); len(lines) != want {
		t.Errorf("%d CSV lines, want %d (6 switches × the two sweeps)", len(lines), want)
	}
	if !strings.HasPrefix(lines[0], "sweep,switch,x,margin,best,q_agg1") || !strings.Contains(lines[0], "q_agg6") {
		t.Errorf("CSV header %q, want Q-values of agg1..agg6", lines[0])
	}

	perFabric := filepath.Join(dir, "four.safetensors")
	enc4 := telemetry.DefaultEncoderConfig(sim.DefaultConfig().Topology())
	m4, err := qnet.New([]int{enc4.Dim(), 16, enc4.NumSwitches}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if err := qnet.Save(perFabric, m4, qnet.NewMetadata(enc4)); err != nil {
		t.Fatal(err)
	}
	e, _, _ = newTestEnv()
	err = e.dispatch(context.Background(), []string{"probe", "-fabric", "6x3", "-model", perFabric, "-out", filepath.Join(dir, "p4")})
	if err == nil || !strings.Contains(err.Error(), "the model is for 4 switches") || !strings.Contains(err.Error(), "has 6 and 3") {
		t.Errorf("per-fabric model on 6x3: %v, want a refusal naming 4 and 6 switches", err)
	}
}
