package p4runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/p4runtime/p4"
)

// direction is one half of a placement: the flow's 5-tuple as seen by the
// leaf where it enters the fabric.
type direction struct {
	s    *session
	leaf int
	flow proflow.FlowID
}

// directions returns the forward direction (on the source host's leaf) and
// the reverse direction (on the destination host's leaf).
func (c *Client) directions(flow proflow.FlowID) ([2]direction, error) {
	var d [2]direction
	src, dst, err := c.cfg.flowLeaves(flow)
	if err != nil {
		return d, fmt.Errorf("p4runtime: %w", err)
	}
	d[0] = direction{s: c.sessions[src], leaf: src, flow: flow}
	d[1] = direction{s: c.sessions[dst], leaf: dst, flow: flow.Reverse()}
	return d, nil
}

// ValidateFlow reports whether Place could ever put flow on an aggregation
// switch: an error when the flow is invalid or IPv6, or, wrapping
// proflow.ErrNotInFabric, when no configured leaf lists one of its hosts or
// both hosts are behind one leaf. It does no I/O. proflow.NewController
// calls it (Client is a proflow.FlowValidator); Dial has already checked
// Config.Flow the same way.
func (c *Client) ValidateFlow(flow proflow.FlowID) error {
	if _, _, err := c.cfg.flowLeaves(flow); err != nil {
		return fmt.Errorf("p4runtime: %w", err)
	}
	return nil
}

// eachDirection runs f on both directions in parallel and waits for both.
func eachDirection(dirs [2]direction, f func(i int, d direction)) {
	var wg sync.WaitGroup
	for i, d := range dirs {
		wg.Go(func() { f(i, d) })
	}
	wg.Wait()
}

// Place puts flow on aggregation switch sw for both directions: on the
// source host's leaf the forward 5-tuple, on the destination host's leaf the
// reverse 5-tuple, each a path_select entry with action set_uplink toward
// that leaf's uplink to sw, tagged with Config.Owner as metadata.
//
// Each direction changes with one atomic update: a MODIFY of the existing
// entry (the old uplink carries the flow until the new one does, and the
// direct counter keeps counting), or an INSERT where there was none (base
// forwarding until then). The two leaves are written in parallel. Place is
// idempotent: a direction already on sw is not written. If one direction
// fails, the other is restored to what it was, so the old placement still
// carries the flow; the error names the leaf and the refusal (a
// *DeviceError; errors.Is(err, ErrNotPrimary) when this client is not
// primary).
//
// A flow and its reverse take the same two entries, so one direction per
// connection is placed: Place refuses a flow whose reverse this client has
// placed and not released (Release or Remove) since, and writes nothing.
func (c *Client) Place(ctx context.Context, flow proflow.FlowID, sw int) error {
	start := time.Now()
	if err := c.checkOpen(fmt.Sprintf("place %v", flow)); err != nil {
		return err
	}
	if n := c.cfg.Topology.NumSwitches(); sw < 0 || sw >= n {
		return fmt.Errorf("p4runtime: place %v: %w", flow, &proflow.UnknownSwitchError{Index: sw, Known: c.cfg.Topology.Switches})
	}
	dirs, err := c.directions(flow)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("p4runtime: place %v: %w", flow, err)
	}
	c.placeMu.Lock()
	defer c.placeMu.Unlock()
	if err := c.checkReverse(flow); err != nil {
		return err
	}
	type result struct {
		prev    pathState
		changed bool
		err     error
	}
	var res [2]result
	eachDirection(dirs, func(i int, d direction) {
		port := c.cfg.Leaves[d.leaf].Uplinks[sw]
		res[i].prev, res[i].changed, res[i].err = c.setPath(ctx, d, port)
	})
	if res[0].err == nil && res[1].err == nil {
		if res[0].changed || res[1].changed {
			c.m.placed(time.Since(start))
		}
		c.placed[flow] = struct{}{}
		return nil
	}
	c.m.placeFailed()
	errs := []error{}
	for i, r := range res {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		if !r.changed {
			continue
		}
		// Undo the direction that moved, with a context of its own: ctx may
		// be the reason the other direction failed.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.CallTimeout)
		err := c.restore(rctx, dirs[i], r.prev)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", c.cfg.Leaves[dirs[i].leaf].Name, err))
			c.logger().Error("p4runtime: could not restore a half-moved flow", slog.String("flow", flow.String()), slog.String("error", err.Error()))
		}
	}
	return fmt.Errorf("p4runtime: place %v on %s: %w", flow, c.cfg.Topology.Switches[sw], errors.Join(errs...))
}

// checkReverse refuses to place flow when its reverse is placed: both
// directions of a connection take the same entries (the forward 5-tuple on
// the source host's leaf, the reverse on the other), so placing the
// reverse would move the flow. Call with placeMu held.
func (c *Client) checkReverse(flow proflow.FlowID) error {
	r := flow.Reverse()
	if _, ok := c.placed[r]; ok && r != flow {
		return fmt.Errorf("p4runtime: place %v: its reverse %v is placed, and a connection's two directions take the same path entries, so one direction per connection is placed; move or release %v instead", flow, r, r)
	}
	return nil
}

// restore puts one direction back to prev (an entry with prev.port, or none).
func (c *Client) restore(ctx context.Context, d direction, prev pathState) error {
	if prev.present {
		_, _, err := c.setPath(ctx, d, prev.port)
		return err
	}
	return c.clearPath(ctx, d)
}

// matchFields are path_select's match fields for flow, built with
// p4runtime-go-client's match types (canonical bytestrings).
func matchFields(flow proflow.FlowID) map[string]client.MatchInterface {
	src, dst := flow.Src.As4(), flow.Dst.As4()
	mfs := map[string]client.MatchInterface{
		p4.FieldIPv4Src: &client.ExactMatch{Value: src[:]},
		p4.FieldIPv4Dst: &client.ExactMatch{Value: dst[:]},
	}
	if flow.Proto != 0 {
		mfs[p4.FieldIPProto] = &client.TernaryMatch{Value: []byte{flow.Proto}, Mask: []byte{0xff}}
	}
	if flow.SrcPort != 0 {
		mfs[p4.FieldL4SrcPort] = &client.TernaryMatch{Value: be16(flow.SrcPort), Mask: []byte{0xff, 0xff}}
	}
	if flow.DstPort != 0 {
		mfs[p4.FieldL4DstPort] = &client.TernaryMatch{Value: be16(flow.DstPort), Mask: []byte{0xff, 0xff}}
	}
	return mfs
}

// beUint decodes a big-endian bytestring (at most 8 bytes).
func beUint(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

func be16(v uint16) []byte { return []byte{byte(v >> 8), byte(v)} }

// portBytes encodes a port number as a canonical bytestring.
func portBytes(port uint32) []byte {
	var b []byte
	for v := port; v != 0; v >>= 8 {
		b = append([]byte{byte(v)}, b...)
	}
	if len(b) == 0 {
		b = []byte{0}
	}
	return b
}

func (c *Client) pathEntry(lib *client.Client, flow proflow.FlowID, port uint32) *p4v1.TableEntry {
	var act *p4v1.TableAction
	if port != noPort {
		act = lib.NewTableActionDirect(p4.SetUplinkAction, [][]byte{portBytes(port)})
	}
	te := lib.NewTableEntry(p4.PathTable, matchFields(flow), act, &client.TableEntryOptions{Priority: c.cfg.Priority})
	te.Metadata = c.cfg.Owner
	return te
}

const noPort = ^uint32(0)

// keyEntry is the path_select entry key of flow, for reads (generated
// client: the read carries only the key and the metadata filter).
func (c *Client) keyEntry(flow proflow.FlowID) *p4v1.TableEntry {
	src, dst := flow.Src.As4(), flow.Dst.As4()
	te := &p4v1.TableEntry{TableId: c.ids.pathTable, Priority: c.cfg.Priority, Match: []*p4v1.FieldMatch{
		{FieldId: c.ids.fSrc, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: client.ToCanonicalIf(src[:], true)}}},
		{FieldId: c.ids.fDst, FieldMatchType: &p4v1.FieldMatch_Exact_{Exact: &p4v1.FieldMatch_Exact{Value: client.ToCanonicalIf(dst[:], true)}}},
	}}
	tern := func(id uint32, v, mask []byte) {
		te.Match = append(te.Match, &p4v1.FieldMatch{FieldId: id, FieldMatchType: &p4v1.FieldMatch_Ternary_{
			Ternary: &p4v1.FieldMatch_Ternary{Value: client.ToCanonicalIf(v, true), Mask: mask}}})
	}
	if flow.Proto != 0 {
		tern(c.ids.fProto, []byte{flow.Proto}, []byte{0xff})
	}
	if flow.SrcPort != 0 {
		tern(c.ids.fSport, be16(flow.SrcPort), []byte{0xff, 0xff})
	}
	if flow.DstPort != 0 {
		tern(c.ids.fDport, be16(flow.DstPort), []byte{0xff, 0xff})
	}
	return te
}

// current returns what the device holds for d's entry, from the session's
// cache when it is valid for gen, else read back.
func (c *Client) current(ctx context.Context, d direction, gen uint64) (pathState, error) {
	s := d.s
	s.mu.Lock()
	st, ok := s.cache[d.flow]
	ok = ok && s.gen == gen
	s.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := c.readPath(ctx, d)
	if err != nil {
		return st, err
	}
	s.remember(gen, d.flow, st)
	return st, nil
}

func (s *session) remember(gen uint64, flow proflow.FlowID, st pathState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen == gen && s.cache != nil {
		s.cache[flow] = st
	}
}

func (s *session) forget(flow proflow.FlowID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cache, flow)
}

// readPath reads back d's entry by its key.
func (c *Client) readPath(ctx context.Context, d direction) (pathState, error) {
	ents, err := d.s.read(ctx, "read path entry "+d.flow.String(), &p4v1.ReadRequest{DeviceId: d.s.leaf.DeviceID,
		Role: c.cfg.Role, Entities: []*p4v1.Entity{{Entity: &p4v1.Entity_TableEntry{TableEntry: c.keyEntry(d.flow)}}}})
	if err != nil {
		return pathState{}, err
	}
	for _, e := range ents {
		if te := e.GetTableEntry(); te != nil {
			return c.pathStateOf(d.s, d.flow, te)
		}
	}
	return pathState{}, nil
}

// pathStateOf checks a path_select entry read back for flow (this client's
// owner mark, a set_uplink action) and returns its state.
func (c *Client) pathStateOf(s *session, flow proflow.FlowID, te *p4v1.TableEntry) (pathState, error) {
	if string(te.GetMetadata()) != string(c.cfg.Owner) {
		return pathState{}, &DeviceError{Leaf: s.leaf.Name, Device: s.leaf.DeviceID, Op: "read path entry " + flow.String(),
			Code: codes.FailedPrecondition, Message: fmt.Sprintf("entry has metadata %q, not this client's %q", te.GetMetadata(), c.cfg.Owner), Err: ErrForeignEntry}
	}
	port, ok := c.uplinkPort(te)
	if !ok {
		return pathState{}, &DeviceError{Leaf: s.leaf.Name, Device: s.leaf.DeviceID, Op: "read path entry " + flow.String(),
			Code: codes.FailedPrecondition, Message: fmt.Sprintf("entry's action is %v, want %s(port)", te.GetAction(), p4.SetUplinkAction)}
	}
	return pathState{present: true, port: port}, nil
}

// uplinkPort returns the port of a set_uplink entry.
func (c *Client) uplinkPort(te *p4v1.TableEntry) (uint32, bool) {
	a := te.GetAction().GetAction()
	if a.GetActionId() != c.ids.setUplink {
		return 0, false
	}
	for _, p := range a.GetParams() {
		if p.GetParamId() == c.ids.portParam && len(p.GetValue()) <= 4 {
			return uint32(beUint(p.GetValue())), true
		}
	}
	return 0, false
}

// setPath makes d's entry send toward port and returns what was there.
func (c *Client) setPath(ctx context.Context, d direction, port uint32) (prev pathState, changed bool, err error) {
	s := d.s
	lib, gen, err := s.ensureReady(ctx)
	if err != nil {
		return prev, false, err
	}
	if prev, err = c.current(ctx, d, gen); err != nil {
		return prev, false, err
	}
	if prev.present && prev.port == port {
		return prev, false, nil
	}
	te := c.pathEntry(lib, d.flow, port)
	modify := prev.present
	for attempt := 0; ; attempt++ {
		op := fmt.Sprintf("write: insert %s entry %v -> port %d", p4.PathTable, d.flow, port)
		write := lib.InsertTableEntry
		if modify {
			op = fmt.Sprintf("write: modify %s entry %v -> port %d", p4.PathTable, d.flow, port)
			write = lib.ModifyTableEntry
		}
		cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
		err = write(cctx, te)
		cancel()
		if err == nil {
			s.remember(gen, d.flow, pathState{present: true, port: port})
			return prev, true, nil
		}
		err = s.fail(gen, op, err)
		var de *DeviceError
		if attempt > 0 || !errors.As(err, &de) {
			break
		}
		// A stale view of the device (another primary changed it): flip
		// INSERT and MODIFY once.
		if de.Code == codes.AlreadyExists && !modify || de.Code == codes.NotFound && modify {
			s.forget(d.flow)
			st, rerr := c.readPath(ctx, d)
			if rerr == nil {
				prev, modify = st, st.present
				continue
			}
			err = fmt.Errorf("%w; reading the entry back to retry failed: %w", err, rerr)
		}
		break
	}
	s.forget(d.flow)
	return prev, false, err
}

// clearPath deletes d's entry; a missing entry is fine.
func (c *Client) clearPath(ctx context.Context, d direction) error {
	s := d.s
	lib, gen, err := s.ensureReady(ctx)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	err = lib.DeleteTableEntry(cctx, c.pathEntry(lib, d.flow, noPort))
	if err != nil {
		err = s.fail(gen, fmt.Sprintf("write: delete %s entry %v", p4.PathTable, d.flow), err)
		var de *DeviceError
		if !errors.As(err, &de) || de.Code != codes.NotFound {
			s.forget(d.flow)
			return err
		}
	}
	s.remember(gen, d.flow, pathState{})
	return nil
}

// Remove deletes the flow's entries in both directions, returning it to
// base forwarding (ECMP): it is Release, whose doc says the rest. Entries
// already gone are not an error; another owner's entries fail with
// ErrForeignEntry and stay.
func (c *Client) Remove(ctx context.Context, flow proflow.FlowID) error {
	return c.release(ctx, "remove", flow)
}

// Release implements proflow.Releaser: it deletes the flow's path_select
// entries on both leaves (the forward 5-tuple on the source host's leaf,
// the reverse on the destination host's), in parallel, so that base
// forwarding (ipv4_lpm) carries the flow again. Each direction goes with
// one atomic DELETE: the same lookup that stops hitting the entry falls
// through to path_select's default keep_base_path and the port ipv4_lpm
// chose, so the base path carries the flow from the packet after the
// delete on — no packet meets a missing rule.
//
// Release deletes only this client's own entries: an entry with another
// owner's metadata fails with ErrForeignEntry and stays. A flow with
// nothing installed is not an error, even for a backup client (the entries
// are read back to tell); deleting needs the client to be primary
// (ErrNotPrimary). Other flows' entries are untouched. The flow's reverse,
// which has the same entries, is released with it.
func (c *Client) Release(ctx context.Context, flow proflow.FlowID) error {
	return c.release(ctx, "release", flow)
}

// release is Release, its errors prefixed with op.
func (c *Client) release(ctx context.Context, op string, flow proflow.FlowID) error {
	if err := c.checkOpen(fmt.Sprintf("%s %v", op, flow)); err != nil {
		return err
	}
	dirs, err := c.directions(flow)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("p4runtime: %s %v: %w", op, flow, err)
	}
	c.placeMu.Lock()
	defer c.placeMu.Unlock()
	var errs [2]error
	eachDirection(dirs, func(i int, d direction) { errs[i] = c.releasePath(ctx, d) })
	if err := errors.Join(errs[0], errs[1]); err != nil {
		return fmt.Errorf("p4runtime: %s %v: %w", op, flow, err)
	}
	delete(c.placed, flow)
	delete(c.placed, flow.Reverse())
	return nil
}

// releasePath deletes d's entry if the device holds one of this client's.
func (c *Client) releasePath(ctx context.Context, d direction) error {
	s := d.s
	lib, gen, err := s.ensureReady(ctx)
	if err != nil {
		if !errors.Is(err, ErrNotPrimary) {
			return err
		}
		// A backup cannot delete, but has nothing to do where the device
		// holds no entry for d.
		st, rerr := c.readPath(ctx, d)
		if rerr == nil && !st.present {
			return nil
		}
		return err
	}
	st, err := c.current(ctx, d, gen)
	if err != nil {
		return err
	}
	if !st.present {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	if err := lib.DeleteTableEntry(cctx, c.pathEntry(lib, d.flow, noPort)); err != nil {
		err = s.fail(gen, fmt.Sprintf("write: delete %s entry %v", p4.PathTable, d.flow), err)
		s.forget(d.flow)
		var de *DeviceError
		if errors.As(err, &de) && de.Code == codes.NotFound {
			return nil // gone already (another primary deleted it)
		}
		return err
	}
	s.remember(gen, d.flow, pathState{})
	return nil
}

// Locate reads back the flow's owned entries on both leaves and returns the
// aggregation switch they send it to; proflow.ErrNotPlaced when neither
// exists. Reads need no primary, so a backup can locate. When the two
// directions disagree or one is missing (a primary that failed half-way),
// the forward direction wins and, if this client is primary, the other is
// repaired to match.
func (c *Client) Locate(ctx context.Context, flow proflow.FlowID) (int, error) {
	if err := c.checkOpen(fmt.Sprintf("locate %v", flow)); err != nil {
		return -1, err
	}
	dirs, err := c.directions(flow)
	if err != nil {
		return -1, err
	}
	c.placeMu.Lock()
	defer c.placeMu.Unlock()
	var sts [2]pathState
	var errs [2]error
	eachDirection(dirs, func(i int, d direction) {
		d.s.mu.Lock()
		gen := d.s.gen
		d.s.mu.Unlock()
		if sts[i], errs[i] = c.readPath(ctx, d); errs[i] == nil {
			d.s.remember(gen, d.flow, sts[i])
		}
	})
	if err := errors.Join(errs[0], errs[1]); err != nil {
		return -1, fmt.Errorf("p4runtime: locate %v: %w", flow, err)
	}
	var sw [2]int
	for i, st := range sts {
		sw[i] = -1
		if !st.present {
			continue
		}
		if sw[i] = c.switchOf(dirs[i].leaf, st.port); sw[i] < 0 {
			return -1, fmt.Errorf("p4runtime: locate %v: leaf %s sends it to port %d, which is not an uplink (%v)",
				flow, c.cfg.Leaves[dirs[i].leaf].Name, st.port, c.cfg.Leaves[dirs[i].leaf].Uplinks)
		}
	}
	k, fix := sw[0], 1
	if k < 0 {
		k, fix = sw[1], 0
	}
	if k < 0 {
		return -1, fmt.Errorf("p4runtime: locate %v: %w", flow, proflow.ErrNotPlaced)
	}
	if sw[fix] != k {
		d := dirs[fix]
		if p, _, _ := d.s.state(); p {
			if _, _, err := c.setPath(ctx, d, c.cfg.Leaves[d.leaf].Uplinks[k]); err != nil {
				c.logger().Warn("p4runtime: could not repair a half-placed flow", slog.String("flow", d.flow.String()), slog.String("error", err.Error()))
			} else {
				c.logger().Info("p4runtime: repaired a half-placed flow", slog.String("flow", d.flow.String()), slog.String("switch", c.cfg.Topology.Switches[k]))
			}
		}
	}
	return k, nil
}

func (c *Client) switchOf(leaf int, port uint32) int {
	for k, p := range c.cfg.Leaves[leaf].Uplinks {
		if p == port {
			return k
		}
	}
	return -1
}

// flowOf decodes a path_select entry's match into a FlowID.
func (c *Client) flowOf(te *p4v1.TableEntry) (proflow.FlowID, bool) {
	var f proflow.FlowID
	addr := func(b []byte) netip.Addr {
		v := beUint(b)
		return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
	}
	for _, fm := range te.GetMatch() {
		switch fm.GetFieldId() {
		case c.ids.fSrc:
			f.Src = addr(fm.GetExact().GetValue())
		case c.ids.fDst:
			f.Dst = addr(fm.GetExact().GetValue())
		case c.ids.fProto:
			f.Proto = uint8(beUint(fm.GetTernary().GetValue()))
		case c.ids.fSport:
			f.SrcPort = uint16(beUint(fm.GetTernary().GetValue()))
		case c.ids.fDport:
			f.DstPort = uint16(beUint(fm.GetTernary().GetValue()))
		}
	}
	return f, f.Src.IsValid() && f.Dst.IsValid()
}
