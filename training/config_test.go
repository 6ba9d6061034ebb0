package training

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
)

func TestDefaultTrainConfig(t *testing.T) {
	c := DefaultTrainConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(c.Hidden, []int{256, 256}) {
		t.Errorf("default hidden %v, want qnet's default [256 256]", c.Hidden)
	}
	// A JSON round trip gives the same config.
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrainConfig(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, back); diff != "" {
		t.Errorf("round trip (-wrote +read):\n%s", diff)
	}
}

func TestReadTrainConfigOverDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "train.json")
	const js = `{"hidden": [64], "gamma": 0.95, "device": "cuda", "reward": {"beta": 0}}`
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadTrainConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultTrainConfig()
	want.Hidden = []int{64}
	want.Gamma = 0.95
	want.Device = DeviceCUDA
	want.Reward.Beta = 0
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

// A universal config without "hidden" gets UniversalHidden, whether
// "universal" is in the JSON or forced by ReadTrainConfigUniversal; one
// that sets hidden keeps it.
func TestUniversalHiddenDefault(t *testing.T) {
	for _, c := range []struct {
		name      string
		js        string
		universal bool
		want      []int
	}{
		{"plain", `{}`, false, []int{256, 256}},
		{"universal in the JSON", `{"universal": true}`, false, []int{128, 128}},
		{"forced", `{"gamma": 0.9}`, true, []int{128, 128}},
		{"forced over false", `{"universal": false}`, true, []int{128, 128}},
		{"hidden set", `{"universal": true, "hidden": [32]}`, false, []int{32}},
		{"hidden set, forced", `{"hidden": [32]}`, true, []int{32}},
	} {
		read := ReadTrainConfig
		if c.universal {
			read = ReadTrainConfigUniversal
		}
		got, err := read(strings.NewReader(c.js))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if wantU := c.universal || strings.Contains(c.js, "true"); got.Universal != wantU || !cmp.Equal(got.Hidden, c.want) {
			t.Errorf("%s (%s): universal %v, hidden %v; want %v, %v", c.name, c.js, got.Universal, got.Hidden, wantU, c.want)
		}
	}
}

func TestTrainConfigRefuses(t *testing.T) {
	for name, js := range map[string]string{
		"unknown field":     `{"gama": 0.9}`,
		"unknown reward":    `{"reward": {"betta": -1}}`,
		"gamma 1":           `{"gamma": 1}`,
		"empty hidden":      `{"hidden": []}`,
		"zero width":        `{"dynamics_hidden": [0]}`,
		"device":            `{"device": "tpu"}`,
		"batch":             `{"batch_size": 0}`,
		"horizon":           `{"dyna_horizon": 0}`,
		"positive beta":     `{"reward": {"beta": 0.5}}`,
		"held out 1":        `{"held_out": 1}`,
		"dyna without f":    `{"dynamics_epochs": 0}`,
		"trailing":          `{} {}`,
		"closing brace":     `{}}`,
		"negative lr":       `{"q_learning_rate": -1}`,
		"epsilon":           `{"rollout_epsilon": 2}`,
		"target period":     `{"target_update_period": 0}`,
		"not an object":     `[]`,
		"negative synth wt": `{"synthetic_weight": -1}`,
	} {
		if _, err := ReadTrainConfig(strings.NewReader(js)); err == nil {
			t.Errorf("%s (%s): no error", name, js)
		}
	}
	if _, err := LoadTrainConfig(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestReadShares(t *testing.T) {
	got, err := ReadShares([]byte(` {"A": 0.1, "F_EARLY": 2, "C": 0} `))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]float64{"A": 0.1, "F_EARLY": 2, "C": 0}; !cmp.Equal(got, want) {
		t.Errorf("ReadShares = %v, want %v", got, want)
	}
	for _, c := range []struct{ name, json, want string }{
		{"null", `null`, "training: read shares: null, want a JSON object of strategy name to share"},
		{"null share", `{"A": null}`, "share of A is null, want a number >= 0 (leave the strategy out for no episodes)"},
		{"duplicate", `{"A": 1, "B": 1, "A": 2}`, `"A" appears twice, want each strategy once`},
		{"array", `[1, 2]`, "training: read shares: an array, want a JSON object"},
		{"number", `1`, "training: read shares: a number, want a JSON object"},
		{"string share", `{"A": "1"}`, `share of "A": json: cannot unmarshal string into Go value of type float64, want a number >= 0`},
		{"unknown strategy", `{"A": 1, "Q": 2}`, `unknown collection strategy "Q"`},
		{"negative", `{"A": -1}`, "share of A is -1, want a finite number >= 0"},
		{"trailing", `{"A": 1} {"B": 1}`, "data after the object, want a JSON object"},
		{"empty", ``, "training: read shares: EOF, want a JSON object"},
		{"cut short", `{"A": 1`, "training: read shares: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := ReadShares([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) || m != nil {
				t.Errorf("ReadShares(%s) = %v, %v; want no shares and an error containing %q", c.json, m, err, c.want)
			}
		})
	}
}

func TestTrainConfigMonotone(t *testing.T) {
	c := DefaultTrainConfig()
	c.Monotone = 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "needs a universal Q-network") {
		t.Errorf("monotone on a per-fabric network: %v, want an error naming the universal network", err)
	}
	c.Universal = true
	if err := c.Validate(); err != nil {
		t.Errorf("monotone on a universal network: %v", err)
	}
	for _, v := range []float64{-1, math.Inf(1), math.NaN()} {
		c.Monotone = v
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "monotone") {
			t.Errorf("monotone %v: %v, want an error naming monotone", v, err)
		}
	}
}

// A train config file that is not a regular file is refused without
// blocking: os.Open blocked on a FIFO and io.ReadAll read /dev/zero until
// memory ran out.
func TestLoadTrainConfigRefusesNonRegular(t *testing.T) {
	fileutiltest.RefusesNonRegular(t, "train.json", func(path string) error {
		_, err := LoadTrainConfig(path)
		return err
	})
}

// A train config over 64 KiB is refused, read from a file or a reader.
func TestTrainConfigTooLarge(t *testing.T) {
	big := strings.Repeat(" ", maxTrainConfigBytes) + "{}"
	if _, err := ReadTrainConfig(strings.NewReader(big)); err == nil || !strings.Contains(err.Error(), "larger than 64 KiB") {
		t.Errorf("ReadTrainConfig of %d bytes: %v, want it refused as larger than 64 KiB", len(big), err)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTrainConfig(path); !errors.Is(err, fileutil.ErrTooLarge) || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadTrainConfig of %d bytes: %v, want fileutil.ErrTooLarge naming the file", len(big), err)
	}
	// 64 KiB exactly is read.
	if _, err := ReadTrainConfig(strings.NewReader(big[2:])); err != nil {
		t.Errorf("ReadTrainConfig of %d bytes: %v, want the default config", len(big)-2, err)
	}
}
