package training

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/jsonend"
)

// Devices a TrainConfig may name.
const (
	DeviceCPU  = "cpu"
	DeviceCUDA = "cuda"
)

// TrainConfig holds the settings of offline training (paper §IV-E): the
// dynamics model (Stage 1), fitted Q-iteration (Stage 2) and Dyna
// refinement (Stage 3). Start from DefaultTrainConfig; LoadTrainConfig reads
// a JSON file over the defaults. The package documentation gives the
// reasoning behind each default.
type TrainConfig struct {
	// Universal selects the universal Q-network (package documentation,
	// "Universal models"): one MLP with shared weights scores each
	// aggregation switch's candidate row (telemetry.CandidateLayout),
	// Q(s, k) = MLP(row_k), so the model runs on fabrics of any size and one
	// training run may take datasets of several sizes. Without it the
	// Q-network maps the whole state to |S| values and fits one fabric size.
	Universal bool `json:"universal"`
	// Hidden are the Q-network's hidden-layer widths. The default, [256,
	// 256], is qnet's default architecture; a universal Q-network, whose
	// input is one 41-value candidate row, defaults to UniversalHidden
	// ([128, 128]) when the config does not set hidden.
	Hidden []int `json:"hidden"`
	// DynamicsHidden are the dynamics model's hidden-layer widths.
	DynamicsHidden []int `json:"dynamics_hidden"`

	// QLearningRate and DynamicsLearningRate are the Adam step sizes.
	QLearningRate        float64 `json:"q_learning_rate"`
	DynamicsLearningRate float64 `json:"dynamics_learning_rate"`
	// BatchSize is the number of real transitions per gradient step.
	BatchSize int `json:"batch_size"`

	// Gamma is the discount factor γ ∈ (0, 1).
	Gamma float64 `json:"gamma"`
	// HuberDelta is the Huber loss threshold of the Bellman regression;
	// 0 selects the squared error.
	HuberDelta float64 `json:"huber_delta"`
	// TargetUpdatePeriod is the number of gradient steps between copies of
	// the Q-network into the target network: each copy starts a new fitted-Q
	// iteration, regressing on targets r + γ·max_a' Q_target(s', a').
	TargetUpdatePeriod int `json:"target_update_period"`

	// DynamicsEpochs is the number of passes over the dynamics training set
	// (Stage 1).
	DynamicsEpochs int `json:"dynamics_epochs"`
	// RerouteWindow selects the dynamics training set: the transitions at
	// most this many steps before or after a reroute in the same episode.
	RerouteWindow int `json:"reroute_window"`
	// MinDynamicsTransitions: when the window selects fewer transitions than
	// this, the dynamics model trains on all of them instead.
	MinDynamicsTransitions int `json:"min_dynamics_transitions"`

	// FQIEpochs is the number of passes over the real transitions in Stage 2.
	FQIEpochs int `json:"fqi_epochs"`
	// DynaEpochs is the number of passes over the real transitions in
	// Stage 3, each batch joined by synthetic transitions.
	DynaEpochs int `json:"dyna_epochs"`
	// DynaRollouts is the number of synthetic rollouts per batch that
	// continue past the first synthetic step; every batch also branches
	// once on every alternative action of every state.
	DynaRollouts int `json:"dyna_rollouts"`
	// DynaHorizon is the length, in steps, of those rollouts (1: branching
	// only).
	DynaHorizon int `json:"dyna_horizon"`
	// RolloutEpsilon is the probability that a rollout step takes a random
	// action instead of the greedy one.
	RolloutEpsilon float64 `json:"rollout_epsilon"`
	// SyntheticWeight scales the synthetic transitions' loss relative to the
	// real ones'.
	SyntheticWeight float64 `json:"synthetic_weight"`
	// PermuteSwitches relabels every training row (dynamics and Q stages)
	// with a random permutation of the aggregation switches (PermuteState):
	// the fabric is symmetric in its switches, the corpus is not, and
	// without it the networks learn its accidental preferences for one
	// switch. A universal Q-network is equivariant in the switches by
	// construction, so its Q stages skip the relabelling; the dynamics
	// models, full-state networks, still get it.
	PermuteSwitches bool `json:"permute_switches"`

	// HeldOut is the fraction of episodes held out for evaluation (one-step
	// dynamics error, Bellman error); 0 trains on everything.
	HeldOut float64 `json:"held_out"`
	// Seed seeds every random choice: weight initialisation, the split,
	// minibatches and rollouts.
	Seed uint64 `json:"seed"`
	// Device is "cpu" or "cuda".
	Device string `json:"device"`
	// CheckpointDir, when set, receives gotch checkpoints (VarStore files):
	// dynamics.ot and q.ot after every epoch, and q-fqi.ot and q-dyna.ot at
	// the end of Stages 2 and 3. Training on several datasets writes one
	// dynamics checkpoint per fabric, dynamics-SxL.ot (S switches, L
	// congestion leaves).
	CheckpointDir string `json:"checkpoint_dir"`

	// DecisionLag, when positive, fits the networks on the datasets'
	// Lagged copies: each transition's action is valued from the state
	// DecisionLag intervals before it takes effect, as behind a stability
	// gate of DecisionLag+1 votes, where a move comes that many intervals
	// after the first vote for it (proflow's; package documentation,
	// "Decision lag"). 0, the default, fits Q(s_t, a_t) as the paper does.
	DecisionLag int `json:"decision_lag,omitempty"`

	// Monotone, when positive, weighs proflow's destination-monotonicity
	// penalty of a universal Q-network (package documentation, "Universal
	// models"): each minibatch's destination rows (a candidate other than
	// the current switch) are copied with their own congestion features —
	// transmit rate, overflow, flow count, elephant rate, uplink backlog
	// and, in layouts that have it, the reserve deficit — raised by random
	// amounts, and Monotone·Σ max(0, Q(raised) − Q(row))/(|S|−1) is added
	// to the Q-network's loss: a destination more congested in every one
	// of those features should not score higher than the same destination
	// cleaner, in the same fabric. It orders destinations only; when to
	// move is still learnt from the rewards alone. 0, the default, is off.
	Monotone float64 `json:"monotone,omitempty"`

	// ParetoTargets, when set, takes the Bellman target's maximum over the
	// next state's current switch and the destinations no other switch
	// (nor the current one) beats on every one of its transmit rate,
	// overflow, flow count, elephant rate and backlog features at once: the
	// destinations policy.GateConfig.Pareto lets the controller move to, so
	// the value of the next state is that of moves the controller makes.
	// Off, the default, is the paper's maximum over every switch.
	ParetoTargets bool `json:"pareto_targets,omitempty"`

	// Reward holds the reward coefficients.
	Reward RewardConfig `json:"reward"`
}

// UniversalHidden returns the hidden-layer widths of a universal Q-network
// whose config does not set them: [128, 128].
func UniversalHidden() []int { return []int{128, 128} }

// DefaultTrainConfig returns the settings proflow trains with.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{
		Hidden:                 []int{256, 256},
		DynamicsHidden:         []int{256, 256},
		QLearningRate:          5e-4,
		DynamicsLearningRate:   1e-3,
		BatchSize:              256,
		Gamma:                  0.95,
		HuberDelta:             1,
		TargetUpdatePeriod:     250,
		DynamicsEpochs:         30,
		RerouteWindow:          20,
		MinDynamicsTransitions: 2000,
		FQIEpochs:              20,
		DynaEpochs:             10,
		DynaRollouts:           64,
		DynaHorizon:            3,
		RolloutEpsilon:         0.1,
		SyntheticWeight:        1,
		PermuteSwitches:        true,
		HeldOut:                0.1,
		Seed:                   1,
		Device:                 DeviceCPU,
		Reward:                 DefaultRewardConfig(),
	}
}

// Validate checks every setting and names each bad one.
func (c TrainConfig) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, l := range [...]struct {
		name string
		v    []int
	}{{"hidden", c.Hidden}, {"dynamics_hidden", c.DynamicsHidden}} {
		if len(l.v) == 0 {
			add("%s is empty, want at least one hidden layer width", l.name)
		}
		for i, w := range l.v {
			if w < 1 {
				add("%s[%d] is %d, want >= 1", l.name, i, w)
			}
		}
	}
	for _, f := range [...]struct {
		name string
		v    float64
	}{{"q_learning_rate", c.QLearningRate}, {"dynamics_learning_rate", c.DynamicsLearningRate}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			add("%s %v, want a positive finite number", f.name, f.v)
		}
	}
	if !(c.Gamma > 0 && c.Gamma < 1) {
		add("gamma %v, want 0 < gamma < 1", c.Gamma)
	}
	if !(c.HuberDelta >= 0) || math.IsInf(c.HuberDelta, 0) {
		add("huber_delta %v, want >= 0 (0: squared error)", c.HuberDelta)
	}
	for _, f := range [...]struct {
		name string
		v    int
		min  int
	}{
		{"batch_size", c.BatchSize, 1}, {"target_update_period", c.TargetUpdatePeriod, 1},
		{"dynamics_epochs", c.DynamicsEpochs, 0}, {"reroute_window", c.RerouteWindow, 0},
		{"min_dynamics_transitions", c.MinDynamicsTransitions, 0},
		{"fqi_epochs", c.FQIEpochs, 0}, {"dyna_epochs", c.DynaEpochs, 0},
		{"dyna_rollouts", c.DynaRollouts, 0}, {"dyna_horizon", c.DynaHorizon, 1},
		{"decision_lag", c.DecisionLag, 0},
	} {
		if f.v < f.min {
			add("%s %d, want >= %d", f.name, f.v, f.min)
		}
	}
	if !(c.Monotone >= 0) || math.IsInf(c.Monotone, 0) {
		add("monotone %v, want a finite number >= 0", c.Monotone)
	} else if c.Monotone > 0 && !c.Universal {
		add("monotone %v needs a universal Q-network (universal: true): it orders candidate rows", c.Monotone)
	}
	if c.DynaEpochs > 0 && c.DynamicsEpochs == 0 {
		add("dyna_epochs %d needs a dynamics model, but dynamics_epochs is 0", c.DynaEpochs)
	}
	if !(c.RolloutEpsilon >= 0 && c.RolloutEpsilon <= 1) {
		add("rollout_epsilon %v, want 0 <= epsilon <= 1", c.RolloutEpsilon)
	}
	if !(c.SyntheticWeight >= 0) || math.IsInf(c.SyntheticWeight, 0) {
		add("synthetic_weight %v, want a finite number >= 0", c.SyntheticWeight)
	}
	if !(c.HeldOut >= 0 && c.HeldOut < 1) {
		add("held_out %v, want 0 <= held_out < 1", c.HeldOut)
	}
	if c.Device != DeviceCPU && c.Device != DeviceCUDA {
		add("device %q, want %q or %q", c.Device, DeviceCPU, DeviceCUDA)
	}
	if err := c.Reward.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("training: invalid train config: %w", err)
	}
	return nil
}

// ReadTrainConfig decodes a JSON TrainConfig from r over the defaults:
// fields the JSON leaves out keep their DefaultTrainConfig values (in
// "reward" too), except that a universal config ("universal": true) without
// "hidden" gets UniversalHidden. Unknown fields are an error, so a misspelt
// setting is not silently ignored. The result is validated. Input of more
// than 64 KiB is refused.
func ReadTrainConfig(r io.Reader) (TrainConfig, error) {
	return readTrainConfig(r, false)
}

// ReadTrainConfigUniversal is ReadTrainConfig for a universal run, as
// proflow train -universal reads its config: Universal is on whatever the
// JSON says, and hidden defaults to UniversalHidden.
func ReadTrainConfigUniversal(r io.Reader) (TrainConfig, error) {
	return readTrainConfig(r, true)
}

// maxTrainConfigBytes bounds a train config (a few hundred bytes).
const maxTrainConfigBytes = 64 << 10

func readTrainConfig(r io.Reader, universal bool) (TrainConfig, error) {
	c := DefaultTrainConfig()
	data, err := io.ReadAll(io.LimitReader(r, maxTrainConfigBytes+1))
	if err != nil {
		return TrainConfig{}, fmt.Errorf("training: read train config: %w", err)
	}
	if len(data) > maxTrainConfigBytes {
		return TrainConfig{}, fmt.Errorf("training: read train config: larger than 64 KiB, want a JSON object of at most %d bytes", maxTrainConfigBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return TrainConfig{}, fmt.Errorf("training: read train config: %w", err)
	}
	if jsonend.End(dec) != nil {
		return TrainConfig{}, errors.New("training: read train config: trailing data after the JSON object")
	}
	c.Universal = c.Universal || universal
	if c.Universal {
		// The decoding succeeded, so data is one JSON object.
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(data, &keys)
		if _, set := keys["hidden"]; !set {
			c.Hidden = UniversalHidden()
		}
	}
	if err := c.Validate(); err != nil {
		return TrainConfig{}, err
	}
	return c, nil
}

// LoadTrainConfig reads the JSON TrainConfig file at path (see
// ReadTrainConfig), a regular file of at most 64 KiB.
func LoadTrainConfig(path string) (TrainConfig, error) {
	return loadTrainConfig(path, false)
}

// LoadTrainConfigUniversal reads the JSON TrainConfig file at path for a
// universal run (see ReadTrainConfigUniversal).
func LoadTrainConfigUniversal(path string) (TrainConfig, error) {
	return loadTrainConfig(path, true)
}

func loadTrainConfig(path string, universal bool) (TrainConfig, error) {
	// A regular file of at most 64 KiB: a FIFO would block os.Open and
	// /dev/zero would be read until memory runs out.
	data, err := fileutil.ReadFile(path, maxTrainConfigBytes)
	if err != nil {
		return TrainConfig{}, fmt.Errorf("training: load train config: %w", err)
	}
	c, err := readTrainConfig(bytes.NewReader(data), universal)
	if err != nil {
		return TrainConfig{}, fmt.Errorf("%w (file %s)", err, path)
	}
	return c, nil
}

// ReadShares decodes a JSON object of collection strategy shares (see
// CollectConfig.Shares), for example {"A": 0.1, "F_EARLY": 0.2}, and checks
// the names and values. It refuses what a plain JSON decoding would let
// pass silently: null for the object (which would select the default
// shares) or for a share, a strategy named twice (the last would win) and
// anything after the object.
func ReadShares(data []byte) (map[string]float64, error) {
	const want = `want a JSON object of strategy name to share, such as {"A": 0.1, "F_EARLY": 0.2}`
	fail := func(format string, a ...any) (map[string]float64, error) {
		return nil, fmt.Errorf("training: read shares: "+format, a...)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return fail("%v, %s", err, want)
	}
	if tok != json.Delim('{') {
		return fail("%s, %s", jsonKind(tok), want)
	}
	m := map[string]float64{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return fail("%v, %s", err, want)
		}
		name, _ := key.(string) // the decoder refuses a key that is not a string
		var v *float64
		if err := dec.Decode(&v); err != nil {
			return fail("share of %q: %v, want a number >= 0", name, err)
		}
		if _, dup := m[name]; dup {
			return fail("%q appears twice, want each strategy once", name)
		}
		if _, err := ParseStrategy(name); err != nil {
			return fail("%w", err)
		}
		switch {
		case v == nil:
			return fail("share of %s is null, want a number >= 0 (leave the strategy out for no episodes)", name)
		case *v < 0 || math.IsInf(*v, 0):
			return fail("share of %s is %v, want a finite number >= 0", name, *v)
		}
		m[name] = *v
	}
	if _, err := dec.Token(); err != nil {
		return fail("%v, %s", err, want)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("data after the object, %s", want)
	}
	return m, nil
}

// jsonKind names the JSON value that starts with token tok, which is not
// an object.
func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}
