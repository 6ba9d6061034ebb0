//go:build torch

package torchq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/training"
	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"
)

// ErrNoCUDA is returned when TrainConfig.Device is "cuda" but the linked
// libtorch has no CUDA support or no GPU is visible.
var ErrNoCUDA = errors.New("CUDA requested but not available")

// Streams of the PCG generator seeded with TrainConfig.Seed: every random
// choice has its own stream, so changing one stage's settings does not
// change another stage's draws.
const (
	streamInit uint64 = iota + 1
	streamSplit
	streamDynamics
	streamFQI
	streamDyna
	streamPermute
)

// evalChunk bounds the rows of one evaluation forward pass.
const evalChunk = 8192

// Device returns the gotch device for a TrainConfig device name: the CPU
// for "cpu"; for "cuda" gotch.CudaIfAvailable(), or an error wrapping
// ErrNoCUDA when that is the CPU.
func Device(name string) (gotch.Device, error) {
	defer lockThread()()
	switch name {
	case training.DeviceCPU:
		return gotch.CPU, nil
	case training.DeviceCUDA:
		d := gotch.CudaIfAvailable()
		if !d.IsCuda() {
			return gotch.CPU, fmt.Errorf("torchq: device %q: %w (the linked libtorch has no CUDA support or no GPU is visible; see docs/torch.md)", name, ErrNoCUDA)
		}
		return d, nil
	}
	return gotch.CPU, fmt.Errorf("torchq: device %q, want %q or %q", name, training.DeviceCPU, training.DeviceCUDA)
}

// Trainer runs the three offline training stages of the paper's §IV-E on
// one device: TrainDynamics (Stage 1), FitQ (Stage 2, fitted Q-iteration)
// and Dyna (Stage 3). Run does all three on a dataset. A Trainer is not
// safe for concurrent use; Close frees its libtorch memory.
type Trainer struct {
	cfg training.TrainConfig
	enc telemetry.EncoderConfig
	dev gotch.Device
	out io.Writer

	q, target, dyn *MLP
	qOpt, dynOpt   *nn.Optimizer
	steps          int // Q-network gradient steps so far, over both Q stages
	rngSplit       *rand.Rand
	rngDyn         *rand.Rand
	rngFQI         *rand.Rand
	rngDyna        *rand.Rand
	// perm relabels training rows when TrainConfig.PermuteSwitches is set.
	perm *permuter
}

// NewTrainer returns a trainer for states encoded with enc, writing one
// progress line per epoch to progress (nil discards them). The networks are
// initialised from cfg.Seed.
func NewTrainer(cfg training.TrainConfig, enc telemetry.EncoderConfig, progress io.Writer) (*Trainer, error) {
	defer lockThread()()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("torchq: %w", err)
	}
	if err := enc.Validate(); err != nil {
		return nil, fmt.Errorf("torchq: %w", err)
	}
	dev, err := Device(cfg.Device)
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}
	if cfg.CheckpointDir != "" {
		if err := os.MkdirAll(cfg.CheckpointDir, 0o755); err != nil {
			return nil, fmt.Errorf("torchq: checkpoint directory: %w", err)
		}
	}
	pcg := func(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(cfg.Seed, stream)) }
	t := &Trainer{cfg: cfg, enc: enc, dev: dev, out: progress,
		rngSplit: pcg(streamSplit), rngDyn: pcg(streamDynamics), rngFQI: pcg(streamFQI), rngDyna: pcg(streamDyna)}
	if cfg.PermuteSwitches {
		t.perm = newPermuter(enc, pcg(streamPermute))
	}
	init := pcg(streamInit)
	dim, nS := enc.Dim(), enc.NumSwitches

	if t.q, err = NewMLP(sizes(dim, cfg.Hidden, nS), dev, init); err != nil {
		return nil, err
	}
	m, err := t.q.Model()
	if err == nil {
		t.target, err = FromModel(m, dev, false)
	}
	if err == nil {
		t.qOpt, err = nn.DefaultAdamConfig().Build(t.q.VarStore(), cfg.QLearningRate)
	}
	if err == nil && cfg.DynamicsEpochs > 0 {
		t.dyn, err = NewMLP(sizes(dim+nS, cfg.DynamicsHidden, dim), dev, init)
		if err == nil {
			t.dynOpt, err = nn.DefaultAdamConfig().Build(t.dyn.VarStore(), cfg.DynamicsLearningRate)
		}
	}
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("torchq: new trainer: %w", err)
	}
	return t, nil
}

func sizes(in int, hidden []int, out int) []int {
	return append(append([]int{in}, hidden...), out)
}

// Device returns the device the trainer runs on.
func (t *Trainer) Device() gotch.Device { return t.dev }

// QNetwork returns the Q-network being trained.
func (t *Trainer) QNetwork() *MLP { return t.q }

// DynamicsNetwork returns the dynamics network (nil when
// TrainConfig.DynamicsEpochs is 0). It predicts the state change; see
// training.DynamicsModel.
func (t *Trainer) DynamicsNetwork() *MLP { return t.dyn }

// Close frees the networks.
func (t *Trainer) Close() {
	defer lockThread()()
	for _, m := range []*MLP{t.q, t.target, t.dyn} {
		if m != nil {
			m.Close()
		}
	}
	t.q, t.target, t.dyn = nil, nil, nil
}

// Report is what training measured.
type Report struct {
	// Train and HeldOut describe the two parts of the split.
	Train, HeldOut training.Stats
	// DynamicsTransitions is the size of the dynamics training set;
	// DynamicsAroundReroutes says whether it is the reroute window (false:
	// all training transitions, the window held too few).
	DynamicsTransitions    int
	DynamicsAroundReroutes bool
	// Dynamics, FQI and Dyna hold one entry per epoch of each stage.
	Dynamics []DynamicsEpoch
	FQI      []QEpoch
	Dyna     []QEpoch
	// Elapsed is the wall-clock time of Run.
	Elapsed time.Duration
}

// DynamicsEpoch reports one epoch of Stage 1. The held-out figures are the
// mean squared error per state feature of one-step predictions (the
// model's, as training.DynamicsModel.Predict makes them, and the naive
// "next state = current state"), over all held-out transitions and over the
// held-out reroutes only; NaN when there are none.
type DynamicsEpoch struct {
	// Epoch counts from 1.
	Epoch int
	// TrainMSE is the mean training loss of the epoch's batches (squared
	// error of the predicted state change, per feature).
	TrainMSE float64
	// HeldMSE and NaiveMSE are the held-out one-step errors of the model and
	// of the naive predictor.
	HeldMSE, NaiveMSE float64
	// HeldRerouteMSE and NaiveRerouteMSE are the same on the held-out
	// reroutes only.
	HeldRerouteMSE, NaiveRerouteMSE float64
}

// QEpoch reports one epoch of Stage 2 ("fqi") or Stage 3 ("dyna").
type QEpoch struct {
	// Stage is "fqi" or "dyna"; Epoch counts from 1 within it.
	Stage string
	Epoch int
	// Steps counts the Q-network's gradient steps so far, both stages.
	Steps int
	// Loss is the mean Bellman loss (Huber or squared) of the epoch's real
	// transitions; MeanQ their mean Q(s, a).
	Loss, MeanQ float64
	// SyntheticLoss and SyntheticReward are the mean loss and reward of the
	// epoch's synthetic transitions, Synthetic their number (Dyna only).
	SyntheticLoss, SyntheticReward float64
	Synthetic                      int
	// HeldLoss is the mean Bellman loss on the held-out transitions against
	// the current target network (NaN without held-out data).
	HeldLoss float64
	// RerouteRate is the fraction of held-out states (training states
	// without held-out data) whose greedy action is not the current switch.
	RerouteRate float64
}

// Run trains on ds: it splits off TrainConfig.HeldOut of the episodes,
// relabels the rewards with TrainConfig.Reward when ds keeps reward inputs
// (ds itself is not modified), and runs the three stages. It stops between
// gradient steps when ctx is done, returning ctx's error.
func (t *Trainer) Run(ctx context.Context, ds *training.Dataset) (Report, error) {
	defer lockThread()()
	start := time.Now()
	var rep Report
	if ds == nil {
		return rep, errors.New("torchq: run: nil dataset")
	}
	if ds.Encoder != t.enc {
		return rep, fmt.Errorf("torchq: run: dataset encoded with %+v, trainer built for %+v", ds.Encoder, t.enc)
	}
	train, held, err := ds.Split(t.cfg.HeldOut, t.rngSplit)
	if err != nil {
		return rep, fmt.Errorf("torchq: run: %w", err)
	}
	if train.Len() == 0 {
		return rep, errors.New("torchq: run: no training transitions")
	}
	if ds.HasRewardInputs() {
		for _, part := range []*training.Dataset{train, held} {
			if err := part.Relabel(t.cfg.Reward); err != nil {
				return rep, fmt.Errorf("torchq: run: %w", err)
			}
		}
		fmt.Fprintf(t.out, "rewards relabelled with beta %g\n", t.cfg.Reward.Beta)
	} else {
		fmt.Fprintln(t.out, "dataset keeps no reward inputs: training on its stored rewards")
	}
	rep.Train, rep.HeldOut = train.Stats(), held.Stats()
	fmt.Fprintf(t.out, "train: %v\nheld out: %v\n", rep.Train, rep.HeldOut)

	if t.dyn != nil {
		idx, around := DynamicsSelection(train, t.cfg.RerouteWindow, t.cfg.MinDynamicsTransitions)
		rep.DynamicsTransitions, rep.DynamicsAroundReroutes = len(idx), around
		if around {
			fmt.Fprintf(t.out, "dynamics training set: %d transitions within %d steps of a reroute\n", len(idx), t.cfg.RerouteWindow)
		} else {
			fmt.Fprintf(t.out, "dynamics training set: all %d transitions (fewer than %d lie within %d steps of a reroute)\n",
				len(idx), t.cfg.MinDynamicsTransitions, t.cfg.RerouteWindow)
		}
		if rep.Dynamics, err = t.TrainDynamics(ctx, train.Subset(idx), held); err != nil {
			return rep, err
		}
	}
	if rep.FQI, err = t.FitQ(ctx, train, held); err != nil {
		return rep, err
	}
	if t.cfg.DynaEpochs > 0 {
		if rep.Dyna, err = t.Dyna(ctx, train, held); err != nil {
			return rep, err
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// DynamicsSelection returns the indices of the transitions of ds that lie
// at most window steps before or after a reroute of the same episode, and
// true; or, when they are fewer than minCount, every index and false.
func DynamicsSelection(ds *training.Dataset, window, minCount int) ([]int, bool) {
	type key struct{ ep, step int32 }
	reroutes := make(map[int32][]int32)
	for i := range ds.Len() {
		if ds.IsReroute(i) {
			reroutes[ds.Episode[i]] = append(reroutes[ds.Episode[i]], ds.Step[i])
		}
	}
	var idx []int
	for i := range ds.Len() {
		for _, r := range reroutes[ds.Episode[i]] {
			if d := ds.Step[i] - r; d >= -int32(window) && d <= int32(window) {
				idx = append(idx, i)
				break
			}
		}
	}
	if len(idx) < minCount || len(idx) == 0 {
		all := make([]int, ds.Len())
		for i := range all {
			all[i] = i
		}
		return all, false
	}
	return idx, true
}

// TrainDynamics runs Stage 1: it fits the dynamics network to predict
// s_{t+1} − s_t from [s_t, onehot(a_t)] on every transition of train
// (squared error, Adam), and after each epoch measures one-step errors on
// held (see DynamicsEpoch).
func (t *Trainer) TrainDynamics(ctx context.Context, train, held *training.Dataset) ([]DynamicsEpoch, error) {
	defer lockThread()()
	if t.dyn == nil {
		return nil, errors.New("torchq: train dynamics: no dynamics network (dynamics_epochs is 0)")
	}
	if train.Len() == 0 {
		return nil, errors.New("torchq: train dynamics: no transitions")
	}
	dim, nS, bs := t.enc.Dim(), t.enc.NumSwitches, t.cfg.BatchSize
	fmt.Fprintf(t.out, "stage 1: dynamics model %v on %d transitions\n", t.dyn.Sizes(), train.Len())
	var reports []DynamicsEpoch
	perm := make([]int, train.Len())
	for i := range perm {
		perm[i] = i
	}
	x := make([]float32, 0, bs*(dim+nS))
	y := make([]float32, 0, bs*dim)
	for epoch := 1; epoch <= t.cfg.DynamicsEpochs; epoch++ {
		start := time.Now()
		t.rngDyn.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		var sum float64
		var batches int
		for b := 0; b < len(perm); b += bs {
			if err := ctx.Err(); err != nil {
				return reports, fmt.Errorf("torchq: train dynamics: %w", err)
			}
			rows := perm[b:min(b+bs, len(perm))]
			x, y = x[:0], y[:0]
			for _, i := range rows {
				s, a, _, s2 := t.perm.row(train.S[i*dim:(i+1)*dim], int(train.A[i]), 0, train.S2[i*dim:(i+1)*dim])
				x = appendInput(x, s, a, nS)
				for f := range s {
					y = append(y, s2[f]-s[f])
				}
			}
			tp := newTape(t.dev)
			pred := t.dyn.forward(tp, tp.floats(x, int64(len(rows)), int64(dim+nS)))
			loss := tp.mse(pred, tp.floats(y, int64(len(rows)), int64(dim)))
			err := t.optimise(tp, t.dynOpt, loss)
			v := tp.values(loss)
			tp.free()
			if err == nil {
				err = tp.err
			}
			if err != nil {
				return reports, fmt.Errorf("torchq: train dynamics: epoch %d: %w", epoch, err)
			}
			sum += float64(v[0])
			batches++
		}
		r := DynamicsEpoch{Epoch: epoch, TrainMSE: sum / float64(batches)}
		if math.IsNaN(r.TrainMSE) || math.IsInf(r.TrainMSE, 0) {
			return reports, fmt.Errorf("torchq: train dynamics: epoch %d: loss %v: training diverged (lower dynamics_learning_rate)", epoch, r.TrainMSE)
		}
		var err error
		if r.HeldMSE, r.NaiveMSE, r.HeldRerouteMSE, r.NaiveRerouteMSE, err = t.DynamicsError(held); err != nil {
			return reports, err
		}
		reports = append(reports, r)
		fmt.Fprintf(t.out, "dynamics epoch %d/%d: train mse %.5f, held-out mse %s (naive %s), held-out reroutes %s (naive %s) [%s]\n",
			epoch, t.cfg.DynamicsEpochs, r.TrainMSE, num(r.HeldMSE), num(r.NaiveMSE), num(r.HeldRerouteMSE), num(r.NaiveRerouteMSE),
			time.Since(start).Round(time.Millisecond))
		if err := t.checkpoint(t.dyn, "dynamics.ot"); err != nil {
			return reports, err
		}
	}
	return reports, nil
}

// appendInput appends the dynamics input [s, onehot(a)] to x.
func appendInput(x, s []float32, a, nS int) []float32 {
	x = append(x, s...)
	for k := range nS {
		if k == a {
			x = append(x, 1)
		} else {
			x = append(x, 0)
		}
	}
	return x
}

// num formats a figure, "n/a" for NaN.
func num(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.5f", v)
}

// DynamicsError returns the one-step mean squared error per feature on ds
// of the dynamics model (as training.DynamicsModel.Predict predicts) and of
// the naive predictor s_{t+1} = s_t, over all transitions and over the
// reroutes only; NaN where there are none.
func (t *Trainer) DynamicsError(ds *training.Dataset) (model, naive, modelReroute, naiveReroute float64, err error) {
	nan := math.NaN()
	if t.dyn == nil {
		return nan, nan, nan, nan, errors.New("torchq: dynamics error: no dynamics network")
	}
	pred, err := t.PredictNext(ds.S, ds.A)
	if err != nil {
		return nan, nan, nan, nan, err
	}
	dim := t.enc.Dim()
	var sm, sn, rm, rn float64
	var reroutes int
	for i := range ds.Len() {
		var em, en float64
		for f := range dim {
			s2 := float64(ds.S2[i*dim+f])
			dm, dn := float64(pred[i*dim+f])-s2, float64(ds.S[i*dim+f])-s2
			em += dm * dm
			en += dn * dn
		}
		sm += em
		sn += en
		if ds.IsReroute(i) {
			rm += em
			rn += en
			reroutes++
		}
	}
	div := func(v float64, n int) float64 {
		if n == 0 {
			return nan
		}
		return v / float64(n*dim)
	}
	return div(sm, ds.Len()), div(sn, ds.Len()), div(rm, reroutes), div(rn, reroutes), nil
}

// PredictNext returns the dynamics model's prediction for each state of s
// (row-major, Dim() per state) and action: s + f_ψ(s, onehot(a)), projected
// with training.ClampState, exactly as training.DynamicsModel.Predict
// computes it.
func (t *Trainer) PredictNext(s []float32, actions []int32) ([]float32, error) {
	if t.dyn == nil {
		return nil, errors.New("torchq: predict: no dynamics network")
	}
	dim, nS := t.enc.Dim(), t.enc.NumSwitches
	if len(s) != len(actions)*dim {
		return nil, fmt.Errorf("torchq: predict: %d values for %d states of %d", len(s), len(actions), dim)
	}
	out := make([]float32, 0, len(s))
	x := make([]float32, 0, min(len(actions), evalChunk)*(dim+nS))
	for b := 0; b < len(actions); b += evalChunk {
		e := min(b+evalChunk, len(actions))
		x = x[:0]
		for i := b; i < e; i++ {
			x = appendInput(x, s[i*dim:(i+1)*dim], int(actions[i]), nS)
		}
		delta, err := t.dyn.Forward(x, e-b)
		if err != nil {
			return nil, fmt.Errorf("torchq: predict: %w", err)
		}
		for i := b; i < e; i++ {
			row := delta[(i-b)*dim : (i-b+1)*dim]
			for f := range row {
				row[f] += s[i*dim+f]
			}
			if err := training.ClampState(t.enc, row, int(actions[i])); err != nil {
				return nil, err
			}
		}
		out = append(out, delta...)
	}
	return out, nil
}

// FitQ runs Stage 2, fitted Q-iteration on the real transitions of train:
// FQIEpochs passes of minibatch regression of Q(s, a) on the Bellman target
// r + γ·(1 − done)·max_a' Q_target(s', a') (Huber or squared loss, Adam),
// the target network refreshed every TargetUpdatePeriod steps. After each
// epoch it reports the held-out Bellman loss.
func (t *Trainer) FitQ(ctx context.Context, train, held *training.Dataset) ([]QEpoch, error) {
	defer lockThread()()
	fmt.Fprintf(t.out, "stage 2: fitted Q-iteration, Q-network %v, %d epochs\n", t.q.Sizes(), t.cfg.FQIEpochs)
	return t.qStage(ctx, "fqi", t.cfg.FQIEpochs, train, held, t.rngFQI, false)
}

// Dyna runs Stage 3: like FitQ, but every batch of real transitions is
// joined by synthetic ones from the dynamics model (see synthesize), whose
// loss is weighted by SyntheticWeight.
func (t *Trainer) Dyna(ctx context.Context, train, held *training.Dataset) ([]QEpoch, error) {
	defer lockThread()()
	if t.dyn == nil {
		return nil, errors.New("torchq: dyna: no dynamics network (dynamics_epochs is 0)")
	}
	fmt.Fprintf(t.out, "stage 3: Dyna refinement, %d epochs, %d rollouts of %d steps per batch\n",
		t.cfg.DynaEpochs, t.cfg.DynaRollouts, t.cfg.DynaHorizon)
	return t.qStage(ctx, "dyna", t.cfg.DynaEpochs, train, held, t.rngDyna, true)
}

// batch holds the rows of one Q-learning step, real rows first.
type batch struct {
	s, s2      []float32
	a          []int64
	r, gamma   []float32 // gamma is γ·(1 − done)
	weight     []float32 // per-row loss weight
	cur        []int
	phi0       []float64
	real, synt int
}

func (b *batch) reset() {
	b.s, b.s2, b.a, b.r, b.gamma, b.weight = b.s[:0], b.s2[:0], b.a[:0], b.r[:0], b.gamma[:0], b.weight[:0]
	b.cur, b.phi0 = b.cur[:0], b.phi0[:0]
	b.real, b.synt = 0, 0
}

func (b *batch) add(s []float32, a int, r float32, s2 []float32, gamma float32, cur int, phi0 float64) {
	b.s = append(b.s, s...)
	b.s2 = append(b.s2, s2...)
	b.a = append(b.a, int64(a))
	b.r = append(b.r, r)
	b.gamma = append(b.gamma, gamma)
	b.cur = append(b.cur, cur)
	b.phi0 = append(b.phi0, phi0)
}

func (t *Trainer) qStage(ctx context.Context, stage string, epochs int, train, held *training.Dataset, rng *rand.Rand, dyna bool) ([]QEpoch, error) {
	if train.Len() == 0 {
		return nil, fmt.Errorf("torchq: %s: no transitions", stage)
	}
	if err := t.target.CopyFrom(t.q); err != nil {
		return nil, err
	}
	dim, bs := t.enc.Dim(), t.cfg.BatchSize
	gamma := float32(t.cfg.Gamma)
	var reports []QEpoch
	var b batch
	for epoch := 1; epoch <= epochs; epoch++ {
		start := time.Now()
		perm := rng.Perm(train.Len())
		rep := QEpoch{Stage: stage, Epoch: epoch}
		var realLoss, synthLoss, synthReward, meanQ float64
		for off := 0; off < len(perm); off += bs {
			if err := ctx.Err(); err != nil {
				return reports, fmt.Errorf("torchq: %s: %w", stage, err)
			}
			if t.steps > 0 && t.steps%t.cfg.TargetUpdatePeriod == 0 {
				if err := t.target.CopyFrom(t.q); err != nil {
					return reports, err
				}
			}
			rows := perm[off:min(off+bs, len(perm))]
			b.reset()
			for _, i := range rows {
				g := gamma
				if train.Done[i] {
					g = 0
				}
				s, a, cur, s2 := t.perm.row(train.S[i*dim:(i+1)*dim], int(train.A[i]), int(train.Current[i]), train.S2[i*dim:(i+1)*dim])
				b.add(s, a, train.R[i], s2, g, cur, float64(train.Phi0[i]))
			}
			b.real = len(rows)
			if dyna {
				sr, err := t.synthesize(&b, rng)
				if err != nil {
					return reports, fmt.Errorf("torchq: %s: epoch %d: %w", stage, epoch, err)
				}
				synthReward += sr
			}
			b.weight = b.weight[:0]
			for range b.real {
				b.weight = append(b.weight, 1/float32(b.real))
			}
			for range b.synt {
				b.weight = append(b.weight, float32(t.cfg.SyntheticWeight)/float32(b.synt))
			}
			el, q, err := t.qStep(&b)
			if err != nil {
				return reports, fmt.Errorf("torchq: %s: epoch %d: %w", stage, epoch, err)
			}
			for i, v := range el {
				if i < b.real {
					realLoss += float64(v)
					meanQ += float64(q[i])
				} else {
					synthLoss += float64(v)
				}
			}
			rep.Synthetic += b.synt
		}
		rep.Steps = t.steps
		rep.Loss = realLoss / float64(len(perm))
		rep.MeanQ = meanQ / float64(len(perm))
		if rep.Synthetic > 0 {
			rep.SyntheticLoss = synthLoss / float64(rep.Synthetic)
			rep.SyntheticReward = synthReward / float64(rep.Synthetic)
		}
		for _, v := range [...]float64{rep.Loss, rep.SyntheticLoss, rep.MeanQ} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return reports, fmt.Errorf("torchq: %s: epoch %d: loss %v, synthetic loss %v, mean Q %v: training diverged (lower q_learning_rate)",
					stage, epoch, rep.Loss, rep.SyntheticLoss, rep.MeanQ)
			}
		}
		var err error
		if rep.HeldLoss, rep.RerouteRate, err = t.evaluate(train, held); err != nil {
			return reports, err
		}
		reports = append(reports, rep)
		line := fmt.Sprintf("%s epoch %d/%d: loss %.5f, held-out %s, mean Q %.3f, greedy reroute rate %.3f",
			stage, epoch, epochs, rep.Loss, num(rep.HeldLoss), rep.MeanQ, rep.RerouteRate)
		if dyna {
			line += fmt.Sprintf(", synthetic loss %.5f on %d (mean reward %.3f)", rep.SyntheticLoss, rep.Synthetic, rep.SyntheticReward)
		}
		fmt.Fprintf(t.out, "%s, steps %d [%s]\n", line, t.steps, time.Since(start).Round(time.Millisecond))
		if err := t.checkpoint(t.q, "q.ot"); err != nil {
			return reports, err
		}
	}
	// Keep each stage's final network too (q-fqi.ot, q-dyna.ot), so the
	// effect of the Dyna stage can be measured.
	if err := t.checkpoint(t.q, "q-"+stage+".ot"); err != nil {
		return reports, err
	}
	return reports, nil
}

// qStep takes one gradient step on the rows of b and returns every row's
// loss and Q(s, a) before the step.
func (t *Trainer) qStep(b *batch) (loss, q []float32, err error) {
	n, dim := int64(len(b.a)), int64(t.enc.Dim())
	tp := newTape(t.dev)
	defer tp.free()
	// The target network's variables do not require gradients, so the
	// target carries no graph.
	next := tp.rowMax(t.target.forward(tp, tp.floats(b.s2, n, dim)))
	target := tp.add(tp.floats(b.r, n), tp.mul(tp.floats(b.gamma, n), next))
	pred := tp.gather(t.q.forward(tp, tp.floats(b.s, n, dim)), tp.ints(b.a))
	el := tp.elementLoss(pred, target, t.cfg.HuberDelta)
	total := tp.sum(tp.mul(el, tp.floats(b.weight, n)))
	if err := t.optimise(tp, t.qOpt, total); err != nil {
		return nil, nil, err
	}
	loss, q = tp.values(el), tp.values(pred)
	if tp.err != nil {
		return nil, nil, tp.err
	}
	t.steps++
	return loss, q, nil
}

// optimise back-propagates loss and takes an optimiser step.
func (t *Trainer) optimise(tp *tape, opt *nn.Optimizer, loss *ts.Tensor) error {
	if tp.err != nil {
		return tp.err
	}
	if err := opt.ZeroGrad(); err != nil {
		return err
	}
	if err := loss.Backward(); err != nil {
		return err
	}
	return opt.Step()
}

// synthesize appends to b the synthetic transitions of its real rows and
// returns the sum of their rewards. For every real row it predicts the
// outcome of every action other than the logged one (branching); then
// DynaRollouts of those branches, drawn with rng, continue for
// DynaHorizon−1 more steps, each step taking the Q-network's greedy action
// or, with probability RolloutEpsilon, a random one. Rewards are the
// synthetic reward (training.RewardConfig.Synthetic); synthetic
// transitions are never terminal.
func (t *Trainer) synthesize(b *batch, rng *rand.Rand) (float64, error) {
	dim, nS := t.enc.Dim(), t.enc.NumSwitches
	gamma := float32(t.cfg.Gamma)
	var states []float32
	var actions []int32
	var from []int // batch row of each branch
	for i := range b.real {
		for k := range nS {
			if int64(k) != b.a[i] {
				states = append(states, b.s[i*dim:(i+1)*dim]...)
				actions = append(actions, int32(k))
				from = append(from, i)
			}
		}
	}
	if len(actions) == 0 {
		return 0, nil
	}
	var sum float64
	// add records the synthetic transition s --a--> next and returns its reward.
	add := func(s []float32, cur, a int, next []float32, phi0 float64) error {
		r, err := t.cfg.Reward.Synthetic(t.enc, training.SyntheticStep{State: s, Next: next, Current: cur, Action: a, ThroughputBaseline: phi0})
		if err != nil {
			return err
		}
		b.add(s, a, float32(r), next, gamma, cur, phi0)
		b.synt++
		sum += r
		return nil
	}
	next, err := t.PredictNext(states, actions)
	if err != nil {
		return 0, err
	}
	for j := range actions {
		i := from[j]
		if err := add(b.s[i*dim:(i+1)*dim], b.cur[i], int(actions[j]), next[j*dim:(j+1)*dim], b.phi0[i]); err != nil {
			return 0, err
		}
	}
	if t.cfg.DynaHorizon < 2 || t.cfg.DynaRollouts == 0 {
		return sum, nil
	}
	// Continue a random subset of the branches.
	n := min(t.cfg.DynaRollouts, len(actions))
	pick := rng.Perm(len(actions))[:n]
	slices.Sort(pick)
	cur := make([]float32, 0, n*dim)
	curSw := make([]int, n)
	phi0 := make([]float64, n)
	for r, j := range pick {
		cur = append(cur, next[j*dim:(j+1)*dim]...)
		curSw[r] = int(actions[j])
		phi0[r] = b.phi0[from[j]]
	}
	acts := make([]int32, n)
	for h := 2; h <= t.cfg.DynaHorizon; h++ {
		q, err := t.q.Forward(cur, n)
		if err != nil {
			return 0, err
		}
		for r := range n {
			if rng.Float64() < t.cfg.RolloutEpsilon {
				acts[r] = int32(rng.IntN(nS))
			} else {
				acts[r] = int32(argmax(q[r*nS : (r+1)*nS]))
			}
		}
		nx, err := t.PredictNext(cur, acts)
		if err != nil {
			return 0, err
		}
		for r := range n {
			if err := add(cur[r*dim:(r+1)*dim], curSw[r], int(acts[r]), nx[r*dim:(r+1)*dim], phi0[r]); err != nil {
				return 0, err
			}
			curSw[r] = int(acts[r])
		}
		cur = nx
	}
	return sum, nil
}

// argmax returns the index of the largest value (the first on ties).
func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// QValues returns Q(s, ·) for states s (row-major, Dim() per state), |S|
// values per state.
func (t *Trainer) QValues(s []float32) ([]float32, error) {
	dim := t.enc.Dim()
	if len(s)%dim != 0 {
		return nil, fmt.Errorf("torchq: Q-values: %d values are not whole states of %d", len(s), dim)
	}
	return forwardChunked(t.q, s, len(s)/dim)
}

func forwardChunked(m *MLP, x []float32, rows int) ([]float32, error) {
	in := m.sizes[0]
	out := make([]float32, 0, rows*m.sizes[len(m.sizes)-1])
	for b := 0; b < rows; b += evalChunk {
		e := min(b+evalChunk, rows)
		y, err := m.Forward(x[b*in:e*in], e-b)
		if err != nil {
			return nil, err
		}
		out = append(out, y...)
	}
	return out, nil
}

// evaluate returns the epoch's held-out figures (see QEpoch): the Bellman
// loss on held (NaN when it is empty) and the greedy reroute rate on held,
// or on train when held is empty. The Q-values of the states are computed
// once for both.
func (t *Trainer) evaluate(train, held *training.Dataset) (loss, rate float64, err error) {
	eval := held
	if held.Len() == 0 {
		eval = train
	}
	q, err := t.QValues(eval.S)
	if err != nil {
		return 0, 0, err
	}
	loss = math.NaN()
	if held.Len() > 0 {
		if loss, err = t.bellmanLoss(held, q); err != nil {
			return 0, 0, err
		}
	}
	rate, err = t.rerouteRate(eval, q)
	return loss, rate, err
}

// withQ returns f(ds, Q(s, ·) of ds's states), NaN for an empty dataset.
func (t *Trainer) withQ(ds *training.Dataset, f func(ds *training.Dataset, q []float32) (float64, error)) (float64, error) {
	if ds.Len() == 0 {
		return math.NaN(), nil
	}
	q, err := t.QValues(ds.S)
	if err != nil {
		return 0, err
	}
	return f(ds, q)
}

// BellmanLoss returns the mean Bellman loss (the training loss: Huber or
// squared) of ds's transitions against the current target network; NaN for
// an empty dataset.
func (t *Trainer) BellmanLoss(ds *training.Dataset) (float64, error) {
	return t.withQ(ds, t.bellmanLoss)
}

// bellmanLoss is BellmanLoss of a non-empty ds whose Q-values are q.
func (t *Trainer) bellmanLoss(ds *training.Dataset, q []float32) (float64, error) {
	nS := t.enc.NumSwitches
	qt, err := forwardChunked(t.target, ds.S2, ds.Len())
	if err != nil {
		return 0, err
	}
	var sum float64
	for i := range ds.Len() {
		y := float64(ds.R[i])
		if !ds.Done[i] {
			y += t.cfg.Gamma * float64(slices.Max(qt[i*nS:(i+1)*nS]))
		}
		sum += lossOf(float64(q[i*nS+int(ds.A[i])])-y, t.cfg.HuberDelta)
	}
	return sum / float64(ds.Len()), nil
}

// lossOf is the Huber loss of an error (squared error for delta 0), as
// libtorch's huber_loss and mse_loss compute it.
func lossOf(e, delta float64) float64 {
	a := math.Abs(e)
	if delta <= 0 {
		return e * e
	}
	if a <= delta {
		return 0.5 * e * e
	}
	return delta * (a - 0.5*delta)
}

// RerouteRate returns the fraction of ds's states whose greedy action is
// not the current switch; NaN for an empty dataset.
func (t *Trainer) RerouteRate(ds *training.Dataset) (float64, error) {
	return t.withQ(ds, t.rerouteRate)
}

// rerouteRate is RerouteRate of a non-empty ds whose Q-values are q.
func (t *Trainer) rerouteRate(ds *training.Dataset, q []float32) (float64, error) {
	nS := t.enc.NumSwitches
	var n int
	for i := range ds.Len() {
		if argmax(q[i*nS:(i+1)*nS]) != int(ds.Current[i]) {
			n++
		}
	}
	return float64(n) / float64(ds.Len()), nil
}

// checkpoint saves m as name in the checkpoint directory, if one is set.
func (t *Trainer) checkpoint(m *MLP, name string) error {
	if t.cfg.CheckpointDir == "" {
		return nil
	}
	return m.Save(filepath.Join(t.cfg.CheckpointDir, name))
}

// QModel exports the Q-network as a pure-Go model.
func (t *Trainer) QModel() (*qnet.Model, error) { return t.q.Model() }

// DynamicsModel exports the dynamics network as a pure-Go
// training.DynamicsModel (nil, nil without one).
func (t *Trainer) DynamicsModel() (*training.DynamicsModel, error) {
	if t.dyn == nil {
		return nil, nil
	}
	m, err := t.dyn.Model()
	if err != nil {
		return nil, err
	}
	return training.NewDynamicsModel(t.enc, m)
}

// Result is a trained policy and what training reported.
type Result struct {
	// Q is the trained Q-network, ready for qnet.Save.
	Q *qnet.Model
	// Dynamics is the dynamics model (nil when DynamicsEpochs is 0).
	Dynamics *training.DynamicsModel
	Report   Report
}

// Train runs every stage on ds with cfg (see Trainer.Run) and exports the
// networks. Progress lines go to progress (nil discards them).
func Train(ctx context.Context, ds *training.Dataset, cfg training.TrainConfig, progress io.Writer) (*Result, error) {
	if ds == nil {
		return nil, errors.New("torchq: train: nil dataset")
	}
	t, err := NewTrainer(cfg, ds.Encoder, progress)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	rep, err := t.Run(ctx, ds)
	if err != nil {
		return nil, err
	}
	res := &Result{Report: rep}
	if res.Q, err = t.QModel(); err != nil {
		return nil, err
	}
	if res.Dynamics, err = t.DynamicsModel(); err != nil {
		return nil, err
	}
	return res, nil
}

// permuter relabels training rows by random permutations of the switches
// (TrainConfig.PermuteSwitches). A nil permuter leaves them as they are.
type permuter struct {
	enc   telemetry.EncoderConfig
	rng   *rand.Rand
	s, s2 []float32
	p     []int
}

func newPermuter(enc telemetry.EncoderConfig, rng *rand.Rand) *permuter {
	return &permuter{enc: enc, rng: rng, s: make([]float32, enc.Dim()), s2: make([]float32, enc.Dim()), p: make([]int, enc.NumSwitches)}
}

// row returns the transition (s, a, cur, s2) under a fresh random
// permutation. The states returned are valid until the next call.
func (p *permuter) row(s []float32, a, cur int, s2 []float32) ([]float32, int, int, []float32) {
	if p == nil {
		return s, a, cur, s2
	}
	for i := range p.p {
		p.p[i] = i
	}
	p.rng.Shuffle(len(p.p), func(i, j int) { p.p[i], p.p[j] = p.p[j], p.p[i] })
	// The arguments are rows of a dataset in its layout, so these cannot fail.
	_ = training.PermuteState(p.enc, p.s, s, p.p)
	_ = training.PermuteState(p.enc, p.s2, s2, p.p)
	return p.s, p.p[a], p.p[cur], p.s2
}
