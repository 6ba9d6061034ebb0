package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/cluster"
)

// replica is the service's part in a cluster of replicas (config section
// cluster): the shared flow set lives in etcd under cluster.prefix, the
// replica protects only the flows of the shards it owns, resumes a flow it
// gains from its stored placement, saves placements and baselines when they
// change, and its enforcer refuses to write for a flow it does not own or
// while the member is not writable (the lease's keepalives are late).
//
// Not yet: a resumed flow learns its baseline again, because
// proflow.MultiController has no way to give one flow a stored baseline
// (MultiConfig.Baseline is one baseline for every flow); the switches are
// not told the owner's epoch (OpenFlow cookie, P4Runtime role and election
// id per shard), so fencing is the replica's own check.
type replica struct {
	m     *cluster.Member
	log   *slog.Logger
	dirty chan struct{} // ownership or the flow set changed

	mu    sync.Mutex
	all   map[proflow.FlowID]proflow.ProtectedFlow // the shared set
	saved map[proflow.FlowID]cluster.FlowState     // what this replica last saved or resumed
}

func joinCluster(ctx context.Context, c *Config, log *slog.Logger) (*replica, error) {
	cc := cluster.DefaultConfig(c.Cluster.Replica, c.Cluster.Endpoints...)
	cc.Prefix, cc.LeaseTTL = c.Cluster.Prefix, c.Cluster.LeaseTTL
	cc.Logger = log.With("component", "cluster")
	r := &replica{log: log, dirty: make(chan struct{}, 1), all: map[proflow.FlowID]proflow.ProtectedFlow{}, saved: map[proflow.FlowID]cluster.FlowState{}}
	cc.OnChange = func(gained, lost []int) { r.mark() }
	m, err := cluster.Join(ctx, cc)
	if err != nil {
		return nil, &FieldError{Path: "cluster", Problem: err.Error()}
	}
	r.m = m
	return r, nil
}

func (r *replica) mark() {
	select {
	case r.dirty <- struct{}{}:
	default:
	}
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
		flows, rev, err := r.m.ListFlows(ctx)
		if err != nil {
			r.log.Warn("cluster: list flows", "error", err)
			sleep(ctx, time.Second)
			continue
		}
		r.mu.Lock()
		clear(r.all)
		for _, f := range flows {
			r.all[f.ID] = f
		}
		r.mu.Unlock()
		r.sync(ctx, s)
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
			case <-r.dirty:
				r.sync(ctx, s)
			case <-tick.C:
				r.sync(ctx, s)
			}
		}
		tick.Stop()
	}
}

// sync makes the controller protect exactly the shared flows this replica
// owns. A flow it gains starts at its stored placement, if any.
func (r *replica) sync(ctx context.Context, s *Service) {
	r.mu.Lock()
	want := make(map[proflow.FlowID]proflow.ProtectedFlow)
	for id, f := range r.all {
		if r.m.Owns(id) {
			want[id] = f
		}
	}
	r.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	added, removed := 0, 0
	for id, pf := range s.flows {
		if w, ok := want[id]; ok && w.Weight == pf.Weight {
			continue
		}
		if err := s.ctrl.RemoveFlow(id); err == nil {
			delete(s.flows, id)
			removed++
		}
	}
	for id, f := range want {
		if _, have := s.flows[id]; have {
			continue
		}
		cur := -1
		if st, _, found, err := r.m.LoadFlow(ctx, id); err != nil {
			r.log.Warn("cluster: load flow state", "flow", id.String(), "error", err)
		} else if found && st.Switch >= 0 && st.Switch < s.sb.topo.NumSwitches() {
			cur = st.Switch
			r.mu.Lock()
			r.saved[id] = st
			r.mu.Unlock()
		}
		if cur < 0 {
			var err error
			if cur, err = s.startSwitch(ctx, FlowConfig{}, id); err != nil {
				r.log.Warn("cluster: flow has no stored placement and cannot be located; skipped", "flow", id.String(), "error", err)
				continue
			}
		}
		if err := s.ctrl.AddFlow(f, cur); err != nil {
			r.log.Warn("cluster: add owned flow", "flow", id.String(), "error", err)
			continue
		}
		s.flows[id] = f
		added++
	}
	s.cfgFlows.Set(float64(len(s.flows)))
	if added+removed > 0 {
		r.log.Info("cluster: owned flows changed", "added", added, "removed", removed, "flows", len(s.flows), "shards", len(r.m.Owned()))
	}
}

// save stores the placements and baselines that changed in a step.
func (r *replica) save(ctx context.Context, s *Service, ds []proflow.Decision) {
	var states []cluster.FlowState
	r.mu.Lock()
	for i := range ds {
		d := &ds[i]
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
	if _, err := r.m.SaveFlows(ctx, states); err != nil {
		r.log.Warn("cluster: save placements", "error", err)
	}
}

func (r *replica) close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return r.m.Close(ctx)
}

// fenced is an Enforcer that writes only for flows the replica owns, while
// its member is writable.
type fenced struct {
	enf   proflow.Enforcer
	owns  func(proflow.FlowID) bool
	batch proflow.BatchEnforcer
}

func newFenced(enf proflow.Enforcer, owns func(proflow.FlowID) bool) *fenced {
	f := &fenced{enf: enf, owns: owns}
	f.batch, _ = enf.(proflow.BatchEnforcer)
	return f
}

func (f *fenced) check(flow proflow.FlowID) error {
	if !f.owns(flow) {
		return fmt.Errorf("serve: place %v: %w (or the lease's keepalives are late)", flow, cluster.ErrNotOwner)
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

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
