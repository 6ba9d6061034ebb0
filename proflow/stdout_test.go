package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
)

// failingWriter fails every write with err.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// A failed write to the command's output cancels its context, the error in
// the cause; writes that succeed leave it alone.
func TestStopOnOutputError(t *testing.T) {
	ctx, w, cancel := stopOnOutputError(context.Background(), io.Discard)
	defer cancel()
	if _, err := fmt.Fprintln(w, "fine"); err != nil || ctx.Err() != nil {
		t.Fatalf("a write that succeeds: %v, context %v; want nil, nil", err, ctx.Err())
	}

	ctx, w, cancel = stopOnOutputError(context.Background(), failingWriter{syscall.EPIPE})
	defer cancel()
	if _, err := fmt.Fprintln(w, "lost"); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write: %v, want EPIPE passed on", err)
	}
	if ctx.Err() == nil || !errors.Is(context.Cause(ctx), syscall.EPIPE) {
		t.Fatalf("after a failed write: context %v, cause %v; want cancelled by EPIPE", ctx.Err(), context.Cause(ctx))
	}
}

// withCause says why a cancelled command stopped, once.
func TestWithCause(t *testing.T) {
	signalled, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received"))
	pipe := fmt.Errorf("standard output: %w", syscall.EPIPE)
	closed, cancel := context.WithCancelCause(context.Background())
	cancel(pipe)
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"not cancelled", context.Background(), errors.New("boom"), "boom"},
		{"cancelled, error without the cause", signalled, errors.New("ip: signal: killed"), "ip: signal: killed (interrupt signal received)"},
		{"cancelled, error is the cancellation", signalled, fmt.Errorf("run: %w", context.Canceled), "run: context canceled (interrupt signal received)"},
		{"error holds the cause", closed, fmt.Errorf("run: %w", pipe), "run: standard output: broken pipe"},
		{"error holds what the cause wraps", closed, fmt.Errorf("print: %w", syscall.EPIPE), "print: broken pipe"},
	} {
		got := withCause(c.ctx, c.err)
		if got.Error() != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: %v does not wrap %v", c.name, got, c.err)
		}
		if strings.Count(got.Error(), "broken pipe") > 1 {
			t.Errorf("%s: %q says broken pipe twice", c.name, got)
		}
	}
}
