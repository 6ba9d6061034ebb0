package telemetry

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
)

// randomState returns a state of c's size with random features and the
// flow on switch cur.
func randomState(c EncoderConfig, cur int, r *rand.Rand) proflow.State {
	s := make(proflow.State, c.Dim())
	for i := range s {
		s[i] = r.Float32()
	}
	h := s[c.PlacementOffset():][:c.NumSwitches]
	clear(h)
	h[cur] = 1
	return s
}

// candidateConfig returns a v2 configuration of the given size with the
// testbed's 200 Mbit/s scaling.
func candidateConfig(switches, leaves int) EncoderConfig {
	return EncoderConfig{
		NumSwitches: switches, NumLeaves: leaves, RateScale: 25e6, OverflowScale: 50e3, FlowCountScale: 12,
		IngressScale: 50e6, ThroughputScale: 25e6, DropWindow: 10, Layout: StateLayoutV2, QueueScale: 125e3,
	}
}

func TestEncodeCandidatesRows(t *testing.T) {
	c := candidateConfig(4, 3)
	if got := c.CandidateDim(); got != 41 {
		t.Fatalf("CandidateDim = %d in layout v2, want 41", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	s := randomState(c, 2, r)
	dst := make([]float32, 4*c.CandidateDim())
	if err := c.EncodeCandidates(dst, s); err != nil {
		t.Fatal(err)
	}
	w := c.SwitchWidth()
	own, cur, flag, mean, lo, hi, leaf, flow := candidateOffsets(w)
	sw := func(k, f int) float32 { return s[c.AggOffset(k)+f] }
	for k := range 4 {
		row := dst[k*c.CandidateDim():][:c.CandidateDim()]
		for f := range w {
			if row[own+f] != sw(k, f) || row[cur+f] != sw(2, f) {
				t.Fatalf("row %d feature %d: own %v cur %v, want %v and %v", k, f, row[own+f], row[cur+f], sw(k, f), sw(2, f))
			}
			others := []float32{sw(0, f), sw(1, f), sw(3, f)}
			wantMean := (float64(others[0]) + float64(others[1]) + float64(others[2])) / 3
			if d := float64(row[mean+f]) - wantMean; d > 1e-6 || d < -1e-6 {
				t.Errorf("row %d mean of feature %d = %v, want %v (switches other than the current)", k, f, row[mean+f], wantMean)
			}
			if row[lo+f] != min(others[0], others[1], others[2]) || row[hi+f] != max(others[0], others[1], others[2]) {
				t.Errorf("row %d min/max of feature %d = %v/%v, want over %v", k, f, row[lo+f], row[hi+f], others)
			}
		}
		if want := float32(0); k == 2 && row[flag] != 1 || k != 2 && row[flag] != want {
			t.Errorf("row %d flag %v, want 1 only for the current switch 2", k, row[flag])
		}
		for f := range LeafFeatures {
			l := []float32{s[c.LeafOffset(0)+f], s[c.LeafOffset(1)+f], s[c.LeafOffset(2)+f]}
			if row[leaf+LeafFeatures+f] != max(l[0], l[1], l[2]) {
				t.Errorf("row %d leaf max %d = %v, want max of %v", k, f, row[leaf+LeafFeatures+f], l)
			}
		}
		if diff := cmp.Diff([]float32(s[c.FlowOffset():]), row[flow:]); diff != "" {
			t.Errorf("row %d x_flow (-state +row):\n%s", k, diff)
		}
	}
}

// Permuting the switches of a state permutes its candidate rows alike.
func TestEncodeCandidatesEquivariant(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, size := range [][2]int{{2, 1}, {4, 3}, {6, 3}, {16, 7}, {5, 0}} {
		c := candidateConfig(size[0], size[1])
		nS, w, d := c.NumSwitches, c.SwitchWidth(), c.CandidateDim()
		s := randomState(c, r.IntN(nS), r)
		perm := r.Perm(nS) // switch k of s is switch perm[k] of p
		p := make(proflow.State, len(s))
		copy(p, s)
		for k := range nS {
			copy(p[c.AggOffset(perm[k]):][:w], s[c.AggOffset(k):][:w])
			p[c.PlacementOffset()+perm[k]] = s[c.PlacementOffset()+k]
		}
		a, b := make([]float32, nS*d), make([]float32, nS*d)
		if err := c.EncodeCandidates(a, s); err != nil {
			t.Fatal(err)
		}
		if err := c.EncodeCandidates(b, p); err != nil {
			t.Fatal(err)
		}
		for k := range nS {
			if diff := cmp.Diff(a[k*d:][:d], b[perm[k]*d:][:d]); diff != "" {
				t.Errorf("%dx%d: row %d of the state and row %d of the permuted state differ:\n%s", size[0], size[1], k, perm[k], diff)
			}
		}
	}
}

func TestEncodeCandidatesRefuses(t *testing.T) {
	c := candidateConfig(4, 3)
	good := randomState(c, 1, rand.New(rand.NewPCG(5, 6)))
	dst := make([]float32, 4*c.CandidateDim())
	twoHot := append(proflow.State(nil), good...)
	twoHot[c.PlacementOffset()+3] = 1
	noHot := append(proflow.State(nil), good...)
	noHot[c.PlacementOffset()+1] = 0
	half := append(proflow.State(nil), good...)
	half[c.PlacementOffset()+1] = 0.5
	for name, tc := range map[string]struct {
		dst []float32
		s   proflow.State
	}{
		"short state": {dst, good[:len(good)-1]},
		"short dst":   {dst[:len(dst)-1], good},
		"two-hot":     {dst, twoHot},
		"no switch":   {dst, noHot},
		"not 0 or 1":  {dst, half},
	} {
		if err := c.EncodeCandidates(tc.dst, tc.s); err == nil {
			t.Errorf("%s: EncodeCandidates succeeded, want an error", name)
		}
	}
}

func TestEncodeCandidatesAllocs(t *testing.T) {
	c := candidateConfig(8, 7)
	s := randomState(c, 3, rand.New(rand.NewPCG(7, 8)))
	dst := make([]float32, 8*c.CandidateDim())
	if n := testing.AllocsPerRun(100, func() { _ = c.EncodeCandidates(dst, s) }); n != 0 {
		t.Errorf("EncodeCandidates allocates %v times, want 0", n)
	}
}

func TestScalingMismatch(t *testing.T) {
	a := candidateConfig(4, 3)
	b := candidateConfig(16, 7)
	b.RateScale, b.OverflowScale, b.IngressScale, b.ThroughputScale, b.QueueScale = 4*a.RateScale, 4*a.OverflowScale, 4*a.IngressScale, 4*a.ThroughputScale, 4*a.QueueScale
	if f, _, _, ok := a.ScalingMismatch(b); !ok {
		t.Errorf("a 16x7 fabric at 4x the rate differs in %s, want the same scaling", f)
	}
	c := b
	c.OverflowScale *= 2
	if f, _, _, ok := a.ScalingMismatch(c); ok || f != "encoder.overflow_scale/rate_scale" {
		t.Errorf("doubled overflow scale: field %q ok %v, want encoder.overflow_scale/rate_scale", f, ok)
	}
	d := b.WithLayout(StateLayout)
	if f, _, _, ok := a.ScalingMismatch(d); ok || f != "state_layout" {
		t.Errorf("v1 against v2: field %q ok %v, want state_layout", f, ok)
	}
}

// EncodeCandidatesBatch writes each state's rows as EncodeCandidates does,
// state after state, and names the state that fails.
func TestEncodeCandidatesBatch(t *testing.T) {
	c := candidateConfig(6, 3)
	r := rand.New(rand.NewPCG(9, 10))
	const n = 3
	var states []float32
	for i := range n {
		states = append(states, randomState(c, i, r)...)
	}
	width := c.NumSwitches * c.CandidateDim()
	got := make([]float32, n*width)
	if err := c.EncodeCandidatesBatch(got, states, n); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		want := make([]float32, width)
		if err := c.EncodeCandidates(want, states[i*c.Dim():][:c.Dim()]); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got[i*width:][:width]); diff != "" {
			t.Errorf("state %d: batch rows differ from EncodeCandidates' (-want +got):\n%s", i, diff)
		}
	}
	if err := c.EncodeCandidatesBatch(got, states[:len(states)-1], n); err == nil {
		t.Error("a short state batch was accepted")
	}
	states[c.Dim()+c.PlacementOffset()+5] = 1 // state 1 now marks two switches
	if err := c.EncodeCandidatesBatch(got, states, n); err == nil || !strings.Contains(err.Error(), "state 1") {
		t.Errorf("two-hot state 1: %v, want an error naming state 1", err)
	}
	if a := testing.AllocsPerRun(50, func() { _ = c.EncodeCandidatesBatch(got[:0], states[:0], 0) }); a != 0 {
		t.Errorf("EncodeCandidatesBatch allocates %v times, want 0", a)
	}
}
