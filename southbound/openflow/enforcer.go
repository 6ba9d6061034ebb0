package openflow

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// resolve finds the leaves of a flow's two hosts.
func (s *Server) resolve(flow proflow.FlowID) (src, dst int, err error) {
	return s.cfg.Fabric.flowLeaves(flow, func(a netip.Addr) int {
		if i, ok := s.byAddr[a]; ok {
			return s.hosts[i].leaf
		}
		return -1
	})
}

// flowLeaves finds the leaves of a flow's two hosts with leafOf, which
// returns the index of the leaf an address hangs off, or -1. Hosts outside
// the fabric and a flow within one leaf are errors wrapping
// proflow.ErrNotInFabric.
func (f Fabric) flowLeaves(flow proflow.FlowID, leafOf func(netip.Addr) int) (src, dst int, err error) {
	if err := flow.Validate(); err != nil {
		return 0, 0, err
	}
	if src = leafOf(flow.Src); src < 0 {
		return 0, 0, fmt.Errorf("source %v is not a host of the fabric: %w", flow.Src, proflow.ErrNotInFabric)
	}
	if dst = leafOf(flow.Dst); dst < 0 {
		return 0, 0, fmt.Errorf("destination %v is not a host of the fabric: %w", flow.Dst, proflow.ErrNotInFabric)
	}
	if src == dst {
		return 0, 0, fmt.Errorf("both hosts hang off leaf %s, so no aggregation switch carries the flow: %w", f.Leaves[src].Name, proflow.ErrNotInFabric)
	}
	return src, dst, nil
}

// ValidateFlow reports whether Place could ever put flow on an aggregation
// switch: an error when the flow is invalid, or, wrapping
// proflow.ErrNotInFabric, when one of its hosts is not a host of the fabric
// or both hang off the same leaf. It does no I/O. proflow.NewController
// calls it (Server is a proflow.FlowValidator); NewServer has already
// checked Config.Flow the same way.
func (s *Server) ValidateFlow(flow proflow.FlowID) error {
	if _, _, err := s.resolve(flow); err != nil {
		return fmt.Errorf("openflow: flow %v: %w", flow, err)
	}
	return nil
}

// leftover names the override rules of one generation of a flow on one leaf
// that the server tried to delete and could not confirm. The server retries
// the delete on every lease refresh round and when the leaf reconnects, so a
// leftover does not outlive a failed delete even when overrides are
// permanent (Config.LeaseTimeout < 0).
type leftover struct {
	flow proflow.FlowID
	gen  uint16
	leaf int
}

// locateOp is a Locate call reading a leaf. stale is set when the flow's
// placement changes meanwhile, so Locate does not adopt an outdated reading.
// Guarded by emu.
type locateOp struct {
	flow  proflow.FlowID
	stale bool
}

// setPlaced records flow's placement (nil: none) and marks the Locate calls
// reading the flow stale. Call with emu held.
func (s *Server) setPlaced(flow proflow.FlowID, p *placement) {
	if p == nil {
		delete(s.placed, flow)
	} else {
		s.placed[flow] = p
	}
	for op := range s.locates {
		if op.flow == flow {
			op.stale = true
		}
	}
}

// keepLeftovers records p's rules on the leaves whose delete failed (errs[i]
// is the result for leaves[i]). Call with emu held.
func (s *Server) keepLeftovers(p *placement, leaves []int, errs []error) {
	for i, l := range leaves {
		if errs[i] != nil {
			s.leftovers[leftover{flow: p.flow, gen: p.gen, leaf: l}] = p
		}
	}
}

// freeGen returns the lowest generation of flow from from on whose rules are
// not leftovers waiting for their delete (priorityGenerations+1 if there is
// none), so a new placement never shares its rules (same match, priority
// and cookie) with a delete that is still to come. Call with emu held.
func (s *Server) freeGen(flow proflow.FlowID, src, dst int, from uint16) uint16 {
	g := from
	for ; g <= priorityGenerations; g++ {
		if s.leftovers[leftover{flow: flow, gen: g, leaf: src}] == nil && s.leftovers[leftover{flow: flow, gen: g, leaf: dst}] == nil {
			break
		}
	}
	return g
}

// live reports whether a leftover's rules are those of the flow's current
// placement (then they must not be deleted). Call with emu held.
func (s *Server) live(k leftover) bool {
	p := s.placed[k.flow]
	return p != nil && p.gen == k.gen
}

// lockLeaves takes emu once no refresh batch is running on the given leaves,
// so a refresh never re-adds rules that a Place or Release is changing. It
// returns with emu held, or with ctx's error and emu not held.
func (s *Server) lockLeaves(ctx context.Context, leaves ...int) error {
	s.emu.Lock()
	for {
		var busy chan struct{}
		for _, l := range leaves {
			if b := s.leafBusy[l]; b != nil {
				busy = b
				break
			}
		}
		if busy == nil {
			return nil
		}
		s.emu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.emu.Lock()
	}
}

// Place puts flow on aggregation switch sw for both directions: override
// rules on the source leaf (forward) and the destination leaf (reverse) that
// send it to the uplink of sw. It is make-before-break: the new rules, one
// priority above the old ones, are confirmed by barrier replies from both
// leaves before the old rules are deleted; if they cannot be confirmed, Place
// removes them again and the old rules keep carrying the flow. Deletes that
// cannot be confirmed are retried in the background (see Serve). Placing a
// flow where it already is does nothing; a context that has ended makes
// Place fail before it sends anything. The rules are leases
// (Config.LeaseTimeout) that Serve refreshes while it runs.
//
// A flow and its reverse take the same rules, so one direction per
// connection is placed: Place refuses a flow whose reverse is placed (until
// that is released) and sends nothing.
func (s *Server) Place(ctx context.Context, flow proflow.FlowID, sw int) error {
	start := time.Now()
	if sw < 0 || sw >= len(s.cfg.Fabric.Aggs) {
		return fmt.Errorf("openflow: place %v: %w", flow, &proflow.UnknownSwitchError{Index: sw, Known: s.cfg.Topology.Switches})
	}
	src, dst, err := s.resolve(flow)
	if err != nil {
		return fmt.Errorf("openflow: place %v: %w", flow, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("openflow: place %v: %w", flow, err)
	}
	if err := s.lockLeaves(ctx, src, dst); err != nil {
		return fmt.Errorf("openflow: place %v: waiting for the lease refresh: %w", flow, err)
	}
	defer s.emu.Unlock()
	if err := ctx.Err(); err != nil { // the lock may have taken a while
		return fmt.Errorf("openflow: place %v: %w", flow, err)
	}
	if err := s.checkReverse("place", flow); err != nil {
		return err
	}
	cur, next, err := s.prepare(ctx, flow, sw, src, dst)
	if err != nil || next == nil {
		return err
	}
	if err := s.move(ctx, cur, next); err != nil {
		return s.placeErr(flow, sw, err)
	}
	s.setPlaced(flow, next)
	if s.m != nil {
		s.m.reroutes.WithLabelValues("ok").Inc()
		s.m.placeLat.Observe(time.Since(start).Seconds())
	}
	return nil
}

// checkReverse refuses to place (or adopt) flow when its reverse is placed:
// a connection's two directions take the same override rules (the forward
// 5-tuple on the source leaf, the reverse on the other), so both placed
// would overwrite each other's rules, and the lease refresh would flip the
// connection between their switches. Call with emu held.
func (s *Server) checkReverse(op string, flow proflow.FlowID) error {
	r := flow.Reverse()
	if p := s.placed[r]; p != nil && r != flow {
		return fmt.Errorf("openflow: %s %v: its reverse %v is placed (on %s), and a connection's two directions take the same override rules, so one direction per connection is placed; move or release %v instead",
			op, flow, r, s.cfg.Fabric.Aggs[p.agg].Name, r)
	}
	return nil
}

// prepare returns the flow's current placement and the one that puts it on
// sw, with the next free generation (priority), or nil next when the flow is
// on sw already. When the generations run out it first renumbers the
// current path to the lowest free one (make-before-break on the same
// switch). Its errors are placeErr's. Call with emu held.
func (s *Server) prepare(ctx context.Context, flow proflow.FlowID, sw, src, dst int) (cur, next *placement, err error) {
	cur = s.placed[flow]
	if cur != nil && cur.agg == sw {
		return cur, nil, nil
	}
	if !s.writable(flow) {
		return nil, nil, s.placeErr(flow, sw, ErrFenced)
	}
	next = &placement{flow: flow, agg: sw, srcLeaf: src, dstLeaf: dst}
	from := uint16(1)
	if cur != nil {
		from = cur.gen + 1
	}
	next.gen = s.freeGen(flow, src, dst, from)
	if cur != nil && next.gen > priorityGenerations {
		// Out of priorities: renumber the current path to the lowest free
		// generation (make-before-break on the same switch), then move.
		low := *cur
		low.gen = s.freeGen(flow, src, dst, 1)
		if low.gen >= cur.gen {
			return nil, nil, s.placeErr(flow, sw, fmt.Errorf("no free override priority: generations 1..%d are in use or waiting for their delete", cur.gen))
		}
		if low.cookie, err = s.overrideCookie(flow, low.gen); err != nil {
			return nil, nil, s.placeErr(flow, sw, err)
		}
		if err := s.move(ctx, cur, &low); err != nil {
			return nil, nil, s.placeErr(flow, sw, err)
		}
		s.setPlaced(flow, &low)
		cur = &low
		// The renumbering may have left leftovers: look again.
		from = cur.gen + 1
		next.gen = s.freeGen(flow, src, dst, from)
	}
	if next.gen > priorityGenerations {
		return nil, nil, s.placeErr(flow, sw, fmt.Errorf("no free override priority: generations %d..%d wait for their delete", from, priorityGenerations))
	}
	if next.cookie, err = s.overrideCookie(flow, next.gen); err != nil {
		return nil, nil, s.placeErr(flow, sw, err)
	}
	return cur, next, nil
}

func (s *Server) placeErr(flow proflow.FlowID, sw int, err error) error {
	if s.m != nil {
		s.m.reroutes.WithLabelValues("error").Inc()
	}
	return fmt.Errorf("openflow: place %v on %s: %w", flow, s.cfg.Fabric.Aggs[sw].Name, err)
}

// move installs next, confirms it on both leaves, then deletes cur. Rules it
// cannot confirm deleting become leftovers, retried in the background. Call
// with emu held.
func (s *Server) move(ctx context.Context, cur, next *placement) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	leaves := []int{next.srcLeaf, next.dstLeaf}
	if err := errors.Join(s.applyEach(ctx, next, leaves, ofwire.FlowAdd)...); err != nil {
		// Not confirmed: take the new rules out again so the old ones (one
		// priority lower) keep the flow, whatever the switch did.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.RequestTimeout)
		defer rcancel()
		if rerrs := s.applyEach(rctx, next, leaves, ofwire.FlowDeleteStrict); errors.Join(rerrs...) != nil {
			s.keepLeftovers(next, leaves, rerrs)
			s.cfg.Logger.Warn("openflow: removing unconfirmed rules failed; retrying in the background", "flow", next.flow.String(), "error", errors.Join(rerrs...))
		}
		return err
	}
	if cur == nil {
		return nil
	}
	old := []int{cur.srcLeaf, cur.dstLeaf}
	if errs := s.applyEach(ctx, cur, old, ofwire.FlowDeleteStrict); errors.Join(errs...) != nil {
		// The new rules are in force at a higher priority; the old ones are
		// deleted by a later refresh round or when the leaf reconnects.
		s.keepLeftovers(cur, old, errs)
		s.cfg.Logger.Warn("openflow: deleting old rules failed; retrying in the background", "flow", cur.flow.String(), "error", errors.Join(errs...))
	}
	return nil
}

// applyEach sends p's rules with command cmd to the given leaves in parallel
// and waits for every barrier; errs[i] is the result of leaves[i].
func (s *Server) applyEach(ctx context.Context, p *placement, leaves []int, cmd ofwire.FlowModCommand) []error {
	batches := make([]leafBatch, len(leaves))
	for i, l := range leaves {
		batches[i] = leafBatch{leaf: l, mods: s.rules(p, l, cmd)}
	}
	s.applyLeaves(ctx, batches)
	errs := make([]error, len(leaves))
	for i, b := range batches {
		if err := b.first(); err != nil {
			errs[i] = fmt.Errorf("leaf %s: %w", s.leafState(b.leaf).name, err)
		}
	}
	return errs
}

// leafBatch is the flow-mods one leaf gets in one write, and after
// applyLeaves their outcome: errs[i] for mods[i], err for the batch.
type leafBatch struct {
	leaf  int
	mods  []ofwire.FlowMod
	owner []int // PlaceBatch: the move each mod belongs to
	errs  []error
	err   error
}

// first returns the batch's error, else the first flow-mod error.
func (b *leafBatch) first() error {
	if b.err != nil {
		return b.err
	}
	for i, e := range b.errs {
		if e != nil {
			return fmt.Errorf("flow-mod cookie %#x priority %d: %w", b.mods[i].Cookie, b.mods[i].Priority, e)
		}
	}
	return nil
}

// applyLeaves sends every batch to its leaf (one write of its flow-mods and
// one barrier), the leaves in parallel, and waits for every barrier.
func (s *Server) applyLeaves(ctx context.Context, batches []leafBatch) {
	var wg sync.WaitGroup
	for i := range batches {
		b := &batches[i]
		if len(b.mods) == 0 {
			continue
		}
		st := s.leafState(b.leaf)
		wg.Go(func() {
			sess, err := st.session()
			if err == nil {
				b.errs, err = sess.applyMods(ctx, b.mods)
			}
			b.err = err
		})
	}
	wg.Wait()
}

func (s *Server) leafState(l int) *switchState { return s.order[len(s.cfg.Fabric.Aggs)+l] }

// setup installs base forwarding and the current overrides on a newly
// connected switch, deletes the leftovers it holds, and waits for the
// barrier. It copies the placements under emu and talks to the switch
// without it: until setup returns the switch is not ready, so no Place or
// Release can change its rules meanwhile.
func (s *Server) setup(ctx context.Context, sess *session) error {
	st := sess.st
	mods := s.baseRules(st)
	left := map[leftover]*placement{}
	s.emu.Lock()
	if st.leaf >= 0 {
		for _, p := range s.placed {
			if s.writable(p.flow) {
				mods = append(mods, s.rules(p, st.leaf, ofwire.FlowAdd)...)
			}
		}
		for k, p := range s.leftovers {
			switch {
			case k.leaf != st.leaf:
			case s.live(k):
				delete(s.leftovers, k)
			default:
				left[k] = p
				mods = append(mods, s.rules(p, st.leaf, ofwire.FlowDeleteStrict)...)
			}
		}
	}
	s.emu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 2*s.cfg.RequestTimeout)
	defer cancel()
	if err := sess.apply(ctx, mods); err != nil {
		return err
	}
	s.emu.Lock()
	s.dropLeftovers(left)
	s.emu.Unlock()
	return nil
}

// dropLeftovers forgets leftovers whose delete was confirmed, unless they
// were recorded again meanwhile. Call with emu held.
func (s *Server) dropLeftovers(done map[leftover]*placement) {
	for k, p := range done {
		if s.leftovers[k] == p {
			delete(s.leftovers, k)
		}
	}
}

// maintain runs refresh rounds until ctx ends: every LeaseTimeout/3 when
// overrides are leases, every 3×RequestTimeout when they are permanent (then
// a round only retries leftover deletes). The ticker comes from
// Config.Clock. A round lasts about one leaf's refresh (RequestTimeout at
// most, which Config.Validate keeps within the period); one that takes
// longer than the period, timed on Config.Clock, is logged and counted
// (proflow_openflow_refresh_overruns_total). Ticks missed meanwhile are
// dropped; the system clock's ticker keeps one, so the next round then
// starts at once.
func (s *Server) maintain(ctx context.Context) {
	period := s.refreshPeriod()
	t := s.cfg.Clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		start := s.cfg.Clock.Now()
		s.refresh(ctx)
		if took := s.cfg.Clock.Now().Sub(start); took > period && ctx.Err() == nil {
			if s.m != nil {
				s.m.refreshOverruns.Inc()
			}
			s.cfg.Logger.Warn("openflow: lease refresh round took longer than its period; the next round starts late, and leases lapse if rounds keep overrunning",
				"took", took, "period", period, "lease", s.cfg.LeaseTimeout, "request_timeout", s.cfg.RequestTimeout)
		}
	}
}

// refreshPeriod is the time between two refresh rounds (see maintain).
func (s *Server) refreshPeriod() time.Duration {
	if s.cfg.LeaseTimeout < 0 {
		return 3 * s.cfg.RequestTimeout
	}
	return s.cfg.LeaseTimeout / 3
}

// refreshBatch is one leaf's part of a refresh round.
type refreshBatch struct {
	leaf int
	mods []ofwire.FlowMod
	left map[leftover]*placement // leftovers the batch deletes
	done chan struct{}
}

// refresh re-adds every override (which restarts its hard timeout and keeps
// its counters) and retries leftover deletes: one batch of flow-mods and one
// barrier per leaf, every leaf at once, each within Config.RequestTimeout,
// so the round lasts one leaf's refresh however many leaves there are (in
// waves of a few leaves at a time, a round of many slow leaves would
// outlast the lease). The placements are copied under emu and the leaves
// are written without it; a Place or Release of a flow on a leaf whose batch
// is running waits for that batch (lockLeaves), and everything else goes on.
// A batch that fails (no barrier reply in time, a flow-mod refused) is
// logged; nothing is remembered of it, so the next round, built afresh from
// the placements, sends the leaf its whole batch again. A disconnected leaf
// is skipped: setup does the same work when it reconnects.
func (s *Server) refresh(ctx context.Context) {
	batches := make([]*refreshBatch, len(s.cfg.Fabric.Leaves))
	batch := func(l int) *refreshBatch {
		if batches[l] == nil {
			batches[l] = &refreshBatch{leaf: l, left: map[leftover]*placement{}, done: make(chan struct{})}
		}
		return batches[l]
	}
	s.emu.Lock()
	if s.cfg.LeaseTimeout > 0 {
		for _, p := range s.placed {
			if !s.writable(p.flow) {
				continue // fenced: the lease lapses unless the owner takes the flow back
			}
			for _, l := range []int{p.srcLeaf, p.dstLeaf} {
				b := batch(l)
				b.mods = append(b.mods, s.rules(p, l, ofwire.FlowAdd)...)
			}
		}
	}
	for k, p := range s.leftovers {
		if s.live(k) {
			delete(s.leftovers, k)
			continue
		}
		b := batch(k.leaf)
		b.left[k] = p
		b.mods = append(b.mods, s.rules(p, k.leaf, ofwire.FlowDeleteStrict)...)
	}
	for _, b := range batches {
		if b != nil {
			s.leafBusy[b.leaf] = b.done
		}
	}
	s.emu.Unlock()

	var wg sync.WaitGroup
	for _, b := range batches {
		if b == nil {
			continue
		}
		wg.Go(func() { s.refreshLeaf(ctx, b) })
	}
	wg.Wait()
}

// refreshLeaf sends one leaf its refresh batch and waits for the barrier,
// within Config.RequestTimeout, then marks the leaf free (leafBusy).
func (s *Server) refreshLeaf(ctx context.Context, b *refreshBatch) {
	st := s.leafState(b.leaf)
	sess, err := st.session()
	if err == nil {
		rctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
		err = sess.apply(rctx, b.mods)
		cancel()
	}
	s.emu.Lock()
	if err == nil {
		s.dropLeftovers(b.left)
	}
	s.leafBusy[b.leaf] = nil
	close(b.done)
	s.emu.Unlock()
	if err != nil && !errors.Is(err, ErrDisconnected) && ctx.Err() == nil {
		s.cfg.Logger.Warn("openflow: lease refresh or leftover delete failed; retrying next round", "switch", st.name,
			"overrides", len(b.mods)-len(b.left), "leftovers", len(b.left), "error", err)
	}
}

// Locate reads the flow's override rules back from its source leaf (by
// cookie) and returns the aggregation switch they send it to. It adopts what
// it finds, so a restarted controller keeps refreshing and moving the rules
// a previous run installed. With Config.Owner it finds the rules by match,
// whatever their cookie, and re-stamps rules an earlier owner installed
// with the current owner's cookie (see Owner). If the flow's placement changes while Locate
// reads (a concurrent Place, Release or Locate), the reading is outdated:
// Locate then returns the server's current placement and adopts nothing. It
// returns an error wrapping proflow.ErrNotPlaced when the leaf has no
// override for the flow. It adopts nothing for a flow whose reverse is
// placed (one direction per connection is placed; see Place), and fails.
func (s *Server) Locate(ctx context.Context, flow proflow.FlowID) (int, error) {
	src, dst, err := s.resolve(flow)
	if err != nil {
		return -1, fmt.Errorf("openflow: locate %v: %w", flow, err)
	}
	st := s.leafState(src)
	sess, err := st.session()
	if err != nil {
		return -1, fmt.Errorf("openflow: locate %v: %w", flow, err)
	}
	op := &locateOp{flow: flow}
	s.emu.Lock()
	s.locates[op] = struct{}{}
	s.emu.Unlock()
	agg, gen, cookie, err := s.readOverride(ctx, sess, flow, src)

	s.emu.Lock()
	defer s.emu.Unlock()
	delete(s.locates, op)
	if err != nil && !errors.Is(err, proflow.ErrNotPlaced) {
		return -1, err
	}
	if op.stale {
		if cur := s.placed[flow]; cur != nil {
			return cur.agg, nil
		}
		return -1, fmt.Errorf("openflow: locate %v: removed while reading leaf %s: %w", flow, st.name, proflow.ErrNotPlaced)
	}
	if err != nil {
		return -1, err
	}
	if err := s.checkReverse("locate", flow); err != nil { // with Owner, the read finds the reverse's rules
		return -1, err
	}
	p := &placement{flow: flow, agg: agg, gen: gen, srcLeaf: src, dstLeaf: dst, cookie: cookie}
	if s.cfg.Owner != nil {
		p = s.restamp(ctx, p)
	}
	s.adopt(p)
	return agg, nil
}

// readOverride reads the flow's highest-priority override on its source
// leaf: by the flow's cookie tag, or with Config.Owner (whose cookies say
// nothing of the flow) by its match, whatever the cookie.
func (s *Server) readOverride(ctx context.Context, sess *session, flow proflow.FlowID, src int) (agg int, gen uint16, cookie uint64, err error) {
	st := sess.st
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	want := flowMatch(flow)
	req := ofwire.FlowStatsRequest(sess.nextXID(), s.cookie(kindOverride, flowTag(flow), 0), maskFlow)
	if s.cfg.Owner != nil {
		if req, err = ofwire.FlowStatsRequestMatch(sess.nextXID(), 0, 0, want); err != nil {
			return -1, 0, 0, fmt.Errorf("openflow: locate %v: %w", flow, err)
		}
	}
	body, _, err := sess.roundTrip(ctx, req, ofwire.TypeMultipartReply)
	if err != nil {
		return -1, 0, 0, fmt.Errorf("openflow: locate %v: leaf %s flow stats: %w", flow, st.name, err)
	}
	flows, err := ofwire.ParseFlowStats(nil, body)
	if err != nil {
		return -1, 0, 0, fmt.Errorf("openflow: locate %v: leaf %s flow stats reply: %w", flow, st.name, err)
	}
	best := -1
	for i := range flows {
		f := &flows[i]
		if f.Match == want && s.isOverride(f) && (best < 0 || f.Priority > flows[best].Priority) {
			best = i
		}
	}
	if best < 0 {
		return -1, 0, 0, fmt.Errorf("openflow: locate %v on leaf %s: %w", flow, st.name, proflow.ErrNotPlaced)
	}
	agg = -1
	for k, p := range s.cfg.Fabric.Leaves[src].Uplinks {
		if p == flows[best].OutPort {
			agg = k
		}
	}
	if agg < 0 {
		return -1, 0, 0, fmt.Errorf("openflow: locate %v: leaf %s rule (cookie %#x) outputs to port %d, want an uplink port %v",
			flow, st.name, flows[best].Cookie, flows[best].OutPort, s.cfg.Fabric.Leaves[src].Uplinks)
	}
	return agg, flows[best].Priority - s.cfg.OverridePriority, flows[best].Cookie, nil
}

// restamp takes over p, an override read back from a leaf, for the flow's
// current owner: when the owner's cookie differs from p's (an earlier
// owner installed the rules), it re-adds p's rule pair with the owner's
// cookie, which replaces the rules in place (same match and priority), and
// returns the re-stamped placement once both leaves confirm. From then on
// the earlier owner's cookie matches nothing, so its deletes cannot take
// the flow's rules. A fenced owner writes nothing; a failed re-add keeps
// p (the lease refresh re-adds p's rules with p's cookie, making the pair
// consistent again). Call with emu held.
func (s *Server) restamp(ctx context.Context, p *placement) *placement {
	c, ok := s.cfg.Owner.OwnerCookie(p.flow)
	if !ok || c == p.cookie {
		return p
	}
	q := *p
	q.cookie = c
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	if err := errors.Join(s.applyEach(ctx, &q, []int{q.srcLeaf, q.dstLeaf}, ofwire.FlowAdd)...); err != nil {
		s.cfg.Logger.Warn("openflow: taking over an earlier owner's rules failed; keeping its cookie", "flow", p.flow.String(),
			"cookie", fmt.Sprintf("%#x", p.cookie), "error", err)
		return p
	}
	return &q
}

// adopt makes p, read back from a leaf, the flow's placement. Leftovers of
// p's generation are p's live rules now and must not be deleted. Call with
// emu held.
func (s *Server) adopt(p *placement) {
	for _, l := range []int{p.srcLeaf, p.dstLeaf} {
		delete(s.leftovers, leftover{flow: p.flow, gen: p.gen, leaf: l})
	}
	s.setPlaced(p.flow, p)
}

// Release implements proflow.Releaser: it deletes the flow's override rule
// pair (forward on the source leaf, reverse on the destination leaf),
// returning the flow to base forwarding, and waits for both leaves'
// barriers. The base rules stay: they are permanent and carry every host
// pair, so the default path carries the flow before (and while) its
// override goes. If a leaf does not confirm the delete, Release fails and
// the flow stays placed (its leases are still refreshed; call Release
// again). A flow the server has not placed (or adopted with Locate), or
// released already, is left alone and is not an error. With Config.Owner,
// a release the owner refuses fails with ErrFenced and deletes nothing.
func (s *Server) Release(ctx context.Context, flow proflow.FlowID) error {
	s.emu.Lock()
	p := s.placed[flow]
	s.emu.Unlock()
	if p == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("openflow: release %v: %w", flow, err)
	}
	if err := s.lockLeaves(ctx, p.srcLeaf, p.dstLeaf); err != nil {
		return fmt.Errorf("openflow: release %v: waiting for the lease refresh: %w", flow, err)
	}
	defer s.emu.Unlock()
	if p = s.placed[flow]; p == nil {
		return nil
	}
	if !s.writable(flow) {
		return fmt.Errorf("openflow: release %v: %w", flow, ErrFenced)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	if err := errors.Join(s.applyEach(ctx, p, []int{p.srcLeaf, p.dstLeaf}, ofwire.FlowDeleteStrict)...); err != nil {
		return fmt.Errorf("openflow: release %v: %w", flow, err)
	}
	s.setPlaced(flow, nil)
	return nil
}

// Forget drops the server's record of flow's placement without writing to
// any switch: the flow's override rules stay until their lease lapses
// (their hard timeout), since the refresh no longer renews them, and with a
// permanent lease (LeaseTimeout < 0) until someone deletes them. A replica
// calls it for a flow whose rules another owner now manages, so that it
// neither touches them nor, should it own the flow's shard again, renews
// rules for a flow it no longer protects. A flow not placed is no error;
// it waits for a lease refresh in progress on the flow's leaves, as Release
// does.
func (s *Server) Forget(ctx context.Context, flow proflow.FlowID) error {
	s.emu.Lock()
	p := s.placed[flow]
	s.emu.Unlock()
	if p == nil {
		return nil
	}
	if err := s.lockLeaves(ctx, p.srcLeaf, p.dstLeaf); err != nil {
		return fmt.Errorf("openflow: forget %v: waiting for the lease refresh: %w", flow, err)
	}
	defer s.emu.Unlock()
	s.setPlaced(flow, nil)
	return nil
}
