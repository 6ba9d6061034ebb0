package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/proflow-sdn/proflow"
)

// The flow set lives under P flows/, one key a flow, so that it can come
// from etcd (an operator or `proflow serve` writes it; every replica reads
// and watches it).

func (m *Member) flowKey(flow proflow.FlowID) string { return m.cfg.Prefix + "flows/" + flow.String() }

// PutFlows adds flows to the shared set (or updates their weights), in
// transactions of up to 128.
func (m *Member) PutFlows(ctx context.Context, flows ...proflow.ProtectedFlow) error {
	for _, f := range flows {
		if err := f.Validate(); err != nil {
			return err
		}
	}
	for chunk := range slices.Chunk(flows, maxTxnOps) {
		ops := make([]clientv3.Op, len(chunk))
		for i, f := range chunk {
			b, err := json.Marshal(f)
			if err != nil {
				return fmt.Errorf("cluster: encode flow %v: %w", f.ID, err)
			}
			ops[i] = clientv3.OpPut(m.flowKey(f.ID), string(b))
		}
		rctx, cancel := m.requestContext(ctx)
		_, err := m.cli.Txn(rctx).Then(ops...).Commit()
		cancel()
		if err != nil {
			return fmt.Errorf("cluster: put %d flows: %w", len(chunk), err)
		}
	}
	return nil
}

// DeleteFlow removes flow from the shared set, with its stored state.
func (m *Member) DeleteFlow(ctx context.Context, flow proflow.FlowID) error {
	ctx, cancel := m.requestContext(ctx)
	defer cancel()
	_, err := m.cli.Txn(ctx).Then(clientv3.OpDelete(m.flowKey(flow)), clientv3.OpDelete(m.stateKey(m.Shard(flow), flow))).Commit()
	if err != nil {
		return fmt.Errorf("cluster: delete flow %v: %w", flow, err)
	}
	return nil
}

// ListFlows returns the shared set in key order and the revision it was
// read at (to pass to WatchFlows). A value that does not decode as a flow
// is skipped and logged (Warn, with its key), as WatchFlows skips it: one
// bad key does not hide the rest of the set.
func (m *Member) ListFlows(ctx context.Context) ([]proflow.ProtectedFlow, int64, error) {
	ctx, cancel := m.requestContext(ctx)
	defer cancel()
	resp, err := m.cli.Get(ctx, m.cfg.Prefix+"flows/", clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("cluster: list flows: %w", err)
	}
	out := make([]proflow.ProtectedFlow, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var f proflow.ProtectedFlow
		if err := json.Unmarshal(kv.Value, &f); err != nil {
			m.skipFlow(kv.Key, err)
			continue
		}
		out = append(out, f)
	}
	return out, resp.Header.Revision, nil
}

// skipFlow logs a key under flows/ whose value is not a flow.
func (m *Member) skipFlow(key []byte, err error) {
	m.cfg.Logger.Warn("cluster: skipping a value under flows/ that is not a flow", "replica", m.cfg.Replica, "key", string(key), "err", err)
}

// FlowEvent is one change of the shared flow set.
type FlowEvent struct {
	// Flow is the flow added or updated, or (Deleted) the one removed, of
	// which only ID is set.
	Flow    proflow.ProtectedFlow
	Deleted bool
	// Revision is the etcd revision of the change.
	Revision int64
	// Err, on the last event before the channel closes, says why the watch
	// ended (nil when ctx ended it).
	Err error
}

// WatchFlows sends the changes of the flow set after revision rev until ctx
// is done or the watch fails; then it closes the channel.
func (m *Member) WatchFlows(ctx context.Context, rev int64) <-chan FlowEvent {
	out := make(chan FlowEvent, 64)
	prefix := m.cfg.Prefix + "flows/"
	wch := m.cli.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	go func() {
		defer close(out)
		send := func(ev FlowEvent) bool {
			select {
			case out <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for resp := range wch {
			if err := resp.Err(); err != nil {
				send(FlowEvent{Err: fmt.Errorf("cluster: watch flows: %w", err)})
				return
			}
			for _, ev := range resp.Events {
				fe := FlowEvent{Revision: ev.Kv.ModRevision}
				if ev.Type == clientv3.EventTypeDelete {
					id, err := proflow.ParseFlowID(string(ev.Kv.Key[len(prefix):]))
					if err != nil {
						continue
					}
					fe.Flow.ID, fe.Deleted = id, true
				} else if err := json.Unmarshal(ev.Kv.Value, &fe.Flow); err != nil {
					m.skipFlow(ev.Kv.Key, err)
					continue
				}
				if !send(fe) {
					return
				}
			}
		}
	}()
	return out
}
