package ovsfabric

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

// The rr server answers each complete request once, in order, whatever
// the reads' sizes; the client completes the oldest request with each
// answer and refuses one out of order.
func TestRRAckAndComplete(t *testing.T) {
	srv, cli := net.Pipe()
	defer srv.Close()
	defer cli.Close()
	cl := &rrClient{}
	due := time.Now().Add(-50 * time.Millisecond)
	for range 3 {
		cl.issue(due)
	}
	readErr := make(chan error, 1)
	go func() { readErr <- cl.readAcks(cli) }()
	a := acker{every: 100}
	for _, n := range []int{250, 40, 10} { // 2.5 requests, then the third's last 50 bytes
		if err := a.received(srv, n); err != nil {
			t.Fatal(err)
		}
	}
	if a.seq != 3 || a.pending != 0 {
		t.Errorf("after 300 bytes in requests of 100: %d answers, %d bytes pending; want 3, 0", a.seq, a.pending)
	}
	// A fourth answer with a wrong number ends the client's reader.
	cl.issue(due)
	var b [ackBytes]byte
	binary.BigEndian.PutUint64(b[:], 7)
	if _, err := srv.Write(b[:]); err != nil {
		t.Fatal(err)
	}
	if err := <-readErr; err == nil || !strings.Contains(err.Error(), "request 7, want 3") {
		t.Errorf("an answer out of order: %v, want an error naming both numbers", err)
	}
	cl.mu.Lock()
	done, pending := len(cl.done), len(cl.pending)
	first := cl.done[0]
	cl.mu.Unlock()
	if done != 3 || pending != 1 || first < 0.05 {
		t.Errorf("%d completed (first after %.3f s), %d pending; want 3 (≥ 50 ms), 1", done, first, pending)
	}
}

// A report holds the interval's completions and counts the oldest
// outstanding request with its age.
func TestRRReport(t *testing.T) {
	cl := &rrClient{done: []float64{0.010, 0.012, 0.011}}
	cl.issue(time.Now().Add(-200 * time.Millisecond))
	var out bytes.Buffer
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); cl.report(stop, &out, 5*time.Millisecond) }()
	time.Sleep(30 * time.Millisecond)
	close(stop)
	<-done
	line, _, _ := strings.Cut(out.String(), "\n") // the first report
	var r RRReport
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("report %q: %v", line, err)
	}
	if r.Completions != 3 || r.Outstanding != 1 || r.P50 != 0.011 || r.P99 < 0.2 {
		t.Errorf("report %+v, want 3 completions, 1 outstanding, p50 11 ms (rank 2 of 10, 11, 12 ms and the outstanding one) and p99 the outstanding request's ≥ 200 ms", r)
	}
}
