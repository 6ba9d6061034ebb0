package policy

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

func paperEncoder() telemetry.EncoderConfig {
	return telemetry.DefaultEncoderConfig(proflow.PaperTopology())
}

// testModel returns a seeded random model with the default architecture for
// enc, and its metadata.
func testModel(t testing.TB, enc telemetry.EncoderConfig) (*qnet.Model, qnet.Metadata) {
	t.Helper()
	m, err := qnet.New([]int{enc.Dim(), 256, 256, enc.NumSwitches}, rand.New(rand.NewPCG(11, 12)))
	if err != nil {
		t.Fatal(err)
	}
	meta := qnet.NewMetadata(enc)
	meta.MadeBy = "policy test"
	return m, meta
}

// testAgent returns the agent of testModel for the paper's encoder.
func testAgent(t testing.TB) (*Agent, telemetry.EncoderConfig) {
	t.Helper()
	encCfg := paperEncoder()
	m, meta := testModel(t, encCfg)
	agent, err := NewAgent(m, meta, encCfg)
	if err != nil {
		t.Fatal(err)
	}
	return agent, encCfg
}

// randomStates returns n random states of dim values each, back to back.
func randomStates(rng *rand.Rand, n, dim int) []float32 {
	states := make([]float32, 0, n*dim)
	for range n {
		states = append(states, randomState(rng, dim)...)
	}
	return states
}

func randomState(rng *rand.Rand, n int) proflow.State {
	s := make(proflow.State, n)
	for i := range s {
		s[i] = rng.Float32()
	}
	return s
}

func TestAgentScoresAreQValues(t *testing.T) {
	enc := paperEncoder()
	m, meta := testModel(t, enc)
	a, err := NewAgent(m, meta, enc)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	q := make([]float32, 4)
	scores := make([]float64, 4)
	for range 10 {
		state := randomState(rng, enc.Dim())
		if err := m.Forward(q, state); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, 4)
		for k := range q {
			want[k] = float64(q[k])
		}
		if err := a.Score(scores, &proflow.Input{State: state}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, scores); diff != "" {
			t.Errorf("scores (-want +got):\n%s", diff)
		}
	}
}

// TestAgentReadsOnlyTheState: the same state gives the same scores whatever
// the raw observation, time and current switch say.
func TestAgentReadsOnlyTheState(t *testing.T) {
	enc := paperEncoder()
	m, meta := testModel(t, enc)
	a, err := NewAgent(m, meta, enc)
	if err != nil {
		t.Fatal(err)
	}
	state := randomState(rand.New(rand.NewPCG(2, 2)), enc.Dim())
	want := make([]float64, 4)
	if err := a.Score(want, &proflow.Input{State: state}); err != nil {
		t.Fatal(err)
	}
	obs := &proflow.Observation{Time: t0, Switches: []proflow.SwitchSample{sw(1e6, 1e6, 40), sw(0, 0, 0), sw(0, 0, 0), sw(0, 0, 0)}}
	for _, in := range []*proflow.Input{
		{State: state, Obs: obs, Current: 0, Time: t0},
		{State: state, Obs: obs, Current: 3, Time: at(100)},
	} {
		got := make([]float64, 4)
		if err := a.Score(got, in); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("scores changed with the observation (-want +got):\n%s", diff)
		}
	}
}

func TestAgentRefusesMismatchedEncoder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		deploy func(*telemetry.EncoderConfig)
		meta   func(*qnet.Metadata)
		want   *ModelMismatchError
	}{
		{"overflow scale", func(c *telemetry.EncoderConfig) { c.OverflowScale = 40000 }, nil,
			&ModelMismatchError{Field: "encoder.overflow_scale", Model: "50000", Deployment: "40000"}},
		{"rate scale", func(c *telemetry.EncoderConfig) { c.RateScale = 12.5e6 }, nil,
			&ModelMismatchError{Field: "encoder.rate_scale", Model: "2.5e+07", Deployment: "1.25e+07"}},
		{"flow count scale", func(c *telemetry.EncoderConfig) { c.FlowCountScale = 10 }, nil,
			&ModelMismatchError{Field: "encoder.flow_count_scale", Model: "12", Deployment: "10"}},
		{"ingress scale", func(c *telemetry.EncoderConfig) { c.IngressScale = 1 }, nil,
			&ModelMismatchError{Field: "encoder.ingress_scale", Model: "5e+07", Deployment: "1"}},
		{"throughput scale", func(c *telemetry.EncoderConfig) { c.ThroughputScale = 2e7 }, nil,
			&ModelMismatchError{Field: "encoder.throughput_scale", Model: "2.5e+07", Deployment: "2e+07"}},
		{"drop window", func(c *telemetry.EncoderConfig) { c.DropWindow = 4 }, nil,
			&ModelMismatchError{Field: "encoder.drop_window", Model: "10", Deployment: "4"}},
		{"switches", func(c *telemetry.EncoderConfig) { c.NumSwitches = 5 }, nil,
			&ModelMismatchError{Field: "num_switches", Model: "4", Deployment: "5"}},
		{"leaves", func(c *telemetry.EncoderConfig) { c.NumLeaves = 2 }, nil,
			&ModelMismatchError{Field: "num_leaves", Model: "3", Deployment: "2"}},
		{"layout", nil, func(md *qnet.Metadata) { md.StateLayout = "proflow-state-v0" },
			&ModelMismatchError{Field: "state_layout", Model: `"proflow-state-v0"`, Deployment: `"proflow-state-v1"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := paperEncoder()
			m, meta := testModel(t, enc)
			if tc.deploy != nil {
				tc.deploy(&enc)
			}
			if tc.meta != nil {
				tc.meta(&meta)
			}
			_, err := NewAgent(m, meta, enc)
			var me *ModelMismatchError
			if !errors.As(err, &me) {
				t.Fatalf("NewAgent = %v, want a *ModelMismatchError", err)
			}
			if diff := cmp.Diff(tc.want, me); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if !errors.Is(err, ErrModelMismatch) {
				t.Errorf("%v does not match ErrModelMismatch", err)
			}
			for _, s := range []string{tc.want.Field, tc.want.Model, tc.want.Deployment} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q does not name %q", err, s)
				}
			}
		})
	}
}

func TestAgentRefusesInconsistentModel(t *testing.T) {
	enc := paperEncoder()
	m, meta := testModel(t, enc)
	meta.StateDim = 33
	if _, err := NewAgent(m, meta, enc); err == nil || !strings.Contains(err.Error(), "takes 34 inputs but its metadata says state_dim 33") {
		t.Errorf("NewAgent = %v, want a state_dim error", err)
	}
	bad := enc
	bad.DropWindow = 0
	if _, err := NewAgent(m, qnet.NewMetadata(enc), bad); err == nil || !strings.Contains(err.Error(), "drop_window 0") {
		t.Errorf("NewAgent with an invalid encoder config = %v, want its validation error", err)
	}
}

func TestLoadAgent(t *testing.T) {
	enc := paperEncoder()
	m, meta := testModel(t, enc)
	path := filepath.Join(t.TempDir(), "agent.safetensors")
	if err := qnet.Save(path, m, meta); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAgent(path, enc)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Metadata().MadeBy; got != "policy test" {
		t.Errorf("MadeBy = %q, want %q", got, "policy test")
	}
	state := randomState(rand.New(rand.NewPCG(3, 3)), enc.Dim())
	want, got := make([]float64, 4), make([]float64, 4)
	orig, err := NewAgent(m, meta, enc)
	if err != nil {
		t.Fatal(err)
	}
	if err := orig.Score(want, &proflow.Input{State: state}); err != nil {
		t.Fatal(err)
	}
	if err := a.Clone().Score(got, &proflow.Input{State: state}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loaded agent scores (-want +got):\n%s", diff)
	}

	other := enc
	other.OverflowScale = 1
	if _, err := LoadAgent(path, other); !errors.Is(err, ErrModelMismatch) || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadAgent with another encoder = %v, want ErrModelMismatch naming %s", err, path)
	}
	if _, err := LoadAgent(filepath.Join(t.TempDir(), "none"), enc); err == nil {
		t.Error("LoadAgent of a missing file succeeded")
	}
}

func TestAgentScoreErrors(t *testing.T) {
	enc := paperEncoder()
	m, meta := testModel(t, enc)
	a, err := NewAgent(m, meta, enc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		scores int
		in     *proflow.Input
		want   string
	}{
		{"nil input", 4, nil, "nil input"},
		{"scores", 3, &proflow.Input{State: make(proflow.State, 34)}, "3 scores, but the model scores 4 switches"},
		{"state", 4, &proflow.Input{State: make(proflow.State, 30)}, "input has 30 values, want 34"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := a.Score(make([]float64, tc.scores), tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Score = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestAgentScoreDoesNotAllocate(t *testing.T) {
	enc := paperEncoder()
	m, meta := testModel(t, enc)
	a, err := NewAgent(m, meta, enc)
	if err != nil {
		t.Fatal(err)
	}
	in := &proflow.Input{State: randomState(rand.New(rand.NewPCG(4, 4)), enc.Dim())}
	scores := make([]float64, 4)
	if n := testing.AllocsPerRun(50, func() {
		if err := a.Score(scores, in); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Score allocates %v times per call, want 0", n)
	}
}

// An agent keeps its own copy of the model's metadata: changing the map
// the caller passed in, or the one Metadata returns, changes neither the
// agent's gate nor its clone's.
func TestAgentMetadataIsACopy(t *testing.T) {
	enc := paperEncoder()
	m, meta := testModel(t, enc)
	meta.Extra = map[string]string{ModelGateKey: `{"votes": 5}`}
	a, err := NewAgent(m, meta, enc)
	if err != nil {
		t.Fatal(err)
	}
	c := a.Clone()
	meta.Extra[ModelGateKey] = `{"votes": 0}`
	a.Metadata().Extra[ModelGateKey] = `{"votes": 0}`
	for name, agent := range map[string]*Agent{"agent": a, "clone": c} {
		g, err := agent.Gate()
		if err != nil || g.Votes != 5 {
			t.Errorf("%s's gate after its metadata's map was changed outside: %+v, %v; want 5 votes", name, g, err)
		}
	}
}
