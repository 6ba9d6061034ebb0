package openflow

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/proflow-sdn/proflow"
)

// Issue 24: every connection that stalled in the handshake held its
// descriptor for HandshakeTimeout, so 2,000 of them under a limit of 256
// descriptors kept the process out of descriptors and a switch could not
// connect. At maxHandshakes the oldest is closed for the next: a new
// connection is greeted at once behind maxHandshakes+20 stalled ones, the
// 21 oldest are closed (and counted as failed handshakes), and no more
// than maxHandshakes are in handshake.
func TestServeBoundsHandshakes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Fabric, cfg.Topology = PaperFabric(), proflow.PaperTopology()
	cfg.HandshakeTimeout = time.Minute // only the bound closes them
	cfg.Registerer = prometheus.NewRegistry()
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	}()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	var stalled []net.Conn
	for i := range maxHandshakes + 20 {
		c := dial()
		if i%2 == 1 {
			c.Write([]byte{0x04, 0x00, 0x00}) // a header cut short
		}
		stalled = append(stalled, c)
	}
	hello := func(c net.Conn) error {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var h [8]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return err
		}
		if h[0] != 0x04 || h[1] != 0 {
			return errors.New("not an OpenFlow 1.3 hello")
		}
		_, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint16(h[2:]))-8)
		return err
	}
	start := time.Now()
	if err := hello(dial()); err != nil {
		t.Fatalf("a new connection behind %d stalled ones: %v, want a hello", len(stalled), err)
	}
	t.Logf("greeted after %v", time.Since(start).Round(time.Millisecond))
	// The oldest: greeted, then closed.
	if err := hello(stalled[0]); err != nil {
		t.Fatalf("the oldest stalled connection: %v, want a hello", err)
	}
	if n, err := stalled[0].Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the oldest stalled connection after its hello: %d bytes, %v, want EOF (closed by the server)", n, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(srv.m.handshakeFailures) < 21 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := testutil.ToFloat64(srv.m.handshakeFailures); got != 21 {
		t.Errorf("handshake failures %v, want 21 (the oldest closed for newer connections)", got)
	}
	srv.mu.Lock()
	n := len(srv.greeting)
	srv.mu.Unlock()
	if n != maxHandshakes {
		t.Errorf("%d connections in handshake, want %d", n, maxHandshakes)
	}
}
