package openflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// sample is one poll of a switch: its port counters and the counters of the
// server's own rules, stamped with the time the reply arrived.
type sample struct {
	at    time.Time
	rtt   time.Duration
	ports []ofwire.PortStats
	flows []ofwire.FlowStats
}

// pollOp is a poll in flight; done closes when s or err is set.
type pollOp struct {
	done chan struct{}
	s    *sample
	err  error
}

// poll returns the outstanding poll of st or starts one. At most one poll per
// switch is in flight: a caller that finds one outstanding waits for it
// instead of sending another request.
func (s *Server) poll(st *switchState) *pollOp {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.poll != nil {
		if s.m != nil {
			s.m.polls.WithLabelValues("joined").Inc()
		}
		return st.poll
	}
	op := &pollOp{done: make(chan struct{})}
	if st.sess == nil || !st.ready {
		op.err = fmt.Errorf("switch %s (%#x): %w", st.name, st.dpid, ErrDisconnected)
		close(op.done)
		return op
	}
	sess := st.sess
	st.poll = op
	started := s.goroutine(func() {
		smp, err := s.pollStats(sess)
		st.mu.Lock()
		st.poll = nil
		if err == nil {
			st.prev, st.cur = st.cur, smp
		}
		st.mu.Unlock()
		if s.m != nil {
			if err != nil {
				s.m.polls.WithLabelValues("error").Inc()
			} else {
				s.m.polls.WithLabelValues("ok").Inc()
				s.m.pollLatency.Observe(smp.rtt.Seconds())
			}
		}
		op.s, op.err = smp, err
		close(op.done)
	})
	if !started {
		st.poll = nil
		op.err = fmt.Errorf("switch %s: %w", st.name, ErrServerClosed)
		close(op.done)
	}
	return op
}

// pollStats requests port statistics and the statistics of the server's own
// flows in one write, and waits for both (reassembled) replies.
func (s *Server) pollStats(sess *session) (*sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout)
	defer cancel()
	px, fx := sess.nextXID(), sess.nextXID()
	pc := sess.register(px, ofwire.TypeMultipartReply)
	fc := sess.register(fx, ofwire.TypeMultipartReply)
	defer sess.unregister(px, fx)
	start := time.Now()
	// With an Owner, overrides carry the owners' cookies: read every rule.
	cookie, mask := uint64(s.cfg.CookiePrefix)<<48, maskOurs
	if s.cfg.Owner != nil {
		cookie, mask = 0, 0
	}
	if err := sess.write(ofwire.PortStatsRequest(px), ofwire.FlowStatsRequest(fx, cookie, mask)); err != nil {
		return nil, err
	}
	if err := sess.wait(ctx, pc); err != nil {
		return nil, fmt.Errorf("port stats: %w", err)
	}
	if err := sess.wait(ctx, fc); err != nil {
		return nil, fmt.Errorf("flow stats: %w", err)
	}
	smp := &sample{at: pc.at, rtt: time.Since(start)}
	if fc.at.After(smp.at) {
		smp.at = fc.at
	}
	var err error
	if smp.ports, err = ofwire.ParsePortStats(nil, pc.body); err != nil {
		return nil, fmt.Errorf("port stats reply: %w", err)
	}
	if smp.flows, err = ofwire.ParseFlowStats(nil, fc.body); err != nil {
		return nil, fmt.Errorf("flow stats reply: %w", err)
	}
	return smp, nil
}

// Collect polls every switch of the fabric (port and flow statistics, in
// parallel) and fills obs with the rates between each switch's two latest
// polls (the inputs of the paper's App. A):
//
//   - TxRate ρ_k: bytes/s sent on aggregation switch k's ports toward the leaves.
//   - FlowCount n_k: host-pair entries of k whose packet counter advanced
//     during the interval. k keeps one entry per direction of each host
//     pair, so one connection counts 2 (the simulator's definition).
//   - ElephantRate e_k: summed rate of those entries faster than
//     Config.ElephantFraction × Topology.BucketRate.
//   - Leaves (Topology.Leaves): IngressRate λ = bytes/s received on host
//     ports minus the protected flows' own bytes (each flow of obs.FlowIDs,
//     or Config.Flow when FlowIDs is empty; never below zero);
//     TransmitRate μ = bytes/s sent on uplinks.
//   - Flow.Throughput φ: Config.Flow's forward override rules on its
//     source leaf (its base pair rule while it has no override);
//     Flow.CongestionRate F = Σ λ over Topology.Leaves.
//   - Flows[i] (a multi-flow controller lists its flows in obs.FlowIDs):
//     the Throughput of FlowIDs[i], measured as φ is — the byte counters
//     of its forward override rules on its source leaf over the interval,
//     or of its base host-pair rule while it has no override (that rule
//     counts every flow of the host pair) — and the fabric-wide F. A flow
//     whose hosts are not hosts of the fabric, or hang off one leaf, has no
//     rule to count: Collect fails with an error naming flow_ids[i] and
//     wrapping proflow.ErrNotInFabric (proflow.NewMultiController refuses
//     such flows through ValidateFlow, so it is not expected in practice).
//     The rates of many flows cost one pass over each source leaf's rules
//     and a map lookup per flow.
//
// OverflowRate is left at zero: tc counters are not OpenFlow (see package
// telemetry/tcstat). obs.Time is the oldest of the switches' sample times.
// A switch that is disconnected, does not answer within
// Config.RequestTimeout or ctx, or has only one sample yet makes Collect fail
// with an error wrapping proflow.ErrStale (or proflow.ErrMissingSwitch for a
// disconnected switch).
func (s *Server) Collect(ctx context.Context, obs *proflow.Observation) error {
	topo := s.cfg.Topology
	obs.Resize(topo)
	ops := make([]*pollOp, len(s.order))
	for i, st := range s.order {
		ops[i] = s.poll(st)
	}
	// Wait for every poll before judging any, so that a failure of one
	// switch does not leave the others' polls behind for the next call.
	for i, op := range ops {
		select {
		case <-op.done:
		case <-ctx.Done():
			st := s.order[i]
			return fmt.Errorf("openflow: switch %s (%#x) stats: %w (%w)", st.name, st.dpid, ctx.Err(), proflow.ErrStale)
		}
	}
	samples := make([][2]*sample, len(s.order))
	for i, op := range ops {
		st := s.order[i]
		if op.err != nil {
			cause := proflow.ErrStale
			if errors.Is(op.err, ErrDisconnected) {
				cause = proflow.ErrMissingSwitch
			}
			return fmt.Errorf("openflow: switch %s (%#x) stats: %w (%w)", st.name, st.dpid, op.err, cause)
		}
		st.mu.Lock()
		prev, cur := st.prev, st.cur
		st.mu.Unlock()
		if prev == nil {
			return fmt.Errorf("openflow: switch %s (%#x): first sample, rates need two: %w", st.name, st.dpid, proflow.ErrStale)
		}
		if !cur.at.After(prev.at) {
			return fmt.Errorf("openflow: switch %s (%#x): sample time %v does not advance past %v: %w", st.name, st.dpid, cur.at, prev.at, proflow.ErrStale)
		}
		samples[i] = [2]*sample{prev, cur}
	}
	if err := s.compute(obs, samples); err != nil {
		return fmt.Errorf("openflow: collect: %w", err)
	}
	return nil
}

// Peek implements proflow.Peeker: it polls every switch, as Collect does,
// and fills obs with the rates between each switch's latest sample (the
// last Collect's) and this poll, without keeping this poll: the next
// Collect's rates still span the whole time since the last Collect. The
// signals are Collect's, over the shorter time; obs.Time is the oldest of
// this poll's times. A switch that is disconnected or has no sample yet,
// or a poll that fails or outlasts ctx, makes Peek fail as Collect would.
func (s *Server) Peek(ctx context.Context, obs *proflow.Observation) error {
	obs.Resize(s.cfg.Topology)
	type polled struct {
		smp *sample
		err error
	}
	replies := make([]chan polled, len(s.order))
	samples := make([][2]*sample, len(s.order))
	for i, st := range s.order {
		st.mu.Lock()
		sess, ready, cur := st.sess, st.ready, st.cur
		st.mu.Unlock()
		switch {
		case sess == nil || !ready:
			return fmt.Errorf("openflow: peek: switch %s (%#x): %w (%w)", st.name, st.dpid, ErrDisconnected, proflow.ErrMissingSwitch)
		case cur == nil:
			return fmt.Errorf("openflow: peek: switch %s (%#x): no sample yet, want a Collect first: %w", st.name, st.dpid, proflow.ErrStale)
		}
		samples[i][0] = cur
		ch := make(chan polled, 1) // buffered: a poll left behind by an early return ends on its own
		replies[i] = ch
		if !s.goroutine(func() { smp, err := s.pollStats(sess); ch <- polled{smp, err} }) {
			return fmt.Errorf("openflow: peek: switch %s: %w", st.name, ErrServerClosed)
		}
	}
	for i, ch := range replies {
		st := s.order[i]
		select {
		case r := <-ch:
			if r.err != nil {
				return fmt.Errorf("openflow: peek: switch %s (%#x) stats: %w (%w)", st.name, st.dpid, r.err, proflow.ErrStale)
			}
			if !r.smp.at.After(samples[i][0].at) {
				return fmt.Errorf("openflow: peek: switch %s (%#x): sample time %v does not advance past %v: %w", st.name, st.dpid, r.smp.at, samples[i][0].at, proflow.ErrStale)
			}
			samples[i][1] = r.smp
		case <-ctx.Done():
			return fmt.Errorf("openflow: peek: switch %s (%#x) stats: %w (%w)", st.name, st.dpid, ctx.Err(), proflow.ErrStale)
		}
	}
	if err := s.compute(obs, samples); err != nil {
		return fmt.Errorf("openflow: peek: %w", err)
	}
	return nil
}

// compute fills obs from the (previous, current) samples of s.order.
func (s *Server) compute(obs *proflow.Observation, samples [][2]*sample) error {
	nAgg := len(s.cfg.Fabric.Aggs)
	elephant := s.cfg.ElephantFraction * s.cfg.Topology.BucketRate
	oldest := time.Time{}
	for _, pc := range samples {
		if oldest.IsZero() || pc[1].at.Before(oldest) {
			oldest = pc[1].at
		}
	}
	obs.Time = oldest
	for k, a := range s.cfg.Fabric.Aggs {
		prev, cur := samples[k][0], samples[k][1]
		dt := cur.at.Sub(prev.at).Seconds()
		sw := &obs.Switches[k]
		sw.TxRate = portDelta(prev, cur, a.LeafPorts, false) / dt
		pf := flowIndex(prev)
		sw.FlowCount, sw.ElephantRate = 0, 0
		for _, f := range cur.flows {
			if f.Cookie != s.cookie(kindBase, 0, 0) || f.Match.Has&ofwire.HasIPSrc == 0 {
				continue
			}
			old, seen := pf[flowKey{f.Cookie, f.Priority, f.Match}]
			// A counter that went backwards (packets or bytes: the switch
			// is untrusted input) means the rule was re-created: count
			// the current counters in full rather than wrap around.
			dp, db := f.Packets, f.Bytes
			if seen && f.Packets >= old.Packets && f.Bytes >= old.Bytes {
				dp, db = f.Packets-old.Packets, f.Bytes-old.Bytes
			}
			if dp == 0 {
				continue
			}
			sw.FlowCount++
			if r := float64(db) / dt; r > elephant {
				sw.ElephantRate += r
			}
		}
	}

	// The protected flows, on their source leaves: obs.FlowIDs, or
	// Config.Flow for a single-flow controller. Each one's throughput is
	// taken off its source leaf's ingress rate λ, which counts congestion
	// traffic only.
	sc := &s.scratch
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.reset(len(s.cfg.Fabric.Leaves))
	phi := 0.0
	if s.cfg.Flow != (proflow.FlowID{}) {
		if src, _, err := s.resolve(s.cfg.Flow); err == nil {
			phi = s.flowRate(sc, samples, s.cfg.Flow, src)
			if len(obs.FlowIDs) == 0 {
				sc.protected[src] += phi
			}
		}
	}
	obs.Flow.Throughput = phi
	for i, id := range obs.FlowIDs {
		src, _, err := s.resolve(id)
		if err != nil {
			return fmt.Errorf("flow_ids[%d]: %v has no rules on the fabric: %w", i, id, err)
		}
		r := s.flowRate(sc, samples, id, src)
		obs.Flows[i].Throughput = r
		sc.protected[src] += r
	}
	obs.Flow.CongestionRate = 0
	for i, name := range s.cfg.Topology.Leaves {
		l := s.cfg.Fabric.leafIndex(name)
		lf := s.cfg.Fabric.Leaves[l]
		prev, cur := samples[nAgg+l][0], samples[nAgg+l][1]
		dt := cur.at.Sub(prev.at).Seconds()
		sc.ports = sc.ports[:0]
		for _, h := range lf.Hosts {
			sc.ports = append(sc.ports, h.Port)
		}
		in := max(0, portDelta(prev, cur, sc.ports, true)/dt-sc.protected[l])
		obs.Leaves[i] = proflow.LeafSample{IngressRate: in, TransmitRate: portDelta(prev, cur, lf.Uplinks, false) / dt}
		obs.Flow.CongestionRate += in
	}
	for i := range obs.Flows {
		obs.Flows[i].CongestionRate = obs.Flow.CongestionRate
	}
	return nil
}

// flowScratch is Collect's reusable index of the source leaves' rule
// counters, so that the throughput of many protected flows costs one pass
// over each leaf's rules and a map lookup per flow.
type flowScratch struct {
	mu        sync.Mutex
	indexed   []bool               // per leaf: rates holds its rules
	prev      map[flowKey]uint64   // previous byte counters of the leaf being indexed
	rates     map[leafRule]float64 // bytes/s per (leaf, match, override or base)
	protected []float64            // per leaf: summed throughput of its protected flows
	ports     []uint32
}

// leafRule keys the summed rate of one leaf's override rules (ovr) or base
// host-pair rule with one match.
type leafRule struct {
	leaf  int
	match ofwire.Match
	ovr   bool
}

func (sc *flowScratch) reset(leaves int) {
	if sc.rates == nil {
		sc.prev, sc.rates = map[flowKey]uint64{}, map[leafRule]float64{}
	}
	clear(sc.rates)
	sc.indexed = resize(sc.indexed, leaves)
	sc.protected = resize(sc.protected, leaves)
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		s = make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// index fills sc.rates with the rates of leaf's overrides and base
// host-pair rules between its two samples. A rule absent from prev
// (installed since) counts from zero; a counter that went backwards (rule
// re-created) too.
func (s *Server) index(sc *flowScratch, leaf int, prev, cur *sample) {
	sc.indexed[leaf] = true
	clear(sc.prev)
	for _, f := range prev.flows {
		sc.prev[flowKey{f.Cookie, f.Priority, f.Match}] = f.Bytes
	}
	dt := cur.at.Sub(prev.at).Seconds()
	base := s.cookie(kindBase, 0, 0)
	for i := range cur.flows {
		f := &cur.flows[i]
		ovr := s.isOverride(f)
		if !ovr && (f.Cookie != base || f.Match.Has&ofwire.HasIPSrc == 0) {
			continue
		}
		d := f.Bytes
		if old, ok := sc.prev[flowKey{f.Cookie, f.Priority, f.Match}]; ok && f.Bytes >= old {
			d = f.Bytes - old
		}
		sc.rates[leafRule{leaf, f.Match, ovr}] += float64(d) / dt
	}
}

// flowRate returns the throughput of flow, bytes/s, from the byte counters
// of its forward rules on its source leaf src: its override rules (every
// generation: during a move both count), or its base host-pair rule while
// it has none — which counts every flow of the host pair, the flow's
// default path has no counter of its own. Like the port counters, the
// rule counters count frames, headers included.
func (s *Server) flowRate(sc *flowScratch, samples [][2]*sample, flow proflow.FlowID, src int) float64 {
	if !sc.indexed[src] {
		pc := samples[len(s.cfg.Fabric.Aggs)+src]
		s.index(sc, src, pc[0], pc[1])
	}
	if r, ok := sc.rates[leafRule{src, flowMatch(flow), true}]; ok {
		return r
	}
	return sc.rates[leafRule{src, pairMatch(flow.Src, flow.Dst), false}]
}

type flowKey struct {
	cookie   uint64
	priority uint16
	match    ofwire.Match
}

func flowIndex(s *sample) map[flowKey]ofwire.FlowStats {
	m := make(map[flowKey]ofwire.FlowStats, len(s.flows))
	for _, f := range s.flows {
		m[flowKey{f.Cookie, f.Priority, f.Match}] = f
	}
	return m
}

// portDelta sums the byte counters (received when rx, else transmitted) of
// ports between two samples; a counter that went backwards (the switch
// restarted) counts from zero.
func portDelta(prev, cur *sample, ports []uint32, rx bool) float64 {
	var total uint64
	for _, p := range ports {
		var a, b uint64
		var okA, okB bool
		for _, ps := range prev.ports {
			if ps.PortNo == p {
				a, okA = pick(ps, rx), true
			}
		}
		for _, ps := range cur.ports {
			if ps.PortNo == p {
				b, okB = pick(ps, rx), true
			}
		}
		switch {
		case !okB:
		case !okA || b < a:
			total += b
		default:
			total += b - a
		}
	}
	return float64(total)
}

func pick(p ofwire.PortStats, rx bool) uint64 {
	if rx {
		return p.RxBytes
	}
	return p.TxBytes
}
