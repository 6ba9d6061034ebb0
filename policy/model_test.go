package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
	"github.com/proflow-sdn/proflow/policy/qnet"
)

// TestLoadModelRecordedGate checks that LoadModel returns the gate the
// committed default model records, which is models/gate-testbed.json (the
// file make model records), and not DefaultGateConfig.
func TestLoadModelRecordedGate(t *testing.T) {
	agent, gate, err := LoadModel("../models/default.safetensors", paperEncoder())
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadGateConfig("../models/gate-testbed.json")
	if err != nil {
		t.Fatal(err)
	}
	if gate != want {
		t.Errorf("LoadModel gate = %+v, want the recorded %+v", gate, want)
	}
	if gate == DefaultGateConfig() {
		t.Errorf("LoadModel gate = DefaultGateConfig, want the model's recorded gate")
	}
	if g, err := agent.Gate(); err != nil || g != gate {
		t.Errorf("Agent.Gate() = %+v, %v; want %+v", g, err, gate)
	}
	if got := agent.TrainedInterval(); got != 500*time.Millisecond {
		t.Errorf("TrainedInterval() = %v, want 500ms (the model records none)", got)
	}
}

// TestReadModel checks ReadModel against LoadModel on the same bytes, and
// that a truncated file is refused naming the model.
func TestReadModel(t *testing.T) {
	enc := paperEncoder()
	m, meta := testModel(t, enc)
	meta.Extra = map[string]string{ModelGateKey: `{"votes": 5, "cooldown": "10s"}`, ModelIntervalKey: "250ms"}
	var buf bytes.Buffer
	if err := qnet.Write(&buf, m, meta); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	a, g, err := ReadModel(bytes.NewReader(buf.Bytes()), "test model", enc)
	if err != nil {
		t.Fatal(err)
	}
	fa, fg, err := LoadModel(path, enc)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultGateConfig()
	want.Votes, want.Cooldown = 5, 10*time.Second
	if g != want || fg != want {
		t.Errorf("gates %+v (read), %+v (load), want %+v", g, fg, want)
	}
	if a.TrainedInterval() != 250*time.Millisecond || fa.TrainedInterval() != 250*time.Millisecond {
		t.Errorf("TrainedInterval %v (read), %v (load), want 250ms", a.TrainedInterval(), fa.TrainedInterval())
	}
	if c := a.Clone(); c.TrainedInterval() != a.TrainedInterval() {
		t.Errorf("Clone's TrainedInterval %v, want %v", c.TrainedInterval(), a.TrainedInterval())
	}

	if _, _, err := ReadModel(bytes.NewReader(buf.Bytes()[:buf.Len()/2]), "test model", enc); !errors.Is(err, qnet.ErrInvalidModel) || !strings.Contains(err.Error(), "test model") {
		t.Errorf("ReadModel of a truncated model = %v, want ErrInvalidModel naming the model", err)
	}
	other := enc
	other.RateScale /= 20
	if _, _, err := ReadModel(bytes.NewReader(buf.Bytes()), "test model", other); !errors.Is(err, ErrModelMismatch) {
		t.Errorf("ReadModel with a 10 Mbit/s encoder = %v, want ErrModelMismatch", err)
	}
	if _, _, err := LoadModel(filepath.Join(t.TempDir(), "none"), enc); err == nil {
		t.Error("LoadModel of a missing file succeeded")
	}
}

// TestModelGateAndInterval covers what models record and what they leave
// out.
func TestModelGateAndInterval(t *testing.T) {
	enc := paperEncoder()
	m, _ := testModel(t, enc)
	for _, tc := range []struct {
		name     string
		extra    map[string]string
		gate     GateConfig
		interval time.Duration
		gateErr  string // "" for none
		agentErr string
	}{
		{name: "records nothing", gate: DefaultGateConfig(), interval: 500 * time.Millisecond},
		{name: "records both", extra: map[string]string{ModelGateKey: `{"votes": 16}`, ModelIntervalKey: "100ms"},
			gate: GateConfig{Margin: 0.2, Votes: 16, Cooldown: 15 * time.Second, Tolerance: 0.2}, interval: 100 * time.Millisecond},
		{name: "bad gate", extra: map[string]string{ModelGateKey: `{"votes": 0}`}, interval: 500 * time.Millisecond,
			gateErr: "policy: model metadata gate_config: policy: invalid gate config: votes 0, want >= 1"},
		{name: "bad interval", extra: map[string]string{ModelIntervalKey: "half a second"},
			agentErr: `policy: new agent: policy: model metadata control_interval "half a second", want a positive Go duration such as 500ms`},
		{name: "negative interval", extra: map[string]string{ModelIntervalKey: "-500ms"},
			agentErr: `control_interval "-500ms", want a positive Go duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := qnet.NewMetadata(enc)
			meta.Extra = tc.extra
			a, err := NewAgent(m, meta, enc)
			if tc.agentErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.agentErr) {
					t.Errorf("NewAgent = %v, want an error containing %q", err, tc.agentErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.TrainedInterval(); got != tc.interval {
				t.Errorf("TrainedInterval() = %v, want %v", got, tc.interval)
			}
			g, err := a.Gate()
			if tc.gateErr != "" {
				if err == nil || err.Error() != tc.gateErr {
					t.Errorf("Gate() = %v, want the error %q", err, tc.gateErr)
				}
				return
			}
			if err != nil || g != tc.gate {
				t.Errorf("Gate() = %+v, %v; want %+v", g, err, tc.gate)
			}
		})
	}
}

// TestGateConfigJSON checks the GateConfig JSON form: the cooldown in
// nanoseconds (what encoding/json writes, and the committed gate files
// hold) or as a duration string; fields left out keep defaults; unknown
// fields and trailing data refused.
func TestGateConfigJSON(t *testing.T) {
	def := DefaultGateConfig()
	with := func(f func(*GateConfig)) GateConfig { g := def; f(&g); return g }
	for _, tc := range []struct {
		name, in string
		want     GateConfig
		err      string
	}{
		{"nanoseconds", `{"margin": 0.2, "votes": 16, "cooldown": 15000000000, "tolerance": 0.2}`, with(func(g *GateConfig) { g.Votes = 16 }), ""},
		{"duration string", `{"cooldown": "7.5s"}`, with(func(g *GateConfig) { g.Cooldown = 7500 * time.Millisecond }), ""},
		{"zero cooldown", `{"cooldown": "0s"}`, with(func(g *GateConfig) { g.Cooldown = 0 }), ""},
		{"null cooldown keeps the default", `{"cooldown": null}`, def, ""},
		{"empty object", `{}`, def, ""},
		{"bad duration", `{"cooldown": "15 seconds"}`, GateConfig{}, `cooldown "15 seconds", want a Go duration such as "15s" or a number of nanoseconds`},
		{"fractional nanoseconds", `{"cooldown": 1.5}`, GateConfig{}, "cooldown 1.5, want a whole number of nanoseconds"},
		{"cooldown of another type", `{"cooldown": true}`, GateConfig{}, "cooldown true, want a Go duration"},
		{"unknown field", `{"vote": 3}`, GateConfig{}, `unknown field "vote"`},
		{"trailing data", `{} {}`, GateConfig{}, "trailing data"},
		{"a closing bracket after the object", `{"votes": 4}]`, GateConfig{}, "trailing data"},
		{"a closing brace after the object", `{"votes": 4}}`, GateConfig{}, "trailing data"},
		{"invalid", `{"cooldown": "-1s"}`, GateConfig{}, "cooldown -1s, want >= 0"},
		{"zero tolerance", `{"tolerance": 0}`, with(func(g *GateConfig) { g.Tolerance = 0 }), ""},
		{"window as a duration string", `{"window": "10s"}`, with(func(g *GateConfig) { g.Window = 10 * time.Second }), ""},
		{"window in nanoseconds", `{"window": 10000000000}`, with(func(g *GateConfig) { g.Window = 10 * time.Second }), ""},
		{"bad window", `{"window": "ten seconds"}`, GateConfig{}, `window "ten seconds", want a Go duration`},
		{"drain horizon as a duration string", `{"drain": {"depth": 53.3, "horizon": "2s"}}`, with(func(g *GateConfig) { g.Drain = DrainConfig{Depth: 53.3, Horizon: 2 * time.Second} }), ""},
		{"bad drain horizon", `{"drain": {"depth": 53.3, "horizon": true}}`, GateConfig{}, "horizon true, want a Go duration"},
		{"unknown drain field", `{"drain": {"depth": 53.3, "horizon": "2s", "deep": 1}}`, GateConfig{}, `unknown field "deep"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := ReadGateConfig(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("ReadGateConfig(%s) = %+v, %v; want an error containing %q", tc.in, g, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("ReadGateConfig(%s) (-want +got):\n%s", tc.in, diff)
			}
		})
	}

	// Every committed gate file reads (they hold nanoseconds).
	files, err := filepath.Glob("../models/gate-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no models/gate-*.json (%v)", err)
	}
	for _, f := range files {
		if _, err := LoadGateConfig(f); err != nil {
			t.Errorf("LoadGateConfig(%s): %v", f, err)
		}
	}
	if _, err := LoadGateConfig(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("LoadGateConfig of a missing file = %v, want an error naming it", err)
	}
}

// A gate written as JSON (as proflow gate and proflow train record it in a
// model) reads back as the same gate, its zero values included: a zero
// tolerance must not come back as the default's.
func TestGateConfigRoundTrip(t *testing.T) {
	for _, g := range []GateConfig{
		{Margin: 0.2, Votes: 20, Cooldown: 15 * time.Second},
		{Margin: 0.5, Votes: 3, Cooldown: 0, Tolerance: 3, Pareto: true, Window: 30 * time.Second},
		{Margin: 0.2, Votes: 20, Cooldown: 10 * time.Second, Reserve: true,
			Distress: DistressConfig{Fraction: 0.9, Consecutive: 2, Smoothing: 0.1, Forecast: true},
			Drain:    DrainConfig{Depth: 53.3, Horizon: 2 * time.Second, Waive: true}},
	} {
		b, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadGateConfig(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("ReadGateConfig(%s): %v", b, err)
		}
		if diff := cmp.Diff(g, back); diff != "" {
			t.Errorf("%s read back (-written +read):\n%s", b, diff)
		}
	}
}

// TestModelMismatchErrorNamesRemedy checks that the error says how to get
// a model that fits.
func TestModelMismatchErrorNamesRemedy(t *testing.T) {
	enc := paperEncoder()
	m, meta := testModel(t, enc)
	other := enc
	other.RateScale = 1.25e6
	_, err := NewAgent(m, meta, other)
	var me *ModelMismatchError
	if !errors.As(err, &me) {
		t.Fatalf("NewAgent with a 10 Mbit/s encoder = %v, want a *ModelMismatchError", err)
	}
	if me.Field != "encoder.rate_scale" || me.Model != "2.5e+07" || me.Deployment != "1.25e+06" {
		t.Errorf("error fields %+v, want encoder.rate_scale, 2.5e+07, 1.25e+06", *me)
	}
	for _, want := range []string{"encoder.rate_scale is 2.5e+07 in the model, 1.25e+06 in the deployment", "train one for this fabric", "make model", "models/README.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// A gate config path that is not a regular file is refused without
// blocking (os.Open blocked on a FIFO).
func TestLoadGateConfigRefusesNonRegular(t *testing.T) {
	fileutiltest.RefusesNonRegular(t, "gate.json", func(path string) error {
		_, err := LoadGateConfig(path)
		return err
	})
}

// ModelInterval quotes at most safetensors.MaxEcho bytes of the metadata
// value it refuses.
func TestModelIntervalQuotesBoundedValue(t *testing.T) {
	meta := qnet.NewMetadata(paperEncoder())
	meta.Extra = map[string]string{ModelIntervalKey: strings.Repeat("x", 8<<20)}
	_, err := ModelInterval(meta)
	if err == nil || !strings.Contains(err.Error(), `control_interval "xxxx`) {
		t.Fatalf("ModelInterval = %.300v…, want the interval refused", err)
	}
	if msg := err.Error(); len(msg) > 512 || !strings.Contains(msg, "more bytes)") {
		t.Errorf("error of %d bytes, want at most 512 saying what was cut: %.300s…", len(msg), msg)
	}
}
