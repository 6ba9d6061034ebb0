package ovsfabric

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/hostagent"
)

// gapPoll is how often an onoff sender in a gap looks whether its next
// burst is due.
const gapPoll = 2 * time.Millisecond

// ackBytes is the size of an rr server's answer to one request: the
// request's number, big-endian.
const ackBytes = 8

// RRReport is one report of an rr flow's client: the requests that
// completed in the last report interval, by its own clock. Times are
// seconds.
type RRReport struct {
	Time time.Time `json:"time"`
	// Completions counts the requests completed in the interval.
	Completions int `json:"completions"`
	// P50 and P99 are the median and 99th percentile (nearest rank) of
	// their completion times, from when each request was due to when its
	// acknowledgement arrived; the oldest request still outstanding at the
	// end of the interval counts with its age so far (a lower bound), so
	// that a stall shows in the interval it happens in. Zero when neither
	// exists.
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	// Outstanding counts the requests issued and not yet answered at the
	// end of the interval.
	Outstanding int `json:"outstanding"`
}

// readReports decodes the JSON lines of a traffic generator's standard
// output onto ch (dropping those nobody reads, and lines of another
// shape) until out ends, then closes ch.
func readReports[T any](out io.Reader, ch chan<- T) {
	defer close(ch)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var r T
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			select {
			case ch <- r:
			default: // nobody reading: drop
			}
		}
	}
	_, _ = io.Copy(io.Discard, out)
}

// acker is an rr server's side of one connection: it answers every
// every bytes received with the request's number.
type acker struct {
	every, pending int64 // pending: bytes of the current request so far
	seq            uint64
	buf            [ackBytes]byte
}

// received counts n bytes received on c and answers the requests they
// complete.
func (a *acker) received(c net.Conn, n int) error {
	if a.every <= 0 {
		return nil
	}
	for a.pending += int64(n); a.pending >= a.every; a.pending -= a.every {
		binary.BigEndian.PutUint64(a.buf[:], a.seq)
		a.seq++
		if _, err := c.Write(a.buf[:]); err != nil {
			return err
		}
	}
	return nil
}

// rrClient is the state of an rr flow's client: the due times of the
// requests written and not yet answered, oldest first, and the completion
// times of the current report interval.
type rrClient struct {
	mu      sync.Mutex
	pending []time.Time
	done    []float64
	next    uint64 // the number of the oldest pending request
}

// runRR runs an rr flow's client: one connection to addr (from bindPort
// with cc), requests of k.RequestBytes due every 1/k.RequestRate seconds
// (periodic) or as a Poisson process of that rate seeded with seed, each
// written when due (after the earlier ones, so a blocked connection delays
// the later ones, whose completion times then include the wait), and an
// RRReport on standard output every report. A connection that fails is
// opened again; the requests it had outstanding are dropped.
func runRR(addr string, bindPort int, cc string, k sim.FlowKind, seed uint64, report time.Duration) error {
	if addr == "" {
		return errors.New("rr: -connect is required")
	}
	if k.RequestBytes < 1 || !(k.RequestRate > 0) {
		return fmt.Errorf("rr: request of %d bytes at %v per second, want a positive size and rate", k.RequestBytes, k.RequestRate)
	}
	cl := &rrClient{}
	go cl.report(nil, os.Stdout, report) // until the process ends
	gap := time.Duration(float64(time.Second) / k.RequestRate)
	rng := rand.New(rand.NewPCG(seed, 0x7272636c69656e74))
	wait := func() time.Duration {
		if k.Arrivals == sim.ArrivalsPoisson {
			return time.Duration(rng.ExpFloat64() * float64(gap))
		}
		return gap
	}
	req := make([]byte, k.RequestBytes)
	for {
		d := net.Dialer{Timeout: 2 * time.Second, Control: senderControl(bindPort != 0, cc)}
		if bindPort != 0 {
			d.LocalAddr = &net.TCPAddr{Port: bindPort}
		}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		cl.reset()
		var readErr error
		readDone := make(chan struct{})
		go func() { defer close(readDone); readErr = cl.readAcks(c) }()
		due := time.Now()
	requests:
		for {
			if d := time.Until(due); d > 0 {
				select {
				case <-readDone:
					break requests
				case <-time.After(d):
				}
			}
			cl.issue(due)
			if _, err := c.Write(req); err != nil {
				break
			}
			due = due.Add(wait())
		}
		c.Close()
		<-readDone
		if readErr != nil && !errors.Is(readErr, net.ErrClosed) && !errors.Is(readErr, io.EOF) {
			fmt.Fprintln(os.Stderr, "traffic: rr:", readErr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// reset drops the requests of a connection that failed.
func (cl *rrClient) reset() {
	cl.mu.Lock()
	cl.pending, cl.next = cl.pending[:0], 0
	cl.mu.Unlock()
}

// issue records a request due at due, about to be written.
func (cl *rrClient) issue(due time.Time) {
	cl.mu.Lock()
	cl.pending = append(cl.pending, due)
	cl.mu.Unlock()
}

// readAcks reads the server's acknowledgements on c and completes the
// oldest pending request with each, until c fails.
func (cl *rrClient) readAcks(c net.Conn) error {
	var buf [ackBytes]byte
	for {
		if _, err := io.ReadFull(c, buf[:]); err != nil {
			return err
		}
		now := time.Now()
		seq := binary.BigEndian.Uint64(buf[:])
		cl.mu.Lock()
		if len(cl.pending) == 0 || seq != cl.next {
			n := len(cl.pending)
			cl.mu.Unlock()
			return fmt.Errorf("acknowledgement of request %d, want %d (%d pending)", seq, cl.next, n)
		}
		cl.done = append(cl.done, now.Sub(cl.pending[0]).Seconds())
		cl.pending = cl.pending[1:]
		cl.next++
		cl.mu.Unlock()
	}
}

// report writes an RRReport to w every interval until stop closes.
func (cl *rrClient) report(stop <-chan struct{}, w io.Writer, every time.Duration) {
	enc := json.NewEncoder(w)
	t := time.NewTicker(every)
	defer t.Stop()
	var xs []float64
	for {
		var now time.Time
		select {
		case <-stop:
			return
		case now = <-t.C:
		}
		cl.mu.Lock()
		xs = append(xs[:0], cl.done...)
		n := len(xs)
		cl.done = cl.done[:0]
		if len(cl.pending) > 0 {
			xs = append(xs, now.Sub(cl.pending[0]).Seconds())
		}
		r := RRReport{Time: now, Completions: n, Outstanding: len(cl.pending)}
		cl.mu.Unlock()
		r.P50, r.P99 = hostagent.Percentile(xs, 0.5), hostagent.Percentile(xs, 0.99)
		_ = enc.Encode(r)
	}
}
