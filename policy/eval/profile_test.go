package eval

import (
	"math"
	"strings"
	"testing"
)

func TestBand(t *testing.T) {
	n := math.NaN()
	for _, tc := range []struct {
		b    Band
		v    float64
		in   bool
		miss float64
	}{
		{Band{10, 20}, 15, true, 0},
		{Band{10, 20}, 10, true, 0},
		{Band{10, 20}, 25, false, 0.5},
		{Band{10, 20}, 0, false, 1},
		{Band{10, 20}, n, false, 1},
		{Band{n, 2}, 1, true, 0},
		{Band{n, 2}, 3, false, 0.5},
		{Band{8, n}, 4, false, 0.5},
		{Band{0, 0}, 0, true, 0},
		{Band{0, 0}, 0.5, false, 1},
	} {
		if got := tc.b.In(tc.v); got != tc.in {
			t.Errorf("%v.In(%v) = %v, want %v", tc.b, tc.v, got, tc.in)
		}
		if got := tc.b.miss(tc.v); math.Abs(got-tc.miss) > 1e-9 {
			t.Errorf("%v.miss(%v) = %v, want %v", tc.b, tc.v, got, tc.miss)
		}
	}
}

// TestJudge: observables inside every band score 0; moving one out of its
// band fails exactly that verdict, and Failed names it.
func TestJudge(t *testing.T) {
	o := &ProfileObservables{
		Profile: "p", Digest: "sha256:x", AloneRate: 0.92,
		Self:       &ThresholdReport{Mean: 23000, P95: 26000, Lowest: 27000, Curve: []ThresholdPoint{{Threshold: 27000}}},
		Precursor:  []PrecursorTiming{{Scenario: "S1", CountRise: 0.5, Healthy: 12, Onset: 15}},
		StaticMean: 5e6, RecoveryHealthy: []float64{10}, RecoveryCollapsed: []float64{12},
		ReactiveFirst:    map[string][]float64{"S6": {math.NaN(), math.NaN(), math.NaN()}},
		ReactiveOverflow: []float64{32000}, ReactiveMean: 10e6, OracleMean: 20e6,
		C1EndRatio: 1, C1BelowThreshold: 0.9,
	}
	for _, sc := range reactiveTimed {
		o.ReactiveFirst[sc] = []float64{50, 55, 60}
	}
	vs := o.Judge(TestbedTargets())
	if s := Score(vs); s != 0 {
		t.Fatalf("score %v for observables inside every band, want 0: %v", s, Failed(vs))
	}
	o.ReactiveMean, o.OracleMean = 14e6, 25e6 // the oracle's headroom still holds
	vs = o.Judge(TestbedTargets())
	err := Failed(vs)
	if err == nil || !strings.Contains(err.Error(), "reactive mean") || strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("Failed = %v, want exactly the reactive mean", err)
	}
	if s := Score(vs); !(s > 0) {
		t.Errorf("score %v with one observable out, want > 0", s)
	}
	// C1 is reported, not scored, unless required.
	o.ReactiveMean, o.OracleMean = 10e6, 20e6
	if s := Score(o.Judge(TestbedTargets())); s != 0 {
		t.Errorf("C1 (reported only) moved the score to %v", s)
	}
	tg := TestbedTargets()
	tg.RequireC1 = true
	if s := Score(o.Judge(tg)); !(s > 0) {
		t.Errorf("C1 required: score %v, want > 0 (C1 does not hurt here)", s)
	}
	var b strings.Builder
	if err := WriteVerdicts(&b, o, o.Judge(tg)); err != nil || !strings.Contains(b.String(), "| MISS |") {
		t.Errorf("WriteVerdicts: %v\n%s", err, b.String())
	}
}
