package serve

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// serveBound serves h on a loopback connBound of max connections, with
// header and idle timeouts long enough that only the bound closes a
// stalled connection.
func serveBound(t *testing.T, max int, h http.Handler) (*connBound, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newConnBound(ln, max, prometheus.NewCounter(prometheus.CounterOpts{Name: "evicted"}))
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute, ConnState: l.track}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve = %v, want http.ErrServerClosed", err)
		}
	})
	return l, "http://" + ln.Addr().String() + "/"
}

func (l *connBound) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Issue 24: idle and half-open connections to /metrics took every
// descriptor of the process until their timeouts (a SIGHUP could not open
// the config file; a scrape waited behind them). At the bound the oldest
// stalled connection is closed for the new one: a request is answered at
// once behind 50 stalled clients, and the server never holds more than
// the bound.
func TestConnBoundServesThroughStalledClients(t *testing.T) {
	const max = 4
	l, url := serveBound(t, max, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	var stalled []net.Conn
	defer func() {
		for _, c := range stalled {
			c.Close()
		}
	}()
	for i := range 50 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n") // the header never ends
		}
		stalled = append(stalled, c)
	}
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		t.Fatalf("GET behind 50 stalled connections: %v", err)
	}
	resp.Body.Close()
	if n := l.open(); n > max {
		t.Errorf("%d connections open, want at most %d", n, max)
	}
	if got, want := testutil.ToFloat64(l.evicted), float64(50+1-max); got != want {
		t.Errorf("evicted %v connections, want %v", got, want)
	}
	// The oldest stalled connection was closed by the server.
	stalled[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := stalled[0].Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read on the oldest stalled connection: %v, want EOF", err)
	}
}

// A connection in a request is never closed for a new one: with every
// connection busy, new ones wait (at most one of them accepted, the rest
// in the backlog) and are served when the busy ones end.
func TestConnBoundKeepsBusyConnections(t *testing.T) {
	const max = 2
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(max)
	l, url := serveBound(t, max, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wait") != "" {
			entered.Done()
			<-release
		}
		io.WriteString(w, "ok")
	}))
	cl := http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	errs := make(chan error, max+3)
	get := func(u string) {
		resp, err := cl.Get(u)
		if err == nil {
			resp.Body.Close()
		}
		errs <- err
	}
	for range max {
		go get(url + "?wait=1")
	}
	entered.Wait()
	for range 3 {
		go get(url)
	}
	time.Sleep(300 * time.Millisecond)
	if n := l.open(); n > max+1 {
		t.Errorf("%d connections open, want at most %d", n, max+1)
	}
	close(release)
	for range max + 3 {
		if err := <-errs; err != nil {
			t.Errorf("GET: %v", err)
		}
	}
	if got := testutil.ToFloat64(l.evicted); got != 0 {
		t.Errorf("evicted %v connections, want 0 (none stalled)", got)
	}
}
