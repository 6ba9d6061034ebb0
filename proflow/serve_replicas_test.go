//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/cluster"

	"github.com/proflow-sdn/proflow/internal/etcdtest"
)

// Acceptance 2 and 3 of issue 14 through the binary: three proflow serve
// replicas on a 3-member etcd share PROFLOW_REPLICA_FLOWS protected flows
// (default 3,000) of a simulated fabric. Each replica runs its own copy of
// the fabric (the flows are shared by ownership, not by traffic: a replica
// moves a flow it takes over to its stored placement in its copy), with the
// static policy, so every placement comes from etcd and a change of one is
// a fault. The flows' placements are stored in etcd before the replicas
// start, all on agg3 (the scenario starts them round-robin on agg1…agg4),
// so a replica that did not resume from etcd would show on the metrics.
//
// It checks: the replicas split the flows and resume them on agg3; in
// steady state the etcd writes per tick are at most 1% of the flows;
// kill -9 of a replica → its flows are owned again within the lease TTL
// plus two balance intervals (TTL/3 each), still on agg3, with their baselines resumed
// (no flow of the survivors goes back to the baseline phase); killing an
// etcd member interrupts nothing (no shard lost, steps go on); a replica
// stopped (SIGSTOP) past its lease reports its shards lost to the fence
// when it runs again and writes nothing under its old epochs. Finally the
// whole etcd history is checked: owner keys never overlap, and every state
// write was made by the owner of the epoch it carries while that
// ownership was live; and so are the replicas' decision logs (JSON, at
// debug: one record per flow and step): no two replicas decided for one
// flow at the same time, and at the kill -9 and SIGSTOP takeovers the old
// owner's last decision for a flow precedes the new owner's first.
func TestServeReplicasAcceptance(t *testing.T) {
	etcdtest.Require(t)
	n := 3000
	if v := os.Getenv("PROFLOW_REPLICA_FLOWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 4 {
			t.Fatalf("PROFLOW_REPLICA_FLOWS=%q, want a count ≥ 4", v)
		}
	}
	const (
		ttl      = 2 * time.Second
		interval = 500 * time.Millisecond // testbed profile, speed 1
		prefix   = "/acc/"
		agg3     = 2
	)
	dir := t.TempDir()
	bin := buildProflow(t, dir)
	etcd, err := etcdtest.Start(3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	cli, err := clientv3.New(clientv3.Config{Endpoints: etcd.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	// The scenario: n flows h1..h4 → h5..h8, 1 Mbit/s each, started
	// round-robin on agg1..agg4; their placements stored on agg3.
	var ps []string
	var flows []proflow.FlowID
	for i := range n {
		src, dst, port := 1+i%4, 5+(i/4)%4, 10000+i
		ps = append(ps, fmt.Sprintf(`{"src":"h%d","dst":"h%d","src_port":%d,"switch":"agg%d","cap":"1Mbit/s"}`, src, dst, port, 1+i%4))
		id, err := proflow.ParseFlowID(fmt.Sprintf("tcp 10.0.0.%d:%d->10.0.0.%d:5201", src, port, dst))
		if err != nil {
			t.Fatal(err)
		}
		flows = append(flows, id)
	}
	scen := filepath.Join(dir, "many.json")
	if err := os.WriteFile(scen, []byte(`{"name":"many","description":"issue 14 acceptance","window":"3600s","protected":[`+strings.Join(ps, ",")+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var ops []clientv3.Op
	for _, f := range flows {
		b, _ := json.Marshal(cluster.FlowState{Flow: f, Switch: agg3, Updated: time.Now()})
		ops = append(ops, clientv3.OpPut(fmt.Sprintf("%sstate/%04d/%s", prefix, cluster.ShardOf(f, 64), f), string(b)))
	}
	for c := range slices.Chunk(ops, 100) {
		if _, err := cli.Txn(ctx).Then(c...).Commit(); err != nil {
			t.Fatal(err)
		}
	}

	reps := map[string]*replicaProc{}
	for _, name := range []string{"a", "b", "c"} {
		reps[name] = startReplica(t, ctx, bin, dir, name, scen, n, etcd.Endpoints(), prefix, ttl)
	}
	live := func(names ...string) []*replicaProc {
		var out []*replicaProc
		for _, nm := range names {
			out = append(out, reps[nm])
		}
		return out
	}
	all := live("a", "b", "c")
	sum := func(rs []*replicaProc, series string) float64 {
		var s float64
		for _, r := range rs {
			s += r.last[series]
		}
		return s
	}
	// owned checks that the shard epochs the replicas report name each
	// shard at most once, and returns how many are reported.
	owned := func(rs []*replicaProc) int {
		seen := map[string]string{}
		for _, r := range rs {
			for k := range r.last {
				if sh, ok := strings.CutPrefix(k, `proflow_serve_shard_epoch{shard="`); ok {
					if other, dup := seen[sh]; dup {
						t.Errorf("shard %s reported owned by replicas %s and %s at once", strings.TrimSuffix(sh, `"}`), other, r.name)
					}
					seen[sh] = r.name
				}
			}
		}
		return len(seen)
	}
	start := time.Now()
	waitAll(t, all, 90*time.Second, "flows split, resumed on agg3 and their baselines learnt and saved", func() bool {
		return sum(all, "proflow_serve_configured_flows") == float64(n) && owned(all) == 64 &&
			sum(all, `proflow_multi_flows_on_switch{switch="agg3"}`) == float64(n) &&
			sum(all, `proflow_serve_resumed_flows_total{from="stored"}`) >= float64(n) &&
			sum(all, "proflow_serve_etcd_writes_total") >= float64(n)
	})
	for _, r := range all {
		if r.last["proflow_serve_configured_flows"] == 0 {
			t.Errorf("replica %s owns no flow", r.name)
		}
	}
	t.Logf("%d flows split %v/%v/%v, resumed and baselines saved in %v", n, reps["a"].last["proflow_serve_configured_flows"],
		reps["b"].last["proflow_serve_configured_flows"], reps["c"].last["proflow_serve_configured_flows"], time.Since(start).Round(time.Millisecond))

	// Acceptance 3: etcd writes per tick in steady state.
	w0, s0 := sum(all, "proflow_serve_etcd_writes_total"), sum(all, "proflow_serve_steps_total")
	waitAll(t, all, 30*time.Second, "20 more steps per replica", func() bool {
		return sum(all, "proflow_serve_steps_total") >= s0+60 && owned(all) == 64
	})
	w1, s1 := sum(all, "proflow_serve_etcd_writes_total"), sum(all, "proflow_serve_steps_total")
	perTick := (w1 - w0) / ((s1 - s0) / 3)
	t.Logf("steady state: %v etcd writes over %v replica steps: %.2f writes per tick for %d flows (%.3f%%)", w1-w0, s1-s0, perTick, n, 100*perTick/float64(n))
	if perTick > 0.01*float64(n) {
		t.Errorf("steady state writes %.1f per tick, want ≤ 1%% of %d flows", perTick, n)
	}
	for _, r := range all {
		t.Logf("replica %s: %v flows, step %.2f ms on average", r.name, r.last["proflow_serve_configured_flows"],
			1e3*r.last["proflow_multi_step_duration_seconds_sum"]/r.last["proflow_multi_step_duration_seconds_count"])
	}

	// kill -9 c: its flows owned again within TTL + 2 intervals, on agg3,
	// with their baselines (no baseline decision after the takeover).
	ab := live("a", "b")
	baseDecisions := sum(ab, `proflow_multi_decisions_total{reason="baseline"}`)
	killed := time.Now()
	reps["c"].kill()
	cuts := map[string]time.Time{"c": killed}
	waitAll(t, ab, 30*time.Second, "c's flows owned again", func() bool {
		return sum(ab, "proflow_serve_configured_flows") == float64(n) && owned(ab) == 64
	})
	takeover := time.Since(killed)
	// The bound: the lease expires TTL after c's last keepalive, and a
	// survivor claims the free shards within one balance interval (TTL/3;
	// usually at once, on the owner keys' watch) and resumes their flows at
	// its next sync; the second interval covers the scrape and a loaded
	// machine.
	balance := ttl / 3
	t.Logf("kill -9: every flow owned again after %v (lease TTL %v + 2 balance intervals = %v; control interval %v)", takeover.Round(time.Millisecond), ttl, ttl+2*balance, interval)
	if takeover > ttl+2*balance {
		t.Errorf("takeover took %v, want ≤ TTL + 2 balance intervals = %v", takeover, ttl+2*balance)
	}
	steps := sum(ab, "proflow_serve_steps_total")
	waitAll(t, ab, 20*time.Second, "5 steps after the takeover", func() bool { return sum(ab, "proflow_serve_steps_total") >= steps+10 })
	if got := sum(ab, `proflow_multi_flows_on_switch{switch="agg3"}`); got != float64(n) {
		t.Errorf("after the takeover %v flows on agg3, want all %d: placements changed", got, n)
	}
	if got := sum(ab, `proflow_multi_decisions_total{reason="baseline"}`); got != baseDecisions {
		t.Errorf("baseline decisions %v after the takeover, %v before: resumed flows learnt their baselines again", got, baseDecisions)
	}

	// Kill one etcd member, a follower: no interruption — no shard lost or
	// changing hands, the replicas keep stepping. (The leader's loss holds
	// the keepalives for an election, which may take the fence down for a
	// moment without any shard changing hands: internal/cluster's
	// TestEtcdMemberLoss.)
	waitAll(t, ab, 10*time.Second, "ownership settled after the takeover", func() bool { return owned(ab) == 64 })
	epochs := func() map[string]float64 {
		e := map[string]float64{}
		for _, r := range ab {
			for k, v := range r.last {
				if strings.HasPrefix(k, "proflow_serve_shard_epoch{") {
					e[k] = v
				}
			}
		}
		return e
	}
	epochs0 := epochs()
	lost0, steps0 := sum(ab, `proflow_serve_shards_lost_total{cause="fence"}`)+sum(ab, `proflow_serve_shards_lost_total{cause="handover"}`), sum(ab, "proflow_serve_steps_total")
	victim := etcd.Follower(ctx, cli)
	if victim < 0 {
		t.Fatal("no etcd follower found")
	}
	etcd.Kill(victim)
	t.Logf("etcd member e%d (a follower) killed", victim)
	waitAll(t, ab, 20*time.Second, "10 steps each with an etcd member down", func() bool {
		return sum(ab, "proflow_serve_steps_total") >= steps0+20 && owned(ab) == 64
	})
	deadline := time.Now().Add(2 * ttl)
	for time.Now().Before(deadline) {
		waitAll(t, ab, 10*time.Second, "a scrape", func() bool { return true })
		if got := sum(ab, `proflow_serve_shards_lost_total{cause="fence"}`) + sum(ab, `proflow_serve_shards_lost_total{cause="handover"}`); got != lost0 || owned(ab) != 64 {
			t.Fatalf("with one etcd member down: %v shards lost (was %v), %d shards owned; want no interruption", got, lost0, owned(ab))
		}
		if e := epochs(); !maps.Equal(e, epochs0) {
			t.Fatalf("with one etcd member down the shards' owners or epochs changed")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// SIGSTOP b past its lease: a takes everything; b, continued, reports
	// its shards lost to the fence and writes nothing under its old epochs.
	a, b := reps["a"], reps["b"]
	fence0 := b.last[`proflow_serve_shards_lost_total{cause="fence"}`]
	if err := b.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	cuts["b"] = stopped
	waitAll(t, live("a"), 30*time.Second, "a owning every flow while b is stopped", func() bool {
		return a.last["proflow_serve_configured_flows"] == float64(n) && owned(live("a")) == 64
	})
	t.Logf("SIGSTOP b: a owns every flow after %v", time.Since(stopped).Round(time.Millisecond))
	sum0, cnt0 := a.last["proflow_multi_step_duration_seconds_sum"], a.last["proflow_multi_step_duration_seconds_count"]
	waitAll(t, live("a"), 20*time.Second, "4 steps of a alone", func() bool {
		return a.last["proflow_multi_step_duration_seconds_count"] >= cnt0+4
	})
	t.Logf("a alone: %d flows, %.2f ms a step (of a %v interval), process CPU %.1f s so far", n,
		1e3*(a.last["proflow_multi_step_duration_seconds_sum"]-sum0)/(a.last["proflow_multi_step_duration_seconds_count"]-cnt0), interval,
		a.last["process_cpu_seconds_total"])
	if err := b.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitAll(t, live("b"), 20*time.Second, "b reporting its shards lost to the fence", func() bool {
		return b.last[`proflow_serve_shards_lost_total{cause="fence"}`] > fence0
	})
	waitAll(t, ab, 30*time.Second, "a and b sharing the flows again", func() bool {
		return sum(ab, "proflow_serve_configured_flows") == float64(n) && owned(ab) == 64 && b.last["proflow_serve_configured_flows"] > 0
	})
	// Each replica's flows_on_switch follows its next step.
	waitAll(t, ab, 10*time.Second, "every flow on agg3 after b's return", func() bool {
		return sum(ab, `proflow_multi_flows_on_switch{switch="agg3"}`) == float64(n) && sum(ab, "proflow_multi_flows") == float64(n)
	})
	checkEtcdHistory(t, ctx, cli, prefix, n)
	checkDecisionLogs(t, all, flows, interval, cuts)
}

// decisionSpan is a run of one replica's decisions for one flow, each
// within gap of the one before, by the wall clock of its log records.
type decisionSpan struct {
	replica     string
	first, last time.Time
	decisions   int
}

// checkDecisionLogs reads every replica's decision records (JSON lines, at
// debug) and checks, flow by flow, that no two replicas were deciding for
// it at once: a replica's decisions for a flow form spans (consecutive
// decisions at most three control intervals apart), and two spans of
// different replicas may overlap by at most one control interval plus the
// timestamps' resolution. The decision records' own time ("at") is each
// replica's simulated clock, so the records' wall-clock time is used. At
// a cut (cuts: the replica killed or stopped, and when), every flow the
// cut replica was deciding for passes to another replica whose first
// decision follows the cut replica's last.
func checkDecisionLogs(t *testing.T, reps []*replicaProc, flows []proflow.FlowID, interval time.Duration, cuts map[string]time.Time) {
	t.Helper()
	const resolution = time.Microsecond // slog's JSON times are to the ns; the wall clock, about a µs
	gap, tol := 3*interval, interval+resolution
	start := time.Now()
	spans := map[string][]decisionSpan{} // flow → spans, every replica
	records := 0
	for _, r := range reps {
		own := map[string]*decisionSpan{} // flow → r's open span
		n, err := readDecisions(r.logPath, func(flow, replica string, at time.Time) {
			if replica != r.name {
				t.Fatalf("replica %s's log has a decision record of replica %q", r.name, replica)
			}
			sp := own[flow]
			if sp == nil || at.Sub(sp.last) > gap {
				if sp != nil {
					spans[flow] = append(spans[flow], *sp)
				}
				sp = &decisionSpan{replica: r.name, first: at, last: at}
				own[flow] = sp
			}
			if at.After(sp.last) {
				sp.last = at
			}
			sp.decisions++
		})
		if err != nil {
			t.Fatalf("replica %s's log: %v", r.name, err)
		}
		for flow, sp := range own {
			spans[flow] = append(spans[flow], *sp)
		}
		records += n
	}
	parse := time.Since(start)

	// At a cut: the flows the cut replica was deciding for (a span of it
	// ending within gap before the cut), and the handovers of those to
	// another replica, with the gap from the old owner's last decision to
	// the new owner's first.
	type cutStats struct {
		flows, handovers int
		minGap, maxGap   time.Duration
	}
	atCut := map[string]*cutStats{}
	for name := range cuts {
		atCut[name] = &cutStats{minGap: time.Hour}
	}
	var overlaps, brief, handovers, spanCount int
	var worst time.Duration
	for _, f := range flows {
		ss := spans[f.String()]
		if len(ss) == 0 {
			t.Errorf("flow %v: no decision in any replica's log", f)
			continue
		}
		slices.SortFunc(ss, func(a, b decisionSpan) int { return a.first.Compare(b.first) })
		spanCount += len(ss)
		for i, a := range ss {
			for _, b := range ss[i+1:] { // b.first ≥ a.first
				if a.replica == b.replica || !b.first.Before(a.last) {
					continue
				}
				end := a.last
				if b.last.Before(end) {
					end = b.last
				}
				ov := end.Sub(b.first)
				worst = max(worst, ov)
				if ov <= tol {
					brief++
					continue
				}
				if overlaps++; overlaps <= 10 {
					t.Errorf("flow %v: replica %s decided for it from %s to %s (%d decisions) and replica %s from %s to %s (%d): both for %v, want ≤ %v",
						f, a.replica, a.first.Format(time.StampMicro), a.last.Format(time.StampMicro), a.decisions,
						b.replica, b.first.Format(time.StampMicro), b.last.Format(time.StampMicro), b.decisions, ov, tol)
				}
			}
		}
		for name, at := range cuts {
			c := atCut[name]
			for i, a := range ss {
				if a.replica != name || a.last.After(at) || a.last.Before(at.Add(-gap)) {
					continue
				}
				c.flows++
				if i+1 == len(ss) || ss[i+1].replica == name {
					t.Errorf("flow %v: replica %s decided for it until %s, cut at %s, and no other replica took it over", f, name, a.last.Format(time.StampMicro), at.Format(time.StampMicro))
					continue
				}
				next := ss[i+1]
				c.handovers++
				g := next.first.Sub(a.last)
				c.minGap, c.maxGap = min(c.minGap, g), max(c.maxGap, g)
				if g <= 0 {
					t.Errorf("flow %v: replica %s's first decision after %s's cut (%s) does not follow %s's last (%s)", f, next.replica, name,
						next.first.Format(time.StampMicro), name, a.last.Format(time.StampMicro))
				}
			}
		}
		for i := 1; i < len(ss); i++ {
			if ss[i].replica != ss[i-1].replica {
				handovers++
			}
		}
	}
	if overlaps > 10 {
		t.Errorf("… %d overlapping decision spans in all", overlaps)
	}
	t.Logf("decision logs: %d decision records for %d flows parsed in %v; %d spans (a replica deciding for a flow, decisions ≤ %v apart), %d handovers; "+
		"spans of two replicas overlapping: %d beyond %v, %d within it (worst %v)",
		records, len(spans), parse.Round(time.Millisecond), spanCount, gap, handovers, overlaps, tol, brief, worst)
	for _, name := range slices.Sorted(maps.Keys(cuts)) {
		c := atCut[name]
		if c.flows == 0 {
			t.Errorf("replica %s: no flow it was deciding for at its cut", name)
			continue
		}
		t.Logf("cut of replica %s: %d flows it was deciding for, %d taken over, the new owner's first decision %v to %v after %s's last",
			name, c.flows, c.handovers, c.minGap.Round(time.Millisecond), c.maxGap.Round(time.Millisecond), name)
	}
}

// readDecisions calls fn for every decision record ("proflow decision") of
// the JSON log at path, in order, and returns how many there were. A last
// line without its newline (the replica still writing) is left out.
func readDecisions(path string, fn func(flow, replica string, at time.Time)) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rd := bufio.NewReaderSize(f, 1<<20)
	marker := []byte(`"msg":"proflow decision"`)
	var rec struct {
		Time    time.Time `json:"time"`
		Flow    string    `json:"flow"`
		Replica string    `json:"replica"`
	}
	n := 0
	for line := 1; ; line++ {
		b, err := rd.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if !bytes.Contains(b, marker) {
			continue
		}
		rec.Flow, rec.Replica = "", ""
		if err := json.Unmarshal(b, &rec); err != nil {
			return n, fmt.Errorf("line %d: %v", line, err)
		}
		if rec.Flow == "" || rec.Time.IsZero() {
			return n, fmt.Errorf("line %d: a decision without its flow or time: %s", line, b)
		}
		fn(rec.Flow, rec.Replica, rec.Time)
		n++
	}
}

// checkEtcdHistory reads every revision of the owner and state keys and
// checks that no owner key was created over a live one, and that every
// state write carries the epoch of an ownership live at that revision and
// the name of its owner.
func checkEtcdHistory(t *testing.T, ctx context.Context, cli *clientv3.Client, prefix string, n int) {
	t.Helper()
	end := prefix + "zz-end" // the history is read up to this put
	now, err := cli.Put(ctx, end, "")
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type owner struct {
		name string
		live bool
	}
	owners := map[string]*owner{} // owner key → current
	epochs := map[int64]string{}  // create revision → owner
	writes, checked := 0, map[string]bool{}
	for resp := range cli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(1)) {
		if err := resp.Err(); err != nil {
			t.Fatalf("watch the history: %v", err)
		}
		for _, ev := range resp.Events {
			key := string(ev.Kv.Key)
			switch {
			case strings.HasPrefix(key, prefix+"owners/"):
				o := owners[key]
				if ev.Type == clientv3.EventTypeDelete {
					if o != nil {
						o.live = false
					}
					continue
				}
				if ev.IsCreate() {
					if o != nil && o.live {
						t.Errorf("revision %d: %s created for %s over %s's live key", ev.Kv.ModRevision, key, ev.Kv.Value, o.name)
					}
					owners[key] = &owner{name: string(ev.Kv.Value), live: true}
					epochs[ev.Kv.CreateRevision] = string(ev.Kv.Value)
				} else if o == nil || o.name != string(ev.Kv.Value) {
					t.Errorf("revision %d: %s changed hands without a new key", ev.Kv.ModRevision, key)
				}
			case strings.HasPrefix(key, prefix+"state/") && ev.Type == clientv3.EventTypePut:
				var st cluster.FlowState
				if err := json.Unmarshal(ev.Kv.Value, &st); err != nil {
					t.Fatal(err)
				}
				if st.Replica == "" { // seeded by the test
					continue
				}
				writes++
				checked[st.Flow.String()] = true
				ownerKey := fmt.Sprintf("%sowners/%s", prefix, strings.Split(strings.TrimPrefix(key, prefix+"state/"), "/")[0])
				o := owners[ownerKey]
				if epochs[int64(st.Epoch)] != st.Replica || o == nil || !o.live || o.name != st.Replica {
					t.Errorf("revision %d: %s written by %s under epoch %d, not the live owner of its shard", ev.Kv.ModRevision, key, st.Replica, st.Epoch)
				}
			}
		}
		if n := len(resp.Events); n > 0 && string(resp.Events[n-1].Kv.Key) == end {
			break
		}
	}
	t.Logf("etcd history up to revision %d: %d state writes by replicas for %d flows, %d owner epochs, none overlapping", now.Header.Revision, writes, len(checked), len(epochs))
	if len(checked) != n {
		t.Errorf("%d flows have a state written by a replica, want all %d (their baselines)", len(checked), n)
	}
}

// replicaProc is one proflow serve process and its latest scrape.
type replicaProc struct {
	name    string
	cmd     *exec.Cmd
	metrics string
	logPath string // its stderr: JSON lines at debug
	exited  chan error
	last    map[string]float64
	dead    bool
}

func startReplica(t *testing.T, ctx context.Context, bin, dir, name, scen string, n int, endpoints []string, prefix string, ttl time.Duration) *replicaProc {
	t.Helper()
	addr := freePort(t)
	eps, _ := json.Marshal(endpoints)
	cfg := fmt.Sprintf(`log_level: debug
log_format: json
metrics: {listen: %q}
southbound:
  sim: {profile: testbed, scenario: %q, seed: 1, speed: 1, max_protected: %d}
policy: {kind: static}
cluster: {endpoints: %s, prefix: %s, replica: %s, lease_ttl: %v}
`, addr, scen, n, eps, prefix, name, ttl)
	path := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close() // the child has its own descriptor
	r := &replicaProc{name: name, metrics: "http://" + addr + "/metrics", logPath: logf.Name(), exited: make(chan error, 1)}
	r.cmd = exec.CommandContext(ctx, bin, "serve", "-config", path)
	r.cmd.Stderr = logf
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.cmd.Wait() }()
	t.Cleanup(func() {
		if !r.dead {
			r.cmd.Process.Signal(syscall.SIGCONT)
			r.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-r.exited:
			case <-time.After(10 * time.Second):
				r.cmd.Process.Kill()
			}
		}
		if t.Failed() {
			t.Logf("replica %s's log, its last records above debug:\n%s", r.name, logTail(r.logPath, 6000))
		}
	})
	return r
}

// logTail returns the last records above debug of the JSON log at path,
// up to about max bytes.
func logTail(path string, max int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var out []string
	size := 0
	lines := bytes.Split(data, []byte("\n"))
	for i := len(lines) - 1; i >= 0 && size < max; i-- {
		if l := lines[i]; len(l) > 0 && !bytes.Contains(l, []byte(`"level":"DEBUG"`)) {
			out = append(out, string(l))
			size += len(l)
		}
	}
	slices.Reverse(out)
	return strings.Join(out, "\n")
}

func (r *replicaProc) kill() {
	r.cmd.Process.Kill()
	<-r.exited
	r.dead = true
}

// waitAll scrapes rs until ok holds after a scrape of all of them, for at
// most d; a replica that exits fails the test.
func waitAll(t *testing.T, rs []*replicaProc, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var wg sync.WaitGroup
		for _, r := range rs {
			select {
			case err := <-r.exited:
				r.dead = true
				t.Fatalf("replica %s exited (%v) waiting for %s", r.name, err, what)
			default:
			}
			wg.Go(func() {
				if m, err := scrape(r.metrics); err == nil {
					r.last = m
				}
			})
		}
		wg.Wait()
		if ok() {
			return
		}
		if time.Now().After(deadline) {
			var s []string
			for _, r := range rs {
				s = append(s, fmt.Sprintf("%s: flows %v, shards %v, agg3 %v, resumed %v, writes %v", r.name, r.last["proflow_serve_configured_flows"],
					r.last["proflow_serve_owned_shards"], r.last[`proflow_multi_flows_on_switch{switch="agg3"}`],
					r.last[`proflow_serve_resumed_flows_total{from="stored"}`], r.last["proflow_serve_etcd_writes_total"]))
			}
			t.Fatalf("no %s within %v; last scrapes: %s", what, d, strings.Join(s, "; "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
