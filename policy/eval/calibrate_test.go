package eval

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// quietTrace builds an episode whose switch 0 carries the protected flow
// alone at full rate with the given overflow samples, and a flow count
// that becomes `count` at step countFrom (−1: never).
func quietTrace(overflow []float64, count float64, countFrom int) *trace.Episode {
	topo := proflow.PaperTopology()
	start := time.Unix(1000, 0)
	ep := &trace.Episode{Meta: trace.Meta{Format: trace.Format, Topology: topo, Start: start, CongestionStart: start,
		Flow: proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8")}, Interval: trace.Duration(time.Second / 2)}}
	for i, v := range overflow {
		obs := &proflow.Observation{Time: start.Add(time.Duration(i) * time.Second / 2)}
		obs.Resize(topo)
		obs.Time = start.Add(time.Duration(i) * time.Second / 2)
		obs.Switches[0] = proflow.SwitchSample{OverflowRate: v, FlowCount: 2}
		if countFrom >= 0 && i >= countFrom {
			obs.Switches[0].FlowCount = count
		}
		obs.Flow.Throughput = 23e6
		ep.Steps = append(ep.Steps, trace.Step{Seq: uint64(i + 1), Time: obs.Time, Obs: obs})
	}
	return ep
}

func TestAnalyseThresholdAppliesTheConsecutiveRule(t *testing.T) {
	eps := []*trace.Episode{
		// Three in a row above 26,000 but not above 26,500.
		quietTrace([]float64{20000, 26100, 26200, 26300, 21000}, 0, -1),
		// Spikes to 29,000, but never twice in a row.
		quietTrace([]float64{29000, 20000, 29000, 20000, 29000}, 0, -1),
		// Above 28,000 three times, but a crowd (count 6) interrupts the run:
		// those samples do not count as self-induced.
		quietTrace([]float64{28500, 28500, 28500, 28500, 28500}, 6, 2),
	}
	opt := ThresholdOptions{AloneCount: 2, FullRate: 0.6, Consecutive: 3, From: 25500, To: 27000, Step: 500}
	r, err := AnalyseThreshold(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []ThresholdPoint{{25500, 1.0 / 3}, {26000, 1.0 / 3}, {26500, 0}, {27000, 0}}
	if diff := cmp.Diff(want, r.Curve); diff != "" {
		t.Errorf("curve (-want +got):\n%s", diff)
	}
	if r.Lowest != 26500 || r.Samples != 12 || r.Episodes != 3 || r.Max != 29000 {
		t.Errorf("lowest %v, samples %d, episodes %d, max %v; want 26500, 12, 3, 29000", r.Lowest, r.Samples, r.Episodes, r.Max)
	}
}

func TestAnalyseThresholdWithoutQuietSamples(t *testing.T) {
	ep := quietTrace([]float64{1, 2, 3}, 8, 0) // crowded from the start
	if _, err := AnalyseThreshold([]*trace.Episode{ep}, DefaultThresholdOptions()); err == nil {
		t.Error("no error for traces without a single self-induced sample")
	}
}

func TestAnalyseCountRecommendsTheSeparatingThreshold(t *testing.T) {
	quiet := []*trace.Episode{quietTrace(make([]float64, 10), 0, -1)}
	single := []*trace.Episode{quietTrace(make([]float64, 10), 4, 3)}
	crowd := []*trace.Episode{quietTrace(make([]float64, 10), 12, 4), quietTrace(make([]float64, 10), 6, 6)}
	r, err := AnalyseCount(quiet, single, crowd, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	if r.Recommended != 4 {
		t.Errorf("recommended T = %v, want 4 (a single congester reaches 4, the smallest crowd 6)", r.Recommended)
	}
	if p := r.Curve[4-2]; p.CrowdDetected != 1 || math.Abs(p.CrowdDelay-2.5) > 1e-9 {
		t.Errorf("T=4: detected %v after %vs, want 1 after 2.5s (steps 4 and 6 at 0.5 s)", p.CrowdDetected, p.CrowdDelay)
	}
	if p := r.Curve[6-2]; p.CrowdDetected != 0.5 {
		t.Errorf("T=6: detected %v, want 0.5 (only the crowd of 12)", p.CrowdDetected)
	}
}

// within runs f and fails the test if it does not return within a few
// seconds (an unbounded loop).
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("did not return within 10 s")
		return nil
	}
}

func TestAnalyseThresholdRefusesUnboundedSpans(t *testing.T) {
	eps := []*trace.Episode{quietTrace([]float64{26000, 26000, 26000}, 0, -1)}
	for _, c := range []struct {
		name   string
		change func(*ThresholdOptions)
		want   string
	}{
		{"To +Inf", func(o *ThresholdOptions) { o.To = math.Inf(1) }, "To is +Inf, want a finite number"},
		{"From NaN", func(o *ThresholdOptions) { o.From = math.NaN() }, "From is NaN, want a finite number"},
		{"Step zero", func(o *ThresholdOptions) { o.Step = 0 }, "Step is 0, want > 0"},
		{"Step negative", func(o *ThresholdOptions) { o.Step = -500 }, "Step is -500, want > 0"},
		{"To below From", func(o *ThresholdOptions) { o.From, o.To = 30000, 20000 }, "To 20000 is below From 30000"},
		{"From+Step == From", func(o *ThresholdOptions) { o.From, o.To = 1e300, 1e300 }, "From 1e+300 is too large to step by Step 500"},
		{"too many points", func(o *ThresholdOptions) { o.From, o.To, o.Step = 0, 1e12, 1 }, "want at most 1000000"},
		{"Consecutive zero", func(o *ThresholdOptions) { o.Consecutive = 0 }, "Consecutive is 0, want >= 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := DefaultThresholdOptions()
			c.change(&opt)
			err := within(t, func() error { _, err := AnalyseThreshold(eps, opt); return err })
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "invalid threshold options") {
				t.Errorf("AnalyseThreshold = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestAnalyseCountRefusesUnboundedSpans(t *testing.T) {
	crowd := []*trace.Episode{quietTrace(make([]float64, 4), 12, 1)}
	for _, c := range []struct {
		name     string
		from, to float64
		want     string
	}{
		{"to +Inf", 2, math.Inf(1), "to is +Inf, want a finite number"},
		{"from -Inf", math.Inf(-1), 5, "from is -Inf, want a finite number"},
		{"huge span", 0, 1e12, "want at most 1000000"},
		{"from+1 == from", 1e300, 1e300, "from 1e+300 is too large to step by step 1"},
		{"to below from", 5, 2, "to 2 is below from 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := within(t, func() error { _, err := AnalyseCount(nil, nil, crowd, c.from, c.to); return err })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("AnalyseCount(%v, %v) = %v, want an error containing %q", c.from, c.to, err, c.want)
			}
		})
	}
}

func TestAnalysesRefuseBadSwitchIndexes(t *testing.T) {
	for _, c := range []struct {
		name string
		sw   int
		want string
	}{
		{"negative", -1, "step 2: switch -1, want 0..3"},
		{"past the topology", 4, "step 2: switch 4, want 0..3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := quietTrace([]float64{26000, 26000, 26000, 26000}, 0, -1)
			bad.Steps[2].Switch = c.sw
			good := quietTrace([]float64{26000}, 0, -1)
			check := func(what string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s = %v, want an error containing %q", what, err, c.want)
				}
			}
			_, err := AnalyseThreshold([]*trace.Episode{good, bad}, DefaultThresholdOptions())
			check("AnalyseThreshold", err)
			if err != nil && !strings.Contains(err.Error(), "episode 1") {
				t.Errorf("AnalyseThreshold = %v, want it to name episode 1", err)
			}
			_, err = AnalyseCount(nil, []*trace.Episode{bad}, []*trace.Episode{good}, 2, 4)
			check("AnalyseCount", err)
			_, err = AnalyseCount(nil, nil, []*trace.Episode{good, bad}, 2, 4)
			check("AnalyseCount", err)
			_, err = FromTrace(bad, 0)
			check("FromTrace", err)
		})
	}
	if _, err := AnalyseThreshold([]*trace.Episode{nil}, DefaultThresholdOptions()); err == nil || !strings.Contains(err.Error(), "episode 0 is nil") {
		t.Errorf("AnalyseThreshold with a nil episode = %v, want an error naming it", err)
	}
	if _, err := FromTrace(nil, 0); err == nil {
		t.Error("FromTrace(nil) succeeded")
	}
}

// failingWriter accepts n bytes, then fails every write.
type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriteCalibrationReportsErrors(t *testing.T) {
	th := &ThresholdReport{Samples: 10, Episodes: 2, Mean: 1, P95: 2, Max: 3, Curve: []ThresholdPoint{{1, 1}, {2, 0}}, Lowest: 2}
	cnt := &CountReport{Curve: []CountPoint{{Threshold: 2, CrowdDelay: math.NaN(), QuietRate: math.NaN(), SingleRate: math.NaN()}}, Recommended: math.NaN()}
	var full strings.Builder
	if err := WriteCalibration(&full, th, cnt); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 2 | 0.0% |", "Lowest threshold with zero false alarms: **2**", "No T separates"} {
		if !strings.Contains(full.String(), want) {
			t.Errorf("calibration lacks %q:\n%s", want, full.String())
		}
	}
	// A writer that fails part-way, not at the last write.
	if err := WriteCalibration(&failingWriter{n: 20}, th, cnt); !errors.Is(err, errDiskFull) {
		t.Errorf("WriteCalibration to a failing writer = %v, want the write error", err)
	}
	if err := WriteCalibration(&full, nil, cnt); err == nil {
		t.Error("WriteCalibration with a nil threshold report succeeded")
	}
	if err := WriteCalibration(nil, th, nil); err == nil {
		t.Error("WriteCalibration to a nil writer succeeded")
	}
}
