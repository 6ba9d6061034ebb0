//go:build torch

package torchq

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/training"
)

// sizedEncoder is the paper's encoder resized to switches and leaves: the
// same scaling, so one universal model reads both.
func sizedEncoder(switches, leaves int) telemetry.EncoderConfig {
	enc := paperEncoder()
	enc.NumSwitches, enc.NumLeaves = switches, leaves
	return enc
}

// universalConfig is smokeConfig for a universal Q-network.
func universalConfig() training.TrainConfig {
	c := smokeConfig()
	c.Universal = true
	return c
}

// twoFabrics returns toy datasets of 4 switches and 3 leaves and of 6
// switches and 2 leaves.
func twoFabrics(t testing.TB, episodes, steps int) []*training.Dataset {
	return []*training.Dataset{
		toyDatasetOf(t, sizedEncoder(4, 3), episodes, steps, 21),
		toyDatasetOf(t, sizedEncoder(6, 2), episodes, steps, 22),
	}
}

// TestUniversalTwoFabrics trains one universal Q-network on datasets of two
// fabric sizes: it learns the clean switch on both and on a size it never
// saw, its exported pure-Go network (qnet, row by row through
// EncodeCandidates) gives libtorch's Q-values, and each size has its own
// dynamics model.
func TestUniversalTwoFabrics(t *testing.T) {
	dss := twoFabrics(t, 40, 10)
	cfg := universalConfig()
	var progress bytes.Buffer
	tr, err := NewMultiTrainer(cfg, []telemetry.EncoderConfig{dss[0].Encoder, dss[1].Encoder}, &progress)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rep, err := tr.RunMulti(context.Background(), dss)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		t.Log(line)
	}
	if got := tr.QNetwork().Sizes(); !cmp.Equal(got, []int{paperEncoder().CandidateDim(), 64, 64, 1}) {
		t.Errorf("Q-network sizes %v, want [CandidateDim 64 64 1]", got)
	}
	if len(rep.Fabrics) != 2 || rep.Fabrics[1].Encoder != dss[1].Encoder || len(rep.Fabrics[1].Dynamics) != cfg.DynamicsEpochs {
		t.Errorf("fabric reports %+v, want one per dataset with %d dynamics epochs", rep.Fabrics, cfg.DynamicsEpochs)
	}
	last := rep.Dyna[len(rep.Dyna)-1]
	if len(last.Fabrics) != 2 || rep.FQI[len(rep.FQI)-1].Loss > 0.5*rep.FQI[0].Loss || last.Synthetic == 0 {
		t.Errorf("FQI loss %.5f -> %.5f, last Dyna epoch %+v: want the loss halved, synthetic rows and two fabric figures",
			rep.FQI[0].Loss, rep.FQI[len(rep.FQI)-1].Loss, last)
	}
	for _, want := range []string{"stage 1: dynamics model 6x2 [50 64 64 44]", "dynamics 4x3 epoch 15/15", "; by fabric: 4x3 held-out "} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q", want)
		}
	}

	// Export, and read back as a controller would.
	model, err := tr.QModel()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "universal.safetensors")
	if err := qnet.Save(path, model, qnet.NewUniversalMetadata(dss[0].Encoder)); err != nil {
		t.Fatal(err)
	}
	loaded, meta, err := qnet.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Universal() {
		t.Fatalf("metadata %+v is not universal", meta)
	}
	goQ := func(enc telemetry.EncoderConfig) func(s []float32) []float32 {
		rows := make([]float32, enc.NumSwitches*enc.CandidateDim())
		q := make([]float32, enc.NumSwitches)
		return func(s []float32) []float32 {
			if err := enc.EncodeCandidates(rows, s); err != nil {
				t.Fatal(err)
			}
			for k := range q {
				if err := loaded.Forward(q[k:k+1], rows[k*enc.CandidateDim():][:enc.CandidateDim()]); err != nil {
					t.Fatal(err)
				}
			}
			return q
		}
	}
	unseen := sizedEncoder(3, 5)
	for _, enc := range []telemetry.EncoderConfig{dss[0].Encoder, dss[1].Encoder, unseen} {
		held := toyDatasetOf(t, enc, 10, 10, 99)
		want, err := tr.QValues(enc, held.S)
		if err != nil {
			t.Fatal(err)
		}
		q, dim, nS := goQ(enc), enc.Dim(), enc.NumSwitches
		var worst float64
		for i := range held.Len() {
			for k, v := range q(held.S[i*dim:][:dim]) {
				worst = max(worst, math.Abs(float64(v-want[i*nS+k])))
			}
		}
		t.Logf("%s: max abs diff between libtorch and pure-Go Q-values on %d states: %.3g", training.FabricName(enc), held.Len(), worst)
		if worst > 1e-5 {
			t.Errorf("%s: max abs diff %.3g, want <= 1e-5", training.FabricName(enc), worst)
		}
		// On the unseen size, better than chance is enough.
		least := 0.9
		if enc == unseen {
			least = 0.6
		}
		checkGreedyClean(t, enc, least, q)
	}

	dyn, err := tr.DynamicsModels()
	if err != nil {
		t.Fatal(err)
	}
	if len(dyn) != 2 || dyn[1].Encoder() != dss[1].Encoder || dyn[1].Net().InputDim() != dss[1].Dim()+6 {
		t.Errorf("dynamics models %v, want one per fabric", dyn)
	}
}

// A universal Q-network is equivariant in the switches: relabelling the
// switches of a state relabels its Q-values alike.
func TestUniversalEquivariant(t *testing.T) {
	enc := sizedEncoder(6, 2)
	tr, err := NewTrainer(universalConfig(), enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ds := toyDatasetOf(t, enc, 5, 10, 3)
	if _, err := tr.FitQ(context.Background(), ds, ds.Subset(nil)); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	dim, nS := enc.Dim(), enc.NumSwitches
	permuted := make([]float32, len(ds.S))
	perms := make([][]int, ds.Len())
	for i := range ds.Len() {
		perms[i] = rng.Perm(nS)
		if err := training.PermuteState(enc, permuted[i*dim:][:dim], ds.S[i*dim:][:dim], perms[i]); err != nil {
			t.Fatal(err)
		}
	}
	q, err := tr.QValues(enc, ds.S)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := tr.QValues(enc, permuted)
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for i, p := range perms {
		for k := range nS {
			worst = max(worst, math.Abs(float64(q[i*nS+k]-qp[i*nS+p[k]])))
		}
	}
	// Only the order of the pooling sums changes.
	t.Logf("max abs diff between Q(s, k) and Q(πs, πk) on %d states: %.3g", ds.Len(), worst)
	if worst > 1e-5 {
		t.Errorf("max abs diff between Q(s, k) and Q(πs, πk) %.3g, want <= 1e-5", worst)
	}
}

// The same seed and datasets give bit-identical weights, Q-network and
// every dynamics model; another seed other weights.
func TestUniversalDeterministic(t *testing.T) {
	dss := twoFabrics(t, 8, 8)
	cfg := universalConfig()
	cfg.DynamicsEpochs, cfg.FQIEpochs, cfg.DynaEpochs = 2, 3, 2
	weights := func(seed uint64) [][]qnet.Layer {
		c := cfg
		c.Seed = seed
		res, err := TrainMulti(context.Background(), dss, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		nets := []*qnet.Model{res.Q}
		for _, d := range res.FabricDynamics {
			nets = append(nets, d.Net())
		}
		var all [][]qnet.Layer
		for _, m := range nets {
			var ls []qnet.Layer
			for l := range m.NumLayers() {
				ls = append(ls, m.Layer(l))
			}
			all = append(all, ls)
		}
		return all
	}
	a, b, other := weights(11), weights(11), weights(12)
	if len(a) != 3 {
		t.Fatalf("%d networks, want the Q-network and two dynamics models", len(a))
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs with seed 11 differ:\n%.2000s", diff)
	}
	if cmp.Equal(a[0], other[0]) {
		t.Error("seeds 11 and 12 gave identical Q-networks")
	}
}

// Datasets that one run cannot learn from together are refused with the
// reason (training.CheckFabrics, whose test has every case).
func TestUniversalRefuses(t *testing.T) {
	a := sizedEncoder(4, 3)
	v2 := sizedEncoder(8, 3)
	v2.Layout, v2.QueueScale = telemetry.StateLayoutV2, a.RateScale/10
	scaled := sizedEncoder(6, 3)
	scaled.FlowCountScale *= 2
	_, err := NewMultiTrainer(universalConfig(), []telemetry.EncoderConfig{a, sizedEncoder(2, 3), v2}, nil)
	if want := "dataset 3 (fabric 8x3) has state_layout proflow-state-v2, dataset 1 (fabric 4x3) proflow-state-v1"; !errors.Is(err, training.ErrScalingMismatch) || !strings.Contains(err.Error(), want) {
		t.Errorf("mixed layouts: %v, want ErrScalingMismatch containing %q", err, want)
	}
	if _, err := NewMultiTrainer(smokeConfig(), []telemetry.EncoderConfig{a, scaled}, nil); !errors.Is(err, training.ErrNotUniversal) {
		t.Errorf("two fabrics, not universal: %v, want ErrNotUniversal", err)
	}

	dss := twoFabrics(t, 3, 4)
	tr, err := NewMultiTrainer(universalConfig(), []telemetry.EncoderConfig{dss[0].Encoder, dss[1].Encoder}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, c := range []struct {
		name string
		dss  []*training.Dataset
		want string
	}{
		{"swapped", []*training.Dataset{dss[1], dss[0]}, "dataset 1 (fabric 4x3): dataset encoded with"},
		{"one", dss[:1], "1 datasets, trainer built for 2 (fabrics 4x3, 6x2)"},
	} {
		if _, err := tr.RunMulti(context.Background(), c.dss); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := tr.QValues(scaled, make([]float32, scaled.Dim())); !errors.Is(err, training.ErrScalingMismatch) {
		t.Errorf("QValues with another scaling: %v, want ErrScalingMismatch", err)
	}
}

// TestUniversalMonotone trains the same universal Q-network with and
// without TrainConfig.Monotone on a toy corpus where the cleanest switch
// also carries the most flow-table entries, so that a plain fit learns to
// prefer destinations with more flows, and counts, on fresh states, the
// destination rows that score higher once their flow count is raised: the
// penalty must make them rare where the plain fit leaves many.
func TestUniversalMonotone(t *testing.T) {
	ds := toyDatasetOf(t, sizedEncoder(4, 3), 40, 10, 31)
	enc := ds.Encoder
	// More flows where there is less overflow: n = 1 − ξ on every switch.
	crowdClean := func(states []float32) {
		for i := 0; i < len(states); i += enc.Dim() {
			for k := range enc.NumSwitches {
				o := enc.AggOffset(k)
				states[i+o+telemetry.FeatureFlowCount] = 1 - states[i+o+telemetry.FeatureOverflow]
			}
		}
	}
	crowdClean(ds.S)
	crowdClean(ds.S2)
	violations := func(monotone float64) float64 {
		cfg := universalConfig()
		cfg.Monotone = monotone
		cfg.DynaEpochs, cfg.FQIEpochs = 0, 20
		tr, err := NewTrainer(cfg, enc, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if _, err := tr.Run(context.Background(), ds); err != nil {
			t.Fatal(err)
		}
		m, err := tr.QModel()
		if err != nil {
			t.Fatal(err)
		}
		dim, w := enc.CandidateDim(), enc.SwitchWidth()
		rows := make([]float32, enc.NumSwitches*dim)
		raised := make([]float32, dim)
		var q, qr [1]float32
		rng := rand.New(rand.NewPCG(77, 1))
		var bad, n int
		for range 200 {
			s := toyState(enc, toyOverflow(rng, rng.IntN(4), 4), rng.IntN(4))
			crowdClean(s)
			if err := enc.EncodeCandidates(rows, s); err != nil {
				t.Fatal(err)
			}
			for k := range enc.NumSwitches {
				row := rows[k*dim:][:dim]
				if row[2*w] != 0 { // the current switch's row
					continue
				}
				copy(raised, row)
				raised[telemetry.FeatureFlowCount] = min(1, raised[telemetry.FeatureFlowCount]+0.3)
				if err := m.Forward(q[:], row); err != nil {
					t.Fatal(err)
				}
				if err := m.Forward(qr[:], raised); err != nil {
					t.Fatal(err)
				}
				if qr[0] > q[0]+1e-3 {
					bad++
				}
				n++
			}
		}
		return float64(bad) / float64(n)
	}
	plain, mono := violations(0), violations(5)
	t.Logf("destinations scoring higher when more congested: %.1f%% without the penalty, %.1f%% with it", 100*plain, 100*mono)
	if mono > 0.05 || mono > plain/2 {
		t.Errorf("with the penalty %.1f%% of destinations score higher when more congested (without: %.1f%%), want at most 5%% and at most half", 100*mono, 100*plain)
	}
}

// dominatedPenalty marks the destinations another switch (not the current
// one) beats on every compared feature, and nothing else: not the current
// switch, not a destination that ties another, not one that the current
// switch alone beats.
func TestDominatedPenalty(t *testing.T) {
	enc := sizedEncoder(4, 3)
	s := make([]float32, enc.Dim())
	set := func(k int, tx, ovf, n, el float32) {
		o := enc.AggOffset(k)
		s[o+telemetry.FeatureTxRate], s[o+telemetry.FeatureOverflow] = tx, ovf
		s[o+telemetry.FeatureFlowCount], s[o+telemetry.FeatureElephant] = n, el
	}
	s[enc.PlacementOffset()+0] = 1
	set(0, 0, -0.5, -0.1, 0) // the flow's own: lower than all, but no yardstick
	set(1, 0.1, 0, 0.2, 0)   // beats 2
	set(2, 0.9, 0.3, 0.5, 1) // dominated by 1 and 3
	set(3, 0.1, 0, 0.2, 0)   // ties 1: neither dominated
	got := dominatedPenalty(enc, s, 1)
	for k, want := range []bool{false, false, true, false} {
		if (got[k] < 0) != want {
			t.Errorf("switch %d: penalty %v, want marked %v", k, got[k], want)
		}
	}
}
