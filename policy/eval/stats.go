package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// sampleSD is the standard deviation with n−1 in the denominator.
func sampleSD(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := mean(xs)
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

// quantile returns the q-quantile of xs by linear interpolation between
// order statistics (the "type 7" definition).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	if s[lo] == s[hi] { // no interpolation: also no ∞ − ∞
		return s[lo]
	}
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// checkFinite refuses series of different lengths and non-finite values,
// naming the series and the index.
func checkFinite(names []string, xs ...[]float64) error {
	for k, x := range xs {
		if len(x) != len(xs[0]) {
			return fmt.Errorf("%s has %d values and %s %d, want equal lengths", names[k], len(x), names[0], len(xs[0]))
		}
		for i, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s[%d] is %v, want a finite number", names[k], i, v)
			}
		}
	}
	return nil
}

// bootstrapRatioCI returns a percentile bootstrap confidence interval for
// mean(a)/mean(b) where a[i], b[i] belong to the same scenario: scenarios
// are resampled with replacement, keeping the pairs together. It refuses
// non-finite values, which would poison every resample. A resample whose
// baseline sums to 0 has ratio +∞ when the candidate's does not (so an
// interval's upper end can be +∞: the data do not bound it) and none when
// both are 0.
func bootstrapRatioCI(a, b []float64, level float64, resamples int, rng *rand.Rand) (lo, hi float64, err error) {
	if err := checkFinite([]string{"candidate", "baseline"}, a, b); err != nil {
		return math.NaN(), math.NaN(), fmt.Errorf("bootstrap: %w", err)
	}
	n := len(a)
	if n == 0 || resamples < 1 {
		return math.NaN(), math.NaN(), nil
	}
	ratios := make([]float64, 0, resamples)
	for r := 0; r < resamples; r++ {
		var sa, sb float64
		for i := 0; i < n; i++ {
			j := rng.IntN(n)
			sa += a[j]
			sb += b[j]
		}
		switch {
		case sb > 0:
			ratios = append(ratios, sa/sb)
		case sa > 0:
			ratios = append(ratios, math.Inf(1))
		}
	}
	alpha := (1 - level) / 2
	return quantile(ratios, alpha), quantile(ratios, 1-alpha), nil
}

// pairedT is a two-sided paired t-test of a against b.
type pairedT struct {
	N        int
	MeanDiff float64 // mean(a−b)
	T        float64
	P        float64
}

// pairedTTest refuses non-finite values, which make t and p meaningless.
func pairedTTest(a, b []float64) (pairedT, error) {
	if err := checkFinite([]string{"candidate", "baseline"}, a, b); err != nil {
		return pairedT{T: math.NaN(), P: math.NaN(), MeanDiff: math.NaN()}, fmt.Errorf("paired t-test: %w", err)
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	res := pairedT{N: len(d), MeanDiff: mean(d), T: math.NaN(), P: math.NaN()}
	if len(d) < 2 {
		return res, nil
	}
	sd := sampleSD(d)
	if sd == 0 {
		if res.MeanDiff == 0 {
			res.T, res.P = 0, 1
		} else {
			res.T, res.P = math.Copysign(math.Inf(1), res.MeanDiff), 0
		}
		return res, nil
	}
	res.T = res.MeanDiff / (sd / math.Sqrt(float64(len(d))))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}
	res.P = 2 * dist.Survival(math.Abs(res.T))
	return res, nil
}

// tInterval returns the mean of xs and its two-sided t confidence interval.
// It refuses non-finite values.
func tInterval(xs []float64, level float64) (m, lo, hi float64, err error) {
	if err := checkFinite([]string{"values"}, xs); err != nil {
		return math.NaN(), math.NaN(), math.NaN(), fmt.Errorf("t interval: %w", err)
	}
	m = mean(xs)
	if len(xs) < 2 {
		return m, math.NaN(), math.NaN(), nil
	}
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}
	half := dist.Quantile(1-(1-level)/2) * sampleSD(xs) / math.Sqrt(float64(len(xs)))
	return m, m - half, m + half, nil
}
