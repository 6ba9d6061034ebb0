package serve

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// maxHTTPConns bounds the open connections of the /metrics and /healthz
// endpoint (connBound), so that clients that connect and stall cannot take
// the descriptors the process needs for the rest: the config file a SIGHUP
// reads, etcd, the switches. Without it, 2,000 idle connections under a
// limit of 256 descriptors made every SIGHUP fail with "too many open
// files" (issue 24).
const maxHTTPConns = 64

// stallGrace is how long a connection must have stalled before connBound
// closes it for a new one: time for a fresh client's request, sent with
// its connection, to be read. With maxHTTPConns it bounds the rate at
// which stalled clients are cleared: 640 a second.
const stallGrace = 100 * time.Millisecond

// connBound is a listener for an http.Server (its ConnState must be
// connBound.track) that keeps at most max connections open. At the bound,
// it accepts the next connection only when an open one stalls, and closes
// that one: the oldest that has not sent a whole request yet
// (http.StateNew) or has waited idle between requests (http.StateIdle) for
// stallGrace or longer. So a scraper, which sends its request with its
// connection, is served while thousands of clients stall, each stalled one
// holding its descriptor only until newer ones need it (or the server's
// ReadHeaderTimeout or IdleTimeout ends it). While no open connection
// stalls, Accept waits, and new connections wait in the kernel's backlog,
// which holds no descriptor of the process. (For a moment the bound may be
// max+1: when the connection it would close became busy just before the
// new one was accepted.)
type connBound struct {
	net.Listener
	max     int
	evicted prometheus.Counter

	mu      sync.Mutex
	seq     uint64
	conns   map[net.Conn]*boundConn
	changed chan struct{} // closed and replaced when a connection stalls or closes
	done    chan struct{} // closed by Close
	once    sync.Once
}

type boundConn struct {
	seq     uint64    // accept order
	stalled bool      // StateNew or StateIdle
	since   time.Time // of the stall
}

func newConnBound(ln net.Listener, max int, evicted prometheus.Counter) *connBound {
	return &connBound{Listener: ln, max: max, evicted: evicted, conns: map[net.Conn]*boundConn{},
		changed: make(chan struct{}), done: make(chan struct{})}
}

// Accept waits until a connection may be added (below the bound, or one
// open connection stalls), accepts the next and closes the oldest stalled
// one if the bound is reached.
func (l *connBound) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		room, wait := len(l.conns) < l.max, time.Duration(0)
		if !room {
			var victim net.Conn
			victim, wait = l.stalled(time.Now())
			room = victim != nil
		}
		changed := l.changed
		l.mu.Unlock()
		if room {
			break
		}
		if wait == 0 {
			wait = time.Hour // none stalls: a change wakes it
		}
		ripe := time.NewTimer(wait)
		select {
		case <-changed:
		case <-ripe.C:
		case <-l.done:
			ripe.Stop()
			return nil, net.ErrClosed
		}
		ripe.Stop()
	}
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	l.mu.Lock()
	var victim net.Conn
	if len(l.conns) >= l.max {
		victim, _ = l.stalled(now)
		delete(l.conns, victim)
	}
	l.seq++
	l.conns[c] = &boundConn{seq: l.seq, stalled: true, since: now}
	l.mu.Unlock()
	if victim != nil {
		_ = victim.Close()
		l.evicted.Inc()
	}
	return c, nil
}

// stalled returns the oldest connection (in accept order) that has stalled
// for stallGrace or longer at now, or else nil and how long until the
// first stalled one will have (0 when none stalls). l.mu held.
func (l *connBound) stalled(now time.Time) (net.Conn, time.Duration) {
	var old net.Conn
	var seq uint64
	var next time.Duration
	for c, bc := range l.conns {
		if !bc.stalled {
			continue
		}
		if left := bc.since.Add(stallGrace).Sub(now); left > 0 {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		if old == nil || bc.seq < seq {
			old, seq = c, bc.seq
		}
	}
	return old, next
}

// track follows a connection's state (http.Server.ConnState).
func (l *connBound) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	bc, ok := l.conns[c]
	if !ok {
		return // evicted
	}
	switch st {
	case http.StateActive:
		bc.stalled = false
		return
	case http.StateNew:
		return // stalled since it was accepted
	case http.StateIdle:
		bc.stalled, bc.since = true, time.Now()
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// Close closes the listener and ends a waiting Accept.
func (l *connBound) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}
