package sim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
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

// A profile whose interval is too many steps is refused by Validate: sim.New
// allocated Interval/Step latency samples per protected flow (1h of 1ns
// steps ran out of memory, 20h panicked in makeslice) and Advance ran that
// many engine steps per sample.
func TestReadProfileTooManyStepsPerInterval(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"step": "1ns", "base_rtt": "1ms", "interval": "1h", "controller_warmup": "0s"}`,
			"interval 1h0m0s is 3600000000000 steps of 1ns, want at most 10000 (sim.MaxStepsPerInterval)"},
		{`{"step": "1ns", "base_rtt": "1ms", "interval": "20h", "controller_warmup": "0s"}`, "want at most 10000"},
		{`{"step": "1ms", "interval": "10001ms", "controller_warmup": "0s"}`, "interval 10.001s is 10001 steps of 1ms, want at most 10000"},
	} {
		_, err := sim.ReadProfile(strings.NewReader(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.json, err, tc.want)
		}
	}
	// At the bound exactly the profile is valid.
	cfg, err := sim.ReadProfile(strings.NewReader(`{"step": "1ms", "interval": "10s", "controller_warmup": "0s"}`))
	if err != nil || cfg.Interval/cfg.Step != sim.MaxStepsPerInterval {
		t.Errorf("10,000 steps of 1ms: %v, want a valid profile", err)
	}
}

// A profile or scenario path that is not a regular file is refused without
// blocking (os.Open blocked on a FIFO).
func TestLoadRefusesNonRegular(t *testing.T) {
	t.Run("profile", func(t *testing.T) {
		fileutiltest.RefusesNonRegular(t, "p.json", func(path string) error {
			_, err := sim.LoadProfile(path)
			return err
		})
	})
	t.Run("scenario", func(t *testing.T) {
		fileutiltest.RefusesNonRegular(t, "s.json", func(path string) error {
			_, err := sim.LoadScenarioWithLimits(path, sim.DefaultConfig(), sim.DefaultLimits())
			return err
		})
	})
}
