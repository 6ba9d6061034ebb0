package proflow

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// waitDone fails t unless ctx's Done closes within a few seconds.
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after 5 s")
	}
}

// isDone reports whether ctx's Done is closed now.
func isDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

func TestStepDeadlineTimeout(t *testing.T) {
	var s stepDeadline
	start := time.Now()
	ctx := s.begin(context.Background(), 20*time.Millisecond)
	defer s.end()
	if d, ok := ctx.Deadline(); !ok || d.Before(start.Add(20*time.Millisecond)) || d.After(time.Now().Add(20*time.Millisecond)) {
		t.Errorf("Deadline() = %v, %t, want 20 ms after begin, true", d, ok)
	}
	if err := ctx.Err(); err != nil {
		t.Errorf("Err() before the deadline = %v, want nil", err)
	}
	waitDone(t, ctx)
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("Done closed after %v, want at least the 20 ms timeout", waited)
	}
	if err := ctx.Err(); err != context.DeadlineExceeded {
		t.Errorf("Err() after the deadline = %v, want context.DeadlineExceeded", err)
	}
}

func TestStepDeadlineParentCancel(t *testing.T) {
	cause := errors.New("operator stop")
	for _, tc := range []struct {
		name string
		// watch asks for Done before the cancellation (a callee waiting on
		// it); otherwise the step learns of it from Err.
		watch, held bool
	}{{"waiting on Done", true, false}, {"waiting on Done, held", true, true}, {"Err only", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var s stepDeadline
			if tc.held {
				s.hold()
				defer s.release()
			}
			parent, cancel := context.WithCancelCause(context.Background())
			ctx := s.begin(parent, time.Hour)
			defer s.end()
			if tc.watch {
				done := ctx.Done()
				cancel(cause)
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("Done not closed 5 s after the parent's cancellation")
				}
			} else {
				cancel(cause)
			}
			if err := ctx.Err(); err != context.Canceled {
				t.Errorf("Err() = %v, want the parent's context.Canceled", err)
			}
			if !isDone(ctx) {
				t.Error("Done open while Err is not nil")
			}
			if got := context.Cause(ctx); got != cause {
				t.Errorf("context.Cause = %v, want the parent's cause %v", got, cause)
			}
		})
	}
	t.Run("cancelled before the step", func(t *testing.T) {
		var s stepDeadline
		parent, cancel := context.WithCancel(context.Background())
		cancel()
		ctx := s.begin(parent, time.Hour)
		defer s.end()
		if !isDone(ctx) || ctx.Err() != context.Canceled {
			t.Errorf("step of a cancelled parent: done %t, Err() = %v, want done with context.Canceled", isDone(ctx), ctx.Err())
		}
	})
}

func TestStepDeadlineParentDeadlineFirst(t *testing.T) {
	var s stepDeadline
	want := time.Now().Add(20 * time.Millisecond)
	parent, cancel := context.WithDeadline(context.Background(), want)
	defer cancel()
	ctx := s.begin(parent, time.Hour)
	defer s.end()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(want) {
		t.Errorf("Deadline() = %v, %t, want the parent's %v, true", d, ok, want)
	}
	waitDone(t, ctx)
	if err := ctx.Err(); err != context.DeadlineExceeded {
		t.Errorf("Err() = %v, want context.DeadlineExceeded", err)
	}

	// A later parent deadline leaves the step's own.
	late, cancelLate := context.WithTimeout(context.Background(), time.Hour)
	defer cancelLate()
	s.end()
	start := time.Now()
	ctx = s.begin(late, time.Second)
	if d, _ := ctx.Deadline(); d.Before(start.Add(time.Second)) || d.After(time.Now().Add(time.Second)) {
		t.Errorf("Deadline() under a parent ending in an hour = %v, want a second after begin", d)
	}
}

func TestStepDeadlineValue(t *testing.T) {
	type key struct{}
	var s stepDeadline
	ctx := s.begin(context.WithValue(context.Background(), key{}, "first"), time.Hour)
	if got := ctx.Value(key{}); got != "first" {
		t.Errorf("Value = %v, want the parent's %q", got, "first")
	}
	s.end()
	ctx = s.begin(context.WithValue(context.Background(), key{}, "second"), time.Hour)
	defer s.end()
	if got := ctx.Value(key{}); got != "second" {
		t.Errorf("Value in the next step = %v, want its parent's %q", got, "second")
	}
	if got := ctx.Value("other"); got != nil {
		t.Errorf("Value of a key the parent lacks = %v, want nil", got)
	}
}

// TestStepDeadlineReuse checks that steps whose callees never use their
// context allocate nothing once the ring is full, whatever the parent, and
// that a context used in its step is never armed again.
func TestStepDeadlineReuse(t *testing.T) {
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		name   string
		parent context.Context
		held   bool
	}{
		{"background", context.Background(), false},
		{"cancellable", cancellable, false},
		{"cancellable, held", cancellable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s stepDeadline
			if tc.held {
				s.hold()
				defer s.release()
			}
			for range stepRing { // fill the ring
				s.begin(tc.parent, time.Hour)
				s.end()
			}
			if allocs := testing.AllocsPerRun(100, func() {
				s.begin(tc.parent, time.Hour)
				s.end()
			}); allocs != 0 {
				t.Errorf("a step allocates %v times, want 0", allocs)
			}
		})
	}

	var s stepDeadline
	used := s.begin(cancellable, time.Hour)
	_ = used.Done()
	s.end()
	for i := range 3 * stepRing {
		ctx := s.begin(cancellable, time.Hour)
		if ctx == used {
			t.Fatalf("step %d got the context an earlier step's callee used", i+2)
		}
		if ctx.Err() != nil || isDone(ctx) {
			t.Fatalf("step %d begins with Err() = %v, done %t; want a live context", i+2, ctx.Err(), isDone(ctx))
		}
		s.end()
	}
	if err := used.Err(); err != context.Canceled || !isDone(used) {
		t.Errorf("a context kept %d steps after its own: Err() = %v, done %t; want context.Canceled, done", 3*stepRing, err, isDone(used))
	}
}

// TestStepContextEndsWithStep checks issue 24's finding: a step's context
// kept past the step reports its end, keeps the error it ended with, and
// is not the next step's.
func TestStepContextEndsWithStep(t *testing.T) {
	t.Run("ended by the step", func(t *testing.T) {
		var s stepDeadline
		kept := s.begin(context.Background(), time.Hour)
		s.end()
		if err := kept.Err(); err != context.Canceled {
			t.Errorf("Err() after the step = %v, want context.Canceled", err)
		}
		if !isDone(kept) {
			t.Error("Done open after the step")
		}
		next := s.begin(context.Background(), time.Hour)
		defer s.end()
		if next == kept {
			t.Fatal("the next step got the same context")
		}
		if kept.Err() == nil || isDone(next) {
			t.Errorf("during the next step: kept Err() = %v, next done %t; want the kept one ended, the next live", kept.Err(), isDone(next))
		}
	})
	t.Run("waiting on Done across the end", func(t *testing.T) {
		var s stepDeadline
		kept := s.begin(context.Background(), time.Hour)
		done := kept.Done()
		s.end()
		select {
		case <-done:
		default:
			t.Fatal("the Done channel asked for during the step is open after it")
		}
	})
	t.Run("deadline", func(t *testing.T) {
		var s stepDeadline
		kept := s.begin(context.Background(), time.Millisecond)
		waitDone(t, kept)
		s.end()
		s.begin(context.Background(), time.Hour)
		defer s.end()
		if err := kept.Err(); err != context.DeadlineExceeded {
			t.Errorf("Err() of a step that timed out, during the next step = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("parent cancelled after the step", func(t *testing.T) {
		var s stepDeadline
		parent, cancel := context.WithCancel(context.Background())
		kept := s.begin(parent, time.Hour)
		s.end()
		cancel()
		s.begin(parent, time.Hour)
		defer s.end()
		if kept.Err() == nil || !isDone(kept) {
			t.Errorf("kept: Err() = %v, done %t; want ended", kept.Err(), isDone(kept))
		}
	})
}

// TestMultiControllerStepContextEnds: the context a MultiController hands
// its Telemetry and Enforcer ends with the step, and each step has its own.
func TestMultiControllerStepContextEnds(t *testing.T) {
	var tels, enfs []context.Context
	tel := TelemetryFunc(func(ctx context.Context, obs *Observation) error {
		tels = append(tels, ctx)
		if err := ctx.Err(); err != nil {
			t.Errorf("Collect's context is already ended: %v", err)
		}
		obs.Time = time.Now()
		for i := range obs.Flows {
			obs.Flows[i] = FlowSample{Throughput: 1e6}
		}
		return nil
	})
	enf := EnforcerFunc(func(ctx context.Context, _ FlowID, _ int) error {
		enfs = append(enfs, ctx)
		return nil
	})
	cfg := DefaultMultiConfig()
	cfg.Interval = time.Millisecond
	// Neither the step's timeout nor the samples' age may end a step here,
	// whatever else loads the machine: the test is about the context ending
	// with its step, not about time running out (both default to the
	// interval's order).
	cfg.StepTimeout, cfg.MaxSampleAge = time.Minute, time.Minute
	cfg.Baseline = &Baseline{Overflow: 1e6, FlowCount: 10, Throughput: 1e6}
	parts := FlowParts{
		Encoder: func(ProtectedFlow) (StateEncoder, error) { return placementEncoder{}, nil },
		Policy: func(ProtectedFlow) (Policy, error) {
			return PolicyFunc(func([]float64, *Input) error { return nil }), nil
		},
		Gate: func(ProtectedFlow) (Gate, error) {
			return GateFunc(func(d *Decision) { d.Target = (d.Current + 1) % 4 }), nil // always move on
		},
	}
	m, err := NewMultiController(cfg, tel, parts, enf)
	if err != nil {
		t.Fatal(err)
	}
	f := FlowID{Src: netip.AddrFrom4([4]byte{10, 0, 0, 1}), Dst: netip.AddrFrom4([4]byte{10, 0, 0, 8}), SrcPort: 5000, DstPort: 5201, Proto: ProtoTCP}
	if err := m.AddFlow(ProtectedFlow{ID: f}, 0); err != nil {
		t.Fatal(err)
	}
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 4 {
		time.Sleep(2 * time.Millisecond)
		m.Step(parent)
	}
	if len(tels) != 4 || len(enfs) == 0 {
		t.Fatalf("%d collects, %d placements; want 4 and some", len(tels), len(enfs))
	}
	for i, ctx := range append(tels, enfs...) {
		if err := ctx.Err(); err != context.Canceled || !isDone(ctx) {
			t.Errorf("context %d kept past its step: Err() = %v, done %t; want context.Canceled, done", i, err, isDone(ctx))
		}
	}
	for i := 1; i < len(tels); i++ {
		if tels[i] == tels[i-1] {
			t.Errorf("steps %d and %d handed Collect the same context", i, i+1)
		}
	}
}

// TestStepDeadlineLateTimer checks that a timer run meant for an earlier
// step does not end the current one.
func TestStepDeadlineLateTimer(t *testing.T) {
	var s stepDeadline
	s.begin(context.Background(), 20*time.Millisecond)
	s.end()
	ctx := s.begin(context.Background(), time.Hour)
	defer s.end()
	s.expire() // as a run of the timer that started before Reset
	time.Sleep(40 * time.Millisecond)
	if isDone(ctx) || ctx.Err() != nil {
		t.Errorf("an earlier step's timer ended the step: Err() = %v", ctx.Err())
	}
}

// TestStepDeadlineWatch checks that the watch of the parent lasts one step
// unless held, follows a change of parent, and goes with release.
func TestStepDeadlineWatch(t *testing.T) {
	watching := func(s *stepDeadline) bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.stopWatch != nil
	}
	p1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	p2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()

	var s stepDeadline
	_ = s.begin(context.Background(), time.Hour).Done()
	if watching(&s) {
		t.Error("watching context.Background, which is never cancelled")
	}
	s.end()
	ctx := s.begin(p1, time.Hour)
	if watching(&s) {
		t.Error("watching the parent before anyone asked for Done")
	}
	_ = ctx.Done()
	if !watching(&s) {
		t.Error("not watching the parent while a callee waits on Done")
	}
	s.end()
	if watching(&s) {
		t.Error("still watching the parent after an unheld step")
	}

	s.hold()
	_ = s.begin(p1, time.Hour).Done()
	s.end()
	if !watching(&s) {
		t.Error("held: the watch of the parent did not outlast the step")
	}
	_ = s.begin(p2, time.Hour)
	if watching(&s) {
		t.Error("held: the first parent is still watched in a step of another")
	}
	s.end()
	_ = s.begin(p2, time.Hour).Done()
	s.end()
	s.release()
	if watching(&s) {
		t.Error("still watching the parent after release")
	}
}

// TestMultiControllerRunReleasesWatch checks that Run keeps one watch of
// its context for all its steps and drops it when it returns.
func TestMultiControllerRunReleasesWatch(t *testing.T) {
	var m *MultiController
	var steps, watched atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tel := TelemetryFunc(func(ctx context.Context, obs *Observation) error {
		m.dl.mu.Lock()
		w := m.dl.stopWatch != nil
		m.dl.mu.Unlock()
		if w {
			watched.Add(1)
		}
		_ = ctx.Done()
		if steps.Add(1) == 5 {
			cancel()
		}
		return errors.New("no sample")
	})
	cfg := DefaultMultiConfig()
	cfg.Interval = time.Millisecond
	parts := FlowParts{
		Encoder: func(ProtectedFlow) (StateEncoder, error) { return placementEncoder{}, nil },
		Policy: func(ProtectedFlow) (Policy, error) {
			return PolicyFunc(func([]float64, *Input) error { return nil }), nil
		},
		Gate: func(ProtectedFlow) (Gate, error) { return GateFunc(func(*Decision) {}), nil },
	}
	enf := EnforcerFunc(func(context.Context, FlowID, int) error { return nil })
	var err error
	if m, err = NewMultiController(cfg, tel, parts, enf); err != nil {
		t.Fatal(err)
	}
	f := FlowID{Src: netip.AddrFrom4([4]byte{10, 0, 0, 1}), Dst: netip.AddrFrom4([4]byte{10, 0, 0, 8}), SrcPort: 5000, DstPort: 5201, Proto: ProtoTCP}
	if err := m.AddFlow(ProtectedFlow{ID: f}, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(ctx); err != context.Canceled {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if n, w := steps.Load(), watched.Load(); w != n-1 {
		t.Errorf("the parent was watched when %d of %d steps began, want all but the first", w, n)
	}
	m.dl.mu.Lock()
	defer m.dl.mu.Unlock()
	if m.dl.stopWatch != nil || m.dl.held {
		t.Errorf("after Run returned: watching %t, held %t; want neither", m.dl.stopWatch != nil, m.dl.held)
	}
}

// placementEncoder is a StateEncoder that writes the placement only.
type placementEncoder struct{}

func (placementEncoder) Dim() int { return 34 }

func (placementEncoder) Encode(dst State, obs *Observation, current int) error {
	dst[current] = 1
	return nil
}

// TestStepDeadlineReentrant: a step started while one is in progress (a
// callee stepping with the step's context) gets a context of its own; the
// outer step keeps its deadline, its timer and its values.
func TestStepDeadlineReentrant(t *testing.T) {
	type key struct{}
	var s stepDeadline
	parent := context.WithValue(context.Background(), key{}, "outer")
	outer, cancelOuter := s.start(parent, 30*time.Millisecond)
	defer s.stop(cancelOuter)
	inner, cancelInner := s.start(outer, time.Hour)
	if inner == outer {
		t.Fatal("the inner step reused the outer step's context")
	}
	if v := inner.Value(key{}); v != "outer" {
		t.Errorf("inner Value = %v, want the outer parent's value", v)
	}
	s.stop(cancelInner)
	if v := outer.Value(key{}); v != "outer" {
		t.Errorf("outer Value after the inner step = %v, want %q", v, "outer")
	}
	waitDone(t, outer) // the inner end must not have stopped the outer timer
	if err := outer.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("outer Err = %v, want DeadlineExceeded", err)
	}
}
