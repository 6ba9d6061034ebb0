package tcstat_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/internal/syncbuf"
	"github.com/proflow-sdn/proflow/internal/testpki"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

func TestAgentRefusesUnknownInterfaceAtStart(t *testing.T) {
	c := &counters{q: map[string]tcstat.Qdisc{"a1": {Kind: "tbf"}}, t: time.Unix(1, 0)}
	_, err := tcstat.NewAgent(context.Background(), tcstat.AgentConfig{Interfaces: []string{"a1", "gone"}, Read: c.read})
	if err == nil || !strings.Contains(err.Error(), `"gone"`) {
		t.Fatalf("NewAgent with a missing interface: %v, want an error naming it", err)
	}
	if strings.Count(err.Error(), "tcstat:") != 1 {
		t.Errorf("error %q repeats its prefix, want one \"tcstat:\"", err)
	}
	_, err = tcstat.NewAgent(context.Background(), tcstat.AgentConfig{})
	if err == nil || err.Error() != "tcstat: agent: no interfaces, want at least one" {
		t.Errorf("NewAgent without interfaces: %v", err)
	}
}

func TestAgentErrorNotLeaked(t *testing.T) {
	c := &counters{q: map[string]tcstat.Qdisc{"a1": {Kind: "tbf"}}, t: time.Unix(1, 0)}
	var logs syncbuf.Buffer
	srv := newAgentServerWith(t, tcstat.AgentConfig{Interfaces: []string{"a1"}, Read: c.read, Now: c.now, CacheFor: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	c.mu.Lock()
	c.err = errors.New("fork/exec /nonexistent: no such file or directory")
	c.mu.Unlock()
	for _, path := range []string{"/v1/qdisc", "/metrics"} {
		code, body := get(t, srv.URL+path, "")
		if code != http.StatusInternalServerError {
			t.Errorf("GET %s with a failing read: %d, want 500", path, code)
		}
		if strings.Contains(body, "nonexistent") || strings.Contains(body, "fork/exec") {
			t.Errorf("GET %s leaks the internal error to the client: %q", path, body)
		}
	}
	if !strings.Contains(logs.String(), "fork/exec /nonexistent") {
		t.Errorf("the internal error is not logged; log:\n%s", logs.String())
	}
}

func TestAgentAuth(t *testing.T) {
	c := &counters{q: map[string]tcstat.Qdisc{"a1": {Kind: "tbf", Overlimits: 5}}, t: time.Unix(1, 0)}
	const token = "s3cret-token"
	srv := newAgentServerWith(t, tcstat.AgentConfig{Interfaces: []string{"a1"}, Read: c.read, Now: c.now, Token: token})
	for _, path := range []string{"/v1/qdisc", "/metrics"} {
		for _, tc := range []struct {
			name, header string
			want         int
		}{
			{"no token", "", http.StatusUnauthorized},
			{"wrong token", "Bearer nope", http.StatusUnauthorized},
			{"token prefix", "Bearer s3cret", http.StatusUnauthorized},
			{"token as basic", "Basic " + token, http.StatusUnauthorized},
			{"right token", "Bearer " + token, http.StatusOK},
		} {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s %s: %d, want %d", path, tc.name, resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s: WWW-Authenticate %q, want a Bearer challenge", path, tc.name, resp.Header.Get("WWW-Authenticate"))
			}
		}
	}
	// A client with the token reads; one without is refused with 401.
	for _, tok := range []string{token, ""} {
		cl, err := tcstat.NewClient(tcstat.ClientConfig{Topology: twoSwitches(), Token: tok, Now: c.now,
			Switches: []tcstat.Source{{Agent: srv.URL, Interfaces: []string{"a1"}}, {Agent: srv.URL, Interfaces: []string{"a1"}}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Fetch(context.Background(), srv.URL)
		if tok != "" && err != nil {
			t.Errorf("Fetch with the token: %v", err)
		}
		if tok == "" && (err == nil || !strings.Contains(err.Error(), "401")) {
			t.Errorf("Fetch without the token: %v, want HTTP 401", err)
		}
	}
}

func TestAgentTLS(t *testing.T) {
	ca := testpki.New(t, "tcstat test CA")
	dir := t.TempDir()
	keyFile, certFile, caFile := ca.WritePEM(t, dir, "agent", ca.Server(t, "agent"))
	cfg, err := tcstat.ServerTLSConfig(certFile, keyFile, caFile)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Errorf("ClientAuth %v with a client CA, want RequireAndVerifyClientCert", cfg.ClientAuth)
	}
	c := &counters{q: map[string]tcstat.Qdisc{"a1": {Kind: "tbf", Overlimits: 3}}, t: time.Unix(1, 0)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, tls.NewListener(ln, cfg), newAgent(t, tcstat.AgentConfig{Interfaces: []string{"a1"}, Read: c.read, Now: c.now}))
	url := "https://" + ln.Addr().String() + "/v1/qdisc"
	fetch := func(tc *tls.Config) (int, error) {
		tr := &http.Transport{TLSClientConfig: tc}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(url)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	clientCert := ca.Client(t, "controller")
	if code, err := fetch(&tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{clientCert}}); err != nil || code != 200 {
		t.Errorf("HTTPS with a client certificate: %d, %v; want 200", code, err)
	}
	if _, err := fetch(&tls.Config{RootCAs: ca.Pool}); err == nil {
		t.Error("HTTPS without a client certificate succeeded, want the handshake refused")
	}
	other := testpki.New(t, "another CA")
	if _, err := fetch(&tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{other.Client(t, "intruder")}}); err == nil {
		t.Error("HTTPS with a certificate from another CA succeeded, want the handshake refused")
	}
	if _, err := fetch(&tls.Config{}); err == nil {
		t.Error("HTTPS trusting the system roots succeeded, want the agent's certificate refused")
	}

	// Without a client CA any client connects; broken files are errors
	// naming them.
	if cfg, err := tcstat.ServerTLSConfig(certFile, keyFile, ""); err != nil || cfg.ClientAuth != tls.NoClientCert {
		t.Errorf("ServerTLSConfig without a client CA: %v, %v; want no client certificates asked", cfg, err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][3]string{
		"missing key":  {certFile, filepath.Join(dir, "none.key"), ""},
		"CA not PEM":   {certFile, keyFile, notPEM},
		"missing CA":   {certFile, keyFile, filepath.Join(dir, "none.pem")},
		"key for cert": {keyFile, keyFile, ""},
	} {
		if _, err := tcstat.ServerTLSConfig(args[0], args[1], args[2]); err == nil {
			t.Errorf("ServerTLSConfig with %s: no error", name)
		}
	}
}

func TestAgentSharesOneReadPerInterval(t *testing.T) {
	c := &counters{q: map[string]tcstat.Qdisc{"a1": {Kind: "tbf"}}, t: time.Unix(1, 0)}
	srv := newAgentServer(t, c, "a1") // default cache: 100 ms
	start := c.readCount()            // NewAgent's first read, which requests share
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(srv.URL + "/v1/qdisc")
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if n := c.readCount() - start; n != 0 {
		t.Errorf("8 requests within the cache interval made %d reads, want 0 (the start's read reused)", n)
	}
	c.advance(100 * time.Millisecond)
	get(t, srv.URL+"/metrics", "")
	get(t, srv.URL+"/v1/qdisc", "")
	if n := c.readCount() - start; n != 1 {
		t.Errorf("2 requests after the interval made %d reads, want 1", n)
	}

	// A negative CacheFor reads for every request.
	c2 := &counters{q: map[string]tcstat.Qdisc{"a1": {Kind: "tbf"}}, t: time.Unix(1, 0)}
	srv2 := newAgentServerWith(t, tcstat.AgentConfig{Interfaces: []string{"a1"}, Read: c2.read, Now: c2.now, CacheFor: -1})
	get(t, srv2.URL+"/v1/qdisc", "")
	get(t, srv2.URL+"/v1/qdisc", "")
	if n := c2.readCount(); n != 3 {
		t.Errorf("start and 2 requests without a cache made %d reads, want 3", n)
	}
}

func TestAgentMetrics(t *testing.T) {
	c := &counters{q: map[string]tcstat.Qdisc{
		"a1": {Kind: "tbf", Bytes: 3000, Packets: 2, Drops: 1, Overlimits: 7, BacklogBytes: 1500, BacklogPackets: 1},
	}, t: time.Unix(1700000000, 500_000_000)}
	reg := prometheus.NewPedanticRegistry()
	srv := newAgentServerWith(t, tcstat.AgentConfig{Interfaces: []string{"a1"}, Read: c.read, Now: c.now, Registerer: reg, Gatherer: reg})

	// Every known label value is there from the start, at zero.
	initial := requestsText(0) + `
# HELP proflow_tcstat_polls_total Reads of the qdisc counters, by result (ok, error, joined: a recent read was reused).
# TYPE proflow_tcstat_polls_total counter
proflow_tcstat_polls_total{result="error"} 0
proflow_tcstat_polls_total{result="joined"} 0
proflow_tcstat_polls_total{result="ok"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(initial), "proflow_tcstat_http_requests_total", "proflow_tcstat_polls_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "proflow_tcstat_poll_duration_seconds"); err != nil || n != 1 {
		t.Errorf("poll duration series = %d, %v; want 1", n, err)
	}

	code, body := get(t, srv.URL+"/metrics", "")
	if code != 200 {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	const qdisc = `
# HELP node_qdisc_backlog Number of bytes currently in queue to be sent.
# TYPE node_qdisc_backlog gauge
node_qdisc_backlog{device="a1",kind="tbf"} 1500
# HELP node_qdisc_bytes_total Number of bytes sent.
# TYPE node_qdisc_bytes_total counter
node_qdisc_bytes_total{device="a1",kind="tbf"} 3000
# HELP node_qdisc_current_queue_length Number of packets currently in queue to be sent.
# TYPE node_qdisc_current_queue_length gauge
node_qdisc_current_queue_length{device="a1",kind="tbf"} 1
# HELP node_qdisc_drops_total Number of packets dropped.
# TYPE node_qdisc_drops_total counter
node_qdisc_drops_total{device="a1",kind="tbf"} 1
# HELP node_qdisc_overlimits_total Number of overlimit events (for tbf: a send found too few tokens).
# TYPE node_qdisc_overlimits_total counter
node_qdisc_overlimits_total{device="a1",kind="tbf"} 7
# HELP node_qdisc_packets_total Number of packets sent.
# TYPE node_qdisc_packets_total counter
node_qdisc_packets_total{device="a1",kind="tbf"} 2
# HELP proflow_tcstat_read_timestamp_seconds Unix time of the qdisc read the node_qdisc_* values come from.
# TYPE proflow_tcstat_read_timestamp_seconds gauge
proflow_tcstat_read_timestamp_seconds 1.7000000005e+09
`
	names := []string{"node_qdisc_backlog", "node_qdisc_bytes_total", "node_qdisc_current_queue_length", "node_qdisc_drops_total",
		"node_qdisc_overlimits_total", "node_qdisc_packets_total", "proflow_tcstat_read_timestamp_seconds"}
	if err := testutil.ScrapeAndCompare(srv.URL+"/metrics", strings.NewReader(qdisc), names...); err != nil {
		t.Error(err)
	}
	if !strings.Contains(body, `proflow_tcstat_polls_total{result="joined"} 1`) {
		t.Errorf("/metrics does not serve the Gatherer's series (one joined poll):\n%s", body)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(requestsText(2)), "proflow_tcstat_http_requests_total"); err != nil {
		t.Errorf("after two GETs: %v", err)
	}

	// A second agent on the same registry collides and leaves nothing
	// registered behind it.
	if _, err := tcstat.NewAgent(context.Background(), tcstat.AgentConfig{Interfaces: []string{"a1"}, Read: c.read, Registerer: reg}); err == nil {
		t.Error("second agent on one registry: no error, want a registration error")
	}
	// An agent whose first read fails leaves nothing registered.
	reg2 := prometheus.NewRegistry()
	if _, err := tcstat.NewAgent(context.Background(), tcstat.AgentConfig{Interfaces: []string{"zz"}, Read: c.read, Registerer: reg2}); err == nil {
		t.Fatal("agent on a missing interface: no error")
	}
	if n, err := testutil.GatherAndCount(reg2); err != nil || n != 0 {
		t.Errorf("series left by a failed NewAgent = %d, %v; want 0", n, err)
	}
}

// requestsText is the exposition of proflow_tcstat_http_requests_total
// after ok answers with 200 and no others.
func requestsText(ok int) string {
	return fmt.Sprintf(`
# HELP proflow_tcstat_http_requests_total HTTP requests answered, by status code (401: missing or wrong bearer token).
# TYPE proflow_tcstat_http_requests_total counter
proflow_tcstat_http_requests_total{code="200"} %d
proflow_tcstat_http_requests_total{code="401"} 0
proflow_tcstat_http_requests_total{code="404"} 0
proflow_tcstat_http_requests_total{code="405"} 0
proflow_tcstat_http_requests_total{code="500"} 0
`, ok)
}

// TestClientPrometheusFormat reads the same counters as JSON and as
// Prometheus text, from the agent and from a node_exporter-like endpoint
// without read times.
func TestClientPrometheusFormat(t *testing.T) {
	c := &counters{q: map[string]tcstat.Qdisc{}, t: time.Unix(100, 0)}
	c.set("a1-l1", tcstat.Qdisc{Kind: "tbf"})
	c.set("a2-l1", tcstat.Qdisc{Kind: "tbf"})
	agent := newAgentServer(t, c, "a1-l1", "a2-l1")
	var mu sync.Mutex
	nodeExporter := 0
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprintf(w, "# TYPE node_qdisc_overlimits_total counter\n"+
			"node_qdisc_overlimits_total{device=\"a1-l1\",kind=\"tbf\"} %d\n"+
			"node_qdisc_overlimits_total{device=\"a2-l1\",kind=\"fq_codel\"} 0\n"+
			"node_qdisc_overlimits_total{device=\"lo\",kind=\"noqueue\"} 0\n", nodeExporter)
	}))
	t.Cleanup(node.Close)

	topo := twoSwitches()
	newClient := func(url string, f tcstat.Format) *tcstat.Client {
		cl, err := tcstat.NewClient(tcstat.ClientConfig{Topology: topo, Format: f, Now: c.now, Switches: []tcstat.Source{
			{Agent: url, Interfaces: []string{"a1-l1"}}, {Agent: url, Interfaces: []string{"a2-l1"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	clients := map[string]*tcstat.Client{
		"json":          newClient(agent.URL, tcstat.FormatJSON),
		"prometheus":    newClient(agent.URL, tcstat.FormatPrometheus),
		"node_exporter": newClient(node.URL, tcstat.FormatPrometheus),
	}
	obs := map[string]*proflow.Observation{}
	for name, cl := range clients {
		obs[name] = &proflow.Observation{}
		obs[name].Resize(topo)
		if err := cl.Overlay(context.Background(), obs[name]); !errors.Is(err, proflow.ErrStale) {
			t.Fatalf("%s: first Overlay: %v, want ErrStale", name, err)
		}
	}
	c.set("a1-l1", tcstat.Qdisc{Kind: "tbf", Overlimits: 300})
	mu.Lock()
	nodeExporter = 300
	mu.Unlock()
	c.advance(2 * time.Second)
	for name, cl := range clients {
		if err := cl.Overlay(context.Background(), obs[name]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := obs[name].Switches[0].OverflowRate; got != 150 {
			t.Errorf("%s: agg1 overflow %v events/s, want 150", name, got)
		}
	}
	if _, err := tcstat.NewClient(tcstat.ClientConfig{Topology: topo, Format: "xml",
		Switches: []tcstat.Source{{Agent: agent.URL, Interfaces: []string{"a1-l1"}}, {Agent: agent.URL, Interfaces: []string{"a2-l1"}}}}); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("NewClient with format xml: %v, want an error naming it", err)
	}
}

func TestDecodeMetrics(t *testing.T) {
	r, err := tcstat.DecodeMetrics([]byte(`# TYPE node_qdisc_bytes_total counter
node_qdisc_bytes_total{device="eth0",kind="tbf"} 1e+06
node_qdisc_bytes_total{device="eth1",kind="fq"} 5
node_qdisc_overlimits_total{device="eth0",kind="tbf"} 4.294967295e+09
node_qdisc_backlog{device="eth0",kind="tbf"} 0
proflow_tcstat_read_timestamp_seconds 1.5e+09
some_other_metric 3
`))
	if err != nil {
		t.Fatal(err)
	}
	want := tcstat.Report{Time: time.Unix(1_500_000_000, 0).UTC(),
		Interfaces: map[string]tcstat.Qdisc{"eth0": {Kind: "tbf", Bytes: 1e6, Overlimits: 1<<32 - 1}}}
	if !r.Time.Equal(want.Time) || len(r.Interfaces) != 1 || r.Interfaces["eth0"] != want.Interfaces["eth0"] {
		t.Errorf("DecodeMetrics = %+v, want %+v (eth1 has no overlimits series)", r, want)
	}
	for name, in := range map[string]string{
		"not text":    "<html>",
		"no device":   `node_qdisc_overlimits_total{kind="tbf"} 1`,
		"two kinds":   "node_qdisc_overlimits_total{device=\"e\",kind=\"tbf\"} 1\nnode_qdisc_bytes_total{device=\"e\",kind=\"fq\"} 1",
		"negative":    `node_qdisc_overlimits_total{device="e",kind="tbf"} -1`,
		"fraction":    `node_qdisc_overlimits_total{device="e",kind="tbf"} 1.5`,
		"NaN":         `node_qdisc_overlimits_total{device="e",kind="tbf"} NaN`,
		"infinite":    `node_qdisc_overlimits_total{device="e",kind="tbf"} +Inf`,
		"bad time":    `proflow_tcstat_read_timestamp_seconds -3`,
		"two times":   "proflow_tcstat_read_timestamp_seconds{a=\"1\"} 3\nproflow_tcstat_read_timestamp_seconds{a=\"2\"} 4",
		"dup sample":  "node_qdisc_overlimits_total{device=\"e\",kind=\"tbf\"} 1\nnode_qdisc_overlimits_total{device=\"e\",kind=\"tbf\"} 2",
		"type clash":  "# TYPE node_qdisc_overlimits_total counter\n# TYPE node_qdisc_overlimits_total gauge\n",
		"label no eq": `node_qdisc_overlimits_total{device} 1`,
	} {
		if r, err := tcstat.DecodeMetrics([]byte(in)); err == nil {
			t.Errorf("%s: DecodeMetrics = %+v, want an error", name, r)
		}
	}
}

func FuzzDecodeMetrics(f *testing.F) {
	f.Add([]byte("node_qdisc_overlimits_total{device=\"a1\",kind=\"tbf\"} 3\nproflow_tcstat_read_timestamp_seconds 1.7e9\n"))
	f.Add([]byte("# HELP node_qdisc_bytes_total x\n# TYPE node_qdisc_bytes_total counter\nnode_qdisc_bytes_total{device=\"a\",kind=\"fq\"} 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := tcstat.DecodeMetrics(b)
		if err != nil {
			return
		}
		for dev, q := range r.Interfaces {
			if dev == "" || q.Kind == "" {
				t.Fatalf("accepted device %q qdisc %+v", dev, q)
			}
		}
	})
}
