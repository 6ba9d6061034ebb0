package eval

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Forecasts reads every dynamics model proflow train saved beside the
// committed model, its own fabric's first, and AgentPolicy gives each
// episode's agent the one of its fabric: on the testbed's 4x3 fabric the
// agent forecasts, on a 6x3 one, for which none was trained, it does not.
func TestAgentPolicyForecasts(t *testing.T) {
	const model = "../../models/default.safetensors"
	fs, err := policy.LoadForecasts(model)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []string
	for _, f := range fs {
		e := f.Encoder()
		sizes = append(sizes, strconv.Itoa(e.NumSwitches)+"x"+strconv.Itoa(e.NumLeaves))
	}
	if want := []string{"4x3", "2x3", "4x7", "8x3"}; !slices.Equal(sizes, want) {
		t.Fatalf("dynamics models beside %s: fabrics %v, want %v", model, sizes, want)
	}

	cfg := sim.TestbedConfig()
	gate, err := LoadGateConfig("../../models/gate-testbed.json")
	if err != nil {
		t.Fatal(err)
	}
	gate.Distress.Forecast = true
	spec, err := AgentPolicy("agent", model, gate, cfg.Topology())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fabric string
		want   bool
	}{{"4x3", true}, {"6x3", false}} {
		c := cfg
		if tc.fabric != "4x3" {
			if c, err = cfg.WithFabric(6, 3); err != nil {
				t.Fatal(err)
			}
		}
		enc, pol, _, err := spec.New(c.Topology())
		if err != nil {
			t.Fatal(err)
		}
		f, ok := pol.(proflow.Forecaster)
		if !ok {
			t.Fatalf("%s: the agent is no proflow.Forecaster", tc.fabric)
		}
		var got proflow.FlowForecast
		if err := f.Forecast(&got, &proflow.Input{State: make(proflow.State, enc.Dim()), Current: 0}); err != nil {
			t.Fatal(err)
		}
		if got.OK != tc.want {
			t.Errorf("%s fabric: forecast %+v, want OK %v", tc.fabric, got, tc.want)
		}
	}

	// Without a dynamics model beside it, a gate that counts forecasts is
	// refused, naming the file it looked for.
	dir := t.TempDir()
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(dir, "alone.safetensors")
	if err := os.WriteFile(alone, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// Neither another model's dynamics nor a name that only starts alike counts.
	for _, n := range []string{"other.dynamics.safetensors", "alone.dynamicsx.safetensors"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("not read"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []policy.GateConfig{gate, {}} { // a gate given, and the one the model records
		if _, err := AgentPolicy("agent", alone, g, cfg.Topology()); err == nil || !strings.Contains(err.Error(), "alone.dynamics.safetensors") {
			t.Errorf("no dynamics model, gate %+v: error %v, want the missing file named", g, err)
		}
	}
	plain := gate
	plain.Distress.Forecast = false
	if _, err := AgentPolicy("agent", alone, plain, cfg.Topology()); err != nil {
		t.Errorf("no dynamics model, a gate without forecasts: %v", err)
	}
}

// AgentPolicy's Note tells a report when the agent's gate counts
// forecasts but the fabric has no dynamics model, and says nothing
// otherwise.
func TestAgentPolicyForecastNote(t *testing.T) {
	const model = "../../models/default.safetensors"
	cfg := sim.TestbedConfig()
	noteFor := func(gate policy.GateConfig, topo proflow.Topology) string {
		t.Helper()
		spec, err := AgentPolicy("agent", model, gate, topo)
		if err != nil {
			t.Fatal(err)
		}
		return spec.Note
	}
	if note := noteFor(policy.GateConfig{}, cfg.Topology()); note != "" {
		t.Errorf("4x3, the recorded gate: note %q, want none", note)
	}
	six, err := cfg.WithFabric(6, 3)
	if err != nil {
		t.Fatal(err)
	}
	note := noteFor(policy.GateConfig{}, six.Topology())
	if !strings.Contains(note, "6×3 fabric") || !strings.Contains(note, "measured samples alone") {
		t.Errorf("6x3, the recorded gate: note %q, want the fabric and the fallback named", note)
	}
	plain := policy.DefaultGateConfig()
	if note := noteFor(plain, six.Topology()); note != "" {
		t.Errorf("6x3, a gate without forecasts: note %q, want none", note)
	}
}
