package proflow_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/proflow-sdn/proflow"
)

func TestBaselineValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		b    proflow.Baseline
		want string // "" for valid
	}{
		{"valid", testBaseline, ""},
		{"zero overflow and count", proflow.Baseline{Throughput: 1}, ""},
		{"NaN overflow", proflow.Baseline{Overflow: math.NaN(), Throughput: 1}, "baseline overflow is NaN"},
		{"negative count", proflow.Baseline{FlowCount: -1, Throughput: 1}, "baseline flow_count is -1"},
		{"infinite throughput", proflow.Baseline{Throughput: math.Inf(1)}, "baseline throughput is +Inf"},
		{"zero throughput", proflow.Baseline{}, "baseline throughput is 0"},
		{"negative switch", proflow.Baseline{Throughput: 1, Switch: -1}, "baseline switch -1"},
	} {
		err := c.b.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: Validate = %v, want nil", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: Validate = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestNewBaselineEstimatorErrors(t *testing.T) {
	if _, err := proflow.NewBaselineEstimator(-1, 3); err == nil || !strings.Contains(err.Error(), "warm-up -1") {
		t.Errorf("NewBaselineEstimator(-1, 3) = %v, want a warm-up error", err)
	}
	if _, err := proflow.NewBaselineEstimator(0, 0); err == nil || !strings.Contains(err.Error(), "window 0") {
		t.Errorf("NewBaselineEstimator(0, 0) = %v, want a window error", err)
	}
}

// sampleOn returns an observation whose switch k has the given overflow and
// flow count, every other switch a large overflow that must not count.
func sampleOn(k int, overflow, count, throughput float64) *proflow.Observation {
	o := validObservation()
	for i := range o.Switches {
		o.Switches[i] = proflow.SwitchSample{OverflowRate: 1e9, FlowCount: 100}
	}
	o.Switches[k] = proflow.SwitchSample{OverflowRate: overflow, FlowCount: count}
	o.Flow.Throughput = throughput
	return o
}

func TestBaselineEstimator(t *testing.T) {
	e, err := proflow.NewBaselineEstimator(2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Baseline(); !errors.Is(err, proflow.ErrBaselinePending) {
		t.Errorf("Baseline before any sample = %v, want ErrBaselinePending", err)
	}
	// The two warm-up samples (the flow's ramp-up) are discarded.
	steps := []struct{ overflow, count, throughput float64 }{
		{9e9, 50, 1}, {9e9, 50, 1}, // warm-up
		{20000, 2, 2e7}, {22000, 2, 2.2e7}, {24000, 4, 2.4e7},
		{99999, 99, 99}, // after the window: ignored
	}
	for i, s := range steps {
		done := e.Add(sampleOn(1, s.overflow, s.count, s.throughput), 1)
		if want := i >= 4; done != want {
			t.Errorf("Add #%d = %v, want %v", i+1, done, want)
		}
		have, want := e.Progress()
		if wantHave := min(max(i-1, 0), 3); have != wantHave || want != 3 {
			t.Errorf("Progress after Add #%d = %d/%d, want %d/3", i+1, have, want, wantHave)
		}
	}
	got, err := e.Baseline()
	if err != nil {
		t.Fatal(err)
	}
	want := proflow.Baseline{Overflow: 22000, FlowCount: 8.0 / 3, Throughput: 2.2e7, Switch: 1}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("Baseline (-want +got):\n%s", diff)
	}

	e.Reset()
	if e.Done() {
		t.Error("Done after Reset")
	}
	if _, err := e.Baseline(); !errors.Is(err, proflow.ErrBaselinePending) {
		t.Errorf("Baseline after Reset = %v, want ErrBaselinePending", err)
	}
}

func TestBaselineEstimatorRestartsOnMove(t *testing.T) {
	e, _ := proflow.NewBaselineEstimator(0, 2)
	e.Add(sampleOn(0, 5000, 10, 1e6), 0)
	if e.Add(sampleOn(2, 1000, 2, 2e7), 2) {
		t.Fatal("Done after one sample on the new switch, want the average restarted")
	}
	if !e.Add(sampleOn(2, 3000, 4, 3e7), 2) {
		t.Fatal("not Done after two samples on switch 2")
	}
	got, err := e.Baseline()
	if err != nil {
		t.Fatal(err)
	}
	if want := (proflow.Baseline{Overflow: 2000, FlowCount: 3, Throughput: 2.5e7, Switch: 2}); got != want {
		t.Errorf("Baseline after a move = %v, want %v", got, want)
	}
}

func TestBaselineEstimatorIgnoresBadSwitchAndRejectsZeroThroughput(t *testing.T) {
	e, _ := proflow.NewBaselineEstimator(0, 1)
	if e.Add(validObservation(), 4) || e.Add(validObservation(), -1) {
		t.Error("Add with a switch outside the observation completed the baseline")
	}
	if have, _ := e.Progress(); have != 0 {
		t.Errorf("Progress after out-of-range Adds = %d, want 0", have)
	}
	e.Add(sampleOn(0, 0, 0, 0), 0)
	if _, err := e.Baseline(); err == nil || !strings.Contains(err.Error(), "throughput is 0") {
		t.Errorf("Baseline with zero throughput = %v, want a throughput error", err)
	}
}

func TestBaselineEstimatorRestartKeepsWarmupDone(t *testing.T) {
	e, _ := proflow.NewBaselineEstimator(2, 2)
	for range 2 {
		e.Add(sampleOn(0, 100, 1, 5e6), 0) // the ramp-up, skipped
	}
	e.Add(sampleOn(0, 0, 0, 0), 0)
	if !e.Add(sampleOn(0, 0, 0, 0), 0) {
		t.Fatal("not Done after the warm-up and two samples")
	}
	if _, err := e.Baseline(); err == nil {
		t.Fatal("Baseline of an idle window succeeded, want a throughput error")
	}
	e.Restart()
	if have, want := e.Progress(); have != 0 || want != 2 {
		t.Errorf("Progress after Restart = %d of %d, want 0 of 2", have, want)
	}
	if e.Add(sampleOn(0, 2000, 3, 1e7), 0) {
		t.Fatal("Done after one sample of the new window")
	}
	if !e.Add(sampleOn(0, 4000, 5, 3e7), 0) {
		t.Fatal("not Done after two samples of the new window: the warm-up was repeated")
	}
	got, err := e.Baseline()
	if err != nil {
		t.Fatal(err)
	}
	if want := (proflow.Baseline{Overflow: 3000, FlowCount: 4, Throughput: 2e7, Switch: 0}); got != want {
		t.Errorf("Baseline after Restart = %v, want %v", got, want)
	}
}
