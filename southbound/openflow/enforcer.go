package openflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// resolve finds the leaves of a flow's two hosts.
func (s *Server) resolve(flow proflow.FlowID) (src, dst int, err error) {
	if err := flow.Validate(); err != nil {
		return 0, 0, err
	}
	i, ok := s.byAddr[flow.Src]
	if !ok {
		return 0, 0, fmt.Errorf("source %v is not a host of the fabric", flow.Src)
	}
	j, ok := s.byAddr[flow.Dst]
	if !ok {
		return 0, 0, fmt.Errorf("destination %v is not a host of the fabric", flow.Dst)
	}
	src, dst = s.hosts[i].leaf, s.hosts[j].leaf
	if src == dst {
		return 0, 0, fmt.Errorf("both hosts hang off leaf %s, so no aggregation switch carries the flow", s.cfg.Fabric.Leaves[src].Name)
	}
	return src, dst, nil
}

// Place puts flow on aggregation switch sw for both directions: override
// rules on the source leaf (forward) and the destination leaf (reverse) that
// send it to the uplink of sw. It is make-before-break: the new rules, one
// priority above the old ones, are confirmed by barrier replies from both
// leaves before the old rules are deleted; if they cannot be confirmed, Place
// removes them again (best effort) and the old rules keep carrying the flow.
// Placing a flow where it already is does nothing. The rules are leases
// (Config.LeaseTimeout) that Serve refreshes while it runs.
func (s *Server) Place(ctx context.Context, flow proflow.FlowID, sw int) error {
	start := time.Now()
	if sw < 0 || sw >= len(s.cfg.Fabric.Aggs) {
		return fmt.Errorf("openflow: place %v: %w", flow, &proflow.UnknownSwitchError{Index: sw, Known: s.cfg.Topology.Switches})
	}
	src, dst, err := s.resolve(flow)
	if err != nil {
		return fmt.Errorf("openflow: place %v: %w", flow, err)
	}
	s.emu.Lock()
	defer s.emu.Unlock()
	cur := s.placed[flow]
	if cur != nil && cur.agg == sw {
		return nil
	}
	next := &placement{flow: flow, agg: sw, gen: 1, srcLeaf: src, dstLeaf: dst}
	if cur != nil {
		if cur.gen >= priorityGenerations {
			// Out of priorities: renumber the current path to generation 1
			// (make-before-break on the same switch), then move.
			low := *cur
			low.gen = 1
			if err := s.move(ctx, cur, &low); err != nil {
				return s.placeErr(flow, sw, err)
			}
			s.placed[flow], cur = &low, &low
		}
		next.gen = cur.gen + 1
	}
	if err := s.move(ctx, cur, next); err != nil {
		return s.placeErr(flow, sw, err)
	}
	s.placed[flow] = next
	if s.m != nil {
		s.m.reroutes.WithLabelValues("ok").Inc()
		s.m.placeLat.Observe(time.Since(start).Seconds())
	}
	return nil
}

func (s *Server) placeErr(flow proflow.FlowID, sw int, err error) error {
	if s.m != nil {
		s.m.reroutes.WithLabelValues("error").Inc()
	}
	return fmt.Errorf("openflow: place %v on %s: %w", flow, s.cfg.Fabric.Aggs[sw].Name, err)
}

// move installs next, confirms it on both leaves, then deletes cur.
func (s *Server) move(ctx context.Context, cur, next *placement) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	leaves := []int{next.srcLeaf, next.dstLeaf}
	if err := s.applyLeaves(ctx, next, leaves, ofwire.FlowAdd); err != nil {
		// Not confirmed: take the new rules out again so the old ones (one
		// priority lower) keep the flow, whatever the switch did.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.RequestTimeout)
		defer rcancel()
		if rerr := s.applyLeaves(rctx, next, leaves, ofwire.FlowDeleteStrict); rerr != nil {
			s.cfg.Logger.Warn("openflow: removing unconfirmed rules failed; they expire with their lease", "flow", next.flow.String(), "error", rerr)
		}
		return err
	}
	if cur == nil {
		return nil
	}
	if err := s.applyLeaves(ctx, cur, []int{cur.srcLeaf, cur.dstLeaf}, ofwire.FlowDeleteStrict); err != nil {
		// The new rules are in force at a higher priority; the old ones are
		// no longer refreshed and expire with their lease.
		s.cfg.Logger.Warn("openflow: deleting old rules failed; they expire with their lease", "flow", cur.flow.String(), "error", err)
	}
	return nil
}

// applyLeaves sends p's rules with command cmd to the given leaves in
// parallel and waits for every barrier.
func (s *Server) applyLeaves(ctx context.Context, p *placement, leaves []int, cmd ofwire.FlowModCommand) error {
	errc := make(chan error, len(leaves))
	for _, l := range leaves {
		st := s.order[len(s.cfg.Fabric.Aggs)+l]
		mods := s.rules(p, l, cmd)
		go func() {
			sess, err := st.session()
			if err == nil {
				err = sess.apply(ctx, mods)
			}
			if err != nil {
				err = fmt.Errorf("leaf %s: %w", st.name, err)
			}
			errc <- err
		}()
	}
	var errs []error
	for range leaves {
		errs = append(errs, <-errc)
	}
	return errors.Join(errs...)
}

// setup installs base forwarding and the current overrides on a newly
// connected switch and waits for the barrier.
func (s *Server) setup(ctx context.Context, sess *session) error {
	st := sess.st
	mods := s.baseRules(st)
	s.emu.Lock()
	defer s.emu.Unlock()
	if st.leaf >= 0 {
		for _, p := range s.placed {
			mods = append(mods, s.rules(p, st.leaf, ofwire.FlowAdd)...)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*s.cfg.RequestTimeout)
	defer cancel()
	return sess.apply(ctx, mods)
}

// refreshLeases re-adds every override every third of the lease, which
// restarts its hard timeout and keeps its counters.
func (s *Server) refreshLeases(ctx context.Context) {
	if s.cfg.LeaseTimeout <= 0 {
		return
	}
	t := time.NewTicker(s.cfg.LeaseTimeout / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.emu.Lock()
		for _, p := range s.placed {
			rctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
			// A disconnected leaf gets the rules back when it reconnects.
			if err := s.applyLeaves(rctx, p, []int{p.srcLeaf, p.dstLeaf}, ofwire.FlowAdd); err != nil && !errors.Is(err, ErrDisconnected) {
				s.cfg.Logger.Warn("openflow: lease refresh failed", "flow", p.flow.String(), "error", err)
			}
			cancel()
		}
		s.emu.Unlock()
	}
}

// Locate reads the flow's override rules back from its source leaf (by
// cookie) and returns the aggregation switch they send it to. It adopts what
// it finds, so a restarted controller keeps refreshing and moving the rules
// a previous run installed. It returns an error wrapping proflow.ErrNotPlaced
// when the leaf has no override for the flow.
func (s *Server) Locate(ctx context.Context, flow proflow.FlowID) (int, error) {
	src, dst, err := s.resolve(flow)
	if err != nil {
		return -1, fmt.Errorf("openflow: locate %v: %w", flow, err)
	}
	st := s.order[len(s.cfg.Fabric.Aggs)+src]
	sess, err := st.session()
	if err != nil {
		return -1, fmt.Errorf("openflow: locate %v: %w", flow, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	body, _, err := sess.roundTrip(ctx, ofwire.FlowStatsRequest(sess.nextXID(), s.cookie(kindOverride, flowTag(flow), 0), maskFlow), ofwire.TypeMultipartReply)
	if err != nil {
		return -1, fmt.Errorf("openflow: locate %v: leaf %s flow stats: %w", flow, st.name, err)
	}
	flows, err := ofwire.ParseFlowStats(nil, body)
	if err != nil {
		return -1, fmt.Errorf("openflow: locate %v: leaf %s flow stats reply: %w", flow, st.name, err)
	}
	want, best := flowMatch(flow), -1
	for i, f := range flows {
		if f.Match == want && (best < 0 || f.Priority > flows[best].Priority) {
			best = i
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("openflow: locate %v on leaf %s: %w", flow, st.name, proflow.ErrNotPlaced)
	}
	agg := -1
	for k, p := range s.cfg.Fabric.Leaves[src].Uplinks {
		if p == flows[best].OutPort {
			agg = k
		}
	}
	gen := uint16(flows[best].Cookie & 0xffff)
	if agg < 0 || gen == 0 || gen > priorityGenerations {
		return -1, fmt.Errorf("openflow: locate %v: leaf %s rule (cookie %#x) outputs to port %d, want an uplink port %v",
			flow, st.name, flows[best].Cookie, flows[best].OutPort, s.cfg.Fabric.Leaves[src].Uplinks)
	}
	s.emu.Lock()
	s.placed[flow] = &placement{flow: flow, agg: agg, gen: gen, srcLeaf: src, dstLeaf: dst}
	s.emu.Unlock()
	return agg, nil
}

// Unplace deletes the flow's override rules, returning it to base forwarding.
func (s *Server) Unplace(ctx context.Context, flow proflow.FlowID) error {
	s.emu.Lock()
	defer s.emu.Unlock()
	p := s.placed[flow]
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	if err := s.applyLeaves(ctx, p, []int{p.srcLeaf, p.dstLeaf}, ofwire.FlowDeleteStrict); err != nil {
		return fmt.Errorf("openflow: unplace %v: %w", flow, err)
	}
	delete(s.placed, flow)
	return nil
}
