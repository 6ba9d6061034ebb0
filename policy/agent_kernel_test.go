package policy

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
)

// Score and ScoreBatch run the same kernel: a state's scores are the same
// bits alone and in a batch, in a block of four rows (rows 0–63 of a batch
// of 70) or in the chunk's tail (rows 64–69).
func TestAgentScoreIsScoreBatchRow(t *testing.T) {
	agent, encCfg := testAgent(t)
	const n = 70
	dim, k := encCfg.Dim(), encCfg.NumSwitches
	rng := rand.New(rand.NewPCG(9, 9))
	states := randomStates(rng, n, dim)
	batch := make([]float64, n*k)
	if err := agent.ScoreBatch(batch, &proflow.BatchInput{N: n, Dim: dim, States: states}); err != nil {
		t.Fatal(err)
	}
	one := make([]float64, k)
	for j := range n {
		if err := agent.Score(one, &proflow.Input{State: states[j*dim : (j+1)*dim]}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(batch[j*k:(j+1)*k], one); diff != "" {
			t.Errorf("row %d: Score differs from ScoreBatch's row (-batch +score):\n%s", j, diff)
		}
	}
}

// Clones share no buffers: goroutines score their own states at once with
// their own clones (go test -race checks it), and each gets what the
// original agent gets alone; a clone does not allocate in Score either.
func TestAgentClonesScoreConcurrently(t *testing.T) {
	agent, encCfg := testAgent(t)
	const clones = 4
	rng := rand.New(rand.NewPCG(10, 10))
	ins, want, got := make([]*proflow.Input, clones), make([][]float64, clones), make([][]float64, clones)
	for g := range ins {
		ins[g] = &proflow.Input{State: randomState(rng, encCfg.Dim())}
		want[g], got[g] = make([]float64, 4), make([]float64, 4)
		if err := agent.Score(want[g], ins[g]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range ins {
		c := agent.Clone()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if err := c.Score(got[g], ins[g]); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for g := range ins {
		if diff := cmp.Diff(want[g], got[g]); diff != "" {
			t.Errorf("clone %d (-original +clone):\n%s", g, diff)
		}
	}
	c := agent.Clone()
	if a := testing.AllocsPerRun(50, func() {
		if err := c.Score(got[0], ins[0]); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("a clone's Score allocates %v times per call, want 0", a)
	}
}
