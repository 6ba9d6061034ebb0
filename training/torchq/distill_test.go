//go:build torch

package torchq

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/training"
)

// TestDistillFitsTheTeachersMean distils two random universal networks
// into one on the toy datasets of two fabric sizes: on fresh states of a
// third size, the student's decision margins follow the teachers' mean
// far closer than either teacher alone does.
func TestDistillFitsTheTeachersMean(t *testing.T) {
	dss := twoFabrics(t, 40, 10)
	in := dss[0].Encoder.CandidateDim()
	var teachers []*qnet.Model
	for i := range 2 {
		m, err := qnet.New([]int{in, 32, 32, 1}, rand.New(rand.NewPCG(uint64(10+i), 1)))
		if err != nil {
			t.Fatal(err)
		}
		teachers = append(teachers, m)
	}
	cfg := DefaultDistillConfig()
	cfg.Hidden, cfg.Epochs, cfg.BatchSize, cfg.LearningRate, cfg.HeldOut = []int{64, 64}, 60, 32, 3e-3, 0.2
	var progress bytes.Buffer
	student, report, err := Distill(context.Background(), cfg, teachers, dss, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if got := student.Sizes(); len(got) != 4 || got[0] != in || got[1] != 64 || got[3] != 1 {
		t.Errorf("student sizes %v, want [%d 64 64 1]", got, in)
	}
	if len(report) != cfg.Epochs || !strings.Contains(progress.String(), "distill epoch 60/60: ") {
		t.Errorf("%d epoch reports, progress\n%s\nwant %d", len(report), progress.String(), cfg.Epochs)
	}
	first, last := report[0], report[len(report)-1]
	t.Logf("first epoch %+v, last %+v", first, last)
	if last.HeldOutLoss > 0.1*first.HeldOutLoss || last.Agreement < 0.9 {
		t.Errorf("held-out loss %.5f -> %.5f, agreement %.3f: want the loss cut tenfold and agreement >= 0.9",
			first.HeldOutLoss, last.HeldOutLoss, last.Agreement)
	}

	// An independent check on a fabric size the student never saw.
	enc := sizedEncoder(5, 3)
	rng := rand.New(rand.NewPCG(77, 1))
	var errStudent, errTeacher float64
	const n = 300
	for range n {
		nS := enc.NumSwitches
		clean, cur := rng.IntN(nS), rng.IntN(nS)
		rows := make([]float32, nS*in)
		if err := enc.EncodeCandidates(rows, toyState(enc, toyOverflow(rng, clean, nS), cur)); err != nil {
			t.Fatal(err)
		}
		score := func(m *qnet.Model) []float32 {
			q := make([]float32, nS)
			if err := m.ForwardBatch(q, rows, nS); err != nil {
				t.Fatal(err)
			}
			return q
		}
		a, b, s := score(teachers[0]), score(teachers[1]), score(student)
		mean := make([]float32, nS)
		for k := range mean {
			mean[k] = (a[k] + b[k]) / 2
		}
		errStudent += math.Abs(margin(s, cur)-margin(mean, cur)) / n
		errTeacher += math.Abs(margin(a, cur)-margin(mean, cur)) / n
	}
	t.Logf("mean absolute margin error against the teachers' mean on 5x3: student %.4f, one teacher %.4f", errStudent, errTeacher)
	if errStudent > 0.5*errTeacher {
		t.Errorf("student's margin error %.4f, want at most half of one teacher's %.4f", errStudent, errTeacher)
	}
}

func TestDistillRefuses(t *testing.T) {
	dss := twoFabrics(t, 4, 5)
	in := dss[0].Encoder.CandidateDim()
	good, _ := qnet.New([]int{in, 8, 1}, rand.New(rand.NewPCG(1, 1)))
	wide, _ := qnet.New([]int{in + 1, 8, 1}, rand.New(rand.NewPCG(1, 1)))
	two, _ := qnet.New([]int{in, 8, 2}, rand.New(rand.NewPCG(1, 1)))
	bad := func(f func(*DistillConfig)) DistillConfig {
		c := DefaultDistillConfig()
		c.Epochs = 1
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name     string
		cfg      DistillConfig
		teachers []*qnet.Model
		data     []*training.Dataset
		want     string
	}{
		{"no teachers", bad(func(*DistillConfig) {}), nil, dss, "at least one teacher"},
		{"no data", bad(func(*DistillConfig) {}), []*qnet.Model{good}, nil, "at least one teacher and one dataset"},
		{"teacher input", bad(func(*DistillConfig) {}), []*qnet.Model{good, wide}, dss, "teacher 2 maps"},
		{"teacher outputs", bad(func(*DistillConfig) {}), []*qnet.Model{two}, dss, "want a universal network"},
		{"epochs", bad(func(c *DistillConfig) { c.Epochs = 0 }), []*qnet.Model{good}, dss, "epochs 0"},
		{"learning rate", bad(func(c *DistillConfig) { c.LearningRate = math.NaN() }), []*qnet.Model{good}, dss, "learning rate NaN"},
		{"margin weight", bad(func(c *DistillConfig) { c.MarginWeight = -1 }), []*qnet.Model{good}, dss, "margin weight -1"},
		{"held out", bad(func(c *DistillConfig) { c.HeldOut = 0.6 }), []*qnet.Model{good}, dss, "held-out share 0.6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Distill(context.Background(), tc.cfg, tc.teachers, tc.data, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Distill = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// Distill holds out whole episodes, as the Q-network's training does
// (training.Dataset.Split): the states of one episode, a few hundred
// milliseconds apart and alike, are all fitted or all held out, so the
// held-out figures measure the student on episodes it never saw. A
// dataset of one episode cannot be split.
func TestDistillHoldsOutEpisodes(t *testing.T) {
	dss := twoFabrics(t, 20, 10)
	in := dss[0].Encoder.CandidateDim()
	teacher, err := qnet.New([]int{in, 8, 1}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	sets, err := distillTargets([]*qnet.Model{teacher}, dss, 0.2, rand.New(rand.NewPCG(1, streamDistill)))
	if err != nil {
		t.Fatal(err)
	}
	for d, s := range sets {
		part := map[int32]string{}
		for name, idx := range map[string][]int{"fitted": s.train, "held out": s.held} {
			for _, i := range idx {
				e := dss[d].Episode[i]
				if p, ok := part[e]; ok && p != name {
					t.Errorf("dataset %d: episode %d has states both fitted and held out", d+1, e)
				}
				part[e] = name
			}
		}
		var held int
		for _, p := range part {
			if p == "held out" {
				held++
			}
		}
		if n := len(s.train) + len(s.held); n != dss[d].Len() || held != 4 {
			t.Errorf("dataset %d: %d states split, %d of 20 episodes held out; want all %d states and 4 episodes (20%%)", d+1, n, held, dss[d].Len())
		}
	}
	one := []*training.Dataset{toyDatasetOf(t, sizedEncoder(4, 3), 1, 10, 21)}
	if _, err := distillTargets([]*qnet.Model{teacher}, one, 0.2, rand.New(rand.NewPCG(1, 1))); err == nil ||
		err.Error() != "torchq: distill: dataset 1 holds 1 episode, want at least 2 to hold out whole episodes" {
		t.Errorf("distillTargets on one episode = %v, want it refused", err)
	}
}
