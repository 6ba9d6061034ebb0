package policy

import (
	"errors"
	"fmt"
	"slices"

	"github.com/proflow-sdn/proflow"
)

var _ proflow.BatchPolicy = (*Agent)(nil)

// ScoreBatch writes Q_θ(s_j, k) into scores[j*K+k] for every row j of
// in.States and every switch k (K switches), in one batched forward pass
// (qnet.Model.ForwardBatch): of the n states through a per-fabric network,
// of their n·K candidate rows through a universal one. Each row's scores
// are the same bits as Score's on that state, whatever the batch around
// it. Like Score it reads only the states.
//
// It allocates only when in.N exceeds every earlier batch (and, with a
// per-fabric network, on its first call, the model's batch buffers). An
// Agent is not safe for concurrent use; one Agent may serve as the
// FlowParts.Batch of a MultiController, since the agent keeps no state
// between steps.
func (a *Agent) ScoreBatch(scores []float64, in *proflow.BatchInput) error {
	if in == nil {
		return errors.New("policy: agent: nil batch input")
	}
	if want := a.enc.Dim(); in.Dim != want {
		return fmt.Errorf("policy: agent: batch states of %d values, but the model takes %d", in.Dim, want)
	}
	k := len(a.q)
	if in.N < 0 || len(scores) != in.N*k {
		return fmt.Errorf("policy: agent: %d scores for %d rows, want rows×%d switches = %d", len(scores), in.N, k, max(in.N, 0)*k)
	}
	a.qb = slices.Grow(a.qb[:0], in.N*k)[:in.N*k]
	if a.Universal() {
		n := in.N * k * a.enc.CandidateDim()
		a.rowsBatch = slices.Grow(a.rowsBatch[:0], n)[:n]
	}
	if err := a.forward(a.qb, a.rowsBatch, in.States, in.N); err != nil {
		return fmt.Errorf("policy: agent: %w", err)
	}
	for i, q := range a.qb {
		scores[i] = float64(q)
	}
	return nil
}
