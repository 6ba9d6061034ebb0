package eval

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// TestKindMetrics: an rr cell's latency percentiles and the seconds above
// its SLO; a rate cell's seconds below 90% of its demand; a bulk cell's
// objective stays the throughput one, and the report shows the section.
func TestKindMetrics(t *testing.T) {
	rr := episode("R", "static", 0, 5e6, 5e6, 500)
	rr.Kind, rr.SLO = sim.KindRR, 0.015
	for _, tt := range rr.T {
		v := 0.008
		if tt >= 30 && tt < 40 { // ten 1 s samples above the SLO
			v = 0.2
		}
		rr.Latency = append(rr.Latency, v)
	}
	rate := episode("V", "static", 0, 12e6, 6e6, 50) // half the demand from 50 s
	rate.SetKind(sim.FlowKind{Kind: sim.KindRate, Rate: 12e6}, sim.DefaultConfig(), 20*time.Second)
	bulk := episode("S1", "static", 0, 20e6, 4e6, 20)
	s, err := Summarize([]*Episode{rr, rate, bulk}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.Cell("R", "static")
	if c.Kind != sim.KindRR || c.LatencyP50 != 0.008 || c.LatencyP99 != 0.2 || c.KindSLOSeconds != 10 {
		t.Errorf("rr cell: kind %s, p50 %v, p99 %v, SLO seconds %v; want rr, 0.008, 0.2, 10", c.Kind, c.LatencyP50, c.LatencyP99, c.KindSLOSeconds)
	}
	c, _ = s.Cell("V", "static")
	if c.Kind != sim.KindRate || c.KindSLOSeconds != 70 || !math.IsNaN(c.LatencyP50) {
		t.Errorf("rate cell: kind %s, SLO seconds %v, p50 %v; want rate, 70, NaN", c.Kind, c.KindSLOSeconds, c.LatencyP50)
	}
	c, _ = s.Cell("S1", "static")
	if c.Kind != sim.KindBulk || !math.IsNaN(c.KindSLOSeconds) || c.SLOSeconds != 100 {
		t.Errorf("bulk cell: kind %s, kind SLO %v, SLO %v; want bulk, NaN, 100", c.Kind, c.KindSLOSeconds, c.SLOSeconds)
	}
	var b strings.Builder
	if err := s.WriteMarkdown(&b, "kinds"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Latency and the objective of each kind of flow", "| R | rr | static | 8.0 | 200.0 | 10.0 |", "| S1 | bulk | static | – | – | 100.0 |", "| rr | static | 1 | 10.0 |", "| bulk | static | 1 | 100.0 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	dir := t.TempDir()
	if err := s.WriteCSV(dir); err != nil {
		t.Fatal(err)
	}
	cells, err := os.ReadFile(filepath.Join(dir, "cells.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cells), "kind,latency_p50_s,latency_p99_s,kind_slo_seconds") || !strings.Contains(string(cells), ",rr,0.008,0.2,10\n") {
		t.Errorf("cells.csv lacks the kind's columns:\n%s", cells)
	}
	bad := episode("R", "static", 1, 5e6, 5e6, 500)
	bad.Kind, bad.SLO, bad.Latency = sim.KindRR, 0.015, []float64{1}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "1 latency samples") {
		t.Errorf("short latency series: %v, want an error counting them", err)
	}
}

// TestSetKindOnOff: an onoff flow's demand is the baseline in bursts, 0 in
// gaps, and the share of the interval in between.
func TestSetKindOnOff(t *testing.T) {
	cfg := sim.DefaultConfig()
	k := sim.FlowKind{Kind: sim.KindOnOff, On: sim.Duration(time.Second), Off: sim.Duration(time.Second), From: sim.Duration(20 * time.Second)}
	e := &Episode{Baseline: 10, T: []float64{-0.5, 0.5, 1, 1.25, 2}}
	e.SetKind(k, cfg, 20*time.Second)
	// The intervals end at the sample: (-1, -0.5] before the cycle, (0, 0.5]
	// on, (0.5, 1] on, (0.75, 1.25] half, (1.5, 2] off.
	want := []float64{10, 10, 10, 5, 0}
	for i := range want {
		if math.Abs(e.Demand[i]-want[i]) > 1e-9 {
			t.Errorf("demand at %vs: %v, want %v", e.T[i], e.Demand[i], want[i])
		}
	}
}

// TestSweepKinds: a sweep of R1's kind on the simulator records the
// latency and the SLO of every episode.
func TestSweepKinds(t *testing.T) {
	sc, err := sim.BuiltinScenario("S1")
	if err != nil {
		t.Fatal(err)
	}
	sc.Name = "rr"
	sc.Window = sim.Duration(20 * time.Second)
	sc.ProtectedKind = sim.FlowKind{Kind: sim.KindRR, RequestBytes: 65536, RequestRate: 100}
	static, err := ReferencePolicy("static")
	if err != nil {
		t.Fatal(err)
	}
	eps, err := Sweep{Scenarios: []*sim.Scenario{sc}, Policies: []PolicySpec{static}, Repeats: 1, Seed: 1}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e := eps[0]
	if e.Kind != sim.KindRR || e.SLO != 0.015 || len(e.Latency) != len(e.T) || len(e.Demand) != len(e.T) {
		t.Fatalf("episode kind %q, SLO %v, %d latency and %d demand samples for %d times", e.Kind, e.SLO, len(e.Latency), len(e.Demand), len(e.T))
	}
	for i, at := range e.T {
		if at >= -5 && at < 0 && (e.Latency[i] <= 0 || e.Latency[i] > e.SLO) {
			t.Errorf("latency at %vs, before congestion, %v s, want within the SLO %v s", at, e.Latency[i], e.SLO)
		}
	}
}
