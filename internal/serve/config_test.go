package serve

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/policy"
)

// validSim is a minimal valid config on the simulated fabric.
const validSim = `
southbound:
  sim: {scenario: M2, speed: 4}
flows:
  list:
    - {id: "tcp 10.0.0.1:5001->10.0.0.8:5201", weight: 2}
policy: {kind: crowd}
`

// validOF is a minimal valid config on the OpenFlow southbound.
const validOF = `
topology: {switches: [agg1, agg2], leaves: [leaf1], bucket_rate_bytes_per_sec: 1.25e6}
southbound:
  openflow: {listen: "127.0.0.1:6653"}
flows:
  list: [{id: "tcp 10.0.0.1:5001->10.0.0.8:5201", switch: agg1}]
policy: {kind: static}
`

func TestParseValid(t *testing.T) {
	for name, src := range map[string]string{"sim": validSim, "openflow": validOF} {
		c, err := Parse([]byte(src))
		if err != nil {
			t.Fatalf("%s: Parse: %v", name, err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", name, err)
		}
	}
}

// Every bad value is refused with its field path and what was expected.
func TestConfigErrorsNameTheField(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		src  string
		// want are substrings of the error: "path: problem".
		want []string
	}{
		{"unknown top-level key", validSim + "polcy: {kind: static}\n", []string{"polcy: unknown field, want one of baseline, cluster,"}},
		{"unknown nested key", strings.Replace(validSim, "speed: 4", "sped: 4", 1), []string{"southbound.sim.sped: unknown field, want one of max_protected, profile, scenario, seed, speed, via"}},
		{"unknown key in a list", strings.Replace(validSim, "weight: 2", "wieght: 2", 1), []string{"flows.list[0].wieght: unknown field, want one of id, switch, weight"}},
		{"key twice", validSim + "joint: greedy\njoint: independent\n", []string{"joint: given twice"}},
		{"wrong type", strings.Replace(validSim, "speed: 4", "speed: fast", 1), []string{"southbound.sim.speed: cannot unmarshal !!str `fast` into float64 (line 3)"}},
		{"bad duration", validSim + "interval: soon\n", []string{"interval: cannot unmarshal !!str `soon` into time.Duration"}},
		{"mapping for a list", "southbound: {sim: {scenario: M2}}\nflows: {list: {a: 1}}\npolicy: {kind: static}\n", []string{"flows.list: a mapping, want a list"}},
		{"empty", "", []string{"(document): empty, want a YAML mapping"}},
		{"no southbound", "policy: {kind: static}\n", []string{"southbound: none set, want exactly one of sim, openflow, p4runtime"}},
		{"two southbounds", strings.Replace(validSim, "sim: {scenario: M2, speed: 4}", "sim: {scenario: M2}\n  openflow: {}", 1), []string{"southbound: sim and openflow set, want exactly one"}},
		{"no scenario", strings.Replace(validSim, "scenario: M2, ", "", 1), []string{"southbound.sim.scenario: missing, want a built-in scenario name"}},
		{"speed", strings.Replace(validSim, "speed: 4", "speed: -1", 1), []string{"southbound.sim.speed: -1, want a number in [0.01, 1000]"}},
		// Issue 24: 1e-12 overflowed the wall step (a panic at start),
		// 1e-9 froze the simulated time.
		{"speed too small", strings.Replace(validSim, "speed: 4", "speed: 1e-12", 1), []string{"southbound.sim.speed: 1e-12, want a number in [0.01, 1000]"}},
		{"speed tiny", strings.Replace(validSim, "speed: 4", "speed: 1e-9", 1), []string{"southbound.sim.speed: 1e-09, want a number in [0.01, 1000]"}},
		{"speed NaN", strings.Replace(validSim, "speed: 4", "speed: .nan", 1), []string{"southbound.sim.speed: NaN, want"}},
		{"interval too long", validSim + "interval: 100000h\n", []string{"interval: 100000h0m0s, want 10ms…1m0s"}},
		{"second document", validSim + "---\npolicy: {kind: static}\n", []string{"(document): a second YAML document after ---, want one document"}},
		{"binary", "\x00\x01\x02southbound: {}\n", []string{"(document): binary data (a NUL byte or invalid UTF-8 at byte 0), want YAML text"}},
		{"invalid UTF-8", validSim + "joint: \xff\n", []string{"(document): binary data"}},
		{"metrics port out of range", validSim + "metrics: {listen: \"127.0.0.1:99999\"}\n", []string{`metrics.listen: "127.0.0.1:99999": port "99999", want a number 0…65535`}},
		{"flows file is a device", strings.Replace(validSim, "flows:\n  list:\n    - {id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\", weight: 2}", "flows: {file: /dev/zero}", 1), []string{`flows.file: "/dev/zero": /dev/zero is a device: not a regular file, want a regular file`}},
		{"fabric is a device", strings.Replace(validOF, `listen: "127.0.0.1:6653"`, `fabric: /dev/zero`, 1), []string{`southbound.openflow.fabric: "/dev/zero": /dev/zero is a device: not a regular file`}},
		{"token file is a device", validOF + "telemetry:\n  tcstat: {token_file: /dev/zero, switches: [{agent: http://127.0.0.1:9101, interfaces: [a]}, {agent: http://127.0.0.1:9102, interfaces: [b]}]}\n", []string{`telemetry.tcstat.token_file: "/dev/zero": /dev/zero is a device: not a regular file`}},
		{"sim via", strings.Replace(validSim, "speed: 4", "speed: 4, via: openflow", 1), []string{`southbound.sim.via: "openflow", want direct`}},
		{"sim max_protected", strings.Replace(validSim, "speed: 4", "speed: 4, max_protected: -3", 1), []string{"southbound.sim.max_protected: -3, want 1…100000"}},
		{"scenario file missing", strings.Replace(validSim, "scenario: M2", "scenario: nope.json", 1), []string{`southbound.sim.scenario: "nope.json": no such file or directory, want a readable file`}},
		{"log level", validSim + "log_level: loud\n", []string{`log_level: "loud", want one of debug, info, warn, error`}},
		{"log format", validSim + "log_format: xml\n", []string{`log_format: "xml", want one of text, json`}},
		{"metrics listen", validSim + "metrics: {listen: 9464}\n", []string{`metrics.listen: "9464", want host:port`}},
		{"interval", validSim + "interval: 1ms\n", []string{"interval: 1ms, want 10ms…1m0s"}},
		{"joint", validSim + "joint: herd\n", []string{`joint: "herd", want one of independent, greedy`}},
		{"policy kind", strings.Replace(validSim, "kind: crowd", "kind: oracle", 1), []string{`policy.kind: "oracle", want one of agent, reactive, crowd, throughput-drop, latency-threshold, static`}},
		{"policy missing", strings.Replace(validSim, "policy: {kind: crowd}", "", 1), []string{"policy.kind: missing, want one of"}},
		{"model missing", strings.Replace(validSim, "kind: crowd", "kind: agent, model: none.safetensors", 1), []string{`policy.model: "none.safetensors": no such file or directory`}},
		{"model without agent", strings.Replace(validSim, "kind: crowd", "kind: crowd, model: m", 1), []string{"policy.model: set with policy.kind crowd, want it only with agent"}},
		{"valid", validSim, nil},
		{"crowd threshold", strings.Replace(validSim, "kind: crowd", "kind: crowd, crowd: {threshold_flows: -1, consecutive: -2}", 1), []string{"policy.crowd.threshold_flows: -1, want a finite number > 0", "policy.crowd.consecutive: -2, want at least 1"}},
		{"throughput-drop valid", strings.Replace(validSim, "kind: crowd", "kind: throughput-drop, throughput_drop: {fraction: 0.8, cooldown: 20s}", 1), nil},
		{"throughput-drop fraction", strings.Replace(validSim, "kind: crowd", "kind: throughput-drop, throughput_drop: {fraction: 1.5}", 1), []string{"policy.throughput_drop: policy: invalid throughput-drop config: fraction 1.5, want in (0, 1)"}},
		{"throughput-drop on crowd", strings.Replace(validSim, "kind: crowd", "kind: crowd, throughput_drop: {consecutive: 3}", 1), []string{"policy.throughput_drop: set with policy.kind crowd, want it only with throughput-drop"}},
		{"latency-threshold valid", strings.Replace(validSim, "kind: crowd", "kind: latency-threshold, latency_threshold: {ratio: 1.3, completion_ratio: 1.2, consecutive: 3, cooldown: 20s}", 1), nil},
		{"latency-threshold ratio", strings.Replace(validSim, "kind: crowd", "kind: latency-threshold, latency_threshold: {ratio: 0.9}", 1), []string{"policy.latency_threshold: policy: invalid latency-threshold config: ratio 0.9, want a finite number > 1"}},
		{"latency-threshold negative", strings.Replace(validSim, "kind: crowd", "kind: latency-threshold, latency_threshold: {completion_ratio: -2}", 1), []string{"policy.latency_threshold: ratio 0, completion_ratio -2, consecutive 0, cooldown 0s: want non-negative values (0 keeps a default)"}},
		{"latency-threshold unknown key", strings.Replace(validSim, "kind: crowd", "kind: latency-threshold, latency_threshold: {raito: 2}", 1), []string{"raito"}},
		{"latency-threshold on throughput-drop", strings.Replace(validSim, "kind: crowd", "kind: throughput-drop, latency_threshold: {ratio: 2}", 1), []string{"policy.latency_threshold: set with policy.kind throughput-drop, want it only with latency-threshold"}},
		{"reactive on crowd", strings.Replace(validSim, "kind: crowd", "kind: crowd, reactive: {consecutive: 3}", 1), []string{"policy.reactive: set with policy.kind crowd, want it only with reactive"}},
		{"gate without agent", validSim + "gate: {margin: 0.1, votes: 2, cooldown: 5s}\n", []string{"gate: set with policy.kind crowd, want it only with agent"}},
		{"gate votes", validSim + "gate: {margin: -1, votes: 0, cooldown: -1s, window: -2s}\n", []string{"gate.margin: -1, want a finite number >= 0", "gate.votes: 0, want at least 1", "gate.cooldown: -1s, want a duration >= 0", "gate.window: -2s, want a duration >= 0"}},
		{"flow id", strings.Replace(validSim, "tcp 10.0.0.1:5001->10.0.0.8:5201", "tcp 10.0.0.1:5001", 1), []string{`flows.list[0].id: "tcp 10.0.0.1:5001": parse flow`}},
		{"flow twice", strings.Replace(validSim, "weight: 2}", "weight: 2}\n    - {id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\"}", 1), []string{"flows.list[1].id: tcp 10.0.0.1:5001->10.0.0.8:5201 is also flows.list[0], want every flow once"}},
		{"flow weight", strings.Replace(validSim, "weight: 2", "weight: -2", 1), []string{"flows.list[0].weight: -2, want a finite number > 0"}},
		{"flow list and file", strings.Replace(validSim, "flows:\n", "flows:\n  file: f.yaml\n", 1), []string{"flows: more than one of list, file and etcd_prefix set, want one", `flows.file: "f.yaml": no such file`}},
		{"etcd prefix without cluster", strings.Replace(validSim, "flows:\n  list:\n    - {id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\", weight: 2}", "flows: {etcd_prefix: /f}", 1), []string{"flows.etcd_prefix: set without cluster"}},
		{"openflow needs topology", strings.Replace(validOF, "topology: {switches: [agg1, agg2], leaves: [leaf1], bucket_rate_bytes_per_sec: 1.25e6}", "", 1), []string{"topology: missing, want switches, leaves and bucket_rate_bytes_per_sec (required with the openflow southbound)"}},
		{"topology bucket", strings.Replace(validOF, "1.25e6", "0", 1), []string{"topology: "}},
		{"openflow flow switch", strings.Replace(validOF, ", switch: agg1", "", 1), []string{"flows.list[0].switch: missing, want the aggregation switch carrying the flow now"}},
		{"openflow unknown switch", strings.Replace(validOF, "switch: agg1", "switch: agg9", 1), []string{`flows.list[0].switch: "agg9", want one of the topology's switches agg1, agg2`}},
		{"openflow no flows", strings.Replace(validOF, "flows:\n  list: [{id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\", switch: agg1}]", "", 1), []string{"flows: none, want list, file or etcd_prefix"}},
		{"openflow listen", strings.Replace(validOF, `"127.0.0.1:6653"`, `"6653"`, 1), []string{`southbound.openflow.listen: "6653", want host:port`}},
		{"openflow tls", strings.Replace(validOF, `listen: "127.0.0.1:6653"`, `tls: {ca_file: ca.pem}`, 1), []string{"southbound.openflow.tls: want cert_file and key_file", `southbound.openflow.tls.ca_file: "ca.pem": no such file`}},
		{"p4runtime", strings.Replace(validOF, `openflow: {listen: "127.0.0.1:6653"}`, `p4runtime:
    targets:
      - {name: leaf1, address: "127.0.0.1", device_id: 1, hosts: [10.0.0.1], host_ports: [1], uplinks: [3]}
      - {name: leaf1, address: "127.0.0.1:9559", device_id: 2, hosts: [10.0.0.2/32], uplinks: [3, 4]}`, 1), []string{
			"southbound.p4runtime.election_id: 0, want a non-zero election ID",
			`southbound.p4runtime.targets[0].address: "127.0.0.1", want host:port`,
			`southbound.p4runtime.targets[0].hosts[0]: "10.0.0.1", want an IP prefix`,
			"southbound.p4runtime.targets[0].uplinks: 1 ports, want one per topology switch (2)",
			`southbound.p4runtime.targets[1].name: "leaf1" also names targets[0], want a unique name`,
			"southbound.p4runtime.targets[1].host_ports: empty"}},
		{"tcstat", validOF + "telemetry:\n  tcstat: {format: xml, switches: [{agent: 127.0.0.1:9101, interfaces: []}]}\n", []string{
			`telemetry.tcstat.format: "xml", want json or prometheus`,
			"telemetry.tcstat.switches: 1 sources, want one per topology switch (2)",
			`telemetry.tcstat.switches[0].agent: "127.0.0.1:9101", want an http:// or https:// URL`,
			"telemetry.tcstat.switches[0].interfaces: empty"}},
		{"cluster", validSim + "cluster: {endpoints: [127.0.0.1:2379], prefix: proflow, replica: 'a/b', lease_ttl: 100ms}\n", []string{
			`cluster.endpoints[0]: "127.0.0.1:2379", want an http:// or https:// URL`,
			`cluster.prefix: "proflow", want a key prefix starting with /`,
			`cluster.replica: "a/b", want a name without / or spaces`,
			"cluster.lease_ttl: 100ms, want at least 1s"}},
		{"baseline", validSim + "baseline: {warmup: -1, samples: -1}\n", []string{"baseline.warmup: -1", "baseline.samples: -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "c.yaml")
			if err := os.WriteFile(path, []byte(tt.src), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Load: %v, want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load succeeded, want errors %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks %q", err, w)
				}
			}
			if _, ok := errors.AsType[*FieldError](err); !ok && !strings.Contains(err.Error(), "YAML:") {
				t.Errorf("error %v holds no *FieldError", err)
			}
		})
	}
}

// Effective prints the config with its defaults, and reads back to the
// same config.
func TestEffectiveRoundTrip(t *testing.T) {
	c, err := Parse([]byte(validSim))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Effective()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"log_level: info", "log_format: text", "listen: 127.0.0.1:9464", "interval: 500ms", "profile: testbed", "joint: independent", "samples: 10"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("effective config lacks %q:\n%s", want, out)
		}
	}
	back, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(Effective): %v\n%s", err, out)
	}
	if diff := cmp.Diff(c.WithDefaults(), *back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestFlowsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flows.yaml")
	os.WriteFile(path, []byte("- {id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\", weight: 3}\n- {id: \"udp 10.0.0.2:1->10.0.0.8:2\", wieght: 1}\n"), 0o600)
	_, err := ReadFlowsFile(path, false, nil)
	if err == nil || !strings.Contains(err.Error(), "[1].wieght: unknown field") {
		t.Fatalf("ReadFlowsFile = %v, want the unknown field of the second flow", err)
	}
	os.WriteFile(path, []byte("- {id: \"tcp 10.0.0.1:5001->10.0.0.8:5201\", weight: 3}\n"), 0o600)
	fs, err := ReadFlowsFile(path, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]FlowConfig{{ID: "tcp 10.0.0.1:5001->10.0.0.8:5201", Weight: 3}}, fs); diff != "" {
		t.Errorf("flows (-want +got):\n%s", diff)
	}
}

// Issue 24: the field-path check followed aliases before the YAML
// library's own excessive-aliasing check; an 80 KB file of aliases took
// 15.8 s of CPU. It is refused at once now.
func TestAliasesBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("topology: {switches: [a], leaves: [l], bucket_rate_bytes_per_sec: 1}\nsouthbound:\n  p4runtime:\n    election_id: {low: 1}\n    targets:\n      - &t {name: x, address: \"127.0.0.1:1\", device_id: 1, host_ports: [1], uplinks: [1], hosts: &h [")
	for i := range 10_000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("x")
	}
	b.WriteString("]}\n")
	for range 20_000 {
		b.WriteString("      - *t\n")
	}
	b.WriteString("policy: {kind: static}\n")
	start := time.Now()
	_, err := Parse([]byte(b.String()))
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Parse of %d bytes of aliases took %v, want well under a second", b.Len(), took)
	}
	if err == nil || !strings.Contains(err.Error(), "aliases expand to more than") {
		t.Errorf("Parse = %v, want the aliases refused", err)
	}
}

// Issue 24: the config file itself is refused when it is not a regular
// file (os.ReadFile read /dev/zero until memory ran out and blocked on a
// FIFO) or too large.
func TestLoadRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxConfigBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]error{"/dev/zero": fileutil.ErrNotRegular, fifo: fileutil.ErrNotRegular, dir: fileutil.ErrNotRegular, big: fileutil.ErrTooLarge} {
		done := make(chan error, 1)
		go func() { _, err := Load(path); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, want) {
				t.Errorf("Load(%s) = %v, want %v", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) blocked", path)
		}
	}
}

// TestGateMirrorsPolicyGate guards the YAML mirror of policy.GateConfig: a
// gate whose every field (found by reflection, so a field added to
// policy.GateConfig later is included) holds a distinct non-zero value
// must come through a section that leaves every key out (the model's gate
// kept whole) and through a YAML round trip of the completed section
// unchanged. A field the mirror does not carry fails here instead of being
// dropped from a running service's gate.
func TestGateMirrorsPolicyGate(t *testing.T) {
	var base policy.GateConfig
	next := 1
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			switch {
			case f.Type() == reflect.TypeFor[time.Duration]():
				f.SetInt(int64(next) * int64(time.Second))
			case f.Kind() == reflect.Float64:
				f.SetFloat(float64(next) / 10)
			case f.Kind() == reflect.Int:
				f.SetInt(int64(next))
			case f.Kind() == reflect.Bool:
				f.SetBool(true) // the zero value is false: true tells it apart
			case f.Kind() == reflect.Struct:
				fill(f)
				continue
			default:
				t.Fatalf("policy.GateConfig field %s has kind %s, which this test does not fill: extend it", v.Type().Field(i).Name, f.Kind())
			}
			next++
		}
	}
	fill(reflect.ValueOf(&base).Elem())

	var left GateConfig
	if err := yaml.Unmarshal([]byte("{}"), &left); err != nil {
		t.Fatal(err)
	}
	full := left.over(base)
	if diff := cmp.Diff(base, full.Policy()); diff != "" {
		t.Errorf("a section with every key left out does not keep the model's gate (-model +service):\n%s", diff)
	}
	b, err := yaml.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var back GateConfig
	if err := yaml.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Partial() {
		t.Errorf("the completed gate reads back partial from\n%s", b)
	}
	if diff := cmp.Diff(base, back.Policy()); diff != "" {
		t.Errorf("YAML round trip of the gate (-want +got):\n%s\nYAML:\n%s", diff, b)
	}
}
