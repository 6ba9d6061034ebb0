package policy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/safetensors"
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

	// from is the deployment's encoder when the forecast reads a view of
	// a larger fabric (Project); zero otherwise.
	from telemetry.EncoderConfig
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
	return &Forecast{net: f.net.Clone(), enc: f.enc, in: make([]float32, len(f.in)), out: make([]float32, len(f.out)), from: f.from}
}

// Reads returns the encoder configuration of the states Flow takes: the
// deployment's for a projecting forecast (Project), else Encoder's.
func (f *Forecast) Reads() telemetry.EncoderConfig {
	if f.from.NumSwitches > 0 {
		return f.from
	}
	return f.enc
}

// Project returns a forecast that reads the states of enc, a fabric with
// more aggregation switches than the dynamics model's and otherwise the
// same encoding (the same congestion leaves, layout and scaling), through
// a view of the dynamics model's size: the flow's switch, then the
// switches after it in index order (wrapping round) until the view is
// full, every leaf, and the flow's features, which in layouts v6 to v8
// carry its own switch's reserve deficit and drain rate. Switches beyond
// the view are not read. The flow's next sample is mostly its own
// switch's and its own, so a per-size dynamics model can forecast it on a
// larger fabric. Measured on the development families of 6 and 16
// switches it forecast the collapses about as early as on the model's own
// fabric but also a few that did not come, and cost more scenarios than it
// saved, so AttachForecast does not use it (training/doc.go, "Forecasts
// on fabrics of other sizes").
func (f *Forecast) Project(enc telemetry.EncoderConfig) (*Forecast, error) {
	same := enc
	same.NumSwitches = f.enc.NumSwitches
	if enc.NumSwitches <= f.enc.NumSwitches || same != f.enc {
		return nil, fmt.Errorf("policy: forecast: a dynamics model of %d switches and %d leaves (%s) cannot read a view of %d switches and %d leaves (%s): it needs more switches and otherwise the same encoding",
			f.enc.NumSwitches, f.enc.NumLeaves, f.enc.LayoutName(), enc.NumSwitches, enc.NumLeaves, enc.LayoutName())
	}
	c := f.Clone()
	c.from = enc
	return c, nil
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
	dim := f.enc.Dim()
	reads := f.Reads()
	if len(in.State) != reads.Dim() {
		return fmt.Errorf("policy: forecast: state of %d values, want %d", len(in.State), reads.Dim())
	}
	if in.Current < 0 || in.Current >= reads.NumSwitches {
		return fmt.Errorf("policy: forecast: current switch %d, want 0..%d", in.Current, reads.NumSwitches-1)
	}
	current := in.Current
	if f.from.NumSwitches > 0 {
		f.view(f.in[:dim], in.State, in.Current)
		current = 0
	} else {
		copy(f.in, in.State)
	}
	oh := f.in[dim:]
	clear(oh)
	oh[current] = 1
	if err := f.net.Forward(f.out, f.in); err != nil {
		return fmt.Errorf("policy: forecast: %w", err)
	}
	s := f.in[:dim] // the state the network read
	next := func(i int) float64 { return min(max(float64(s[i]+f.out[i]), 0), 1) }
	fo := f.enc.FlowOffset()
	dst.Throughput = next(fo+telemetry.FeatureThroughput) * f.enc.ThroughputScale
	if f.enc.LayoutName() != telemetry.StateLayout {
		dst.AppLimited = next(fo + telemetry.FeatureAppLimited)
	}
	dst.OK = true
	return nil
}

// view writes into dst, a state of the dynamics model's size, the view
// Project describes of s, a state of f.from's fabric with the flow on
// current: slot j holds switch (current + j) mod |S|, so the flow's
// switch is slot 0.
func (f *Forecast) view(dst, s []float32, current int) {
	from, to := f.from, f.enc
	w := to.SwitchWidth()
	for j := range to.NumSwitches {
		k := (current + j) % from.NumSwitches
		copy(dst[to.AggOffset(j):to.AggOffset(j)+w], s[from.AggOffset(k):from.AggOffset(k)+w])
	}
	copy(dst[to.LeafOffset(0):to.PlacementOffset()], s[from.LeafOffset(0):from.PlacementOffset()])
	clear(dst[to.PlacementOffset():to.FlowOffset()])
	dst[to.PlacementOffset()] = 1
	copy(dst[to.FlowOffset():], s[from.FlowOffset():])
}

// The dynamics-model file format (proflow train writes it beside the
// model as NAME.dynamics.safetensors; training.WriteDynamics): a
// safetensors file like a qnet model file, tensors "layers.l.weight"
// [out, in] and "layers.l.bias" [out], whose metadata holds "format" =
// DynamicsFormat, "format_version" = DynamicsFormatVersion, "encoder" (the
// telemetry.EncoderConfig in JSON), "state_layout", "architecture" (JSON
// hidden widths and activation) and provenance keys.
const (
	DynamicsFormat        = "proflow-dynamics"
	DynamicsFormatVersion = "1"
)

// Net returns the dynamics network (shared, not copied).
func (f *Forecast) Net() *qnet.Model { return f.net }

// ReadForecast reads a dynamics-model file from r and returns it as a
// Forecast, with the file's metadata; name identifies the file in errors.
// It reads at most qnet.MaxDataBytes of tensors.
func ReadForecast(r io.Reader, name string) (*Forecast, map[string]string, error) {
	f, meta, err := readForecast(r)
	if err != nil {
		return nil, nil, fmt.Errorf("policy: read dynamics model %s: %w", name, err)
	}
	return f, meta, nil
}

// LoadForecast reads the dynamics-model file at path (ReadForecast).
func LoadForecast(path string) (*Forecast, map[string]string, error) {
	file, err := fileutil.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("policy: load dynamics model: %w", err)
	}
	defer file.Close()
	return ReadForecast(bufio.NewReader(file), path)
}

func readForecast(r io.Reader) (*Forecast, map[string]string, error) {
	meta, tensors, err := safetensors.Read(r, qnet.MaxDataBytes)
	if err != nil {
		return nil, nil, err
	}
	if f := meta["format"]; f != DynamicsFormat {
		return nil, nil, fmt.Errorf("format %s, want %q", safetensors.Quote(f), DynamicsFormat)
	}
	if v := meta["format_version"]; v != DynamicsFormatVersion {
		return nil, nil, fmt.Errorf("format_version %s, want %q", safetensors.Quote(v), DynamicsFormatVersion)
	}
	var enc telemetry.EncoderConfig
	dec := json.NewDecoder(strings.NewReader(meta["encoder"]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&enc); err != nil {
		return nil, nil, fmt.Errorf("encoder %s: %s", safetensors.Quote(meta["encoder"]), safetensors.Clip(err.Error()))
	}
	if l := meta["state_layout"]; l != enc.LayoutName() {
		return nil, nil, fmt.Errorf("state_layout %s, want the encoder's %q", safetensors.Quote(l), enc.LayoutName())
	}
	n := len(tensors) / 2
	if n < 1 || n > qnet.MaxLayers || len(tensors) != 2*n {
		return nil, nil, fmt.Errorf("%d tensors, want a weight and a bias per layer", len(tensors))
	}
	layers := make([]qnet.Layer, n)
	for l := range layers {
		wn, bn := "layers."+strconv.Itoa(l)+".weight", "layers."+strconv.Itoa(l)+".bias"
		w, okW := tensors[wn]
		b, okB := tensors[bn]
		if !okW || !okB {
			return nil, nil, fmt.Errorf("missing %s or %s", wn, bn)
		}
		if len(w.Shape) != 2 || len(b.Shape) != 1 || b.Shape[0] != w.Shape[0] {
			return nil, nil, fmt.Errorf("layer %d shapes %v and %v, want [out, in] and [out]", l, w.Shape, b.Shape)
		}
		wv, err := w.AsFloat32s()
		if err != nil {
			return nil, nil, err
		}
		bv, err := b.AsFloat32s()
		if err != nil {
			return nil, nil, err
		}
		layers[l] = qnet.Layer{In: int(w.Shape[1]), Out: int(w.Shape[0]), Weight: wv, Bias: bv}
	}
	net, err := qnet.FromLayers(layers)
	if err != nil {
		return nil, nil, err
	}
	var arch struct {
		Hidden     []int  `json:"hidden"`
		Activation string `json:"activation"`
	}
	if err := json.Unmarshal([]byte(meta["architecture"]), &arch); err != nil || !slices.Equal(arch.Hidden, net.Hidden()) || arch.Activation != qnet.Activation {
		return nil, nil, fmt.Errorf("architecture %s does not describe the layers (hidden %v, %s)", safetensors.Quote(meta["architecture"]), net.Hidden(), qnet.Activation)
	}
	f, err := NewForecast(net, enc)
	if err != nil {
		return nil, nil, err
	}
	return f, meta, nil
}

// LoadForecasts reads the dynamics models proflow train saved beside the
// model file modelPath: NAME.dynamics.safetensors (the model's own
// fabric) first, then every NAME.dynamics-SxL.safetensors (the other
// sizes of a universal model's training) in name order. Entries of those
// names that are not regular files (a directory, a FIFO) are skipped. With
// none beside it, it fails, naming NAME.dynamics.safetensors.
func LoadForecasts(modelPath string) ([]*Forecast, error) {
	dir, base := filepath.Split(modelPath)
	stem := strings.TrimSuffix(base, ".safetensors") + ".dynamics"
	entries, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return nil, fmt.Errorf("policy: dynamics models beside %s: %w", modelPath, err)
	}
	var out []*Forecast
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasPrefix(n, stem) || !strings.HasSuffix(n, ".safetensors") {
			continue
		}
		if mid := strings.TrimSuffix(strings.TrimPrefix(n, stem), ".safetensors"); mid != "" && !strings.HasPrefix(mid, "-") {
			continue
		}
		// Not a regular file: opening a FIFO would block (LoadForecast
		// refuses one that replaces a regular file after this check).
		path := filepath.Join(dir, n)
		if fi, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("policy: dynamics models beside %s: %w", modelPath, err)
		} else if !fi.Mode().IsRegular() {
			continue
		}
		f, _, err := LoadForecast(path)
		if err != nil {
			return nil, err
		}
		if n == stem+".safetensors" {
			out = append([]*Forecast{f}, out...)
		} else {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("policy: no dynamics model beside %s (%s), which a gate that counts forecasts (distress.forecast) needs",
			modelPath, filepath.Join(dir, stem+".safetensors"))
	}
	return out, nil
}

// forecastFor returns a clone of the forecast among fs that reads exactly
// enc's states, or nil.
func forecastFor(fs []*Forecast, enc telemetry.EncoderConfig) *Forecast {
	for _, f := range fs {
		if f.enc == enc {
			return f.Clone()
		}
	}
	return nil
}

// AttachForecast gives a the forecast among fs that reads its states
// (Agent.SetForecast), the one trained for its fabric, and reports whether
// one did; an agent on a fabric none of them was trained for keeps none.
// A view of a larger fabric (Project) is not taken here: on the
// development families of 6 and 16 switches it lost more than it gained
// (training/doc.go, "Forecasts on fabrics of other sizes"); set one with
// Agent.SetForecast to try it.
func AttachForecast(a *Agent, fs []*Forecast) bool {
	f := forecastFor(fs, a.enc)
	return f != nil && a.SetForecast(f) == nil
}
