package tcstat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ telemetry.Overlay = (*tcstat.Client)(nil)

// Captured from iproute2 6.1 on Debian 12.
const tbfOutput = `[{"kind":"tbf","handle":"8001:","root":true,"refcnt":3,"options":{"rate":2500000,"burst":32767,"lat":50000},"bytes":123456,"packets":100,"drops":2,"overlimits":37,"requeues":0,"backlog":3000,"qlen":2}]`

func TestParseTC(t *testing.T) {
	q, err := tcstat.ParseTC([]byte(tbfOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := tcstat.Qdisc{Kind: "tbf", Handle: "8001:", Bytes: 123456, Packets: 100, Drops: 2, Overlimits: 37, BacklogBytes: 3000, BacklogPackets: 2}
	if q != want {
		t.Errorf("got %+v, want %+v", q, want)
	}
	// A child qdisc first, the root second.
	two := `[{"kind":"pfifo","handle":"10:","parent":"1:1","bytes":1,"packets":1,"drops":0,"overlimits":0,"backlog":0,"qlen":0},` + tbfOutput[1:]
	if q, err := tcstat.ParseTC([]byte(two)); err != nil || q.Kind != "tbf" {
		t.Errorf("root after a child: %+v, %v", q, err)
	}
	for name, in := range map[string]string{
		"empty":            ``,
		"not json":         `Cannot find device "x"`,
		"no root":          `[{"kind":"tbf","handle":"1:","bytes":1,"packets":1,"drops":0,"overlimits":0}]`,
		"missing counter":  `[{"kind":"tbf","root":true,"bytes":1,"packets":1,"drops":0}]`,
		"negative counter": `[{"kind":"tbf","root":true,"bytes":-1,"packets":1,"drops":0,"overlimits":0}]`,
		"fraction":         `[{"kind":"tbf","root":true,"bytes":1.5,"packets":1,"drops":0,"overlimits":0}]`,
		"no kind":          `[{"root":true,"bytes":1,"packets":1,"drops":0,"overlimits":0}]`,
		"object":           `{"kind":"tbf"}`,
	} {
		if _, err := tcstat.ParseTC([]byte(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A counter keeps every digit up to 2^64-1, past float64's 2^53, and one
// of 2^64 or more is refused.
func TestParseTCCounterRange(t *testing.T) {
	root := func(bytes string) string {
		return `[{"kind":"tbf","root":true,"bytes":` + bytes + `,"packets":1,"drops":0,"overlimits":0,"backlog":0,"qlen":0}]`
	}
	for in, want := range map[string]uint64{"18446744073709551615": 1<<64 - 1, "9007199254740993": 1<<53 + 1, "1e3": 1000, "5.0": 5} {
		if q, err := tcstat.ParseTC([]byte(root(in))); err != nil || q.Bytes != want {
			t.Errorf("bytes %s: %d, %v; want %d", in, q.Bytes, err, want)
		}
	}
	for _, in := range []string{"18446744073709551616", "1.8446744073709552e19", "1e400", `"5"`} {
		if q, err := tcstat.ParseTC([]byte(root(in))); err == nil {
			t.Errorf("bytes %s: %d, want an error", in, q.Bytes)
		}
	}
	if r, err := tcstat.DecodeMetrics([]byte(`node_qdisc_overlimits_total{device="e",kind="tbf"} 1.8446744073709552e+19` + "\n")); err == nil {
		t.Errorf("metrics overlimits 2^64: %+v, want an error", r)
	}
}

func FuzzParseTC(f *testing.F) {
	f.Add([]byte(tbfOutput))
	f.Add([]byte(`[{"kind":"noqueue","handle":"0:","root":true,"refcnt":2,"options":{},"bytes":0,"packets":0,"drops":0,"overlimits":0,"requeues":0,"backlog":0,"qlen":0}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := tcstat.ParseTC(b)
		if err == nil && q.Kind == "" {
			t.Fatal("accepted a root qdisc without kind")
		}
	})
}

func FuzzParseTCAll(f *testing.F) {
	f.Add([]byte(`[{"kind":"noqueue","handle":"0:","dev":"lo","root":true,"refcnt":2,"options":{},"bytes":0,"packets":0,"drops":0,"overlimits":0,"requeues":0,"backlog":0,"qlen":0},{"kind":"tbf","handle":"8001:","dev":"pf-a1l4","root":true,"refcnt":3,"options":{"rate":2500000,"burst":32767,"lat":50000},"bytes":9283284,"packets":6140,"drops":0,"overlimits":18320,"requeues":0,"backlog":0,"qlen":0}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		all, err := tcstat.ParseTCAll(b)
		if err != nil {
			return
		}
		for dev, q := range all {
			if dev == "" || q.Kind == "" {
				t.Fatalf("accepted device %q qdisc %+v", dev, q)
			}
		}
	})
}

func FuzzDecodeReport(f *testing.F) {
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","interfaces":{"a1-l4":{"kind":"tbf","handle":"8001:","bytes":1,"packets":1,"drops":0,"overlimits":3,"backlog_bytes":0,"backlog_packets":0}}}`))
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","interfaces":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := tcstat.DecodeReport(b)
		if err != nil {
			return
		}
		if r.Time.IsZero() || r.Interfaces == nil {
			t.Fatalf("accepted an incomplete report %+v", r)
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tcstat.DecodeReport(again); err != nil {
			t.Fatalf("re-encoded report does not decode: %v", err)
		}
	})
}

// counters is a fake tc: per-interface counters the test sets.
type counters struct {
	mu    sync.Mutex
	q     map[string]tcstat.Qdisc
	t     time.Time
	reads int   // calls of read
	err   error // what read fails with, when set
}

func (c *counters) set(dev string, q tcstat.Qdisc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.q[dev] = q
}

func (c *counters) read(_ context.Context, devs []string) (map[string]tcstat.Qdisc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if c.err != nil {
		return nil, c.err
	}
	out := make(map[string]tcstat.Qdisc, len(devs))
	for _, d := range devs {
		if q, ok := c.q[d]; ok {
			out[d] = q
		}
	}
	return out, nil
}

func (c *counters) readCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

func (c *counters) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *counters) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func twoSwitches() proflow.Topology {
	return proflow.Topology{Switches: []string{"agg1", "agg2"}, Leaves: []string{"leaf1"}, BucketRate: 1e6}
}

func newAgentServer(t *testing.T, c *counters, devs ...string) *httptest.Server {
	return newAgentServerWith(t, tcstat.AgentConfig{Interfaces: devs, Read: c.read, Now: c.now})
}

func newAgentServerWith(t *testing.T, cfg tcstat.AgentConfig) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(newAgent(t, cfg))
	t.Cleanup(srv.Close)
	return srv
}

func newAgent(t *testing.T, cfg tcstat.AgentConfig) *tcstat.Agent {
	t.Helper()
	a, err := tcstat.NewAgent(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// serve runs a on ln until the test ends, then checks that Serve stopped
// with a nil error.
func serve(t *testing.T, ln net.Listener, a *tcstat.Agent) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tcstat.Serve(ctx, ln, a) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}

func TestAgentHTTP(t *testing.T) {
	c := &counters{q: map[string]tcstat.Qdisc{"a1": {Kind: "tbf", Bytes: 10, Packets: 1, Overlimits: 2}, "a2": {Kind: "tbf"}}, t: time.Unix(100, 0)}
	srv := newAgentServer(t, c, "a1", "a2")
	code, body := get(t, srv.URL+"/v1/qdisc?dev=a1", "")
	if code != 200 {
		t.Fatalf("GET ?dev=a1: %d %s", code, body)
	}
	r, err := tcstat.DecodeReport([]byte(body))
	if err != nil || r.Interfaces["a1"].Overlimits != 2 || len(r.Interfaces) != 1 || !r.Time.Equal(time.Unix(100, 0)) {
		t.Errorf("report %+v, %v; want a1 alone with 2 overlimits at 100 s", r, err)
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/v1/qdisc", http.StatusOK},
		{"GET", "/metrics", http.StatusOK},
		{"GET", "/v1/qdisc?dev=eth0", http.StatusNotFound},
		{"GET", "/", http.StatusNotFound},
		{"POST", "/v1/qdisc", http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
	if _, err := tcstat.NewAgent(context.Background(), tcstat.AgentConfig{Interfaces: []string{"x; rm -rf /"}, Read: c.read}); err == nil {
		t.Error("NewAgent accepted a shell-looking interface name")
	}
}

// get fetches url with an optional bearer token and returns the status and
// body.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestClientRates(t *testing.T) {
	c := &counters{q: map[string]tcstat.Qdisc{}, t: time.Unix(100, 0)}
	for _, d := range []string{"a1-l1", "a1-l2", "a2-l1"} {
		c.set(d, tcstat.Qdisc{Kind: "tbf"})
	}
	srv := newAgentServer(t, c, "a1-l1", "a1-l2", "a2-l1")
	cl, err := tcstat.NewClient(tcstat.ClientConfig{Topology: twoSwitches(), Now: c.now, Switches: []tcstat.Source{
		{Agent: srv.URL, Interfaces: []string{"a1-l1", "a1-l2"}},
		{Agent: srv.URL, Interfaces: []string{"a2-l1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	obs := &proflow.Observation{}
	obs.Resize(twoSwitches())
	obs.Switches[0].TxRate = 42 // not the client's to touch
	ctx := context.Background()
	if err := cl.Overlay(ctx, obs); !errors.Is(err, proflow.ErrStale) {
		t.Fatalf("first Overlay: %v, want ErrStale", err)
	}
	// Half a second: a1-l1 100 overlimits, a1-l2 10 overlimits with no
	// packet sent; a2-l1 nothing. ξ is overlimit events per second.
	c.set("a1-l1", tcstat.Qdisc{Kind: "tbf", Bytes: 50_000, Packets: 50, Overlimits: 100, BacklogBytes: 3000})
	c.set("a1-l2", tcstat.Qdisc{Kind: "tbf", Overlimits: 10, BacklogBytes: 1514})
	c.advance(500 * time.Millisecond)
	if err := cl.Overlay(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if got, want := obs.Switches[0].OverflowRate, (100+10)/0.5; got != want {
		t.Errorf("agg1 overflow %v events/s, want %v", got, want)
	}
	if got := obs.Switches[0].QueueBytes; got != 3000+1514 {
		t.Errorf("agg1 backlog %v bytes, want the sum of its interfaces' 4514", got)
	}
	if obs.Switches[1].OverflowRate != 0 || obs.Switches[0].TxRate != 42 {
		t.Errorf("agg2 overflow %v, agg1 tx %v; want 0 and 42 untouched", obs.Switches[1].OverflowRate, obs.Switches[0].TxRate)
	}
	// Reset (qdisc replaced): counts from zero. 32-bit wrap of overlimits.
	c.set("a1-l1", tcstat.Qdisc{Kind: "tbf", Bytes: 1000, Packets: 1, Overlimits: 4})
	c.set("a1-l2", tcstat.Qdisc{Kind: "tbf", Overlimits: 10})
	c.set("a2-l1", tcstat.Qdisc{Kind: "tbf", Bytes: 0, Packets: 0, Overlimits: 1<<32 - 5})
	c.advance(time.Second)
	if err := cl.Overlay(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if got := obs.Switches[0].OverflowRate; got != 4 {
		t.Errorf("agg1 overflow after a1-l1's qdisc was replaced: %v events/s, want 4 (counted from zero)", got)
	}
	c.set("a2-l1", tcstat.Qdisc{Kind: "tbf", Bytes: 3000, Packets: 2, Overlimits: 5})
	c.advance(time.Second)
	if err := cl.Overlay(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if got := obs.Switches[1].OverflowRate; got != 10 {
		t.Errorf("agg2 overflow across a 32-bit wrap: %v events/s, want 10", got)
	}
	// The same read again (the agent's cache answers within CacheFor): the
	// rates of the last two reads stand.
	obs.Switches[1].OverflowRate = -1
	if err := cl.Overlay(ctx, obs); err != nil {
		t.Errorf("Overlay answered by the agent's cached read: %v, want the last rates", err)
	}
	if got := obs.Switches[1].OverflowRate; got != 10 {
		t.Errorf("agg2 overflow from the cached read: %v events/s, want 10 as before", got)
	}
}

// TestClientPollsWithinAgentCache polls an agent with its default 100 ms
// cache back to back, as a controller's retry or a conformance suite does:
// a poll answered from the cache carries the previous report's time and
// must not fail as stale once the client has two reads; the rates of those
// two stand until the agent reads again.
func TestClientPollsWithinAgentCache(t *testing.T) {
	for _, f := range []tcstat.Format{tcstat.FormatJSON, tcstat.FormatPrometheus} {
		t.Run(string(f), func(t *testing.T) {
			c := &counters{q: map[string]tcstat.Qdisc{"a1": {Kind: "tbf"}, "a2": {Kind: "tbf"}}, t: time.Unix(100, 0)}
			srv := newAgentServer(t, c, "a1", "a2") // default cache: 100 ms
			cl, err := tcstat.NewClient(tcstat.ClientConfig{Topology: twoSwitches(), Format: f, Now: c.now, Switches: []tcstat.Source{
				{Agent: srv.URL, Interfaces: []string{"a1"}}, {Agent: srv.URL, Interfaces: []string{"a2"}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			obs := &proflow.Observation{}
			obs.Resize(twoSwitches())
			ctx := context.Background()
			for i := range 2 { // one read so far, however often asked
				if err := cl.Overlay(ctx, obs); !errors.Is(err, proflow.ErrStale) {
					t.Fatalf("Overlay %d before a second read: %v, want ErrStale", i+1, err)
				}
			}
			c.set("a1", tcstat.Qdisc{Kind: "tbf", Overlimits: 100})
			c.advance(500 * time.Millisecond)
			if err := cl.Overlay(ctx, obs); err != nil {
				t.Fatal(err)
			}
			if got := obs.Switches[0].OverflowRate; got != 200 {
				t.Fatalf("agg1 overflow %v events/s, want 200", got)
			}
			reads := c.readCount()
			c.set("a1", tcstat.Qdisc{Kind: "tbf", Overlimits: 400})
			c.advance(50 * time.Millisecond) // within the agent's cache
			for i := range 3 {
				obs.Switches[0].OverflowRate = -1
				if err := cl.Overlay(ctx, obs); err != nil {
					t.Fatalf("Overlay %d within the agent's cache: %v, want the last rates", i+1, err)
				}
				if got := obs.Switches[0].OverflowRate; got != 200 {
					t.Errorf("Overlay %d within the agent's cache: agg1 overflow %v events/s, want 200 as before", i+1, got)
				}
			}
			if n := c.readCount() - reads; n != 0 {
				t.Errorf("polls within the agent's cache made %d reads, want 0", n)
			}
			c.advance(450 * time.Millisecond) // the agent reads again
			if err := cl.Overlay(ctx, obs); err != nil {
				t.Fatal(err)
			}
			if got := obs.Switches[0].OverflowRate; got != 600 {
				t.Errorf("agg1 overflow after the agent read again: %v events/s, want 600 ((400-100)/0.5 s)", got)
			}
		})
	}
}

// TestClientReportTimeGoesBack refuses, as stale, a report older than the
// previous one from the same agent (an agent restarted with its clock set
// back, say).
func TestClientReportTimeGoesBack(t *testing.T) {
	var mu sync.Mutex
	at := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, `{"time":%q,"interfaces":{"a1":{"kind":"tbf"},"a2":{"kind":"tbf"}}}`, at.Format(time.RFC3339Nano))
		at = at.Add(-time.Millisecond)
	}))
	t.Cleanup(srv.Close)
	cl, err := tcstat.NewClient(tcstat.ClientConfig{Topology: twoSwitches(), Switches: []tcstat.Source{
		{Agent: srv.URL, Interfaces: []string{"a1"}}, {Agent: srv.URL, Interfaces: []string{"a2"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	obs := &proflow.Observation{}
	obs.Resize(twoSwitches())
	if err := cl.Overlay(context.Background(), obs); !errors.Is(err, proflow.ErrStale) {
		t.Fatalf("first Overlay: %v, want ErrStale", err)
	}
	if err := cl.Overlay(context.Background(), obs); !errors.Is(err, proflow.ErrStale) || !strings.Contains(err.Error(), "goes back") {
		t.Errorf("Overlay with a report older than the previous one: %v, want ErrStale saying the time goes back", err)
	}
}

func TestClientResetCountsFromZero(t *testing.T) {
	prev := tcstat.Qdisc{Bytes: 1e6, Packets: 1000, Overlimits: 500}
	cur := tcstat.Qdisc{Bytes: 2000, Packets: 2, Overlimits: 4}
	if got := tcstat.OverflowRate(prev, cur, 1); got != 4 {
		t.Errorf("after a reset: %v events/s, want 4", got)
	}
}

// A qdisc replaced (another kind or handle) or reset (Bytes, 64 bits wide,
// went down) counts from zero even when its 32-bit overlimits counter was
// in the top half of its range; the same qdisc's counter wraps.
func TestOverflowRateReplacedQdisc(t *testing.T) {
	prev := tcstat.Qdisc{Kind: "tbf", Handle: "8001:", Bytes: 1e9, Overlimits: 3_000_000_000}
	for _, tc := range []struct {
		name string
		cur  tcstat.Qdisc
		want float64
	}{
		{"new handle", tcstat.Qdisc{Kind: "tbf", Handle: "8002:", Bytes: 2e9, Overlimits: 100}, 200},
		{"new kind", tcstat.Qdisc{Kind: "htb", Handle: "8001:", Bytes: 2e9, Overlimits: 100}, 200},
		{"bytes went down", tcstat.Qdisc{Kind: "tbf", Handle: "8001:", Bytes: 1000, Overlimits: 100}, 200},
		{"wrapped", tcstat.Qdisc{Kind: "tbf", Handle: "8001:", Bytes: 2e9, Overlimits: 100}, (1<<32 - 3_000_000_000 + 100) / 0.5},
	} {
		if got := tcstat.OverflowRate(prev, tc.cur, 0.5); got != tc.want {
			t.Errorf("%s: %v events/s, want %v", tc.name, got, tc.want)
		}
	}
}

func TestClientFailures(t *testing.T) {
	topo := twoSwitches()
	mk := func(h http.HandlerFunc, maxAge time.Duration) (*tcstat.Client, *proflow.Observation) {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		cl, err := tcstat.NewClient(tcstat.ClientConfig{Topology: topo, Timeout: 200 * time.Millisecond, MaxAge: maxAge,
			Switches: []tcstat.Source{{Agent: srv.URL, Interfaces: []string{"a1"}}, {Agent: srv.URL, Interfaces: []string{"a2"}}}})
		if err != nil {
			t.Fatal(err)
		}
		obs := &proflow.Observation{}
		obs.Resize(topo)
		return cl, obs
	}
	good := func(ts time.Time) string {
		return fmt.Sprintf(`{"time":%q,"interfaces":{"a1":{"kind":"tbf"},"a2":{"kind":"tbf"}}}`, ts.Format(time.RFC3339Nano))
	}
	release := make(chan struct{})
	defer close(release)
	for name, tc := range map[string]struct {
		h      http.HandlerFunc
		maxAge time.Duration
		want   string
		stale  bool
	}{
		"5xx":     {h: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "tc exploded", 500) }, want: "HTTP 500 Internal Server Error: tc exploded"},
		"garbage": {h: func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>hello</html>") }, want: "malformed report"},
		"unknown field": {h: func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"time":"2026-01-01T00:00:00Z","interfaces":{},"extra":1}`)
		}, want: "malformed report"},
		"partial": {h: func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"time":%q,"interfaces":{"a1":{"kind":"tbf"}}}`, time.Now().Format(time.RFC3339Nano))
		}, want: `partial report: no interface "a2" (switch agg2)`},
		"timeout": {h: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, want: "context deadline exceeded"},
		"old": {h: func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, good(time.Now().Add(-time.Minute))) },
			maxAge: time.Second, want: "ago, want at most 1s", stale: true},
	} {
		t.Run(name, func(t *testing.T) {
			cl, obs := mk(tc.h, tc.maxAge)
			start := time.Now()
			err := cl.Overlay(context.Background(), obs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Overlay: %v, want an error containing %q", err, tc.want)
			}
			if tc.stale != errors.Is(err, proflow.ErrStale) {
				t.Errorf("errors.Is(err, ErrStale) = %v, want %v", !tc.stale, tc.stale)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Overlay took %v, want it bounded by the 200ms timeout", d)
			}
		})
	}
}

func TestServeStops(t *testing.T) {
	c := &counters{q: map[string]tcstat.Qdisc{"a1": {Kind: "tbf"}}, t: time.Unix(1, 0)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, ln, newAgent(t, tcstat.AgentConfig{Interfaces: []string{"a1"}, Read: c.read, Now: c.now})) // stops at cleanup
	resp, err := http.Get("http://" + ln.Addr().String() + "/v1/qdisc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
