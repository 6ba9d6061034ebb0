package sim

import (
	"math"
	"math/rand/v2"
)

// The engine is the data plane: host links, shaped aggregation uplinks and
// TCP streams, advanced by a fixed time step. Everything is a fluid: bytes
// per step rather than packets, with packet granularity only where it
// matters (loss events, retransmission timeouts, overlimit counting). The
// package documentation describes the model; the comments here say how each
// piece is computed.

// phase is the state of one TCP connection.
type phase uint8

const (
	phClosed phase = iota // not started, or departed
	phSyn                 // handshake: waiting for the SYN-ACK or a SYN retry
	phSS                  // slow start
	phCA                  // congestion avoidance (CUBIC)
	phRTO                 // waiting for the retransmission timer
	phProbe               // the retransmission is in flight this step
)

// CUBIC constants (Linux): multiplicative decrease β and the cubic
// coefficient C in packets/s³; renoGain is CUBIC's TCP-friendly growth per
// RTT, 3(1−β)/(1+β).
const (
	cubicBeta = 0.7
	cubicC    = 0.4
	renoGain  = 3 * (1 - cubicBeta) / (1 + cubicBeta)
	// hystartLow is the smallest window at which HyStart may end slow start.
	hystartLow = 16
)

type stream struct {
	pair      int // index into engine.pairs
	src, dst  int // host indices
	sw, port  int // aggregation switch and shaped uplink (sw*leaves+dstLeaf)
	capRate   float64
	protected bool
	flow      int  // index of the protected flow (Fabric.Protected) when protected
	app       *app // the application of an onoff or rr protected flow; nil: always backlogged

	ph           phase
	cwnd         float64 // packets
	ssthresh     float64
	wMax         float64 // CUBIC W_max
	origin, kCub float64 // CUBIC origin point and K
	epoch        float64 // CUBIC epoch start; <0: starts at the next growth
	wEst         float64 // CUBIC TCP-friendly window estimate
	recoverUntil float64 // no second window reduction before this time
	timer        float64 // SYN-ACK arrival, SYN retry or RTO expiry
	backoff      int     // retransmission timer back-off exponent
	synTries     int
	rtt          float64 // base RTT plus the queueing delay of the last step

	// backlogs on the hops, bytes
	bUp, bPace, bPre, bAgg, bDown float64

	// per-step values
	send  float64 // bytes offered
	x1    float64 // out of the source host link
	x2    float64 // out of the per-flow pacer (and the uncounted stage)
	x3    float64 // out of the shaped uplink
	out   float64 // delivered to the receiver
	drop  float64 // bytes dropped on any hop
	capLt bool    // sending was capped by capRate or the receive window
	appLt bool    // the application, not TCP, limited sending (capRate, app)
	syn   bool    // a SYN went out this step
}

// fifo is a drop-tail queue served at a fixed rate: a host link.
type fifo struct {
	rate, limit float64
	backlog     float64
	arr         float64 // arrivals this step
	rb, ra, rd  float64 // served fraction of the backlog, of the arrivals; dropped fraction of the rest
	dropFrac    float64 // fraction of this step's arrivals dropped
}

// shaper is an aggregation uplink: a token bucket with a drop-tail queue.
type shaper struct {
	sw       int
	tokens   float64
	backlog  float64
	arr      float64
	rb, ra   float64
	rd       float64
	dropFrac float64
	events   float64 // overlimit events this step
	out      float64
}

// serveFIFO computes one step of a FIFO holding backlog bytes, receiving
// arr bytes and able to send capBytes, with a queue limit: the backlog is
// served first, then the arrivals; what exceeds the limit is dropped from
// the tail (the arrivals). It returns the bytes sent, the per-stream ratios
// applyFIFO uses, the new backlog and the bytes dropped.
func serveFIFO(backlog, arr, capBytes, limit float64) (out, rb, ra, rd, newBacklog, dropped float64) {
	total := backlog + arr
	out = min(total, capBytes)
	rb = 1
	if backlog > 0 {
		rb = min(1, out/backlog)
	}
	fromArr := max(0, out-backlog)
	if arr > 0 {
		ra = fromArr / arr
	}
	rem := total - out
	dropped = max(0, rem-limit)
	if remArr := arr - fromArr; remArr > 0 {
		rd = min(1, dropped/remArr)
	}
	newBacklog = max(0, rem-dropped)
	return
}

// applyFIFO moves one stream, with backlog *b and arrivals a, through a
// FIFO step whose ratios serveFIFO computed, adds its dropped bytes to *drop
// and returns the bytes it got served.
func applyFIFO(b *float64, a, rb, ra, rd float64, drop *float64) float64 {
	served := *b*rb + a*ra
	remA := a * (1 - ra)
	d := remA * rd
	*b = max(0, *b-*b*rb+remA-d)
	*drop += d
	return served
}

// dropFraction returns the fraction of arr bytes of arrivals that dropped
// bytes are, zero when nothing arrived.
func dropFraction(dropped, arr float64) float64 {
	if arr > 0 {
		return dropped / arr
	}
	return 0
}

// serve runs one step of dt seconds of the host link on its arrivals arr:
// it updates the backlog and records the ratios applyFIFO uses and the
// fraction of the arrivals dropped.
func (q *fifo) serve(dt float64) {
	var dropped float64
	_, q.rb, q.ra, q.rd, q.backlog, dropped = serveFIFO(q.backlog, q.arr, q.rate*dt, q.limit)
	q.dropFrac = dropFraction(dropped, q.arr)
}

// serveBucket runs one step of dt seconds of a token bucket of the given
// rate and depth in front of a drop-tail queue of limit bytes on a link of
// linkRate: it updates the tokens and the backlog, records the ratios
// applyFIFO uses, and returns the fraction of the step it was throttled
// (out of tokens with packets waiting).
func (u *shaper) serveBucket(dt, rate, burst, linkRate, limit, pkt float64) float64 {
	if u.arr == 0 && u.backlog == 0 {
		u.tokens = min(burst, u.tokens+rate*dt)
		u.out, u.dropFrac = 0, 0
		return 0
	}
	th := throttled(u.backlog, u.tokens, u.arr/dt, rate, dt, pkt)
	avail := u.tokens + rate*dt
	var dropped float64
	u.out, u.rb, u.ra, u.rd, u.backlog, dropped = serveFIFO(u.backlog, u.arr, min(linkRate*dt, avail), limit)
	u.tokens = min(burst, avail-u.out)
	u.dropFrac = dropFraction(dropped, u.arr)
	return th
}

// servePre runs one step of every uplink's uncounted stage on the arrivals
// step 3 gathered.
func (e *engine) servePre(dt float64) {
	cfg := &e.cfg
	for p := range e.pre {
		e.pre[p].serveBucket(dt, cfg.UncountedRate, cfg.UncountedBurst, cfg.FabricLinkRate, cfg.UncountedQueueLimit, e.pkt)
	}
}

// preDelay returns the queueing delay of a stream's uncounted stage and
// the fraction of its arrivals that stage dropped in the last step.
func (e *engine) preDelay(s *stream) (delay, dropFrac float64) {
	if e.pre == nil {
		return 0, 0
	}
	u := &e.pre[s.port]
	service := e.cfg.FabricLinkRate
	if u.tokens < e.pkt {
		service = e.cfg.UncountedRate
	}
	return u.backlog / service, u.dropFrac
}

// throttled returns the fraction of a step during which a shaper of token
// rate rate was out of tokens with packets waiting: already so at the start
// if it had a backlog (until the backlog drains, when arrivals are slower
// than the rate), or from the moment the arrivals, faster than the rate,
// have used the tokens up.
func throttled(backlog, tokens, arrRate, rate, dt, pkt float64) float64 {
	if backlog > 0 && tokens < pkt {
		if arrRate >= rate {
			return 1
		}
		return min(1, backlog/((rate-arrRate)*dt))
	}
	if arrRate <= rate {
		return 0
	}
	tau := tokens / (arrRate - rate)
	return min(1, max(0, 1-tau/dt))
}

// engine holds the whole data plane.
type engine struct {
	cfg      Config
	dt       float64
	pkt      float64
	rtt      float64
	rwnd     float64 // receive window, packets; 0: none
	train    float64 // HyStart ACK-train spacing rate, bytes/s; 0: test off
	rtoMin   float64
	rtoMax   float64
	synRTO   float64
	hostLeaf []int

	up, down []fifo
	pre      []shaper // the uncounted stage of every uplink; nil when off
	ports    []shaper
	streams  []stream
	pairs    []pairStat
	rng      *rand.Rand

	step int64 // completed steps

	// interval accumulators, reset by the fabric at every sample
	accTx, accEv []float64 // per switch: bytes sent on its uplinks, overlimit events
	accIn, accUp []float64 // per leaf: congestion bytes from its hosts, all bytes to the aggregation layer
	accFlow      []float64 // per protected flow: bytes delivered
	accApp       []float64 // per protected flow: seconds application-limited
	lat          []latStat // per protected flow: its round-trip times
}

// latStat follows one protected flow's round-trip time as its sender's TCP
// stack sees it: a smoothed RTT (srtt, gain 1/8 per sample, as Linux) and
// this interval's samples, one per step in which data was acknowledged.
type latStat struct {
	srtt float64   // seconds; 0 before the first sample
	rtts []float64 // this interval's samples, seconds
}

// observe adds one RTT sample.
func (l *latStat) observe(rtt float64) {
	if l.srtt == 0 {
		l.srtt = rtt
	} else {
		l.srtt += (rtt - l.srtt) / 8
	}
	l.rtts = append(l.rtts, rtt)
}

// pairStat accumulates a host pair's telemetry over one interval, per
// aggregation switch: the counters of its two flow-table entries (one per
// direction). A protected flow of a Scenario.Protected list has entries of
// its own (own), matching its 5-tuple rather than its host pair.
type pairStat struct {
	src, dst int
	own      bool
	bytes    []float64 // bytes through each switch's uplink this interval
	fwd, rev []bool    // entry counters advanced this interval, per switch
}

func newEngine(cfg Config, seed uint64) *engine {
	e := &engine{
		cfg:    cfg,
		dt:     cfg.Step.Seconds(),
		pkt:    cfg.PacketSize,
		rtt:    cfg.BaseRTT.Seconds(),
		rtoMin: cfg.RTOMin.Seconds(),
		rtoMax: cfg.RTOMax.Seconds(),
		synRTO: cfg.SYNTimeout.Seconds(),
		rwnd:   cfg.ReceiveWindow / cfg.PacketSize,
		rng:    rand.New(rand.NewPCG(seed, 0x70726f666c6f77)),
	}
	if cfg.HyStartAckTrain {
		// ACKs come back spaced by the slowest stage of an uncongested
		// path: the host link, the per-flow pacer, or the bucket.
		e.train = min(cfg.HostLinkRate, cfg.BucketRate)
		if cfg.FlowRateLimit > 0 {
			e.train = min(e.train, cfg.FlowRateLimit)
		}
	}
	nh := cfg.Leaves * cfg.HostsPerLeaf
	e.hostLeaf = make([]int, nh)
	e.up = make([]fifo, nh)
	e.down = make([]fifo, nh)
	for h := range nh {
		e.hostLeaf[h] = h / cfg.HostsPerLeaf
		e.up[h] = fifo{rate: cfg.HostLinkRate, limit: cfg.HostQueueLimit}
		e.down[h] = fifo{rate: cfg.HostLinkRate, limit: cfg.HostQueueLimit}
	}
	e.accTx, e.accEv = make([]float64, cfg.Switches), make([]float64, cfg.Switches)
	e.accIn, e.accUp = make([]float64, cfg.Leaves), make([]float64, cfg.Leaves)
	e.ports = make([]shaper, cfg.Switches*cfg.Leaves)
	for i := range e.ports {
		e.ports[i] = shaper{sw: i / cfg.Leaves, tokens: cfg.BucketBurst}
	}
	if cfg.UncountedRate > 0 {
		e.pre = make([]shaper, len(e.ports))
		for i := range e.pre {
			e.pre[i] = shaper{sw: i / cfg.Leaves, tokens: cfg.UncountedBurst}
		}
	}
	return e
}

func (e *engine) now() float64 { return float64(e.step) * e.dt }

// addPair returns the index of the host pair src→dst, creating it. It
// never returns a protected flow's own entries.
func (e *engine) addPair(src, dst int) int {
	for i, p := range e.pairs {
		if p.src == src && p.dst == dst && !p.own {
			return i
		}
	}
	return e.newPair(src, dst, false)
}

// newPair adds the entries of a host pair, or of one flow between src and
// dst when own is set, and returns their index.
func (e *engine) newPair(src, dst int, own bool) int {
	n := e.cfg.Switches
	e.pairs = append(e.pairs, pairStat{src: src, dst: dst, own: own,
		bytes: make([]float64, n), fwd: make([]bool, n), rev: make([]bool, n)})
	return len(e.pairs) - 1
}

func (e *engine) portOf(sw, dst int) int { return sw*e.cfg.Leaves + e.hostLeaf[dst] }

// start opens a stream's connection now on switch sw: the SYN goes out.
func (e *engine) start(s *stream, sw int) {
	s.sw, s.port = sw, e.portOf(sw, s.dst)
	s.ph = phSyn
	s.synTries = 0
	s.rtt = e.rtt
	s.cwnd, s.ssthresh, s.wMax, s.epoch, s.backoff = 0, math.Inf(1), 0, -1, 0
	e.sendSYN(s, e.now())
}

// sendSYN sends a SYN at time t. It is lost with the drop probability its
// path showed in the last step; a lost SYN is retried after 1 s, 2 s, 4 s …
func (e *engine) sendSYN(s *stream, t float64) {
	s.syn = true
	_, preDrop := e.preDelay(s)
	pass := (1 - e.up[s.src].dropFrac) * (1 - preDrop) * (1 - e.ports[s.port].dropFrac) * (1 - e.down[s.dst].dropFrac)
	if pass < 1 && e.rng.Float64() >= pass {
		s.timer = t + e.synRTO*math.Exp2(float64(min(s.synTries, 6)))
		s.synTries++
		return
	}
	s.synTries = -1 // the SYN got through; the timer is the SYN-ACK
	s.timer = t + s.rtt
}

// stop closes a stream and removes its queued bytes.
func (e *engine) stop(s *stream) {
	e.flush(s)
	s.ph = phClosed
}

// flush removes a stream's bytes from every queue (on departure, and from
// the old path's queues on a move).
func (e *engine) flush(s *stream) {
	if s.ph == phClosed {
		return
	}
	e.up[s.src].backlog = max(0, e.up[s.src].backlog-s.bUp)
	e.ports[s.port].backlog = max(0, e.ports[s.port].backlog-s.bAgg)
	e.down[s.dst].backlog = max(0, e.down[s.dst].backlog-s.bDown)
	e.flushPre(s)
	s.bUp, s.bPace, s.bAgg, s.bDown = 0, 0, 0, 0
}

// flushPre removes a stream's bytes from the uncounted stage of its uplink.
func (e *engine) flushPre(s *stream) {
	if e.pre != nil {
		e.pre[s.port].backlog = max(0, e.pre[s.port].backlog-s.bPre)
	}
	s.bPre = 0
}

// move re-routes a stream to switch sw. Packets in flight on the old and
// the new path arrive out of order; the receiver's duplicate ACKs make the
// sender reduce its window as for a loss (Config.RerouteWindowFactor). A
// connection waiting on its retransmission timer keeps waiting. A
// connection with nothing in flight (idle) only changes its path: no
// packet is lost or reordered, so neither H-move nor the reordering costs
// it anything.
func (e *engine) move(s *stream, sw int) {
	if s.ph == phClosed || sw == s.sw {
		s.sw, s.port = sw, e.portOf(sw, s.dst)
		return
	}
	idle := e.idle(s) // before the old path's last bytes are taken back
	e.ports[s.port].backlog = max(0, e.ports[s.port].backlog-s.bAgg)
	if s.app != nil {
		// The bytes left on the old path are lost; TCP sends them again.
		s.app.unsent += s.bPace + s.bPre + s.bAgg
	}
	e.flushPre(s)
	s.bPace, s.bAgg = 0, 0
	s.sw, s.port = sw, e.portOf(sw, s.dst)
	if idle {
		return
	}
	if e.cfg.RerouteTimeout && (s.ph == phSS || s.ph == phCA) {
		// The window in flight on the old path is lost: no duplicate ACK
		// comes back, and the sender waits for its retransmission timer.
		e.timeout(s, e.now())
		return
	}
	if s.ph == phSS || s.ph == phCA {
		t := e.now()
		s.wMax = s.cwnd
		s.cwnd = max(2, s.cwnd*e.cfg.RerouteWindowFactor)
		s.ssthresh = s.cwnd
		s.epoch = -1
		s.ph = phCA
		s.recoverUntil = t + s.rtt
	}
}

// queued returns the bytes of s queued on every hop of its path.
func (s *stream) queued() float64 { return s.bUp + s.bPace + s.bPre + s.bAgg + s.bDown }

// idle reports whether a protected flow's application has left its
// connection with nothing in flight: no packet queued on any hop, and its
// last bytes sent a round trip or more ago, so acknowledged. An always
// backlogged stream (no application) is never idle.
func (e *engine) idle(s *stream) bool {
	if s.app == nil || !s.app.started || (s.ph != phSS && s.ph != phCA) {
		return false
	}
	if s.queued() >= e.pkt {
		return false
	}
	return e.now()-s.app.lastSend >= e.dt+s.rtt
}

// timeout stalls a connection at time t until its retransmission timer
// fires: ssthresh from the window it had, one packet in flight, the timer
// backed off. With CubicResetOnTimeout CUBIC forgets its window maximum,
// as Linux does on entering the loss state.
func (e *engine) timeout(s *stream, t float64) {
	s.ssthresh = max(s.cwnd*cubicBeta, 2)
	s.wMax, s.epoch = s.cwnd, -1
	if e.cfg.CubicResetOnTimeout {
		s.wMax = 0
	}
	s.cwnd = 1
	s.ph = phRTO
	s.timer = t + e.rto(s)
	s.backoff++
}

// windowSend sets what a stream in slow start or congestion avoidance
// offers in a step of dt seconds: its window a round trip, bounded by the
// receive window and by its cap, which mark the step window- or
// application-limited.
func (e *engine) windowSend(s *stream, dt float64) {
	w := s.cwnd
	if e.rwnd > 0 && w >= e.rwnd {
		w, s.capLt = e.rwnd, true
	}
	x := w * e.pkt / s.rtt
	if s.capRate > 0 && s.capRate < x {
		x, s.capLt, s.appLt = s.capRate, true, true
	}
	s.send = x * dt
}

// rto returns the retransmission timeout after backoff doublings.
func (e *engine) rto(s *stream) float64 {
	return min(e.rtoMax, (e.rtoMin+s.rtt)*math.Exp2(float64(min(s.backoff, 30))))
}

// advance runs one time step.
func (e *engine) advance() {
	t0 := e.now()
	t1 := t0 + e.dt
	dt := e.dt
	cfg := &e.cfg

	// 1. What every stream offers this step, into its source host link.
	for h := range e.up {
		e.up[h].arr = 0
	}
	for i := range e.streams {
		s := &e.streams[i]
		s.send, s.x1, s.x2, s.x3, s.out, s.drop, s.capLt, s.appLt = 0, 0, 0, 0, 0, 0, false, false
		switch s.ph {
		case phSS, phCA:
			e.windowSend(s, dt)
		case phRTO:
			if t0 >= s.timer {
				s.ph = phProbe
				s.send = e.pkt
			}
		case phSyn:
			if t0 >= s.timer {
				if s.synTries >= 0 {
					e.sendSYN(s, t0)
				} else {
					// The window's first step, bounded as every later one
					// (receive window, cap).
					s.ph, s.cwnd = phSS, cfg.InitialWindow
					e.windowSend(s, dt)
				}
			}
		}
		if s.ph != phClosed {
			if s.app != nil {
				e.appSend(s, t0)
			}
			if s.protected && s.appLt && (s.ph == phSS || s.ph == phCA) {
				e.accApp[s.flow] += dt
			}
			e.up[s.src].arr += s.send
		}
	}

	// 2. Source host links.
	for h := range e.up {
		e.up[h].serve(dt)
	}

	// 3. Per-flow pacing at the uplink, and arrivals at the bucket.
	for p := range e.ports {
		e.ports[p].arr, e.ports[p].events = 0, 0
	}
	for p := range e.pre {
		e.pre[p].arr = 0
	}
	fr, fq := cfg.FlowRateLimit, cfg.FlowQueueLimit
	for i := range e.streams {
		s := &e.streams[i]
		if s.ph == phClosed {
			continue
		}
		q := &e.up[s.src]
		s.x1 = applyFIFO(&s.bUp, s.send, q.rb, q.ra, q.rd, &s.drop)
		if s.x1 > 0 || s.syn {
			e.pairs[s.pair].fwd[s.sw] = true
			s.syn = false
		}
		a := s.x1
		leaf := e.hostLeaf[s.src]
		e.accUp[leaf] += a
		if !s.protected {
			e.accIn[leaf] += a
		}
		if fr > 0 {
			th := throttled(s.bPace, 0, a/dt, fr, dt, e.pkt)
			total := s.bPace + a
			out := min(total, fr*dt)
			rem := total - out
			d := max(0, rem-fq)
			s.bPace = rem - d
			s.drop += d
			if th > 0 {
				e.ports[s.port].events += th * (a + fr*dt) / e.pkt
			}
			a = out
		}
		s.x2 = a
		if e.pre != nil {
			e.pre[s.port].arr += a
		} else {
			e.ports[s.port].arr += a
		}
	}

	// 3b. The uncounted stage, when there is one: a token bucket with a
	// drop-tail queue that counts no overlimit events.
	if e.pre != nil {
		e.servePre(dt)
		for i := range e.streams {
			s := &e.streams[i]
			if s.ph == phClosed {
				continue
			}
			u := &e.pre[s.port]
			s.x2 = applyFIFO(&s.bPre, s.x2, u.rb, u.ra, u.rd, &s.drop)
			e.ports[s.port].arr += s.x2
		}
	}

	// 4. The shaped uplinks: token bucket, drop-tail queue.
	rate, link := cfg.BucketRate, cfg.FabricLinkRate
	for p := range e.ports {
		u := &e.ports[p]
		th := u.serveBucket(dt, rate, cfg.BucketBurst, link, cfg.BucketQueueLimit, e.pkt)
		if th > 0 {
			u.events += th * (u.arr + rate*dt) / e.pkt
		}
	}
	for p := range e.ports {
		u := &e.ports[p]
		e.accTx[u.sw] += u.out
		e.accEv[u.sw] += u.events
	}

	// 5. Destination host links.
	for h := range e.down {
		e.down[h].arr = 0
	}
	for i := range e.streams {
		s := &e.streams[i]
		if s.ph == phClosed {
			continue
		}
		u := &e.ports[s.port]
		s.x3 = applyFIFO(&s.bAgg, s.x2, u.rb, u.ra, u.rd, &s.drop)
		e.down[s.dst].arr += s.x3
		e.pairs[s.pair].bytes[s.sw] += s.x3
	}
	for h := range e.down {
		e.down[h].serve(dt)
	}

	// 6. Delivery, queueing delay and TCP.
	jit := cfg.RTTJitter
	for i := range e.streams {
		s := &e.streams[i]
		if s.ph == phClosed {
			continue
		}
		q := &e.down[s.dst]
		s.out = applyFIFO(&s.bDown, s.x3, q.rb, q.ra, q.rd, &s.drop)
		if s.out > 0 {
			e.pairs[s.pair].rev[s.sw] = true
			if s.protected {
				e.accFlow[s.flow] += s.out
			}
		}
		if a := s.app; a != nil && a.kind == KindRR {
			a.unsent += s.drop // lost bytes are sent again
			a.deliver(s.out, t0, dt)
		}
		u := &e.ports[s.port]
		service := link
		if u.tokens < e.pkt {
			service = rate
		}
		preQ, _ := e.preDelay(s)
		delay := e.up[s.src].backlog/cfg.HostLinkRate + preQ + u.backlog/service + q.backlog/cfg.HostLinkRate
		if fr > 0 {
			delay += s.bPace / fr
		}
		base := e.rtt
		if jit > 0 {
			base *= 1 + jit*(2*e.rng.Float64()-1)
		}
		s.rtt = base + delay
		if s.protected && s.out > 0 {
			e.lat[s.flow].observe(s.rtt)
		}
		e.tcp(s, t1)
	}
	e.step++
}

// tcp updates one connection at the end of a step, from the bytes it got
// delivered (its ACKs) and the bytes it lost.
func (e *engine) tcp(s *stream, t float64) {
	acked := s.out / e.pkt
	lost := false
	if s.drop > 0 {
		n := s.drop / e.pkt
		lost = n >= 1 || e.rng.Float64() < n
	}
	switch s.ph {
	case phProbe:
		if lost {
			s.backoff++
			s.timer = t + e.rto(s)
			s.ph = phRTO
			return
		}
		s.backoff = 0
		s.ph, s.cwnd = phSS, 2
		s.recoverUntil = t + s.rtt
	case phSS, phCA:
		if lost && t >= s.recoverUntil {
			if acked < 3 || s.cwnd < 4 {
				// Too few duplicate ACKs to recover: the connection
				// stalls until its retransmission timer fires.
				e.timeout(s, t)
				return
			}
			if s.cwnd < s.wMax {
				s.wMax = s.cwnd * (1 + cubicBeta) / 2 // fast convergence
			} else {
				s.wMax = s.cwnd
			}
			s.cwnd = max(2, s.cwnd*cubicBeta)
			s.ssthresh, s.epoch, s.ph = s.cwnd, -1, phCA
			s.recoverUntil = t + s.rtt
			return
		}
		if lost || t < s.recoverUntil || s.capLt {
			return
		}
		if s.ph == phSS {
			s.cwnd += acked
			if s.cwnd >= hystartLow && s.rtt-e.rtt > min(max(e.rtt/8, 0.004), 0.016) {
				s.ssthresh = s.cwnd // HyStart: the queue is building
			}
			if e.train > 0 && s.cwnd >= hystartLow && s.cwnd*e.pkt/e.train >= e.rtt/2 {
				s.ssthresh = s.cwnd // HyStart: the ACK train spans half an RTT
			}
			if s.cwnd >= s.ssthresh {
				s.ph, s.epoch = phCA, -1
			}
			return
		}
		e.cubic(s, t, acked)
	}
}

// cubic grows the window in congestion avoidance as Linux CUBIC does,
// including its TCP-friendly region.
func (e *engine) cubic(s *stream, t, acked float64) {
	if acked <= 0 {
		return
	}
	if s.epoch < 0 {
		s.epoch = t
		s.wEst = s.cwnd
		if s.wMax <= s.cwnd {
			s.kCub, s.origin = 0, s.cwnd
		} else {
			s.kCub, s.origin = math.Cbrt((s.wMax-s.cwnd)/cubicC), s.wMax
		}
	}
	dt := t - s.epoch + e.rtt - s.kCub
	target := s.origin + cubicC*dt*dt*dt
	cnt := 100 * s.cwnd
	if target > s.cwnd {
		cnt = s.cwnd / (target - s.cwnd)
	}
	s.wEst += renoGain * acked / s.cwnd
	if s.wEst > s.cwnd {
		cnt = min(cnt, s.cwnd/(s.wEst-s.cwnd))
	}
	cnt = max(cnt, 2)
	s.cwnd += acked / cnt
}
