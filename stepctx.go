package proflow

import (
	"context"
	"sync"
	"time"
)

// stepRing is how many step contexts a stepDeadline keeps in rotation: an
// unused context is armed again stepRing steps after its own.
const stepRing = 8

// closedDone is the Done channel of a step context that ended before
// anyone asked for Done.
var closedDone = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// stepDeadline makes the contexts of a controller's steps: each has its
// parent's values and cancellation with the step's deadline, as
// context.WithTimeout gives, and ends with its step, as the cancel of
// context.WithTimeout would end it; unlike context.WithTimeout, a step
// allocates nothing in steady state. begin starts a step and returns its
// context, end finishes it.
//
// Every step gets a context (a *stepCtx) of its own, taken in turn from a
// ring of stepRing. end finishes it: from then on its Err is
// context.Canceled, or DeadlineExceeded or the parent's error if that
// came first, and its Done is closed, whatever steps follow. A context
// whose methods nobody called since its step began — the in-memory
// telemetry and enforcers never look at theirs — is armed again stepRing
// steps later, so that steps allocate nothing; one that was used (a
// southbound deriving a context from it, waiting on Done, reading its
// deadline, value or Err) may have been kept, and is never armed again: the
// ring gets a new one in its place, one allocation (two with Done) in a
// step whose callees use their context. The one case left is a context
// kept without being used and first used more than stepRing steps later:
// it then reads as the later step's. Nothing in this repository does that.
//
// One timer serves every step (Reset by begin, stopped by end), and ends
// the step in progress at its deadline. The parent's cancellation is
// watched only once someone asks for Done during a step: until then nobody
// can wait for it, and Err looks at the parent itself. The watch
// (context.AfterFunc) is made once per parent Done channel; end drops it
// unless the deadline is held (hold), which Run does, stepping with one
// parent until it returns and calls release. A parent whose Done is nil,
// such as context.Background, is never watched.
//
// A context derived from a step's (context.WithTimeout in a southbound)
// watches it with a goroutine of its own, as for any context not made by
// the context package, which ends when either ends.
//
// The contexts' methods are safe to call from any goroutine; begin, end,
// hold and release are called by the goroutine that steps.
type stepDeadline struct {
	mu    sync.Mutex // guards the fields below and those of every stepCtx
	cur   *stepCtx   // the step in progress, nil between steps
	ring  [stepRing]*stepCtx
	next  int         // the ring's entry for the next step
	timer *time.Timer // made by the first begin

	held      bool            // keep the watch between steps, until release
	watched   <-chan struct{} // the parent Done channel the watch is for
	stopWatch func() bool
}

// stepCtx is the context of one step. Its fields are guarded by s.mu.
type stepCtx struct {
	s          *stepDeadline
	parent     context.Context
	parentDone <-chan struct{} // parent.Done(), nil for none
	deadline   time.Time
	done       chan struct{} // made when asked for, closed when the context ends
	err        error         // nil while the step is in progress and live
	used       bool          // a method was called since begin: never armed again
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
	busy := s.cur != nil
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
// that is sooner, or when parent is cancelled, or at end, and returns its
// context.
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
	c := s.ring[s.next]
	if c == nil || c.used {
		c = &stepCtx{s: s}
		s.ring[s.next] = c
	}
	s.next = (s.next + 1) % stepRing
	c.parent, c.parentDone, c.deadline, c.done, c.err = parent, pdone, deadline, nil, nil
	s.cur = c
	select {
	case <-pdone: // a nil channel never is ready
		c.finish(parent.Err())
		return c
	default:
	}
	wait := deadline.Sub(now)
	switch {
	case wait <= 0:
		c.finish(context.DeadlineExceeded)
	case s.timer == nil:
		s.timer = time.AfterFunc(wait, s.expire)
	default:
		s.timer.Reset(wait)
	}
	return c
}

// end finishes the step: its context ends (context.Canceled unless it
// ended before), the timer stops, and the watch of the parent goes unless
// the deadline is held.
func (s *stepDeadline) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur; c != nil && c.err == nil {
		c.finish(context.Canceled)
	}
	s.cur = nil
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
	c := s.cur
	if c == nil || c.err != nil {
		return
	}
	// The timer may fire for an earlier step (Reset does not wait for a
	// run that has started), and a parent's deadline without a monotonic
	// reading moves with the wall clock: wait for this step's deadline.
	if wait := time.Until(c.deadline); wait > 0 {
		s.timer.Reset(wait)
		return
	}
	c.finish(context.DeadlineExceeded)
}

// cancelled is the watch's function for the parent Done channel d.
func (s *stepDeadline) cancelled(d <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur; c != nil && c.err == nil && c.parentDone == d {
		c.finish(c.parent.Err())
	}
}

// watch asks to be told when the step's parent is cancelled. Call with mu
// held.
func (s *stepDeadline) watch(c *stepCtx) {
	s.unwatch()
	d := c.parentDone
	s.watched = d
	s.stopWatch = context.AfterFunc(c.parent, func() { s.cancelled(d) })
}

// unwatch drops the watch of the parent, if any. Call with mu held.
func (s *stepDeadline) unwatch() {
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.watched, s.stopWatch = nil, nil
}

// finish ends c with err, closing its Done channel if it has one. Call
// with s.mu held.
func (c *stepCtx) finish(err error) {
	if err == nil { // a parent whose Err is nil after its Done closed
		err = context.Canceled
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
}

// Deadline returns the step's deadline.
func (c *stepCtx) Deadline() (time.Time, bool) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.used = true
	return c.deadline, true
}

// Done returns a channel closed when the step ends: at its deadline, at
// its parent's cancellation, or when the controller finishes it.
func (c *stepCtx) Done() <-chan struct{} {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c.used = true
	if c.err != nil {
		if c.done == nil {
			return closedDone
		}
		return c.done
	}
	if c.parentDone != nil && s.watched != c.parentDone {
		s.watch(c)
	}
	if c.done == nil {
		c.done = make(chan struct{})
	}
	return c.done
}

// Err returns nil during the step, and after it context.DeadlineExceeded
// if its deadline passed, the parent's Err if the parent was cancelled,
// and context.Canceled if the step ended first.
func (c *stepCtx) Err() error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.used = true
	if c.err == nil {
		select {
		case <-c.parentDone: // not watched: nobody waits for Done
			c.finish(c.parent.Err())
		default:
		}
	}
	return c.err
}

// Value returns the parent's value for key. The context package's own
// lookups go to the parent too, so context.Cause of the step's context is
// the parent's cause (nil while the parent is live) rather than
// DeadlineExceeded after a timeout; a context derived from it gets the
// right cause, and proflow reads only Err.
func (c *stepCtx) Value(key any) any {
	c.s.mu.Lock()
	c.used = true
	p := c.parent
	c.s.mu.Unlock()
	return p.Value(key)
}
