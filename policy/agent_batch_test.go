package policy

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow"
)

func TestAgentScoreBatchMatchesScore(t *testing.T) {
	agent, encCfg := testAgent(t)
	const n = 70
	dim, k := encCfg.Dim(), encCfg.NumSwitches
	rng := rand.New(rand.NewPCG(1, 2))
	states := randomStates(rng, n, dim)
	in := &proflow.BatchInput{N: n, Dim: dim, States: states}
	got := make([]float64, n*k)
	if err := agent.ScoreBatch(got, in); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, k)
	for j := range n {
		if err := agent.Score(want, &proflow.Input{State: states[j*dim : (j+1)*dim]}); err != nil {
			t.Fatal(err)
		}
		for s := range k {
			if g, w := got[j*k+s], want[s]; math.Abs(g-w) > 1e-5*(1+math.Abs(w)) {
				t.Errorf("row %d switch %d: ScoreBatch %v, Score %v", j, s, g, w)
			}
		}
	}
	if a := testing.AllocsPerRun(10, func() {
		if err := agent.ScoreBatch(got, in); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("ScoreBatch allocates %v times per call after the first, want 0", a)
	}
}

func TestAgentScoreBatchErrors(t *testing.T) {
	agent, encCfg := testAgent(t)
	dim := encCfg.Dim()
	for _, tc := range []struct {
		name   string
		scores []float64
		in     *proflow.BatchInput
		want   string
	}{
		{"nil input", nil, nil, "nil batch input"},
		{"wrong dim", make([]float64, 4), &proflow.BatchInput{N: 1, Dim: 5, States: make([]float32, 5)}, "batch states of 5 values, but the model takes 34"},
		{"short scores", make([]float64, 7), &proflow.BatchInput{N: 2, Dim: dim, States: make([]float32, 2*dim)}, "7 scores for 2 rows, want rows×4 switches = 8"},
		{"short states", make([]float64, 8), &proflow.BatchInput{N: 2, Dim: dim, States: make([]float32, dim)}, "states has 34 values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := agent.ScoreBatch(tc.scores, tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ScoreBatch = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
