package serve

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/syncbuf"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/telemetry"
)

// writeConfig writes src as c.yaml in dir and returns its path.
func writeConfig(t *testing.T, dir, src string) string {
	t.Helper()
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startFromFile builds the service of the config file at path, closed at
// the end of the test, and returns it with its log.
func startFromFile(ctx context.Context, t *testing.T, path string) (*Service, *syncbuf.Buffer) {
	t.Helper()
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	log := new(syncbuf.Buffer)
	s, err := New(ctx, cfg, Options{LogOutput: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.closeAll)
	return s, log
}

const reloadBase = "southbound:\n  sim: {scenario: M2, speed: 50}\nmetrics: {listen: off}\npolicy: {kind: crowd}\nlog_format: json\n"

// Issue 24 (B8, B9): a refused reload (broken YAML, a deleted file, a
// directory, a bad value, a flows file that does not read) is counted in
// reloads_total{result="error"}, logged through the service's logger
// (JSON under log_format: json), and changes nothing: not the log level
// either.
func TestRefusedReloadCountedLoggedAndInert(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	flows := filepath.Join(dir, "flows.yaml")
	if err := os.WriteFile(flows, []byte("- {id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeConfig(t, dir, reloadBase+"log_level: info\nflows: {file: flows.yaml}\n")
	s, log := startFromFile(ctx, t, path)
	bad := []func(){
		func() { writeConfig(t, dir, reloadBase+"flows: [unclosed\n") },               // broken YAML
		func() { os.Remove(path) },                                                    // deleted
		func() { os.Mkdir(path, 0o700) },                                              // a directory
		func() { os.Remove(path); writeConfig(t, dir, reloadBase+"interval: -1s\n") }, // a bad value
		func() {
			os.WriteFile(flows, []byte("- {wieght: 2}\n"), 0o600)
			writeConfig(t, dir, reloadBase+"log_level: error\nflows: {file: flows.yaml}\n")
		}, // flows file refused, level changed
	}
	for i, b := range bad {
		b()
		if err := s.ReloadFile(ctx, path); err == nil {
			t.Fatalf("reload %d accepted, want it refused", i)
		}
	}
	if got := testutil.ToFloat64(s.reloads.WithLabelValues("error")); got != float64(len(bad)) {
		t.Errorf("reloads_total{result=error} = %v, want %d", got, len(bad))
	}
	if got := s.level.Level(); got != parseLevel("info") {
		t.Errorf("log level %v after a refused reload, want info kept", got)
	}
	if n := len(s.Flows()); n != 1 {
		t.Errorf("%d flows after refused reloads, want 1", n)
	}
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line that is not JSON under log_format json: %q", line)
		}
	}
	if !strings.Contains(log.String(), "reload refused") {
		t.Errorf("log lacks the refused reloads:\n%s", log.String())
	}
}

// Issue 24 (B10): writing "weight: 1" where the weight was absent re-added
// the flow and discarded its learnt baseline; effective weights are
// compared.
func TestReloadWeightOneIsNoChange(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	path := writeConfig(t, dir, reloadBase+"flows:\n  list: [{id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\"}]\n")
	s, log := startFromFile(ctx, t, path)
	writeConfig(t, dir, reloadBase+"flows:\n  list: [{id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\", weight: 1}]\n")
	if err := s.ReloadFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(log.String(), "re-adding") || strings.Count(log.String(), "flow set applied") != 1 {
		t.Errorf("weight 1 for an absent weight re-added the flow:\n%s", log.String())
	}
}

// agentConfig is a sim config with the agent policy on the repository's
// default model.
func agentConfig(t *testing.T, extra string) *Config {
	t.Helper()
	model, err := filepath.Abs("../../models/default.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte("southbound:\n  sim: {scenario: M2}\nmetrics: {listen: off}\npolicy: {kind: agent, model: " + model + "}\n" + extra))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue 24 (B11): a partial gate section zeroed margin and cooldown; the
// keys left out keep the model's gate, and Check prints the gate that
// applies.
func TestPartialGateKeepsModelGate(t *testing.T) {
	base, err := Check(context.Background(), agentConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if base.Gate == nil || base.Gate.Votes < 1 {
		t.Fatalf("Check without gate: gate %+v, want the model's", base.Gate)
	}
	eff, err := Check(context.Background(), agentConfig(t, "gate: {votes: 7}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := *base.Gate
	want.Votes = 7
	if got := *eff.Gate; got.Margin != want.Margin || got.Votes != 7 || got.Cooldown != want.Cooldown || got.Tolerance != want.Tolerance {
		t.Errorf("gate {votes: 7} = %+v, want the model's gate %+v with votes 7", got, *base.Gate)
	}
	out, err := eff.Effective()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"margin:", "votes: 7", "cooldown:", "tolerance:"} {
		if !strings.Contains(string(out), key) {
			t.Errorf("-check output lacks %q:\n%s", key, out)
		}
	}
	if (policy.GateConfig{Margin: eff.Gate.Margin, Votes: eff.Gate.Votes, Cooldown: eff.Gate.Cooldown, Tolerance: eff.Gate.Tolerance}).Validate() != nil {
		t.Errorf("gate %+v does not validate", *eff.Gate)
	}
}

// Issue 24 (B12): -check printed an interval the service then refused and
// accepted values the start refused. Check runs the start's own checks.
func TestCheckAcceptsWhatStartAccepts(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "fast.json")
	if err := os.WriteFile(profile, []byte(`{"interval": "250ms"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte("southbound:\n  sim: {profile: " + profile + ", scenario: M2}\nmetrics: {listen: off}\npolicy: {kind: crowd}\n"))
	if err != nil {
		t.Fatal(err)
	}
	eff, err := Check(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if eff.Interval != 250*time.Millisecond {
		t.Errorf("Check interval %v, want the profile's 250ms", eff.Interval)
	}
	// What Check prints, the start accepts.
	out, err := eff.Effective()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), back, Options{LogOutput: io.Discard})
	if err != nil {
		t.Fatalf("New refused what Check printed: %v\n%s", err, out)
	}
	s.closeAll()

	flows := filepath.Join(dir, "flows.yaml")
	if err := os.WriteFile(flows, []byte("- {id: \"tcp 10.0.0.1:5001\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	of := "topology: {switches: [agg1, agg2, agg3, agg4], leaves: [leaf1, leaf2, leaf3], bucket_rate_bytes_per_sec: 1.25e6}\nmetrics: {listen: off}\npolicy: {kind: static}\n"
	ofFlow := "flows: {list: [{id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\", switch: agg1}]}\n"
	for name, src := range map[string]string{
		"invalid flows file":  of + "southbound: {openflow: {listen: \"127.0.0.1:0\"}}\nflows: {file: " + flows + "}\n",
		"agent http://":       of + ofFlow + "southbound: {openflow: {listen: \"127.0.0.1:0\"}}\ntelemetry: {tcstat: {switches: [{agent: \"http://\", interfaces: [a]}, {agent: \"http://\", interfaces: [a]}, {agent: \"http://\", interfaces: [a]}, {agent: \"http://\", interfaces: [a]}]}}\n",
		"lease_timeout":       of + ofFlow + "southbound: {openflow: {listen: \"127.0.0.1:0\", lease_timeout: 500ms}}\n",
		"flow off the fabric": of + "southbound: {openflow: {listen: \"127.0.0.1:0\"}}\nflows: {list: [{id: \"tcp 10.9.9.9:1->10.0.0.8:5201\", switch: agg1}]}\n",
	} {
		c, err := Parse([]byte(src))
		if err == nil {
			err = c.Validate()
		}
		if err == nil {
			_, err = Check(context.Background(), c)
		}
		if err == nil {
			t.Errorf("%s: Check accepted it, want it refused as the start refuses it", name)
		}
	}
}

// The model's distress travels with its gate: a config without a gate
// section, or with a partial one, runs the gate the model was evaluated
// behind; a distress mapping replaces it, {} turns it off, and a bad one
// is refused naming gate.distress.
func TestGateKeepsModelDistress(t *testing.T) {
	_, recorded, err := policy.LoadModel("../../models/default.safetensors", telemetry.DefaultEncoderConfig(proflow.PaperTopology()))
	if err != nil {
		t.Fatal(err)
	}
	if recorded.Distress == (policy.DistressConfig{}) {
		t.Fatal("the default model records no distress; this test needs one")
	}
	for _, tc := range []struct {
		name, yaml string
		want       policy.DistressConfig
	}{
		{"no gate section", "", recorded.Distress},
		{"partial gate", "gate: {votes: 7}\n", recorded.Distress},
		{"distress given", "gate: {distress: {fraction: 0.8, consecutive: 3, smoothing: 0.2}}\n", policy.DistressConfig{Fraction: 0.8, Consecutive: 3, Smoothing: 0.2}},
		{"distress off", "gate: {distress: {}}\n", policy.DistressConfig{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eff, built := gateOf(t, tc.yaml)
			if got := eff.Gate.Policy().Distress; got != tc.want {
				t.Errorf("distress %+v, want %+v", got, tc.want)
			}
			if got := built.Distress; got != tc.want {
				t.Errorf("the built gate's distress %+v, want %+v", got, tc.want)
			}
		})
	}
	_, err = Check(context.Background(), agentConfig(t, "gate: {distress: {fraction: 1.5, consecutive: 2, smoothing: 0.1}}\n"))
	if err == nil || !strings.Contains(err.Error(), "gate.distress") || !strings.Contains(err.Error(), "fraction 1.5") {
		t.Errorf("a bad distress: %v, want an error naming gate.distress and the fraction", err)
	}
}

// The model's Pareto setting travels with its gate as its distress does:
// kept without a gate section or with a partial one, replaced when given.
func TestGateKeepsModelPareto(t *testing.T) {
	_, recorded, err := policy.LoadModel("../../models/default.safetensors", telemetry.DefaultEncoderConfig(proflow.PaperTopology()))
	if err != nil {
		t.Fatal(err)
	}
	if !recorded.Pareto {
		t.Fatal("the default model's gate is not pareto; this test needs one that is")
	}
	for _, tc := range []struct {
		name, yaml string
		want       bool
	}{
		{"no gate section", "", true},
		{"partial gate", "gate: {votes: 7}\n", true},
		{"pareto off", "gate: {pareto: false}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, built := gateOf(t, tc.yaml); built.Pareto != tc.want {
				t.Errorf("the built gate's pareto %v, want %v", built.Pareto, tc.want)
			}
		})
	}
}

// A gate section's window reaches the built gate, and a partial section
// keeps the model's (none in the committed model). The committed model
// remembers votes by its reserve, so a window alone is refused by name and
// one given with the reserve off is taken.
func TestGateWindowKey(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       time.Duration
	}{
		{"no gate section", "", 0},
		{"partial gate", "gate: {votes: 7}\n", 0},
		{"window given, reserve off", "gate: {window: 1m, reserve: false}\n", time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, built := gateOf(t, tc.yaml); built.Window != tc.want {
				t.Errorf("the built gate's window %v, want %v", built.Window, tc.want)
			}
		})
	}
	t.Run("window beside the model's reserve", func(t *testing.T) {
		_, err := Check(context.Background(), agentConfig(t, "gate: {window: 1m}\n"))
		if err == nil || !strings.Contains(err.Error(), "reserve with window 1m0s") {
			t.Errorf("a window beside the model's reserve: error %v, want one naming both", err)
		}
	})
}

// A gate section's drain reaches the built gate, a section without one
// keeps the model's (the committed model's is the testbed's bucket), and
// a drain without a horizon is refused by name.
func TestGateDrainKey(t *testing.T) {
	want := policy.DrainConfig{Depth: 53.3, Horizon: 2 * time.Second, Waive: true}
	if _, built := gateOf(t, "gate: {drain: {depth: 53.3, horizon: 2s, waive: true}}\n"); built.Drain != want {
		t.Errorf("the built gate's drain %+v, want %+v", built.Drain, want)
	}
	committed, err := policy.LoadGateConfig("../../models/gate-testbed.json")
	if err != nil {
		t.Fatal(err)
	}
	model := committed.Drain
	if model == (policy.DrainConfig{}) {
		t.Fatal("models/gate-testbed.json holds no drain; this test needs one")
	}
	for _, y := range []string{"", "gate: {votes: 7}\n"} {
		if _, built := gateOf(t, y); built.Drain != model {
			t.Errorf("gate section %q: the built gate's drain %+v, want the model's %+v", y, built.Drain, model)
		}
	}
	if _, built := gateOf(t, "gate: {drain: {}}\n"); built.Drain != (policy.DrainConfig{}) {
		t.Errorf("gate: {drain: {}}: the built gate's drain %+v, want it off", built.Drain)
	}
	_, err = Check(context.Background(), agentConfig(t, "gate: {drain: {depth: 53.3}}\n"))
	if err == nil || !strings.Contains(err.Error(), "drain horizon 0s, want > 0") {
		t.Errorf("a drain without a horizon: error %v, want one naming the horizon", err)
	}
}

// gateOf checks an agent service config with gateYAML, builds one flow's
// gate from it and returns the effective config and the built gate's
// settings; it fails the test unless the effective config's gate reads
// back unchanged.
func gateOf(t *testing.T, gateYAML string) (Config, policy.GateConfig) {
	t.Helper()
	eff, err := Check(context.Background(), agentConfig(t, gateYAML))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := flowParts(&eff, proflow.PaperTopology())
	if err != nil {
		t.Fatal(err)
	}
	g, err := parts.Gate(proflow.ProtectedFlow{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := eff.Effective()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("the effective config does not parse back: %v\n%s", err, out)
	}
	if back.Gate == nil || back.Gate.Policy() != eff.Gate.Policy() {
		t.Errorf("the effective config's gate reads back as %+v, want %+v", back.Gate, eff.Gate)
	}
	return eff, g.(*policy.Gate).Config()
}
