package southboundtest

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// TelemetryHarness is what TestTelemetry needs from one telemetry source.
type TelemetryHarness struct {
	// Telemetry is the implementation under test.
	Telemetry proflow.Telemetry
	// Topology is the fabric the telemetry reads; it must be valid.
	Topology proflow.Topology
	// Advance lets time and traffic move between two samples: a real
	// fabric sleeps one interval, a simulator steps, a Fabric on a
	// ManualClock advances the clock. nil means nothing needs doing.
	Advance func()
	// Timeout bounds each Collect (default DefaultTimeout).
	Timeout time.Duration
}

// PromptTimeout is how long a Collect with an already cancelled context may
// take before TestTelemetry reports it as not prompt.
const PromptTimeout = time.Second

// TestTelemetry runs the conformance suite every proflow.Telemetry must
// pass, one subtest per property, each on a fresh harness from newHarness
// (which may call t.Skip when the system under test is unavailable):
//
//   - Valid: Collect fills an observation that passes Observation.Validate
//     for the topology.
//   - TimeAdvances: samples taken with Advance between them have strictly
//     increasing Time.
//   - Sizes: Collect sizes the observation itself, whatever the lengths of
//     the slices it is given (nil, too short, too long), and overwrites
//     every value left there (the suite fills them with NaN); the simplest
//     way is to start with Observation.Resize.
//   - CancelledContext: Collect with a cancelled context returns an error
//     within PromptTimeout.
//   - ReusesStorage: repeated Collects into one observation do not grow its
//     slices' capacity; the allocations per Collect are logged.
func TestTelemetry(t *testing.T, newHarness func(t *testing.T) TelemetryHarness) {
	t.Helper()
	run := func(name string, f func(t *testing.T, h *telemetryCase)) {
		t.Run(name, func(t *testing.T) {
			c := &telemetryCase{TelemetryHarness: newHarness(t)}
			c.check(t)
			f(t, c)
		})
	}
	run("Valid", func(t *testing.T, h *telemetryCase) {
		var obs proflow.Observation
		h.mustCollect(t, &obs)
		h.wantValid(t, &obs)
	})
	run("TimeAdvances", func(t *testing.T, h *telemetryCase) {
		var obs proflow.Observation
		h.mustCollect(t, &obs)
		prev := obs.Time
		for i := range 3 {
			h.Advance()
			h.mustCollect(t, &obs)
			if !obs.Time.After(prev) {
				t.Errorf("sample %d taken at %v, not after the previous sample at %v", i+2,
					obs.Time.Format(time.RFC3339Nano), prev.Format(time.RFC3339Nano))
			}
			prev = obs.Time
		}
	})
	run("Sizes", func(t *testing.T, h *telemetryCase) {
		n, l := h.Topology.NumSwitches(), h.Topology.NumLeaves()
		for _, c := range []struct {
			name               string
			switches, leaves   int
			nilSlices, garbage bool
		}{
			{name: "zero observation", nilSlices: true},
			{name: "too short", switches: 1, leaves: max(l-1, 0), garbage: true},
			{name: "too long", switches: n + 3, leaves: l + 2, garbage: true},
			{name: "right length with garbage", switches: n, leaves: l, garbage: true},
		} {
			var obs proflow.Observation
			if !c.nilSlices {
				obs.Switches = make([]proflow.SwitchSample, c.switches)
				obs.Leaves = make([]proflow.LeafSample, c.leaves)
			}
			if c.garbage {
				nan := math.NaN()
				for i := range obs.Switches {
					obs.Switches[i] = proflow.SwitchSample{TxRate: nan, OverflowRate: nan, FlowCount: nan, ElephantRate: nan}
				}
				for i := range obs.Leaves {
					obs.Leaves[i] = proflow.LeafSample{IngressRate: nan, TransmitRate: nan}
				}
				obs.Flow = proflow.FlowSample{Throughput: nan, CongestionRate: nan}
			}
			h.mustCollect(t, &obs)
			if len(obs.Switches) != n || len(obs.Leaves) != l {
				t.Errorf("%s: Collect left %d switch and %d leaf samples, want %d and %d",
					c.name, len(obs.Switches), len(obs.Leaves), n, l)
				continue
			}
			if err := obs.Validate(h.Topology); err != nil {
				t.Errorf("%s: Collect did not overwrite every value: %v", c.name, err)
			}
			h.Advance()
		}
	})
	run("CancelledContext", func(t *testing.T, h *telemetryCase) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		done := make(chan error, 1)
		go func() {
			var obs proflow.Observation
			done <- h.Telemetry.Collect(ctx, &obs)
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Error("Collect with a cancelled context succeeded, want an error")
			}
		case <-time.After(PromptTimeout):
			t.Errorf("Collect with a cancelled context has not returned after %v, want a prompt error", PromptTimeout)
		}
	})
	run("ReusesStorage", func(t *testing.T, h *telemetryCase) {
		var obs proflow.Observation
		h.mustCollect(t, &obs)
		capS, capL := cap(obs.Switches), cap(obs.Leaves)
		const rounds = 8
		var mallocs uint64
		var ms runtime.MemStats
		for range rounds {
			h.Advance()
			ctx, cancel := context.WithTimeout(t.Context(), h.Timeout)
			runtime.ReadMemStats(&ms)
			before := ms.Mallocs
			err := h.Telemetry.Collect(ctx, &obs)
			runtime.ReadMemStats(&ms)
			cancel()
			if err != nil {
				t.Fatalf("Collect: %v", err)
			}
			mallocs += ms.Mallocs - before
			if cap(obs.Switches) > capS || cap(obs.Leaves) > capL {
				t.Fatalf("observation capacity grew from %d switch and %d leaf samples to %d and %d, want storage reused",
					capS, capL, cap(obs.Switches), cap(obs.Leaves))
			}
		}
		t.Logf("about %.1f allocations per Collect (process-wide count, including other goroutines)",
			float64(mallocs)/rounds)
	})
}

type telemetryCase struct {
	TelemetryHarness
}

func (h *telemetryCase) check(t *testing.T) {
	t.Helper()
	if h.Telemetry == nil {
		t.Fatal("southboundtest: harness Telemetry is nil")
	}
	if err := h.Topology.Validate(); err != nil {
		t.Fatalf("southboundtest: harness topology: %v", err)
	}
	if h.Advance == nil {
		h.Advance = func() {}
	}
	if h.Timeout <= 0 {
		h.Timeout = DefaultTimeout
	}
}

func (h *telemetryCase) mustCollect(t *testing.T, obs *proflow.Observation) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), h.Timeout)
	defer cancel()
	if err := h.Telemetry.Collect(ctx, obs); err != nil {
		t.Fatalf("Collect: %v", err)
	}
}

func (h *telemetryCase) wantValid(t *testing.T, obs *proflow.Observation) {
	t.Helper()
	if err := obs.Validate(h.Topology); err != nil {
		t.Errorf("Collect produced an invalid observation: %v", err)
	}
}
