package sim

import (
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// The kinds of protected flow (FlowKind.Kind).
const (
	// KindBulk is a backlogged bulk transfer (iperf3): the flow always has
	// data to send. It is the default kind and the paper's f_p.
	KindBulk = "bulk"
	// KindRate is a constant-bitrate flow (a video at its bitrate): the
	// application writes at FlowKind's rate and no faster.
	KindRate = "rate"
	// KindOnOff sends in bursts separated by idle gaps.
	KindOnOff = "onoff"
	// KindRR is request/response traffic: requests of a stated size at a
	// stated rate over the one connection, each request's completion time
	// measured.
	KindRR = "rr"
)

// The arrival processes of a request/response flow (FlowKind.Arrivals).
const (
	// ArrivalsPeriodic issues a request every 1/RequestRate seconds.
	ArrivalsPeriodic = "periodic"
	// ArrivalsPoisson issues requests as a Poisson process of rate
	// RequestRate, drawn from a random source of its own.
	ArrivalsPoisson = "poisson"
)

// DefaultSLOMargin is what a request/response flow's default completion
// time objective allows above the profile's BaseRTT.
const DefaultSLOMargin = 10 * time.Millisecond

// MaxRequestBytes bounds FlowKind.RequestBytes (1 GB).
const MaxRequestBytes = 1 << 30

// MaxRequestRate bounds FlowKind.RequestRate and RequestRateFrom (100,000
// requests a second): the simulator tracks every outstanding request, so
// a higher rate would hold millions of them in an episode's memory.
const MaxRequestRate = 1e5

// FlowKind says what traffic a protected flow carries (package
// documentation, "Protected-flow kinds"). The zero value is a bulk
// transfer. Only the fields of the kind may be set: Rate or RateFraction
// for rate and onoff; On and Off, or Period and Duty, and From for onoff;
// RequestBytes, RequestRate, Arrivals, SLO, and From with
// RequestRateFrom, for rr.
type FlowKind struct {
	// Kind is KindBulk (or empty), KindRate, KindOnOff or KindRR.
	Kind string `json:"kind"`
	// Rate is the application's rate, bytes/s of payload (goodput): the
	// constant bitrate of a rate flow, the rate during an onoff flow's
	// bursts (zero: as fast as TCP allows).
	Rate Rate `json:"rate,omitempty"`
	// RateFraction gives Rate instead as a fraction of the bucket rate C
	// (Config.BucketRate), in (0, 1].
	RateFraction float64 `json:"rate_fraction,omitempty"`
	// On and Off are the lengths of an onoff flow's bursts and of the idle
	// gaps between them.
	On  Duration `json:"on,omitempty"`
	Off Duration `json:"off,omitempty"`
	// Period and Duty state the same cycle instead: a burst every Period,
	// lasting Duty (in (0, 1)) of it.
	Period Duration `json:"period,omitempty"`
	Duty   float64  `json:"duty,omitempty"`
	// From is when an onoff flow's cycle begins, counted from the start of
	// the episode; before it the flow sends as in a burst. For an rr flow
	// it is when the request rate changes from RequestRate to
	// RequestRateFrom (both or neither of from and request_rate_from).
	From Duration `json:"from,omitempty"`
	// RequestBytes is the size of each request of an rr flow, bytes of
	// payload, 1..MaxRequestBytes.
	RequestBytes int `json:"request_bytes,omitempty"`
	// RequestRate is the number of requests an rr flow issues per second,
	// a finite number > 0.
	RequestRate float64 `json:"request_rate,omitempty"`
	// RequestRateFrom is the number of requests an rr flow issues per
	// second from From on (a demand that changes mid-episode, as in T2),
	// a finite number > 0; zero means RequestRate throughout.
	RequestRateFrom float64 `json:"request_rate_from,omitempty"`
	// Arrivals is ArrivalsPeriodic (or empty) or ArrivalsPoisson.
	Arrivals string `json:"arrivals,omitempty"`
	// SLO is an rr flow's completion time objective, which the evaluation
	// counts violations of; zero means the profile's BaseRTT plus
	// DefaultSLOMargin.
	SLO Duration `json:"slo,omitempty"`
}

// Name returns the kind's name, KindBulk for the zero value.
func (k FlowKind) Name() string {
	if k.Kind == "" {
		return KindBulk
	}
	return k.Kind
}

// IsBulk reports whether k is a bulk transfer (the zero value included).
func (k FlowKind) IsBulk() bool { return k.Kind == "" || k.Kind == KindBulk }

// DemandRate returns what the application asks of the network while it
// sends, bytes/s of payload: the rate of a rate flow, the burst rate of an
// onoff flow (zero when it bursts at full rate), RequestBytes ×
// RequestRate for rr (before From, where its rate changes), and zero for
// bulk (it takes whatever it gets).
func (k FlowKind) DemandRate(cfg Config) float64 {
	switch k.Kind {
	case KindRate, KindOnOff:
		if k.RateFraction > 0 {
			return k.RateFraction * cfg.BucketRate
		}
		return float64(k.Rate)
	case KindRR:
		return float64(k.RequestBytes) * k.RequestRate
	}
	return 0
}

// Sending reports whether the flow's application sends at time t after the
// start of the episode: false only in an onoff flow's idle gaps.
func (k FlowKind) Sending(t time.Duration) bool {
	if k.Kind != KindOnOff {
		return true
	}
	on, period := k.cycle()
	return onAt(t.Seconds(), time.Duration(k.From).Seconds(), on, period)
}

// cycle returns an onoff flow's burst length and period, seconds.
func (k FlowKind) cycle() (on, period float64) {
	if k.Period > 0 {
		p := time.Duration(k.Period).Seconds()
		return k.Duty * p, p
	}
	on = time.Duration(k.On).Seconds()
	return on, on + time.Duration(k.Off).Seconds()
}

// onAt reports whether a cycle of bursts of on seconds every period
// seconds, beginning at from, is in a burst at time t.
func onAt(t, from, on, period float64) bool {
	if t < from {
		return true
	}
	return math.Mod(t-from, period) < on
}

// SLOFor returns an rr flow's completion time objective under cfg: SLO,
// or cfg.BaseRTT + DefaultSLOMargin; zero for the other kinds.
func (k FlowKind) SLOFor(cfg Config) time.Duration {
	if k.Kind != KindRR {
		return 0
	}
	if k.SLO > 0 {
		return time.Duration(k.SLO)
	}
	return cfg.BaseRTT + DefaultSLOMargin
}

// validate checks the kind; field names it in problems ("protected_kind",
// "protected[2].kind").
func (k FlowKind) validate(field string, p *problems) {
	kinds := KindBulk + ", " + KindRate + ", " + KindOnOff + " or " + KindRR
	switch k.Kind {
	case "", KindBulk, KindRate, KindOnOff, KindRR:
	default:
		p.add(field+".kind", "%q, want %s", clip(k.Kind), kinds)
		return
	}
	name := k.Name()
	// Every field that is not one of the kind's.
	uses := map[string][]string{
		KindBulk:  nil,
		KindRate:  {"rate", "rate_fraction"},
		KindOnOff: {"rate", "rate_fraction", "on", "off", "period", "duty", "from"},
		KindRR:    {"request_bytes", "request_rate", "arrivals", "slo", "from", "request_rate_from"},
	}[name]
	set := []struct {
		name string
		set  bool
	}{
		{"rate", k.Rate != 0}, {"rate_fraction", k.RateFraction != 0},
		{"on", k.On != 0}, {"off", k.Off != 0}, {"period", k.Period != 0}, {"duty", k.Duty != 0}, {"from", k.From != 0},
		{"request_bytes", k.RequestBytes != 0}, {"request_rate", k.RequestRate != 0}, {"request_rate_from", k.RequestRateFrom != 0},
		{"arrivals", k.Arrivals != ""}, {"slo", k.SLO != 0},
	}
	for _, s := range set {
		if s.set && !contains(uses, s.name) {
			want := "no such field"
			if len(uses) > 0 {
				want = "only " + strings.Join(uses, ", ")
			}
			p.add(field+"."+s.name, "set for kind %s, which takes %s", name, want)
		}
	}
	dur := func(f string, d Duration, positive bool) bool {
		switch {
		case d == invalidDuration:
			p.add(field+"."+f, "not a duration, want for example \"2s\"")
		case d < 0:
			p.add(field+"."+f, "%v is negative, want a duration >= 0", time.Duration(d))
		case positive && d == 0:
			p.add(field+"."+f, "zero, want a positive duration")
		default:
			return true
		}
		return false
	}
	rate := func(required bool) {
		switch r := float64(k.Rate); {
		case math.IsNaN(r):
			p.add(field+".rate", "not a rate, want for example \"96Mbit/s\"")
		case r < 0 || math.IsInf(r, 0):
			p.add(field+".rate", "%v, want a finite rate > 0", k.Rate)
		case r > 0 && k.RateFraction != 0:
			p.add(field+".rate_fraction", "set with rate, want one of rate and rate_fraction")
		}
		if f := k.RateFraction; f != 0 && !(f > 0 && f <= 1) {
			p.add(field+".rate_fraction", "%v, want a fraction of the bucket rate C in (0, 1]", f)
		}
		if required && k.Rate == 0 && k.RateFraction == 0 {
			p.add(field+".rate", "unset, want the flow's rate (rate, for example \"96Mbit/s\", or rate_fraction of C)")
		}
	}
	switch name {
	case KindRate:
		rate(true)
	case KindOnOff:
		rate(false)
		dur("from", k.From, false)
		cycle := k.On != 0 || k.Off != 0
		duty := k.Period != 0 || k.Duty != 0
		switch {
		case cycle && duty:
			p.add(field+".period", "set with on/off, want either on and off or period and duty")
		case duty:
			dur("period", k.Period, true)
			if !(k.Duty > 0 && k.Duty < 1) {
				p.add(field+".duty", "%v, want the fraction of the period spent sending, in (0, 1)", k.Duty)
			}
		default:
			dur("on", k.On, true)
			dur("off", k.Off, true)
		}
	case KindRR:
		if k.RequestBytes < 1 || k.RequestBytes > MaxRequestBytes {
			p.add(field+".request_bytes", "%d, want a request size of 1..%d bytes", k.RequestBytes, MaxRequestBytes)
		}
		if r := k.RequestRate; !(r > 0) || r > MaxRequestRate {
			p.add(field+".request_rate", "%v, want a number of requests per second > 0 and at most %g", r, float64(MaxRequestRate))
		}
		switch k.Arrivals {
		case "", ArrivalsPeriodic, ArrivalsPoisson:
		default:
			p.add(field+".arrivals", "%q, want %s (the default) or %s", clip(k.Arrivals), ArrivalsPeriodic, ArrivalsPoisson)
		}
		dur("slo", k.SLO, false)
		dur("from", k.From, false)
		switch r := k.RequestRateFrom; {
		case r != 0 && (!(r > 0) || r > MaxRequestRate):
			p.add(field+".request_rate_from", "%v, want a number of requests per second > 0 and at most %g from from on", r, float64(MaxRequestRate))
		case r != 0 && k.From == 0:
			p.add(field+".from", "unset with request_rate_from, want when the request rate changes (for example \"40s\")")
		case r == 0 && k.From != 0:
			p.add(field+".request_rate_from", "unset with from, want the request rate from from on")
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// capRate returns the wire rate the engine caps a flow of kind k at (the
// application's payload rate in frames, PacketSize/MSS more), zero for
// none; cap is the flow's Protected.Cap, which only a bulk flow has.
func (k FlowKind) capRate(cfg Config, cap float64) float64 {
	switch k.Kind {
	case KindRate, KindOnOff:
		return k.DemandRate(cfg) * cfg.PacketSize / cfg.MSS
	}
	return cap
}

// newApp returns the application model of a flow of kind k (nil for bulk
// and rate, which the engine models with capRate alone); seed and flow
// seed an rr flow's Poisson arrivals.
func (k FlowKind) newApp(cfg Config, seed uint64, flow int) *app {
	switch k.Kind {
	case KindOnOff:
		on, period := k.cycle()
		return &app{kind: k.Kind, on: on, period: period, from: time.Duration(k.From).Seconds()}
	case KindRR:
		a := &app{kind: k.Kind,
			reqBytes: float64(k.RequestBytes) * cfg.PacketSize / cfg.MSS,
			gap:      1 / k.RequestRate,
			from:     math.Inf(1),
			oneWay:   cfg.BaseRTT.Seconds() / 2,
			reqs:     make([]request, 0, 64),
		}
		if k.RequestRateFrom > 0 {
			a.from, a.gapFrom = time.Duration(k.From).Seconds(), 1/k.RequestRateFrom
		}
		if k.Arrivals == ArrivalsPoisson {
			a.rng = rand.New(rand.NewPCG(seed, 0x7265717565737473+uint64(flow)))
			a.next = a.rng.ExpFloat64() * a.gap
		}
		return a
	}
	return nil
}

// app is the application behind an onoff or rr protected flow: what it
// gives TCP to send. Bytes are wire bytes, as everywhere in the engine.
type app struct {
	kind string

	// onoff: bursts of on seconds every period, from from on. rr: the
	// request rate changes at from (+Inf: never).
	on, period, from float64

	// rr
	reqBytes  float64    // wire bytes per request
	gap       float64    // mean seconds between requests
	gapFrom   float64    // mean seconds between requests from from on
	rng       *rand.Rand // Poisson arrivals; nil: periodic
	next      float64    // when the next request is issued
	oneWay    float64    // one-way propagation delay added to a completion, seconds
	unsent    float64    // bytes issued (or lost and to be resent) not yet given to TCP
	issued    float64    // bytes issued since the start
	delivered float64    // bytes delivered since the start
	reqs      []request  // outstanding requests, oldest first from head
	head      int
	done      []float64 // completion times of this interval's requests, seconds

	started  bool
	lastSend float64 // when the flow last sent, for the restart after idle
}

// request is one outstanding request of an rr flow: when it was issued
// and the cumulative issued bytes at its last byte.
type request struct {
	at, end float64
}

// issue adds the requests due by time t.
func (a *app) issue(t float64) {
	for a.next <= t {
		a.issued += a.reqBytes
		a.unsent += a.reqBytes
		if a.head > 0 && len(a.reqs) == cap(a.reqs) {
			n := copy(a.reqs, a.reqs[a.head:])
			a.reqs, a.head = a.reqs[:n], 0
		}
		a.reqs = append(a.reqs, request{at: a.next, end: a.issued})
		gap := a.gap
		if a.next >= a.from {
			gap = a.gapFrom
		}
		if a.rng != nil {
			a.next += a.rng.ExpFloat64() * gap
		} else {
			a.next += gap
		}
	}
}

// deliver counts out bytes delivered in the step [t0, t0+dt] and records
// the completion time of every request whose last byte they carried; the
// byte's time within the step is interpolated.
func (a *app) deliver(out, t0, dt float64) {
	if out <= 0 {
		return
	}
	before := a.delivered
	a.delivered += out
	const slack = 0.5 // bytes: rounding of the cumulative sums, which grows with them; less than the smallest request (one payload byte)
	for a.head < len(a.reqs) && a.reqs[a.head].end <= a.delivered+slack {
		r := a.reqs[a.head]
		at := t0 + dt*min(1, max(0, (r.end-before)/out))
		a.done = append(a.done, at-r.at+a.oneWay)
		a.head++
	}
	if a.head == len(a.reqs) {
		a.reqs, a.head = a.reqs[:0], 0
	}
}

// oldest returns the age at time t of the oldest outstanding request
// (plus the one-way delay its last byte still needs at best), and false
// when none is outstanding.
func (a *app) oldest(t float64) (float64, bool) {
	if a.head == len(a.reqs) {
		return 0, false
	}
	return t - a.reqs[a.head].at + a.oneWay, true
}

// appSend applies the application of s to what TCP would send in the step
// starting at t (s.send): nothing in an onoff flow's gaps, no more than
// the unsent requests of an rr flow. A flow that the application left
// idle for longer than its retransmission timeout, with nothing in
// flight, first restarts its window as Linux does
// (tcp_slow_start_after_idle): ssthresh keeps three quarters of the
// window, which halves once per timeout of idleness, down to the initial
// window.
func (e *engine) appSend(s *stream, t float64) {
	a := s.app
	if !a.started {
		a.started, a.lastSend = true, t
	}
	if a.kind == KindRR {
		a.issue(t)
	}
	if s.ph != phSS && s.ph != phCA {
		if a.kind == KindRR && s.send > 0 { // a retransmission probe
			// It carries what the application wrote, no more: with
			// nothing left to send it is empty and only resumes the
			// connection.
			s.send = min(s.send, a.unsent)
			a.unsent -= s.send
			a.lastSend = t
		}
		return
	}
	switch a.kind {
	case KindOnOff:
		if !onAt(t, a.from, a.on, a.period) {
			s.send, s.capLt, s.appLt = 0, true, true
			return
		}
	case KindRR:
		if a.unsent <= 0 {
			s.send, s.capLt, s.appLt = 0, true, true
			return
		}
	}
	if idle := t - a.lastSend; idle > e.rto(s) && s.queued() < e.pkt {
		e.restartAfterIdle(s, idle)
		s.send = min(s.send, s.cwnd*e.pkt/s.rtt*e.dt)
	}
	if a.kind == KindRR {
		if a.unsent < s.send {
			s.send, s.capLt, s.appLt = a.unsent, true, true
		}
		a.unsent -= s.send
	}
	a.lastSend = t
}

// restartAfterIdle restarts the window of a connection idle for idle
// seconds (Linux tcp_cwnd_restart).
func (e *engine) restartAfterIdle(s *stream, idle float64) {
	restart := min(e.cfg.InitialWindow, s.cwnd)
	s.ssthresh = max(s.ssthresh, s.cwnd*3/4)
	rto := e.rto(s)
	for idle > rto && s.cwnd > restart {
		s.cwnd /= 2
		idle -= rto
	}
	s.cwnd = max(s.cwnd, restart)
	s.epoch = -1
	if s.cwnd < s.ssthresh {
		s.ph = phSS
	}
}
