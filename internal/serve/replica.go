package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/cluster"
	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// replica is the service's part in a cluster of replicas (config section
// cluster): the shared flow set lives in etcd under cluster.prefix, the
// replica protects only the flows of the shards it owns, resumes the flows
// of a shard it gains from their stored placements and baselines (one
// LoadShard range read per shard, then MultiController.AddFlowResumed), saves
// placements and baselines when they change, and its enforcer refuses to
// write for a flow it does not own, or holds under an earlier epoch of its
// shard than the current one (replica.current), or while the member is not
// writable (the lease's keepalives are late).
//
// # Fencing at the switches
//
// OpenFlow: the server's Config.Owner is ownerCookies, so every override
// rule carries cluster.Cookie(shard, epoch) and the server refuses a write
// for a flow whose shard the replica does not own or while it is not
// writable; a new owner adopts the older epoch's rules by Locate and deletes
// them by their exact cookie.
//
// P4Runtime: the switch-side fence would be one role per shard
// (cluster.Role) with the owner epoch as election id (cluster.ElectionID),
// that is one client session per owned shard and leaf — 64 shards over 2
// leaves is 128 streams per replica, re-arbitrated on every hand-over. The
// service does not do that: it runs one client (the configured role and
// election id) and fences in the replica, with ownership and the epoch
// checked right before every write (the fenced enforcer) and the etcd
// writes conditional on the shard's epoch (cluster.SaveFlows). A replica
// cut from etcd stops writing once its keepalives are TTL/2 late, before
// its lease can expire, so no two replicas write for one flow; what the
// switch-side roles would add is protection against a replica whose clock
// or process stalls between the check and the write.
//
// # Release
//
// A flow that leaves this replica because another replica now owns it is
// removed from the controller at once, but its rules are not released:
// the new owner manages them. Only a flow deleted from the shared set (the
// operator's intent: a config reload, an etcd delete) is released.
type replica struct {
	m     *cluster.Member
	log   *slog.Logger
	dirty chan struct{} // ownership or the flow set changed

	mu    sync.Mutex
	all   map[proflow.FlowID]proflow.ProtectedFlow // the shared set
	saved map[proflow.FlowID]cluster.FlowState     // what this replica last saved or resumed
	epoch map[proflow.FlowID]uint64                // the shard's epoch each controller flow was resumed under

	ownedShards prometheus.Gauge
	shardEpoch  *prometheus.GaugeVec
	lostShards  *prometheus.CounterVec
	etcdWrites  prometheus.Counter
	saveErrors  prometheus.Counter
	fenced      prometheus.Counter
	resumed     *prometheus.CounterVec
}

// joinCluster joins the cluster of c; the member logs on base (it names
// the replica in its records), the replica on log.
func joinCluster(ctx context.Context, c *Config, reg prometheus.Registerer, base, log *slog.Logger) (*replica, error) {
	cc := cluster.DefaultConfig(c.Cluster.Replica, c.Cluster.Endpoints...)
	cc.Prefix, cc.LeaseTTL = c.Cluster.Prefix, c.Cluster.LeaseTTL
	cc.Logger = base.With("component", "cluster")
	r := newReplica(log)
	r.register(reg)
	// The member reports from its own goroutines, which Join starts before
	// it returns: OnChange waits until r.m is set.
	joined := make(chan struct{})
	cc.OnChange = func(gained, lost []int) {
		<-joined
		r.onChange(gained, lost)
	}
	m, err := cluster.Join(ctx, cc)
	if err != nil {
		return nil, &FieldError{Path: "cluster", Problem: err.Error()}
	}
	r.m = m
	close(joined)
	return r, nil
}

// newReplica returns a replica that logs on log, without a member.
func newReplica(log *slog.Logger) *replica {
	return &replica{log: log, dirty: make(chan struct{}, 1), all: map[proflow.FlowID]proflow.ProtectedFlow{},
		saved: map[proflow.FlowID]cluster.FlowState{}, epoch: map[proflow.FlowID]uint64{}}
}

func (r *replica) register(reg prometheus.Registerer) {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "proflow", Subsystem: "serve", Name: name, Help: help}
	}
	r.ownedShards = prometheus.NewGauge(prometheus.GaugeOpts(opts("owned_shards", "Shards of the shared flow set this replica owns (cluster mode).")))
	r.shardEpoch = prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("shard_epoch", "The epoch (owner key's create revision) of each shard this replica owns; a shard it does not own has no series.")), []string{"shard"})
	r.lostShards = prometheus.NewCounterVec(prometheus.CounterOpts(opts("shards_lost_total", "Shards this replica stopped owning, by cause: fence (its keepalives were late or its lease expired; it stopped writing) or handover (released to balance, or taken at etcd).")), []string{"cause"})
	r.etcdWrites = prometheus.NewCounter(prometheus.CounterOpts(opts("etcd_writes_total", "Flow states (placement, baseline) written to etcd; a steady state with no reroutes writes none.")))
	r.saveErrors = prometheus.NewCounter(prometheus.CounterOpts(opts("etcd_save_errors_total", "Steps whose changed flow states could not all be written to etcd (not owner, not writable, etcd unavailable).")))
	r.fenced = prometheus.NewCounter(prometheus.CounterOpts(opts("fenced_writes_total", "Switch writes (placements, releases) the replica refused because it did not own the flow or was not writable.")))
	r.resumed = prometheus.NewCounterVec(prometheus.CounterOpts(opts("resumed_flows_total", "Owned flows added to the controller, by where their placement came from: stored (etcd, with the stored baseline when there is one) or located (the southbound; nothing stored).")), []string{"from"})
	for _, c := range []string{"fence", "handover"} {
		r.lostShards.WithLabelValues(c)
	}
	for _, f := range []string{"stored", "located"} {
		r.resumed.WithLabelValues(f)
	}
	reg.MustRegister(r.ownedShards, r.shardEpoch, r.lostShards, r.etcdWrites, r.saveErrors, r.fenced, r.resumed)
}

// onChange follows the member's ownership (cluster.Config.OnChange): the
// metrics now, the controller's flows at the next sync, which it asks for.
func (r *replica) onChange(gained, lost []int) {
	cause := "handover"
	if r.m != nil && !r.m.Writable() {
		cause = "fence"
	}
	for _, s := range lost {
		r.shardEpoch.DeleteLabelValues(strconv.Itoa(s))
	}
	r.lostShards.WithLabelValues(cause).Add(float64(len(lost)))
	if r.m != nil {
		owned := r.m.Owned()
		for _, s := range owned {
			if ep, ok := r.m.Epoch(s); ok {
				r.shardEpoch.WithLabelValues(strconv.Itoa(s)).Set(float64(ep))
			}
		}
		r.ownedShards.Set(float64(len(owned)))
	}
	if len(lost) > 0 {
		r.log.Info("cluster: shards lost; their flows are removed without release (the new owner manages their rules)", "lost", lost, "cause", cause)
	}
	r.mark()
}

// seed adds the config's flows to the shared set and deletes those the
// previous config listed and this one does not.
func (r *replica) seed(ctx context.Context, prev, next []FlowConfig) error {
	var put []proflow.ProtectedFlow
	keep := map[string]bool{}
	for _, f := range next {
		id, err := proflow.ParseFlowID(f.ID)
		if err != nil {
			return err
		}
		put = append(put, proflow.ProtectedFlow{ID: id, Weight: f.Weight})
		keep[id.String()] = true
	}
	var errs []error
	for _, f := range prev {
		if id, err := proflow.ParseFlowID(f.ID); err == nil && !keep[id.String()] {
			errs = append(errs, r.m.DeleteFlow(ctx, id))
		}
	}
	if len(put) > 0 {
		errs = append(errs, r.m.PutFlows(ctx, put...))
	}
	return errors.Join(errs...)
}

// run follows the shared flow set and this replica's ownership until ctx
// ends, adding and removing flows on s's controller.
func (r *replica) run(ctx context.Context, s *Service) {
	for ctx.Err() == nil {
		rev, err := r.list(ctx, s)
		if err != nil {
			r.log.Warn("cluster: list flows", "error", err)
			sleep(ctx, time.Second)
			continue
		}
		events := r.m.WatchFlows(ctx, rev)
		tick := time.NewTicker(time.Second) // ownership is also re-read now and then
	watch:
		for {
			select {
			case <-ctx.Done():
				tick.Stop()
				return
			case ev, ok := <-events:
				if !ok || ev.Err != nil {
					if ev.Err != nil {
						r.log.Warn("cluster: flow watch ended; listing again", "error", ev.Err)
					}
					break watch
				}
				r.mu.Lock()
				if ev.Deleted {
					delete(r.all, ev.Flow.ID)
				} else {
					r.all[ev.Flow.ID] = ev.Flow
				}
				r.mu.Unlock()
				r.sync(ctx, s)
				if ev.Deleted {
					r.dropState(ctx, ev.Flow.ID)
				}
			case <-r.dirty:
				r.sync(ctx, s)
			case <-tick.C:
				r.sync(ctx, s)
			}
		}
		tick.Stop()
	}
}

// list reads the shared flow set (when run starts, and again after the
// flow watch ended), syncs the controller to it and returns the revision
// it was read at, to watch from. A flow in the set before and not now was
// deleted while no watch was running (a compaction, a network cut ended
// it): it is handled as a watched deletion, removed from the controller
// by the sync and its stored state dropped when this replica owns it. A
// flow deleted and put again while no watch ran reads as one that stayed:
// the controller keeps it at its placement, with its baseline and gate
// state. That placement is the one in force at the switches (the owner,
// which saw no deletion, released none of its rules), so the flow is where
// the controller believes; only what the controller learnt of the earlier
// connection carries over to the new one with the same five-tuple.
func (r *replica) list(ctx context.Context, s *Service) (int64, error) {
	flows, rev, err := r.m.ListFlows(ctx)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	gone := maps.Clone(r.all)
	clear(r.all)
	for _, f := range flows {
		r.all[f.ID] = f
		delete(gone, f.ID)
	}
	r.mu.Unlock()
	r.sync(ctx, s)
	for id := range gone {
		if ctx.Err() != nil {
			break
		}
		r.dropState(ctx, id)
	}
	return rev, nil
}

// dropState deletes the stored state of flow, deleted from the shared set,
// when this replica owns it: DeleteFlow deletes the state with the flow,
// but an operator deleting the flow's key does not, and a later PutFlows
// of the flow must not resume a stale placement. A replica that does not
// own the flow leaves it to the owner.
func (r *replica) dropState(ctx context.Context, flow proflow.FlowID) {
	if !r.m.Owns(flow) {
		return
	}
	if err := r.m.DeleteState(ctx, flow); err != nil {
		r.log.Warn("cluster: delete the stored state of a deleted flow", "flow", flow.String(), "error", err)
	}
}

// sync makes the controller protect exactly the shared flows this replica
// owns, each under its shard's current epoch. A flow that is no longer
// owned is removed (and not released: see the fenced enforcer), and so is
// one resumed under an earlier epoch of its shard: the replica lost the
// shard and owns it again, and the owner in between may have moved the
// flow. The flows a gained shard brings are read with one LoadShard per
// shard and resume at their stored placement and baseline; a flow with
// nothing stored starts where the southbound locates it.
func (r *replica) sync(ctx context.Context, s *Service) {
	type owned struct {
		epoch uint64
		ok    bool
	}
	epochs := make(map[int]owned) // of the shards of the shared flows
	r.mu.Lock()
	want := make(map[proflow.FlowID]proflow.ProtectedFlow)
	for id, f := range r.all {
		sh := r.m.Shard(id)
		o, seen := epochs[sh]
		if !seen {
			o.epoch, o.ok = r.m.Epoch(sh)
			epochs[sh] = o
		}
		if o.ok {
			want[id] = f
		}
	}
	resumedAt := maps.Clone(r.epoch)
	r.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	added, removed := 0, 0
	for id, pf := range s.flows {
		if w, ok := want[id]; ok && w.Weight == pf.Weight && resumedAt[id] == epochs[r.m.Shard(id)].epoch {
			continue
		}
		if err := s.ctrl.RemoveFlow(id); err == nil {
			delete(s.flows, id)
			r.mu.Lock()
			delete(r.saved, id)
			delete(r.epoch, id)
			r.mu.Unlock()
			removed++
		}
	}
	byShard := make(map[int][]proflow.ProtectedFlow)
	for id, f := range want {
		if _, have := s.flows[id]; !have {
			sh := r.m.Shard(id)
			byShard[sh] = append(byShard[sh], f)
		}
	}
	shards := slices.Sorted(maps.Keys(byShard))
	for i, sh := range shards {
		states, _, err := r.m.LoadShard(ctx, sh)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
				// etcd did not answer within the member's request
				// timeout: the other shards would wait as long, with
				// s.mu held.
				r.log.Warn("cluster: load shard timed out; the flows of this and the remaining shards wait for the next sync", "shard", sh, "remaining", len(shards)-i-1, "error", err)
				break
			}
			r.log.Warn("cluster: load shard; its flows wait for the next sync", "shard", sh, "error", err)
			continue
		}
		stored := make(map[proflow.FlowID]cluster.FlowState, len(states))
		for _, st := range states {
			stored[st.Flow] = st
		}
		for _, f := range byShard[sh] {
			if r.resume(ctx, s, f, stored, epochs[sh].epoch) {
				added++
			}
		}
	}
	s.cfgFlows.Set(float64(len(s.flows)))
	if added+removed > 0 {
		r.log.Info("cluster: owned flows changed", "added", added, "removed", removed, "flows", len(s.flows), "shards", len(r.m.Owned()))
	}
}

// resume adds f, owned now under epoch, at its stored placement and
// baseline if any (s.mu held); a placement the switches report when the
// flow is adopted (OpenFlow's Locate) wins over the stored one, and the
// next save stores it.
func (r *replica) resume(ctx context.Context, s *Service, f proflow.ProtectedFlow, stored map[proflow.FlowID]cluster.FlowState, epoch uint64) bool {
	id := f.ID
	st, found := stored[id]
	if found && (st.Switch < 0 || st.Switch >= s.sb.topo.NumSwitches()) {
		r.log.Warn("cluster: stored placement outside the topology; locating the flow instead", "flow", id.String(), "switch", st.Switch)
		found = false
	}
	cur, from := st.Switch, "stored"
	var b *proflow.Baseline
	if found {
		b = st.Baseline
		if s.sb.adopt != nil {
			// Take the flow over where it is: a simulated fabric's copy
			// carries it to the stored placement; switches that say
			// where they place it (OpenFlow) win over the stored one.
			sw, err := s.sb.adopt(ctx, id, cur)
			switch {
			case err != nil:
				r.log.Warn("cluster: take over the flow at its stored placement", "flow", id.String(), "switch", cur, "error", err)
			case sw < 0 || sw >= s.sb.topo.NumSwitches():
				r.log.Warn("cluster: the flow was located outside the topology; resuming at its stored placement", "flow", id.String(), "located", sw, "stored", cur)
			case sw != cur:
				r.log.Info("cluster: the switches carry the flow elsewhere than stored; resuming where they do", "flow", id.String(), "located", sw, "stored", cur)
				cur = sw
			}
		}
	} else {
		var err error
		if cur, err = s.startSwitch(ctx, FlowConfig{}, id); err != nil {
			r.log.Warn("cluster: flow has no stored placement and cannot be located; skipped", "flow", id.String(), "error", err)
			return false
		}
		from = "located"
		if s.sb.install != nil {
			if err := s.sb.install(ctx, id, cur); err != nil {
				r.log.Warn("cluster: install the flow's rules where it is", "flow", id.String(), "error", err)
			}
		}
	}
	// The epoch is recorded before the controller holds the flow, so that
	// no write for it passes the fence under another one.
	r.mu.Lock()
	r.epoch[id] = epoch
	r.mu.Unlock()
	err := s.ctrl.AddFlowResumed(f, cur, b)
	if err != nil && b != nil {
		r.log.Warn("cluster: stored baseline refused; the flow learns it again", "flow", id.String(), "error", err)
		err = s.ctrl.AddFlow(f, cur)
	}
	if err != nil {
		r.log.Warn("cluster: add owned flow", "flow", id.String(), "error", err)
		r.mu.Lock()
		delete(r.epoch, id)
		r.mu.Unlock()
		return false
	}
	r.mu.Lock()
	if found {
		r.saved[id] = st
	}
	r.mu.Unlock()
	s.flows[id] = f
	r.resumed.WithLabelValues(from).Inc()
	return true
}

// save stores the placements and baselines that changed in a step.
func (r *replica) save(ctx context.Context, s *Service, ds []proflow.Decision) {
	var states []cluster.FlowState
	r.mu.Lock()
	for i := range ds {
		d := &ds[i]
		if r.staleLocked(d.Flow) {
			// Decided from the state before the replica lost the
			// shard: not stored over what the owner in between
			// stored, from which the next sync resumes the flow.
			continue
		}
		sw := d.Current
		if d.Rerouted {
			sw = d.Target
		}
		st := cluster.FlowState{Flow: d.Flow, Switch: sw}
		if b, ok := s.ctrl.Baseline(d.Flow); ok {
			st.Baseline = &b
		}
		last, ok := r.saved[d.Flow]
		if ok && last.Switch == st.Switch && (last.Baseline != nil) == (st.Baseline != nil) {
			continue
		}
		r.saved[d.Flow] = st
		states = append(states, st)
	}
	r.mu.Unlock()
	if len(states) == 0 {
		return
	}
	n, err := r.m.SaveFlows(ctx, states)
	r.etcdWrites.Add(float64(n))
	if err != nil {
		r.saveErrors.Inc()
		r.log.Warn("cluster: save placements", "written", n, "error", err)
		// What was not written is compared again, and written, at the
		// next change or the next save.
		r.mu.Lock()
		for _, st := range states {
			delete(r.saved, st.Flow)
		}
		r.mu.Unlock()
	}
}

// enforcer returns the fenced enforcer over enf that the service's
// controller writes through: it writes for a flow only while current
// reports true.
func (r *replica) enforcer(enf proflow.Enforcer) proflow.Enforcer {
	return newEnforcer(enf, r.current, r.inSet, r.fenced)
}

// current reports whether the replica may write for flow now: it owns the
// flow's shard (and is writable), and the controller holds the flow, if it
// does, under the shard's current epoch. A flow held under an earlier
// epoch (the replica lost the shard and owns it again, and no sync has
// resumed the flow since) is decided from the state before the loss, while
// the owner in between may have moved it: its writes are refused until the
// next sync resumes it from what is stored now. A flow the controller no
// longer holds (removed, its release pending) needs only the shard.
func (r *replica) current(flow proflow.FlowID) bool {
	ep, owned := r.m.Epoch(r.m.Shard(flow))
	if !owned {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	at, held := r.epoch[flow]
	return !held || at == ep
}

// staleLocked reports whether the controller holds flow under an earlier
// epoch of its shard than the one the replica owns the shard under now
// (r.mu held).
func (r *replica) staleLocked(flow proflow.FlowID) bool {
	at, held := r.epoch[flow]
	if !held {
		return false
	}
	ep, owned := r.m.Epoch(r.m.Shard(flow))
	return owned && at != ep
}

func (r *replica) close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return r.m.Close(ctx)
}

// fenced is an Enforcer that writes only for flows the replica owns, while
// its member is writable.
type fenced struct {
	enf     proflow.Enforcer
	owns    func(proflow.FlowID) bool
	batch   proflow.BatchEnforcer
	refused prometheus.Counter // may be nil
}

func newFenced(enf proflow.Enforcer, owns func(proflow.FlowID) bool, refused prometheus.Counter) *fenced {
	f := &fenced{enf: enf, owns: owns, refused: refused}
	f.batch, _ = enf.(proflow.BatchEnforcer)
	return f
}

func (f *fenced) check(flow proflow.FlowID) error {
	if !f.owns(flow) {
		if f.refused != nil {
			f.refused.Inc()
		}
		return fmt.Errorf("serve: write for %v: %w (or the lease's keepalives are late)", flow, cluster.ErrNotOwner)
	}
	return nil
}

func (f *fenced) Place(ctx context.Context, flow proflow.FlowID, sw int) error {
	if err := f.check(flow); err != nil {
		return err
	}
	return f.enf.Place(ctx, flow, sw)
}

// PlaceBatch refuses the placements of flows not owned and passes the
// others on in one batch.
func (f *fenced) PlaceBatch(ctx context.Context, ps []proflow.Placement, errs []error) error {
	if err := proflow.CheckBatch(ps, errs); err != nil {
		return fmt.Errorf("serve: place batch: %w", err)
	}
	var ok []proflow.Placement
	var idx []int
	for i, p := range ps {
		if errs[i] = f.check(p.Flow); errs[i] == nil {
			ok, idx = append(ok, p), append(idx, i)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	if f.batch == nil {
		for j, p := range ok {
			errs[idx[j]] = f.enf.Place(ctx, p.Flow, p.Switch)
		}
		return nil
	}
	sub := make([]error, len(ok))
	err := f.batch.PlaceBatch(ctx, ok, sub)
	for j := range ok {
		errs[idx[j]] = sub[j]
	}
	return err
}

func (f *fenced) Locate(ctx context.Context, flow proflow.FlowID) (int, error) {
	if l, ok := f.enf.(proflow.Locator); ok {
		return l.Locate(ctx, flow)
	}
	return -1, proflow.ErrNotPlaced
}

func (f *fenced) ValidateFlow(flow proflow.FlowID) error {
	if v, ok := f.enf.(proflow.FlowValidator); ok {
		return v.ValidateFlow(flow)
	}
	return nil
}

// fencedReleaser is a fenced enforcer over a proflow.Releaser. The
// controller releases every flow it stops protecting; in a cluster that is
// right only for a flow deleted from the shared set (the operator's
// intent). A flow still in the set was removed because this replica lost
// it: its rules now belong to the new owner, and releasing them would
// undo the new owner's placement, so Release does nothing for it.
type fencedReleaser struct {
	*fenced
	rel proflow.Releaser
	// inSet reports whether flow is in the shared flow set.
	inSet func(proflow.FlowID) bool
}

// newEnforcer returns the fenced enforcer of enf: a fencedReleaser when
// enf is a Releaser.
func newEnforcer(enf proflow.Enforcer, owns, inSet func(proflow.FlowID) bool, refused prometheus.Counter) proflow.Enforcer {
	f := newFenced(enf, owns, refused)
	if rel, ok := enf.(proflow.Releaser); ok {
		return &fencedReleaser{fenced: f, rel: rel, inSet: inSet}
	}
	return f
}

// Release releases a flow deleted from the shared set while this replica
// owns it. For a flow still in the set (lost to another owner) it does
// nothing. For a deleted flow whose shard it lost meanwhile it does nothing
// either: nobody protects that flow any more, and its rules stay until
// they lapse (an OpenFlow override's hard timeout) or an operator removes
// them (P4Runtime entries) — the price of a deletion racing a hand-over.
// For a flow it does not own, an enforcer that keeps its own record of
// placements (the OpenFlow server: a forgetter) forgets the flow, writing
// nothing, so that its lease refresh does not renew the rules should this
// replica own the shard again.
func (f *fencedReleaser) Release(ctx context.Context, flow proflow.FlowID) error {
	switch {
	case !f.owns(flow):
		if fg, ok := f.rel.(forgetter); ok {
			return fg.Forget(ctx, flow)
		}
		return nil
	case f.inSet(flow):
		return nil
	}
	return f.rel.Release(ctx, flow)
}

// forgetter is an enforcer that can drop its record of a flow's placement
// without writing to the switches (openflow.Server.Forget).
type forgetter interface {
	Forget(ctx context.Context, flow proflow.FlowID) error
}

// ownerCookies is the OpenFlow server's Owner in cluster mode: a flow's
// override rules carry cluster.Cookie(shard, epoch) of the replica's
// ownership of the flow's shard, and a write is refused while the replica
// does not own the shard or is not writable.
func ownerCookies(fc cluster.Fence, shardOf func(proflow.FlowID) int) openflow.Owner {
	return openflow.OwnerFunc(func(flow proflow.FlowID) (uint64, bool) {
		sh := shardOf(flow)
		ep, ok := fc.Epoch(sh)
		if !ok {
			return 0, false
		}
		return cluster.Cookie(sh, ep), true
	})
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// inSet reports whether flow is in the shared flow set.
func (r *replica) inSet(flow proflow.FlowID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.all[flow]
	return ok
}

func (r *replica) mark() {
	select {
	case r.dirty <- struct{}{}:
	default:
	}
}
