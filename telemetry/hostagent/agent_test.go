package hostagent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry/hostagent"
)

var testFlow = proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"),
	Proto: proflow.ProtoTCP, SrcPort: 40000, DstPort: 5201}

// fakeClock is an injectable clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// scripted returns a ReadFunc that answers the given reads in order (a
// nil entry: no socket) and fails once they run out.
func scripted(reads ...*hostagent.TCPInfo) hostagent.ReadFunc {
	var mu sync.Mutex
	return func(_ context.Context, f proflow.FlowID) (hostagent.TCPInfo, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(reads) == 0 {
			return hostagent.TCPInfo{}, errors.New("script ran out")
		}
		r := reads[0]
		reads = reads[1:]
		if r == nil {
			return hostagent.TCPInfo{}, fmt.Errorf("%v: %w", f, hostagent.ErrNoSocket)
		}
		return *r, nil
	}
}

func info(srttMs float64, acked uint64) *hostagent.TCPInfo {
	return &hostagent.TCPInfo{State: "established", SRTT: srttMs / 1e3, BytesAcked: acked, CwndSegments: 10, Unacked: 4}
}

func newAgent(t *testing.T, cfg hostagent.Config) *hostagent.Agent {
	t.Helper()
	a, err := hostagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// The window's RTT summary: only polls that saw new data acknowledged
// count, the percentile is by nearest rank, old polls leave the window,
// and a vanished socket zeroes srtt.
func TestReportWindow(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	// 100 polls: srtt 1..100 ms, each acknowledging new data; then the
	// same srtt without new data (not a sample); then no socket.
	var reads []*hostagent.TCPInfo
	for i := 1; i <= 100; i++ {
		reads = append(reads, info(float64(i), uint64(i)*1000))
	}
	reads = append(reads, info(100, 100_000), nil)
	cfg := hostagent.DefaultConfig()
	cfg.Flow, cfg.Read, cfg.Now, cfg.Window = testFlow, scripted(reads...), clk.Now, time.Second
	a := newAgent(t, cfg)
	ctx := context.Background()
	for range 101 {
		if err := a.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Add(5 * time.Millisecond)
	}
	r := a.Report()
	// The first poll has nothing to compare with: 99 samples, 2..100 ms.
	if r.Polls != 101 || r.Samples != 99 || !r.Found {
		t.Fatalf("polls %d, samples %d, found %v; want 101, 99, true", r.Polls, r.Samples, r.Found)
	}
	// Nearest rank: p99 of 99 values is rank ceil(98.01) = 99, the
	// largest; the median is rank 50.
	if r.RTTP99 != 0.1 || r.RTTP50 != 0.051 || r.SmoothedRTT != 0.1 {
		t.Errorf("p99 %v, p50 %v, srtt %v; want 0.1, 0.051, 0.1", r.RTTP99, r.RTTP50, r.SmoothedRTT)
	}
	// At 1.1 s the polls of the first 100 ms (21, at 0..100 ms) have left
	// the 1 s window: 80 polls, 79 samples of 22..100 ms, median rank 40.
	clk.Add(595 * time.Millisecond)
	if r := a.Report(); r.Polls != 80 || r.Samples != 79 || r.RTTP50 != 0.061 {
		t.Errorf("at 1.1 s: polls %d, samples %d, p50 %v; want 80, 79, 0.061", r.Polls, r.Samples, r.RTTP50)
	}
	if err := a.Poll(ctx); err != nil { // no socket
		t.Fatal(err)
	}
	if r := a.Report(); r.Found || r.SmoothedRTT != 0 || r.Info != (hostagent.TCPInfo{}) {
		t.Errorf("socket gone: found %v, srtt %v, info %+v; want false, 0, zero", r.Found, r.SmoothedRTT, r.Info)
	}
	if err := a.Poll(ctx); err == nil || !strings.Contains(err.Error(), "script ran out") {
		t.Errorf("a failing read: %v, want its error", err)
	}
}

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{nil, 0.99, 0},
		{[]float64{3}, 0.99, 3},
		{[]float64{5, 1, 4, 2, 3}, 0.5, 3},
		{[]float64{5, 1, 4, 2, 3}, 0.99, 5},
		{[]float64{5, 1, 4, 2, 3}, 0.2, 1},
		{[]float64{1, 2}, 0, 0},
	} {
		if got := hostagent.Percentile(append([]float64(nil), tc.xs...), tc.q); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.xs, tc.q, got, tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	ok := hostagent.DefaultConfig()
	ok.Flow = testFlow
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults with a flow: %v", err)
	}
	udp := testFlow
	udp.Proto = proflow.ProtoUDP
	for _, tc := range []struct {
		name string
		edit func(*hostagent.Config)
		want string
	}{
		{"no flow", func(c *hostagent.Config) { c.Flow = proflow.FlowID{} }, "flow:"},
		{"udp", func(c *hostagent.Config) { c.Flow = udp }, "want tcp"},
		{"poll", func(c *hostagent.Config) { c.PollInterval = -time.Second }, "poll interval -1s"},
		{"window", func(c *hostagent.Config) { c.Window = 0 }, "window 0s"},
		{"window below poll", func(c *hostagent.Config) { c.Window = time.Millisecond }, "shorter than the poll interval"},
		{"too many polls", func(c *hostagent.Config) { c.PollInterval, c.Window = time.Nanosecond, time.Second }, "at most 100000"},
		{"timeout", func(c *hostagent.Config) { c.Timeout = 0 }, "read timeout 0s"},
		{"netns and read", func(c *hostagent.Config) {
			c.NetNS, c.Read = "/run/netns/x", scripted()
		}, `"/run/netns/x" is set with a custom Read`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v, want an error containing %q", err, tc.want)
			}
			if _, err := hostagent.New(c); err == nil && tc.name != "window" && tc.name != "timeout" {
				t.Errorf("New accepted the config")
			}
		})
	}
	if _, err := hostagent.New(hostagent.Config{Flow: testFlow, NetNS: "/nonexistent/netns"}); err == nil || !strings.Contains(err.Error(), "/nonexistent/netns") {
		t.Errorf("New with a missing namespace: %v, want an error naming it", err)
	}
}

// serve runs a's HTTP side on a loopback listener until the test ends.
func serve(t *testing.T, a *hostagent.Agent) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hostagent.Serve(ctx, ln, a) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url, auth string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// The HTTP side: the token, the paths, the JSON through the client and
// the metrics with their values.
func TestHTTP(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	reg := prometheus.NewRegistry()
	cfg := hostagent.DefaultConfig()
	cfg.Flow, cfg.Now, cfg.Token, cfg.Registerer, cfg.Gatherer = testFlow, clk.Now, "s3cret", reg, reg
	full := &hostagent.TCPInfo{State: "established", CongestionControl: "cubic", SRTT: 0.0123, RTTVar: 0.001, MinRTT: 0.01,
		RTO: 0.204, TotalRetrans: 7, Lost: 1, Unacked: 3, DeliveryRate: 1.25e6, CwndSegments: 20, SsthreshSegments: 15, SndWndBytes: 65536,
		RcvSpaceBytes: 14480, BytesAcked: 2000, SndMSS: 1448}
	cfg.Read = scripted(info(12, 1000), full)
	a := newAgent(t, cfg)
	for range 2 {
		if err := a.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(10 * time.Millisecond)
	}
	base := serve(t, a)
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{"/v1/flow", "", http.StatusUnauthorized},
		{"/v1/flow", "Bearer nope", http.StatusUnauthorized},
		{"/v1/flow", "Basic s3cret", http.StatusUnauthorized},
		{"/v1/flow", "bearer s3cret", http.StatusOK},
		{"/v1/other", "Bearer s3cret", http.StatusNotFound},
		{"/metrics", "Bearer s3cret", http.StatusOK},
	} {
		if code, body, h := get(t, base+tc.path, tc.auth); code != tc.want {
			t.Errorf("GET %s with %q: %d %s, want %d", tc.path, tc.auth, code, body, tc.want)
		} else if code == http.StatusUnauthorized && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without a Bearer challenge: %q", h.Get("WWW-Authenticate"))
		}
	}
	resp, err := http.Post(base+"/v1/flow", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST without a token: %d, want 401 before the method is looked at", resp.StatusCode)
	}

	c, err := hostagent.NewClient(hostagent.ClientConfig{Agent: base, Flow: testFlow, Token: "s3cret", Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := hostagent.Report{Time: clk.Now().UTC(), Flow: testFlow, Window: 0.5, Found: true, Info: *full, Polls: 2, Samples: 1,
		SmoothedRTT: 0.0123, RTTP99: 0.0123, RTTP50: 0.0123}
	rep.Time = rep.Time.UTC()
	if d := cmp.Diff(want, rep, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); d != "" {
		t.Errorf("report through the client (-want +got):\n%s", d)
	}

	code, body, _ := get(t, base+"/metrics", "Bearer s3cret")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not the text format: %v\n%s", err, body)
	}
	for name, v := range map[string]float64{
		hostagent.MetricSRTT: 0.0123, hostagent.MetricRTTVar: 0.001, hostagent.MetricMinRTT: 0.01, hostagent.MetricTotalRetrans: 7,
		hostagent.MetricLost: 1, hostagent.MetricDeliveryRate: 1.25e6, hostagent.MetricCwnd: 20, hostagent.MetricSsthresh: 15,
		hostagent.MetricSndWnd: 65536, hostagent.MetricRcvSpace: 14480, hostagent.MetricWindowRTTP99: 0.0123,
		hostagent.MetricFound: 1, hostagent.MetricInfo: 1,
		"proflow_hostagent_polls_total": 2, // summed over its results
	} {
		mf, ok := fams[name]
		if !ok {
			t.Errorf("/metrics has no %s", name)
			continue
		}
		got := 0.0
		for _, m := range mf.GetMetric() {
			got += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
		if got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	if m := fams[hostagent.MetricInfo].GetMetric()[0]; !strings.Contains(m.String(), `value:"cubic"`) || !strings.Contains(m.String(), `value:"40000"`) {
		t.Errorf("%s labels %v, want congestion_control cubic and sport 40000", hostagent.MetricInfo, m.GetLabel())
	}
}

func TestClientErrors(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	cfg := hostagent.DefaultConfig()
	cfg.Flow, cfg.Now = testFlow, clk.Now
	cfg.Read = scripted(info(12, 1000), info(14, 2000))
	a := newAgent(t, cfg)
	for range 2 {
		if err := a.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	base := serve(t, a)
	other := testFlow
	other.SrcPort = 40001
	for _, tc := range []struct {
		name string
		cfg  hostagent.ClientConfig
		want string
	}{
		{"bad url", hostagent.ClientConfig{Agent: "ftp://x", Flow: testFlow}, `agent "ftp://x", want an http(s) URL`},
		{"bad flow", hostagent.ClientConfig{Agent: base}, "flow:"},
	} {
		if _, err := hostagent.NewClient(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	c, _ := hostagent.NewClient(hostagent.ClientConfig{Agent: base, Flow: other, Now: clk.Now})
	if _, err := c.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "want tcp 10.0.0.1:40001") {
		t.Errorf("another flow's report: %v, want an error naming both", err)
	}
	late := func() time.Time { return clk.Now().Add(time.Minute) }
	c, _ = hostagent.NewClient(hostagent.ClientConfig{Agent: base, Flow: testFlow, Now: late})
	if _, err := c.Fetch(context.Background()); !errors.Is(err, proflow.ErrStale) {
		t.Errorf("a report a minute old: %v, want proflow.ErrStale", err)
	}

	// Overlay writes the flow's sample, single or among several.
	c, _ = hostagent.NewClient(hostagent.ClientConfig{Agent: base, Flow: testFlow, Now: clk.Now})
	obs := &proflow.Observation{Flow: proflow.FlowSample{Throughput: 1e6, CompletionP99: 0.02}}
	if err := c.Overlay(context.Background(), obs); err != nil {
		t.Fatal(err)
	}
	if want := (proflow.FlowSample{Throughput: 1e6, CompletionP99: 0.02, SmoothedRTT: 0.014, RTTP99: 0.014}); obs.Flow != want {
		t.Errorf("overlay: %+v, want %+v", obs.Flow, want)
	}
	obs = &proflow.Observation{FlowIDs: []proflow.FlowID{other, testFlow}, Flows: make([]proflow.FlowSample, 2)}
	if err := c.Overlay(context.Background(), obs); err != nil {
		t.Fatal(err)
	}
	if obs.Flows[1].SmoothedRTT != 0.014 || obs.Flows[0].SmoothedRTT != 0 || obs.Flow.SmoothedRTT != 0 {
		t.Errorf("overlay of flow 1 of 2: %+v, %+v", obs.Flows, obs.Flow)
	}
	obs = &proflow.Observation{FlowIDs: []proflow.FlowID{other}, Flows: make([]proflow.FlowSample, 1)}
	if err := c.Overlay(context.Background(), obs); err == nil || !strings.Contains(err.Error(), "without tcp 10.0.0.1:40000") {
		t.Errorf("overlay of a flow not listed: %v", err)
	}
	if _, err := hostagent.Wrap(nil, nil); err == nil {
		t.Error("Wrap(nil, nil) succeeded")
	}
	// Wrap: the other telemetry's sample, then the agent's RTTs in it.
	tel, err := hostagent.Wrap(proflow.TelemetryFunc(func(_ context.Context, o *proflow.Observation) error {
		o.Flow = proflow.FlowSample{Throughput: 2e6, SmoothedRTT: 9}
		return nil
	}), c)
	if err != nil {
		t.Fatal(err)
	}
	obs = &proflow.Observation{}
	if err := tel.Collect(context.Background(), obs); err != nil {
		t.Fatal(err)
	}
	if want := (proflow.FlowSample{Throughput: 2e6, SmoothedRTT: 0.014, RTTP99: 0.014}); obs.Flow != want {
		t.Errorf("wrapped: %+v, want %+v", obs.Flow, want)
	}
}

func TestDecodeReport(t *testing.T) {
	good := `{"time":"2026-01-01T00:00:00Z","flow":"tcp 10.0.0.1:40000->10.0.0.8:5201","window":0.5,"found":true,` +
		`"info":{"state":"established","srtt":0.01,"rttvar":0,"min_rtt":0,"rto":0.2,"retransmits":0,"total_retrans":0,"lost":0,"unacked":0,` +
		`"delivery_rate":0,"pacing_rate":0,"cwnd":10,"ssthresh":0,"snd_mss":1448,"snd_wnd":0,"rcv_space":0,"bytes_acked":0,"bytes_retrans":0},` +
		`"polls":3,"samples":2,"srtt":0.01,"rtt_p99":0.012,"rtt_p50":0.01}`
	if r, err := hostagent.DecodeReport([]byte(good)); err != nil || r.RTTP99 != 0.012 || r.Flow != testFlow {
		t.Fatalf("good report: %+v, %v", r, err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not json", "nope", "malformed report"},
		{"unknown field", strings.Replace(good, `"polls"`, `"pols"`, 1), "unknown field"},
		{"trailing", good + "{}", "data after"},
		{"no time", strings.Replace(good, `"time":"2026-01-01T00:00:00Z",`, "", 1), "no time"},
		{"no flow", strings.Replace(good, `"flow":"tcp 10.0.0.1:40000->10.0.0.8:5201",`, "", 1), "no flow"},
		{"bad flow", strings.Replace(good, "10.0.0.8:5201", "ten", 1), "destination"},
		{"negative p99", strings.Replace(good, `"rtt_p99":0.012`, `"rtt_p99":-1`, 1), "rtt_p99 = -1"},
		{"huge srtt", strings.Replace(good, `"srtt":0.01,"rtt_p99"`, `"srtt":1e9,"rtt_p99"`, 1), "srtt = 1e+09"},
		{"samples above polls", strings.Replace(good, `"samples":2`, `"samples":4`, 1), "4 samples of 3 polls"},
		{"app-limited above 1", strings.Replace(good, `"rtt_p50":0.01}`, `"rtt_p50":0.01,"app_limited":1.5}`, 1), "app_limited = 1.5"},
	} {
		if _, err := hostagent.DecodeReport([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func FuzzDecodeReport(f *testing.F) {
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","flow":"tcp 10.0.0.1:1->10.0.0.2:2","window":0.5,"polls":1,"samples":1,"srtt":0.01,"rtt_p99":0.01}`))
	f.Add([]byte(`{"time":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := hostagent.DecodeReport(b)
		if err != nil {
			return
		}
		if !(r.RTTP99 >= 0) || !(r.SmoothedRTT >= 0) || r.Samples > r.Polls || r.Time.IsZero() {
			t.Errorf("accepted a report it should refuse: %+v", r)
		}
	})
}

// The netlink reader on a real loopback connection of this process (no
// root needed: inet_diag shows everyone's sockets in the namespace).
func TestNetlinkLoopback(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = io.Copy(io.Discard, c)
			accepted <- c
		}
		close(accepted)
	}()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Close()
		if s, ok := <-accepted; ok {
			s.Close()
		}
	}()
	if _, err := c.Write(make([]byte, 256<<10)); err != nil {
		t.Fatal(err)
	}
	local, remote := c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort()
	flow := proflow.FlowID{Src: local.Addr(), Dst: remote.Addr(), SrcPort: local.Port(), DstPort: remote.Port(), Proto: proflow.ProtoTCP}
	cfg := hostagent.DefaultConfig()
	cfg.Flow = flow
	a := newAgent(t, cfg)
	ctx := context.Background()
	// Data keeps being acknowledged between the polls.
	for range 3 {
		if err := a.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(make([]byte, 64<<10)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := a.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	r := a.Report()
	if !r.Found || r.Info.State != "established" {
		t.Fatalf("report of %v: found %v, state %q; want the established socket", flow, r.Found, r.Info.State)
	}
	if !(r.SmoothedRTT > 0 && r.SmoothedRTT < 0.1) || r.Info.BytesAcked < 256<<10 || r.Info.CwndSegments == 0 || r.Info.SndMSS == 0 {
		t.Errorf("loopback socket: srtt %v s, acked %d, cwnd %d, mss %d; want 0 < srtt < 100 ms, ≥ 256 KiB acked, a window and an MSS",
			r.SmoothedRTT, r.Info.BytesAcked, r.Info.CwndSegments, r.Info.SndMSS)
	}
	if r.Samples < 1 || r.RTTP99 < r.RTTP50 || r.RTTP50 <= 0 {
		t.Errorf("window: %d samples, p50 %v, p99 %v; want samples and 0 < p50 ≤ p99", r.Samples, r.RTTP50, r.RTTP99)
	}
	want, err := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
	if err != nil {
		t.Fatal(err)
	}
	if cc := strings.TrimSpace(string(want)); r.Info.CongestionControl != cc {
		t.Errorf("congestion control %q, want the kernel default %q (INET_DIAG_CONG)", r.Info.CongestionControl, cc)
	}
	// The reverse direction is another socket; a port nobody uses is none.
	none := flow
	none.DstPort = 1
	cfg.Flow = none
	b := newAgent(t, cfg)
	if err := b.Poll(ctx); err != nil {
		t.Fatalf("no such socket: %v, want no error", err)
	}
	if r := b.Report(); r.Found {
		t.Errorf("found a socket of %v", none)
	}
}

func TestServeHTTPWithoutServe(t *testing.T) {
	cfg := hostagent.DefaultConfig()
	cfg.Flow, cfg.Read = testFlow, scripted(nil)
	a := newAgent(t, cfg)
	_ = a.Poll(context.Background())
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/flow", nil))
	r, err := hostagent.DecodeReport(rec.Body.Bytes())
	if err != nil || r.Found || r.SmoothedRTT != 0 {
		t.Errorf("report of a missing socket: %+v, %v; want found false, srtt 0", r, err)
	}
	rec = httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodDelete, "/v1/flow", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("DELETE: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

// TestAppLimitedShare: the share of the window's polls at which the
// sender was application-limited (its delivery-rate sample marked so, or
// nothing in flight), and 0 before any poll found the socket.
func TestAppLimitedShare(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	cfg := hostagent.DefaultConfig()
	cfg.Flow, cfg.Now = testFlow, clk.Now
	limited := info(12, 2000)
	limited.DeliveryRateAppLimited = true
	idle := info(12, 3000)
	idle.Unacked = 0
	cfg.Read = scripted(info(12, 1000), limited, idle, info(12, 4000))
	a := newAgent(t, cfg)
	if r := a.Report(); r.AppLimited != 0 {
		t.Errorf("before any poll: app-limited %v, want 0", r.AppLimited)
	}
	for range 4 {
		if err := a.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(10 * time.Millisecond)
	}
	if r := a.Report(); r.AppLimited != 0.5 {
		t.Errorf("two of four polls application-limited: share %v, want 0.5", r.AppLimited)
	}
}
