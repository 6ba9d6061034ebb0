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
	"strings"
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
	streamDistill
	streamMonotone
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
// and Dyna (Stage 3). Run does all three on a dataset, RunMulti on
// datasets of several fabric sizes (a universal Q-network, one dynamics
// model per size). A Trainer is not safe for concurrent use; Close frees
// its libtorch memory.
type Trainer struct {
	cfg training.TrainConfig
	dev gotch.Device
	out io.Writer

	// fabrics holds one entry per dataset, the reference (the first
	// dataset's) first.
	fabrics   []*fabric
	q, target *MLP
	qOpt      *nn.Optimizer
	steps     int // Q-network gradient steps so far, over both Q stages
	rngSplit  *rand.Rand
	rngDyn    *rand.Rand
	rngFQI    *rand.Rand
	rngDyna   *rand.Rand
	rngMono   *rand.Rand
	// rows is the scratch of the candidate rows of one universal forward
	// pass (libtorch copies it into a tensor).
	rows []float32
}

// fabric is one fabric size the trainer learns on: the encoder of its
// states, its dynamics network, and the relabelling of its training rows.
type fabric struct {
	enc    telemetry.EncoderConfig
	dyn    *MLP
	dynOpt *nn.Optimizer
	// perm relabels the fabric's training rows when
	// TrainConfig.PermuteSwitches is set (every fabric draws from one
	// generator).
	perm *permuter
}

// NewTrainer returns a trainer for states encoded with enc, writing one
// progress line per epoch to progress (nil discards them). The networks are
// initialised from cfg.Seed.
func NewTrainer(cfg training.TrainConfig, enc telemetry.EncoderConfig, progress io.Writer) (*Trainer, error) {
	return NewMultiTrainer(cfg, []telemetry.EncoderConfig{enc}, progress)
}

// NewMultiTrainer returns a trainer for datasets encoded with encs, one
// per fabric size, in the order RunMulti takes them: a universal
// Q-network (cfg.Universal; required for more than one) shared by all, and
// one dynamics network per fabric. The encoders must pass
// training.CheckFabrics; the first is the reference whose scaling the
// model records. Networks are initialised from cfg.Seed in that order, the
// Q-network first.
func NewMultiTrainer(cfg training.TrainConfig, encs []telemetry.EncoderConfig, progress io.Writer) (*Trainer, error) {
	defer lockThread()()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("torchq: %w", err)
	}
	if err := training.CheckFabrics(encs, cfg.Universal); err != nil {
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
	t := &Trainer{cfg: cfg, dev: dev, out: progress,
		rngSplit: pcg(streamSplit), rngDyn: pcg(streamDynamics), rngFQI: pcg(streamFQI), rngDyna: pcg(streamDyna),
		rngMono: pcg(streamMonotone)}
	rngPerm := pcg(streamPermute)
	for _, enc := range encs {
		f := &fabric{enc: enc}
		if cfg.PermuteSwitches {
			f.perm = newPermuter(enc, rngPerm)
		}
		t.fabrics = append(t.fabrics, f)
	}
	init := pcg(streamInit)
	in, out := encs[0].Dim(), encs[0].NumSwitches
	if cfg.Universal {
		in, out = encs[0].CandidateDim(), 1
	}
	if t.q, err = NewMLP(sizes(in, cfg.Hidden, out), dev, init); err != nil {
		return nil, err
	}
	m, err := t.q.Model()
	if err == nil {
		t.target, err = FromModel(m, dev, false)
	}
	if err == nil {
		t.qOpt, err = nn.DefaultAdamConfig().Build(t.q.VarStore(), cfg.QLearningRate)
	}
	for _, f := range t.fabrics {
		if err != nil || cfg.DynamicsEpochs == 0 {
			break
		}
		dim, nS := f.enc.Dim(), f.enc.NumSwitches
		f.dyn, err = NewMLP(sizes(dim+nS, cfg.DynamicsHidden, dim), dev, init)
		if err == nil {
			f.dynOpt, err = nn.DefaultAdamConfig().Build(f.dyn.VarStore(), cfg.DynamicsLearningRate)
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

// fabricOf returns the fabric whose states are encoded with enc.
func (t *Trainer) fabricOf(enc telemetry.EncoderConfig) (*fabric, error) {
	for _, f := range t.fabrics {
		if f.enc == enc {
			return f, nil
		}
	}
	return nil, fmt.Errorf("torchq: states encoded with %+v, but the trainer is built for %s", enc, t.fabricList())
}

// fabricList describes the trainer's fabrics for error messages.
func (t *Trainer) fabricList() string {
	if len(t.fabrics) == 1 {
		return fmt.Sprintf("%+v", t.fabrics[0].enc)
	}
	var names []string
	for _, f := range t.fabrics {
		names = append(names, training.FabricName(f.enc))
	}
	return "fabrics " + strings.Join(names, ", ")
}

// name labels a fabric's progress lines and checkpoints when the trainer
// has several: " 4x3" (empty with one fabric).
func (t *Trainer) name(f *fabric) string {
	if len(t.fabrics) == 1 {
		return ""
	}
	return " " + training.FabricName(f.enc)
}

// Device returns the device the trainer runs on.
func (t *Trainer) Device() gotch.Device { return t.dev }

// QNetwork returns the Q-network being trained: CandidateDim inputs and
// one output when TrainConfig.Universal is set, else Dim inputs and |S|
// outputs.
func (t *Trainer) QNetwork() *MLP { return t.q }

// DynamicsNetwork returns the first fabric's dynamics network (nil when
// TrainConfig.DynamicsEpochs is 0). It predicts the state change; see
// training.DynamicsModel.
func (t *Trainer) DynamicsNetwork() *MLP { return t.fabrics[0].dyn }

// Close frees the networks.
func (t *Trainer) Close() {
	defer lockThread()()
	nets := []*MLP{t.q, t.target}
	for _, f := range t.fabrics {
		nets = append(nets, f.dyn)
		f.dyn = nil
	}
	for _, m := range nets {
		if m != nil {
			m.Close()
		}
	}
	t.q, t.target = nil, nil
}

// Report is what training measured.
type Report struct {
	// Fabrics describes each dataset's split and dynamics model, in the
	// order of the datasets.
	Fabrics []FabricReport
	// FQI and Dyna hold one entry per epoch of each Q stage.
	FQI  []QEpoch
	Dyna []QEpoch
	// Elapsed is the wall-clock time of the run.
	Elapsed time.Duration
}

// FabricReport is what training measured on one dataset.
type FabricReport struct {
	// Encoder is the dataset's encoder configuration (its fabric size).
	Encoder telemetry.EncoderConfig
	// Train and HeldOut describe the two parts of the split.
	Train, HeldOut training.Stats
	// DynamicsTransitions is the size of the dynamics training set;
	// DynamicsAroundReroutes says whether it is the reroute window (false:
	// all training transitions, the window held too few).
	DynamicsTransitions    int
	DynamicsAroundReroutes bool
	// Dynamics holds one entry per epoch of Stage 1.
	Dynamics []DynamicsEpoch
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

// QEpoch reports one epoch of Stage 2 ("fqi") or Stage 3 ("dyna"). With
// several datasets its figures are pooled over them, every transition
// (every state, for RerouteRate) weighing the same.
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
	// the current target network, with the target training uses
	// (BellmanLoss; NaN without held-out data).
	HeldLoss float64
	// RerouteRate is the fraction of held-out states (training states
	// without held-out data) whose greedy action is not the current switch.
	RerouteRate float64
	// Fabrics holds HeldLoss and RerouteRate of each dataset, in order,
	// when there are several (nil with one).
	Fabrics []FabricEval
}

// FabricEval is the held-out figures of one dataset after a Q epoch (see
// QEpoch).
type FabricEval struct {
	HeldLoss, RerouteRate float64
}

// Run trains on ds: it splits off TrainConfig.HeldOut of the episodes,
// relabels the rewards with TrainConfig.Reward when ds keeps reward inputs
// (ds itself is not modified), and runs the three stages. It stops between
// gradient steps when ctx is done, returning ctx's error.
func (t *Trainer) Run(ctx context.Context, ds *training.Dataset) (Report, error) {
	return t.RunMulti(ctx, []*training.Dataset{ds})
}

// RunMulti trains on datasets, one per fabric of the trainer and in the
// same order, as Run trains on one: each is split and relabelled on its
// own; Stage 1 fits each fabric's dynamics model on its dataset; the Q
// stages draw every minibatch from one dataset (one fabric size), each
// epoch visiting every training transition of every dataset once in an
// order drawn from the seed, so the datasets weigh in proportion to their
// sizes; Dyna synthesises each batch with its fabric's dynamics model.
func (t *Trainer) RunMulti(ctx context.Context, datasets []*training.Dataset) (Report, error) {
	defer lockThread()()
	start := time.Now()
	var rep Report
	if len(datasets) != len(t.fabrics) {
		return rep, fmt.Errorf("torchq: run: %d datasets, trainer built for %d (%s)", len(datasets), len(t.fabrics), t.fabricList())
	}
	parts := make([]part, len(datasets))
	for i, ds := range datasets {
		f := t.fabrics[i]
		where := "torchq: run"
		if len(datasets) > 1 {
			where = fmt.Sprintf("torchq: run: dataset %d (fabric %s)", i+1, training.FabricName(f.enc))
		}
		if ds == nil {
			return rep, fmt.Errorf("%s: nil dataset", where)
		}
		if ds.Encoder != f.enc {
			return rep, fmt.Errorf("%s: dataset encoded with %+v, trainer built for %+v", where, ds.Encoder, f.enc)
		}
		train, held, err := ds.Split(t.cfg.HeldOut, t.rngSplit)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", where, err)
		}
		if train.Len() == 0 {
			return rep, fmt.Errorf("%s: no training transitions", where)
		}
		label := ""
		if len(datasets) > 1 {
			label = training.FabricName(f.enc) + ": "
		}
		if ds.HasRewardInputs() {
			for _, p := range []*training.Dataset{train, held} {
				if err := p.Relabel(t.cfg.Reward); err != nil {
					return rep, fmt.Errorf("%s: %w", where, err)
				}
			}
			fmt.Fprintf(t.out, "%srewards relabelled with beta %g\n", label, t.cfg.Reward.Beta)
		} else {
			fmt.Fprintf(t.out, "%sdataset keeps no reward inputs: training on its stored rewards\n", label)
		}
		fr := FabricReport{Encoder: f.enc, Train: train.Stats(), HeldOut: held.Stats()}
		fmt.Fprintf(t.out, "%strain: %v\n%sheld out: %v\n", label, fr.Train, label, fr.HeldOut)
		rep.Fabrics = append(rep.Fabrics, fr)
		parts[i] = part{f: f, train: train, held: held}
	}

	for i, p := range parts {
		if p.f.dyn == nil {
			break
		}
		fr := &rep.Fabrics[i]
		idx, around := DynamicsSelection(p.train, t.cfg.RerouteWindow, t.cfg.MinDynamicsTransitions)
		fr.DynamicsTransitions, fr.DynamicsAroundReroutes = len(idx), around
		if around {
			fmt.Fprintf(t.out, "dynamics%s training set: %d transitions within %d steps of a reroute\n", t.name(p.f), len(idx), t.cfg.RerouteWindow)
		} else {
			fmt.Fprintf(t.out, "dynamics%s training set: all %d transitions (fewer than %d lie within %d steps of a reroute)\n",
				t.name(p.f), len(idx), t.cfg.MinDynamicsTransitions, t.cfg.RerouteWindow)
		}
		var err error
		if fr.Dynamics, err = t.TrainDynamics(ctx, p.train.Subset(idx), p.held); err != nil {
			return rep, err
		}
	}
	var err error
	if rep.FQI, err = t.fitQ(ctx, parts); err != nil {
		return rep, err
	}
	if t.cfg.DynaEpochs > 0 {
		if rep.Dyna, err = t.dyna(ctx, parts); err != nil {
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

// TrainDynamics runs Stage 1 for the fabric of train's encoder: it fits
// that fabric's dynamics network to predict s_{t+1} − s_t from [s_t,
// onehot(a_t)] on every transition of train (squared error, Adam), and
// after each epoch measures one-step errors on held (see DynamicsEpoch).
func (t *Trainer) TrainDynamics(ctx context.Context, train, held *training.Dataset) ([]DynamicsEpoch, error) {
	defer lockThread()()
	f, err := t.fabricOf(train.Encoder)
	if err != nil {
		return nil, fmt.Errorf("torchq: train dynamics: %w", err)
	}
	if f.dyn == nil {
		return nil, errors.New("torchq: train dynamics: no dynamics network (dynamics_epochs is 0)")
	}
	if train.Len() == 0 {
		return nil, errors.New("torchq: train dynamics: no transitions")
	}
	dim, nS, bs := f.enc.Dim(), f.enc.NumSwitches, t.cfg.BatchSize
	fmt.Fprintf(t.out, "stage 1: dynamics model%s %v on %d transitions\n", t.name(f), f.dyn.Sizes(), train.Len())
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
				s, a, _, s2 := f.perm.row(train.S[i*dim:(i+1)*dim], int(train.A[i]), 0, train.S2[i*dim:(i+1)*dim])
				x = appendInput(x, s, a, nS)
				for j := range s {
					y = append(y, s2[j]-s[j])
				}
			}
			tp := newTape(t.dev)
			pred := f.dyn.forward(tp, tp.floats(x, int64(len(rows)), int64(dim+nS)))
			loss := tp.mse(pred, tp.floats(y, int64(len(rows)), int64(dim)))
			err := optimise(tp, f.dynOpt, loss)
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
		if r.HeldMSE, r.NaiveMSE, r.HeldRerouteMSE, r.NaiveRerouteMSE, err = t.dynamicsError(f, held); err != nil {
			return reports, err
		}
		reports = append(reports, r)
		fmt.Fprintf(t.out, "dynamics%s epoch %d/%d: train mse %.5f, held-out mse %s (naive %s), held-out reroutes %s (naive %s) [%s]\n",
			t.name(f), epoch, t.cfg.DynamicsEpochs, r.TrainMSE, num(r.HeldMSE), num(r.NaiveMSE), num(r.HeldRerouteMSE), num(r.NaiveRerouteMSE),
			time.Since(start).Round(time.Millisecond))
		if err := t.checkpoint(f.dyn, "dynamics"+strings.ReplaceAll(t.name(f), " ", "-")+".ot"); err != nil {
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
// of the dynamics model of ds's fabric (as training.DynamicsModel.Predict
// predicts) and of the naive predictor s_{t+1} = s_t, over all transitions
// and over the reroutes only; NaN where there are none.
func (t *Trainer) DynamicsError(ds *training.Dataset) (model, naive, modelReroute, naiveReroute float64, err error) {
	nan := math.NaN()
	f, err := t.fabricOf(ds.Encoder)
	if err != nil {
		return nan, nan, nan, nan, fmt.Errorf("torchq: dynamics error: %w", err)
	}
	return t.dynamicsError(f, ds)
}

func (t *Trainer) dynamicsError(f *fabric, ds *training.Dataset) (model, naive, modelReroute, naiveReroute float64, err error) {
	nan := math.NaN()
	if f.dyn == nil {
		return nan, nan, nan, nan, errors.New("torchq: dynamics error: no dynamics network")
	}
	pred, err := t.predictNext(f, ds.S, ds.A)
	if err != nil {
		return nan, nan, nan, nan, err
	}
	dim := f.enc.Dim()
	var sm, sn, rm, rn float64
	var reroutes int
	for i := range ds.Len() {
		var em, en float64
		for j := range dim {
			s2 := float64(ds.S2[i*dim+j])
			dm, dn := float64(pred[i*dim+j])-s2, float64(ds.S[i*dim+j])-s2
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

// PredictNext returns the prediction of the dynamics model of enc's fabric
// for each state of s (row-major, enc.Dim() per state) and action: s +
// f_ψ(s, onehot(a)), projected with training.ClampState, exactly as
// training.DynamicsModel.Predict computes it.
func (t *Trainer) PredictNext(enc telemetry.EncoderConfig, s []float32, actions []int32) ([]float32, error) {
	f, err := t.fabricOf(enc)
	if err != nil {
		return nil, fmt.Errorf("torchq: predict: %w", err)
	}
	return t.predictNext(f, s, actions)
}

func (t *Trainer) predictNext(f *fabric, s []float32, actions []int32) ([]float32, error) {
	if f.dyn == nil {
		return nil, errors.New("torchq: predict: no dynamics network")
	}
	dim, nS := f.enc.Dim(), f.enc.NumSwitches
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
		delta, err := f.dyn.Forward(x, e-b)
		if err != nil {
			return nil, fmt.Errorf("torchq: predict: %w", err)
		}
		for i := b; i < e; i++ {
			row := delta[(i-b)*dim : (i-b+1)*dim]
			for j := range row {
				row[j] += s[i*dim+j]
			}
			if err := training.ClampState(f.enc, row, int(actions[i])); err != nil {
				return nil, err
			}
		}
		out = append(out, delta...)
	}
	return out, nil
}

// part is one fabric's data in a Q stage.
type part struct {
	f           *fabric
	train, held *training.Dataset
}

// onePart returns the part of train's fabric.
func (t *Trainer) onePart(train, held *training.Dataset) ([]part, error) {
	f, err := t.fabricOf(train.Encoder)
	if err != nil {
		return nil, err
	}
	if held.Encoder != f.enc {
		return nil, fmt.Errorf("torchq: held-out data encoded with %+v, training data with %+v", held.Encoder, f.enc)
	}
	return []part{{f: f, train: train, held: held}}, nil
}

// FitQ runs Stage 2, fitted Q-iteration on the real transitions of train:
// FQIEpochs passes of minibatch regression of Q(s, a) on the Bellman target
// r + γ·(1 − done)·max_a' Q_target(s', a') (Huber or squared loss, Adam),
// the target network refreshed every TargetUpdatePeriod steps. After each
// epoch it reports the held-out Bellman loss.
func (t *Trainer) FitQ(ctx context.Context, train, held *training.Dataset) ([]QEpoch, error) {
	defer lockThread()()
	parts, err := t.onePart(train, held)
	if err != nil {
		return nil, fmt.Errorf("torchq: fqi: %w", err)
	}
	return t.fitQ(ctx, parts)
}

func (t *Trainer) fitQ(ctx context.Context, parts []part) ([]QEpoch, error) {
	fmt.Fprintf(t.out, "stage 2: fitted Q-iteration, Q-network %v, %d epochs\n", t.q.Sizes(), t.cfg.FQIEpochs)
	return t.qStage(ctx, "fqi", t.cfg.FQIEpochs, parts, t.rngFQI, false)
}

// Dyna runs Stage 3: like FitQ, but every batch of real transitions is
// joined by synthetic ones from the dynamics model (see synthesize), whose
// loss is weighted by SyntheticWeight.
func (t *Trainer) Dyna(ctx context.Context, train, held *training.Dataset) ([]QEpoch, error) {
	defer lockThread()()
	parts, err := t.onePart(train, held)
	if err != nil {
		return nil, fmt.Errorf("torchq: dyna: %w", err)
	}
	return t.dyna(ctx, parts)
}

func (t *Trainer) dyna(ctx context.Context, parts []part) ([]QEpoch, error) {
	for _, p := range parts {
		if p.f.dyn == nil {
			return nil, errors.New("torchq: dyna: no dynamics network (dynamics_epochs is 0)")
		}
	}
	fmt.Fprintf(t.out, "stage 3: Dyna refinement, %d epochs, %d rollouts of %d steps per batch\n",
		t.cfg.DynaEpochs, t.cfg.DynaRollouts, t.cfg.DynaHorizon)
	return t.qStage(ctx, "dyna", t.cfg.DynaEpochs, parts, t.rngDyna, true)
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

// slot is one minibatch of a Q epoch: rows off.. of part p's order.
type slot struct{ p, off int }

func (t *Trainer) qStage(ctx context.Context, stage string, epochs int, parts []part, rng *rand.Rand, dyna bool) ([]QEpoch, error) {
	var total int
	for _, p := range parts {
		total += p.train.Len()
	}
	if total == 0 {
		return nil, fmt.Errorf("torchq: %s: no transitions", stage)
	}
	if err := t.target.CopyFrom(t.q); err != nil {
		return nil, err
	}
	bs := t.cfg.BatchSize
	gamma := float32(t.cfg.Gamma)
	var reports []QEpoch
	var b batch
	orders := make([][]int, len(parts))
	for epoch := 1; epoch <= epochs; epoch++ {
		start := time.Now()
		// Every part's order, then its minibatches interleaved in a random
		// order (one part: in turn, drawing nothing more).
		var slots []slot
		for i, p := range parts {
			orders[i] = rng.Perm(p.train.Len())
			for off := 0; off < len(orders[i]); off += bs {
				slots = append(slots, slot{i, off})
			}
		}
		if len(parts) > 1 {
			rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		}
		rep := QEpoch{Stage: stage, Epoch: epoch}
		var realLoss, synthLoss, synthReward, meanQ float64
		for _, sl := range slots {
			if err := ctx.Err(); err != nil {
				return reports, fmt.Errorf("torchq: %s: %w", stage, err)
			}
			if t.steps > 0 && t.steps%t.cfg.TargetUpdatePeriod == 0 {
				if err := t.target.CopyFrom(t.q); err != nil {
					return reports, err
				}
			}
			p, order := parts[sl.p], orders[sl.p]
			rows := order[sl.off:min(sl.off+bs, len(order))]
			dim := p.f.enc.Dim()
			// A universal network scores every switch with the same
			// weights on rows that permute with the switches: relabelling
			// the switches would change nothing but the order of sums.
			perm := p.f.perm
			if t.cfg.Universal {
				perm = nil
			}
			b.reset()
			for _, i := range rows {
				g := gamma
				if p.train.Done[i] {
					g = 0
				}
				s, a, cur, s2 := perm.row(p.train.S[i*dim:(i+1)*dim], int(p.train.A[i]), int(p.train.Current[i]), p.train.S2[i*dim:(i+1)*dim])
				b.add(s, a, p.train.R[i], s2, g, cur, float64(p.train.Phi0[i]))
			}
			b.real = len(rows)
			if dyna {
				sr, err := t.synthesize(p.f, &b, rng)
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
			el, q, err := t.qStep(p.f.enc, &b)
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
		rep.Loss = realLoss / float64(total)
		rep.MeanQ = meanQ / float64(total)
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
		if rep.HeldLoss, rep.RerouteRate, rep.Fabrics, err = t.evaluate(parts); err != nil {
			return reports, err
		}
		reports = append(reports, rep)
		line := fmt.Sprintf("%s epoch %d/%d: loss %.5f, held-out %s, mean Q %.3f, greedy reroute rate %.3f",
			stage, epoch, epochs, rep.Loss, num(rep.HeldLoss), rep.MeanQ, rep.RerouteRate)
		if dyna {
			line += fmt.Sprintf(", synthetic loss %.5f on %d (mean reward %.3f)", rep.SyntheticLoss, rep.Synthetic, rep.SyntheticReward)
		}
		for i, fe := range rep.Fabrics {
			sep := "; "
			if i == 0 {
				sep = "; by fabric: "
			}
			line += fmt.Sprintf("%s%s held-out %s reroute %.3f", sep, training.FabricName(parts[i].f.enc), num(fe.HeldLoss), fe.RerouteRate)
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

// qStep takes one gradient step on the rows of b, states encoded with enc,
// and returns every row's loss and Q(s, a) before the step.
func (t *Trainer) qStep(enc telemetry.EncoderConfig, b *batch) (loss, q []float32, err error) {
	n := len(b.a)
	tp := newTape(t.dev)
	defer tp.free()
	// The target network's variables do not require gradients, so the
	// target carries no graph.
	qNext := t.qTensor(tp, t.target, enc, b.s2, n)
	if t.cfg.ParetoTargets {
		qNext = tp.add(qNext, tp.floats(dominatedPenalty(enc, b.s2, n), int64(n), int64(enc.NumSwitches)))
	}
	next := tp.rowMax(qNext)
	target := tp.add(tp.floats(b.r, int64(n)), tp.mul(tp.floats(b.gamma, int64(n)), next))
	pred := tp.gather(t.qTensor(tp, t.q, enc, b.s, n), tp.ints(b.a))
	el := tp.elementLoss(pred, target, t.cfg.HuberDelta)
	total := tp.sum(tp.mul(el, tp.floats(b.weight, int64(n))))
	if t.cfg.Universal && t.cfg.Monotone > 0 {
		if pen := t.monotonePenalty(tp, enc, b.s, n); pen != nil {
			total = tp.add(total, pen)
		}
	}
	if err := optimise(tp, t.qOpt, total); err != nil {
		return nil, nil, err
	}
	loss, q = tp.values(el), tp.values(pred)
	if tp.err != nil {
		return nil, nil, tp.err
	}
	t.steps++
	return loss, q, nil
}

// dominatedPenalty returns, for the n states s encoded with enc, n·|S|
// values: a large negative number where switch k is a destination another
// switch than k and the current one beats on every feature of
// paretoFeatures at once (at most as high on each, lower on one), 0
// elsewhere, so that a row maximum skips those destinations
// (TrainConfig.ParetoTargets). The current switch's block reads signed
// deviations from the flow's baseline, so it is neither marked nor a
// yardstick, as in proflow.DominatedSwitches.
func dominatedPenalty(enc telemetry.EncoderConfig, s []float32, n int) []float32 {
	nS, dim := enc.NumSwitches, enc.Dim()
	feats := paretoFeatures(enc)
	out := make([]float32, n*nS)
	for i := range n {
		st := s[i*dim : (i+1)*dim]
		cur, err := enc.CurrentSwitch(st)
		if err != nil {
			continue // qTensor reports the state's error
		}
		for k := range nS {
			if k == cur {
				continue
			}
			for j := range nS {
				if j == k || j == cur {
					continue
				}
				lower, beaten := false, true
				for _, f := range feats {
					a, b := st[enc.AggOffset(j)+f], st[enc.AggOffset(k)+f]
					if a > b {
						beaten = false
						break
					}
					if a < b {
						lower = true
					}
				}
				if beaten && lower {
					out[i*nS+k] = -1e9
					break
				}
			}
		}
	}
	return out
}

// paretoFeatures are the switch features a destination is compared on:
// transmit rate, overflow, flow count, elephant rate and, in layouts that
// have it, the uplink backlog.
func paretoFeatures(enc telemetry.EncoderConfig) []int {
	feats := []int{telemetry.FeatureTxRate, telemetry.FeatureOverflow, telemetry.FeatureFlowCount, telemetry.FeatureElephant}
	if enc.SwitchWidth() > telemetry.FeatureQueue {
		feats = append(feats, telemetry.FeatureQueue)
	}
	return feats
}

// monotonePenalty records on tp TrainConfig.Monotone's penalty for the n
// states s encoded with enc: every destination row (flag 0) beside a copy
// whose own congestion features are raised, each with probability 1/2 (the
// transmit rate when none is drawn), by an amount drawn uniformly from [0,
// 0.5), clipped at 1; the penalty is Monotone/(|S|−1) times the sum of
// max(0, Q(raised) − Q(row)). It returns nil when no row is a destination.
func (t *Trainer) monotonePenalty(tp *tape, enc telemetry.EncoderConfig, s []float32, n int) *ts.Tensor {
	rows, err := t.candidates(enc, s, n)
	if err != nil {
		return tp.keep(nil, err)
	}
	dim, w := enc.CandidateDim(), enc.SwitchWidth()
	feats := paretoFeatures(enc)
	if enc.HasDeficit() {
		feats = append(feats, telemetry.FeatureDeficit)
	}
	flag := 2 * w // candidateOffsets: own block, current block, then the flag
	var orig, raised []float32
	for r := 0; r+dim <= len(rows); r += dim {
		row := rows[r : r+dim]
		if row[flag] != 0 {
			continue
		}
		orig = append(orig, row...)
		up := append([]float32(nil), row...)
		raisedOne := false
		for _, f := range feats {
			if t.rngMono.IntN(2) == 0 {
				continue
			}
			up[f] = min(1, up[f]+float32(0.5*t.rngMono.Float64()))
			raisedOne = true
		}
		if !raisedOne {
			up[telemetry.FeatureTxRate] = min(1, up[telemetry.FeatureTxRate]+float32(0.5*t.rngMono.Float64()))
		}
		raised = append(raised, up...)
	}
	pairs := int64(len(orig) / dim)
	if pairs == 0 {
		return nil
	}
	qo := t.q.forward(tp, tp.floats(orig, pairs, int64(dim)))
	qr := t.q.forward(tp, tp.floats(raised, pairs, int64(dim)))
	wts := make([]float32, pairs)
	for i := range wts {
		wts[i] = float32(t.cfg.Monotone / float64(enc.NumSwitches-1))
	}
	return tp.sum(tp.mul(tp.relu(tp.sub(qr, qo)), tp.floats(wts, pairs, 1)))
}

// qTensor records on tp the Q-values Q(s, ·) of network m (the Q-network
// or the target) for the n states s encoded with enc: a [n, |S|] tensor.
// A universal network scores the n·|S| candidate rows, [n·|S|, F] → [n·|S|,
// 1], viewed as [n, |S|].
func (t *Trainer) qTensor(tp *tape, m *MLP, enc telemetry.EncoderConfig, s []float32, n int) *ts.Tensor {
	if !t.cfg.Universal {
		return m.forward(tp, tp.floats(s, int64(n), int64(enc.Dim())))
	}
	rows, err := t.candidates(enc, s, n)
	if err != nil {
		return tp.keep(nil, err)
	}
	nS := int64(enc.NumSwitches)
	y := m.forward(tp, tp.floats(rows, int64(n)*nS, int64(enc.CandidateDim())))
	return tp.view(y, int64(n), nS)
}

// candidates returns the candidate rows of the n states s encoded with enc
// (telemetry.EncoderConfig.EncodeCandidates), n·|S| rows of CandidateDim
// values, in the trainer's scratch: valid until the next call.
func (t *Trainer) candidates(enc telemetry.EncoderConfig, s []float32, n int) ([]float32, error) {
	width := enc.NumSwitches * enc.CandidateDim()
	if cap(t.rows) < n*width {
		t.rows = make([]float32, n*width)
	}
	rows := t.rows[:n*width]
	if err := enc.EncodeCandidatesBatch(rows, s, n); err != nil {
		return nil, fmt.Errorf("torchq: %w", err)
	}
	return rows, nil
}

// optimise back-propagates loss and takes a step of opt.
func optimise(tp *tape, opt *nn.Optimizer, loss *ts.Tensor) error {
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

// synthesize appends to b, whose states are of fabric f, the synthetic
// transitions of its real rows, predicted by f's dynamics model, and
// returns the sum of their rewards. For every real row it predicts the
// outcome of every action other than the logged one (branching); then
// DynaRollouts of those branches, drawn with rng, continue for
// DynaHorizon−1 more steps, each step taking the Q-network's greedy action
// or, with probability RolloutEpsilon, a random one. Rewards are the
// synthetic reward (training.RewardConfig.Synthetic); synthetic
// transitions are never terminal.
func (t *Trainer) synthesize(f *fabric, b *batch, rng *rand.Rand) (float64, error) {
	dim, nS := f.enc.Dim(), f.enc.NumSwitches
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
		r, err := t.cfg.Reward.Synthetic(f.enc, training.SyntheticStep{State: s, Next: next, Current: cur, Action: a, ThroughputBaseline: phi0})
		if err != nil {
			return err
		}
		b.add(s, a, float32(r), next, gamma, cur, phi0)
		b.synt++
		sum += r
		return nil
	}
	next, err := t.predictNext(f, states, actions)
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
		q, err := t.qValues(t.q, f.enc, cur)
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
		nx, err := t.predictNext(f, cur, acts)
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

// QValues returns Q(s, ·) for states s encoded with enc (row-major,
// enc.Dim() per state), enc.NumSwitches values per state. A per-fabric
// Q-network takes only its fabric's encoder; a universal one any encoder
// scaled like the trainer's (telemetry.EncoderConfig.ScalingMismatch),
// whatever its size.
func (t *Trainer) QValues(enc telemetry.EncoderConfig, s []float32) ([]float32, error) {
	ref := t.fabrics[0].enc
	if !t.cfg.Universal && enc != ref {
		return nil, fmt.Errorf("torchq: Q-values: states encoded with %+v, Q-network built for %+v", enc, ref)
	}
	if field, theirs, mine, ok := enc.ScalingMismatch(ref); !ok {
		return nil, fmt.Errorf("torchq: Q-values: states encoded with %s %s, the Q-network trained with %s: %w", field, theirs, mine, training.ErrScalingMismatch)
	}
	return t.qValues(t.q, enc, s)
}

// qValues returns network m's Q(s, ·) for states s encoded with enc,
// |S| values per state, in chunks of at most evalChunk states.
func (t *Trainer) qValues(m *MLP, enc telemetry.EncoderConfig, s []float32) ([]float32, error) {
	dim, nS := enc.Dim(), enc.NumSwitches
	if len(s)%dim != 0 {
		return nil, fmt.Errorf("torchq: Q-values: %d values are not whole states of %d", len(s), dim)
	}
	n := len(s) / dim
	if !t.cfg.Universal {
		return forwardChunked(m, s, n)
	}
	out := make([]float32, 0, n*nS)
	for b := 0; b < n; b += evalChunk {
		e := min(b+evalChunk, n)
		rows, err := t.candidates(enc, s[b*dim:e*dim], e-b)
		if err != nil {
			return nil, err
		}
		y, err := m.Forward(rows, (e-b)*nS)
		if err != nil {
			return nil, err
		}
		out = append(out, y...)
	}
	return out, nil
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

// evaluate returns the epoch's held-out figures (see QEpoch), pooled over
// parts and, with several parts, each part's: the Bellman loss on the
// held-out transitions (NaN when there are none) and the greedy reroute
// rate on the held-out states, or on the training states of a part
// without held-out data. Each state's Q-values are computed once for both.
func (t *Trainer) evaluate(parts []part) (loss, rate float64, each []FabricEval, err error) {
	var lossSum, rerouted float64
	var held, rated int
	for _, p := range parts {
		eval := p.held
		if p.held.Len() == 0 {
			eval = p.train
		}
		q, err := t.qValues(t.q, p.f.enc, eval.S)
		if err != nil {
			return 0, 0, nil, err
		}
		fe := FabricEval{HeldLoss: math.NaN()}
		if p.held.Len() > 0 {
			sum, err := t.bellmanSum(p.held, q)
			if err != nil {
				return 0, 0, nil, err
			}
			fe.HeldLoss = sum / float64(p.held.Len())
			lossSum += sum
			held += p.held.Len()
		}
		n := t.reroutes(eval, q)
		fe.RerouteRate = n / float64(eval.Len())
		rerouted += n
		rated += eval.Len()
		each = append(each, fe)
	}
	loss = math.NaN()
	if held > 0 {
		loss = lossSum / float64(held)
	}
	if len(parts) == 1 {
		each = nil
	}
	return loss, rerouted / float64(rated), each, nil
}

// withQ returns f(ds, Q(s, ·) of ds's states), NaN for an empty dataset.
func (t *Trainer) withQ(ds *training.Dataset, f func(ds *training.Dataset, q []float32) (float64, error)) (float64, error) {
	if ds.Len() == 0 {
		return math.NaN(), nil
	}
	q, err := t.QValues(ds.Encoder, ds.S)
	if err != nil {
		return 0, err
	}
	return f(ds, q)
}

// BellmanLoss returns the mean Bellman loss (the training loss: Huber or
// squared) of ds's transitions against the current target network, its
// maximum taken as training takes it (over the undominated destinations
// with TrainConfig.ParetoTargets); NaN for an empty dataset.
func (t *Trainer) BellmanLoss(ds *training.Dataset) (float64, error) {
	return t.withQ(ds, func(ds *training.Dataset, q []float32) (float64, error) {
		sum, err := t.bellmanSum(ds, q)
		return sum / float64(ds.Len()), err
	})
}

// bellmanSum is the summed Bellman loss of a non-empty ds whose Q-values
// are q, against the target qStep trains on: with
// TrainConfig.ParetoTargets the maximum skips the destinations
// dominatedPenalty marks in the next state.
func (t *Trainer) bellmanSum(ds *training.Dataset, q []float32) (float64, error) {
	nS := ds.Encoder.NumSwitches
	qt, err := t.qValues(t.target, ds.Encoder, ds.S2)
	if err != nil {
		return 0, err
	}
	if t.cfg.ParetoTargets {
		for j, p := range dominatedPenalty(ds.Encoder, ds.S2, ds.Len()) {
			qt[j] += p
		}
	}
	var sum float64
	for i := range ds.Len() {
		y := float64(ds.R[i])
		if !ds.Done[i] {
			y += t.cfg.Gamma * float64(slices.Max(qt[i*nS:(i+1)*nS]))
		}
		sum += lossOf(float64(q[i*nS+int(ds.A[i])])-y, t.cfg.HuberDelta)
	}
	return sum, nil
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
	return t.withQ(ds, func(ds *training.Dataset, q []float32) (float64, error) {
		return t.reroutes(ds, q) / float64(ds.Len()), nil
	})
}

// reroutes counts ds's states whose greedy action under Q-values q is not
// the current switch.
func (t *Trainer) reroutes(ds *training.Dataset, q []float32) float64 {
	nS := ds.Encoder.NumSwitches
	var n int
	for i := range ds.Len() {
		if argmax(q[i*nS:(i+1)*nS]) != int(ds.Current[i]) {
			n++
		}
	}
	return float64(n)
}

// checkpoint saves m as name in the checkpoint directory, if one is set.
func (t *Trainer) checkpoint(m *MLP, name string) error {
	if t.cfg.CheckpointDir == "" {
		return nil
	}
	return m.Save(filepath.Join(t.cfg.CheckpointDir, name))
}

// QModel exports the Q-network as a pure-Go model: a universal one
// (TrainConfig.Universal) takes one candidate row and gives one Q-value;
// save it with qnet.NewUniversalMetadata.
func (t *Trainer) QModel() (*qnet.Model, error) { return t.q.Model() }

// DynamicsModel exports the first fabric's dynamics network as a pure-Go
// training.DynamicsModel (nil, nil without one).
func (t *Trainer) DynamicsModel() (*training.DynamicsModel, error) {
	ms, err := t.DynamicsModels()
	if err != nil || ms == nil {
		return nil, err
	}
	return ms[0], nil
}

// DynamicsModels exports every fabric's dynamics network, in the order of
// the fabrics (nil, nil without dynamics networks).
func (t *Trainer) DynamicsModels() ([]*training.DynamicsModel, error) {
	var ms []*training.DynamicsModel
	for _, f := range t.fabrics {
		if f.dyn == nil {
			return nil, nil
		}
		m, err := f.dyn.Model()
		if err != nil {
			return nil, err
		}
		d, err := training.NewDynamicsModel(f.enc, m)
		if err != nil {
			return nil, err
		}
		ms = append(ms, d)
	}
	return ms, nil
}

// Result is a trained policy and what training reported.
type Result struct {
	// Q is the trained Q-network, ready for qnet.Save (with
	// qnet.NewUniversalMetadata when TrainConfig.Universal is set).
	Q *qnet.Model
	// Dynamics is the first dataset's dynamics model (nil when
	// DynamicsEpochs is 0).
	Dynamics *training.DynamicsModel
	// FabricDynamics holds every dataset's dynamics model, in the order of
	// the datasets (nil when DynamicsEpochs is 0); the first is Dynamics.
	FabricDynamics []*training.DynamicsModel
	Report         Report
}

// Train runs every stage on ds with cfg (see Trainer.Run) and exports the
// networks. Progress lines go to progress (nil discards them).
func Train(ctx context.Context, ds *training.Dataset, cfg training.TrainConfig, progress io.Writer) (*Result, error) {
	return TrainMulti(ctx, []*training.Dataset{ds}, cfg, progress)
}

// TrainMulti runs every stage on datasets, one per fabric size, with cfg
// (see Trainer.RunMulti; several datasets need cfg.Universal) and exports
// the networks. With cfg.DecisionLag > 0 it trains on the datasets' Lagged
// copies. Progress lines go to progress (nil discards them).
func TrainMulti(ctx context.Context, datasets []*training.Dataset, cfg training.TrainConfig, progress io.Writer) (*Result, error) {
	var encs []telemetry.EncoderConfig
	if cfg.DecisionLag > 0 {
		datasets = slices.Clone(datasets)
	}
	for i, ds := range datasets {
		if ds == nil {
			return nil, fmt.Errorf("torchq: train: dataset %d is nil", i+1)
		}
		if cfg.DecisionLag > 0 {
			lagged, err := ds.Lagged(cfg.DecisionLag)
			if err != nil {
				return nil, fmt.Errorf("torchq: train: dataset %d: %w", i+1, err)
			}
			datasets[i] = lagged
		}
		encs = append(encs, ds.Encoder)
	}
	t, err := NewMultiTrainer(cfg, encs, progress)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	rep, err := t.RunMulti(ctx, datasets)
	if err != nil {
		return nil, err
	}
	res := &Result{Report: rep}
	if res.Q, err = t.QModel(); err != nil {
		return nil, err
	}
	if res.FabricDynamics, err = t.DynamicsModels(); err != nil {
		return nil, err
	}
	if res.FabricDynamics != nil {
		res.Dynamics = res.FabricDynamics[0]
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
