package policy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// fabricEncoder returns the default encoder configuration, layout unset,
// of a fabric of nS switches and nL congestion leaves whose buckets run at
// bucketRate bytes/s.
func fabricEncoder(nS, nL int, bucketRate float64) telemetry.EncoderConfig {
	topo := proflow.Topology{Switches: make([]string, nS), Leaves: make([]string, nL), BucketRate: bucketRate}
	for k := range topo.Switches {
		topo.Switches[k] = fmt.Sprint("agg", k)
	}
	for l := range topo.Leaves {
		topo.Leaves[l] = fmt.Sprint("leaf", l)
	}
	return telemetry.DefaultEncoderConfig(topo)
}

// universalModel returns a seeded random universal network of the given
// hidden widths, trained (so its metadata says) on the paper's fabric in
// layout v2, and its metadata.
func universalModel(t testing.TB, hidden ...int) (*qnet.Model, qnet.Metadata) {
	t.Helper()
	ref := paperEncoder().WithLayout(telemetry.StateLayoutV2)
	sizes := append(append([]int{ref.CandidateDim()}, hidden...), 1)
	m, err := qnet.New(sizes, rand.New(rand.NewPCG(21, 22)))
	if err != nil {
		t.Fatal(err)
	}
	meta := qnet.NewUniversalMetadata(ref)
	meta.MadeBy = "policy test"
	return m, meta
}

// universalAgent returns an agent of universalModel (hidden 32) deployed
// on the default encoder of a fabric of nS switches and nL leaves at the
// paper's bucket rate.
func universalAgent(t testing.TB, nS, nL int) *Agent {
	t.Helper()
	m, meta := universalModel(t, 32)
	a, err := NewAgent(m, meta, fabricEncoder(nS, nL, proflow.PaperTopology().BucketRate))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// placedState returns a random state for enc whose placement one-hot marks
// switch cur.
func placedState(rng *rand.Rand, enc telemetry.EncoderConfig, cur int) proflow.State {
	s := randomState(rng, enc.Dim())
	p := s[enc.PlacementOffset():][:enc.NumSwitches]
	clear(p)
	p[cur] = 1
	return s
}

// placedStates returns n states of placedState, back to back, each on a
// random switch.
func placedStates(rng *rand.Rand, enc telemetry.EncoderConfig, n int) []float32 {
	states := make([]float32, 0, n*enc.Dim())
	for range n {
		states = append(states, placedState(rng, enc, rng.IntN(enc.NumSwitches))...)
	}
	return states
}

// close32 reports whether two float32 results agree up to float32 rounding.
func close32(got, want float64) bool { return math.Abs(got-want) <= 1e-5*(1+math.Abs(want)) }

// A universal agent scores fabrics of any size, with Q(s, k) = MLP(row_k)
// bit for bit.
func TestUniversalAgentScoresAnyFabric(t *testing.T) {
	m, meta := universalModel(t, 32)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, size := range [][2]int{{2, 0}, {4, 3}, {6, 2}, {16, 5}} {
		nS, nL := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", nS, nL), func(t *testing.T) {
			a, err := NewAgent(m, meta, fabricEncoder(nS, nL, proflow.PaperTopology().BucketRate))
			if err != nil {
				t.Fatal(err)
			}
			enc := a.EncoderConfig()
			if !a.Universal() || enc.NumSwitches != nS || enc.NumLeaves != nL || enc.LayoutName() != telemetry.StateLayoutV2 {
				t.Fatalf("agent universal %v, encoder %+v; want universal, %d switches, %d leaves, layout v2", a.Universal(), enc, nS, nL)
			}
			dim := enc.CandidateDim()
			rows, q := make([]float32, nS*dim), make([]float32, 1)
			scores := make([]float64, nS)
			for range 5 {
				state := placedState(rng, enc, rng.IntN(nS))
				if err := a.Score(scores, &proflow.Input{State: state}); err != nil {
					t.Fatal(err)
				}
				if err := enc.EncodeCandidates(rows, state); err != nil {
					t.Fatal(err)
				}
				for k, got := range scores {
					// Forward is the MLP, checked against the textbook loop
					// in package qnet; a row's output is the same bits alone
					// and in a batch.
					if err := m.Forward(q, rows[k*dim:][:dim]); err != nil {
						t.Fatal(err)
					}
					if want := float64(q[0]); got != want {
						t.Errorf("switch %d: score %v, MLP(row_%d) = %v", k, got, k, want)
					}
				}
			}
		})
	}
}

// Permuting the switches of a state permutes the agent's scores alike.
func TestUniversalAgentIsEquivariant(t *testing.T) {
	a := universalAgent(t, 6, 2)
	enc := a.EncoderConfig()
	rng := rand.New(rand.NewPCG(7, 8))
	w, p := enc.SwitchWidth(), enc.PlacementOffset()
	scores, permuted := make([]float64, 6), make([]float64, 6)
	for range 20 {
		state := placedState(rng, enc, rng.IntN(6))
		perm := rng.Perm(6)
		moved := append(proflow.State(nil), state...)
		for k, to := range perm {
			copy(moved[enc.AggOffset(to):][:w], state[enc.AggOffset(k):][:w])
			moved[p+to] = state[p+k]
		}
		if err := a.Score(scores, &proflow.Input{State: state}); err != nil {
			t.Fatal(err)
		}
		if err := a.Score(permuted, &proflow.Input{State: moved}); err != nil {
			t.Fatal(err)
		}
		for k, to := range perm {
			if !close32(permuted[to], scores[k]) {
				t.Errorf("permutation %v: switch %d scores %v, as switch %d of the permuted state %v", perm, k, scores[k], to, permuted[to])
			}
		}
	}
}

// ScoreBatch's rows are Score's, bit for bit, in blocks and in a chunk's
// tail; neither allocates in steady state, nor does a clone, which scores
// alike.
func TestUniversalAgentScoreBatch(t *testing.T) {
	a := universalAgent(t, 4, 3)
	enc := a.EncoderConfig()
	const n = 70
	dim, k := enc.Dim(), enc.NumSwitches
	states := placedStates(rand.New(rand.NewPCG(9, 10)), enc, n)
	in := &proflow.BatchInput{N: n, Dim: dim, States: states}
	batch := make([]float64, n*k)
	if err := a.ScoreBatch(batch, in); err != nil {
		t.Fatal(err)
	}
	c := a.Clone()
	one, cloned := make([]float64, k), make([]float64, k)
	for j := range n {
		sin := &proflow.Input{State: states[j*dim:][:dim]}
		if err := a.Score(one, sin); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(batch[j*k:][:k], one); diff != "" {
			t.Errorf("row %d: Score differs from ScoreBatch's row (-batch +score):\n%s", j, diff)
		}
		if err := c.Score(cloned, sin); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(one, cloned); diff != "" {
			t.Errorf("row %d: the clone scores differently (-agent +clone):\n%s", j, diff)
		}
	}
	sin := &proflow.Input{State: states[:dim]}
	// Each run scores with a clone that has never scored. AllocsPerRun
	// (one warm-up run, then the average of the rest, at GOMAXPROCS 1)
	// keeps the count to this goroutine's work: reading the process's
	// malloc counter around one call also counted whatever else ran then (a
	// goroutine an earlier test left, the runtime's own): CI once saw 2.
	const runs = 20
	clones := make([]*Agent, runs+1)
	for i := range clones {
		clones[i] = a.Clone()
	}
	next := 0
	if allocs := testing.AllocsPerRun(runs, func() {
		if err := clones[next].Score(one, sin); err != nil {
			t.Fatal(err)
		}
		next++
	}); allocs != 0 {
		t.Errorf("a fresh clone's first Score allocates %v times, want 0 (its buffers come with it)", allocs)
	}
	fresh := clones[runs]
	for name, f := range map[string]func() error{
		"Score":      func() error { return a.Score(one, sin) },
		"clone":      func() error { return fresh.Score(one, sin) },
		"ScoreBatch": func() error { return a.ScoreBatch(batch, in) },
		"ScoreBatch 3": func() error {
			return a.ScoreBatch(batch[:3*k], &proflow.BatchInput{N: 3, Dim: dim, States: states[:3*dim]})
		},
	} {
		if allocs := testing.AllocsPerRun(20, func() {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%s allocates %v times per call, want 0", name, allocs)
		}
	}
}

func TestUniversalAgentErrors(t *testing.T) {
	a := universalAgent(t, 4, 3)
	enc := a.EncoderConfig()
	dim := enc.Dim()
	noOneHot := make(proflow.State, dim)
	if err := a.Score(make([]float64, 4), &proflow.Input{State: noOneHot}); err == nil || !strings.Contains(err.Error(), "placement one-hot marks no switch") {
		t.Errorf("Score of a state placed nowhere = %v, want the one-hot error", err)
	}
	if err := a.Score(make([]float64, 4), &proflow.Input{State: make(proflow.State, 30)}); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("state has 30 values, want %d", dim)) {
		t.Errorf("Score of a short state = %v, want a length error", err)
	}
	states := placedStates(rand.New(rand.NewPCG(1, 1)), enc, 3)
	for _, tc := range []struct {
		name string
		in   *proflow.BatchInput
		want string
	}{
		{"short states", &proflow.BatchInput{N: 3, Dim: dim, States: states[:2*dim]}, fmt.Sprintf("states has %d values, want n×state dim = 3×%d", 2*dim, dim)},
		{"one-hot", &proflow.BatchInput{N: 3, Dim: dim, States: append(states[:2*dim:2*dim], noOneHot...)}, "state 2: telemetry: placement one-hot marks no switch"},
		{"wrong dim", &proflow.BatchInput{N: 1, Dim: enc.CandidateDim(), States: make([]float32, enc.CandidateDim())}, fmt.Sprintf("batch states of 41 values, but the model takes %d", dim)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := a.ScoreBatch(make([]float64, tc.in.N*4), tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ScoreBatch = %v, want an error containing %q", err, tc.want)
			}
		})
	}

	// A universal network must have one output.
	m, err := qnet.New([]int{enc.CandidateDim(), 8, 4}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewAgent(m, qnet.NewUniversalMetadata(enc), enc); err == nil || !strings.Contains(err.Error(), "4 outputs but its metadata says it is universal") {
		t.Errorf("NewAgent of a universal model with 4 outputs = %v, want an output error", err)
	}
}

// A universal model serves any bucket rate with proportional scaling, and
// refuses other scaling naming the field.
func TestUniversalAgentScaling(t *testing.T) {
	m, meta := universalModel(t, 32)
	rate := proflow.PaperTopology().BucketRate
	fast := fabricEncoder(8, 3, 4*rate)
	a, err := NewAgent(m, meta, fast)
	if err != nil {
		t.Fatalf("bucket rate ×4, constants scaled alike: %v", err)
	}
	if got, want := a.EncoderConfig(), fast.WithLayout(telemetry.StateLayoutV2); got != want {
		t.Errorf("EncoderConfig() = %+v, want the deployment's in v2 %+v", got, want)
	}

	for _, tc := range []struct {
		name   string
		deploy func(*telemetry.EncoderConfig)
		field  string
	}{
		{"overflow/rate", func(c *telemetry.EncoderConfig) { c.OverflowScale *= 2 }, "encoder.overflow_scale/rate_scale"},
		{"queue/rate", func(c *telemetry.EncoderConfig) { c.QueueScale /= 3 }, "encoder.queue_scale/rate_scale"},
		{"drop window", func(c *telemetry.EncoderConfig) { c.DropWindow = 4 }, "encoder.drop_window"},
		{"layout pinned to v1", func(c *telemetry.EncoderConfig) { c.Layout, c.QueueScale = telemetry.StateLayout, 0 }, "state_layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := fast.WithLayout(telemetry.StateLayoutV2)
			tc.deploy(&enc)
			_, err := NewAgent(m, meta, enc)
			var me *ModelMismatchError
			if !errors.As(err, &me) || me.Field != tc.field || !me.Universal {
				t.Fatalf("NewAgent = %v, want a universal *ModelMismatchError on %s", err, tc.field)
			}
			for _, s := range []string{tc.field, me.Model, me.Deployment, "universal model fits any fabric size"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q does not name %q", err, s)
				}
			}
		})
	}
}

// LoadModel runs a universal model file on a fabric of another size, with
// the gate and interval the model records.
func TestLoadUniversalModel(t *testing.T) {
	m, meta := universalModel(t, 16)
	meta.Extra = map[string]string{ModelGateKey: `{"votes": 5, "cooldown": "10s"}`, ModelIntervalKey: "250ms"}
	path := filepath.Join(t.TempDir(), "universal.safetensors")
	if err := qnet.Save(path, m, meta); err != nil {
		t.Fatal(err)
	}
	a, gate, err := LoadModel(path, fabricEncoder(6, 2, proflow.PaperTopology().BucketRate))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ModelGate(meta)
	if err != nil {
		t.Fatal(err)
	}
	if gate != want || gate.Votes != 5 {
		t.Errorf("LoadModel gate = %+v, want the recorded %+v", gate, want)
	}
	if !a.Universal() || a.EncoderConfig().NumSwitches != 6 || a.TrainedInterval().String() != "250ms" {
		t.Errorf("agent universal %v, %d switches, interval %v; want universal, 6, 250ms", a.Universal(), a.EncoderConfig().NumSwitches, a.TrainedInterval())
	}
	scores := make([]float64, 6)
	if err := a.Score(scores, &proflow.Input{State: placedState(rand.New(rand.NewPCG(2, 2)), a.EncoderConfig(), 3)}); err != nil {
		t.Error(err)
	}
}

// Clone keeps what the agent was built with: the encoder configuration
// (the model's layout taken by a deployment that pinned none), metadata
// and interval.
func TestAgentCloneKeepsEverything(t *testing.T) {
	deploy := fabricEncoder(4, 3, proflow.PaperTopology().BucketRate)
	perFabric, perMeta := testModel(t, deploy.WithLayout(telemetry.StateLayoutV2))
	perMeta.Extra = map[string]string{ModelIntervalKey: "250ms"}
	uni, uniMeta := universalModel(t, 8)
	for name, mm := range map[string]struct {
		m    *qnet.Model
		meta qnet.Metadata
	}{"per-fabric": {perFabric, perMeta}, "universal": {uni, uniMeta}} {
		t.Run(name, func(t *testing.T) {
			a, err := NewAgent(mm.m, mm.meta, deploy)
			if err != nil {
				t.Fatal(err)
			}
			c := a.Clone()
			if c.EncoderConfig() != a.EncoderConfig() || c.EncoderConfig().LayoutName() != telemetry.StateLayoutV2 {
				t.Errorf("clone's EncoderConfig() = %+v, want the agent's %+v", c.EncoderConfig(), a.EncoderConfig())
			}
			if diff := cmp.Diff(a.Metadata(), c.Metadata()); diff != "" {
				t.Errorf("clone's metadata (-agent +clone):\n%s", diff)
			}
			if c.TrainedInterval() != a.TrainedInterval() || c.Universal() != a.Universal() {
				t.Errorf("clone: interval %v, universal %v; want %v, %v", c.TrainedInterval(), c.Universal(), a.TrainedInterval(), a.Universal())
			}
		})
	}
}

// A universal model of layout v3 deploys on any fabric's default encoder:
// the agent takes the model's layout with the deficit depth derived from
// the deployment's bucket rate, scores MLP(row_k) over the 46-value rows,
// and a deployment pinned to v2 is refused.
func TestUniversalAgentLayoutV3(t *testing.T) {
	ref := paperEncoder().WithLayout(telemetry.StateLayoutV3)
	m, err := qnet.New([]int{ref.CandidateDim(), 16, 1}, rand.New(rand.NewPCG(23, 24)))
	if err != nil {
		t.Fatal(err)
	}
	meta := qnet.NewUniversalMetadata(ref)
	meta.MadeBy = "policy test"
	deploy := fabricEncoder(8, 3, 1.25e9) // 10 Gbit/s buckets
	a, err := NewAgent(m, meta, deploy)
	if err != nil {
		t.Fatal(err)
	}
	enc := a.EncoderConfig()
	if enc.LayoutName() != telemetry.StateLayoutV3 || enc.DeficitScale != 1.25e9*telemetry.DeficitSeconds || enc.CandidateDim() != 46 {
		t.Fatalf("encoder layout %s, deficit scale %v, rows of %d; want %s, %v, 46",
			enc.LayoutName(), enc.DeficitScale, enc.CandidateDim(), telemetry.StateLayoutV3, 1.25e9*telemetry.DeficitSeconds)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	state := placedState(rng, enc, 5)
	scores, rows, q := make([]float64, 8), make([]float32, 8*46), make([]float32, 1)
	if err := a.Score(scores, &proflow.Input{State: state}); err != nil {
		t.Fatal(err)
	}
	if err := enc.EncodeCandidates(rows, state); err != nil {
		t.Fatal(err)
	}
	for k, got := range scores {
		if err := m.Forward(q, rows[k*46:][:46]); err != nil {
			t.Fatal(err)
		}
		if got != float64(q[0]) {
			t.Errorf("switch %d: score %v, MLP(row) %v", k, got, q[0])
		}
	}
	if _, err := NewAgent(m, meta, deploy.WithLayout(telemetry.StateLayoutV2)); err == nil || !strings.Contains(err.Error(), "proflow-state-v3") {
		t.Errorf("a v2 deployment of a v3 model: %v, want a mismatch naming the model's layout", err)
	}
}

// A per-fabric model of layout v3 names a deployment's other deficit depth.
func TestPerFabricAgentDeficitScale(t *testing.T) {
	enc := paperEncoder().WithLayout(telemetry.StateLayoutV3)
	m, meta := testModel(t, enc)
	deploy := enc
	deploy.DeficitScale *= 2
	_, err := NewAgent(m, meta, deploy)
	var mm *ModelMismatchError
	if !errors.As(err, &mm) || mm.Field != "encoder.deficit_scale" {
		t.Errorf("a deployment with twice the deficit depth: %v, want a mismatch on encoder.deficit_scale", err)
	}
	if _, err := NewAgent(m, meta, enc); err != nil {
		t.Errorf("the model's own encoder: %v", err)
	}
}
