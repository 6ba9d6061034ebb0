package p4runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
)

// half is one direction of one placement of a batch.
type half struct {
	slot    int // index into the batch
	d       direction
	port    uint32    // the uplink it goes to
	prev    pathState // what the device held before
	changed bool      // the device now holds port (and did not before)
	err     error
}

// PlaceBatch implements proflow.BatchEnforcer: it puts every ps[i].Flow on
// aggregation switch ps[i].Switch, as Place does for one flow, with one
// multi-update Write RPC per leaf (CONTINUE_ON_ERROR), the leaves in
// parallel. Before it, the entries the client does not know yet (its cache
// is empty after a reconnect) are read back with one multi-entity Read RPC
// per leaf. Each direction changes with one atomic update, a MODIFY of the
// existing entry or an INSERT, so every flow is make-before-break as with
// Place; directions already on their switch are not written.
//
// errs[i] is the outcome of ps[i]: nil when both directions now send the
// flow to its new switch, otherwise why not. The per-update errors of a
// Write (status UNKNOWN with one p4.v1.Error per update in its details) go
// to their flows' slots as a *DeviceError with the update's code — a full
// path_select table is RESOURCE_EXHAUSTED (status.Code(err) ==
// codes.ResourceExhausted) — and the other flows proceed. A flow whose one
// direction was written while the other failed is restored to what it was
// (one Write per restored direction), so its old placement still carries it.
//
// PlaceBatch returns an error for the batch as a whole: errs of the wrong
// length (then it does nothing), a closed client or ctx done before
// anything was written (every slot gets it too), or a leaf whose Write or
// Read failed as a whole (not primary, unreachable, past its deadline),
// which fails the slots of the flows with a direction there while the
// others are applied.
//
// One direction per connection is placed, as with Place: the slot of a
// flow whose reverse is placed, or placed earlier in the same batch, fails
// and the flow is not written.
func (c *Client) PlaceBatch(ctx context.Context, ps []proflow.Placement, errs []error) error {
	start := time.Now()
	if err := proflow.CheckBatch(ps, errs); err != nil {
		return fmt.Errorf("p4runtime: place batch: %w", err)
	}
	if err := c.checkOpen("place batch"); err != nil {
		return proflow.FailBatch(errs, err)
	}
	c.placeMu.Lock()
	defer c.placeMu.Unlock()
	n := c.cfg.Topology.NumSwitches()
	byLeaf := make([][]*half, len(c.cfg.Leaves))
	halves := make([]half, 0, 2*len(ps))
	seen := make(map[proflow.FlowID]int, len(ps))
	for i, p := range ps {
		if p.Switch < 0 || p.Switch >= n {
			errs[i] = fmt.Errorf("p4runtime: place %v: %w", p.Flow, &proflow.UnknownSwitchError{Index: p.Switch, Known: c.cfg.Topology.Switches})
			continue
		}
		dirs, err := c.directions(p.Flow)
		if err != nil {
			errs[i] = err
			continue
		}
		if j, dup := seen[p.Flow]; dup {
			errs[i] = fmt.Errorf("p4runtime: place %v: the batch places it twice (placements %d and %d), want once", p.Flow, j, i)
			continue
		}
		if j, rev := seen[p.Flow.Reverse()]; rev {
			errs[i] = fmt.Errorf("p4runtime: place %v: the batch places its reverse %v too (placements %d and %d), and a connection's two directions take the same path entries, so one direction per connection is placed; want one of them",
				p.Flow, ps[j].Flow, j, i)
			continue
		}
		if err := c.checkReverse(p.Flow); err != nil {
			errs[i] = err
			continue
		}
		seen[p.Flow] = i
		for _, d := range dirs {
			halves = append(halves, half{slot: i, d: d, port: c.cfg.Leaves[d.leaf].Uplinks[p.Switch]})
		}
	}
	for i := range halves {
		h := &halves[i]
		byLeaf[h.d.leaf] = append(byLeaf[h.d.leaf], h)
	}
	if err := ctx.Err(); err != nil {
		return proflow.FailBatch(errs, fmt.Errorf("p4runtime: place batch: %w", err))
	}

	leafErrs := make([]error, len(byLeaf))
	var wg sync.WaitGroup
	for l, hs := range byLeaf {
		if len(hs) > 0 {
			wg.Go(func() { leafErrs[l] = c.writePaths(ctx, hs) })
		}
	}
	wg.Wait()

	// Outcomes per slot, and the restore of half-moved flows.
	type outcome struct {
		errs    []error
		changed []*half
	}
	out := make(map[int]*outcome)
	for i := range halves {
		h := &halves[i]
		o := out[h.slot]
		if o == nil {
			o = &outcome{}
			out[h.slot] = o
		}
		if h.err != nil {
			o.errs = append(o.errs, h.err)
		} else if h.changed {
			o.changed = append(o.changed, h)
		}
	}
	ok := 0
	for slot, o := range out {
		if len(o.errs) == 0 {
			if len(o.changed) > 0 {
				ok++
			}
			continue
		}
		c.m.placeFailed()
		for _, h := range o.changed {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.CallTimeout)
			err := c.restore(rctx, h.d, h.prev)
			cancel()
			if err != nil {
				o.errs = append(o.errs, fmt.Errorf("restore %s: %w", c.cfg.Leaves[h.d.leaf].Name, err))
				c.logger().Error("p4runtime: could not restore a half-moved flow", slog.String("flow", h.d.flow.String()), slog.String("error", err.Error()))
			}
		}
		errs[slot] = fmt.Errorf("p4runtime: place %v on %s: %w", ps[slot].Flow, c.cfg.Topology.Switches[ps[slot].Switch], errors.Join(o.errs...))
	}
	for _, slot := range seen {
		if errs[slot] == nil {
			c.placed[ps[slot].Flow] = struct{}{}
		}
	}
	if ok > 0 && c.m != nil {
		d := time.Since(start)
		for range ok {
			c.m.placed(d)
		}
	}
	if err := errors.Join(leafErrs...); err != nil {
		return fmt.Errorf("p4runtime: place batch: %w", err)
	}
	return nil
}

// writePaths makes every half's entry on one leaf send toward its port: one
// Read of the entries not in the session's cache, then one Write of every
// INSERT and MODIFY needed. It sets each half's prev, changed and err, and
// returns an error when the leaf failed as a whole.
func (c *Client) writePaths(ctx context.Context, hs []*half) error {
	s := hs[0].d.s
	failAll := func(err error) error {
		for _, h := range hs {
			h.err = err
			s.forget(h.d.flow)
		}
		return err
	}
	lib, gen, err := s.ensureReady(ctx)
	if err != nil {
		return failAll(err)
	}
	if err := c.currentAll(ctx, s, gen, hs); err != nil {
		return failAll(err)
	}
	req := &p4v1.WriteRequest{DeviceId: s.leaf.DeviceID, Role: c.cfg.Role, Atomicity: p4v1.WriteRequest_CONTINUE_ON_ERROR}
	s.mu.Lock()
	req.ElectionId = toProto(s.election)
	s.mu.Unlock()
	var sent []*half
	for _, h := range hs {
		if h.err != nil || h.prev.present && h.prev.port == h.port {
			continue
		}
		typ := p4v1.Update_INSERT
		if h.prev.present {
			typ = p4v1.Update_MODIFY
		}
		req.Updates = append(req.Updates, &p4v1.Update{Type: typ, Entity: &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: c.pathEntry(lib, h.d.flow, h.port)}}})
		sent = append(sent, h)
	}
	if len(sent) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	_, err = s.rpc.Write(cctx, req)
	cancel()
	op := fmt.Sprintf("write: %d updates of %s entries", len(sent), p4.PathTable)
	if err == nil {
		for _, h := range sent {
			h.changed = true
			s.remember(gen, h.d.flow, pathState{present: true, port: h.port})
		}
		return nil
	}
	perUpdate := updateErrors(err, len(sent))
	if perUpdate == nil {
		err = s.fail(gen, op, err)
		for _, h := range sent {
			h.err = err
			s.forget(h.d.flow)
		}
		return err
	}
	for i, h := range sent {
		pe := perUpdate[i]
		if codes.Code(pe.GetCanonicalCode()) == codes.OK {
			h.changed = true
			s.remember(gen, h.d.flow, pathState{present: true, port: h.port})
			continue
		}
		s.forget(h.d.flow)
		code := codes.Code(pe.GetCanonicalCode())
		if code == codes.AlreadyExists || code == codes.NotFound {
			// A stale view of the device (another primary changed it):
			// setPath reads the entry back and flips INSERT and MODIFY.
			h.prev, h.changed, h.err = c.setPath(ctx, h.d, h.port)
			continue
		}
		s.m.error(code)
		h.err = &DeviceError{Leaf: s.leaf.Name, Device: s.leaf.DeviceID, Code: code, Message: pe.GetMessage(), Err: err,
			Op: fmt.Sprintf("write: %s %s entry %v -> port %d", req.Updates[i].GetType(), p4.PathTable, h.d.flow, h.port)}
	}
	return nil
}

// updateErrors returns the p4.v1.Error of each of n updates from a Write's
// error: status UNKNOWN with exactly n p4.v1.Error details (P4Runtime
// §12.3). Anything else is a failure of the RPC as a whole: nil.
func updateErrors(err error, n int) []*p4v1.Error {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unknown {
		return nil
	}
	ds := st.Details()
	if len(ds) != n {
		return nil
	}
	out := make([]*p4v1.Error, n)
	for i, d := range ds {
		pe, ok := d.(*p4v1.Error)
		if !ok {
			return nil
		}
		out[i] = pe
	}
	return out
}

// currentAll sets each half's prev: from the session's cache when it is
// valid for gen, else from one Read RPC of every missing entry. An entry
// the client cannot own (another controller's, an unexpected action) fails
// its half only.
func (c *Client) currentAll(ctx context.Context, s *session, gen uint64, hs []*half) error {
	var missing []*half
	s.mu.Lock()
	for _, h := range hs {
		st, ok := s.cache[h.d.flow]
		if ok && s.gen == gen {
			h.prev = st
		} else {
			missing = append(missing, h)
		}
	}
	s.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	req := &p4v1.ReadRequest{DeviceId: s.leaf.DeviceID, Role: c.cfg.Role, Entities: make([]*p4v1.Entity, len(missing))}
	for i, h := range missing {
		req.Entities[i] = &p4v1.Entity{Entity: &p4v1.Entity_TableEntry{TableEntry: c.keyEntry(h.d.flow)}}
	}
	ents, err := s.read(ctx, fmt.Sprintf("read %d %s entries", len(missing), p4.PathTable), req)
	if err != nil {
		return err
	}
	found := make(map[proflow.FlowID]*p4v1.TableEntry, len(ents))
	for _, e := range ents {
		if te := e.GetTableEntry(); te != nil {
			if f, ok := c.flowOf(te); ok {
				found[f] = te
			}
		}
	}
	for _, h := range missing {
		te := found[h.d.flow]
		if te == nil {
			h.prev = pathState{}
		} else if h.prev, h.err = c.pathStateOf(s, h.d.flow, te); h.err != nil {
			continue
		}
		s.remember(gen, h.d.flow, h.prev)
	}
	return nil
}
