package eval

import (
	"math"
	"net/netip"
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
