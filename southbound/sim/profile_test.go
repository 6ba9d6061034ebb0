package sim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

func TestProfilesRoundTrip(t *testing.T) {
	for _, name := range sim.Profiles() {
		cfg, err := sim.ProfileConfig(name)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Name != name {
			t.Errorf("profile %s is named %q", name, cfg.Name)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("profile %s: %v", name, err)
		}
		b, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"base_rtt": "`) {
			t.Errorf("profile %s: durations are not written as strings:\n%s", name, b)
		}
		back, err := sim.ReadProfile(strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("profile %s does not read back: %v", name, err)
		}
		if diff := cmp.Diff(cfg, back); diff != "" {
			t.Errorf("profile %s changed in a JSON round trip (-want +got):\n%s", name, diff)
		}
		if back.Digest() != cfg.Digest() {
			t.Errorf("profile %s: digest changed in a round trip", name)
		}
	}
	if sim.TestbedConfig().Digest() == sim.DatacenterConfig().Digest() {
		t.Error("testbed and datacenter share a digest")
	}
	if d := sim.DefaultConfig(); d.Digest() != sim.DatacenterConfig().Digest() {
		t.Error("DefaultConfig is not the datacenter profile")
	}
}

func TestReadProfileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"unknown field", `{"base_rt": "5ms"}`, `unknown field "base_rt"`},
		{"bad duration", `{"base_rtt": 5}`, "base_rtt"},
		{"negative rate", `{"bucket_rate": -1}`, "bucket_rate -1, want a positive finite number"},
		{"tiny receive window", `{"receive_window": 100}`, "receive_window 100 smaller than two packets"},
		{"uncounted without queue", `{"uncounted_rate": 26e6}`, "uncounted_queue_limit 0 smaller than one packet"},
		{"two objects", `{} {}`, "data after the JSON object"},
		{"not JSON", `base_rtt: 5ms`, "decode"},
	} {
		_, err := sim.ReadProfile(strings.NewReader(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadProfile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.json")
	if err := os.WriteFile(path, []byte(`{"base_rtt": "20ms", "receive_window": 600000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := sim.LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "mine" || cfg.BaseRTT != 20*time.Millisecond || cfg.ReceiveWindow != 600000 {
		t.Errorf("loaded %q base_rtt %v receive_window %v, want mine, 20ms, 600000", cfg.Name, cfg.BaseRTT, cfg.ReceiveWindow)
	}
	if cfg.BucketRate != sim.DefaultConfig().BucketRate {
		t.Errorf("a field the file leaves out changed: bucket_rate %v", cfg.BucketRate)
	}
	tb, err := sim.LoadProfile("testbed")
	if err != nil || tb.Digest() != sim.TestbedConfig().Digest() {
		t.Errorf("LoadProfile(testbed) = %v, %v", tb.Name, err)
	}
	if _, err := sim.LoadProfile("lab"); err == nil || !strings.Contains(err.Error(), `unknown profile "lab"`) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := sim.LoadProfile(filepath.Join(dir, "none.json")); err == nil {
		t.Error("a missing file loads")
	}
}

// TestReadProfileHugeFabric: a profile asking for an absurd fabric is
// refused by Validate without allocating for it.
func TestReadProfileHugeFabric(t *testing.T) {
	for _, js := range []string{`{"switches": 2000000000}`, `{"leaves": 2000000000}`, `{"hosts_per_leaf": 2000000000}`} {
		_, err := sim.ReadProfile(strings.NewReader(js))
		if err == nil || !strings.Contains(err.Error(), "want") {
			t.Errorf("%s: %v, want an error naming the bound", js, err)
		}
	}
}
