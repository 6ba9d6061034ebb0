package training

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
