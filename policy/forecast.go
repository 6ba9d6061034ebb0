package policy

import (
	"errors"
	"fmt"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// Forecast runs a learned dynamics model f_ψ (paper §IV-E b; the network
// that proflow train fits before the Q-network and saves beside it as
// NAME.dynamics.safetensors) at decision time: from the step's state and
// the current switch it predicts the next state, s + f_ψ(s, onehot(k*)),
// and reads the protected flow's throughput and application-limited share
// there. An Agent given one (Agent.SetForecast) implements
// proflow.Forecaster with it, and a gate with DistressConfig.Forecast
// treats a forecast low as it treats a measured one: so the flow can leave
// one interval before the collapse its own samples would show only one
// interval after.
//
// The network is size-specific: it predicts only states of its encoder's
// fabric (NumSwitches, NumLeaves, every scale). A Forecast is not safe for
// concurrent use; Clone gives another goroutine its own.
type Forecast struct {
	net *qnet.Model
	enc telemetry.EncoderConfig
	in  []float32
	out []float32
}

// NewForecast returns a forecast for states encoded with enc from net, a
// dynamics network from enc.Dim() state values followed by the one-hot of
// the switch (enc.NumSwitches) to the enc.Dim() changes of the state (as
// training.DynamicsModel.Net returns it). enc's layout must carry the
// flow's throughput.
func NewForecast(net *qnet.Model, enc telemetry.EncoderConfig) (*Forecast, error) {
	if net == nil {
		return nil, errors.New("policy: new forecast: nil network")
	}
	if err := enc.Validate(); err != nil {
		return nil, fmt.Errorf("policy: new forecast: %w", err)
	}
	dim, nS := enc.Dim(), enc.NumSwitches
	if net.InputDim() != dim+nS || net.OutputDim() != dim {
		return nil, fmt.Errorf("policy: new forecast: network is %d→%d, want %d→%d (state and switch one-hot → state change) for the encoder's %d×%d fabric",
			net.InputDim(), net.OutputDim(), dim+nS, dim, enc.NumSwitches, enc.NumLeaves)
	}
	return &Forecast{net: net.Clone(), enc: enc, in: make([]float32, dim+nS), out: make([]float32, dim)}, nil
}

// Encoder returns the state encoder configuration the forecast reads.
func (f *Forecast) Encoder() telemetry.EncoderConfig { return f.enc }

// Clone returns a forecast sharing the weights with its own buffers.
func (f *Forecast) Clone() *Forecast {
	return &Forecast{net: f.net.Clone(), enc: f.enc, in: make([]float32, len(f.in)), out: make([]float32, len(f.out))}
}

// Flow writes into dst the flow's sample f_ψ expects at the next step if
// the flow stays on in.Current: its throughput (the predicted
// FeatureThroughput, clipped to [0, 1], times ThroughputScale) and its
// application-limited share (FeatureAppLimited, clipped to [0, 1]; 0 in
// the v1 layout, which has none), and sets dst.OK.
func (f *Forecast) Flow(dst *proflow.FlowForecast, in *proflow.Input) error {
	*dst = proflow.FlowForecast{}
	if in == nil {
		return errors.New("policy: forecast: nil input")
	}
	dim, nS := f.enc.Dim(), f.enc.NumSwitches
	if len(in.State) != dim {
		return fmt.Errorf("policy: forecast: state of %d values, want %d", len(in.State), dim)
	}
	if in.Current < 0 || in.Current >= nS {
		return fmt.Errorf("policy: forecast: current switch %d, want 0..%d", in.Current, nS-1)
	}
	copy(f.in, in.State)
	oh := f.in[dim:]
	clear(oh)
	oh[in.Current] = 1
	if err := f.net.Forward(f.out, f.in); err != nil {
		return fmt.Errorf("policy: forecast: %w", err)
	}
	next := func(i int) float64 { return min(max(float64(in.State[i]+f.out[i]), 0), 1) }
	fo := f.enc.FlowOffset()
	dst.Throughput = next(fo+telemetry.FeatureThroughput) * f.enc.ThroughputScale
	if f.enc.LayoutName() != telemetry.StateLayout {
		dst.AppLimited = next(fo + telemetry.FeatureAppLimited)
	}
	dst.OK = true
	return nil
}
