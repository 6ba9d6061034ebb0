package ovsfabric_test

import (
	"context"
	"math"
	"net/netip"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/hostagent"
)

// rrCheckRTT is the round trip the delay line gives h1's link in
// TestRRHostAgentRTT: far above what the userspace datapath and the
// processes' wake-ups add (a few hundred µs), so that the two measures
// compare the path and not the scheduler.
const rrCheckRTT = 20 * time.Millisecond

// TestRRHostAgentRTT runs one short rr episode on the OVS fabric — tiny
// periodic requests over one connection from h1 to h8 through agg1, the
// server answering each with 8 bytes — and checks the host agent's srtt of
// the client's socket (TCP_INFO over inet_diag, in h1's namespace) against
// the client's own measure of the round trip: a tiny request's completion
// time (due → acknowledgement), whose median per report must be within
// 10% of the agent's srtt. Both must also show the delay line's round
// trip, so that neither can agree with the other by reading nothing.
func TestRRHostAgentRTT(t *testing.T) {
	requireFabric(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, srv := upFabric(t, ctx, openflow.DefaultConfig(), ovsfabric.Config{BucketRate: "10mbit", RTT: rrCheckRTT})
	if err := srv.Place(ctx, fp, 0); err != nil {
		t.Fatal(err)
	}

	kind := sim.FlowKind{Kind: sim.KindRR, RequestBytes: 100, RequestRate: 50}
	sink, err := f.StartSinkWith(ctx, "h8", int(fp.DstPort), ovsfabric.SinkConfig{Report: time.Second, ReplyEvery: kind.RequestBytes})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Stop()
	go func() {
		for range sink.Reports() { // drained: its byte counts are not checked here
		}
	}()
	acfg := hostagent.DefaultConfig()
	acfg.Flow, acfg.NetNS = fp, f.NetNSPath("h1")
	agent, err := hostagent.New(acfg)
	if err != nil {
		t.Fatal(err)
	}
	actx, stopAgent := context.WithCancel(ctx)
	agentDone := make(chan struct{})
	go func() { defer close(agentDone); _ = agent.Run(actx) }()
	defer func() { stopAgent(); <-agentDone; _ = agent.Close() }()

	time.Sleep(200 * time.Millisecond) // the sink listens
	snd, err := f.StartSender(ctx, "h1", netip.AddrPortFrom(h8, fp.DstPort).String(),
		ovsfabric.SenderConfig{BindPort: int(fp.SrcPort), Kind: kind, Report: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Stop()

	// Eight reports after the first one with completions (the handshake
	// and the first requests: a report that began before the connection
	// was up holds fewer, some still queued) — 4 s of 25 requests each.
	var client, srtt []float64
	started := false
	for len(client) < 8 {
		select {
		case <-ctx.Done():
			t.Fatalf("%d rr reports before the deadline, want 8: %v", len(client), ctx.Err())
		case rep, ok := <-snd.Reports():
			if !ok {
				t.Fatal("the rr client ended")
			}
			ar := agent.Report()
			if rep.Completions == 0 {
				if started {
					t.Fatalf("a report with no completion after the start: %+v", rep)
				}
				continue
			}
			if !started {
				started = true // the first report with completions: the start
				continue
			}
			if rep.Completions < 20 || rep.Completions > 30 || rep.Outstanding > 2 {
				t.Errorf("report %+v, want about 25 completions per 500 ms at 50 requests/s and none queued", rep)
			}
			if !ar.Found {
				t.Fatalf("the host agent did not find %v in h1's namespace", fp)
			}
			t.Logf("client p50 %.2f ms (p99 %.2f, %d requests), agent srtt %.2f ms (window p50 %.2f, p99 %.2f, %d samples), cc %s",
				rep.P50*1e3, rep.P99*1e3, rep.Completions, ar.SmoothedRTT*1e3, ar.RTTP50*1e3, ar.RTTP99*1e3, ar.Samples, ar.Info.CongestionControl)
			client, srtt = append(client, rep.P50), append(srtt, ar.SmoothedRTT)
		}
	}
	c, a := hostagent.Percentile(client, 0.5), hostagent.Percentile(srtt, 0.5)
	t.Logf("median of the reports: client %.2f ms, agent srtt %.2f ms (%+.1f%%)", c*1e3, a*1e3, (a-c)/c*100)
	// At least the delay line's round trip; from above only a loose bound
	// (2×) that a grossly wrong delay breaks and a loaded machine does not.
	if lo, hi := rrCheckRTT.Seconds(), 2*rrCheckRTT.Seconds(); c < lo || c > hi || a < lo || a > hi {
		t.Errorf("client %.2f ms, agent %.2f ms; want both in [%v, %v]: the delay line's round trip, at most twice it",
			c*1e3, a*1e3, rrCheckRTT, time.Duration(hi*float64(time.Second)))
	}
	if math.Abs(a-c) > 0.1*c {
		t.Errorf("agent srtt %.2f ms and client completion time %.2f ms are %.1f%% apart, want at most 10%%", a*1e3, c*1e3, math.Abs(a-c)/c*100)
	}
}
