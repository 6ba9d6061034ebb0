//go:build torch

package torchq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/sugarme/gotch/nn"

	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/training"
)

// DistillConfig sets a distillation (Distill).
type DistillConfig struct {
	// Hidden are the student's hidden-layer widths
	// (training.UniversalHidden when empty).
	Hidden []int
	// Epochs is the number of passes over the states.
	Epochs int
	// BatchSize is the number of states per gradient step; every
	// candidate row of a state is in its step.
	BatchSize int
	// LearningRate is the Adam step size of the first epoch; it falls
	// along a half cosine to 2% of it in the last.
	LearningRate float64
	// MarginWeight weighs the error of the decision margins Q(s,k) −
	// Q(s,k*), what the gate reads, against the error of the Q-values
	// themselves.
	MarginWeight float64
	// HeldOut is the share of each dataset's episodes kept out of the
	// fit, whole, and used for the report: the states of one episode, a
	// control interval apart and alike, are all fitted or all held out
	// (training.Dataset.Split, which the Q-network's training uses too).
	HeldOut float64
	// Seed seeds the student's initialisation, the split and the order of
	// the steps.
	Seed uint64
	// Device is "cpu" or "cuda".
	Device string
}

// DefaultDistillConfig returns proflow distill's defaults, those of the
// one measured distillation (training/doc.go; no student is committed): a
// 128×128 student, 30 epochs of 256 states, Adam from 1e-3, margins
// weighed 4, 5% held out.
func DefaultDistillConfig() DistillConfig {
	return DistillConfig{Hidden: training.UniversalHidden(), Epochs: 30, BatchSize: 256, LearningRate: 1e-3, MarginWeight: 4, HeldOut: 0.05, Seed: 1, Device: training.DeviceCPU}
}

func (c DistillConfig) validate() error {
	switch {
	case c.Epochs < 1:
		return fmt.Errorf("distill: epochs %d, want at least 1", c.Epochs)
	case c.BatchSize < 1:
		return fmt.Errorf("distill: batch size %d, want at least 1", c.BatchSize)
	case !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0):
		return fmt.Errorf("distill: learning rate %v, want a finite number > 0", c.LearningRate)
	case !(c.MarginWeight >= 0) || math.IsInf(c.MarginWeight, 0):
		return fmt.Errorf("distill: margin weight %v, want a finite number >= 0", c.MarginWeight)
	case !(c.HeldOut > 0 && c.HeldOut < 0.5):
		return fmt.Errorf("distill: held-out share %v, want one in (0, 0.5)", c.HeldOut)
	}
	for _, h := range c.Hidden {
		if h < 1 {
			return fmt.Errorf("distill: hidden widths %v, want every one at least 1", c.Hidden)
		}
	}
	return nil
}

// DistillEpoch is one epoch's progress: the student's mean squared error
// against the teachers' mean Q-value per candidate row (the fitted
// states' with the margin term, DistillConfig.MarginWeight; the held-out
// states' without), and, on the held-out states, the share
// whose greedy switch the student picks as the teachers do and the mean
// absolute error of the decision margin max_{k≠k*} Q(s,k) − Q(s,k*).
type DistillEpoch struct {
	Epoch                  int
	Loss, HeldOutLoss      float64
	Agreement, MarginError float64
	Elapsed                time.Duration
}

// distillSet is one dataset's states with the teachers' targets.
type distillSet struct {
	enc         telemetry.EncoderConfig
	states      []float32 // Dim values per state
	cur         []int     // the current switch of each state
	target      []float32 // NumSwitches mean Q-values per state
	train, held []int     // state indices
}

// Distill fits a fresh universal Q-network (cfg.Hidden, initialised from
// cfg.Seed) to the mean of the teachers' Q-values on every candidate row
// of the states s_t of datasets, by the mean squared error of the values
// plus cfg.MarginWeight times that of the margins Q(s,k) − Q(s,k*): one network that
// decides as the teachers' average does, at one network's cost. Every
// teacher must be a universal network (one output) of the datasets'
// candidate width. It writes one progress line per epoch to progress (nil
// discards them) and returns the student and each epoch's report.
func Distill(ctx context.Context, cfg DistillConfig, teachers []*qnet.Model, datasets []*training.Dataset, progress io.Writer) (*qnet.Model, []DistillEpoch, error) {
	defer lockThread()()
	if len(cfg.Hidden) == 0 {
		cfg.Hidden = training.UniversalHidden()
	}
	if err := cfg.validate(); err != nil {
		return nil, nil, fmt.Errorf("torchq: %w", err)
	}
	if len(teachers) == 0 || len(datasets) == 0 {
		return nil, nil, errors.New("torchq: distill: want at least one teacher and one dataset")
	}
	if progress == nil {
		progress = io.Discard
	}
	dev, err := Device(cfg.Device)
	if err != nil {
		return nil, nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, streamDistill))
	sets, err := distillTargets(teachers, datasets, cfg.HeldOut, rng)
	if err != nil {
		return nil, nil, err
	}
	in := datasets[0].Encoder.CandidateDim()
	student, err := NewMLP(sizes(in, cfg.Hidden, 1), dev, rand.New(rand.NewPCG(cfg.Seed, streamInit)))
	if err != nil {
		return nil, nil, fmt.Errorf("torchq: distill: %w", err)
	}
	defer student.Close()
	opt, err := nn.DefaultAdamConfig().Build(student.VarStore(), cfg.LearningRate)
	if err != nil {
		return nil, nil, fmt.Errorf("torchq: distill: %w", err)
	}

	// The steps of an epoch: batches of one dataset each, in a random
	// order over the datasets.
	type step struct{ set, from, to int }
	var report []DistillEpoch
	var rows []float32
	start := time.Now()
	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		frac := 0.0
		if cfg.Epochs > 1 {
			frac = float64(epoch-1) / float64(cfg.Epochs-1)
		}
		opt.SetLR(cfg.LearningRate * (0.02 + 0.98*0.5*(1+math.Cos(math.Pi*frac))))
		var steps []step
		for i, s := range sets {
			rng.Shuffle(len(s.train), func(a, b int) { s.train[a], s.train[b] = s.train[b], s.train[a] })
			for from := 0; from < len(s.train); from += cfg.BatchSize {
				steps = append(steps, step{i, from, min(from+cfg.BatchSize, len(s.train))})
			}
		}
		rng.Shuffle(len(steps), func(a, b int) { steps[a], steps[b] = steps[b], steps[a] })
		var sum float64
		var count int
		for _, st := range steps {
			if err := ctx.Err(); err != nil {
				return nil, nil, fmt.Errorf("torchq: distill: %w", err)
			}
			s := sets[st.set]
			idx := s.train[st.from:st.to]
			x, y := s.gather(idx, &rows)
			n, nS := int64(len(idx)), int64(s.enc.NumSwitches)
			cur, ym := s.margins(idx, y)
			tp := newTape(dev)
			q := tp.view(student.forward(tp, tp.floats(x, n*nS, int64(in))), n, nS)
			m := tp.sub(q, tp.view(tp.gather(q, tp.ints(cur)), n, 1))
			w := tp.floats([]float32{float32(cfg.MarginWeight)}, 1)
			loss := tp.add(tp.mse(q, tp.floats(y, n, nS)), tp.mul(w, tp.mse(m, tp.floats(ym, n, nS))))
			err := optimise(tp, opt, loss)
			var l []float32
			if err == nil {
				l = tp.values(loss)
				err = tp.err
			}
			tp.free()
			if err != nil {
				return nil, nil, fmt.Errorf("torchq: distill: epoch %d: %w", epoch, err)
			}
			sum += float64(l[0]) * float64(n*nS)
			count += int(n * nS)
		}
		m, err := student.Model()
		if err != nil {
			return nil, nil, fmt.Errorf("torchq: distill: %w", err)
		}
		e := DistillEpoch{Epoch: epoch, Loss: sum / float64(max(count, 1)), Elapsed: time.Since(start)}
		if e.HeldOutLoss, e.Agreement, e.MarginError, err = heldOutFit(m, sets); err != nil {
			return nil, nil, err
		}
		report = append(report, e)
		fmt.Fprintf(progress, "distill epoch %d/%d: loss %.5f, held-out %.5f, greedy agreement %.4f, margin error %.4f [%s]\n",
			epoch, cfg.Epochs, e.Loss, e.HeldOutLoss, e.Agreement, e.MarginError, e.Elapsed.Round(time.Millisecond))
	}
	m, err := student.Model()
	if err != nil {
		return nil, nil, fmt.Errorf("torchq: distill: %w", err)
	}
	return m, report, nil
}

// distillTargets encodes every state s_t of the datasets into candidate
// rows, scores them with every teacher, keeps the mean per row, and splits
// the states of each dataset into fitted and held-out ones by episode.
func distillTargets(teachers []*qnet.Model, datasets []*training.Dataset, heldOut float64, rng *rand.Rand) ([]*distillSet, error) {
	in := datasets[0].Encoder.CandidateDim()
	for i, t := range teachers {
		if t.InputDim() != in || t.OutputDim() != 1 {
			return nil, fmt.Errorf("torchq: distill: teacher %d maps %d inputs to %d outputs, want a universal network of %d inputs to 1", i+1, t.InputDim(), t.OutputDim(), in)
		}
	}
	var sets []*distillSet
	for d, ds := range datasets {
		enc := ds.Encoder
		if enc.CandidateDim() != in {
			return nil, fmt.Errorf("torchq: distill: dataset %d has candidate rows of %d values, want %d (the first's)", d+1, enc.CandidateDim(), in)
		}
		dim, nS, n := enc.Dim(), enc.NumSwitches, ds.Len()
		s := &distillSet{enc: enc, states: ds.S, cur: make([]int, n), target: make([]float32, n*nS)}
		const chunk = 4096
		rows := make([]float32, chunk*nS*in)
		q := make([]float32, chunk*nS)
		for from := 0; from < n; from += chunk {
			k := min(chunk, n-from)
			if err := enc.EncodeCandidatesBatch(rows[:k*nS*in], ds.S[from*dim:(from+k)*dim], k); err != nil {
				return nil, fmt.Errorf("torchq: distill: dataset %d: %w", d+1, err)
			}
			out := s.target[from*nS : (from+k)*nS]
			for _, t := range teachers {
				if err := t.ForwardBatch(q[:k*nS], rows[:k*nS*in], k*nS); err != nil {
					return nil, fmt.Errorf("torchq: distill: %w", err)
				}
				for j := range out {
					out[j] += q[j] / float32(len(teachers))
				}
			}
		}
		for i := range n {
			cur, err := enc.CurrentSwitch(ds.S[i*dim : (i+1)*dim])
			if err != nil {
				return nil, fmt.Errorf("torchq: distill: dataset %d, state %d: %w", d+1, i, err)
			}
			s.cur[i] = cur
		}
		var err error
		if s.train, s.held, err = ds.SplitIndices(heldOut, rng); err != nil {
			return nil, fmt.Errorf("torchq: distill: dataset %d: %w", d+1, err)
		}
		if len(s.train) == 0 || len(s.held) == 0 {
			eps := fmt.Sprintf("%d episodes", len(ds.Episodes()))
			if len(ds.Episodes()) == 1 {
				eps = "1 episode"
			}
			return nil, fmt.Errorf("torchq: distill: dataset %d holds %s, want at least 2 to hold out whole episodes", d+1, eps)
		}
		sets = append(sets, s)
	}
	return sets, nil
}

// gather returns the candidate rows and targets of the states idx, in
// *rows (grown as needed) and a fresh slice.
func (s *distillSet) gather(idx []int, rows *[]float32) (x, y []float32) {
	dim, nS, in := s.enc.Dim(), s.enc.NumSwitches, s.enc.CandidateDim()
	if cap(*rows) < len(idx)*nS*in {
		*rows = make([]float32, len(idx)*nS*in)
	}
	x = (*rows)[:len(idx)*nS*in]
	y = make([]float32, 0, len(idx)*nS)
	for j, i := range idx {
		// The states were encoded by the same encoder: no error here
		// that distillTargets did not already report.
		_ = s.enc.EncodeCandidates(x[j*nS*in:(j+1)*nS*in], s.states[i*dim:(i+1)*dim])
		y = append(y, s.target[i*nS:(i+1)*nS]...)
	}
	return x, y
}

// margins returns the current switch of each state idx and the targets'
// margins y(k) − y(k*), from the targets y of those states (gather's).
func (s *distillSet) margins(idx []int, y []float32) (cur []int64, m []float32) {
	nS := s.enc.NumSwitches
	cur, m = make([]int64, len(idx)), make([]float32, len(y))
	for j, i := range idx {
		c := s.cur[i]
		cur[j] = int64(c)
		for k := range nS {
			m[j*nS+k] = y[j*nS+k] - y[j*nS+c]
		}
	}
	return cur, m
}

// heldOutFit scores m on every held-out state: the mean squared error per
// row, the share of states whose greedy switch m picks as the targets do,
// and the mean absolute error of the decision margin.
func heldOutFit(m *qnet.Model, sets []*distillSet) (mse, agree, marginErr float64, err error) {
	var rows []float32
	var n, states int
	for _, s := range sets {
		nS := s.enc.NumSwitches
		for from := 0; from < len(s.held); from += 1024 {
			idx := s.held[from:min(from+1024, len(s.held))]
			x, y := s.gather(idx, &rows)
			q := make([]float32, len(y))
			if err := m.ForwardBatch(q, x, len(y)); err != nil {
				return 0, 0, 0, fmt.Errorf("torchq: distill: %w", err)
			}
			for j, i := range idx {
				qs, ys := q[j*nS:(j+1)*nS], y[j*nS:(j+1)*nS]
				for k := range qs {
					d := float64(qs[k] - ys[k])
					mse += d * d
				}
				n += nS
				if argmax(qs) == argmax(ys) {
					agree++
				}
				marginErr += math.Abs(margin(qs, s.cur[i]) - margin(ys, s.cur[i]))
				states++
			}
		}
	}
	return mse / float64(n), agree / float64(states), marginErr / float64(states), nil
}

// margin is max_{k≠cur} q[k] − q[cur].
func margin(q []float32, cur int) float64 {
	best := math.Inf(-1)
	for k, v := range q {
		if k != cur {
			best = max(best, float64(v))
		}
	}
	return best - float64(q[cur])
}
