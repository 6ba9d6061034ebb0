package policy

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// ErrModelMismatch is matched by a *ModelMismatchError.
var ErrModelMismatch = errors.New("model does not match the deployment")

// ModelMismatchError reports a model trained for other states than the
// deployment encodes.
type ModelMismatchError struct {
	// Field names what differs, for example "num_switches" or
	// "encoder.overflow_scale" (a per-fabric model), or
	// "encoder.overflow_scale/rate_scale" (a universal model, whose scaling
	// is compared with the bucket rate factored out).
	Field string
	// Model is the model's value and Deployment the deployment's.
	Model, Deployment string
	// Universal reports that the model is universal (qnet.Metadata.Universal):
	// it fits any fabric size and bucket rate, so only its scaling
	// differs.
	Universal bool
}

// Error names the field, both values and the remedy.
func (e *ModelMismatchError) Error() string {
	if e.Universal {
		return fmt.Sprintf("policy: universal model does not match the deployment's state encoder: %s is %s in the model, %s in the deployment; "+
			"a universal model fits any fabric size and bucket rate, but only the layout, drop window, flow-count scale and scales relative to rate_scale it was trained with: "+
			"encode with those (telemetry.DefaultEncoderConfig of the fabric, in the model's layout, has them for a model trained with the defaults) or train one for this scaling",
			e.Field, e.Model, e.Deployment)
	}
	return fmt.Sprintf("policy: model does not match the deployment's state encoder: %s is %s in the model, %s in the deployment; "+
		"this per-fabric model fits one fabric: use the universal default (models.LoadDefault or models/default.safetensors), which fits any fabric size and bucket rate, or train one for this fabric (make model with a simulator profile of its topology and bucket rate; see models/README.md and docs/torch.md)",
		e.Field, e.Model, e.Deployment)
}

// Is makes ModelMismatchError match ErrModelMismatch.
func (e *ModelMismatchError) Is(target error) bool { return target == ErrModelMismatch }

// Agent is ProFlow's learned policy: a frozen Q-network Q_θ (qnet.Model)
// whose outputs are the scores. The network is of one of two kinds
// (qnet.Metadata):
//
//   - A per-fabric network maps the whole state s_t to one Q-value per
//     aggregation switch. It fits the one fabric size and bucket rate it
//     was trained for.
//   - A universal network (qnet.Metadata.Universal) maps one candidate row
//     to one Q-value: Q_θ(s_t, k) = MLP(row_k), row_k the candidate row of
//     switch k (telemetry.EncoderConfig.EncodeCandidates), the same weights
//     for every k. It fits any fabric of at least two switches, any number
//     of congestion leaves and any bucket rate, and permuting the switches
//     of a state permutes its scores alike.
//
// # Rule
//
// Score evaluates Q_θ(s_t, ·) on Input.State and writes one Q-value per
// aggregation switch. It reads nothing else: no raw observation, no
// threshold. Everything the agent does comes from its trained weights; the
// stability gate (Gate) then decides whether to act on the Q-values.
//
// # Parameters
//
// None at run time. The model file carries the state layout and the encoder
// scaling constants it was trained with. NewAgent refuses a per-fabric
// model whose num_switches, num_leaves, state_layout, state_dim or encoder
// constants differ from the deployment's encoder configuration, and a
// universal model whose layout, drop window, flow-count scale or scales
// relative to the rate scale differ (telemetry.EncoderConfig.ScalingMismatch;
// its fabric size and bucket rate may be any), because the same telemetry
// would then encode to states the network never saw. A
// deployment configuration with an empty Layout (DefaultEncoderConfig's)
// takes the model's layout, so one deployment runs models of either
// layout (telemetry.StateLayout or StateLayoutV2 to V5); build the
// encoder from EncoderConfig. The model
// also records the control interval it was trained at (ModelIntervalKey;
// 500 ms when absent): the Agent reports it as TrainedInterval, and
// proflow.NewController refuses the agent at any other Config.Interval.
// LoadModel returns the gate the model was evaluated behind with it.
//
// # Cost
//
// Score does not allocate. With a per-fabric network it is one forward
// pass of one row through the one-row variant of the batched kernel
// (qnet.Model.Forward): about 2.5 µs for 34→256→256→4 with AVX2 and FMA
// (BenchmarkDecision, docs/performance.md). With a universal network it
// encodes the |S| candidate rows into a buffer the agent owns and scores
// them in one qnet.Model.ForwardBatch of |S| rows (BenchmarkDecisionUniversal).
// Either way a state's scores are the same bits as ScoreBatch's row for
// it. An Agent is not safe for concurrent use; Clone gives another
// goroutine its own.
type Agent struct {
	m    *qnet.Model
	meta qnet.Metadata
	q    []float32 // Score's Q-values, one per switch
	qb   []float32 // ScoreBatch's Q-values, rows × switches

	// A universal network's candidate rows, |S| per state: Score's, and
	// ScoreBatch's (grown to the largest batch).
	rows, rowsBatch []float32

	interval time.Duration // the control interval the model was trained at
	enc      telemetry.EncoderConfig
	fc       *Forecast // the dynamics model behind Forecast, nil for none
}

var (
	_ proflow.Policy        = (*Agent)(nil)
	_ proflow.IntervalBound = (*Agent)(nil)
	_ proflow.Forecaster    = (*Agent)(nil)
)

// NewAgent returns an agent for model m, described by meta, deployed with
// the state encoder configuration enc: a per-fabric model must have been
// trained for exactly enc's states, a universal one (meta.Universal) for
// enc's scaling with any fabric size and bucket rate (see Agent). It
// returns a *ModelMismatchError when the model was trained for other
// states, and an error when meta records an unreadable control interval
// (ModelInterval).
func NewAgent(m *qnet.Model, meta qnet.Metadata, enc telemetry.EncoderConfig) (*Agent, error) {
	if m == nil {
		return nil, errors.New("policy: new agent: nil model")
	}
	if err := enc.Validate(); err != nil {
		return nil, fmt.Errorf("policy: new agent: %w", err)
	}
	if m.InputDim() != meta.StateDim {
		return nil, fmt.Errorf("policy: new agent: the network takes %d inputs but its metadata says state_dim %d", m.InputDim(), meta.StateDim)
	}
	if meta.Universal() && m.OutputDim() != 1 {
		return nil, fmt.Errorf("policy: new agent: the network has %d outputs but its metadata says it is universal (q_layout %s), which scores one candidate row per output",
			m.OutputDim(), meta.QLayout)
	}
	if !meta.Universal() && m.OutputDim() != meta.NumSwitches {
		return nil, fmt.Errorf("policy: new agent: the network has %d outputs but its metadata says num_switches %d", m.OutputDim(), meta.NumSwitches)
	}
	if enc.Layout == "" && meta.StateLayout != telemetry.StateLayout {
		// The deployment did not pin a layout: the model's is taken, if the
		// encoder writes it, with its constants derived from the
		// deployment's (WithLayout).
		if c := enc.WithLayout(meta.StateLayout); c.Validate() == nil {
			enc = c
		}
	}
	check := checkPerFabric
	if meta.Universal() {
		check = checkUniversal
	}
	if err := check(meta, enc); err != nil {
		return nil, err
	}
	interval, err := ModelInterval(meta)
	if err != nil {
		return nil, fmt.Errorf("policy: new agent: %w", err)
	}
	return newAgent(m, meta, enc, interval), nil
}

// checkPerFabric returns a *ModelMismatchError unless the per-fabric model
// meta describes was trained on exactly the states enc encodes.
func checkPerFabric(meta qnet.Metadata, enc telemetry.EncoderConfig) error {
	itoa := strconv.Itoa
	ftoa := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	me := meta.Encoder
	for _, c := range [...]struct {
		field             string
		model, deployment string
	}{
		{"num_switches", itoa(meta.NumSwitches), itoa(enc.NumSwitches)},
		{"num_leaves", itoa(meta.NumLeaves), itoa(enc.NumLeaves)},
		{"state_layout", strconv.Quote(meta.StateLayout), strconv.Quote(enc.LayoutName())},
		{"state_dim", itoa(meta.StateDim), itoa(enc.Dim())},
		{"encoder.num_switches", itoa(me.NumSwitches), itoa(enc.NumSwitches)},
		{"encoder.num_leaves", itoa(me.NumLeaves), itoa(enc.NumLeaves)},
		{"encoder.rate_scale", ftoa(me.RateScale), ftoa(enc.RateScale)},
		{"encoder.overflow_scale", ftoa(me.OverflowScale), ftoa(enc.OverflowScale)},
		{"encoder.flow_count_scale", ftoa(me.FlowCountScale), ftoa(enc.FlowCountScale)},
		{"encoder.ingress_scale", ftoa(me.IngressScale), ftoa(enc.IngressScale)},
		{"encoder.throughput_scale", ftoa(me.ThroughputScale), ftoa(enc.ThroughputScale)},
		{"encoder.drop_window", itoa(me.DropWindow), itoa(enc.DropWindow)},
		{"encoder.queue_scale", ftoa(me.QueueScale), ftoa(enc.QueueScale)},
		{"encoder.deficit_scale", ftoa(me.DeficitScale), ftoa(enc.DeficitScale)},
		{"encoder.excess_scale", ftoa(me.ExcessScale), ftoa(enc.ExcessScale)},
		{"encoder.vacated_seconds", ftoa(me.VacatedSeconds), ftoa(enc.VacatedSeconds)},
	} {
		if c.model != c.deployment {
			return &ModelMismatchError{Field: c.field, Model: c.model, Deployment: c.deployment}
		}
	}
	// A mismatch in a field added to EncoderConfig later must not slip through.
	if me != enc {
		return &ModelMismatchError{Field: "encoder", Model: fmt.Sprintf("%+v", me), Deployment: fmt.Sprintf("%+v", enc)}
	}
	return nil
}

// checkUniversal returns a *ModelMismatchError unless the universal model
// meta describes was trained with enc's scaling, fabric size and bucket
// rate factored out.
func checkUniversal(meta qnet.Metadata, enc telemetry.EncoderConfig) error {
	if field, model, deployment, ok := meta.Encoder.ScalingMismatch(enc); !ok {
		return &ModelMismatchError{Field: field, Model: model, Deployment: deployment, Universal: true}
	}
	return nil
}

// newAgent returns an agent of its own buffers for a model checked against
// enc; it shares m's weights.
func newAgent(m *qnet.Model, meta qnet.Metadata, enc telemetry.EncoderConfig, interval time.Duration) *Agent {
	meta.Extra = maps.Clone(meta.Extra) // its own: Metadata's callers may change theirs
	a := &Agent{m: m.Clone(), meta: meta, enc: enc, q: make([]float32, enc.NumSwitches), interval: interval}
	if meta.Universal() {
		a.rows = make([]float32, enc.NumSwitches*enc.CandidateDim())
		// The model's first ForwardBatch of more than one row allocates its
		// batch buffers: run it now, on the still-zero candidate rows, so
		// that Score never allocates. The lengths are right, so it cannot
		// fail.
		_ = a.m.ForwardBatch(a.q, a.rows, enc.NumSwitches)
	}
	return a
}

// LoadAgent loads the model file at path (see package qnet) and returns an
// agent for it, deployed with the state encoder configuration enc. Prefer
// LoadModel, which also returns the gate the model was evaluated behind.
func LoadAgent(path string, enc telemetry.EncoderConfig) (*Agent, error) {
	m, meta, err := qnet.Load(path)
	if err != nil {
		return nil, err
	}
	a, err := NewAgent(m, meta, enc)
	if err != nil {
		return nil, fmt.Errorf("%w (model %s)", err, path)
	}
	return a, nil
}

// Metadata returns the model's metadata (provenance included), a copy:
// changing its Extra changes neither the agent nor its clones.
func (a *Agent) Metadata() qnet.Metadata {
	m := a.meta
	m.Extra = maps.Clone(m.Extra)
	return m
}

// EncoderConfig returns the state encoder configuration the agent's states
// must be encoded with: the deployment's, in the model's layout (NewAgent
// takes the model's layout when the deployment's Layout is empty). Build
// the controller's encoder from it:
//
//	enc, err := telemetry.NewEncoder(agent.EncoderConfig())
func (a *Agent) EncoderConfig() telemetry.EncoderConfig { return a.enc }

// Model returns the agent's Q-network: per-fabric, it maps a state to one
// Q-value per switch; universal (Universal), one candidate row to one
// Q-value. It shares its activation buffers with the agent: Clone it
// before use in another goroutine.
func (a *Agent) Model() *qnet.Model { return a.m }

// Universal reports whether the agent's model is universal
// (qnet.Metadata.Universal): it scores candidate rows, one per switch, and
// serves any fabric size and bucket rate.
func (a *Agent) Universal() bool { return a.meta.Universal() }

// Clone returns an agent sharing the weights but not the buffers, for use in
// another goroutine. It scores exactly as a does.
func (a *Agent) Clone() *Agent {
	c := newAgent(a.m, a.meta, a.enc, a.interval)
	if a.fc != nil {
		c.fc = a.fc.Clone()
	}
	return c
}

// SetForecast gives the agent a dynamics model to forecast the flow's next
// sample with (Forecast; nil removes it). The forecast must read exactly
// the agent's states: a dynamics model of another fabric size, layout or
// scaling is refused with an error naming both.
func (a *Agent) SetForecast(f *Forecast) error {
	if f != nil && f.Reads() != a.enc {
		return fmt.Errorf("policy: agent: the dynamics model reads %s states of a %d×%d fabric (rate scale %g), the agent %s states of a %d×%d fabric (rate scale %g): use the dynamics model trained for this fabric",
			f.Reads().LayoutName(), f.Reads().NumSwitches, f.Reads().NumLeaves, f.Reads().RateScale, a.enc.LayoutName(), a.enc.NumSwitches, a.enc.NumLeaves, a.enc.RateScale)
	}
	a.fc = f
	return nil
}

// Forecast implements proflow.Forecaster: with a dynamics model
// (SetForecast) it writes the flow's forecast next sample (Forecast.Flow);
// without one it leaves dst.OK false.
func (a *Agent) Forecast(dst *proflow.FlowForecast, in *proflow.Input) error {
	if a.fc == nil {
		*dst = proflow.FlowForecast{}
		return nil
	}
	return a.fc.Flow(dst, in)
}

// Score writes Q_θ(in.State, k) into scores[k] for every switch k. With a
// universal model it fails when the state's placement one-hot does not mark
// exactly one switch (telemetry.EncoderConfig.CurrentSwitch).
func (a *Agent) Score(scores []float64, in *proflow.Input) error {
	if in == nil {
		return errors.New("policy: agent: nil input")
	}
	if len(scores) != len(a.q) {
		return fmt.Errorf("policy: agent: %d scores, but the model scores %d switches", len(scores), len(a.q))
	}
	if err := a.forward(a.q, a.rows, in.State, 1); err != nil {
		return fmt.Errorf("policy: agent: %w", err)
	}
	for k, q := range a.q {
		scores[k] = float64(q)
	}
	return nil
}

// forward writes the Q-values of n states, back to back in states, into q
// (n × |S|): one pass of a per-fabric network over the states, or, for a
// universal network, one pass over their candidate rows, encoded into rows
// (n × |S| rows).
func (a *Agent) forward(q, rows, states []float32, n int) error {
	switch {
	case a.Universal():
		if err := a.enc.EncodeCandidatesBatch(rows, states, n); err != nil {
			return err
		}
		return a.m.ForwardBatch(q, rows, n*len(a.q))
	case n == 1:
		return a.m.Forward(q, states)
	}
	return a.m.ForwardBatch(q, states, n)
}
