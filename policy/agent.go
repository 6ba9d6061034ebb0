package policy

import (
	"errors"
	"fmt"
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
	// "encoder.overflow_scale".
	Field string
	// Model is the model's value and Deployment the deployment's.
	Model, Deployment string
}

// Error names the field, both values and the remedy.
func (e *ModelMismatchError) Error() string {
	return fmt.Sprintf("policy: model does not match the deployment's state encoder: %s is %s in the model, %s in the deployment; "+
		"a model fits one fabric: train one for this fabric (make model with a simulator profile of its topology and bucket rate; see models/README.md and docs/torch.md)",
		e.Field, e.Model, e.Deployment)
}

// Is makes ModelMismatchError match ErrModelMismatch.
func (e *ModelMismatchError) Is(target error) bool { return target == ErrModelMismatch }

// Agent is ProFlow's learned policy: a frozen Q-network Q_θ (qnet.Model)
// whose outputs are the scores.
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
// scaling constants it was trained with; NewAgent refuses a model whose
// num_switches, num_leaves, state_layout, state_dim or encoder constants
// differ from the deployment's encoder configuration, because the same
// telemetry would then encode to states the network never saw. A
// deployment configuration with an empty Layout (DefaultEncoderConfig's)
// takes the model's layout, so one deployment runs models of either
// layout (telemetry.StateLayout, telemetry.StateLayoutV2); build the
// encoder from EncoderConfig. The model
// also records the control interval it was trained at (ModelIntervalKey;
// 500 ms when absent): the Agent reports it as TrainedInterval, and
// proflow.NewController refuses the agent at any other Config.Interval.
// LoadModel returns the gate the model was evaluated behind with it.
//
// Score does not allocate. It is one forward pass of one row through the
// one-row variant of the batched kernel (qnet.Model.Forward): about 2.5 µs for
// 34→256→256→4 with AVX2 and FMA (BenchmarkDecision, docs/performance.md),
// and the same bits as ScoreBatch's row for the same state. An Agent is not
// safe for concurrent use; Clone gives another goroutine its own.
type Agent struct {
	m    *qnet.Model
	meta qnet.Metadata
	q    []float32
	qb   []float32 // ScoreBatch's Q-values, rows × switches

	interval time.Duration // the control interval the model was trained at
	enc      telemetry.EncoderConfig
}

var (
	_ proflow.Policy        = (*Agent)(nil)
	_ proflow.IntervalBound = (*Agent)(nil)
)

// NewAgent returns an agent for model m, described by meta, deployed with
// the state encoder configuration enc. It returns a *ModelMismatchError when
// the model was trained for other states, and an error when meta records
// an unreadable control interval (ModelInterval).
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
	if m.OutputDim() != meta.NumSwitches {
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
	} {
		if c.model != c.deployment {
			return nil, &ModelMismatchError{Field: c.field, Model: c.model, Deployment: c.deployment}
		}
	}
	// A mismatch in a field added to EncoderConfig later must not slip through.
	if me != enc {
		return nil, &ModelMismatchError{Field: "encoder", Model: fmt.Sprintf("%+v", me), Deployment: fmt.Sprintf("%+v", enc)}
	}
	interval, err := ModelInterval(meta)
	if err != nil {
		return nil, fmt.Errorf("policy: new agent: %w", err)
	}
	return &Agent{m: m.Clone(), meta: meta, enc: enc, q: make([]float32, m.OutputDim()), interval: interval}, nil
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

// Metadata returns the model's metadata (provenance included).
func (a *Agent) Metadata() qnet.Metadata { return a.meta }

// EncoderConfig returns the state encoder configuration the agent's states
// must be encoded with: the deployment's, in the model's layout (NewAgent
// takes the model's layout when the deployment's Layout is empty). Build
// the controller's encoder from it:
//
//	enc, err := telemetry.NewEncoder(agent.EncoderConfig())
func (a *Agent) EncoderConfig() telemetry.EncoderConfig { return a.enc }

// Model returns the agent's Q-network. It shares its activation buffers
// with the agent: Clone it before use in another goroutine.
func (a *Agent) Model() *qnet.Model { return a.m }

// Clone returns an agent sharing the weights but not the buffers, for use in
// another goroutine.
func (a *Agent) Clone() *Agent {
	return &Agent{m: a.m.Clone(), meta: a.meta, q: make([]float32, len(a.q)), interval: a.interval}
}

// Score writes Q_θ(in.State, k) into scores[k] for every switch k.
func (a *Agent) Score(scores []float64, in *proflow.Input) error {
	if in == nil {
		return errors.New("policy: agent: nil input")
	}
	if len(scores) != len(a.q) {
		return fmt.Errorf("policy: agent: %d scores, but the model scores %d switches", len(scores), len(a.q))
	}
	if err := a.m.Forward(a.q, in.State); err != nil {
		return fmt.Errorf("policy: agent: %w", err)
	}
	for k, q := range a.q {
		scores[k] = float64(q)
	}
	return nil
}
