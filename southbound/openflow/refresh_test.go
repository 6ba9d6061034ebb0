package openflow_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/syncbuf"
	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// TestConfigRequestTimeoutFitsLeaseRefresh: one leaf's lease refresh may
// take RequestTimeout, so with leases it must fit in the refresh period,
// LeaseTimeout/3. A config where it does not is refused, naming both
// values and the bound; permanent overrides (no lease) take any request
// timeout.
func TestConfigRequestTimeoutFitsLeaseRefresh(t *testing.T) {
	for _, c := range []struct {
		name           string
		lease, request time.Duration
		want           []string // "" : valid
	}{
		{"default request timeout, 5 s lease", 5 * time.Second, 2 * time.Second,
			[]string{"request timeout 2s", "lease timeout 5s", "want request timeout ≤ 1.666666666s", "or lease timeout ≥ 6s"}},
		{"request timeout as long as the lease", 3 * time.Second, 3 * time.Second,
			[]string{"request timeout 3s", "lease timeout 3s", "want request timeout ≤ 1s", "or lease timeout ≥ 9s"}},
		{"defaults", 0, 0, nil},
		{"request timeout a third of the lease", 6 * time.Second, 2 * time.Second, nil},
		{"permanent overrides", -1, time.Hour, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.LeaseTimeout, cfg.RequestTimeout = c.lease, c.request
			_, err := openflow.NewServer(cfg)
			if c.want == nil {
				if err != nil {
					t.Errorf("NewServer(lease %v, request timeout %v) = %v, want it accepted", c.lease, c.request, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("NewServer(lease %v, request timeout %v) accepted, want it refused: a leaf's refresh may outlast the refresh period", c.lease, c.request)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// wideFabric is the paper fabric with n leaves (n ≥ 4): leaf5.. have
// datapath ids 0x15.., port k+1 toward agg k+1, and two hosts each on ports
// 11 and 12, 10.0.0.9 onward.
func wideFabric(n int) openflow.Fabric {
	f := openflow.PaperFabric()
	for l := len(f.Leaves); l < n; l++ {
		lf := openflow.LeafSwitch{Name: fmt.Sprintf("leaf%d", l+1), DPID: uint64(0x11 + l)}
		for k := range f.Aggs {
			lf.Uplinks = append(lf.Uplinks, uint32(k+1))
		}
		for j := range 2 {
			h := 2*l + j + 1
			lf.Hosts = append(lf.Hosts, openflow.Host{Name: fmt.Sprintf("h%d", h), Addr: netip.AddrFrom4([4]byte{10, 0, 0, byte(h)}), Port: uint32(11 + j)})
		}
		f.Leaves = append(f.Leaves, lf)
	}
	for k := range f.Aggs {
		f.Aggs[k].LeafPorts = f.Aggs[k].LeafPorts[:0]
		for l := range n {
			f.Aggs[k].LeafPorts = append(f.Aggs[k].LeafPorts, uint32(l+1))
		}
	}
	return f
}

// TestRefreshReachesEveryLeafAtOnce: a refresh round re-adds the overrides
// of every leaf at once, however many leaves there are, so a round lasts
// one leaf's refresh (at most RequestTimeout, which fits in the refresh
// period). Here 20 leaves all hold back their barrier replies, each batch
// waiting its full RequestTimeout (a minute): every leaf must still receive
// its refresh right away. Taking leaves in waves (8 at a time, as the
// refresh once did) makes the 9th leaf wait a RequestTimeout, and a round
// of many slow leaves outlast the lease.
func TestRefreshReachesEveryLeafAtOnce(t *testing.T) {
	const leaves = 20
	clock := newTickClock()
	tb := newTestbed(t, func(c *openflow.Config) {
		c.Fabric, c.Flow = wideFabric(leaves), proflow.FlowID{}
		c.Clock, c.LeaseTimeout, c.RequestTimeout = clock, 3*time.Minute, time.Minute
	})
	for _, sw := range tb.sw {
		sw.SetNow(clock.Now)
	}
	tb.ready()
	ctx := ctxT(t, 20*time.Second)
	// One flow per pair of leaves (leaf1→leaf2, leaf3→leaf4, ...): every
	// leaf holds one override.
	for l := 0; l < leaves; l += 2 {
		f := proflow.FlowID{Src: netip.AddrFrom4([4]byte{10, 0, 0, byte(2*l + 1)}), Dst: netip.AddrFrom4([4]byte{10, 0, 0, byte(2*l + 3)}),
			Proto: proflow.ProtoTCP, SrcPort: 1000, DstPort: 2000}
		if err := tb.srv.Place(ctx, f, l/2%4); err != nil {
			t.Fatal(err)
		}
	}
	placedAt := clock.Now()
	for _, sw := range tb.sw {
		sw.WithholdBarrier.Store(true)
	}
	clock.Advance(time.Minute)
	refreshAt := clock.Now()
	clock.ticker(t, ctx, time.Minute).tick(t, ctx)
	// Far less than RequestTimeout: no leaf may wait for another's barrier.
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var late []string
	for l := range leaves {
		name := fmt.Sprintf("leaf%d", l+1)
		sw := tb.sw[name]
		refreshed := func() bool {
			o := overrideRules(sw)
			return len(o) == 1 && o[0].Installed.Equal(refreshAt)
		}
		if err := sw.Await(wait, refreshed); err != nil {
			late = append(late, name)
		}
	}
	if len(late) > 0 {
		t.Errorf("%d of %d leaves got no refresh within 10 s of the round's start (their rules date from %v, the round from %v): %v; want every leaf refreshed at once",
			len(late), leaves, placedAt, refreshAt, late)
	}
}

// TestRefreshOverrunLogged: a round that takes longer than its period
// (here a leaf that withholds its barrier while the clock moves past the
// next tick) is logged and counted, and the next round still runs.
func TestRefreshOverrunLogged(t *testing.T) {
	const lease = 3 * time.Second
	clock := newTickClock()
	reg := prometheus.NewPedanticRegistry()
	var logs syncbuf.Buffer
	tb := newTestbed(t, func(c *openflow.Config) {
		c.Clock, c.LeaseTimeout, c.Registerer = clock, lease, reg
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	tb.ready()
	ctx := ctxT(t, 10*time.Second)
	if err := tb.srv.Place(ctx, fp, 0); err != nil {
		t.Fatal(err)
	}
	overruns := func() float64 {
		t.Helper()
		return testutil.ToFloat64(mustGet(t, reg, "proflow_openflow_refresh_overruns_total"))
	}
	refresh := clock.ticker(t, ctx, lease/3)
	refresh.tick(t, ctx)
	refresh.tick(t, ctx) // received once the first round is done
	if n := overruns(); n != 0 {
		t.Fatalf("refresh_overruns_total = %v after rounds within their period, want 0", n)
	}
	leaf := tb.sw["leaf1"]
	leaf.WithholdBarrier.Store(true)
	barriers := func() int {
		n := 0
		for _, op := range leaf.Ops() {
			if op.Kind == "barrier" {
				n++
			}
		}
		return n
	}
	before := barriers()
	refresh.tick(t, ctx)
	if err := leaf.Await(ctx, func() bool { return barriers() > before }); err != nil {
		t.Fatalf("the refresh round sent no barrier to leaf1: %v", err)
	}
	clock.Advance(lease/3 + time.Millisecond) // the round outlasts its period
	refresh.tick(t, ctx)                      // received once the round gave up on leaf1 (RequestTimeout)
	leaf.WithholdBarrier.Store(false)
	refresh.tick(t, ctx)
	if n := overruns(); n != 1 {
		t.Errorf("refresh_overruns_total = %v, want 1", n)
	}
	if !strings.Contains(logs.String(), "lease refresh round took longer than its period") {
		t.Errorf("log %q does not report the overrun", logs.String())
	}
}
