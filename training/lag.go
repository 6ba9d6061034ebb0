package training

import (
	"fmt"
	"slices"
)

// Lagged returns a copy of d in which every transition's state and next
// state are those of lag intervals earlier in its episode: transition t
// keeps its action a_t, reward and reward inputs, and reads s_{t−lag} and
// s_{t+1−lag}, where a step before the episode's first reads the first
// state. Every reward input is a column of its own (those d reads from its
// next states are copied into columns first), so the copy relabels to the
// rewards d does. Each lagged state is projected onto the transition's own
// placement (ClampState with Current for the state, Action for the next
// state), so every row stays one the encoder can produce for where the
// flow is.
//
// A Q-network fitted on it values an action as if it took effect lag
// intervals after the state it decides on (TrainConfig.DecisionLag), as a
// move does behind a stability gate of lag+1 votes (see "Decision lag" in
// the package documentation). lag 0 returns a copy of d. Every episode's
// transitions must have consecutive steps; Lagged fails otherwise, naming
// the episode.
func (d *Dataset) Lagged(lag int) (*Dataset, error) {
	if lag < 0 {
		return nil, fmt.Errorf("training: lag %d intervals, want >= 0", lag)
	}
	idx := make([]int, d.Len())
	for i := range idx {
		idx[i] = i
	}
	out := d.Subset(idx)
	if lag == 0 {
		return out, nil
	}
	out.fillOutcomeInputs() // before S2 stops holding the outcome states
	// eps[e].at[s-first] is the transition of episode e at step s.
	type span struct {
		first int32
		at    []int
	}
	eps := map[int32]*span{}
	for i, e := range d.Episode {
		sp := eps[e]
		if sp == nil {
			sp = &span{}
			eps[e] = sp
		}
		sp.at = append(sp.at, i)
	}
	for e, sp := range eps {
		slices.SortFunc(sp.at, func(a, b int) int { return int(d.Step[a] - d.Step[b]) })
		sp.first = d.Step[sp.at[0]]
		for k, i := range sp.at {
			if d.Step[i] != sp.first+int32(k) {
				return nil, fmt.Errorf("training: lag: episode %d has steps %d and %d next to each other: want consecutive steps, one transition each",
					e, d.Step[sp.at[max(k-1, 0)]], d.Step[i])
			}
		}
	}
	dim := d.Dim()
	state := func(sp *span, step int32) []float32 { // s_step, the first state before the episode
		j := sp.at[max(step-sp.first, 0)]
		return d.S[j*dim:][:dim]
	}
	for i, e := range d.Episode {
		sp, t := eps[e], d.Step[i]
		s, s2 := out.S[i*dim:][:dim], out.S2[i*dim:][:dim]
		copy(s, state(sp, t-int32(lag)))
		copy(s2, state(sp, t+1-int32(lag)))
		if err := ClampState(d.Encoder, s, int(d.Current[i])); err != nil {
			return nil, fmt.Errorf("training: lag: transition %d: %w", i, err)
		}
		if err := ClampState(d.Encoder, s2, int(d.A[i])); err != nil {
			return nil, fmt.Errorf("training: lag: transition %d: %w", i, err)
		}
	}
	return out, nil
}
