package sim_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Calibration of the default configuration against the paper's testbed
// (package documentation, "Calibration"). Run with -v to see the measured
// numbers.

var calibrationSeeds = []uint64{1, 2, 3, 4, 5}

// The reactive baseline's rule (paper §V-A e, App. E): ξ above 27,000 B/s
// on three consecutive samples.
const (
	reactiveThreshold   = 27000
	reactiveConsecutive = 3
)

// sample is one interval of an episode as the controller sees it (noisy)
// plus the ground-truth throughput.
type sample struct {
	t       float64 // seconds since congestion start
	current int
	obs     proflow.Observation
	phi     float64 // true protected-flow throughput
}

// runStatic runs a scenario with the protected flow never moved and returns
// every interval.
func runStatic(t testing.TB, sc *sim.Scenario, seed uint64) []sample {
	t.Helper()
	return runStaticConfig(t, sim.DefaultConfig(), sc, seed)
}

// baseline is the mean true throughput over the 10 s before congestion.
func baseline(ss []sample) float64 {
	sum, n := 0.0, 0
	for _, s := range ss {
		if s.t > -10 && s.t <= 0 {
			sum += s.phi
			n++
		}
	}
	return sum / float64(n)
}

// reactiveFires returns the time of the first sample at which the reactive
// rule holds on the flow's switch, at or after from, and the overflow that
// sample reads; NaN if never.
func reactiveFires(ss []sample, from float64) (at, xi float64) {
	run := 0
	for _, s := range ss {
		if s.t < from {
			continue
		}
		if s.obs.Switches[s.current].OverflowRate > reactiveThreshold {
			run++
		} else {
			run = 0
		}
		if run >= reactiveConsecutive {
			return s.t, s.obs.Switches[s.current].OverflowRate
		}
	}
	return math.NaN(), math.NaN()
}

func percentile(xs []float64, p float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// TestCalibrationAlone checks (a) and (b): the protected flow alone runs at
// 85–95% of the bucket rate, and its self-induced overflow has the paper's
// distribution (App. E: mean 23,093 B/s, 95th percentile 26,002, spikes to
// 28,336) with no false alarm of the reactive rule.
func TestCalibrationAlone(t *testing.T) {
	cfg := sim.DefaultConfig()
	sc := &sim.Scenario{Name: "alone", ProtectedSwitch: "agg1", CongestionStart: sim.Duration(60 * time.Second), Window: sim.Duration(time.Second)}
	var xis, phis []float64
	for _, seed := range calibrationSeeds {
		ss := runStatic(t, sc, seed)
		ss = slices.DeleteFunc(ss, func(s sample) bool { return s.t < -57 }) // 3 s of TCP ramp-up
		if at, _ := reactiveFires(ss, math.Inf(-1)); !math.IsNaN(at) {
			t.Errorf("seed %d: the reactive rule false-alarms on the flow's own overflow at t=%.1fs", seed, at)
		}
		for _, s := range ss {
			xis = append(xis, s.obs.Switches[0].OverflowRate)
			phis = append(phis, s.phi)
		}
	}
	rate := mean(phis) / cfg.BucketRate
	m, p95, top := mean(xis), percentile(xis, 0.95), slices.Max(xis)
	t.Logf("(a) protected flow alone: %.1f%% of the bucket rate (%.2f MB/s goodput)", 100*rate, mean(phis)/1e6)
	t.Logf("(b) self-induced overflow over %d samples: mean %.0f B/s, p5 %.0f, median %.0f, p95 %.0f, max %.0f (paper: 23,093 / 26,002 / 28,336)",
		len(xis), m, percentile(xis, 0.05), percentile(xis, 0.5), p95, top)
	if rate < 0.85 || rate > 0.95 {
		t.Errorf("(a) the flow alone runs at %.1f%% of the bucket rate, want 85–95%%", 100*rate)
	}
	if m < 20000 || m > 26000 {
		t.Errorf("(b) mean self-induced overflow %.0f B/s, want about 23,000 (20,000–26,000)", m)
	}
	if p95 < 24000 || p95 > 28000 {
		t.Errorf("(b) 95th percentile %.0f B/s, want about 26,000 (24,000–28,000)", p95)
	}
	if top < 27000 || top > 31000 {
		t.Errorf("(b) largest sample %.0f B/s, want rare spikes about 28,000 (27,000–31,000)", top)
	}
}

// s1Timeline is what TestCalibrationS1 measures per seed.
type s1Timeline struct {
	countRise   float64 // first sample with the flow count on k* above its pre-congestion value
	precursor   float64 // end of the precursor window: φ ≥ 80% of baseline and the reactive rule silent
	onset       float64 // first sample below 50% of baseline
	afterMean   float64 // mean φ/φ0 from onset+1 s to the end
	afterP95    float64 // 95th percentile of φ/φ0 over the same span
	xiBefore    float64 // mean ξ on k* over the precursor
	xiAfter     float64 // mean ξ on k* from onset+2 s to the end
	reactiveAt  float64 // when the reactive rule would first hold (static run)
	reactiveXi  float64 // ξ on k* at that sample
	countBefore float64
	countAfter  float64
}

func measureS1(t testing.TB, name string, seed uint64) s1Timeline {
	sc, err := sim.BuiltinScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	ss := runStatic(t, sc, seed)
	phi0 := baseline(ss)
	k := ss[0].current
	tl := s1Timeline{countRise: math.NaN(), onset: math.NaN()}
	var xiBefore, xiAfter, after []float64
	run := 0
	precursorOpen := true
	for _, s := range ss {
		if s.t <= 0 {
			tl.countBefore = s.obs.Switches[k].FlowCount
			continue
		}
		if math.IsNaN(tl.countRise) && s.obs.Switches[k].FlowCount > tl.countBefore {
			tl.countRise = s.t
			tl.countAfter = s.obs.Switches[k].FlowCount
		}
		if s.obs.Switches[k].OverflowRate > reactiveThreshold {
			run++
		} else {
			run = 0
		}
		if precursorOpen && (s.phi < 0.8*phi0 || run >= reactiveConsecutive) {
			precursorOpen = false
			tl.precursor = s.t - 0.5
		}
		if precursorOpen {
			xiBefore = append(xiBefore, s.obs.Switches[k].OverflowRate)
		}
		if math.IsNaN(tl.onset) && s.phi < 0.5*phi0 {
			tl.onset = s.t
		}
		if !math.IsNaN(tl.onset) && s.t >= tl.onset+1 {
			after = append(after, s.phi/phi0)
		}
		if !math.IsNaN(tl.onset) && s.t >= tl.onset+2 {
			xiAfter = append(xiAfter, s.obs.Switches[k].OverflowRate)
		}
	}
	if precursorOpen {
		tl.precursor = ss[len(ss)-1].t
	}
	tl.xiBefore = mean(xiBefore)
	if len(after) > 0 {
		tl.afterMean, tl.afterP95 = mean(after), percentile(after, 0.95)
		tl.xiAfter = mean(xiAfter)
	}
	tl.reactiveAt, tl.reactiveXi = reactiveFires(ss, 0)
	return tl
}

// TestCalibrationS1 checks (c): in S1 under the static policy the flow count
// on k* rises within 2 s of congestion start; the overflow stays below the
// reactive threshold and the protected flow at ≥ 80% of its baseline for a
// precursor window of at least 8 s; degradation (below 50%) begins 10–25 s
// after congestion start; afterwards the flow stays below 30% of baseline.
// It also checks what the mechanism gives for (d): once the bucket is
// exhausted the overflow on k* sits at the saturated level the paper
// reports at reactive reroutes (~32,000 B/s), so the reactive rule holds
// only after the flow has degraded.
func TestCalibrationS1(t *testing.T) {
	var lines []string
	for _, seed := range calibrationSeeds {
		tl := measureS1(t, "S1", seed)
		lines = append(lines, fmt.Sprintf("seed %d: n_k* %0.f→%0.f at %.1fs, precursor %.1fs (ξ mean %.0f), degradation at %.1fs, afterwards φ/φ0 mean %.3f p95 %.3f, ξ after %.0f, reactive rule holds at %.1fs",
			seed, tl.countBefore, tl.countAfter, tl.countRise, tl.precursor, tl.xiBefore, tl.onset, tl.afterMean, tl.afterP95, tl.xiAfter, tl.reactiveAt))
		if !(tl.countRise <= 2) {
			t.Errorf("seed %d: flow count on k* rose at %.1fs, want within 2 s", seed, tl.countRise)
		}
		if tl.countBefore != 2 || tl.countAfter != 12 {
			t.Errorf("seed %d: flow count on k* %v before and %v after congestion, want 2 and 12 (App. G counting)", seed, tl.countBefore, tl.countAfter)
		}
		if tl.precursor < 8 {
			t.Errorf("seed %d: precursor window %.1fs, want at least 8 s", seed, tl.precursor)
		}
		if tl.xiBefore >= reactiveThreshold {
			t.Errorf("seed %d: mean overflow %.0f B/s during the precursor, want below the reactive threshold", seed, tl.xiBefore)
		}
		if !(tl.onset >= 10 && tl.onset <= 25) {
			t.Errorf("seed %d: degradation began at %.1fs, want 10–25 s after congestion start", seed, tl.onset)
		}
		if tl.afterMean >= 0.3 || tl.afterP95 >= 0.3 {
			t.Errorf("seed %d: after degradation static runs at mean %.2f, p95 %.2f of baseline, want under 0.3", seed, tl.afterMean, tl.afterP95)
		}
		if tl.xiAfter < 30000 {
			t.Errorf("seed %d: overflow after exhaustion %.0f B/s, want the saturated level ≥ 30,000", seed, tl.xiAfter)
		}
		if !(tl.reactiveAt >= tl.onset-0.5) {
			t.Errorf("seed %d: the reactive rule holds at %.1fs, before the flow degrades at %.1fs", seed, tl.reactiveAt, tl.onset)
		}
	}
	t.Log("(c) S1, static policy:\n" + strings.Join(lines, "\n"))
}

// TestCalibrationReactiveS1toS5 measures when the reactive rule first holds
// in S1–S5 (static runs) and what ξ reads then. The mechanism makes it hold
// once the bucket of k* is exhausted, at the saturated overflow level; the
// test requires that and logs the times. The paper's reactive baseline
// fires 30–107 s after congestion start; the package documentation explains
// why this model cannot delay it without breaking the calibration (a)–(c).
func TestCalibrationReactiveS1toS5(t *testing.T) {
	var lines []string
	for _, name := range []string{"S1", "S2", "S3", "S4", "S5"} {
		var at, onset, xi []string
		for _, seed := range calibrationSeeds[:3] {
			tl := measureS1(t, name, seed)
			if math.IsNaN(tl.reactiveAt) {
				t.Errorf("%s seed %d: the reactive rule never holds, want it to once the bucket is exhausted", name, seed)
			}
			if !(tl.reactiveAt >= tl.onset-0.5) {
				t.Errorf("%s seed %d: the reactive rule holds at %.1fs, before degradation at %.1fs", name, seed, tl.reactiveAt, tl.onset)
			}
			if !(tl.reactiveXi >= 30000 && tl.reactiveXi <= 37000) {
				t.Errorf("%s seed %d: ξ at the reactive rule's firing %.0f B/s, want the saturated level (30,000–37,000; paper mean 32,100)", name, seed, tl.reactiveXi)
			}
			at = append(at, fmt.Sprintf("%.1f", tl.reactiveAt))
			onset = append(onset, fmt.Sprintf("%.1f", tl.onset))
			xi = append(xi, fmt.Sprintf("%.0f", tl.reactiveXi))
		}
		lines = append(lines, fmt.Sprintf("%s: degradation at %s s, reactive rule holds at %s s, ξ then %s B/s", name, strings.Join(onset, "/"), strings.Join(at, "/"), strings.Join(xi, "/")))
	}
	t.Log("(d) after congestion start:\n" + strings.Join(lines, "\n"))
}

// TestCalibrationOverflowStationary backs the package documentation's
// account of calibration point (d), which the model does not reach: once the
// bucket of k* is exhausted and the protected flow has collapsed, the
// overflow on k* settles within seconds at a level set by the uplink's queue
// and the number of streams, and stays there; it does not keep building over
// tens of seconds. The test measures the mean ξ on k* over the 28 s after
// degradation (from 2 s on) and over the 30 s after that, for the default
// uplink queue and for shallower queues and a longer minimum
// retransmission timeout (the variants the documentation discusses), and
// requires the two means to agree within 2,000 B/s. Run with -v for the
// table.
func TestCalibrationOverflowStationary(t *testing.T) {
	type variant struct {
		name  string
		queue float64 // BucketQueueLimit, packets
		rto   time.Duration
	}
	variants := []variant{
		{"default (100 packets)", 100, 200 * time.Millisecond},
		{"queue 6 packets", 6, 200 * time.Millisecond},
		{"queue 4 packets", 4, 200 * time.Millisecond},
		{"queue 4 packets, RTOmin 1 s", 4, time.Second},
	}
	lines := []string{"variant | scenario | seed | degradation (s) | ξ, 2–30 s after | ξ, 30–60 s after | reactive rule holds (s)"}
	for _, v := range variants {
		cfg := sim.DefaultConfig()
		cfg.BucketQueueLimit = v.queue * cfg.PacketSize
		cfg.RTOMin = v.rto
		for _, name := range []string{"S1", "S5"} {
			sc, err := sim.BuiltinScenario(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, seed := range calibrationSeeds[:3] {
				ss := runStaticConfig(t, cfg, sc, seed)
				phi0 := baseline(ss)
				onset := math.NaN()
				for _, s := range ss {
					if s.t > 0 && s.phi < 0.5*phi0 {
						onset = s.t
						break
					}
				}
				if math.IsNaN(onset) {
					t.Errorf("%s, %s seed %d: the protected flow never degrades", v.name, name, seed)
					continue
				}
				var early, late []float64
				for _, s := range ss {
					xi := s.obs.Switches[s.current].OverflowRate
					switch d := s.t - onset; {
					case d >= 2 && d < 30:
						early = append(early, xi)
					case d >= 30 && d < 60:
						late = append(late, xi)
					}
				}
				at, _ := reactiveFires(ss, 0)
				lines = append(lines, fmt.Sprintf("%s | %s | %d | %.1f | %.0f | %.0f | %.1f", v.name, name, seed, onset, mean(early), mean(late), at))
				if d := mean(late) - mean(early); math.Abs(d) > 2000 {
					t.Errorf("%s, %s seed %d: ξ on k* moved by %.0f B/s between 2–30 s and 30–60 s after degradation, want a stationary level (within 2,000)", v.name, name, seed, d)
				}
			}
		}
	}
	t.Log("ξ on k* after the protected flow collapses (static policy):\n" + strings.Join(lines, "\n"))
}

// runStaticConfig is runStatic on a configuration other than the default.
func runStaticConfig(t testing.TB, cfg sim.Config, sc *sim.Scenario, seed uint64) []sample {
	t.Helper()
	f, err := sim.New(cfg, sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	var out []sample
	var truth proflow.Observation
	for f.Elapsed() < sc.Length() {
		if err := f.Advance(cfg.Interval); err != nil {
			t.Fatal(err)
		}
		s := sample{t: (f.Elapsed() - sc.Start()).Seconds(), current: f.Current()}
		if err := f.Collect(context.Background(), &s.obs); err != nil {
			t.Fatal(err)
		}
		f.Truth(&truth)
		s.phi = truth.Flow.Throughput
		out = append(out, s)
	}
	return out
}

// TestCalibrationTestbed checks the testbed profile against the paper's
// observables (package documentation, "Profile testbed"): the flow alone and
// its self-induced overflow, the precursor in S1–S4, the recovery after a
// move, the reactive baseline's timing and mean, and the oracle's headroom,
// for seeds 1–5 and a policy sweep of three repeats. Run with -v for the
// table; `proflow profile check` prints the same.
func TestCalibrationTestbed(t *testing.T) {
	obs, vs := measureTestbed(t)
	var b strings.Builder
	if err := eval.WriteVerdicts(&b, obs, vs); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	if err := eval.Failed(vs); err != nil {
		t.Errorf("the testbed profile misses observables:\n%v", err)
	}
}

// TestCalibrationTestbedC1Shortfall states observable 5's measured
// shortfall: on the testbed profile the capped crowd of C1 does not hurt a
// flow that stays on k* (the paper's no-crowd ablation fell to 10.9 MB/s,
// 72% of its full model). Its 30 streams of 1 Mbit/s (3.75 MB/s) lift k*'s
// load only a little above the uncounted limit, so that limit's reserve
// would last many minutes and neither limit binds within the window. The
// package documentation explains it; the test fails, asking for the
// documentation to be updated, if a change to the profile makes C1 hurt.
func TestCalibrationTestbedC1Shortfall(t *testing.T) {
	obs, _ := measureTestbed(t)
	t.Logf("C1 static on the testbed: last 20 s at %.2f of the baseline (paper's ablation: 0.72), ξ ≤ 27,000 on %.0f%% of the window",
		obs.C1EndRatio, 100*obs.C1BelowThreshold)
	if obs.C1EndRatio < 0.9 {
		t.Errorf("C1 now hurts the flow (%.2f of baseline at the end): observable 5 may hold; update the documentation and assert it", obs.C1EndRatio)
	}
	if obs.C1BelowThreshold < 0.5 {
		t.Errorf("ξ on k* in C1 is at or below 27,000 on only %.0f%% of the window, want most of it (the stealth crowd stays under the threshold)", 100*obs.C1BelowThreshold)
	}
}

var testbedOnce struct {
	sync.Once
	obs *eval.ProfileObservables
	err error
}

// measureTestbed runs the testbed profile check once per test binary.
func measureTestbed(t *testing.T) (*eval.ProfileObservables, []eval.Verdict) {
	t.Helper()
	testbedOnce.Do(func() {
		pc := eval.ProfileCheck{Config: sim.TestbedConfig(), Seeds: calibrationSeeds, Repeats: 3, Seed: 1, Parallelism: runtime.NumCPU()}
		testbedOnce.obs, testbedOnce.err = pc.Measure(context.Background())
	})
	if testbedOnce.err != nil {
		t.Fatal(testbedOnce.err)
	}
	return testbedOnce.obs, testbedOnce.obs.Judge(eval.TestbedTargets())
}
