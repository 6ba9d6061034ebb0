package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// stopOnOutputError returns a context that is cancelled, as a signal
// cancels it, when a write to the returned writer (w wrapped) fails: a
// reader that went away (proflow fabric run | head -3), a full disk. The
// command then winds down through its usual teardown (fabric run removes
// its fabric) instead of dying in the middle of it.
//
// It also stops the Go runtime from killing the process with SIGPIPE on a
// write to a closed pipe on standard output or standard error: with SIGPIPE
// caught (os/signal, "SIGPIPE"), such a write fails with EPIPE instead. The
// signal itself is dropped, not acted on: a write to a closed socket raises
// it too and must not stop a command. A handler, unlike SIG_IGN, is not
// inherited by the programs proflow starts (ip, tc, OVS, the traffic
// generators).
func stopOnOutputError(ctx context.Context, w io.Writer) (context.Context, io.Writer, context.CancelFunc) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, &cancelOnError{w: w, cancel: cancel}, func() { cancel(nil) }
}

// cancelOnError passes writes to w and cancels a context on the first one
// that fails.
type cancelOnError struct {
	w      io.Writer
	cancel context.CancelCauseFunc
}

func (c *cancelOnError) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		c.cancel(fmt.Errorf("standard output: %w", err))
	}
	return n, err
}

// withCause adds to err, the error of a command whose context ctx was
// cancelled, why it was ("interrupt signal received", "standard output:
// write /dev/stdout: broken pipe"): a command stopped half-way may fail
// with an error that does not say (an ip command killed while the fabric
// was being built). err is returned as it is when ctx was not cancelled or
// err already holds the cause or what the cause wraps.
func withCause(ctx context.Context, err error) error {
	cause := context.Cause(ctx)
	if cause == nil || errors.Is(err, cause) {
		return err
	}
	if inner := errors.Unwrap(cause); inner != nil && errors.Is(err, inner) {
		return err
	}
	return fmt.Errorf("%w (%v)", err, cause)
}
