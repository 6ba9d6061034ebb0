package cluster

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// Issue 24: with etcd unreachable Join hung until a signal: its first
// requests ran without a deadline and the client dials lazily. It fails
// within DialTimeout, naming the endpoints.
func TestJoinFailsWithinDialTimeout(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	// A port that accepts and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	for name, addr := range map[string]string{"closed port": closedAddr, "silent port": silent.Addr().String()} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig("r1", "http://"+addr)
			cfg.DialTimeout = 500 * time.Millisecond
			start := time.Now()
			m, err := Join(context.Background(), cfg)
			took := time.Since(start)
			if err == nil {
				m.Close(context.Background())
				t.Fatal("Join succeeded, want an error")
			}
			if took > 5*time.Second {
				t.Errorf("Join took %v, want about the dial timeout (500ms)", took)
			}
			if !strings.Contains(err.Error(), "did not answer within 500ms") || !strings.Contains(err.Error(), addr) {
				t.Errorf("Join = %v, want it to name the endpoint and the timeout", err)
			}
		})
	}
}
