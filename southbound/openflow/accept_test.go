package openflow_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// flakyListener fails its first n Accepts with err, then accepts from ln.
type flakyListener struct {
	net.Listener
	n   atomic.Int32
	err error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, l.err
	}
	return l.Listener.Accept()
}

// Issue 24: the accept loop returned on any error but a timeout, so a
// process out of descriptors (accept4: too many open files) stopped
// serving. A temporary error is retried after a back-off and counted.
func TestServeOutlivesTemporaryAcceptErrors(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED} {
		t.Run(errno.Error(), func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			fl := &flakyListener{Listener: ln, err: &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}}
			fl.n.Store(5)
			cfg := testConfig()
			reg := prometheus.NewRegistry()
			cfg.Registerer = reg
			srv, err := openflow.NewServer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx, fl) }()
			// A connection after the errors is accepted (and its failed
			// handshake counted).
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			deadline := time.Now().Add(10 * time.Second)
			for testutil.ToFloat64(mustGet(t, reg, "proflow_openflow_handshake_failures_total")) < 1 {
				select {
				case err := <-done:
					t.Fatalf("Serve returned %v after a temporary accept error, want it to keep serving", err)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatal("the connection after the accept errors was not handled")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if got := testutil.ToFloat64(mustGet(t, reg, "proflow_openflow_accept_errors_total")); got != 5 {
				t.Errorf("accept_errors_total = %v, want 5", got)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Serve = %v, want context.Canceled", err)
			}
		})
	}
}

// A permanent accept error still ends Serve, naming the cause.
func TestServeReturnsOnPermanentAcceptError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fl := &flakyListener{Listener: ln, err: fmt.Errorf("boom: %w", net.ErrClosed)}
	fl.n.Store(1)
	srv, err := openflow.NewServer(testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(context.Background(), fl); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve = %v, want the accept error", err)
	}
}
