package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
// still owns the flow's shard at etcd (ErrNotOwner otherwise).
func (m *Member) SaveFlow(ctx context.Context, st FlowState) (bool, error) {
	n, err := m.SaveFlows(ctx, []FlowState{st})
	return n == 1, err
}

// SaveFlows is SaveFlow for many flows: the changed states of each shard
// are written in transactions of up to 128, each conditional on the
// shard's epoch, up to 8 shards at once. It returns how many states it
// wrote and the errors of the shards it could not write, joined (in no
// particular order).
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
		mu      sync.Mutex
		written int
		errs    []error
		wg      sync.WaitGroup
		sem     = make(chan struct{}, saveParallel)
	)
	for _, s := range shards {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			n, err := m.saveShard(ctx, s, byShard[s])
			mu.Lock()
			defer mu.Unlock()
			written += n
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	return written, errors.Join(errs...)
}

// saveParallel is how many shards SaveFlows writes at once: the round trips
// of a tick's transactions overlap, one per shard with a change.
const saveParallel = 8

func (m *Member) heldEpoch(shard int) (uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ep, ok := m.held[shard]
	return uint64(ep), ok
}

// saveShard writes states, all of shard, under its current epoch.
func (m *Member) saveShard(ctx context.Context, shard int, states []FlowState) (int, error) {
	written := 0
	for chunk := range slices.Chunk(states, maxTxnOps) {
		ep, ok := m.Epoch(shard)
		if !ok {
			if m.Writable() {
				return written, fmt.Errorf("%w: shard %d (%d flows)", ErrNotOwner, shard, len(states)-written)
			}
			return written, fmt.Errorf("%w: shard %d (%d flows)", ErrNotWritable, shard, len(states)-written)
		}
		now := m.cfg.Clock.Now()
		ops := make([]clientv3.Op, len(chunk))
		for i := range chunk {
			st := &chunk[i]
			if st.Updated.IsZero() {
				st.Updated = now
			}
			st.Replica, st.Epoch = m.cfg.Replica, ep
			b, err := json.Marshal(st)
			if err != nil {
				return written, fmt.Errorf("cluster: encode state of %v: %w", st.Flow, err)
			}
			ops[i] = clientv3.OpPut(m.stateKey(shard, st.Flow), string(b))
		}
		// A member that lost its leader fails the write at once instead
		// of holding it until ctx ends; the next tick writes it again.
		resp, err := m.cli.Txn(clientv3.WithRequireLeader(ctx)).If(clientv3.Compare(clientv3.CreateRevision(m.ownerKey(shard)), "=", int64(ep))).
			Then(ops...).Commit()
		if err != nil {
			return written, fmt.Errorf("cluster: save %d states of shard %d: %w", len(chunk), shard, err)
		}
		if !resp.Succeeded {
			m.poke()
			return written, fmt.Errorf("%w: shard %d epoch %d is over at etcd", ErrNotOwner, shard, ep)
		}
		m.cacheMu.Lock()
		for _, st := range chunk {
			m.cache[st.Flow] = cacheOf(st, ep)
		}
		m.cacheMu.Unlock()
		written += len(chunk)
	}
	return written, nil
}

// LoadFlow reads flow's stored state and the revision it was last written
// at; found is false when none is stored.
func (m *Member) LoadFlow(ctx context.Context, flow proflow.FlowID) (st FlowState, rev int64, found bool, err error) {
	s := m.Shard(flow)
	ep, owned := m.heldEpoch(s)
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
// from.
func (m *Member) LoadShard(ctx context.Context, shard int) ([]FlowState, []int64, error) {
	if shard < 0 || shard >= m.cfg.Shards {
		return nil, nil, fmt.Errorf("cluster: shard %d, want 0…%d", shard, m.cfg.Shards-1)
	}
	ep, owned := m.heldEpoch(shard)
	prefix := fmt.Sprintf("%sstate/%04d/", m.cfg.Prefix, shard)
	resp, err := m.cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: load states of shard %d: %w", shard, err)
	}
	out := make([]FlowState, len(resp.Kvs))
	revs := make([]int64, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		if err := json.Unmarshal(kv.Value, &out[i]); err != nil {
			return nil, nil, fmt.Errorf("cluster: decode state at %s: %w", kv.Key, err)
		}
		revs[i] = kv.ModRevision
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
