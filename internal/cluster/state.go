package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/proflow-sdn/proflow"
)

// FlowState is what a new owner needs to resume a flow: where it is placed
// and the baseline it was measured against.
type FlowState struct {
	Flow proflow.FlowID `json:"flow"`
	// Switch is the flow's current aggregation switch (an index into
	// Topology.Switches).
	Switch int `json:"switch"`
	// Baseline is the flow's baseline; nil while it is still being learnt.
	Baseline *proflow.Baseline `json:"baseline,omitempty"`
	// Updated is when Switch or Baseline last changed (set by SaveFlow when
	// zero).
	Updated time.Time `json:"updated"`
	// Replica and Epoch name the owner that wrote the state (set by SaveFlow).
	Replica string `json:"replica,omitempty"`
	Epoch   uint64 `json:"epoch,omitempty"`
}

// cachedState is the part of a FlowState that SaveFlow compares, as last
// read or written under one epoch of its shard.
type cachedState struct {
	epoch    uint64
	sw       int
	baseline proflow.Baseline
	learnt   bool
}

func cacheOf(st FlowState, epoch uint64) cachedState {
	c := cachedState{epoch: epoch, sw: st.Switch}
	if st.Baseline != nil {
		c.baseline, c.learnt = *st.Baseline, true
	}
	return c
}

// maxTxnOps is etcd's default limit on the operations of one transaction.
const maxTxnOps = 128

func (m *Member) stateKey(shard int, flow proflow.FlowID) string {
	return fmt.Sprintf("%sstate/%04d/%s", m.cfg.Prefix, shard, flow)
}

// SaveFlow stores st if its Switch or Baseline differs from what this
// member last read or wrote for the flow under the shard's current epoch,
// and reports whether it wrote. The write commits only while this member
// still owns the flow's shard at etcd (ErrNotOwner otherwise) and the flow
// is still in the shared set (ErrFlowDeleted otherwise).
func (m *Member) SaveFlow(ctx context.Context, st FlowState) (bool, error) {
	n, err := m.SaveFlows(ctx, []FlowState{st})
	return n == 1, err
}

// SaveFlows is SaveFlow for many flows: the changed states of each shard
// are written in transactions of up to 127, each conditional on the
// shard's epoch, up to 8 shards at once. It returns how many states it
// wrote and the errors of the shards it could not write, joined (in no
// particular order). Each transaction is bounded by RequestTimeout, and
// once one fails at etcd (unreachable, no leader) the shards not started
// yet are not tried, so an outage holds the caller about one
// RequestTimeout.
func (m *Member) SaveFlows(ctx context.Context, states []FlowState) (int, error) {
	if m.closed.Load() {
		return 0, ErrClosed
	}
	byShard := make(map[int][]FlowState)
	m.cacheMu.Lock()
	for _, st := range states {
		s := m.Shard(st.Flow)
		ep, ok := m.heldEpoch(s)
		if c, hit := m.cache[st.Flow]; ok && hit && c == cacheOf(st, ep) {
			continue
		}
		byShard[s] = append(byShard[s], st)
	}
	m.cacheMu.Unlock()
	shards := make([]int, 0, len(byShard))
	for s := range byShard {
		shards = append(shards, s)
	}
	slices.Sort(shards)
	var (
		mu       sync.Mutex
		written  int
		errs     []error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, saveParallel)
		down     bool // a shard's write failed at etcd
		untried  int  // shards not tried after it
		untriedN int  // and their states
	)
	for _, s := range shards {
		sem <- struct{}{}
		mu.Lock()
		if down {
			untried++
			untriedN += len(byShard[s])
			mu.Unlock()
			<-sem
			continue
		}
		mu.Unlock()
		wg.Go(func() {
			defer func() { <-sem }()
			n, etcdErr, err := m.saveShard(ctx, s, byShard[s])
			mu.Lock()
			defer mu.Unlock()
			written += n
			if err != nil {
				errs = append(errs, err)
			}
			down = down || etcdErr
		})
	}
	wg.Wait()
	if untried > 0 {
		errs = append(errs, fmt.Errorf("cluster: %d states of %d shards not tried after an etcd failure", untriedN, untried))
	}
	return written, errors.Join(errs...)
}

// saveParallel is how many shards SaveFlows writes at once: the round trips
// of a tick's transactions overlap, one per shard with a change.
const saveParallel = 8

// requestContext bounds one etcd request of the member's by
// Config.RequestTimeout within ctx: with etcd unreachable (no endpoint
// answers, so WithRequireLeader cannot fail fast) the request fails then
// instead of holding its caller, a control loop say, until etcd returns.
func (m *Member) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, m.cfg.RequestTimeout)
}

func (m *Member) heldEpoch(shard int) (uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ep, ok := m.held[shard]
	return uint64(ep), ok
}

// saveShard writes states, all of shard, under its current epoch, but for
// the flows deleted from the shared set meanwhile (ErrFlowDeleted). etcdErr
// reports that a request to etcd failed (rather than the fence, the epoch
// or a deletion refusing the write).
func (m *Member) saveShard(ctx context.Context, shard int, states []FlowState) (written int, etcdErr bool, err error) {
	var deleted []proflow.FlowID
	for chunk := range slices.Chunk(states, maxTxnStates) {
		for len(chunk) > 0 {
			ep, ok := m.Epoch(shard)
			if !ok {
				why := ErrNotOwner
				if !m.Writable() {
					why = ErrNotWritable
				}
				err := fmt.Errorf("%w: shard %d (%d flows)", why, shard, len(states)-written-len(deleted))
				return written, false, errors.Join(err, deletedError(shard, deleted))
			}
			gone, etcdErr, err := m.saveChunk(ctx, shard, ep, chunk)
			if err != nil {
				return written, etcdErr, errors.Join(err, deletedError(shard, deleted))
			}
			if len(gone) == 0 {
				written += len(chunk)
				break
			}
			// Nothing was written: write the others again.
			deleted = append(deleted, gone...)
			chunk = slices.DeleteFunc(slices.Clone(chunk), func(st FlowState) bool { return slices.Contains(gone, st.Flow) })
		}
	}
	return written, false, deletedError(shard, deleted)
}

// maxTxnStates is how many states one transaction of SaveFlows writes:
// each adds a compare (its flow's key exists) to the one on the owner key,
// and etcd holds the larger of a transaction's compares and operations to
// maxTxnOps.
const maxTxnStates = maxTxnOps - 1

// saveChunk writes chunk, states of shard, in one transaction that commits
// only while the owner key still has epoch ep and every state's flow is
// still in the shared set, so that a state never outlives its flow. When
// some flows are gone it writes nothing and returns them.
func (m *Member) saveChunk(ctx context.Context, shard int, ep uint64, chunk []FlowState) (gone []proflow.FlowID, etcdErr bool, err error) {
	owner := m.ownerKey(shard)
	now := m.cfg.Clock.Now()
	cmps := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(owner), "=", int64(ep))}
	alt := []clientv3.Op{clientv3.OpGet(owner, clientv3.WithKeysOnly())}
	ops := make([]clientv3.Op, len(chunk))
	for i := range chunk {
		st := &chunk[i]
		if st.Updated.IsZero() {
			st.Updated = now
		}
		st.Replica, st.Epoch = m.cfg.Replica, ep
		b, err := json.Marshal(st)
		if err != nil {
			return nil, false, fmt.Errorf("cluster: encode state of %v: %w", st.Flow, err)
		}
		ops[i] = clientv3.OpPut(m.stateKey(shard, st.Flow), string(b))
		fk := m.flowKey(st.Flow)
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(fk), ">", 0))
		alt = append(alt, clientv3.OpGet(fk, clientv3.WithCountOnly()))
	}
	// A member that lost its leader fails the write at once, and with no
	// member answering it fails after RequestTimeout, instead of holding
	// it until ctx ends; the next tick writes it again (the epoch compare
	// still refuses it if the shard changed hands).
	rctx, cancel := m.requestContext(clientv3.WithRequireLeader(ctx))
	defer cancel()
	resp, err := m.cli.Txn(rctx).If(cmps...).Then(ops...).Else(alt...).Commit()
	if err != nil {
		return nil, true, fmt.Errorf("cluster: save %d states of shard %d: %w", len(chunk), shard, err)
	}
	if !resp.Succeeded {
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 0 || kvs[0].CreateRevision != int64(ep) {
			m.poke()
			return nil, false, fmt.Errorf("%w: shard %d epoch %d is over at etcd", ErrNotOwner, shard, ep)
		}
		for i, st := range chunk {
			if resp.Responses[1+i].GetResponseRange().Count == 0 {
				gone = append(gone, st.Flow)
			}
		}
		if len(gone) == 0 { // every compare's key read back as it should have been
			return nil, false, fmt.Errorf("cluster: save %d states of shard %d: refused at etcd with the owner key and every flow present", len(chunk), shard)
		}
		return gone, false, nil
	}
	m.cacheMu.Lock()
	for _, st := range chunk {
		m.cache[st.Flow] = cacheOf(st, ep)
	}
	m.cacheMu.Unlock()
	return nil, false, nil
}

// deletedError reports the flows of shard whose states were not written
// because they were deleted from the shared set; nil when none.
func deletedError(shard int, flows []proflow.FlowID) error {
	if len(flows) == 0 {
		return nil
	}
	names := make([]string, 0, min(len(flows), 4))
	for _, f := range flows[:min(len(flows), 4)] {
		names = append(names, f.String())
	}
	more := ""
	if len(flows) > len(names) {
		more = fmt.Sprintf(" and %d more", len(flows)-len(names))
	}
	return fmt.Errorf("%w: states of %d flows of shard %d not written: %s%s", ErrFlowDeleted, len(flows), shard, strings.Join(names, ", "), more)
}

// DeleteState deletes flow's stored state, conditional on this member's
// epoch of the flow's shard as SaveFlows is: the owner calls it when it
// sees the flow deleted from the shared set (DeleteFlow deletes the state
// with the flow; an operator deleting the flow's key does not). It returns
// ErrNotOwner or ErrNotWritable when this member must not write for the
// flow; a state already gone is not an error.
func (m *Member) DeleteState(ctx context.Context, flow proflow.FlowID) error {
	if m.closed.Load() {
		return ErrClosed
	}
	shard := m.Shard(flow)
	ep, ok := m.Epoch(shard)
	if !ok {
		if m.Writable() {
			return fmt.Errorf("%w: delete state of %v (shard %d)", ErrNotOwner, flow, shard)
		}
		return fmt.Errorf("%w: delete state of %v (shard %d)", ErrNotWritable, flow, shard)
	}
	ctx, cancel := m.requestContext(clientv3.WithRequireLeader(ctx))
	defer cancel()
	resp, err := m.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(m.ownerKey(shard)), "=", int64(ep))).
		Then(clientv3.OpDelete(m.stateKey(shard, flow))).Commit()
	if err != nil {
		return fmt.Errorf("cluster: delete state of %v: %w", flow, err)
	}
	if !resp.Succeeded {
		m.poke()
		return fmt.Errorf("%w: delete state of %v: shard %d epoch %d is over at etcd", ErrNotOwner, flow, shard, ep)
	}
	m.cacheMu.Lock()
	delete(m.cache, flow)
	m.cacheMu.Unlock()
	return nil
}

// LoadFlow reads flow's stored state and the revision it was last written
// at; found is false when none is stored.
func (m *Member) LoadFlow(ctx context.Context, flow proflow.FlowID) (st FlowState, rev int64, found bool, err error) {
	s := m.Shard(flow)
	ep, owned := m.heldEpoch(s)
	ctx, cancel := m.requestContext(ctx)
	defer cancel()
	resp, err := m.cli.Get(ctx, m.stateKey(s, flow))
	if err != nil {
		return FlowState{}, 0, false, fmt.Errorf("cluster: load state of %v: %w", flow, err)
	}
	if len(resp.Kvs) == 0 {
		return FlowState{}, 0, false, nil
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &st); err != nil {
		return FlowState{}, 0, false, fmt.Errorf("cluster: decode state of %v at %s: %w", flow, resp.Kvs[0].Key, err)
	}
	if owned {
		m.cacheMu.Lock()
		m.cache[flow] = cacheOf(st, ep)
		m.cacheMu.Unlock()
	}
	return st, resp.Kvs[0].ModRevision, true, nil
}

// LoadShard reads the stored states of every flow of shard, in key order,
// with the revision each was last written at: what a new owner resumes
// from. A value that does not decode as a state is skipped and logged
// (Warn, with its key) and left as it is: one bad value does not keep the
// shard's other flows from resuming, and the owner's next save of that
// flow writes over it.
func (m *Member) LoadShard(ctx context.Context, shard int) ([]FlowState, []int64, error) {
	if shard < 0 || shard >= m.cfg.Shards {
		return nil, nil, fmt.Errorf("cluster: shard %d, want 0…%d", shard, m.cfg.Shards-1)
	}
	ep, owned := m.heldEpoch(shard)
	prefix := fmt.Sprintf("%sstate/%04d/", m.cfg.Prefix, shard)
	ctx, cancel := m.requestContext(ctx)
	defer cancel()
	resp, err := m.cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: load states of shard %d: %w", shard, err)
	}
	out := make([]FlowState, 0, len(resp.Kvs))
	revs := make([]int64, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var st FlowState
		if err := json.Unmarshal(kv.Value, &st); err != nil {
			m.cfg.Logger.Warn("cluster: skipping a value under state/ that is not a flow state", "replica", m.cfg.Replica, "key", string(kv.Key), "err", err)
			continue
		}
		out = append(out, st)
		revs = append(revs, kv.ModRevision)
	}
	if owned {
		m.cacheMu.Lock()
		for _, st := range out {
			m.cache[st.Flow] = cacheOf(st, ep)
		}
		m.cacheMu.Unlock()
	}
	return out, revs, nil
}

// dropCache forgets the cached states of shards.
func (m *Member) dropCache(shards []int) {
	if len(shards) == 0 {
		return
	}
	lost := make(map[int]bool, len(shards))
	for _, s := range shards {
		lost[s] = true
	}
	m.cacheMu.Lock()
	defer m.cacheMu.Unlock()
	for f := range m.cache {
		if lost[m.Shard(f)] {
			delete(m.cache, f)
		}
	}
}
