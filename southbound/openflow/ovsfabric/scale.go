package ovsfabric

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Scale maps a scenario of the simulator (package sim; the same JSON files,
// built-in or a user's own) onto the real fabric, whose buckets are far
// slower than the paper's because one ovs-vswitchd thread forwards every
// packet of the eight bridges on two cores. The rule, with r =
// BucketRateBytesPerSec / Sim.BucketRate and F = TimeFactor (the defaults
// give r = 10 Mbit/s / 200 Mbit/s = 0.05 and F = 2):
//
//   - Times: every time of the scenario (congestion start, window,
//     arrivals, moves, departures) is divided by F. S1's 20 s alone and
//     120 s window become 10 s and 60 s.
//   - The protected flow: its sender is paced at r × Sim.FlowRateLimit
//     (the simulator's per-flow pacing; the host link rate where that is
//     0) in frames, i.e. at the real bucket rate, so that alone it takes
//     the bucket's tokens as fast as they come and leaves the reserve full.
//     Senders pace payload, so every frame rate is converted with
//     Sim.MSS/Sim.PacketSize (1448/1514).
//   - A capped congester stream (stream_cap): r × its cap. An uncapped
//     ("full rate") congester host offers FullRateShare × the real bucket
//     in all, split evenly over its streams, and no stream gets more than
//     that. This is where the real fabric departs from proportion: in the
//     simulator five full-rate hosts offer 1 Gbit/s (five buckets, limited
//     by the sink's link), which on OVS would make ovs-vswitchd the
//     bottleneck of every path and starve the protected flow wherever it
//     went. With the default 0.3, five full-rate hosts offer 1.5 buckets.
//   - The protected flow's kind (rate, onoff, rr; package sim's
//     FlowKind): its rates × r and its times ÷ F, an rr flow's request
//     size × r at the same request rate (Kind has the details).
//   - The stream count is the scenario's (Sim.StreamsPerCongester where it
//     gives none).
//   - The tbf burst is set so that a precursor exists and lasts what it
//     lasts in the simulator, divided by F. In the simulator five full-rate
//     congesters on the protected flow's switch drain the reserve at
//     D_sim = min(5 × HostLinkRate, HostLinkRate) + f_sim − BucketRate
//     (the sink's link limits them; f_sim is the protected flow's paced
//     rate), so the protected flow keeps its rate for P_sim =
//     BucketBurst / D_sim (1.85 GB / 125 MB/s = 14.8 s in the datacenter
//     profile) before it collapses. On the real fabric the same five hosts
//     drain D_real = 5 × FullRateShare × B_real + r × f_sim − B_real, and
//     Burst = (P_sim / F) × D_real. With the defaults: D_real = 1.5 ×
//     1.25 MB/s = 1.875 MB/s, P = 7.4 s, burst 13.9 MB. Scenarios with
//     less load on the protected flow's switch drain it more slowly, as in
//     the simulator.
//   - The tbf queue stays QueueLatency of tokens (tc's latency, 50 ms:
//     62.5 kB at 10 Mbit/s), given to tc as a limit in bytes: with a
//     latency tc would add the burst to the queue's limit, and a queue as
//     long as the reserve would delay rather than drop.
//
// The control interval is not scaled (500 ms): a policy that counts
// intervals (the stability gate's votes, a confirmation) sees a precursor
// F times shorter in intervals than in the simulator. TimeFactor 1 keeps
// the simulator's timeline (S1 then takes 140 s).
type Scale struct {
	// Sim is the simulated world the scenarios were written for: its
	// bucket rate and burst, host link rate, per-flow pacing, stream count,
	// packet size and MSS enter the rule. Zero: sim.DefaultConfig().
	Sim sim.Config
	// BucketRateBytesPerSec is the real fabric's bucket rate (default 10
	// Mbit/s, in bytes/s).
	BucketRateBytesPerSec float64
	// TimeFactor divides every time of a scenario (default 2).
	TimeFactor float64
	// FullRateShare is the share of the real bucket that one full-rate
	// congester host offers (default 0.3).
	FullRateShare float64
	// QueueLatency is the tbf queue in time at the bucket rate (default
	// 50 ms).
	QueueLatency time.Duration
}

// Defaults of Scale.
const (
	DefaultBucketRateBytesPerSec = 10e6 / 8
	DefaultTimeFactor            = 2
	DefaultFullRateShare         = 0.3
	DefaultQueueLatency          = 50 * time.Millisecond
	// referenceCongesters is the crowd that sets the burst: the paper's
	// five congester hosts at full rate on the protected flow's switch.
	referenceCongesters = 5
)

// DefaultScale returns the scaling of the defaults above against the
// simulator's datacenter profile.
func DefaultScale() Scale {
	return Scale{Sim: sim.DefaultConfig(), BucketRateBytesPerSec: DefaultBucketRateBytesPerSec,
		TimeFactor: DefaultTimeFactor, FullRateShare: DefaultFullRateShare, QueueLatency: DefaultQueueLatency}
}

func (s Scale) withDefaults() Scale {
	if s.Sim.Switches == 0 {
		s.Sim = sim.DefaultConfig()
	}
	s.BucketRateBytesPerSec = cmp.Or(s.BucketRateBytesPerSec, DefaultBucketRateBytesPerSec)
	s.TimeFactor = cmp.Or(s.TimeFactor, DefaultTimeFactor)
	s.FullRateShare = cmp.Or(s.FullRateShare, DefaultFullRateShare)
	s.QueueLatency = cmp.Or(s.QueueLatency, DefaultQueueLatency)
	return s
}

// Validate reports every problem of the scaling (zero fields take their
// defaults), including a reference crowd that would not drain the reserve.
func (s Scale) Validate() error {
	s = s.withDefaults()
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if err := s.Sim.Validate(); err != nil {
		add("sim config: %w", err)
	}
	finitePos := func(v float64) bool { return v > 0 && !math.IsInf(v, 1) }
	if !finitePos(s.BucketRateBytesPerSec) {
		add("bucket rate %v B/s, want a finite rate > 0", s.BucketRateBytesPerSec)
	}
	if !finitePos(s.TimeFactor) {
		add("time factor %v, want a finite number > 0", s.TimeFactor)
	}
	if !finitePos(s.FullRateShare) {
		add("full-rate share %v, want a finite number > 0", s.FullRateShare)
	}
	if s.QueueLatency < 0 {
		add("queue latency %v, want a positive duration", s.QueueLatency)
	}
	if len(errs) == 0 {
		if d := s.realDrain(); !(d > 0) {
			add("five full-rate congesters offer %.0f B/s on the real fabric beside the protected flow's %.0f, below the bucket's %.0f: they would never drain the reserve, want a larger full-rate share",
				referenceCongesters*s.FullRateShare*s.BucketRateBytesPerSec, s.protectedFrames(), s.BucketRateBytesPerSec)
		}
		if d := s.simDrain(); !(d > 0) {
			add("sim config: five full-rate congesters would not drain the simulated reserve (drain %.0f B/s)", d)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ovsfabric: scale: %w", err)
	}
	return nil
}

// RateRatio returns r, the real bucket rate over the simulated one.
func (s Scale) RateRatio() float64 {
	s = s.withDefaults()
	return s.BucketRateBytesPerSec / s.Sim.BucketRate
}

// payload converts a rate of frames to the payload a sender paces.
func (s Scale) payload(frames float64) float64 { return frames * s.Sim.MSS / s.Sim.PacketSize }

// simProtected is the protected flow's paced rate in the simulator, frames.
func (s Scale) simProtected() float64 {
	f := s.Sim.HostLinkRate
	if s.Sim.FlowRateLimit > 0 {
		f = min(f, s.Sim.FlowRateLimit)
	}
	return f
}

// protectedFrames is the protected flow's paced rate on the real fabric,
// frames.
func (s Scale) protectedFrames() float64 { return s.RateRatio() * s.simProtected() }

func (s Scale) simDrain() float64 {
	c := s.Sim
	return min(referenceCongesters*c.HostLinkRate, c.HostLinkRate) + s.simProtected() - c.BucketRate
}

func (s Scale) realDrain() float64 {
	return referenceCongesters*s.FullRateShare*s.BucketRateBytesPerSec + s.protectedFrames() - s.BucketRateBytesPerSec
}

// Precursor returns how long five full-rate congesters on the protected
// flow's switch take to drain the real bucket's reserve: the simulator's
// P_sim divided by TimeFactor.
func (s Scale) Precursor() time.Duration {
	s = s.withDefaults()
	return time.Duration(s.Sim.BucketBurst / s.simDrain() / s.TimeFactor * float64(time.Second))
}

// BucketBurstBytes returns the tbf burst of the real fabric (see Scale).
func (s Scale) BucketBurstBytes() float64 {
	s = s.withDefaults()
	return math.Round(s.Precursor().Seconds() * s.realDrain())
}

// BucketLimitBytes returns the tbf queue limit of the real fabric:
// QueueLatency of tokens, at least two full-size packets.
func (s Scale) BucketLimitBytes() float64 {
	s = s.withDefaults()
	return math.Round(max(s.QueueLatency.Seconds()*s.BucketRateBytesPerSec, 2*s.Sim.PacketSize))
}

// ProtectedRate returns the payload rate the protected flow's sender is
// paced at.
func (s Scale) ProtectedRate() float64 {
	s = s.withDefaults()
	return s.payload(s.protectedFrames())
}

// StreamRate returns the payload rate each of streams streams of a
// congester host is paced at, for a stream cap capFrames of the simulator
// (0: full rate).
func (s Scale) StreamRate(streams int, capFrames float64) float64 {
	s = s.withDefaults()
	full := s.FullRateShare * s.BucketRateBytesPerSec / float64(max(streams, 1))
	if capFrames > 0 {
		full = min(full, s.RateRatio()*capFrames)
	}
	return s.payload(full)
}

// Topology returns the real fabric's topology: the simulator's switches and
// congestion leaves with the real bucket rate, which the policies' encoders
// scale rates by.
func (s Scale) Topology() proflow.Topology {
	s = s.withDefaults()
	t := s.Sim.Topology()
	t.BucketRate = s.BucketRateBytesPerSec
	return t
}

// Time returns a scenario time on the real fabric.
func (s Scale) Time(d time.Duration) time.Duration {
	s = s.withDefaults()
	return time.Duration(float64(d) / s.TimeFactor).Round(time.Millisecond)
}

// Kind returns a protected flow's kind as the real fabric runs it, by the
// rule of Scale for rates and times:
//
//   - rate and onoff: Rate × r (payload, as the simulator states it);
//     RateFraction stays a fraction, now of the real bucket. On, Off,
//     Period and From are divided by TimeFactor like every time of the
//     scenario (O1's 3 s bursts every 5 s from 20 s become 1.5 s every
//     2.5 s from 10 s); Duty stays. A burst at full rate (no rate) runs at
//     the bulk flow's pacing, as the simulator's burst runs at its
//     per-flow pacing.
//   - rr: RequestBytes × r (at least 1 byte), RequestRate, Arrivals and
//     SLO unchanged. A request then takes as long to cross the bucket as
//     in the simulator (32 KiB at 200 Mbit/s and 1,638 B at 10 Mbit/s are
//     both 1.3 ms), and each control interval sees as many completions,
//     so a completion-time percentile has as many samples; the offered
//     load is r of the simulator's, as every rate's is.
//   - bulk: unchanged.
func (s Scale) Kind(k sim.FlowKind) sim.FlowKind {
	s = s.withDefaults()
	r := s.RateRatio()
	at := func(d sim.Duration) sim.Duration { return sim.Duration(s.Time(time.Duration(d))) }
	switch k.Kind {
	case sim.KindRate, sim.KindOnOff:
		k.Rate = sim.Rate(float64(k.Rate) * r)
		k.On, k.Off, k.Period, k.From = at(k.On), at(k.Off), at(k.Period), at(k.From)
	case sim.KindRR:
		k.RequestBytes = max(1, int(math.Round(float64(k.RequestBytes)*r)))
	}
	return k
}

// realSim is Sim with the real bucket rate, which a scaled kind's
// RateFraction is a fraction of.
func (s Scale) realSim() sim.Config {
	c := s.Sim
	c.BucketRate = s.BucketRateBytesPerSec
	return c
}

// Plan is a scenario scaled to the real fabric: what to start, move and
// stop, and when, as offsets from the episode's start (when the protected
// flow starts alone).
type Plan struct {
	// Scenario names the scenario.
	Scenario string
	// ProtectedSwitch is the index of the switch carrying the protected
	// flow at the start.
	ProtectedSwitch int
	// CongestionStart opens the evaluation window; End closes it and the
	// episode.
	CongestionStart, End time.Duration
	// ProtectedRate is the protected flow's pacing, payload bytes/s: the
	// bulk flow's (Scale.ProtectedRate), or the scaled rate of a rate or
	// onoff flow (Scale.Kind) where that is lower.
	ProtectedRate float64
	// Kind is the protected flow's kind of traffic, scaled (Scale.Kind);
	// the zero value is a bulk transfer.
	Kind sim.FlowKind
	// Congesters are the congester hosts, in the scenario's order.
	Congesters []PlannedCongester
	// Events are the arrivals, moves and departures in time order.
	Events []Event
}

// PlannedCongester is one congester of the scenario on the real fabric.
type PlannedCongester struct {
	Host, Dst string
	// Streams is the number of TCP connections, each paced at
	// RateBytesPerSec (payload).
	Streams         int
	RateBytesPerSec float64
}

// EventKind says what an Event does.
type EventKind int

// Event kinds.
const (
	// Arrive pins the congester's host pair onto Switch and starts its
	// sender.
	Arrive EventKind = iota
	// Move pins the host pair onto Switch.
	Move
	// Depart stops the sender.
	Depart
)

func (k EventKind) String() string {
	switch k {
	case Arrive:
		return "arrive"
	case Move:
		return "move"
	case Depart:
		return "depart"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one change of the congestion at At.
type Event struct {
	At   time.Duration
	Kind EventKind
	// Congester indexes Plan.Congesters.
	Congester int
	// Switch is the switch index of an Arrive or Move.
	Switch int
}

// checked validates the scaling and sc against Sim and returns the scaling
// with its defaults.
func (s Scale) checked(sc *sim.Scenario) (Scale, error) {
	if err := s.Validate(); err != nil {
		return Scale{}, err
	}
	s = s.withDefaults()
	if sc == nil {
		return Scale{}, errors.New("ovsfabric: scale: scenario is nil")
	}
	if err := sc.Validate(s.Sim); err != nil {
		return Scale{}, fmt.Errorf("ovsfabric: scale: %w", err)
	}
	// The generator runs the primary protected flow of every kind; the
	// other protected flows of a scenario are not run by it at all, so
	// one of another kind would be silently dropped.
	for i, p := range sc.Protected {
		if i > 0 && !p.Kind.IsBulk() {
			return Scale{}, fmt.Errorf("ovsfabric: scale: scenario %s: protected[%d] of kind %q, want bulk (the fabric's traffic generator gives a kind to the primary protected flow only)", sc.Name, i, p.Kind.Kind)
		}
	}
	return s, nil
}

// Plan scales sc (validated against Sim) to the real fabric.
func (s Scale) Plan(sc *sim.Scenario) (*Plan, error) {
	s, err := s.checked(sc)
	if err != nil {
		return nil, err
	}
	switches := s.Sim.Topology().Switches
	index := func(name string) int { return slices.Index(switches, name) }
	p := &Plan{Scenario: sc.Name, ProtectedSwitch: index(sc.ProtectedSwitch),
		CongestionStart: s.Time(sc.Start()), End: s.Time(sc.Length()), ProtectedRate: s.ProtectedRate(), Kind: s.Kind(sc.PrimaryKind())}
	if d := p.Kind.DemandRate(s.realSim()); d > 0 {
		p.ProtectedRate = min(p.ProtectedRate, d)
	}
	for i, c := range sc.Congesters {
		streams := cmp.Or(c.Streams, s.Sim.StreamsPerCongester)
		p.Congesters = append(p.Congesters, PlannedCongester{Host: c.Host, Dst: cmp.Or(c.Dst, s.Sim.CongestionSink),
			Streams: streams, RateBytesPerSec: s.StreamRate(streams, float64(c.StreamCap))})
		p.Events = append(p.Events, Event{At: s.Time(time.Duration(c.Arrive)), Kind: Arrive, Congester: i, Switch: index(c.Switch)})
		for _, m := range c.Moves {
			p.Events = append(p.Events, Event{At: s.Time(time.Duration(m.At)), Kind: Move, Congester: i, Switch: index(m.Switch)})
		}
		if c.Depart != 0 {
			p.Events = append(p.Events, Event{At: s.Time(time.Duration(c.Depart)), Kind: Depart, Congester: i, Switch: -1})
		}
	}
	// Stable: a congester's own events keep their order at equal times,
	// and a departure comes before another's arrival at the same time.
	slices.SortStableFunc(p.Events, func(a, b Event) int {
		if c := cmp.Compare(a.At, b.At); c != 0 {
			return c
		}
		return cmp.Compare(b.Kind, a.Kind)
	})
	return p, nil
}

// Retime returns the plan with the evaluation window opening at start and
// lasting window (either zero: the plan's own). Every event moves with the
// congestion start, and so does an onoff flow's From; events at or after
// the new end are dropped.
func (p *Plan) Retime(start, window time.Duration) *Plan {
	q := *p
	if start > 0 {
		shift := start - p.CongestionStart
		q.CongestionStart, q.End = start, p.End+shift
		if q.Kind.From != 0 {
			q.Kind.From = sim.Duration(max(0, time.Duration(q.Kind.From)+shift))
		}
		q.Events = nil
		for _, e := range p.Events {
			e.At = max(0, e.At+shift)
			q.Events = append(q.Events, e)
		}
	}
	if window > 0 {
		q.End = q.CongestionStart + window
	}
	q.Events = slices.DeleteFunc(slices.Clone(q.Events), func(e Event) bool { return e.At >= q.End })
	return &q
}

// Scenario returns sc as the real fabric runs it, written for the
// simulator's ovs profile (sim.OVSConfig, the fabric's twin): every time
// divided by TimeFactor as Plan divides it, and every congester's streams
// capped at the rate the fabric paces them at (StreamRate, in frames), so
// that a full-rate congester offers FullRateShare of the bucket as on the
// fabric rather than what its simulated host link passes. Simulating the
// result under the ovs profile gives the simulated counterpart of a real
// episode, cell by cell. The result is a new scenario; sc is not changed.
func (s Scale) Scenario(sc *sim.Scenario) (*sim.Scenario, error) {
	s, err := s.checked(sc)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: scale scenario %s: %w", sc.Name, err)
	}
	out := new(sim.Scenario)
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("ovsfabric: scale scenario %s: %w", sc.Name, err)
	}
	at := func(d sim.Duration) sim.Duration { return sim.Duration(s.Time(time.Duration(d))) }
	out.CongestionStart, out.Window = at(sim.Duration(sc.Start())), at(sim.Duration(sc.Length()-sc.Start()))
	for i := range out.Congesters {
		c := &out.Congesters[i]
		c.Streams = cmp.Or(c.Streams, s.Sim.StreamsPerCongester)
		c.StreamCap = sim.Rate(math.Round(s.StreamRate(c.Streams, float64(c.StreamCap)) * s.Sim.PacketSize / s.Sim.MSS))
		c.Arrive = at(c.Arrive)
		if c.Depart != 0 {
			c.Depart = at(c.Depart)
		}
		for j := range c.Moves {
			c.Moves[j].At = at(c.Moves[j].At)
		}
	}
	if len(out.Protected) > 0 {
		out.Protected[0].Kind = s.Kind(out.Protected[0].Kind)
	} else {
		out.ProtectedKind = s.Kind(out.ProtectedKind)
	}
	if out.Description != "" {
		out.Description += " "
	}
	out.Description += fmt.Sprintf("Scaled to the OVS fabric (ovsfabric.Scale): times ÷ %g, every stream capped at its paced rate on a %.0f B/s bucket.", s.TimeFactor, s.BucketRateBytesPerSec)
	return out, nil
}
