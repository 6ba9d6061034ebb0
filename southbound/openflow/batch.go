package openflow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/internal/ofwire"
)

// move is one placement of a batch: the flow's rules go from cur (nil: base
// forwarding) to next.
type move struct {
	slot      int // index into the batch
	cur, next *placement
	err       error
}

// PlaceBatch implements proflow.BatchEnforcer: it puts every ps[i].Flow on
// aggregation switch ps[i].Switch, as Place does for one flow, with one
// write of flow-mods and one barrier per leaf and phase:
//
//  1. the new override rules of every moving flow, on every leaf involved
//     (the leaves in parallel), confirmed by each leaf's barrier reply;
//  2. for the flows whose new rules all went in, the delete of their old
//     rules; for the others, the delete of whatever of their new rules
//     went in, so their old rules (one priority lower) keep carrying them.
//
// So the batch is make-before-break for every flow: no old rule is deleted
// before the new rules of both its directions are confirmed. (Overrides
// live on the leaves only: every aggregation switch has base rules for
// every host pair, so the new path needs nothing there.)
//
// errs[i] is the outcome of ps[i]: nil when the flow now follows its new
// switch (or was there already), otherwise why not — an invalid flow or
// switch, the flow listed twice, the flow's reverse placed or earlier in
// the batch (one direction per connection is placed; see Place), or the
// switch's refusal of one of its flow-mods, such as a full flow table
// (errors.Is(err, ErrTableFull)); the other flows proceed. PlaceBatch
// returns an error for the batch as a whole: errs of the wrong length
// (then it does nothing), ctx done before anything was sent (every slot
// gets it too), or a leaf that failed as a whole (disconnected, no barrier
// reply in time), which fails the slots of the flows with rules on that
// leaf while the others are applied.
//
// Why not OpenFlow bundles (the OF1.3 bundle extension, which Open vSwitch
// supports): a bundle commits atomically, so one flow refused for a full
// table would fail every flow of its leaf, where the contract is per flow;
// and the rules of a move span two leaves, which no bundle covers. One
// write and one barrier per leaf gives the same number of round trips.
func (s *Server) PlaceBatch(ctx context.Context, ps []proflow.Placement, errs []error) error {
	start := time.Now()
	if err := proflow.CheckBatch(ps, errs); err != nil {
		return fmt.Errorf("openflow: place batch: %w", err)
	}
	type want struct{ slot, sw, src, dst int }
	wants := make([]want, 0, len(ps))
	seen := make(map[proflow.FlowID]int, len(ps))
	var leaves []int
	for i, p := range ps {
		if p.Switch < 0 || p.Switch >= len(s.cfg.Fabric.Aggs) {
			errs[i] = fmt.Errorf("openflow: place %v: %w", p.Flow, &proflow.UnknownSwitchError{Index: p.Switch, Known: s.cfg.Topology.Switches})
			continue
		}
		src, dst, err := s.resolve(p.Flow)
		if err != nil {
			errs[i] = fmt.Errorf("openflow: place %v: %w", p.Flow, err)
			continue
		}
		if j, dup := seen[p.Flow]; dup {
			errs[i] = fmt.Errorf("openflow: place %v: the batch places it twice (placements %d and %d), want once", p.Flow, j, i)
			continue
		}
		if j, rev := seen[p.Flow.Reverse()]; rev {
			errs[i] = fmt.Errorf("openflow: place %v: the batch places its reverse %v too (placements %d and %d), and a connection's two directions take the same override rules, so one direction per connection is placed; want one of them",
				p.Flow, ps[j].Flow, j, i)
			continue
		}
		seen[p.Flow] = i
		wants = append(wants, want{slot: i, sw: p.Switch, src: src, dst: dst})
		leaves = append(leaves, src, dst)
	}
	if err := ctx.Err(); err != nil {
		return proflow.FailBatch(errs, fmt.Errorf("openflow: place batch: %w", err))
	}
	if len(wants) == 0 {
		return nil
	}
	slices.Sort(leaves)
	if err := s.lockLeaves(ctx, slices.Compact(leaves)...); err != nil {
		return proflow.FailBatch(errs, fmt.Errorf("openflow: place batch: waiting for the lease refresh: %w", err))
	}
	defer s.emu.Unlock()
	if err := ctx.Err(); err != nil { // the lock may have taken a while
		return proflow.FailBatch(errs, fmt.Errorf("openflow: place batch: %w", err))
	}
	moves := make([]move, 0, len(wants))
	for _, w := range wants {
		if err := s.checkReverse("place", ps[w.slot].Flow); err != nil {
			errs[w.slot] = err
			continue
		}
		cur, next, err := s.prepare(ctx, ps[w.slot].Flow, w.sw, w.src, w.dst)
		switch {
		case err != nil:
			errs[w.slot] = err
		case next != nil:
			moves = append(moves, move{slot: w.slot, cur: cur, next: next})
		}
	}
	batchErr := s.moveBatch(ctx, moves)
	ok := 0
	for _, m := range moves {
		if m.err != nil {
			errs[m.slot] = s.placeErr(m.next.flow, m.next.agg, m.err)
			continue
		}
		s.setPlaced(m.next.flow, m.next)
		ok++
	}
	if s.m != nil && ok > 0 {
		s.m.reroutes.WithLabelValues("ok").Add(float64(ok))
		s.m.placeLat.Observe(time.Since(start).Seconds())
	}
	if batchErr != nil {
		return fmt.Errorf("openflow: place batch: %w", batchErr)
	}
	return nil
}

// moveBatch carries out moves (see PlaceBatch) and sets each one's err. It
// returns the joined errors of leaves that failed as a whole in phase 1.
// Rules whose delete is not confirmed become leftovers, retried in the
// background. Call with emu held.
func (s *Server) moveBatch(ctx context.Context, moves []move) error {
	if len(moves) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	n := len(s.cfg.Fabric.Leaves)
	batches := make([]leafBatch, n)
	for l := range batches {
		batches[l].leaf = l
	}
	add := func(j int, p *placement, cmd ofwire.FlowModCommand) {
		for _, l := range []int{p.srcLeaf, p.dstLeaf} {
			b := &batches[l]
			for _, fm := range s.rules(p, l, cmd) {
				b.mods, b.owner = append(b.mods, fm), append(b.owner, j)
			}
		}
	}
	for j := range moves {
		add(j, moves[j].next, ofwire.FlowAdd)
	}
	s.applyLeaves(ctx, batches)
	var whole []error
	for l := range batches {
		b := &batches[l]
		name := s.leafState(l).name
		if b.err != nil && len(b.mods) > 0 {
			whole = append(whole, fmt.Errorf("leaf %s: %w", name, b.err))
		}
		for i, j := range b.owner {
			switch {
			case b.err != nil:
				moves[j].err = errors.Join(moves[j].err, fmt.Errorf("leaf %s: %w", name, b.err))
			case b.errs[i] != nil:
				moves[j].err = errors.Join(moves[j].err, fmt.Errorf("leaf %s: flow-mod cookie %#x priority %d: %w", name, b.mods[i].Cookie, b.mods[i].Priority, b.errs[i]))
			}
		}
	}

	// Phase 2: delete the old rules of the flows that moved and the new
	// rules of those that did not, in a context of its own: ctx may be why
	// phase 1 failed, and the rollback must happen all the same.
	for l := range batches {
		batches[l] = leafBatch{leaf: l}
	}
	for j, m := range moves {
		switch {
		case m.err != nil:
			add(j, m.next, ofwire.FlowDeleteStrict)
		case m.cur != nil:
			add(j, m.cur, ofwire.FlowDeleteStrict)
		}
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.RequestTimeout)
	defer rcancel()
	s.applyLeaves(rctx, batches)
	var failed []error
	for l := range batches {
		b := &batches[l]
		for i, j := range b.owner {
			if b.err == nil && b.errs[i] == nil {
				continue
			}
			p := moves[j].cur
			if moves[j].err != nil {
				p = moves[j].next
			}
			s.leftovers[leftover{flow: p.flow, gen: p.gen, leaf: l}] = p
		}
		if err := b.first(); err != nil {
			failed = append(failed, fmt.Errorf("leaf %s: %w", s.leafState(l).name, err))
		}
	}
	if len(failed) > 0 {
		s.cfg.Logger.Warn("openflow: deleting old or unconfirmed rules of a batch failed; retrying in the background", "error", errors.Join(failed...))
	}
	return errors.Join(whole...)
}
