package ovsfabric

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// TrafficEnv is the environment variable that turns a binary into the
// traffic generator: set to "sink" or "send", MaybeRunTraffic runs the
// generator with the command-line flags and exits. The fabric starts
// generators inside host namespaces by re-executing the current binary
// (os.Executable) with it, so a program or test binary that starts traffic
// must call MaybeRunTraffic first thing in main or TestMain.
const TrafficEnv = "PROFLOW_TRAFFIC"

// MaybeRunTraffic runs the traffic generator and exits if TrafficEnv is set;
// otherwise it returns at once.
func MaybeRunTraffic() {
	mode := os.Getenv(TrafficEnv)
	if mode == "" {
		return
	}
	if mode == "delay" {
		if err := runDelayLineMain(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "traffic:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	fs := flag.NewFlagSet("traffic", flag.ExitOnError)
	listen := fs.String("listen", ":5201", "sink: address to listen on")
	report := fs.Duration("report", time.Second, "sink: report interval")
	connect := fs.String("connect", "", "send: address to send to")
	streams := fs.Int("streams", 1, "send: parallel TCP connections")
	bindPort := fs.Int("bind-port", 0, "send: local port of the first connection (0: any)")
	rate := fs.Float64("rate", 0, "send: cap per connection in bytes/s (0: as fast as TCP goes)")
	cc := fs.String("cc", "", "send: TCP congestion control of every connection (empty: the kernel's default)")
	rcvbuf := fs.Int("rcvbuf", 0, "sink: SO_RCVBUF of the listening socket, inherited by every connection (0: the kernel's autotuning)")
	replyEvery := fs.Int("reply-every", 0, "sink: answer every this many bytes received with an 8-byte acknowledgement (an rr flow's server; 0: never)")
	kindJSON := fs.String("kind", "", "send: the protected flow's kind as JSON (sim.FlowKind, scaled); empty: bulk")
	seed := fs.Uint64("seed", 1, "send: seed of an rr flow's Poisson arrivals")
	_ = fs.Parse(os.Args[1:])
	var err error
	switch mode {
	case "sink":
		err = runSink(*listen, *report, *rcvbuf, *replyEvery)
	case "send":
		var k sim.FlowKind
		if *kindJSON != "" {
			if err := json.Unmarshal([]byte(*kindJSON), &k); err != nil {
				fmt.Fprintf(os.Stderr, "traffic: -kind %q: %v\n", *kindJSON, err)
				os.Exit(2)
			}
		}
		if k.Kind == sim.KindRR {
			err = runRR(*connect, *bindPort, *cc, k, *seed, *report)
		} else {
			err = runSend(*connect, *streams, *bindPort, *rate, *cc, k)
		}
	default:
		err = fmt.Errorf("%s=%q, want sink, send or delay", TrafficEnv, mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "traffic:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// SinkReport is one line a sink prints: bytes received in the last interval.
type SinkReport struct {
	Time  time.Time `json:"time"`
	Bytes int64     `json:"bytes"`
}

func runSink(addr string, every time.Duration, rcvbuf, replyEvery int) error {
	// SO_RCVBUF before listen: the window scale of every connection is
	// fixed by the buffer at the handshake.
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		if rcvbuf <= 0 {
			return nil
		}
		return setsockopt(rc, func(fd int) error { return syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
	}}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return err
	}
	var total atomic.Int64
	go func() {
		enc := json.NewEncoder(os.Stdout)
		t := time.NewTicker(every)
		for now := range t.C {
			_ = enc.Encode(SinkReport{Time: now, Bytes: total.Swap(0)})
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			acks := acker{every: int64(replyEvery)}
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				total.Add(int64(n))
				if werr := acks.received(c, n); werr != nil || err != nil {
					return
				}
			}
		}()
	}
}

func runSend(addr string, streams, bindPort int, rate float64, cc string, k sim.FlowKind) error {
	if addr == "" {
		return errors.New("send: -connect is required")
	}
	began := time.Now() // the episode's start, which an onoff flow's cycle counts from
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chunk := 64 << 10
			if rate > 0 {
				chunk = 8 << 10
			}
			buf := make([]byte, chunk)
			for {
				d := net.Dialer{Timeout: 2 * time.Second, Control: senderControl(i == 0 && bindPort != 0, cc)}
				if i == 0 && bindPort != 0 {
					d.LocalAddr = &net.TCPAddr{Port: bindPort}
				}
				c, err := d.Dial("tcp", addr)
				if err != nil {
					time.Sleep(200 * time.Millisecond)
					continue
				}
				start, sent := time.Now(), 0.0
				for {
					if !k.Sending(time.Since(began)) {
						// An onoff flow's gap: write nothing, then pace
						// the next burst from its own start.
						time.Sleep(gapPoll)
						start, sent = time.Now(), 0
						continue
					}
					if rate > 0 {
						// Pace: never ahead of rate × elapsed.
						if ahead := time.Duration((sent/rate)*float64(time.Second)) - time.Since(start); ahead > 0 {
							time.Sleep(ahead)
						}
					}
					n, err := c.Write(buf)
					sent += float64(n)
					if err != nil {
						break
					}
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	return nil
}

// senderControl returns the dialer's socket setup: SO_REUSEADDR for a
// fixed local port, TCP_CONGESTION when cc is set (before connect, so the
// handshake already runs under it).
func senderControl(reuse bool, cc string) func(_, _ string, rc syscall.RawConn) error {
	return func(_, _ string, rc syscall.RawConn) error {
		return setsockopt(rc, func(fd int) error {
			if reuse {
				if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
					return fmt.Errorf("SO_REUSEADDR: %w", err)
				}
			}
			if cc != "" {
				if err := syscall.SetsockoptString(fd, syscall.IPPROTO_TCP, syscall.TCP_CONGESTION, cc); err != nil {
					return fmt.Errorf("TCP_CONGESTION %q: %w", cc, err)
				}
			}
			return nil
		})
	}
}

// setsockopt runs set on rc's descriptor.
func setsockopt(rc syscall.RawConn, set func(fd int) error) error {
	var serr error
	err := rc.Control(func(fd uintptr) { serr = set(int(fd)) })
	return errors.Join(err, serr)
}

// Sink is a traffic sink running in a host namespace.
type Sink struct {
	cmd     *exec.Cmd
	reports chan SinkReport
	done    chan struct{}
}

// StartSink runs a sink on port in host's namespace. Its reports (bytes per
// second) arrive on Reports until ctx ends or Stop is called.
func (f *Fabric) StartSink(ctx context.Context, host string, port int) (*Sink, error) {
	return f.StartSinkEvery(ctx, host, port, time.Second)
}

// StartSinkEvery is StartSink with a report every interval instead of
// every second.
func (f *Fabric) StartSinkEvery(ctx context.Context, host string, port int, every time.Duration) (*Sink, error) {
	if every <= 0 {
		return nil, fmt.Errorf("ovsfabric: sink on %s: report interval %v, want a positive duration", host, every)
	}
	return f.StartSinkWith(ctx, host, port, SinkConfig{Report: every})
}

// SinkConfig shapes a sink.
type SinkConfig struct {
	// Report is the interval of the sink's reports (default 1 s).
	Report time.Duration
	// RcvBufBytes, when positive, is the SO_RCVBUF of the sink's sockets
	// (Config.ProtectedRcvBufBytes for the protected flow's sink).
	RcvBufBytes int
	// ReplyEvery, when positive, makes the sink the server of an rr flow:
	// every ReplyEvery bytes received on a connection (one request) it
	// answers with an 8-byte acknowledgement.
	ReplyEvery int
}

// StartSinkWith is StartSink shaped by sc.
func (f *Fabric) StartSinkWith(ctx context.Context, host string, port int, sc SinkConfig) (*Sink, error) {
	every := sc.Report
	if every == 0 {
		every = time.Second
	}
	if every < 0 {
		return nil, fmt.Errorf("ovsfabric: sink on %s: report interval %v, want a positive duration", host, every)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: sink: %w", err)
	}
	if sc.ReplyEvery < 0 {
		return nil, fmt.Errorf("ovsfabric: sink on %s: reply every %d bytes, want 0 (never) or a request size", host, sc.ReplyEvery)
	}
	cmd := f.Command(ctx, host, exe, "-listen", fmt.Sprintf(":%d", port), "-report", every.String(), "-rcvbuf", fmt.Sprint(sc.RcvBufBytes),
		"-reply-every", fmt.Sprint(sc.ReplyEvery))
	cmd.Env = append(os.Environ(), TrafficEnv+"=sink")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ovsfabric: sink on %s: %w", host, err)
	}
	s := &Sink{cmd: cmd, reports: make(chan SinkReport, 1024), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		readReports(out, s.reports)
	}()
	return s, nil
}

// Reports delivers one report per report interval; it closes when the sink
// ends.
func (s *Sink) Reports() <-chan SinkReport { return s.reports }

// Stop ends the sink (SIGTERM to its process group, SIGKILL 2 s later) and
// waits for it.
func (s *Sink) Stop() {
	stopGroup(s.cmd, s.done)
	_ = s.cmd.Wait()
}

// SenderConfig shapes a sender's traffic.
type SenderConfig struct {
	// Streams is the number of parallel TCP connections (default 1).
	Streams int
	// BindPort, when not 0, is the local port of the first connection, so
	// the protected flow has a known 5-tuple.
	BindPort int
	// RateBytesPerSec caps each connection (0: as fast as TCP goes).
	RateBytesPerSec float64
	// CongestionControl is the TCP congestion control of every connection
	// (default: the fabric's Config.CongestionControl, else the kernel's).
	CongestionControl string
	// Kind is the kind of traffic (package sim's FlowKind, already
	// scaled: Scale.Kind): the zero value and rate send as configured
	// above; onoff writes only in its bursts (sim.FlowKind.Sending,
	// counted from the sender's start), each burst paced at
	// RateBytesPerSec from its own start; rr runs the request/response
	// client of the package documentation's "Flow kinds" on one connection
	// (Streams and RateBytesPerSec unused) and reports on
	// Sender.Reports. An rr flow's sink must answer (SinkConfig.ReplyEvery).
	Kind sim.FlowKind
	// Seed seeds an rr flow's Poisson arrivals.
	Seed uint64
	// Report is the interval of an rr flow's reports (default 1 s).
	Report time.Duration
}

// StartSender runs a sender in host's namespace that keeps TCP connections
// to dst ("10.0.0.8:5201") busy. Stop it with Stop.
func (f *Fabric) StartSender(ctx context.Context, host, dst string, sc SenderConfig) (*Sender, error) {
	streams, bindPort := max(sc.Streams, 1), sc.BindPort
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: sender: %w", err)
	}
	kind, err := json.Marshal(sc.Kind)
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: sender on %s: kind %+v: %w", host, sc.Kind, err)
	}
	report := cmp.Or(sc.Report, time.Second)
	if report < 0 {
		return nil, fmt.Errorf("ovsfabric: sender on %s: report interval %v, want a positive duration", host, report)
	}
	cmd := f.Command(ctx, host, exe, "-connect", dst, "-streams", fmt.Sprint(streams), "-bind-port", fmt.Sprint(bindPort),
		"-rate", fmt.Sprint(sc.RateBytesPerSec), "-cc", cmp.Or(sc.CongestionControl, f.cfg.CongestionControl),
		"-kind", string(kind), "-seed", fmt.Sprint(sc.Seed), "-report", report.String())
	cmd.Env = append(os.Environ(), TrafficEnv+"=send")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: sender on %s: %w", host, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ovsfabric: sender on %s: %w", host, err)
	}
	s := &Sender{cmd: cmd, done: make(chan struct{}), reports: make(chan RRReport, 1024)}
	go func() {
		defer close(s.done)
		readReports(out, s.reports)
		_ = cmd.Wait()
	}()
	return s, nil
}

// Sender is a traffic sender running in a host namespace.
type Sender struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed once the sender has exited
	reports chan RRReport
}

// Reports delivers an rr flow's report every SenderConfig.Report (nothing
// for the other kinds); it closes when the sender ends. Reports nobody
// reads are dropped.
func (s *Sender) Reports() <-chan RRReport { return s.reports }

// Stop ends the sender (SIGTERM to its process group, SIGKILL 2 s later)
// and waits for it.
func (s *Sender) Stop() { stopGroup(s.cmd, s.done) }
