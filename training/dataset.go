package training

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/safetensors"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/telemetry"
)

// Transition is one real step (s_t, a_t, r_t, s_{t+1}) of an episode.
type Transition struct {
	// State is s_t, with the protected flow on Current.
	State []float32
	// Action is a_t, the switch the protected flow is on after the step
	// (Action == Current: it stayed; otherwise it was rerouted to Action).
	Action int
	// Reward is r_t.
	Reward float32
	// Next is s_{t+1}, with the protected flow on Action.
	Next []float32
	// Done marks a transition into a terminal state: no value is
	// bootstrapped from Next. An episode that merely ends (its recording
	// stopped) is not terminal, so its last transition is not Done; the
	// corpora this package builds have no terminal states (see "Episode
	// ends" in the package documentation).
	Done bool
	// Current is k*, the switch carrying the flow in State.
	Current int
	// Episode identifies the episode; Step is the interval index in it.
	Episode, Step int
	// ThroughputBaseline is the episode's φ0/Cφ (> 0): the synthetic reward
	// normalises predicted throughput by it.
	ThroughputBaseline float32
	// Inputs are the measured reward inputs, or nil when the reward was set
	// directly (then the dataset cannot be relabelled).
	Inputs *RewardInputs
}

// Dataset is a set of real transitions stored column-wise in flat arrays:
// row i of S and S2 is S[i*Dim() : (i+1)*Dim()]. Every slice has one entry
// (one row) per transition, except PhiNorm, OverflowHat and CrowdExcess,
// which are either all nil (rewards set directly) or all of full length (the
// RewardInputs of each transition; see Relabel), and Drain, Latency,
// AppLimited and Deficit, each nil or of full length as its comment says.
//
// Every reward input lives in a column of its own, never only in S2, so
// that a copy whose states are replaced (Lagged) keeps each transition's
// own inputs and relabels to the same rewards.
//
// The fields are exported so that trainers can hand the arrays to a tensor
// library without copying; Validate checks the invariants, and Append,
// Subset, Split, Relabel, Read and Write keep them.
type Dataset struct {
	// Encoder is the state encoder configuration the states were encoded
	// with; it fixes Dim and the layout.
	Encoder telemetry.EncoderConfig
	// Corpus describes where the data came from (free text, recorded in
	// trained models' metadata).
	Corpus string
	// Profile and ProfileDigest name the simulated world the data came from
	// (sim.Config.Name and Digest); empty for data from a real fabric.
	Profile, ProfileDigest string
	// Interval is the control interval between a transition's s_t and
	// s_{t+1} (sim.Config.Interval for collected data); 0 when unknown.
	// A model trained on the dataset records it (policy.ModelIntervalKey).
	Interval time.Duration

	// S holds the states s_t and S2 the next states s_{t+1}, Dim() values
	// per transition.
	S, S2 []float32
	// A holds the actions (the switch the flow is on after the step) and
	// Current the switch k* before it.
	A, Current []int32
	// R holds the rewards r_t.
	R []float32
	// Done marks the transitions into a terminal state (Transition.Done).
	Done []bool
	// Episode and Step hold each transition's episode id and interval index.
	Episode, Step []int32
	// Phi0 holds each transition's ThroughputBaseline, φ0/Cφ.
	Phi0 []float32
	// PhiNorm, OverflowHat and CrowdExcess hold the RewardInputs
	// (ThroughputNorm, Overflow, CrowdExcess) of each transition, or are all
	// nil when the dataset does not keep them.
	PhiNorm, OverflowHat, CrowdExcess []float32
	// Drain holds every transition's RewardInputs.Drain when the dataset
	// keeps reward inputs and was written with them (nil in datasets
	// written before the drain input existed).
	Drain []float32
	// Latency holds every transition's RewardInputs.Latency when the
	// dataset keeps reward inputs and its states are of a layout with the
	// latency feature (telemetry.StateLayoutV2 or V3); nil otherwise.
	Latency []float32
	// AppLimited holds every transition's RewardInputs.AppLimited (the
	// outcome state's telemetry.FeatureAppLimited, which
	// RewardConfig.Served reads) when the dataset keeps reward inputs and
	// its states are of a layout with flow signals
	// (telemetry.EncoderConfig.HasFlowSignals); nil otherwise. A dataset
	// that keeps reward inputs of such a layout but lacks the column (one
	// whose column was set to nil) reads the input from S2, which is the
	// outcome state only until the states are replaced: ReadDataset and
	// Lagged fill the column from S2 first.
	AppLimited []float32
	// Deficit holds every transition's RewardInputs.Deficit (the outcome
	// state's telemetry.FeatureDeficit of the switch the flow is on after
	// the step, which RewardConfig.DeficitDrain reads) when the dataset
	// keeps reward inputs and its states are of a layout with the deficit
	// (telemetry.EncoderConfig.HasDeficit); nil otherwise, read from S2
	// where missing as AppLimited is.
	Deficit []float32

	rewardInputs bool // whether PhiNorm, OverflowHat and CrowdExcess are kept
}

// NewDataset returns an empty dataset for states encoded with enc. With
// rewardInputs set it keeps every transition's RewardInputs, so it can be
// relabelled (and Append then refuses a transition without them).
func NewDataset(enc telemetry.EncoderConfig, corpus string, rewardInputs bool) (*Dataset, error) {
	if err := enc.Validate(); err != nil {
		return nil, fmt.Errorf("training: new dataset: %w", err)
	}
	d := &Dataset{Encoder: enc, Corpus: corpus, rewardInputs: rewardInputs}
	if rewardInputs {
		d.Drain = []float32{}
		if enc.HasFlowSignals() {
			d.Latency, d.AppLimited = []float32{}, []float32{}
		}
		if enc.HasDeficit() {
			d.Deficit = []float32{}
		}
	}
	return d, nil
}

// Dim returns the state dimension.
func (d *Dataset) Dim() int { return d.Encoder.Dim() }

// NumSwitches returns |S|, the number of actions.
func (d *Dataset) NumSwitches() int { return d.Encoder.NumSwitches }

// Len returns the number of transitions.
func (d *Dataset) Len() int { return len(d.A) }

// HasRewardInputs reports whether the dataset keeps RewardInputs and can be
// relabelled.
func (d *Dataset) HasRewardInputs() bool { return d.rewardInputs }

// Append adds t after checking it against the dataset's layout.
func (d *Dataset) Append(t Transition) error {
	if err := d.checkTransition(t); err != nil {
		return fmt.Errorf("training: append transition %d: %w", d.Len(), err)
	}
	d.S = append(d.S, t.State...)
	d.S2 = append(d.S2, t.Next...)
	d.A = append(d.A, int32(t.Action))
	d.Current = append(d.Current, int32(t.Current))
	d.R = append(d.R, t.Reward)
	d.Done = append(d.Done, t.Done)
	d.Episode = append(d.Episode, int32(t.Episode))
	d.Step = append(d.Step, int32(t.Step))
	d.Phi0 = append(d.Phi0, t.ThroughputBaseline)
	if d.rewardInputs {
		d.PhiNorm = append(d.PhiNorm, float32(t.Inputs.ThroughputNorm))
		d.OverflowHat = append(d.OverflowHat, float32(t.Inputs.Overflow))
		d.CrowdExcess = append(d.CrowdExcess, float32(t.Inputs.CrowdExcess))
		if d.Drain != nil {
			d.Drain = append(d.Drain, float32(t.Inputs.Drain))
		}
		if d.Latency != nil {
			d.Latency = append(d.Latency, float32(t.Inputs.Latency))
		}
		if d.AppLimited != nil {
			d.AppLimited = append(d.AppLimited, float32(t.Inputs.AppLimited))
		}
		if d.Deficit != nil {
			d.Deficit = append(d.Deficit, float32(t.Inputs.Deficit))
		}
	}
	return nil
}

func (d *Dataset) checkTransition(t Transition) error {
	dim, nS := d.Dim(), d.NumSwitches()
	switch {
	case len(t.State) != dim || len(t.Next) != dim:
		return fmt.Errorf("states of %d and %d values, want %d", len(t.State), len(t.Next), dim)
	case t.Action < 0 || t.Action >= nS:
		return fmt.Errorf("action %d, want a switch 0..%d", t.Action, nS-1)
	case t.Current < 0 || t.Current >= nS:
		return fmt.Errorf("current switch %d, want 0..%d", t.Current, nS-1)
	case t.Episode < 0 || t.Episode > math.MaxInt32 || t.Step < 0 || t.Step > math.MaxInt32:
		return fmt.Errorf("episode %d step %d, want non-negative 32-bit integers", t.Episode, t.Step)
	case !finite32(t.Reward):
		return fmt.Errorf("reward %v, want a finite number", t.Reward)
	case !(t.ThroughputBaseline > 0) || !finite32(t.ThroughputBaseline):
		return fmt.Errorf("throughput baseline %v, want φ0/Cφ > 0", t.ThroughputBaseline)
	case d.rewardInputs && t.Inputs == nil:
		return errors.New("no reward inputs, but the dataset keeps them")
	}
	if i := nonFinite32(t.State); i >= 0 {
		return fmt.Errorf("state[%d] is %v, want finite values", i, t.State[i])
	}
	if i := nonFinite32(t.Next); i >= 0 {
		return fmt.Errorf("next state[%d] is %v, want finite values", i, t.Next[i])
	}
	if k, err := Placement(d.Encoder, t.State); err != nil || k != t.Current {
		return fmt.Errorf("state's placement one-hot %v does not mark current switch %d", t.State[d.Encoder.PlacementOffset():][:nS], t.Current)
	}
	if k, err := Placement(d.Encoder, t.Next); err != nil || k != t.Action {
		return fmt.Errorf("next state's placement one-hot %v does not mark action %d", t.Next[d.Encoder.PlacementOffset():][:nS], t.Action)
	}
	return nil
}

// At returns a copy of transition i.
func (d *Dataset) At(i int) Transition {
	t := d.row(i)
	t.State = append([]float32(nil), t.State...)
	t.Next = append([]float32(nil), t.Next...)
	return t
}

// row returns transition i with State and Next sharing the dataset's
// arrays: for reading only (validate checks every row without copying it).
func (d *Dataset) row(i int) Transition {
	dim := d.Dim()
	t := Transition{
		State:  d.S[i*dim : (i+1)*dim],
		Next:   d.S2[i*dim : (i+1)*dim],
		Action: int(d.A[i]), Current: int(d.Current[i]), Reward: d.R[i], Done: d.Done[i],
		Episode: int(d.Episode[i]), Step: int(d.Step[i]), ThroughputBaseline: d.Phi0[i],
	}
	if d.rewardInputs {
		t.Inputs = d.inputs(i)
	}
	return t
}

// IsReroute reports whether transition i moves the flow (A ≠ Current).
func (d *Dataset) IsReroute(i int) bool { return d.A[i] != d.Current[i] }

// Episodes returns the distinct episode ids, in order of first appearance.
func (d *Dataset) Episodes() []int32 {
	seen := make(map[int32]bool)
	var ids []int32
	for _, e := range d.Episode {
		if !seen[e] {
			seen[e] = true
			ids = append(ids, e)
		}
	}
	return ids
}

// ModelExtra returns what a model trained on d records about the data in
// its metadata (qnet.Metadata.Extra), beyond the encoder: the control
// interval under policy.ModelIntervalKey, when d records one. A model
// without it is taken as trained at the paper's 500 ms.
func (d *Dataset) ModelExtra() map[string]string {
	extra := map[string]string{}
	if d.Interval > 0 {
		extra[policy.ModelIntervalKey] = d.Interval.String()
	}
	return extra
}

// Subset returns a new dataset holding transitions idx, in that order.
func (d *Dataset) Subset(idx []int) *Dataset {
	dim := d.Dim()
	out := &Dataset{Encoder: d.Encoder, Corpus: d.Corpus, Profile: d.Profile, ProfileDigest: d.ProfileDigest, Interval: d.Interval, rewardInputs: d.rewardInputs}
	n := len(idx)
	out.S, out.S2 = make([]float32, 0, n*dim), make([]float32, 0, n*dim)
	for _, i := range idx {
		out.S = append(out.S, d.S[i*dim:(i+1)*dim]...)
		out.S2 = append(out.S2, d.S2[i*dim:(i+1)*dim]...)
		out.A = append(out.A, d.A[i])
		out.Current = append(out.Current, d.Current[i])
		out.R = append(out.R, d.R[i])
		out.Done = append(out.Done, d.Done[i])
		out.Episode = append(out.Episode, d.Episode[i])
		out.Step = append(out.Step, d.Step[i])
		out.Phi0 = append(out.Phi0, d.Phi0[i])
		if d.rewardInputs {
			out.PhiNorm = append(out.PhiNorm, d.PhiNorm[i])
			out.OverflowHat = append(out.OverflowHat, d.OverflowHat[i])
			out.CrowdExcess = append(out.CrowdExcess, d.CrowdExcess[i])
			if d.Drain != nil {
				out.Drain = append(out.Drain, d.Drain[i])
			}
			if d.Latency != nil {
				out.Latency = append(out.Latency, d.Latency[i])
			}
			if d.AppLimited != nil {
				out.AppLimited = append(out.AppLimited, d.AppLimited[i])
			}
			if d.Deficit != nil {
				out.Deficit = append(out.Deficit, d.Deficit[i])
			}
		}
	}
	return out
}

// Split divides the dataset by episode: a fraction frac of the episodes,
// drawn with rng, goes to held (at least one when frac > 0 and there are at
// least two episodes; never all of them), the rest to train. Transitions keep
// their order. frac must be in [0, 1).
func (d *Dataset) Split(frac float64, rng *rand.Rand) (train, held *Dataset, err error) {
	ti, hi, err := d.SplitIndices(frac, rng)
	if err != nil {
		return nil, nil, err
	}
	return d.Subset(ti), d.Subset(hi), nil
}

// SplitIndices is Split returning the indices of each part's transitions,
// in order, instead of the parts: with the same rng it divides the
// episodes as Split does.
func (d *Dataset) SplitIndices(frac float64, rng *rand.Rand) (train, held []int, err error) {
	if !(frac >= 0 && frac < 1) {
		return nil, nil, fmt.Errorf("training: split: held-out fraction %v, want 0 <= frac < 1", frac)
	}
	if rng == nil {
		return nil, nil, errors.New("training: split: nil rng")
	}
	eps := d.Episodes()
	nHeld := int(math.Round(frac * float64(len(eps))))
	if frac > 0 && nHeld == 0 {
		nHeld = 1
	}
	nHeld = min(nHeld, len(eps)-1)
	nHeld = max(nHeld, 0)
	perm := rng.Perm(len(eps))
	isHeld := make(map[int32]bool, nHeld)
	for _, p := range perm[:nHeld] {
		isHeld[eps[p]] = true
	}
	for i, e := range d.Episode {
		if isHeld[e] {
			held = append(held, i)
		} else {
			train = append(train, i)
		}
	}
	return train, held, nil
}

// Relabel recomputes every reward from the kept RewardInputs with c (Eq. 4).
// It fails on a dataset without reward inputs.
func (d *Dataset) Relabel(c RewardConfig) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("training: relabel: %w", err)
	}
	if !d.rewardInputs {
		return errors.New("training: relabel: the dataset has no reward inputs (its rewards were set directly)")
	}
	if c.Kappa != 0 && d.Drain == nil && d.Len() > 0 {
		return fmt.Errorf("training: relabel: kappa %v needs the drain input, which this dataset does not keep (collect it again)", c.Kappa)
	}
	if c.CrowdDrain && d.Drain == nil && d.Len() > 0 {
		return errors.New("training: relabel: crowd_drain needs the drain input, which this dataset does not keep (collect it again)")
	}
	if c.Served && !d.Encoder.HasFlowSignals() && d.Len() > 0 {
		return fmt.Errorf("training: relabel: served needs the app-limited feature, which only states of layouts %s to %s have (collect with -layout %s)", telemetry.StateLayoutV2, telemetry.StateLayoutV8, telemetry.StateLayoutV2)
	}
	if c.DeficitDrain && !d.Encoder.HasDeficit() && d.Len() > 0 {
		return fmt.Errorf("training: relabel: deficit_drain needs the deficit feature, which only states of layouts %s and %s have (collect with -layout %s)", telemetry.StateLayoutV3, telemetry.StateLayoutV5, telemetry.StateLayoutV3)
	}
	if c.Lambda != 0 && d.Latency == nil && d.Len() > 0 {
		return fmt.Errorf("training: relabel: lambda %v needs the latency input, which only a dataset of layouts %s to %s keeps (collect with -layout %s)", c.Lambda, telemetry.StateLayoutV2, telemetry.StateLayoutV8, telemetry.StateLayoutV2)
	}
	for i := range d.R {
		d.R[i] = float32(c.Real(*d.inputs(i)))
	}
	return nil
}

// inputs returns transition i's RewardInputs (Drain and Latency 0 where
// not kept; AppLimited and Deficit 0 in layouts without them, and read from
// S2 where their column is missing).
func (d *Dataset) inputs(i int) *RewardInputs {
	in := &RewardInputs{ThroughputNorm: float64(d.PhiNorm[i]), Overflow: float64(d.OverflowHat[i]), CrowdExcess: float64(d.CrowdExcess[i])}
	if d.Drain != nil {
		in.Drain = float64(d.Drain[i])
	}
	if d.Latency != nil {
		in.Latency = float64(d.Latency[i])
	}
	switch {
	case d.AppLimited != nil:
		in.AppLimited = float64(d.AppLimited[i])
	case d.Encoder.HasFlowSignals():
		in.AppLimited = float64(d.nextAppLimited(i))
	}
	switch {
	case d.Deficit != nil:
		in.Deficit = float64(d.Deficit[i])
	case d.Encoder.HasDeficit():
		in.Deficit = float64(d.nextDeficit(i))
	}
	return in
}

// nextAppLimited returns the application-limited feature of transition i's
// next state (RewardInputs.AppLimited while S2 holds the outcome states).
func (d *Dataset) nextAppLimited(i int) float32 {
	return d.S2[i*d.Dim()+d.Encoder.FlowOffset()+telemetry.FeatureAppLimited]
}

// nextDeficit returns the deficit feature of the switch transition i ends
// on in its next state (RewardInputs.Deficit while S2 holds the outcome
// states).
func (d *Dataset) nextDeficit(i int) float32 {
	return d.S2[i*d.Dim()+d.Encoder.AggOffset(int(d.A[i]))+telemetry.FeatureDeficit]
}

// fillOutcomeInputs gives a dataset that keeps reward inputs the
// AppLimited and Deficit columns its layout has and it lacks (a file
// written before they existed), read from S2, which must still hold the
// outcome states: as FromEpisodes measured them.
func (d *Dataset) fillOutcomeInputs() {
	if !d.rewardInputs {
		return
	}
	n := d.Len()
	if d.AppLimited == nil && d.Encoder.HasFlowSignals() {
		d.AppLimited = make([]float32, n)
		for i := range n {
			d.AppLimited[i] = d.nextAppLimited(i)
		}
	}
	if d.Deficit == nil && d.Encoder.HasDeficit() {
		d.Deficit = make([]float32, n)
		for i := range n {
			d.Deficit[i] = d.nextDeficit(i)
		}
	}
}

// Stats summarises a dataset.
type Stats struct {
	// Transitions, Episodes, Reroutes and Done count the transitions, the
	// distinct episodes, the transitions with A ≠ Current and those marked
	// Done.
	Transitions, Episodes, Reroutes, Done int
	// MeanReward, MinReward and MaxReward describe R (0 for an empty set).
	MeanReward, MinReward, MaxReward float64
}

// Stats returns counts and reward statistics.
func (d *Dataset) Stats() Stats {
	s := Stats{Transitions: d.Len(), Episodes: len(d.Episodes())}
	for i := range d.A {
		if d.IsReroute(i) {
			s.Reroutes++
		}
		if d.Done[i] {
			s.Done++
		}
		r := float64(d.R[i])
		s.MeanReward += r
		if i == 0 || r < s.MinReward {
			s.MinReward = r
		}
		if i == 0 || r > s.MaxReward {
			s.MaxReward = r
		}
	}
	if s.Transitions > 0 {
		s.MeanReward /= float64(s.Transitions)
	}
	return s
}

// String describes the statistics on one line.
func (s Stats) String() string {
	return fmt.Sprintf("%d transitions, %d episodes, %d reroutes, reward mean %.3f in [%.3f, %.3f]",
		s.Transitions, s.Episodes, s.Reroutes, s.MeanReward, s.MinReward, s.MaxReward)
}

// Validate checks the invariants: the encoder configuration, one entry per
// transition in every column (S and S2 Dim() per transition), actions and
// current switches in range and matching the states' placement one-hots,
// finite values, positive throughput baselines, and either all or none of
// the reward-input columns.
func (d *Dataset) Validate() error {
	if err := d.validate(); err != nil {
		return fmt.Errorf("training: invalid dataset: %w", err)
	}
	return nil
}

func (d *Dataset) validate() error {
	if err := d.Encoder.Validate(); err != nil {
		return err
	}
	n, dim := d.Len(), d.Dim()
	for _, c := range [...]struct {
		name string
		got  int
	}{
		{"current", len(d.Current)}, {"rewards", len(d.R)}, {"done", len(d.Done)}, {"episodes", len(d.Episode)},
		{"steps", len(d.Step)}, {"throughput_baseline", len(d.Phi0)},
	} {
		if c.got != n {
			return fmt.Errorf("%s has %d entries, want one per transition (%d)", c.name, c.got, n)
		}
	}
	if len(d.S) != n*dim || len(d.S2) != n*dim {
		return fmt.Errorf("states have %d and %d values, want %d transitions × %d", len(d.S), len(d.S2), n, dim)
	}
	haveInputs := d.PhiNorm != nil || d.OverflowHat != nil || d.CrowdExcess != nil
	if haveInputs != d.rewardInputs {
		return fmt.Errorf("reward-input columns present: %v, but the dataset says %v", haveInputs, d.rewardInputs)
	}
	if d.rewardInputs && (len(d.PhiNorm) != n || len(d.OverflowHat) != n || len(d.CrowdExcess) != n) {
		return fmt.Errorf("reward inputs have %d, %d and %d entries, want %d", len(d.PhiNorm), len(d.OverflowHat), len(d.CrowdExcess), n)
	}
	if d.Latency != nil && (!d.rewardInputs || len(d.Latency) != n || !d.Encoder.HasFlowSignals()) {
		return fmt.Errorf("latency has %d entries (reward inputs kept: %v, layout %s), want one per transition (%d) in a dataset of layout %s or %s that keeps reward inputs", len(d.Latency), d.rewardInputs, d.Encoder.LayoutName(), n, telemetry.StateLayoutV2, telemetry.StateLayoutV3)
	}
	if d.Drain != nil && (!d.rewardInputs || len(d.Drain) != n) {
		return fmt.Errorf("drain has %d entries (reward inputs kept: %v), want one per transition (%d) in a dataset that keeps reward inputs", len(d.Drain), d.rewardInputs, n)
	}
	if d.AppLimited != nil && (!d.rewardInputs || len(d.AppLimited) != n || !d.Encoder.HasFlowSignals()) {
		return fmt.Errorf("app_limited has %d entries (reward inputs kept: %v, layout %s), want one per transition (%d) in a dataset of layout %s to %s that keeps reward inputs", len(d.AppLimited), d.rewardInputs, d.Encoder.LayoutName(), n, telemetry.StateLayoutV2, telemetry.StateLayoutV8)
	}
	if d.Deficit != nil && (!d.rewardInputs || len(d.Deficit) != n || !d.Encoder.HasDeficit()) {
		return fmt.Errorf("deficit has %d entries (reward inputs kept: %v, layout %s), want one per transition (%d) in a dataset of layout %s or %s that keeps reward inputs", len(d.Deficit), d.rewardInputs, d.Encoder.LayoutName(), n, telemetry.StateLayoutV3, telemetry.StateLayoutV5)
	}
	for i := range n {
		t := d.row(i)
		if err := d.checkTransition(t); err != nil {
			return fmt.Errorf("transition %d: %w", i, err)
		}
		if d.rewardInputs {
			for _, v := range [...]float64{t.Inputs.ThroughputNorm, t.Inputs.Overflow, t.Inputs.CrowdExcess} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("transition %d: reward inputs %+v, want finite values", i, *t.Inputs)
				}
			}
		}
	}
	return nil
}

// The dataset file format. See the package documentation.
const (
	// DatasetFormat is the "format" metadata value of a dataset file.
	DatasetFormat = "proflow-dataset"
	// DatasetFormatVersion is the "format_version" this package writes. It
	// also reads version "1" (see ReadDataset).
	DatasetFormatVersion = "2"
	// datasetFormatVersion1 marked the last transition of every episode done,
	// time cut-offs included.
	datasetFormatVersion1 = "1"
	// MaxDatasetBytes bounds the data section Read accepts (16 GiB).
	MaxDatasetBytes = 16 << 30
)

// Write writes the dataset to w in the dataset file format.
func (d *Dataset) Write(w io.Writer) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("training: write dataset: %w", err)
	}
	enc, err := json.Marshal(d.Encoder)
	if err != nil {
		return fmt.Errorf("training: write dataset: encoder: %w", err)
	}
	n, dim := int64(d.Len()), int64(d.Dim())
	meta := map[string]string{
		"format":         DatasetFormat,
		"format_version": DatasetFormatVersion,
		"encoder":        string(enc),
		"state_layout":   d.Encoder.LayoutName(),
		"transitions":    strconv.FormatInt(n, 10),
		"reward_inputs":  strconv.FormatBool(d.rewardInputs),
	}
	if d.Corpus != "" {
		meta["corpus"] = d.Corpus
	}
	if d.Profile != "" || d.ProfileDigest != "" {
		meta["profile"], meta["profile_digest"] = d.Profile, d.ProfileDigest
	}
	if d.Interval > 0 {
		meta["interval"] = d.Interval.String()
	}
	done := make([]byte, n)
	for i, v := range d.Done {
		if v {
			done[i] = 1
		}
	}
	vec := []int64{n}
	tensors := []safetensors.Tensor{
		safetensors.Float32s("states", []int64{n, dim}, d.S),
		safetensors.Float32s("next_states", []int64{n, dim}, d.S2),
		safetensors.Int32s("actions", vec, d.A),
		safetensors.Int32s("current", vec, d.Current),
		safetensors.Float32s("rewards", vec, d.R),
		safetensors.Bytes("done", vec, done),
		safetensors.Int32s("episodes", vec, d.Episode),
		safetensors.Int32s("steps", vec, d.Step),
		safetensors.Float32s("throughput_baseline", vec, d.Phi0),
	}
	if d.rewardInputs {
		tensors = append(tensors,
			safetensors.Float32s("throughput_norm", vec, d.PhiNorm),
			safetensors.Float32s("overflow", vec, d.OverflowHat),
			safetensors.Float32s("crowd_excess", vec, d.CrowdExcess))
		if d.Drain != nil {
			tensors = append(tensors, safetensors.Float32s("drain", vec, d.Drain))
		}
		if d.Latency != nil {
			tensors = append(tensors, safetensors.Float32s("latency", vec, d.Latency))
		}
		if d.AppLimited != nil {
			tensors = append(tensors, safetensors.Float32s("app_limited", vec, d.AppLimited))
		}
		if d.Deficit != nil {
			tensors = append(tensors, safetensors.Float32s("deficit", vec, d.Deficit))
		}
	}
	if err := safetensors.Write(w, meta, tensors); err != nil {
		return fmt.Errorf("training: write dataset: %w", err)
	}
	return nil
}

// ReadDataset reads a dataset file written by Write and validates it.
//
// It also reads format version "1", whose done column marked the last
// transition of every episode although the episode had only been cut off
// (its recording stopped): such a file is read with every Done false, as
// version "2" writes the same corpus. No terminal state is lost: the
// corpora version 1 files hold have none.
func ReadDataset(r io.Reader) (*Dataset, error) {
	d, err := readDataset(r)
	if err != nil {
		return nil, fmt.Errorf("training: read dataset: %w", err)
	}
	return d, nil
}

func readDataset(r io.Reader) (*Dataset, error) {
	meta, tensors, err := safetensors.Read(r, MaxDatasetBytes)
	if err != nil {
		return nil, err
	}
	if f := meta["format"]; f != DatasetFormat {
		return nil, fmt.Errorf("format %s, want %q", safetensors.Quote(f), DatasetFormat)
	}
	version := meta["format_version"]
	if version != DatasetFormatVersion && version != datasetFormatVersion1 {
		return nil, fmt.Errorf("format_version %s, want %q (or %q, read with no transition done)", safetensors.Quote(version), DatasetFormatVersion, datasetFormatVersion1)
	}
	if l := meta["state_layout"]; !telemetry.KnownLayout(l) {
		return nil, fmt.Errorf("state_layout %s, want %s", safetensors.Quote(l), telemetry.Layouts())
	}
	d := &Dataset{Corpus: meta["corpus"], Profile: meta["profile"], ProfileDigest: meta["profile_digest"]}
	if s, ok := meta["interval"]; ok {
		if d.Interval, err = time.ParseDuration(s); err != nil || d.Interval <= 0 {
			return nil, fmt.Errorf("interval %s, want a positive Go duration such as 500ms", safetensors.Quote(s))
		}
	}
	if d.Encoder, err = decodeEncoder(meta["encoder"]); err != nil {
		return nil, err
	}
	if err := d.Encoder.Validate(); err != nil {
		return nil, err
	}
	if l := meta["state_layout"]; d.Encoder.LayoutName() != l {
		return nil, fmt.Errorf("state_layout %q, but the encoder writes %q", l, d.Encoder.LayoutName())
	}
	if d.rewardInputs, err = strconv.ParseBool(meta["reward_inputs"]); err != nil {
		return nil, fmt.Errorf("reward_inputs %s, want true or false", safetensors.Quote(meta["reward_inputs"]))
	}
	n64, err := strconv.ParseInt(meta["transitions"], 10, 64)
	if err != nil || n64 < 0 {
		return nil, fmt.Errorf("transitions %s, want a non-negative integer", safetensors.Quote(meta["transitions"]))
	}
	n, dim := n64, int64(d.Dim())
	want := []string{"states", "next_states", "actions", "current", "rewards", "done", "episodes", "steps", "throughput_baseline"}
	if d.rewardInputs {
		want = append(want, "throughput_norm", "overflow", "crowd_excess", "drain", "latency", "app_limited", "deficit")
	}
	for name := range tensors {
		if !slices.Contains(want, name) {
			return nil, fmt.Errorf("unexpected tensor %s, want only %s", safetensors.Quote(name), strings.Join(want, ", "))
		}
	}
	get := func(name, dtype string, shape ...int64) (safetensors.Tensor, error) {
		t, ok := tensors[name]
		if !ok {
			return t, fmt.Errorf("missing tensor %q", name)
		}
		if t.DType != dtype || !slices.Equal(t.Shape, shape) {
			return t, fmt.Errorf("tensor %s is %s %v, want %s %v", name, t.DType, t.Shape, dtype, shape)
		}
		return t, nil
	}
	f32 := func(dst *[]float32, name string, shape ...int64) error {
		t, err := get(name, safetensors.F32, shape...)
		if err == nil {
			*dst, err = t.AsFloat32s()
		}
		return err
	}
	i32 := func(dst *[]int32, name string) error {
		t, err := get(name, safetensors.I32, n)
		if err == nil {
			*dst, err = t.AsInt32s()
		}
		return err
	}
	errs := []error{
		f32(&d.S, "states", n, dim), f32(&d.S2, "next_states", n, dim),
		i32(&d.A, "actions"), i32(&d.Current, "current"), f32(&d.R, "rewards", n),
		i32(&d.Episode, "episodes"), i32(&d.Step, "steps"), f32(&d.Phi0, "throughput_baseline", n),
	}
	if d.rewardInputs {
		errs = append(errs, f32(&d.PhiNorm, "throughput_norm", n), f32(&d.OverflowHat, "overflow", n),
			f32(&d.CrowdExcess, "crowd_excess", n))
		if _, ok := tensors["drain"]; ok {
			errs = append(errs, f32(&d.Drain, "drain", n))
		}
		for _, c := range [...]struct {
			dst  *[]float32
			name string
		}{{&d.Latency, "latency"}, {&d.AppLimited, "app_limited"}, {&d.Deficit, "deficit"}} {
			if _, ok := tensors[c.name]; ok {
				errs = append(errs, f32(c.dst, c.name, n))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	done, err := get("done", safetensors.U8, n)
	if err != nil {
		return nil, err
	}
	d.Done = make([]bool, n)
	for i, b := range done.Data {
		switch b {
		case 0:
		case 1:
			d.Done[i] = true
		default:
			return nil, fmt.Errorf("done[%d] is %d, want 0 or 1", i, b)
		}
	}
	if version == datasetFormatVersion1 {
		clear(d.Done) // version 1 marked cut-offs, not terminal states
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	// A file written before the app_limited and deficit columns existed
	// has those inputs only in its next states (the outcome states: no
	// command saves a Lagged copy).
	d.fillOutcomeInputs()
	return d, nil
}

// LoadDataset reads the dataset file at path.
func LoadDataset(path string) (*Dataset, error) {
	f, err := fileutil.Open(path)
	if err != nil {
		return nil, fmt.Errorf("training: load dataset: %w", err)
	}
	defer f.Close()
	d, err := readDataset(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("training: load dataset %s: %w", path, err)
	}
	return d, nil
}

// Save writes the dataset to path atomically (a temporary file renamed over
// path).
func (d *Dataset) Save(path string) error {
	return atomicWrite(path, func(w io.Writer) error { return d.Write(w) })
}

// atomicWrite replaces path with what write produces (fileutil.WriteAtomic).
func atomicWrite(path string, write func(io.Writer) error) error {
	if err := fileutil.WriteAtomic(path, write); err != nil {
		return fmt.Errorf("training: save: %w", err)
	}
	return nil
}

// decodeEncoder parses the "encoder" metadata value of a dataset or
// dynamics-model file, refusing unknown fields.
func decodeEncoder(s string) (telemetry.EncoderConfig, error) {
	var enc telemetry.EncoderConfig
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&enc); err != nil {
		return enc, fmt.Errorf("encoder %s: %s", safetensors.Quote(s), safetensors.Clip(err.Error()))
	}
	return enc, nil
}

func finite32(v float32) bool {
	f := float64(v)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

func nonFinite32(v []float32) int {
	for i, x := range v {
		if !finite32(x) {
			return i
		}
	}
	return -1
}
