package ovsfabric

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/hostagent"
)

// Cases of a move that MoveCost measures.
const (
	// MoveHealthy is case (a): the protected flow moved make-before-break
	// between two idle aggregation switches while it runs at its healthy
	// level.
	MoveHealthy = "a"
	// MoveReserve is case (b): the protected flow moved, still healthy,
	// ReserveLead after the crowd (h2–h6 → h7) arrived on its switch,
	// while the counted bucket still has tokens: for this case the
	// bucket's burst (unless Config.BucketBurst is set) holds 2 ×
	// ReserveLead of the crowd's excess (1.5 C, the crowd's 1.5 C and the
	// flow's C less the bucket's C), so half of it is left at the move.
	MoveReserve = "b"
	// MoveDegraded is case (c): the protected flow moved from a standing
	// queue: the crowd is on its switch, its rate over the last 500 ms has
	// fallen under 70% of its healthy level, and its sender is not in
	// retransmission-timeout backoff (TCP_INFO's tcpi_backoff is 0).
	MoveDegraded = "c"
	// MoveCollapsed is case (d): the protected flow moved to an idle
	// switch after a crowd on its switch has starved it into RTO backoff
	// (TCP_INFO's tcpi_backoff ≥ 1).
	MoveCollapsed = "d"
)

// MoveCases are the cases of MoveCost in order.
var MoveCases = []string{MoveHealthy, MoveReserve, MoveDegraded, MoveCollapsed}

// Criteria a move of MoveCost was made on (MoveResult.Criterion).
const (
	// CriterionMet: the case's condition held at the move.
	CriterionMet = "met"
	// CriterionTimeout: the condition did not hold (case b: the flow was
	// already under 90% at the move; c, d: Collapse passed); the flow was
	// moved anyway.
	CriterionTimeout = "timeout"
)

// MoveCost measures what a move costs the protected flow (h1→h8) on a real
// fabric, move after move: how long it takes to get back to 90% of its
// healthy level, what its sender's TCP saw (retransmissions, duplicate
// SACKs, reordering; ss reads the kernel's TCP_INFO) and how many packets
// found no rule in the switches (table misses). Cases (b)–(d) put a crowd
// (h2–h6 to h7, two streams each at 0.15 C) on the flow's switch before
// each move and stop it after, so that each repeat's crowd arrives fresh.
// One flow, no controller; MoveMatrix runs it over congestion controls,
// round trips and cases.
type MoveCost struct {
	// Fabric is the fabric to build, the paper's regime included (RTT,
	// CongestionControl, ProtectedRcvBufBytes, HLimitRate). Its Controller
	// is set to the address Listen got.
	Fabric Config
	// Listen is the OpenFlow controller's listen address (default
	// "127.0.0.1:0").
	Listen string
	// Case is one of MoveCases (default MoveHealthy).
	Case string
	// Moves is how many moves to measure (default 3); each goes from the
	// flow's switch to the next one.
	Moves int
	// Warmup is how long the flow runs alone before its healthy level is
	// taken over its last half (default 8 s); Observe how long each move is
	// watched (default 20 s); Collapse how long case (d)'s crowd has to
	// bring the flow to case (c)'s or (d)'s condition (default 15 s);
	// ReserveLead how long after the crowd case (b) moves (default 1 s).
	Warmup, Observe, Collapse, ReserveLead time.Duration
	// RateBytesPerSec paces the protected flow (0: as fast as TCP goes).
	RateBytesPerSec float64
	// Out receives a line per move and the table; nil discards them.
	Out io.Writer
}

// MoveResult is the cost of one move.
type MoveResult struct {
	Move     int
	Case     string
	From, To int
	// Healthy is the flow's healthy level and Before its level over the
	// second before the move, bytes/s.
	Healthy, Before float64
	// Recovery is the time from the move to the start of the first span
	// of recoveryWindow over which the flow ran at 90% of Healthy or more
	// (0: it never fell below); -1 when none within Observe.
	Recovery time.Duration
	// Retrans, DSACKs and Reordering are the sender's counters' increase
	// over the move's observation (Reordering is the kernel's reordering
	// metric at its end).
	Retrans, DSACKs, Reordering int
	// RTT and MinRTT are the sender's round trips at the end.
	RTT, MinRTT time.Duration
	// Misses is the packets that found no rule from before the crowd
	// arrived (case a: just before the move) to the end of the
	// observation, summed over every bridge (Fabric.TableMisses): lost in
	// the move.
	Misses int64
	// Backoff is the sender's RTO backoff at the move (TCP_INFO's
	// tcpi_backoff, ss's backoff:N); Criterion says whether the case's
	// condition held then (Criterion…).
	Backoff   int
	Criterion string
	// AtMove is the sender's TCP_INFO read last before the move (within
	// the 10 ms of a poll): its CAState, Retransmits (timeouts in a row
	// not yet recovered from) and Backoff say whether the flow was in RTO
	// backoff (InRTO).
	AtMove hostagent.TCPInfo
}

// InLoss reports whether the sender was in the loss state at the move, by
// its TCP_INFO: a retransmission timeout fired and the data outstanding
// then is not all acknowledged yet (the kernel resets the backoff at the
// first acknowledgement of a retransmission, the loss state lasts until
// the recovery ends).
func (r MoveResult) InLoss() bool { return r.AtMove.CAState == "loss" }

// InRTO reports whether the sender was in retransmission-timeout backoff
// at the move, by its TCP_INFO: in the loss state with its timer backed
// off or a timeout not yet recovered from.
func (r MoveResult) InRTO() bool {
	return r.InLoss() && (r.AtMove.Backoff > 0 || r.AtMove.Retransmits > 0)
}

// tcpInfoPoll is how often MoveCost reads the sender's TCP_INFO while it
// waits for case (c)'s or (d)'s condition: a backoff of a 200 ms RTO or
// more is seen.
const tcpInfoPoll = 10 * time.Millisecond

// recoveryWindow is the span over which MoveCost averages the flow's rate
// when it looks for the recovery.
const recoveryWindow = 500 * time.Millisecond

// moveReport is the sink's report interval in MoveCost.
const moveReport = 100 * time.Millisecond

// Run builds the fabric, measures the moves, prints them, tears everything
// down and returns the results.
func (m MoveCost) Run(ctx context.Context) (results []MoveResult, err error) {
	m = m.withDefaults()
	if !slices.Contains(MoveCases, m.Case) {
		return nil, fmt.Errorf("ovsfabric: move cost: case %q, want one of %s", m.Case, strings.Join(MoveCases, ", "))
	}
	rate, err := ParseRate(m.Fabric.withDefaults().BucketRate)
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: move cost: %w", err)
	}
	if m.Case == MoveReserve && m.Fabric.BucketBurst == "" {
		m.Fabric.BucketBurst = fmt.Sprintf("%dkb", int(reserveBurst(rate, m.ReserveLead)/1024))
	}
	scale := DefaultScale()
	scale.BucketRateBytesPerSec = rate
	topo := scale.Topology()
	h1, h7, h8 := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.7"), netip.MustParseAddr("10.0.0.8")
	flow := proflow.FlowID{Src: h1, Dst: h8, Proto: proflow.ProtoTCP, SrcPort: protectedSrcPort, DstPort: protectedDstPort}

	ln, err := net.Listen("tcp", m.Listen)
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: move cost: %w", err)
	}
	m.Fabric.Controller = "tcp:" + ln.Addr().String()
	ocfg := openflow.DefaultConfig()
	ocfg.Fabric, ocfg.Topology, ocfg.Flow, ocfg.Logger = m.Fabric.withDefaults().Wiring, topo, flow, m.Fabric.Logger
	srv, err := openflow.NewServer(ocfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	sctx, stopSrv := context.WithCancel(ctx)
	srvDone := make(chan struct{})
	go func() { defer close(srvDone); _ = srv.Serve(sctx, ln) }()
	defer func() { stopSrv(); <-srvDone }()

	f, err := Up(ctx, m.Fabric)
	if err != nil {
		return nil, err
	}
	defer func() {
		tctx, cancel := TeardownContext(ctx)
		defer cancel()
		if derr := f.Down(tctx); derr != nil {
			err = errors.Join(err, fmt.Errorf("ovsfabric: tear the fabric down: %w", derr))
		}
	}()
	if err := srv.WaitReady(ctx); err != nil {
		return nil, err
	}
	if _, err := f.EnsureBuckets(ctx); err != nil {
		return nil, err
	}
	cur := 0
	if err := srv.Place(ctx, flow, cur); err != nil {
		return nil, err
	}
	sink, err := f.StartSinkWith(ctx, "h8", protectedDstPort, SinkConfig{Report: moveReport, RcvBufBytes: m.Fabric.ProtectedRcvBufBytes})
	if err != nil {
		return nil, err
	}
	defer sink.Stop()
	var rates rateLog
	go rates.follow(sink)
	if m.Case != MoveHealthy {
		csink, err := f.StartSink(ctx, "h7", congestionPort)
		if err != nil {
			return nil, err
		}
		defer csink.Stop()
		go func() {
			for range csink.Reports() {
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // the sinks listen
	snd, err := f.StartSender(ctx, "h1", netip.AddrPortFrom(h8, protectedDstPort).String(),
		SenderConfig{BindPort: protectedSrcPort, RateBytesPerSec: m.RateBytesPerSec})
	if err != nil {
		return nil, err
	}
	defer snd.Stop()
	acfg := hostagent.DefaultConfig()
	acfg.Flow, acfg.NetNS, acfg.PollInterval = flow, f.NetNSPath("h1"), tcpInfoPoll
	tcpInfo, err := hostagent.New(acfg)
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: move cost: TCP_INFO reader in h1: %w", err)
	}
	defer tcpInfo.Close()
	if err := sleepCtx(ctx, m.Warmup); err != nil {
		return nil, err
	}
	healthy := rates.mean(time.Now().Add(-m.Warmup/2), time.Now())
	out := m.Out
	fmt.Fprintf(out, "move cost, case (%s): healthy %.2f Mbit/s; regime %v\n", m.Case, healthy*8/1e6, f.RegimeLabels())

	var crowd []*Sender
	defer func() {
		for _, s := range crowd {
			s.Stop()
		}
	}()
	for i := range m.Moves {
		// The table misses are counted from before the crowd arrives (its
		// rules are in place before its senders start), so that the slow
		// read of every bridge's tables does not come between the case's
		// condition and the move; the sender's counters are read between
		// them, and its TCP_INFO last of all.
		misses, err := f.TableMisses(ctx)
		if err != nil {
			return results, err
		}
		criterion := CriterionMet
		if m.Case != MoveHealthy {
			if crowd, criterion, err = m.starve(ctx, f, srv, cur, h7, crowd, &rates, healthy, tcpInfo); err != nil {
				return results, err
			}
		}
		to := (cur + 1) % len(topo.Switches)
		before, err := f.Socket(ctx, "h1", protectedSrcPort)
		if err != nil {
			return results, err
		}
		info, err := readTCPInfo(ctx, tcpInfo)
		if err != nil {
			return results, err
		}
		r := MoveResult{Move: i + 1, Case: m.Case, From: cur, To: to, Healthy: healthy,
			Before: rates.mean(time.Now().Add(-time.Second), time.Now()), Backoff: int(info.Backoff), Criterion: criterion, AtMove: info}
		at := time.Now()
		if err := srv.Place(ctx, flow, to); err != nil {
			return results, fmt.Errorf("ovsfabric: move cost: move %d to %s: %w", i+1, topo.Switches[to], err)
		}
		cur = to
		// The crowd goes: each repeat's crowd arrives fresh (no backlog of
		// its own from the last one), as in the simulator's repeats.
		for _, s := range crowd {
			s.Stop()
		}
		crowd = nil
		if err := sleepCtx(ctx, m.Observe); err != nil {
			return results, err
		}
		end, err := f.Socket(ctx, "h1", protectedSrcPort)
		if err != nil {
			return results, err
		}
		endMisses, err := f.TableMisses(ctx)
		if err != nil {
			return results, err
		}
		r.Misses = endMisses - misses
		r.Recovery = rates.recovery(at, at.Add(m.Observe), 0.9*healthy)
		r.Retrans, r.DSACKs, r.Reordering = end.Retrans-before.Retrans, end.DSACKDups-before.DSACKDups, end.Reordering
		r.RTT, r.MinRTT = end.RTT, end.MinRTT
		results = append(results, r)
		fmt.Fprintf(out, "move %d %s→%s (%s, before %.2f Mbit/s, TCP_INFO ca_state %s backoff %d retransmits %d): recovered to 90%% in %s, retransmissions %d, DSACKs %d, reordering %d, table misses %d, rtt %v (min %v)\n",
			r.Move, topo.Switches[r.From], topo.Switches[r.To], r.Criterion, r.Before*8/1e6, r.AtMove.CAState, r.Backoff, r.AtMove.Retransmits, recoveryString(r.Recovery), r.Retrans, r.DSACKs, r.Reordering, r.Misses, r.RTT, r.MinRTT)
	}
	return results, WriteMoveCosts(out, results, topo)
}

func (m MoveCost) withDefaults() MoveCost {
	if m.Listen == "" {
		m.Listen = "127.0.0.1:0"
	}
	if m.Case == "" {
		m.Case = MoveHealthy
	}
	if m.Moves <= 0 {
		m.Moves = 3
	}
	if m.Warmup <= 0 {
		m.Warmup = 8 * time.Second
	}
	if m.Observe <= 0 {
		m.Observe = 20 * time.Second
	}
	if m.Collapse <= 0 {
		m.Collapse = 15 * time.Second
	}
	if m.ReserveLead <= 0 {
		m.ReserveLead = time.Second
	}
	if m.Out == nil {
		m.Out = io.Discard
	}
	if m.Fabric.Logger == nil {
		m.Fabric.Logger = slog.New(slog.DiscardHandler)
	}
	return m
}

// starve puts the crowd (h2–h6 to h7, two streams each at 0.15 C) on
// switch sw, starting its senders (Run stops them after each move), and
// waits for the case's
// condition (MoveReserve, MoveDegraded, MoveCollapsed), Collapse at most.
// It returns the crowd and whether the condition held (Criterion…).
func (m MoveCost) starve(ctx context.Context, f *Fabric, srv *openflow.Server, sw int, h7 netip.Addr, crowd []*Sender, rates *rateLog, healthy float64, tcpInfo *hostagent.Agent) ([]*Sender, string, error) {
	start := len(crowd) == 0
	for _, h := range []string{"h2", "h3", "h4", "h5", "h6"} {
		src, err := hostAddr(f.cfg.Wiring, h)
		if err != nil {
			return crowd, "", err
		}
		if err := srv.Place(ctx, proflow.FlowID{Src: src, Dst: h7, Proto: proflow.ProtoTCP}, sw); err != nil {
			return crowd, "", err
		}
		if !start {
			continue
		}
		rate, _ := ParseRate(f.cfg.BucketRate)
		s, err := f.StartSender(ctx, h, netip.AddrPortFrom(h7, congestionPort).String(), SenderConfig{Streams: 2, RateBytesPerSec: 0.15 * rate})
		if err != nil {
			return crowd, "", err
		}
		crowd = append(crowd, s)
	}
	if m.Case == MoveReserve {
		if err := sleepCtx(ctx, m.ReserveLead); err != nil {
			return crowd, "", err
		}
		if rates.mean(time.Now().Add(-m.ReserveLead/2), time.Now()) >= 0.9*healthy {
			return crowd, CriterionMet, nil
		}
		return crowd, CriterionTimeout, nil
	}
	deadline := time.Now().Add(m.Collapse)
	for time.Now().Before(deadline) {
		if err := sleepCtx(ctx, tcpInfoPoll); err != nil {
			return crowd, "", err
		}
		info, err := readTCPInfo(ctx, tcpInfo)
		if err != nil {
			return crowd, "", err
		}
		recent := rates.mean(time.Now().Add(-recoveryWindow), time.Now())
		if sim.MoveCondition(m.Case, recent, healthy, int(info.Backoff)) {
			return crowd, CriterionMet, nil
		}
	}
	return crowd, CriterionTimeout, nil
}

// readTCPInfo reads the protected flow's sender's TCP_INFO once.
func readTCPInfo(ctx context.Context, a *hostagent.Agent) (hostagent.TCPInfo, error) {
	if err := a.Poll(ctx); err != nil {
		return hostagent.TCPInfo{}, fmt.Errorf("ovsfabric: move cost: %w", err)
	}
	r := a.Report()
	if !r.Found {
		return hostagent.TCPInfo{}, fmt.Errorf("ovsfabric: move cost: no TCP socket %v in h1, want the protected flow's sender", r.Flow)
	}
	return r.Info, nil
}

// reserveBurst returns case (b)'s bucket burst in bytes for a bucket of
// rate bytes/s: 2 × lead of the crowd's excess, 1.5 × rate.
func reserveBurst(rate float64, lead time.Duration) float64 {
	return 2 * lead.Seconds() * 1.5 * rate
}

// WriteMoveCosts writes the results as a table.
func WriteMoveCosts(w io.Writer, results []MoveResult, topo proflow.Topology) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nmove\tcase\tfrom→to\tcriterion\thealthy Mbit/s\tbefore Mbit/s\tca_state\tbackoff\trecovery (90%)\tretrans\tDSACKs\treordering\ttable misses\trtt\tminrtt")
	for _, r := range results {
		fmt.Fprintf(tw, "%d\t%s\t%s→%s\t%s\t%.2f\t%.2f\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%v\t%v\n", r.Move, r.Case, topo.Switches[r.From], topo.Switches[r.To], r.Criterion,
			r.Healthy*8/1e6, r.Before*8/1e6, r.AtMove.CAState, r.Backoff, recoveryString(r.Recovery), r.Retrans, r.DSACKs, r.Reordering, r.Misses, r.RTT, r.MinRTT)
	}
	return tw.Flush()
}

func recoveryString(d time.Duration) string {
	if d < 0 {
		return "not within the observation"
	}
	return d.Round(10 * time.Millisecond).String()
}

// rateLog keeps a sink's reports.
type rateLog struct {
	mu   sync.Mutex
	reps []SinkReport
}

func (l *rateLog) follow(s *Sink) {
	for r := range s.Reports() {
		l.mu.Lock()
		l.reps = append(l.reps, r)
		l.mu.Unlock()
	}
}

// mean returns the rate in bytes/s of the reports in (from, to].
func (l *rateLog) mean(from, to time.Time) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var sum int64
	n := 0
	for _, r := range l.reps {
		if r.Time.After(from) && !r.Time.After(to) {
			sum += r.Bytes
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / (float64(n) * moveReport.Seconds())
}

// recovery returns how long after at the first span of recoveryWindow
// whose rate reached level began, looking until end; -1 when none did.
func (l *rateLog) recovery(at, end time.Time, level float64) time.Duration {
	l.mu.Lock()
	times := make([]time.Time, 0, len(l.reps))
	for _, r := range l.reps {
		if r.Time.After(at.Add(recoveryWindow)) && !r.Time.After(end) {
			times = append(times, r.Time)
		}
	}
	l.mu.Unlock()
	for _, t := range times {
		if l.mean(t.Add(-recoveryWindow), t) >= level {
			return max(0, t.Add(-recoveryWindow).Sub(at))
		}
	}
	return -1
}

// sleepCtx sleeps d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
