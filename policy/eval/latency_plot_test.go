package eval

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// A summary with an rr scenario lists and draws FigLatency, for that
// scenario only; one of bulk scenarios alone does not.
func TestLatencyFigure(t *testing.T) {
	var eps []*Episode
	for _, pol := range []string{"static", LatencyThresholdName} {
		for r := range 3 {
			rr := episode("R", pol, r, 5e6, 5e6, 500)
			rr.Kind, rr.SLO = sim.KindRR, 0.015
			for i, tt := range rr.T {
				v := 0.008 * float64(1+r)
				switch {
				case i%7 == 3:
					v = 0 // unknown: left out of the log axis
				case pol == "static" && tt >= 30:
					v = 0.2 * tt
				}
				rr.Latency = append(rr.Latency, v)
			}
			eps = append(eps, rr, episode("S1", pol, r, 20e6, 4e6, 20))
		}
	}
	opt := DefaultOptions()
	opt.Baseline = "static"
	s, err := Summarize(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.latencyScenarios(); !slices.Equal(got, []string{"R"}) {
		t.Errorf("latency scenarios %v, want [R]", got)
	}
	if !slices.Contains(s.Figures(), FigLatency) {
		t.Fatalf("figures %v lack %s", s.Figures(), FigLatency)
	}
	dir := t.TempDir()
	if err := s.WritePlots(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, FigLatency))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", FigLatency, err)
	}
	// One panel: 4 × 3 inches.
	if b := img.Bounds(); b.Dx() <= b.Dy() {
		t.Errorf("%s is %v, want one landscape panel", FigLatency, b)
	}
	var b strings.Builder
	if err := s.WriteMarkdown(&b, "latency"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), FigLatency+": the latency over time of R,") {
		t.Errorf("report does not list %s:\n%s", FigLatency, b.String())
	}

	bulk, err := Summarize(slices.DeleteFunc(eps, func(e *Episode) bool { return e.Scenario == "R" }), opt)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(bulk.Figures(), FigLatency) {
		t.Errorf("bulk-only figures %v list %s", bulk.Figures(), FigLatency)
	}
}
