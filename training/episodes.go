package training

import (
	"errors"
	"fmt"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// Episode is the raw record of one episode, as a trace stores it: the
// telemetry sample of every interval and where the protected flow was.
type Episode struct {
	// ID identifies the episode in the dataset (Transition.Episode).
	ID int
	// Baseline is the episode's baseline: ξ̄ and n̄ for the state encoding,
	// φ0 and n̄ for the rewards.
	Baseline proflow.Baseline
	// Observations holds o_0 … o_T, one per interval, in order.
	Observations []proflow.Observation
	// Placements[t] is the switch carrying the protected flow when
	// Observations[t] was sampled; Placements[t+1] is therefore the action
	// taken after o_t (the flow stays when they are equal).
	Placements []int
}

// FromEpisodes builds a dataset from raw episodes: each episode's
// observations are encoded in order with a fresh telemetry.Encoder for enc
// holding the episode's baseline, and every pair of consecutive intervals
// becomes a transition (s_t, a_t = Placements[t+1], r_t, s_{t+1}). No
// transition is Done, the last one of an episode included: an episode ends
// because its recording stopped (a time cut-off), not in a terminal state,
// so its last transition bootstraps from s_{t+1} like any other (see
// "Episode ends" in the package documentation). Rewards are Eq. 4 with c,
// from MeasureReward on o_{t+1}; the dataset keeps the reward inputs, so it
// can be relabelled. Transition.ThroughputBaseline is φ0/Cφ.
func FromEpisodes(episodes []Episode, enc telemetry.EncoderConfig, c RewardConfig, corpus string) (*Dataset, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("training: from episodes: %w", err)
	}
	ds, err := NewDataset(enc, corpus, true)
	if err != nil {
		return nil, fmt.Errorf("training: from episodes: %w", err)
	}
	e, err := telemetry.NewEncoder(enc)
	if err != nil {
		return nil, fmt.Errorf("training: from episodes: %w", err)
	}
	for _, ep := range episodes {
		if err := addEpisode(ds, e, ep, c); err != nil {
			return nil, fmt.Errorf("training: from episodes: episode %d: %w", ep.ID, err)
		}
	}
	return ds, nil
}

func addEpisode(ds *Dataset, e *telemetry.Encoder, ep Episode, c RewardConfig) error {
	if len(ep.Placements) != len(ep.Observations) {
		return fmt.Errorf("%d placements for %d observations, want one each", len(ep.Placements), len(ep.Observations))
	}
	if len(ep.Observations) < 2 {
		return errors.New("fewer than two observations: no transition")
	}
	if err := ep.Baseline.Validate(); err != nil {
		return err
	}
	enc := ds.Encoder
	e.Reset()
	if err := e.SetBaseline(ep.Baseline); err != nil {
		return err
	}
	phi0 := float32(ep.Baseline.Throughput / enc.ThroughputScale)
	states := make([]proflow.State, len(ep.Observations))
	for t := range ep.Observations {
		states[t] = make(proflow.State, enc.Dim())
		if err := e.Encode(states[t], &ep.Observations[t], ep.Placements[t]); err != nil {
			return fmt.Errorf("interval %d: %w", t, err)
		}
	}
	for t := 0; t < len(states)-1; t++ {
		a := ep.Placements[t+1]
		in, err := MeasureReward(enc, ep.Baseline, &ep.Observations[t+1], a)
		if err != nil {
			return fmt.Errorf("interval %d: %w", t, err)
		}
		if enc.HasFlowSignals() {
			// ℓ̂ needs the history the encoder keeps: read it from s_{t+1}.
			in.Latency = float64(states[t+1][enc.FlowOffset()+telemetry.FeatureLatency])
			in.AppLimited = float64(states[t+1][enc.FlowOffset()+telemetry.FeatureAppLimited])
		}
		if enc.HasDeficit() {
			in.Deficit = float64(states[t+1][enc.AggOffset(a)+telemetry.FeatureDeficit])
		}
		// Done stays false: the episode is cut off, not terminated.
		if err := ds.Append(Transition{
			State: states[t], Action: a, Reward: float32(c.Real(in)), Next: states[t+1],
			Current: ep.Placements[t], Episode: ep.ID, Step: t, ThroughputBaseline: phi0, Inputs: &in,
		}); err != nil {
			return err
		}
	}
	return nil
}
