package ovsfabric_test

import (
	"context"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
)

// The paper's regime in the test: 50 ms round trips on h1's link, CUBIC, a
// receive buffer of about one bandwidth-delay product at the protected
// flow's sink, and an H-limit at 1.05 C.
const (
	regimeRTT    = 50 * time.Millisecond
	regimeRcvBuf = 56 << 10
	regimeHLimit = "10500kbit"
)

var tcRate = regexp.MustCompile(`\brate (\S+)`)

// TestPaperRegimeMoves is acceptance 4 of the regime: one move of case (a)
// (the protected flow moved make-before-break between two idle aggregation
// switches while healthy) and one of case (d) (moved after a crowd starved
// its path) at 50 ms round trip. It asserts that the regime is in place
// around each move — the round trip ss reads from the sender's socket, its
// congestion control, the sink's receive buffer and the H-limit's tbf on
// every leaf egress — not how large the moves' effect is.
func TestPaperRegimeMoves(t *testing.T) {
	requireFabric(t, "ss")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	f, srv := upFabric(t, ctx, openflow.DefaultConfig(), ovsfabric.Config{BucketRate: "10mbit",
		RTT: regimeRTT, CongestionControl: "cubic", ProtectedRcvBufBytes: regimeRcvBuf, HLimitRate: regimeHLimit})
	labels := f.RegimeLabels()
	t.Logf("regime labels: %v", labels)
	if labels[ovsfabric.LabelRTT] != "50ms" || labels[ovsfabric.LabelCongestionControl] != "cubic" ||
		labels[ovsfabric.LabelRcvBuf] != strconv.Itoa(regimeRcvBuf) || labels[ovsfabric.LabelHLimitRate] != regimeHLimit {
		t.Errorf("regime labels %v, want rtt 50ms, cubic, rcvbuf %d, H-limit %s", labels, regimeRcvBuf, regimeHLimit)
	}

	// The protected flow h1→h8 on agg1, paced at 0.8 C so that no queue
	// adds to the round trip the delay line makes; congesters' sink on h7.
	if err := srv.Place(ctx, fp, 0); err != nil {
		t.Fatal(err)
	}
	var fpm, congm meter
	for _, s := range []struct {
		host string
		port int
		rcv  int
		m    *meter
	}{{"h8", 5201, regimeRcvBuf, &fpm}, {"h7", 5202, 0, &congm}} {
		sink, err := f.StartSinkWith(ctx, s.host, s.port, ovsfabric.SinkConfig{RcvBufBytes: s.rcv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sink.Stop)
		go s.m.run(sink)
	}
	time.Sleep(200 * time.Millisecond)
	snd, err := f.StartSender(ctx, "h1", "10.0.0.8:5201", ovsfabric.SenderConfig{BindPort: 40000, RateBytesPerSec: 0.8 * topo.BucketRate})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snd.Stop)

	// assertRegime checks what is in place now. The delay line must be
	// there: the minimum round trip (no queueing in it) and the smoothed one
	// are at least the setting less rttMargin. From above they are bounded
	// only loosely — by rttCeiling times the setting on a healthy path, where
	// a loaded machine (make test runs other packages beside this one) adds
	// its scheduling delay to every frame the delay line holds, and not at
	// all for the smoothed round trip once a queue at a bucket lengthens it
	// (srttCeil +Inf) — enough to catch a grossly wrong delay, not to flake.
	const rttMargin, rttCeiling = 0.05, 2.0
	assertRegime := func(when string, srttCeil float64) ovsfabric.SocketStats {
		t.Helper()
		st, err := f.Socket(ctx, "h1", 40000)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		t.Logf("%s: ss of the protected flow's sender: %s", when, st.Line)
		if st.CongestionControl != "cubic" {
			t.Errorf("%s: sender's congestion control %q, want cubic", when, st.CongestionControl)
		}
		for _, c := range []struct {
			name string
			got  time.Duration
			ceil float64
		}{{"minimum round trip", st.MinRTT, rttCeiling}, {"smoothed round trip", st.RTT, srttCeil}} {
			ratio := c.got.Seconds() / regimeRTT.Seconds()
			t.Logf("%s: %s %v (%.2f× the setting %v)", when, c.name, c.got, ratio, regimeRTT)
			if ratio < 1-rttMargin || ratio > c.ceil {
				t.Errorf("%s: %s %v, want in [%.2f, %.1f] × %v (the delay line in place)", when, c.name, c.got, 1-rttMargin, c.ceil, regimeRTT)
			}
		}
		sink, err := f.Socket(ctx, "h8", 5201)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		// The kernel doubles SO_RCVBUF for its bookkeeping.
		if sink.RcvBufBytes != 2*regimeRcvBuf {
			t.Errorf("%s: sink's receive buffer (ss skmem rb) %d B, want 2 × %d", when, sink.RcvBufBytes, regimeRcvBuf)
		}
		want, _ := ovsfabric.ParseRate(regimeHLimit)
		for k := range 4 {
			for l := range 4 {
				dev := f.HLimitDev(k, l)
				out, err := f.Output(ctx, "tc", "qdisc", "show", "dev", dev, "root")
				if err != nil {
					t.Fatal(err)
				}
				m := tcRate.FindStringSubmatch(out)
				var got float64
				if m != nil {
					got, _ = ovsfabric.ParseRate(m[1])
				}
				if m == nil || !regexp.MustCompile(`^qdisc tbf `).MatchString(out) || math.Abs(got/want-1) > 0.01 {
					t.Errorf("%s: H-limit on %s: tc shows %q, want a root tbf at %s", when, dev, out, regimeHLimit)
				}
			}
		}
		return st
	}

	time.Sleep(5 * time.Second)
	healthy := fpm.avg(3 * time.Second)
	before := assertRegime("healthy on agg1", rttCeiling)
	t.Logf("healthy on agg1: f_p %s", mbit(healthy))

	// Case (a): healthy, agg1 → agg2, both idle.
	if err := srv.Place(ctx, fp, 1); err != nil {
		t.Fatalf("case (a): move to agg2: %v", err)
	}
	time.Sleep(4 * time.Second)
	after := assertRegime("case (a), 4 s after the move to agg2", math.Inf(1))
	t.Logf("case (a): f_p %s after the move (was %s); retransmissions %d→%d, reordering %d, DSACKs %d",
		mbit(fpm.avg(3*time.Second)), mbit(healthy), before.Retrans, after.Retrans, after.Reordering, after.DSACKDups)

	// Case (d): a crowd of five hosts onto agg2 starves f_p's path (the
	// 32 kB bucket has no reserve), then f_p moves to idle agg3.
	for _, h := range []string{"h2", "h3", "h4", "h5", "h6"} {
		n, _ := strconv.Atoi(h[1:])
		pair := proflow.FlowID{Src: netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), Dst: h7, Proto: proflow.ProtoTCP}
		if err := srv.Place(ctx, pair, 1); err != nil {
			t.Fatal(err)
		}
		s, err := f.StartSender(ctx, h, "10.0.0.7:5202", congesterTraffic)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
	}
	time.Sleep(6 * time.Second)
	collapsed := fpm.avg(3 * time.Second)
	t.Logf("case (d): under the crowd on agg2 f_p %s (healthy %s), congesters %s", mbit(collapsed), mbit(healthy), mbit(congm.avg(3*time.Second)))
	st := assertRegime("case (d), under the crowd", math.Inf(1))
	if err := srv.Place(ctx, fp, 2); err != nil {
		t.Fatalf("case (d): move to agg3: %v", err)
	}
	time.Sleep(5 * time.Second)
	after = assertRegime("case (d), 5 s after the move to agg3", math.Inf(1))
	t.Logf("case (d): f_p %s after the move (was %s); retransmissions %d→%d, reordering %d, DSACKs %d",
		mbit(fpm.avg(3*time.Second)), mbit(collapsed), st.Retrans, after.Retrans, after.Reordering, after.DSACKDups)
}
