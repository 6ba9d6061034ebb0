package simdp_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// The p4runtime client over real gRPC against a target server whose data
// plane is the simulator must pass the same conformance suites as every
// southbound, with the simulator as the ground truth.

func TestEnforcerConformance(t *testing.T) {
	southboundtest.TestEnforcer(t, func(t *testing.T) southboundtest.EnforcerHarness {
		s := serve(t, newFabric(t, "S1", 1))
		c := s.dial(t)
		return southboundtest.EnforcerHarness{
			Enforcer: c,
			Topology: s.fab.Topology(),
			Flow:     s.fab.Flow(),
			Where: func(context.Context) (int, error) {
				fwd, rev := s.dp.Placement()
				if cur := s.fab.Current(); fwd != rev || fwd != cur {
					return -1, fmt.Errorf("forward entry on switch %d, reverse on %d, simulated flow on %d; want all equal", fwd, rev, cur)
				}
				return fwd, nil
			},
		}
	})
}

func TestTelemetryConformance(t *testing.T) {
	southboundtest.TestTelemetry(t, func(t *testing.T) southboundtest.TelemetryHarness {
		s := serve(t, newFabric(t, "S1", 1))
		c := s.dial(t)
		ctx, cancel := ctxT()
		defer cancel()
		if err := c.Place(ctx, s.fab.Flow(), s.fab.InitialSwitch()); err != nil {
			t.Fatal(err)
		}
		var obs proflow.Observation
		if err := c.Collect(ctx, &obs); !errors.Is(err, proflow.ErrStale) {
			t.Fatalf("first Collect: %v, want an error wrapping ErrStale (priming)", err)
		}
		advance := func() {
			if err := s.fab.Advance(s.fab.Config().Interval); err != nil {
				t.Error(err)
			}
		}
		advance()
		return southboundtest.TelemetryHarness{Telemetry: c, Topology: s.fab.Topology(), Advance: advance}
	})
}

// TestClientReadsTheSimulation compares what the p4runtime client reads
// over gRPC with the simulator's ground truth through S1, with a reroute
// over gRPC in the middle.
func TestClientReadsTheSimulation(t *testing.T) {
	s := serve(t, newFabric(t, "S1", 1))
	c := s.dial(t)
	ctx, cancel := ctxT()
	defer cancel()
	flow, cfg := s.fab.Flow(), s.fab.Config()
	if err := c.Place(ctx, flow, s.fab.InitialSwitch()); err != nil {
		t.Fatal(err)
	}
	var got, truth proflow.Observation
	if err := c.Collect(ctx, &got); !errors.Is(err, proflow.ErrStale) {
		t.Fatalf("first Collect: %v, want ErrStale", err)
	}
	frames := cfg.PacketSize / cfg.MSS
	for step := 1; step <= 80; step++ {
		if err := s.fab.Advance(cfg.Interval); err != nil {
			t.Fatal(err)
		}
		if err := c.Collect(ctx, &got); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		s.fab.Truth(&truth)
		if !got.Time.Equal(truth.Time) {
			t.Fatalf("step %d: sample at %v, want the simulator's %v", step, got.Time, truth.Time)
		}
		const tol = 50 // bytes/s: counters are whole bytes over 0.5 s
		var mu float64
		for i := range truth.Leaves {
			g, w := got.Leaves[i], truth.Leaves[i]
			if !near(g.IngressRate, w.IngressRate, tol) || !near(g.TransmitRate, w.TransmitRate, tol) {
				t.Errorf("step %d: leaf %d λ, μ = %.0f, %.0f over gRPC, want the simulator's %.0f, %.0f", step, i, g.IngressRate, g.TransmitRate, w.IngressRate, w.TransmitRate)
			}
			mu += w.TransmitRate
		}
		if !near(got.Flow.CongestionRate, truth.Flow.CongestionRate, 3*tol) {
			t.Errorf("step %d: F = %.0f, want %.0f", step, got.Flow.CongestionRate, truth.Flow.CongestionRate)
		}
		if want := truth.Leaves[0].TransmitRate - truth.Leaves[0].IngressRate; !near(got.Flow.Throughput, want, tol) {
			t.Errorf("step %d: φ = %.0f over gRPC, want the flow's frames into leaf1 %.0f", step, got.Flow.Throughput, want)
		}
		if at := time.Duration(step) * cfg.Interval; at > 5*time.Second && at <= 20*time.Second {
			// Alone and healthy, the frames a flow sends are the frames
			// it gets delivered.
			if w := truth.Flow.Throughput * frames; !near(got.Flow.Throughput, w, 0.1*w) {
				t.Errorf("t=%v: φ = %.0f frames/s over gRPC, want within 10%% of the goodput's %.0f", at, got.Flow.Throughput, w)
			}
		}
		var rho float64
		for _, sw := range got.Switches {
			rho += sw.TxRate
		}
		if !near(rho, mu, 8*tol) {
			t.Errorf("step %d: Σρ = %.0f over gRPC, want Σμ = %.0f (every leaf's uplinks)", step, rho, mu)
		}
		if step == 50 { // 25 s: congestion on agg1; move the flow to agg3 over gRPC
			if err := c.Place(ctx, flow, 2); err != nil {
				t.Fatal(err)
			}
			if s.fab.Current() != 2 {
				t.Fatalf("simulated flow on %d after Place(2) over gRPC", s.fab.Current())
			}
		}
		if step > 52 && got.Switches[2].TxRate == 0 {
			t.Errorf("step %d: no traffic toward agg3 after the reroute", step)
		}
	}
}

// TestConcurrentUse runs the simulator, telemetry reads and placements on
// separate goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	s := serve(t, newFabric(t, "S1", 1))
	c := s.dial(t)
	ctx, cancel := ctxT()
	defer cancel()
	flow := s.fab.Flow()
	if err := c.Place(ctx, flow, 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 3)
	wg.Add(3)
	go func() {
		defer wg.Done()
		defer close(stop)
		for range 100 {
			if err := s.fab.Advance(100 * time.Millisecond); err != nil {
				errs <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	go func() {
		defer wg.Done()
		var obs proflow.Observation
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := c.Collect(ctx, &obs); err != nil && !errors.Is(err, proflow.ErrStale) {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for k := 0; ; k = (k + 1) % 4 {
			select {
			case <-stop:
				return
			default:
			}
			if err := c.Place(ctx, flow, k); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if fwd, rev := s.dp.Placement(); fwd != rev || fwd != s.fab.Current() {
		t.Errorf("after concurrent use: forward %d, reverse %d, simulated %d", fwd, rev, s.fab.Current())
	}
}
