package proflow

import (
	"context"
	"sync"
	"time"
)

// stepDeadline is the context of one controller step: its parent's values
// and cancellation with the step's deadline, as context.WithTimeout gives,
// but made once and reused by every step, so that a step allocates
// nothing. begin starts a step, end finishes it.
//
// One timer serves every step (Reset by begin, stopped by end) and one done
// channel every step that ends without it closing; a channel closed by the
// deadline or by the parent's cancellation is replaced at the next begin.
//
// The parent's cancellation is watched only once someone asks for Done
// during a step: until then nobody can wait for it, and Err looks at the
// parent itself. The watch (context.AfterFunc) is made once per parent Done
// channel; end drops it unless the deadline is held (hold), which Run does,
// stepping with one parent until it returns and calls release. A parent
// whose Done is nil, such as context.Background, is never watched, and a
// step whose callees never ask for Done (the in-memory telemetry and
// enforcers) watches nothing, whatever its parent.
//
// The context is valid during its step only, like the step's Observation.
// end does not close it, because a channel closed per step would cost an
// allocation per step: a callee that kept it past its return would see
// Done still open between steps and the next step's deadline and
// cancellation as its own. Nothing in this repository keeps it: the
// simulated fabric, the OpenFlow and P4Runtime southbounds, the telemetry
// merge and tcstat use it within the call (they wait for their
// goroutines, cancel the contexts they derive from it before they return,
// and give the background work that outlives a call a context of its own).
//
// A context derived from it (context.WithTimeout in a southbound) watches
// it with a goroutine of its own, as for any context not made by the
// context package, which ends when the derived context is cancelled.
//
// Its methods are safe to call from any goroutine; begin, end, hold and
// release are called by the goroutine that steps.
type stepDeadline struct {
	mu         sync.Mutex
	parent     context.Context
	parentDone <-chan struct{} // parent.Done() of the step, nil for none
	deadline   time.Time
	done       chan struct{}
	err        error       // set when done is closed
	active     bool        // between begin and end
	timer      *time.Timer // made by the first begin

	held      bool            // keep the watch between steps, until release
	watched   <-chan struct{} // the parent Done channel the watch is for
	stopWatch func() bool
}

// start begins a step as begin does and returns its context; stop(cancel)
// ends it. While a step is in progress (a callee stepping again with the
// step's context, or a second goroutine stepping against the
// documentation) start does not touch that step: it falls back to
// context.WithTimeout, which allocates, and returns its cancel, so that
// the outer step keeps its own deadline, timer and values. (Returning
// s.end as a func value would allocate on every step.)
func (s *stepDeadline) start(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	s.mu.Lock()
	busy := s.active
	s.mu.Unlock()
	if busy {
		return context.WithTimeout(parent, timeout)
	}
	return s.begin(parent, timeout), nil
}

// stop ends the step start began: cancel is what start returned.
func (s *stepDeadline) stop(cancel context.CancelFunc) {
	if cancel != nil {
		cancel()
		return
	}
	s.end()
}

// begin starts a step that ends after timeout, or at parent's deadline if
// that is sooner, or when parent is cancelled, and returns its context.
func (s *stepDeadline) begin(parent context.Context, timeout time.Duration) context.Context {
	now := time.Now()
	deadline := now.Add(timeout)
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	pdone := parent.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watched != pdone {
		s.unwatch() // another parent
	}
	s.parent, s.parentDone, s.deadline, s.active = parent, pdone, deadline, true
	if s.done == nil || s.err != nil {
		s.done, s.err = make(chan struct{}), nil
	}
	select {
	case <-pdone: // a nil channel never is ready
		s.finish(parent.Err())
		return s
	default:
	}
	wait := deadline.Sub(now)
	switch {
	case wait <= 0:
		s.finish(context.DeadlineExceeded)
	case s.timer == nil:
		s.timer = time.AfterFunc(wait, s.expire)
	default:
		s.timer.Reset(wait)
	}
	return s
}

// end finishes the step: it stops the timer, and drops the watch of the
// parent unless the deadline is held.
func (s *stepDeadline) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = false
	if s.timer != nil {
		s.timer.Stop()
	}
	if !s.held {
		s.unwatch()
	}
}

// hold keeps the watch of the parent from one step to the next, for a
// caller that steps with one parent until it calls release.
func (s *stepDeadline) hold() {
	s.mu.Lock()
	s.held = true
	s.mu.Unlock()
}

// release undoes hold and drops the watch of the parent.
func (s *stepDeadline) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
	s.unwatch()
}

// expire is the timer's function.
func (s *stepDeadline) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.active || s.err != nil {
		return
	}
	// The timer may fire for an earlier step (Reset does not wait for a
	// run that has started), and a parent's deadline without a monotonic
	// reading moves with the wall clock: wait for this step's deadline.
	if wait := time.Until(s.deadline); wait > 0 {
		s.timer.Reset(wait)
		return
	}
	s.finish(context.DeadlineExceeded)
}

// cancelled is the watch's function for the parent Done channel d.
func (s *stepDeadline) cancelled(d <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active && s.err == nil && s.parentDone == d {
		s.finish(s.parent.Err())
	}
}

// watch asks to be told when the step's parent is cancelled. Call with mu
// held.
func (s *stepDeadline) watch() {
	s.unwatch()
	d := s.parentDone
	s.watched = d
	s.stopWatch = context.AfterFunc(s.parent, func() { s.cancelled(d) })
}

// unwatch drops the watch of the parent, if any. Call with mu held.
func (s *stepDeadline) unwatch() {
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.watched, s.stopWatch = nil, nil
}

// finish closes done with err. Call with mu held.
func (s *stepDeadline) finish(err error) {
	if err == nil { // a parent whose Err is nil after its Done closed
		err = context.Canceled
	}
	s.err = err
	close(s.done)
}

// Deadline returns the step's deadline.
func (s *stepDeadline) Deadline() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deadline, true
}

// Done returns a channel closed when the step's deadline passes or its
// parent is cancelled.
func (s *stepDeadline) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active && s.err == nil && s.parentDone != nil && s.watched != s.parentDone {
		s.watch()
	}
	return s.done
}

// Err returns nil while Done is open, context.DeadlineExceeded after the
// deadline, and the parent's Err after its cancellation.
func (s *stepDeadline) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active && s.err == nil {
		select {
		case <-s.parentDone: // not watched: nobody waits for Done
			s.finish(s.parent.Err())
		default:
		}
	}
	return s.err
}

// Value returns the parent's value for key. The context package's own
// lookups go to the parent too, so context.Cause of the step's context is
// the parent's cause (nil while the parent is live) rather than
// DeadlineExceeded after a timeout; a context derived from it gets the
// right cause, and proflow reads only Err.
func (s *stepDeadline) Value(key any) any {
	s.mu.Lock()
	p := s.parent
	s.mu.Unlock()
	return p.Value(key)
}
