package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

func TestFlowKindValidation(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"unknown kind", `"protected_kind": {"kind": "video"}`, `protected_kind.kind: "video", want bulk, rate, onoff or rr`},
		{"rate unset", `"protected_kind": {"kind": "rate"}`, "protected_kind.rate: unset, want the flow's rate"},
		{"rate and fraction", `"protected_kind": {"kind": "rate", "rate": "96Mbit/s", "rate_fraction": 0.5}`, "protected_kind.rate_fraction: set with rate"},
		{"fraction range", `"protected_kind": {"kind": "rate", "rate_fraction": 1.5}`, "protected_kind.rate_fraction: 1.5, want a fraction of the bucket rate C in (0, 1]"},
		{"bad rate", `"protected_kind": {"kind": "rate", "rate": "fast"}`, "protected_kind.rate: not a rate"},
		{"foreign field", `"protected_kind": {"kind": "rate", "rate": "96Mbit/s", "request_bytes": 10}`, "protected_kind.request_bytes: set for kind rate, which takes only rate, rate_fraction"},
		{"bulk field", `"protected_kind": {"rate": "96Mbit/s"}`, "protected_kind.rate: set for kind bulk, which takes no such field"},
		{"onoff no cycle", `"protected_kind": {"kind": "onoff"}`, "protected_kind.on: zero, want a positive duration"},
		{"onoff both", `"protected_kind": {"kind": "onoff", "on": "1s", "off": "1s", "period": "2s", "duty": 0.5}`, "protected_kind.period: set with on/off"},
		{"onoff duty", `"protected_kind": {"kind": "onoff", "period": "2s", "duty": 1}`, "protected_kind.duty: 1, want the fraction of the period spent sending, in (0, 1)"},
		{"onoff off", `"protected_kind": {"kind": "onoff", "on": "1s", "off": "-1s"}`, "protected_kind.off: -1s is negative"},
		{"rr size", `"protected_kind": {"kind": "rr", "request_rate": 10}`, "protected_kind.request_bytes: 0, want a request size of 1..1073741824 bytes"},
		{"rr rate", `"protected_kind": {"kind": "rr", "request_bytes": 1000}`, "protected_kind.request_rate: 0, want a number of requests per second > 0 and at most 100000"},
		{"rr rate too high", `"protected_kind": {"kind": "rr", "request_bytes": 1, "request_rate": 1e20}`, "protected_kind.request_rate: 1e+20, want a number of requests per second > 0 and at most 100000"},
		{"rr rate from too high", `"protected_kind": {"kind": "rr", "request_bytes": 1, "request_rate": 5, "from": "30s", "request_rate_from": 1e6}`, "protected_kind.request_rate_from: 1e+06, want a number of requests per second > 0 and at most 100000"},
		{"rr arrivals", `"protected_kind": {"kind": "rr", "request_bytes": 1000, "request_rate": 5, "arrivals": "bursty"}`, `protected_kind.arrivals: "bursty", want periodic (the default) or poisson`},
		{"rr slo", `"protected_kind": {"kind": "rr", "request_bytes": 1000, "request_rate": 5, "slo": "soon"}`, "protected_kind.slo: not a duration"},
		{"with list", `"protected": [{"src": "h1", "dst": "h8", "switch": "agg1"}], "protected_kind": {"kind": "rr", "request_bytes": 1000, "request_rate": 5}`, "protected_kind: set with a protected list, want each flow's kind in protected[i].kind"},
		{"list kind", `"protected": [{"src": "h1", "dst": "h8", "switch": "agg1", "kind": {"kind": "onoff", "on": "1s"}}]`, "protected[0].kind.off: zero, want a positive duration"},
		{"cap with kind", `"protected": [{"src": "h1", "dst": "h8", "switch": "agg1", "cap": "96Mbit/s", "kind": {"kind": "rate", "rate": "96Mbit/s"}}]`, "protected[0].cap: set for kind rate, want the rate in kind.rate or kind.rate_fraction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := `{"name": "k", "protected_switch": "agg1", "congesters": [], ` + tc.json + `}`
			_, err := sim.ReadScenario(strings.NewReader(js), sim.DefaultConfig())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	for _, ok := range []string{
		`"protected_kind": {"kind": "bulk"}`,
		`"protected_kind": {"kind": "rate", "rate_fraction": 0.4}`,
		`"protected_kind": {"kind": "onoff", "period": "4s", "duty": 0.25, "rate": "100Mbit/s", "from": "30s"}`,
		`"protected_kind": {"kind": "rr", "request_bytes": 65536, "request_rate": 100, "arrivals": "poisson", "slo": "20ms"}`,
	} {
		js := `{"name": "k", "protected_switch": "agg1", "congesters": [], ` + ok + `}`
		if _, err := sim.ReadScenario(strings.NewReader(js), sim.DefaultConfig()); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// kindSamples runs S1 with f_p of kind k on cfg for length and returns the
// flow sample (truth) of every interval.
func kindSamples(t *testing.T, cfg sim.Config, k sim.FlowKind, length time.Duration) []proflow.FlowSample {
	t.Helper()
	sc := mustScenario(t, "S1")
	sc.ProtectedKind = k
	var out []proflow.FlowSample
	for _, o := range observe(t, cfg, sc, 3, length) {
		out = append(out, o.Flow)
	}
	return out
}

// observe runs sc on cfg with seed for length and returns the validated
// observation (truth) of every interval.
func observe(t *testing.T, cfg sim.Config, sc *sim.Scenario, seed uint64, length time.Duration) []proflow.Observation {
	t.Helper()
	f, err := sim.New(cfg, sc, seed)
	if err != nil {
		t.Fatal(err)
	}
	var out []proflow.Observation
	var obs proflow.Observation
	for range int(length / cfg.Interval) {
		if err := f.Advance(cfg.Interval); err != nil {
			t.Fatal(err)
		}
		if !f.Truth(&obs) {
			t.Fatal("no sample")
		}
		if err := obs.Validate(f.Topology()); err != nil {
			t.Fatal(err)
		}
		out = append(out, *obs.Clone())
	}
	return out
}

func meanOver(s []proflow.FlowSample, from, to int, get func(proflow.FlowSample) float64) float64 {
	sum := 0.0
	for _, x := range s[from:to] {
		sum += get(x)
	}
	return sum / float64(to-from)
}

func throughput(s proflow.FlowSample) float64 { return s.Throughput }

func TestFlowKindRate(t *testing.T) {
	cfg := sim.DefaultConfig()
	k := sim.FlowKind{Kind: sim.KindRate, RateFraction: 0.4}
	s := kindSamples(t, cfg, k, 40*time.Second)
	want := k.DemandRate(cfg)
	if want != 0.4*cfg.BucketRate {
		t.Fatalf("demand %v, want 0.4 C", want)
	}
	if got := meanOver(s, 10, 40, throughput); got < 0.97*want || got > 1.001*want {
		t.Errorf("goodput alone %.0f B/s, want the rate %.0f", got, want)
	}
	// Collapsed after the reserve is gone (datacenter: ~15 s after 20 s).
	if got := meanOver(s, 76, 80, throughput); got > 0.5*want {
		t.Errorf("goodput at 38-40 s %.0f B/s, want the flow collapsed on the exhausted switch", got)
	}
}

func TestFlowKindOnOff(t *testing.T) {
	cfg := sim.TestbedConfig()
	k := sim.FlowKind{Kind: sim.KindOnOff, On: sim.Duration(4 * time.Second), Off: sim.Duration(6 * time.Second), From: sim.Duration(10 * time.Second)}
	sc := mustScenario(t, "S1")
	sc.Congesters = nil
	sc.ProtectedKind = k
	var on, off []float64
	for i, obs := range observe(t, cfg, sc, 3, 50*time.Second) {
		end := time.Duration(i+1) * cfg.Interval
		start := end - cfg.Interval
		switch {
		case k.Sending(start) && k.Sending(end-time.Nanosecond) && start >= 20*time.Second:
			on = append(on, obs.Flow.Throughput)
		case !k.Sending(start) && !k.Sending(end-time.Nanosecond) && start >= 12*time.Second:
			off = append(off, obs.Flow.Throughput)
		}
	}
	for _, v := range off {
		if v > 0.01*cfg.BucketRate {
			t.Errorf("throughput %.0f B/s in an idle gap, want about 0", v)
		}
	}
	if len(on) == 0 || len(off) == 0 {
		t.Fatalf("%d on and %d off samples", len(on), len(off))
	}
	// The window restarts after every gap (idle > RTO): a burst begins in
	// slow start, below the lone flow's rate.
	m := 0.0
	for _, v := range on {
		m += v
	}
	m /= float64(len(on))
	t.Logf("bursts: mean %.0f B/s over %d samples (%v); gaps: %d samples", m, len(on), on, len(off))
	if m < 0.1*cfg.BucketRate || m > 0.95*cfg.BucketRate {
		t.Errorf("mean goodput in bursts %.0f B/s, want between 10%% and 95%% of C", m)
	}
}

func TestFlowKindRR(t *testing.T) {
	cfg := sim.DefaultConfig()
	k := sim.FlowKind{Kind: sim.KindRR, RequestBytes: 64 << 10, RequestRate: 50}
	s := kindSamples(t, cfg, k, 60*time.Second)
	quiet := s[20:40] // 10-20 s: alone
	for i, x := range quiet {
		if x.Completions < 20 || x.Completions > 30 {
			t.Errorf("quiet sample %d: %v completions, want about 25 (50/s)", i, x.Completions)
		}
		if x.CompletionP99 < cfg.BaseRTT.Seconds()/2 || x.CompletionP99 > 0.015 {
			t.Errorf("quiet sample %d: completion p99 %.4f s, want a few ms", i, x.CompletionP99)
		}
		if x.SmoothedRTT < 0.9*cfg.BaseRTT.Seconds() || x.SmoothedRTT > 2*cfg.BaseRTT.Seconds() {
			t.Errorf("quiet sample %d: srtt %.4f s, want about the base RTT", i, x.SmoothedRTT)
		}
	}
	if got, want := meanOver(s, 20, 40, throughput), k.DemandRate(cfg); got < 0.9*want || got > 1.1*want {
		t.Errorf("goodput alone %.0f B/s, want the demand %.0f", got, want)
	}
	// Once the reserve is gone (~35 s) the uplink queue and the losses show
	// in the completion times.
	worst := 0.0
	for _, x := range s[80:] {
		worst = max(worst, x.CompletionP99)
	}
	t.Logf("quiet: completions %v, p99 %.4f s, srtt %.4f s; worst p99 after exhaustion %.3f s", quiet[5].Completions, quiet[5].CompletionP99, quiet[5].SmoothedRTT, worst)
	if slo := k.SLOFor(cfg).Seconds(); worst < 10*slo {
		t.Errorf("worst completion p99 after exhaustion %.3f s, want far above the SLO %.3f s", worst, slo)
	}
}

// TestFlowKindDeterministic: an rr flow with Poisson arrivals replays.
func TestFlowKindDeterministic(t *testing.T) {
	k := sim.FlowKind{Kind: sim.KindRR, RequestBytes: 20000, RequestRate: 200, Arrivals: sim.ArrivalsPoisson}
	a := kindSamples(t, sim.TestbedConfig(), k, 30*time.Second)
	b := kindSamples(t, sim.TestbedConfig(), k, 30*time.Second)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("sample %d: %+v then %+v", i, a[i], b[i])
		}
	}
}

// TestFlowKindRRLongAlone: an rr flow with no congestion keeps its
// completion times for as long as it runs. The cumulative byte counts that
// tell when a request's last byte arrived grow all episode; with a fixed
// rounding slack of a millionth of a byte, requests stopped completing on
// their own last byte after about 80 s of the testbed and waited for the
// next request's bytes, doubling the p99 with nothing on the fabric.
func TestFlowKindRRLongAlone(t *testing.T) {
	cfg := sim.TestbedConfig()
	k := sim.FlowKind{Kind: sim.KindRR, RequestBytes: 32 << 10, RequestRate: 100, Arrivals: sim.ArrivalsPoisson}
	sc := mustScenario(t, "S1")
	sc.ProtectedKind = k
	sc.Congesters = nil
	slo := k.SLOFor(cfg).Seconds()
	for i, obs := range observe(t, cfg, sc, 7, 200*time.Second) {
		if i < 10 {
			continue // the connection's start
		}
		if p := obs.Flow.CompletionP99; p > slo {
			t.Fatalf("sample %d (%.1f s), alone on the fabric: completion p99 %.4f s above the SLO %.4f s", i, float64(i+1)*cfg.Interval.Seconds(), p, slo)
		}
	}
}

// TestQueueBytes: the backlog of a switch's bucketed uplinks is empty while
// its reserve lasts and on idle switches, and builds on the protected
// flow's switch once S1's crowd has drained it.
func TestQueueBytes(t *testing.T) {
	cfg := sim.TestbedConfig()
	var early, late, idle float64
	for i, obs := range observe(t, cfg, mustScenario(t, "S1"), 3, 140*time.Second) {
		q := obs.Switches[0].QueueBytes
		switch at := time.Duration(i+1) * cfg.Interval; {
		case at < 30*time.Second:
			early = max(early, q)
		case at > 120*time.Second:
			late += q / 40
		}
		for _, s := range obs.Switches[1:] {
			idle = max(idle, s.QueueBytes)
		}
	}
	if early != 0 || idle != 0 {
		t.Errorf("backlog %v B on agg1 before its reserve ran out, %v B on the idle switches; want 0", early, idle)
	}
	if late < 0.5*cfg.BucketQueueLimit {
		t.Errorf("mean backlog on agg1 after exhaustion %.0f B, want above half the queue limit %.0f B", late, cfg.BucketQueueLimit)
	}
}

// TestAppLimited: the share of the interval the protected flow's
// application, not TCP, limited it: near 1 for a healthy rr flow and
// after its request rate falls with no congestion (T2), near 0 once S1's
// crowd starves it (R1), and 0 for a bulk transfer.
func TestAppLimited(t *testing.T) {
	cfg := sim.TestbedConfig()
	run := func(name string) []proflow.FlowSample {
		var out []proflow.FlowSample
		for _, o := range observe(t, cfg, mustScenario(t, name), 3, 140*time.Second) {
			out = append(out, o.Flow)
		}
		return out
	}
	app := func(s proflow.FlowSample) float64 { return s.AppLimited }
	r1, t2, s1 := run("R1"), run("T2"), run("S1")
	for _, c := range []struct {
		name   string
		got    float64
		lo, hi float64
	}{
		{"R1 alone (10–20 s)", meanOver(r1, 20, 40, app), 0.9, 1},
		{"R1 starved (100–140 s)", meanOver(r1, 200, 280, app), 0, 0.1},
		{"T2 after its request rate fell (60–140 s)", meanOver(t2, 120, 280, app), 0.8, 1},
		{"S1, bulk", meanOver(s1, 0, 280, app), 0, 0},
	} {
		if c.got < c.lo || c.got > c.hi {
			t.Errorf("%s: app-limited %.3f, want in [%v, %v]", c.name, c.got, c.lo, c.hi)
		}
	}
}
