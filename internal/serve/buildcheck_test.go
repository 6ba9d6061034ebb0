package serve

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/syncbuf"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
)

// modelWithGate writes the committed default model to dir with g as the
// gate it records, and returns its path.
func modelWithGate(t *testing.T, dir string, g policy.GateConfig) string {
	t.Helper()
	m, meta, err := qnet.Load("../../models/default.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	meta.Extra = map[string]string{policy.ModelGateKey: string(js)}
	path := filepath.Join(dir, "gated.safetensors")
	if err := qnet.Save(path, m, meta); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every key a config leaves out comes from the model's gate, with the
// section absent as with a partial one: window, reserve and drain too.
func TestAbsentGateKeepsEveryModelKey(t *testing.T) {
	want := policy.GateConfig{Margin: 0.3, Votes: 4, Cooldown: 12 * time.Second, Tolerance: 3, Pareto: true,
		Window: 2 * time.Second, Drain: policy.DrainConfig{Depth: 53.3, Horizon: 5 * time.Second}}
	model := modelWithGate(t, t.TempDir(), want)
	for _, tc := range []struct{ name, gate string }{{"no gate section", ""}, {"empty gate section", "gate: {}\n"}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte("southbound:\n  sim: {scenario: M2}\nmetrics: {listen: off}\npolicy: {kind: agent, model: " + model + "}\n" + tc.gate))
			if err != nil {
				t.Fatal(err)
			}
			eff, err := Check(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if got := eff.Gate.Policy(); got != want {
				t.Errorf("the gate that applies: %+v, want the model's %+v", got, want)
			}
		})
	}
}

// An agent trained at one interval in a service running at another is
// refused by Check, as by the start, with the interval key named.
func TestCheckRefusesAgentAtAnotherInterval(t *testing.T) {
	src := strings.Replace(validOF, "policy: {kind: static}", "policy: {kind: agent}\ninterval: 1s", 1)
	src = strings.Replace(src, "topology: {switches: [agg1, agg2], leaves: [leaf1], bucket_rate_bytes_per_sec: 1.25e6}",
		"topology: {switches: [agg1, agg2, agg3, agg4], leaves: [leaf1, leaf2, leaf3], bucket_rate_bytes_per_sec: 2.5e7}", 1)
	c, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Check(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "interval: 1s, but the model was trained at a 500ms control interval") {
		t.Errorf("Check of an agent at 1 s = %v, want it refused naming interval", err)
	}
}

// Check of a P4Runtime config checks every flow against the targets, not
// only the first.
func TestCheckP4RuntimeEveryFlow(t *testing.T) {
	c, err := Parse([]byte(`
topology: {switches: [agg1, agg2], leaves: [leaf1], bucket_rate_bytes_per_sec: 1.25e6}
southbound:
  p4runtime:
    election_id: {low: 1}
    targets:
      - {name: leaf1, address: "127.0.0.1:9559", device_id: 1, hosts: [10.0.0.1/32], host_ports: [1], uplinks: [3, 4]}
      - {name: leaf4, address: "127.0.0.1:9560", device_id: 4, hosts: [10.0.0.8/32], host_ports: [1], uplinks: [3, 4]}
flows:
  list:
    - {id: "tcp 10.0.0.1:5001->10.0.0.8:5201", switch: agg1}
    - {id: "tcp 10.9.9.9:5001->10.0.0.8:5201", switch: agg1}
policy: {kind: static}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Check(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "flows[1]") || !strings.Contains(err.Error(), "10.9.9.9") {
		t.Errorf("Check with a second flow no target carries = %v, want flows[1] refused", err)
	}
}

// agentSim is validSim with the agent.
var agentSim = strings.Replace(validSim, "policy: {kind: crowd}", "policy: {kind: agent}", 1)

// Values that only the packages the service builds used to refuse are
// refused by Validate, by key.
func TestValidateNamesBuildTimeKeys(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"lease timeout", strings.Replace(validOF, `openflow: {listen: "127.0.0.1:6653"}`, `openflow: {listen: "127.0.0.1:6653", lease_timeout: 500ms}`, 1),
			"southbound.openflow.lease_timeout: 500ms, want 6s…65535s"},
		{"lease timeout under three request timeouts", strings.Replace(validOF, `openflow: {listen: "127.0.0.1:6653"}`, `openflow: {listen: "127.0.0.1:6653", lease_timeout: 5s}`, 1),
			"southbound.openflow.lease_timeout: 5s, want 6s…65535s"},
		{"drain without a horizon", agentSim + "gate: {drain: {depth: 5}}\n", "gate.drain: "},
		{"reserve with a window", agentSim + "gate: {window: 2s, reserve: true}\n", "gate.reserve: true with gate.window 2s"},
		{"tcstat with sim", validSim + "telemetry:\n  tcstat: {switches: [{agent: \"http://127.0.0.1:1\", interfaces: [a]}, {agent: \"http://127.0.0.1:1\", interfaces: [a]}, {agent: \"http://127.0.0.1:1\", interfaces: [a]}, {agent: \"http://127.0.0.1:1\", interfaces: [a]}]}\n",
			"telemetry.tcstat: set with southbound.sim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A reload whose config the next start would refuse is refused and
// counted as an error, not applied as ok with a warning.
func TestReloadRefusesWhatStartRefuses(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, agentConfig(t, ""), Options{LogOutput: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.closeAll()
	bad := agentConfig(t, "")
	bad.Southbound.Sim.Scenario = "NOPE"
	if err := s.Reload(ctx, bad); err == nil || !strings.Contains(err.Error(), "southbound.sim.scenario") {
		t.Errorf("Reload with an unknown scenario = %v, want it refused naming southbound.sim.scenario", err)
	}
	if err := s.Reload(ctx, agentConfig(t, "")); err != nil {
		t.Errorf("Reload of the running config = %v", err)
	}
}

// The model's gate is read again when a reload names another model and
// when it names the running one again: reloading the running config after
// another's does not report the gate as changed.
func TestReloadModelGateFollowsTheModel(t *testing.T) {
	ctx := context.Background()
	var log syncbuf.Buffer
	start := agentConfig(t, "gate: {votes: 7}\n")
	s, err := New(ctx, start, Options{LogOutput: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.closeAll()
	other := modelWithGate(t, t.TempDir(), policy.GateConfig{Margin: 0.5, Votes: 3, Cooldown: time.Second})
	next := agentConfig(t, "gate: {votes: 7}\n")
	next.Policy.Model = other
	if err := s.Reload(ctx, next); err != nil {
		t.Fatal(err)
	}
	before := log.String()
	if err := s.Reload(ctx, agentConfig(t, "gate: {votes: 7}\n")); err != nil {
		t.Fatal(err)
	}
	if after := strings.TrimPrefix(log.String(), before); strings.Contains(after, "gate") {
		t.Errorf("reloading the running config after another model's reports the gate:\n%s", after)
	}
}

// Reloads from several goroutines are serialised (go test -race).
func TestConcurrentReloads(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, simConfig(t, ""), Options{LogOutput: &syncbuf.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.closeAll()
	a, b := simConfig(t, ""), simConfig(t, "flows:\n  list: [{id: \"tcp 10.0.0.1:5003->10.0.0.8:5201\"}]\n")
	var wg sync.WaitGroup
	for _, c := range []*Config{a, b} {
		wg.Go(func() {
			for range 5 {
				if err := s.Reload(ctx, c); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}

// A flow's switch that Validate could not check (no topology section with
// the sim southbound) is checked against the fabric's switches.
func TestSimFlowSwitchChecked(t *testing.T) {
	c, err := Parse([]byte("southbound:\n  sim: {scenario: M2}\nmetrics: {listen: off}\npolicy: {kind: crowd}\nflows:\n  list: [{id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\", switch: nope}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Check(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), `flows.list[0].switch: "nope", want one of the fabric's switches agg1`) {
		t.Errorf("Check with an unknown switch = %v, want it refused by key", err)
	}
}
