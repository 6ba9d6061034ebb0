package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/etcdtest"
	"github.com/proflow-sdn/proflow/internal/syncbuf"
)

// cutProxy forwards TCP connections to one etcd member, and can cut them:
// the member's client loses its streams while etcd goes on.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newCutProxy forwards to the host:port of the client URL target until the
// test ends.
func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: strings.TrimPrefix(target, "http://"), conns: make(map[net.Conn]struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

// URL is the proxy's client URL.
func (p *cutProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *cutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

// forward copies between c and a new connection to the target, until
// either side ends or cut closes both.
func (p *cutProxy) forward(c net.Conn) {
	defer c.Close()
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		return
	}
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer u.Close()
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		return
	}
	p.conns[c], p.conns[u] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(u, c); done <- struct{}{} }()
	go func() { io.Copy(c, u); done <- struct{}{} }()
	<-done
	c.Close()
	u.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, u)
	p.mu.Unlock()
}

// cut closes every forwarded connection and refuses new ones until heal.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// heal forwards new connections again.
func (p *cutProxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// watchers returns etcd's count of its watchers (its /metrics).
func watchers(t *testing.T, client string) int {
	t.Helper()
	resp, err := http.Get(client + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "etcd_debugging_mvcc_watcher_total "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("no etcd_debugging_mvcc_watcher_total in %s/metrics (%v)", client, sc.Err())
	return 0
}

// When etcd ends one of the member's two watches (here: it resumes, after
// a lost connection, from a revision compacted meanwhile), the member
// watches again and leaves no watch behind: etcd has the member's two
// watchers, not three. Before the fix the other watch kept running, unread
// and holding every event it received, for as long as the member lived,
// and one more each time.
func TestWatchEndedLeavesNoWatcher(t *testing.T) {
	etcdOrSkip(t)
	c, err := etcdtest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	admin := adminClient(t, c)
	p := newCutProxy(t, c.Endpoints()[0])
	const prefix = "/t/watchend/"
	var log syncbuf.Buffer
	cfg := testConfig([]string{p.URL()}, prefix, "a", 10*time.Second)
	// Only a watch event makes the member balance (and so claim a shard
	// again) within the test.
	cfg.KeepAliveInterval, cfg.BalanceInterval = 500*time.Millisecond, time.Hour
	cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	client := c.Endpoints()[0]
	waitFor(t, 20*time.Second, "a owns every shard", func() bool { return len(m.Owned()) == cfg.Shards })
	waitFor(t, 5*time.Second, "a watches the member and owner keys", func() bool { return watchers(t, client) == 2 })

	// An owner key deleted: the owner watch sees it (the member claims the
	// shard again), the member watch, opened before, sees nothing.
	ep, _ := m.Epoch(0)
	del, err := admin.Delete(context.Background(), fmt.Sprintf("%sowners/%04d", prefix, 0))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a claims shard 0 again", func() bool { e, ok := m.Epoch(0); return ok && e != ep })

	// Cut from etcd, compact up to the delete, reconnect: the member watch
	// resumes from a compacted revision and ends (ErrCompacted), the owner
	// watch resumes after the delete.
	p.cut()
	if _, err := admin.Compact(context.Background(), del.Header.Revision); err != nil {
		t.Fatal(err)
	}
	p.heal()

	// Settled: the member watches again (one keepalive interval after a
	// watch ends, once its client has reconnected), and etcd's count of
	// watchers then stays the same for 4 keepalive intervals.
	var last, n int
	var since time.Time
	waitFor(t, 20*time.Second, "etcd's watcher count settles at 2 or more", func() bool {
		n = watchers(t, client)
		if n != last || since.IsZero() {
			last, since = n, time.Now()
		}
		return n >= 2 && time.Since(since) > 4*cfg.KeepAliveInterval
	})
	if n != 2 {
		t.Errorf("etcd has %d watchers after the member watched again, want its 2 (members/, owners/)", n)
	}
	if !strings.Contains(log.String(), "compacted") {
		t.Errorf("the member logged no watch ended on a compacted revision; log:\n%s", log.String())
	}
}
