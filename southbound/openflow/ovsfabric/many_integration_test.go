package ovsfabric_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
)

// manyFlows is how many protected flows TestOVSManyFlowsStep moves in each
// step (issue 13, acceptance 4), and manySteps how many steps it times.
const (
	manyFlows = 50
	manySteps = 120
)

// manyFlow is the i-th of the flows h1→h8 the test places: TCP from port
// 20000+i to 5201.
func manyFlow(i int) proflow.FlowID {
	return proflow.FlowID{Src: h1, Dst: h8, Proto: proflow.ProtoTCP, SrcPort: uint16(20000 + i), DstPort: 5201}
}

var overrideLine = regexp.MustCompile(`cookie=0x([0-9a-f]+),.*priority=(\d+),tcp,nw_src=([0-9.]+),nw_dst=([0-9.]+),tp_src=(\d+),tp_dst=(\d+).*actions=output:(\d+)`)

// overridesByPort parses dump-flows of a leaf: for each override of the
// host pair src→dst (the server's cookie prefix, a TCP 5-tuple), the
// uplink of its highest-priority rule, keyed by the port of the many-flow
// test's flow (the source port on the source leaf, the destination port
// on the destination leaf), and the number of override rules of the pair.
func overridesByPort(dump string, src, dst string, bySrc bool) (uplink map[int]int, rules int) {
	uplink, prio := map[int]int{}, map[int]int{}
	for _, line := range strings.Split(dump, "\n") {
		m := overrideLine.FindStringSubmatch(line)
		if m == nil || m[3] != src || m[4] != dst {
			continue
		}
		ck, _ := strconv.ParseUint(m[1], 16, 64)
		if ck>>40 != 0x504602 {
			continue
		}
		rules++
		p, _ := strconv.Atoi(m[2])
		port, _ := strconv.Atoi(m[6])
		if bySrc {
			port, _ = strconv.Atoi(m[5])
		}
		if p > prio[port] {
			prio[port] = p
			uplink[port], _ = strconv.Atoi(m[7])
		}
	}
	return uplink, rules
}

// checkMany reads both leaves' tables and checks that flow i is on want[i]
// in both directions, with exactly one override per flow and direction.
func checkMany(t *testing.T, ctx context.Context, b *bed, want []int, when string) {
	t.Helper()
	fwd, err := b.f.DumpFlows(ctx, b.f.LeafBridge(0))
	if err != nil {
		t.Fatal(err)
	}
	rev, err := b.f.DumpFlows(ctx, b.f.LeafBridge(3))
	if err != nil {
		t.Fatal(err)
	}
	up, nf := overridesByPort(fwd, h1.String(), h8.String(), true)
	down, nr := overridesByPort(rev, h8.String(), h1.String(), false)
	if nf != len(want) || nr != len(want) {
		t.Errorf("%s: %d overrides on leaf1 and %d on leaf4, want %d each (one per flow and direction, no old rule left)", when, nf, nr, len(want))
	}
	bad := 0
	for i, k := range want {
		port := 20000 + i
		if up[port] != k+1 || down[port] != k+1 { // PaperFabric: uplink k+1 leads to agg k+1
			t.Errorf("%s: flow %v forward via uplink %d, reverse via %d; want %d both", when, manyFlow(i), up[port], down[port], k+1)
			if bad++; bad >= 5 {
				t.FailNow()
			}
		}
	}
}

// TestOVSManyFlowsStep places 50 protected flows h1→h8 in one PlaceBatch
// and reroutes every one of them in each of 120 further steps, each step
// committed by barrier replies of both leaves (new rules confirmed, then
// old rules deleted and confirmed). It checks every flow's rules on the
// switches, that no lookup missed the table while four of the flows carry
// traffic, and the per-flow telemetry of those four; it prints the step
// latency distribution (the figure in docs/performance.md). It
// releases every flow at the end and checks that no override is left.
func TestOVSManyFlowsStep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	b := upBed(t, ctx)

	flows := make([]proflow.FlowID, manyFlows)
	for i := range flows {
		flows[i] = manyFlow(i)
	}
	ps := make([]proflow.Placement, manyFlows)
	errs := make([]error, manyFlows)
	want := make([]int, manyFlows)
	step := func(s int) time.Duration {
		for i, f := range flows {
			want[i] = (i + s) % 4
			ps[i] = proflow.Placement{Flow: f, Switch: want[i]}
		}
		start := time.Now()
		err := b.srv.PlaceBatch(ctx, ps, errs)
		d := time.Since(start)
		if err := errors.Join(append(errs, err)...); err != nil {
			t.Fatalf("step %d: %v", s, err)
		}
		return d
	}
	step(0)
	checkMany(t, ctx, b, want, "after the first placement")

	// Traffic on four of the flows (1 Mbit/s each) while they move.
	sink, err := b.f.StartSink(ctx, "h8", 5201)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.Stop)
	go func() {
		for range sink.Reports() {
		}
	}()
	time.Sleep(200 * time.Millisecond)
	const busy = 4
	for i := range busy {
		snd, err := b.f.StartSender(ctx, "h1", "10.0.0.8:5201", ovsfabric.SenderConfig{BindPort: 20000 + i, RateBytesPerSec: 1e6 / 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(snd.Stop)
	}
	time.Sleep(2 * time.Second)
	obs := &proflow.Observation{FlowIDs: flows}
	_ = b.srv.Collect(ctx, obs)
	m1, m4 := b.tableMisses(ctx, b.f.LeafBridge(0)), b.tableMisses(ctx, b.f.LeafBridge(3))

	lat := make([]time.Duration, 0, manySteps)
	for s := 1; s <= manySteps; s++ {
		lat = append(lat, step(s))
		if s%40 == 0 {
			checkMany(t, ctx, b, want, fmt.Sprintf("after step %d", s))
		}
	}
	d1, d4 := b.tableMisses(ctx, b.f.LeafBridge(0))-m1, b.tableMisses(ctx, b.f.LeafBridge(3))-m4
	if m1 < 0 || m4 < 0 || d1 != 0 || d4 != 0 {
		t.Errorf("table misses during %d steps of %d moves under traffic: leaf1 %d, leaf4 %d; want 0 (no packet found no rule)", manySteps, manyFlows, d1, d4)
	}
	// A rule's counter starts at its move and goes with its delete, so
	// rates are read over an interval with no move: one second after the
	// last step.
	_ = b.srv.Collect(ctx, obs)
	time.Sleep(time.Second)
	if err := b.srv.Collect(ctx, obs); err != nil {
		t.Fatal(err)
	}
	for i := range manyFlows {
		r := obs.Flows[i].Throughput
		if i < busy && r < 0.2*1e6/8 {
			t.Errorf("flow %v sends 1 Mbit/s, telemetry says %s", flows[i], mbit(r))
		}
		if i >= busy && r != 0 {
			t.Errorf("idle flow %v: telemetry says %s, want 0", flows[i], mbit(r))
		}
	}
	t.Logf("per-flow telemetry of the busy flows: %s, %s, %s, %s", mbit(obs.Flows[0].Throughput), mbit(obs.Flows[1].Throughput),
		mbit(obs.Flows[2].Throughput), mbit(obs.Flows[3].Throughput))

	sorted := append([]time.Duration(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	q := func(p float64) time.Duration { return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))] }
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	t.Logf("one step of %d flows, every flow rerouted (PlaceBatch: adds + barrier on both leaves, then deletes + barrier), %d steps: "+
		"min %v, p50 %v, p90 %v, p99 %v, max %v, mean %v",
		manyFlows, len(lat), sorted[0], q(0.5), q(0.9), q(0.99), sorted[len(sorted)-1], sum/time.Duration(len(lat)))

	// Release every flow: no override left, the base path carries them.
	for _, f := range flows {
		if err := b.srv.Release(ctx, f); err != nil {
			t.Fatalf("Release(%v): %v", f, err)
		}
	}
	checkMany(t, ctx, b, nil, "after releasing every flow")
}
