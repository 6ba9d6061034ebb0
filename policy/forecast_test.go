package policy

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/fileutil/fileutiltest"
	"github.com/proflow-sdn/proflow/internal/safetensors"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// linearDynamics returns a one-layer dynamics network for enc that adds
// bias to the state whatever the input, plus weight × the one-hot of the
// switch to the flow's throughput (switch k's change is k × weight).
func linearDynamics(t *testing.T, enc telemetry.EncoderConfig, bias map[int]float32, weight float32) *qnet.Model {
	t.Helper()
	dim, nS := enc.Dim(), enc.NumSwitches
	l := qnet.Layer{In: dim + nS, Out: dim, Weight: make([]float32, dim*(dim+nS)), Bias: make([]float32, dim)}
	for i, b := range bias {
		l.Bias[i] = b
	}
	phi := enc.FlowOffset() + telemetry.FeatureThroughput
	for k := range nS {
		l.Weight[phi*(dim+nS)+dim+k] = float32(k) * weight
	}
	m, err := qnet.FromLayers([]qnet.Layer{l})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func v8Encoder(t *testing.T) telemetry.EncoderConfig {
	t.Helper()
	return telemetry.DefaultEncoderConfig(proflow.PaperTopology()).WithLayout(telemetry.StateLayoutV8)
}

// The forecast is the state plus f_ψ's change at the flow's throughput and
// application-limited share, clipped to [0, 1], the throughput in bytes/s;
// the network reads the one-hot of the current switch.
func TestForecastFlow(t *testing.T) {
	enc := v8Encoder(t)
	fo := enc.FlowOffset()
	phi, al := fo+telemetry.FeatureThroughput, fo+telemetry.FeatureAppLimited
	f, err := NewForecast(linearDynamics(t, enc, map[int]float32{phi: -0.3, al: 0.2}, -0.1), enc)
	if err != nil {
		t.Fatal(err)
	}
	s := make(proflow.State, enc.Dim())
	s[phi], s[al] = 0.9, 0.1
	for _, tc := range []struct {
		current          int
		throughput, appl float64 // in feature units
	}{
		{0, 0.6, 0.3},
		{2, 0.4, 0.3},
		{3, 0.3, 0.3},
	} {
		var got proflow.FlowForecast
		if err := f.Flow(&got, &proflow.Input{State: s, Current: tc.current}); err != nil {
			t.Fatal(err)
		}
		want := tc.throughput * enc.ThroughputScale
		if !got.OK || math.Abs(got.Throughput-want) > 1e-6*enc.ThroughputScale || math.Abs(got.AppLimited-tc.appl) > 1e-6 {
			t.Errorf("current %d: forecast %+v, want OK, throughput %v, app-limited %v", tc.current, got, want, tc.appl)
		}
	}
	// Clipped at 0: a change below the state's value forecasts a stopped flow.
	g, err := NewForecast(linearDynamics(t, enc, map[int]float32{phi: -2, al: 3}, 0), enc)
	if err != nil {
		t.Fatal(err)
	}
	var got proflow.FlowForecast
	if err := g.Flow(&got, &proflow.Input{State: s, Current: 1}); err != nil {
		t.Fatal(err)
	}
	if got != (proflow.FlowForecast{OK: true, Throughput: 0, AppLimited: 1}) {
		t.Errorf("clipped forecast %+v, want OK, 0 and 1", got)
	}
}

// Bad networks and inputs are refused with errors that name them.
func TestForecastErrors(t *testing.T) {
	enc := v8Encoder(t)
	if _, err := NewForecast(nil, enc); err == nil {
		t.Error("nil network: no error")
	}
	small := enc
	small.NumSwitches = 2
	if _, err := NewForecast(linearDynamics(t, enc, nil, 0), small.WithLayout(telemetry.StateLayoutV8)); err == nil || !strings.Contains(err.Error(), "want") {
		t.Errorf("a 4-switch network for a 2-switch encoder: error %v, want the sizes named", err)
	}
	f, err := NewForecast(linearDynamics(t, enc, nil, 0), enc)
	if err != nil {
		t.Fatal(err)
	}
	var got proflow.FlowForecast
	for _, in := range []*proflow.Input{
		nil,
		{State: make(proflow.State, 3), Current: 0},
		{State: make(proflow.State, enc.Dim()), Current: 4},
		{State: make(proflow.State, enc.Dim()), Current: -1},
	} {
		got = proflow.FlowForecast{OK: true}
		if err := f.Flow(&got, in); err == nil || got.OK {
			t.Errorf("input %+v: forecast %+v, error %v; want an error and no forecast", in, got, err)
		}
	}
}

// An agent forecasts only with a dynamics model of its own states; a clone
// keeps it.
func TestAgentForecast(t *testing.T) {
	a, enc := testAgent(t)
	var f proflow.FlowForecast
	in := &proflow.Input{State: make(proflow.State, enc.Dim()), Current: 1}
	if err := a.Forecast(&f, in); err != nil || f.OK {
		t.Fatalf("no dynamics model: forecast %+v, error %v; want none and no error", f, err)
	}
	phi := enc.FlowOffset() + telemetry.FeatureThroughput
	fc, err := NewForecast(linearDynamics(t, enc, map[int]float32{phi: 0.5}, 0), enc)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetForecast(fc); err != nil {
		t.Fatal(err)
	}
	for name, ag := range map[string]*Agent{"agent": a, "clone": a.Clone()} {
		f = proflow.FlowForecast{}
		if err := ag.Forecast(&f, in); err != nil || !f.OK || math.Abs(f.Throughput-0.5*enc.ThroughputScale) > 1e-6*enc.ThroughputScale {
			t.Errorf("%s: forecast %+v, error %v; want 0.5 of the throughput scale", name, f, err)
		}
	}
	other := enc
	other.RateScale *= 2
	other = other.WithLayout(enc.LayoutName())
	wrong, err := NewForecast(linearDynamics(t, other, nil, 0), other)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetForecast(wrong); err == nil || !strings.Contains(err.Error(), "use the dynamics model trained for this fabric") {
		t.Errorf("a dynamics model of another rate scale: error %v, want it refused", err)
	}
	if err := a.SetForecast(nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Forecast(&f, in); err != nil || f.OK {
		t.Errorf("after SetForecast(nil): forecast %+v, error %v; want none", f, err)
	}
}

// A model whose recorded gate counts forecasts loads with the dynamics
// model beside it (LoadModel), and without one it is refused naming the
// file; the same model recording the paper's distress loads without.
func TestLoadModelAttachesForecast(t *testing.T) {
	m, meta, err := qnet.Load("../models/default.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	gate, err := LoadGateConfig("../models/gate-testbed.json")
	if err != nil {
		t.Fatal(err)
	}
	gate.Distress.Forecast = true
	js, err := json.Marshal(gate)
	if err != nil {
		t.Fatal(err)
	}
	meta.Extra = maps.Clone(meta.Extra)
	meta.Extra[ModelGateKey] = string(js)
	dir := t.TempDir()
	path := filepath.Join(dir, "fc.safetensors")
	if err := qnet.Save(path, m, meta); err != nil {
		t.Fatal(err)
	}
	enc := telemetry.DefaultEncoderConfig(proflow.PaperTopology())
	if _, _, err := LoadModel(path, enc); err == nil || !strings.Contains(err.Error(), "fc.dynamics.safetensors") {
		t.Fatalf("no dynamics model beside it: error %v, want the file named", err)
	}
	dyn, err := os.ReadFile("../models/default.dynamics.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fc.dynamics.safetensors"), dyn, 0o644); err != nil {
		t.Fatal(err)
	}
	a, g, err := LoadModel(path, enc)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Distress.Forecast {
		t.Errorf("gate %+v, want the recorded forecast", g)
	}
	var f proflow.FlowForecast
	in := &proflow.Input{State: make(proflow.State, a.EncoderConfig().Dim()), Current: 0}
	if err := a.Forecast(&f, in); err != nil || !f.OK {
		t.Errorf("the loaded agent's forecast %+v, %v; want one", f, err)
	}
	// A fabric no dynamics model beside it was trained for: none (a view,
	// Project, is not taken by default).
	six := proflow.PaperTopology()
	six.Switches = append(six.Switches, "agg5", "agg6")
	b, _, err := LoadModel(path, telemetry.DefaultEncoderConfig(six))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Forecast(&f, &proflow.Input{State: make(proflow.State, b.EncoderConfig().Dim()), Current: 5}); err != nil || f.OK {
		t.Errorf("6 switches: forecast %+v, %v; want none", f, err)
	}
	// Fewer switches than the dynamics model's: none.
	two := proflow.PaperTopology()
	two.Switches = two.Switches[:2]
	c, _, err := LoadModel(path, telemetry.DefaultEncoderConfig(two))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Forecast(&f, &proflow.Input{State: make(proflow.State, c.EncoderConfig().Dim()), Current: 0}); err != nil || f.OK {
		t.Errorf("2 switches: forecast %+v, %v; want none", f, err)
	}
}

// Project's view of a larger fabric holds the flow's switch first, then
// the switches after it in index order, wrapping round, every leaf, the
// flow's features and the one-hot of slot 0; it refuses fabrics it cannot
// view.
func TestForecastProject(t *testing.T) {
	small := v8Encoder(t)
	f, err := NewForecast(linearDynamics(t, small, nil, 0), small)
	if err != nil {
		t.Fatal(err)
	}
	six := small
	six.NumSwitches = 6
	p, err := f.Project(six)
	if err != nil {
		t.Fatal(err)
	}
	if p.Reads() != six || p.Encoder() != small {
		t.Errorf("projection reads %+v through %+v, want the 6-switch encoder through the 4-switch one", p.Reads(), p.Encoder())
	}
	s := make([]float32, six.Dim())
	w := six.SwitchWidth()
	for k := range 6 {
		for i := range w {
			s[six.AggOffset(k)+i] = float32(k + 1)
		}
	}
	for i := six.LeafOffset(0); i < six.PlacementOffset(); i++ {
		s[i] = 100 + float32(i)
	}
	s[six.PlacementOffset()+4] = 1
	for i := six.FlowOffset(); i < six.Dim(); i++ {
		s[i] = 200 + float32(i-six.FlowOffset())
	}
	dst := make([]float32, small.Dim())
	p.view(dst, s, 4)
	for j, k := range []int{4, 5, 0, 1} {
		if got := dst[small.AggOffset(j)]; got != float32(k+1) {
			t.Errorf("view slot %d holds switch %v, want %d", j, got-1, k)
		}
	}
	for i := small.LeafOffset(0); i < small.PlacementOffset(); i++ {
		if want := s[six.LeafOffset(0)+i-small.LeafOffset(0)]; dst[i] != want {
			t.Errorf("view leaf value %d = %v, want %v", i, dst[i], want)
		}
	}
	if got := dst[small.PlacementOffset() : small.PlacementOffset()+4]; !slices.Equal(got, []float32{1, 0, 0, 0}) {
		t.Errorf("view placement %v, want slot 0", got)
	}
	for i := small.FlowOffset(); i < small.Dim(); i++ {
		if want := 200 + float32(i-small.FlowOffset()); dst[i] != want {
			t.Errorf("view flow feature %d = %v, want %v", i-small.FlowOffset(), dst[i], want)
		}
	}
	var got proflow.FlowForecast
	if err := p.Flow(&got, &proflow.Input{State: s, Current: 4}); err != nil || !got.OK {
		t.Errorf("projected Flow: %+v, %v; want a forecast", got, err)
	}
	if err := p.Flow(&got, &proflow.Input{State: make([]float32, small.Dim()), Current: 0}); err == nil {
		t.Error("projected Flow on a 4-switch state: no error")
	}
	for _, bad := range []telemetry.EncoderConfig{small, func() telemetry.EncoderConfig { c := six; c.NumLeaves = 7; return c }(),
		func() telemetry.EncoderConfig { c := six; c.RateScale *= 2; return c }()} {
		if _, err := f.Project(bad); err == nil {
			t.Errorf("Project(%d switches, %d leaves, rate scale %g): no error", bad.NumSwitches, bad.NumLeaves, bad.RateScale)
		}
	}
}

// LoadForecast refuses a path that is not a regular file without blocking,
// and LoadForecasts (so LoadModel, so proflow serve at start and reload)
// skips such an entry beside the model: os.Open blocked on a FIFO.
func TestLoadForecastsSkipsNonRegular(t *testing.T) {
	fileutiltest.RefusesNonRegular(t, "m.dynamics.safetensors", func(path string) error {
		_, _, err := LoadForecast(path)
		return err
	})
	dir := t.TempDir()
	model := filepath.Join(dir, "m.safetensors")
	if err := syscall.Mkfifo(filepath.Join(dir, "m.dynamics.safetensors"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "m.dynamics-6x3.safetensors"), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func() ([]*Forecast, error) {
		t.Helper()
		type result struct {
			fs  []*Forecast
			err error
		}
		done := make(chan result, 1)
		go func() { fs, err := LoadForecasts(model); done <- result{fs, err} }()
		select {
		case r := <-done:
			return r.fs, r.err
		case <-time.After(fileutiltest.Timeout):
			t.Fatalf("LoadForecasts(%s) blocked for %v on the FIFOs beside it", model, fileutiltest.Timeout)
		}
		return nil, nil
	}
	if _, err := load(); err == nil || !strings.Contains(err.Error(), "no dynamics model beside") {
		t.Errorf("only FIFOs beside the model: %v, want no dynamics model found", err)
	}
	dyn, err := os.ReadFile("../models/default.dynamics.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.dynamics-4x2.safetensors"), dyn, 0o644); err != nil {
		t.Fatal(err)
	}
	if fs, err := load(); err != nil || len(fs) != 1 {
		t.Errorf("a dynamics model and FIFOs beside the model: %d forecasts, %v; want the one", len(fs), err)
	}
}

// ReadForecast's errors quote at most safetensors.MaxEcho bytes of a
// metadata value.
func TestReadForecastErrorsQuoteBoundedValues(t *testing.T) {
	dyn, err := os.ReadFile("../models/default.dynamics.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 8<<20)
	for _, tc := range []struct{ key, value, want string }{
		{"format", long, `format "xxxx`},
		{"format_version", long, `format_version "xxxx`},
		{"encoder", long, `encoder "xxxx`},
		{"encoder", `{"` + long + `": 1}`, `unknown field "xxxx`},
		{"state_layout", long, `state_layout "xxxx`},
		{"architecture", long, `architecture "xxxx`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			meta, tensors, err := safetensors.Read(bytes.NewReader(dyn), qnet.MaxDataBytes)
			if err != nil {
				t.Fatal(err)
			}
			meta[tc.key] = tc.value
			var list []safetensors.Tensor
			for _, name := range slices.Sorted(maps.Keys(tensors)) {
				tn := tensors[name]
				tn.Name = name
				list = append(list, tn)
			}
			var file bytes.Buffer
			if err := safetensors.Write(&file, meta, list); err != nil {
				t.Fatal(err)
			}
			_, _, err = ReadForecast(&file, "dyn")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadForecast = %.300v…, want an error containing %q", err, tc.want)
			}
			if msg := err.Error(); len(msg) > 512 || !strings.Contains(msg, "more bytes)") {
				t.Errorf("error of %d bytes, want at most 512 saying what was cut: %.300s…", len(msg), msg)
			}
		})
	}
}
