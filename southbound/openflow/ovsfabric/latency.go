package ovsfabric

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/hostagent"
)

// NetNSPath returns the file of host's network namespace (ip netns keeps
// them under /run/netns), for a hostagent.Config's NetNS.
func (f *Fabric) NetNSPath(host string) string { return filepath.Join("/run/netns", f.NS(host)) }

// latencyTelemetry adds the protected flow's latency to tel: a host agent
// reading its sender's TCP_INFO in the sender's namespace (served on
// loopback and read back through its client, as a controller elsewhere
// would) writes SmoothedRTT and RTTP99, and an rr flow's client reports
// write CompletionP99 and Completions. The agent stops when the run is
// undone.
func (r *run) latencyTelemetry(ctx context.Context, tel proflow.Telemetry) (proflow.Telemetry, error) {
	cfg := hostagent.DefaultConfig()
	cfg.Flow, cfg.NetNS, cfg.Window = r.flow, r.f.NetNSPath(r.scale.Sim.ProtectedSrc), r.interval
	agent, err := hostagent.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: host agent of %s: %w", r.scale.Sim.ProtectedSrc, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = agent.Close()
		return nil, fmt.Errorf("ovsfabric: host agent: %w", err)
	}
	r.agent = agent
	r.later(func() { _ = agent.Close() })
	r.goUntilUndone(ctx, func(ctx context.Context) { _ = agent.Run(ctx) })
	r.goUntilUndone(ctx, func(ctx context.Context) { _ = hostagent.Serve(ctx, ln, agent) })
	client, err := hostagent.NewClient(hostagent.ClientConfig{Agent: "http://" + ln.Addr().String(), Flow: r.flow})
	if err != nil {
		return nil, err
	}
	return telemetry.Merge(tel, client, telemetry.OverlayFunc(r.completions))
}

// completions writes the latest report of an rr flow's client into the
// flow's sample, when it is at most two intervals old (the client reports
// every interval on its own clock; a controller's step reads the one
// before it). Other kinds have none and leave both fields zero.
func (r *run) completions(_ context.Context, obs *proflow.Observation) error {
	rep := r.rrLast.Load()
	if rep == nil || time.Since(rep.Time) > 2*r.interval {
		return nil
	}
	obs.Flow.CompletionP99, obs.Flow.Completions = rep.P99, float64(rep.Completions)
	return nil
}

// latencies are the protected flow's per-second latency readings, before
// and after the congestion starts, for the summary: srtt and an rr flow's
// request completion p99, seconds.
type latencies struct {
	srttPre, srttPost []float64
	reqPre, reqPost   []float64
}

// secondLatency returns the srtt and an rr flow's request completion p99
// of the line at t (milliseconds, "-" where unknown) and keeps them.
func (r *run) secondLatency(t time.Duration) (srtt, req string) {
	srtt, req = "-", "-"
	post := t >= r.plan.CongestionStart
	if r.agent != nil {
		if rep := r.agent.Report(); rep.SmoothedRTT > 0 {
			srtt = fmt.Sprintf("%.1f", rep.SmoothedRTT*1e3)
			r.lat.add(post, &r.lat.srttPre, &r.lat.srttPost, rep.SmoothedRTT)
		}
	}
	if rep := r.rrLast.Load(); rep != nil && time.Since(rep.Time) <= 2*r.interval && rep.P99 > 0 {
		req = fmt.Sprintf("%.1f", rep.P99*1e3)
		r.lat.add(post, &r.lat.reqPre, &r.lat.reqPost, rep.P99)
	}
	return srtt, req
}

func (l *latencies) add(post bool, pre, after *[]float64, v float64) {
	if post {
		*after = append(*after, v)
	} else {
		*pre = append(*pre, v)
	}
}

// summary prints the medians of the per-second readings.
func (l *latencies) summary(w io.Writer, rr bool) {
	med := func(xs []float64) string {
		if len(xs) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f ms", hostagent.Percentile(append([]float64(nil), xs...), 0.5)*1e3)
	}
	fmt.Fprintf(w, "f_p srtt before / after congestion (median of seconds)\t%s / %s\n", med(l.srttPre), med(l.srttPost))
	if rr {
		fmt.Fprintf(w, "request completion p99 before / after congestion (median of seconds)\t%s / %s\n", med(l.reqPre), med(l.reqPost))
	}
}

// kindString describes a scaled kind for the episode's header.
func kindString(k sim.FlowKind) string {
	if k.IsBulk() {
		return "bulk"
	}
	b, err := json.Marshal(k)
	if err != nil {
		return k.Name()
	}
	return k.Name() + " " + string(b)
}
