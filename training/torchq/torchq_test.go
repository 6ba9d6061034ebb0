//go:build torch

package torchq

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/training"
	"github.com/sugarme/gotch"
)

func paperEncoder() telemetry.EncoderConfig {
	return telemetry.DefaultEncoderConfig(proflow.PaperTopology())
}

// The toy fabric: in every episode one switch is clean (overflow feature
// about 0.05) and the others congested (0.6 to 1, redrawn each step). The
// reward of a step is Eq. 4 read on the switch the flow ends up on, so the
// clean switch is always the better action, by about 1.4 per step; the
// behaviour policy stays half of the time and otherwise moves at random.
const toyPhi0 = 0.92

func toyOverflow(rng *rand.Rand, clean, switches int) []float64 {
	u := make([]float64, switches)
	for k := range u {
		if k == clean {
			u[k] = 0.04 + 0.02*rng.Float64()
		} else {
			u[k] = 0.6 + 0.4*rng.Float64()
		}
	}
	return u
}

func toyState(enc telemetry.EncoderConfig, u []float64, cur int) []float32 {
	s := make([]float32, enc.Dim())
	var mean float64
	for k, v := range u {
		s[enc.AggOffset(k)+telemetry.FeatureTxRate] = float32(0.5 + 0.5*v)
		s[enc.AggOffset(k)+telemetry.FeatureOverflow] = float32(v)
		mean += v / float64(len(u))
	}
	s[enc.PlacementOffset()+cur] = 1
	s[enc.FlowOffset()+telemetry.FeatureThroughput] = float32(toyPhi0 * (1 - 0.8*u[cur]))
	s[enc.FlowOffset()+telemetry.FeatureCongestionRate] = float32(mean)
	return s
}

func toyDataset(t testing.TB, episodes, steps int, seed uint64) *training.Dataset {
	t.Helper()
	return toyDatasetOf(t, paperEncoder(), episodes, steps, seed)
}

// toyDatasetOf is toyDataset on the fabric of enc.
func toyDatasetOf(t testing.TB, enc telemetry.EncoderConfig, episodes, steps int, seed uint64) *training.Dataset {
	t.Helper()
	nS := enc.NumSwitches
	ds, err := training.NewDataset(enc, "toy", true)
	if err != nil {
		t.Fatal(err)
	}
	rc := training.DefaultRewardConfig()
	rng := rand.New(rand.NewPCG(seed, 99))
	for e := range episodes {
		clean, cur := rng.IntN(nS), rng.IntN(nS)
		s := toyState(enc, toyOverflow(rng, clean, nS), cur)
		for st := range steps {
			a := cur
			if rng.IntN(2) == 0 {
				a = rng.IntN(nS)
			}
			u := toyOverflow(rng, clean, nS)
			next := toyState(enc, u, a)
			in := training.RewardInputs{ThroughputNorm: 1 - 0.8*u[a], Overflow: u[a]}
			tr := training.Transition{State: s, Action: a, Reward: float32(rc.Real(in)), Next: next, Done: st == steps-1,
				Current: cur, Episode: e, Step: st, ThroughputBaseline: toyPhi0, Inputs: &in}
			if err := ds.Append(tr); err != nil {
				t.Fatal(err)
			}
			s, cur = next, a
		}
	}
	return ds
}

// checkGreedyClean checks that the greedy action of Q-values qValues is
// the clean switch in at least a fraction want of 400 fresh toy states of
// enc's fabric.
func checkGreedyClean(t *testing.T, enc telemetry.EncoderConfig, want float64, qValues func(s []float32) []float32) {
	t.Helper()
	nS := enc.NumSwitches
	rng := rand.New(rand.NewPCG(1234, 5))
	var right, n int
	for range 400 {
		clean, cur := rng.IntN(nS), rng.IntN(nS)
		if argmax(qValues(toyState(enc, toyOverflow(rng, clean, nS), cur))) == clean {
			right++
		}
		n++
	}
	t.Logf("%d switches: greedy action is the clean switch in %d of %d fresh states", nS, right, n)
	if float64(right) < want*float64(n) {
		t.Errorf("%d switches: greedy action is the clean switch in %d of %d fresh states, want at least %.0f%%", nS, right, n, 100*want)
	}
}

// smokeConfig is a small, fast configuration for the toy fabric.
func smokeConfig() training.TrainConfig {
	c := training.DefaultTrainConfig()
	c.Hidden = []int{64, 64}
	c.DynamicsHidden = []int{64, 64}
	c.BatchSize = 64
	c.Gamma = 0.5
	c.QLearningRate = 2e-3
	c.DynamicsLearningRate = 2e-3
	c.TargetUpdatePeriod = 20
	c.DynamicsEpochs = 15
	c.MinDynamicsTransitions = 0
	c.FQIEpochs = 40
	c.DynaEpochs = 4
	c.DynaRollouts = 16
	c.DynaHorizon = 3
	c.HeldOut = 0.2
	c.Seed = 7
	return c
}

func TestTrainSmoke(t *testing.T) {
	ds := toyDataset(t, 50, 10, 1)
	var progress bytes.Buffer
	res, err := Train(context.Background(), ds, smokeConfig(), &progress)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	rep := res.Report
	for _, line := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		t.Log(line)
	}
	first, last := rep.FQI[0].Loss, rep.FQI[len(rep.FQI)-1].Loss
	t.Logf("FQI loss %.5f (epoch 1) -> %.5f (epoch %d); Dyna loss %.5f, synthetic %.5f",
		first, last, len(rep.FQI), rep.Dyna[len(rep.Dyna)-1].Loss, rep.Dyna[len(rep.Dyna)-1].SyntheticLoss)
	if !(last < 0.5*first) {
		t.Errorf("FQI loss went from %.5f to %.5f, want below half", first, last)
	}
	for _, e := range append(rep.FQI, rep.Dyna...) {
		if math.IsNaN(e.Loss) || math.IsInf(e.Loss, 0) {
			t.Fatalf("%s epoch %d: loss %v", e.Stage, e.Epoch, e.Loss)
		}
	}
	if rep.Dyna[0].Synthetic == 0 {
		t.Error("Dyna made no synthetic transitions")
	}

	// The greedy action of the exported pure-Go network on fresh states is
	// the clean switch.
	q := make([]float32, 4)
	checkGreedyClean(t, ds.Encoder, 0.9, func(s []float32) []float32 {
		if err := res.Q.Forward(q, s); err != nil {
			t.Fatal(err)
		}
		return q
	})
	if res.Dynamics == nil {
		t.Fatal("no dynamics model")
	}
}

func TestDynamicsBeatsNaive(t *testing.T) {
	ds := toyDataset(t, 50, 10, 2)
	cfg := smokeConfig()
	tr, err := NewTrainer(cfg, ds.Encoder, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	train, held, err := ds.Split(0.2, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	reps, err := tr.TrainDynamics(context.Background(), train, held)
	if err != nil {
		t.Fatal(err)
	}
	r := reps[len(reps)-1]
	t.Logf("held-out one-step MSE after %d epochs: model %.5f, naive %.5f; reroutes: model %.5f, naive %.5f",
		r.Epoch, r.HeldMSE, r.NaiveMSE, r.HeldRerouteMSE, r.NaiveRerouteMSE)
	if !(r.HeldMSE < 0.8*r.NaiveMSE) {
		t.Errorf("held-out MSE %.5f, naive %.5f: want the model clearly better", r.HeldMSE, r.NaiveMSE)
	}
	if !(r.HeldRerouteMSE < r.NaiveRerouteMSE) {
		t.Errorf("held-out reroute MSE %.5f, naive %.5f: want the model better", r.HeldRerouteMSE, r.NaiveRerouteMSE)
	}

	// The exported pure-Go dynamics model predicts what the trainer does.
	dm, err := tr.DynamicsModel()
	if err != nil {
		t.Fatal(err)
	}
	dim := ds.Dim()
	want, err := tr.PredictNext(held.Encoder, held.S, held.A)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, dim)
	var worst float64
	for i := range held.Len() {
		if err := dm.Predict(got, held.S[i*dim:(i+1)*dim], int(held.A[i])); err != nil {
			t.Fatal(err)
		}
		for f := range got {
			worst = max(worst, math.Abs(float64(got[f]-want[i*dim+f])))
		}
	}
	t.Logf("dynamics parity on %d held-out transitions: max abs diff %.3g", held.Len(), worst)
	if worst > 1e-5 {
		t.Errorf("pure-Go dynamics prediction differs from libtorch's by %.3g, want <= 1e-5", worst)
	}
}

// TestParity exports gotch Q-networks to the qnet model file, loads them
// with policy.LoadAgent and compares forward passes on 1,000 random states.
func TestParity(t *testing.T) {
	enc := paperEncoder()
	dim := enc.Dim()
	rng := rand.New(rand.NewPCG(3, 3))
	states := make([]float32, 1000*dim)
	for i := range states {
		states[i] = 2*rng.Float32() - 1
	}

	random, err := NewMLP([]int{dim, 256, 256, enc.NumSwitches}, gotch.CPU, rand.New(rand.NewPCG(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	defer random.Close()
	// A trained network has larger, less uniform weights.
	tr, err := NewTrainer(smokeConfig(), enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ds := toyDataset(t, 20, 10, 3)
	if _, err := tr.FitQ(context.Background(), ds, ds.Subset(nil)); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		m    *MLP
	}{{"random [256 256]", random}, {"trained [64 64]", tr.QNetwork()}} {
		t.Run(tc.name, func(t *testing.T) {
			model, err := tc.m.Model()
			if err != nil {
				t.Fatal(err)
			}
			meta := qnet.NewMetadata(enc)
			meta.MadeBy = "torchq parity test"
			path := filepath.Join(t.TempDir(), "q.safetensors")
			if err := qnet.Save(path, model, meta); err != nil {
				t.Fatal(err)
			}
			agent, err := policy.LoadAgent(path, enc)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tc.m.Forward(states, 1000)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, enc.NumSwitches)
			scores := make([]float64, enc.NumSwitches)
			var worst float64
			for i := range 1000 {
				s := states[i*dim : (i+1)*dim]
				if err := agent.Model().Forward(got, s); err != nil {
					t.Fatal(err)
				}
				if err := agent.Score(scores, &proflow.Input{State: s}); err != nil {
					t.Fatal(err)
				}
				for k := range got {
					worst = max(worst, math.Abs(float64(got[k]-want[i*enc.NumSwitches+k])))
					if scores[k] != float64(got[k]) {
						t.Fatalf("agent score %v, model output %v", scores[k], got[k])
					}
				}
			}
			t.Logf("%s: max abs diff between libtorch and pure-Go Q-values on 1000 states: %.3g", tc.name, worst)
			if worst > 1e-5 {
				t.Errorf("max abs diff %.3g, want <= 1e-5", worst)
			}
		})
	}
}

// TestWeightLayout checks that an MLP keeps qnet's [out][in] layout: a
// model goes into libtorch and comes back unchanged, and libtorch computes
// W·x + b with it.
func TestWeightLayout(t *testing.T) {
	m, err := qnet.FromLayers([]qnet.Layer{{In: 3, Out: 2, Weight: []float32{1, 2, 3, 4, 5, 6}, Bias: []float32{0.5, -1}}})
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := FromModel(m, gotch.CPU, true)
	if err != nil {
		t.Fatal(err)
	}
	defer mlp.Close()
	layers, err := mlp.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m.Layer(0), layers[0]); diff != "" {
		t.Errorf("layer after a round trip through libtorch (-want +got):\n%s", diff)
	}
	y, err := mlp.Forward([]float32{1, 0, -1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{1 - 3 + 0.5, 4 - 6 - 1}; !slices.Equal(y, want) {
		t.Errorf("forward = %v, want W·x + b = %v", y, want)
	}
}

func TestDeterministic(t *testing.T) {
	ds := toyDataset(t, 12, 8, 4)
	cfg := smokeConfig()
	cfg.DynamicsEpochs, cfg.FQIEpochs, cfg.DynaEpochs = 2, 3, 2
	weights := func(seed uint64) []qnet.Layer {
		c := cfg
		c.Seed = seed
		res, err := Train(context.Background(), ds, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ls []qnet.Layer
		for l := range res.Q.NumLayers() {
			ls = append(ls, res.Q.Layer(l))
		}
		return ls
	}
	a, b, other := weights(11), weights(11), weights(12)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs with seed 11 differ:\n%.2000s", diff)
	}
	if cmp.Equal(a, other) {
		t.Error("seeds 11 and 12 gave identical weights")
	}
}

func TestCheckpointsAndCancel(t *testing.T) {
	ds := toyDataset(t, 8, 8, 5)
	cfg := smokeConfig()
	cfg.DynamicsEpochs, cfg.FQIEpochs, cfg.DynaEpochs = 1, 1, 1
	cfg.CheckpointDir = filepath.Join(t.TempDir(), "ckpt")
	tr, err := NewTrainer(cfg, ds.Encoder, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Run(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"q.ot", "dynamics.ot", "q-fqi.ot", "q-dyna.ot"} {
		if _, err := os.Stat(filepath.Join(cfg.CheckpointDir, name)); err != nil {
			t.Errorf("checkpoint %s: %v", name, err)
		}
	}
	// A checkpoint restores the network.
	fresh, err := NewMLP(tr.QNetwork().Sizes(), gotch.CPU, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.Load(filepath.Join(cfg.CheckpointDir, "q.ot")); err != nil {
		t.Fatal(err)
	}
	want, _ := tr.QNetwork().Layers()
	got, _ := fresh.Layers()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored checkpoint (-saved +loaded):\n%.1000s", diff)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.Run(ctx, ds); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestDevice(t *testing.T) {
	if d, err := Device("cpu"); err != nil || d != gotch.CPU {
		t.Errorf("Device(cpu) = %v, %v", d, err)
	}
	if _, err := Device("tpu"); err == nil {
		t.Error("Device(tpu): no error")
	}
	d, err := Device("cuda")
	if gotch.CUDA.IsAvailable() {
		if err != nil || !d.IsCuda() {
			t.Errorf("Device(cuda) with CUDA available = %v, %v", d, err)
		}
		return
	}
	if !errors.Is(err, ErrNoCUDA) {
		t.Errorf("Device(cuda) without CUDA: %v, want ErrNoCUDA", err)
	}
	cfg := smokeConfig()
	cfg.Device = training.DeviceCUDA
	if _, err := NewTrainer(cfg, paperEncoder(), nil); !errors.Is(err, ErrNoCUDA) {
		t.Errorf("NewTrainer on cuda without CUDA: %v, want ErrNoCUDA", err)
	}
}

// BellmanLoss drops the bootstrap exactly on Done transitions: a cut-off
// episode's last transition (Done false, as training.FromEpisodes writes
// it) bootstraps from its next state like any other.
func TestBellmanLossBootstrapsUnlessDone(t *testing.T) {
	ds := toyDataset(t, 3, 4, 7) // Done on each episode's last step
	cfg := smokeConfig()
	tr, err := NewTrainer(cfg, ds.Encoder, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	nS := ds.NumSwitches()
	q, err := tr.QValues(ds.Encoder, ds.S)
	if err != nil {
		t.Fatal(err)
	}
	qt, err := forwardChunked(tr.target, ds.S2, ds.Len())
	if err != nil {
		t.Fatal(err)
	}
	want := func(done []bool) float64 {
		var sum float64
		for i := range ds.Len() {
			y := float64(ds.R[i])
			if !done[i] {
				y += cfg.Gamma * float64(slices.Max(qt[i*nS:(i+1)*nS]))
			}
			sum += lossOf(float64(q[i*nS+int(ds.A[i])])-y, cfg.HuberDelta)
		}
		return sum / float64(ds.Len())
	}
	if ds.Stats().Done != 3 {
		t.Fatalf("toy dataset has %d done, want 3", ds.Stats().Done)
	}
	terminal, err := tr.BellmanLoss(ds)
	if err != nil {
		t.Fatal(err)
	}
	cut := ds.Subset([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	clear(cut.Done)
	bootstrapped, err := tr.BellmanLoss(cut)
	if err != nil {
		t.Fatal(err)
	}
	if w := want(ds.Done); math.Abs(terminal-w) > 1e-6*max(1, math.Abs(w)) {
		t.Errorf("loss with terminal last steps %v, want %v", terminal, w)
	}
	if w := want(cut.Done); math.Abs(bootstrapped-w) > 1e-6*max(1, math.Abs(w)) {
		t.Errorf("loss with cut-off last steps %v, want %v (bootstrapped)", bootstrapped, w)
	}
	if terminal == bootstrapped {
		t.Errorf("the loss does not depend on Done (%v both ways)", terminal)
	}
}

// BellmanLoss, and so the held-out loss evaluate reports, is measured
// against the target qStep trains on: with ParetoTargets the maximum over
// the next state's switches skips the destinations another switch
// dominates (dominatedPenalty), as training's does; without it, every
// switch.
func TestBellmanLossMatchesTrainingTarget(t *testing.T) {
	// In the toy fabric the clean switch has the lowest transmit rate and
	// overflow and ties the others on the rest, so it dominates every
	// congested destination.
	ds := toyDataset(t, 4, 10, 11)
	loss := map[bool]float64{}
	for _, pareto := range []bool{false, true} {
		cfg := smokeConfig()
		cfg.ParetoTargets = pareto
		tr, err := NewTrainer(cfg, ds.Encoder, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if loss[pareto], err = tr.BellmanLoss(ds); err != nil {
			t.Fatal(err)
		}
		var b batch
		for i := range ds.Len() {
			gamma := float32(cfg.Gamma)
			if ds.Done[i] {
				gamma = 0
			}
			tn := ds.At(i)
			b.add(tn.State, tn.Action, tn.Reward, tn.Next, gamma, tn.Current, float64(tn.ThroughputBaseline))
			b.weight = append(b.weight, 1)
		}
		el, _, err := tr.qStep(ds.Encoder, &b) // each row's loss before the step
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, v := range el {
			sum += float64(v)
		}
		if want := sum / float64(ds.Len()); math.Abs(loss[pareto]-want) > 1e-5*max(1, math.Abs(want)) {
			t.Errorf("pareto targets %v: BellmanLoss %v, want the training step's loss %v", pareto, loss[pareto], want)
		}
	}
	if loss[false] == loss[true] {
		t.Errorf("BellmanLoss %v with and without pareto targets: no target's maximum was on a dominated destination, the test checks nothing", loss[true])
	}
}

// evaluate, which computes the Q-values once per epoch, reports what
// BellmanLoss and RerouteRate report: on the held-out set, or the reroute
// rate on the training set and no loss without one.
func TestEvaluateMatchesBellmanLossAndRerouteRate(t *testing.T) {
	ds := toyDataset(t, 6, 5, 3)
	tr, err := NewTrainer(smokeConfig(), ds.Encoder, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	train, held := ds.Subset([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), ds.Subset([]int{10, 11, 12, 13, 14})
	empty := ds.Subset(nil)
	for _, c := range []struct {
		name        string
		held, rated *training.Dataset
	}{{"held out", held, held}, {"no held out", empty, train}} {
		loss, rate, _, err := tr.evaluate([]part{{tr.fabrics[0], train, c.held}})
		if err != nil {
			t.Fatalf("%s: evaluate: %v", c.name, err)
		}
		wantLoss, err := tr.BellmanLoss(c.held)
		if err != nil {
			t.Fatal(err)
		}
		wantRate, err := tr.RerouteRate(c.rated)
		if err != nil {
			t.Fatal(err)
		}
		if !(loss == wantLoss || math.IsNaN(loss) && math.IsNaN(wantLoss)) || rate != wantRate {
			t.Errorf("%s: evaluate = %v, %v, want %v, %v", c.name, loss, rate, wantLoss, wantRate)
		}
	}
	if loss, _, _, _ := tr.evaluate([]part{{tr.fabrics[0], train, empty}}); !math.IsNaN(loss) {
		t.Errorf("evaluate without held-out data: loss %v, want NaN", loss)
	}
}
