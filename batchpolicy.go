package proflow

import (
	"fmt"
	"slices"
	"time"
)

// BatchInput is what a BatchPolicy sees at one step of a MultiController:
// the encoded states of every flow to score, as one matrix.
type BatchInput struct {
	// Time is the time of the step.
	Time time.Time
	// Obs is the step's observation; Obs.Flows[Flows[j]] is row j's flow
	// sample. Reference policies read thresholds on it; learned ones only
	// States.
	Obs *Observation
	// N is the number of rows (flows to score) and Dim the length of one
	// state (every flow's StateEncoder.Dim()).
	N, Dim int
	// States holds the N states, row-major: row j is States[j*Dim :
	// (j+1)*Dim], the state of flow Flows[j].
	States []float32
	// Flows holds row j's flow index in the step (Decisions, Wish.Flow);
	// Current row j's switch k*.
	Flows, Current []int
}

// BatchPolicy is a Policy that scores many protected flows in one call, so
// that a learned policy runs one batched forward pass (a matrix product)
// per step instead of one per flow. ScoreBatch writes row j's score of
// switch k into scores[j*K+k], K the number of switches (len(scores) ==
// in.N×K; the controller zeroes it first). It must not keep in, its slices
// or scores after it returns.
//
// A MultiController uses FlowParts.Batch, when set, for every flow instead
// of the per-flow Policies: it encodes each flow's state into a row of one
// matrix, calls ScoreBatch once, then runs every flow's gate on its row.
// The decisions are those of the per-flow path whenever ScoreBatch gives
// each row the scores Score would give that flow; a BatchPolicy that is
// also a Forecaster is asked, as a per-flow Policy is, for the forecast
// of each flow on a step where some switch scores above its current one,
// with that flow's row as Input.State. An error or panic holds
// every flow of the step with ReasonPolicy. A BatchPolicy is shared by all
// flows, so it must keep no per-flow state across steps (the learned agent
// keeps none); the controller never calls its Reset.
type BatchPolicy interface {
	ScoreBatch(scores []float64, in *BatchInput) error
}

// BatchPolicyFunc adapts a function to BatchPolicy.
type BatchPolicyFunc func(scores []float64, in *BatchInput) error

// ScoreBatch calls f(scores, in).
func (f BatchPolicyFunc) ScoreBatch(scores []float64, in *BatchInput) error { return f(scores, in) }

// batchStep is a MultiController's storage for scoring the step's flows
// with FlowParts.Batch, reused from step to step.
type batchStep struct {
	states  []float32 // rows × dim
	flows   []int
	current []int
	scores  []float64 // rows × switches
	in      BatchInput
}

// decideBatch is the flow loop of a step with FlowParts.Batch: encode every
// flow into a row of one state matrix (flows in their baseline phase, or
// whose sample or encoder fails, get no row), score all rows in one
// ScoreBatch call, then run each flow's gate on its row of scores.
func (m *MultiController) decideBatch() {
	obs, b := &m.obs, &m.bat
	n := len(m.flows)
	dim := len(m.flows[0].state)
	b.states = slices.Grow(b.states[:0], n*dim)[:n*dim]
	b.flows = slices.Grow(b.flows[:0], n)[:n]
	b.current = slices.Grow(b.current[:0], n)[:n]
	rows := 0
	for i, p := range m.flows {
		if !m.flowView(i) {
			continue
		}
		d := &m.ds[i]
		if p.prepare(State(b.states[rows*dim:(rows+1)*dim:(rows+1)*dim]), &m.view, d) {
			b.flows[rows], b.current[rows] = i, d.Current
			rows++
		}
	}
	if rows == 0 {
		return
	}
	k := m.cfg.Topology.NumSwitches()
	b.scores = slices.Grow(b.scores[:0], rows*k)[:rows*k]
	clear(b.scores)
	b.in = BatchInput{Time: m.ds[0].Time, Obs: obs, N: rows, Dim: dim,
		States: b.states[:rows*dim], Flows: b.flows[:rows], Current: b.current[:rows]}
	pol := m.parts.Batch
	err := call("BatchPolicy", "ScoreBatch", pol, func() error { return pol.ScoreBatch(b.scores, &b.in) })
	b.in = BatchInput{}
	if err != nil {
		err = fmt.Errorf("proflow: batch policy: %w", err)
	}
	fc, forecasts := pol.(Forecaster)
	for j, i := range b.flows[:rows] {
		d, p := &m.ds[i], m.flows[i]
		if err != nil {
			d.Reason, d.Err = ReasonPolicy, err
			continue
		}
		p.scores(d)
		copy(d.Scores, b.scores[j*k:(j+1)*k])
		// As on the per-flow path: a forecast on a step some switch
		// scores above the current one.
		if forecasts && outscored(d.Scores, d.Current) {
			m.view.Flow = m.obs.Flows[i] // checked by flowView above
			p.in = Input{Time: d.Time, Obs: &m.view, State: State(b.states[j*dim : (j+1)*dim : (j+1)*dim]), Current: d.Current, Cordoned: p.marks}
			ferr := call("Forecaster", "Forecast", fc, func() error { return fc.Forecast(&d.Forecast, &p.in) })
			p.in = Input{}
			if ferr != nil {
				d.Forecast = FlowForecast{}
				d.Reason, d.Err = ReasonPolicy, fmt.Errorf("proflow: policy: forecast: %w", ferr)
				continue
			}
		}
		p.admit(d)
	}
}
