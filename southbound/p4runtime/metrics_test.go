package p4runtime

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"

	"github.com/proflow-sdn/proflow"
)

// counterText is the exposition of the counters and gauges the test reads
// whole, with the values given.
func counterText(connected, disconnects, writes, pollsOK, placedOK, placeErr int) string {
	var errs strings.Builder
	var names []string
	for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
		names = append(names, c.String())
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&errs, "proflow_p4runtime_errors_total{code=%q} 0\n", n)
	}
	return fmt.Sprintf(`
# HELP proflow_p4runtime_connected_devices Devices whose stream has an arbitration answer (primary or backup).
# TYPE proflow_p4runtime_connected_devices gauge
proflow_p4runtime_connected_devices %d
# HELP proflow_p4runtime_disconnects_total Streams to a device that ended (closed by the server, broken, or without an arbitration answer in time).
# TYPE proflow_p4runtime_disconnects_total counter
proflow_p4runtime_disconnects_total %d
# HELP proflow_p4runtime_errors_total RPCs a device refused or could not answer, and stream error messages, by gRPC canonical code.
# TYPE proflow_p4runtime_errors_total counter
%s# HELP proflow_p4runtime_write_updates_total Table-entry updates sent in Write RPCs.
# TYPE proflow_p4runtime_write_updates_total counter
proflow_p4runtime_write_updates_total %d
# HELP proflow_p4runtime_polls_total Counter reads of one leaf (one Read RPC), by result (ok, error).
# TYPE proflow_p4runtime_polls_total counter
proflow_p4runtime_polls_total{result="error"} 0
proflow_p4runtime_polls_total{result="ok"} %d
# HELP proflow_p4runtime_placements_total Rule placements: Place calls that wrote a flow's path entries for a new aggregation switch, by result (ok, error). Not proflow_reroutes_total, the controller's count of reroute decisions.
# TYPE proflow_p4runtime_placements_total counter
proflow_p4runtime_placements_total{result="error"} %d
proflow_p4runtime_placements_total{result="ok"} %d
`, connected, disconnects, errs.String(), writes, pollsOK, placeErr, placedOK)
}

var counterNames = []string{"proflow_p4runtime_connected_devices", "proflow_p4runtime_disconnects_total", "proflow_p4runtime_errors_total",
	"proflow_p4runtime_write_updates_total", "proflow_p4runtime_polls_total", "proflow_p4runtime_placements_total"}

// withMetrics starts a fabric and dials a client (election ID 10) that
// registers its metrics on a registry of its own.
func withMetrics(t *testing.T) (*fabric, *Client, Config, *prometheus.Registry) {
	t.Helper()
	f := newFabric(t, nil)
	reg := prometheus.NewPedanticRegistry()
	cfg := f.config(10)
	cfg.Registerer = reg
	return f, dial(t, cfg), cfg, reg
}

func TestMetrics(t *testing.T) {
	f, c, cfg, reg := withMetrics(t)
	ctx, cancel := ctxT(t)
	defer cancel()

	// Every label value from the start, at zero; four devices arbitrated.
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counterText(4, 0, 0, 0, 0, 0)), counterNames...); err != nil {
		t.Errorf("after Dial: %v", err)
	}
	for _, h := range []string{"proflow_p4runtime_poll_duration_seconds", "proflow_p4runtime_placement_duration_seconds"} {
		if n, err := testutil.GatherAndCount(reg, h); err != nil || n != 1 {
			t.Errorf("%s: %d series, %v; want 1", h, n, err)
		}
	}

	// One placement writes one update per direction; placing it again
	// where it is writes nothing and counts nothing.
	for range 2 {
		if err := c.Place(ctx, testFlow, 2); err != nil {
			t.Fatal(err)
		}
	}
	var obs proflow.Observation
	_ = c.Collect(ctx, &obs) // primes: four reads
	f.clock.Advance(time.Second)
	if err := c.Collect(ctx, &obs); err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counterText(4, 0, 2, 8, 1, 0)), counterNames...); err != nil {
		t.Errorf("after a placement and two collects: %v", err)
	}

	// A client with a higher election ID takes primary: the next placement
	// is refused and counted as an error.
	c2 := dial(t, f.config(20))
	if err := c2.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Place(ctx, testFlow, 1); err == nil {
		t.Fatal("Place by a backup succeeded")
	}
	if got := testutil.ToFloat64(c.m.placements.WithLabelValues("error")); got != 1 {
		t.Errorf("placements{result=error} = %v after a refused Place, want 1", got)
	}

	// Close unregisters, so a new client can register on the same registry.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
		t.Errorf("series after Close = %d, %v; want 0", n, err)
	}
	cfg.ElectionID = ElectionID{Low: 30} // the server may not have forgotten 10 yet
	dial(t, cfg)
	if n, err := testutil.GatherAndCount(reg, "proflow_p4runtime_connected_devices"); err != nil || n != 1 {
		t.Errorf("second client's metrics: %d, %v", n, err)
	}
}

func TestMetricsCountDisconnects(t *testing.T) {
	f, c, _, _ := withMetrics(t)
	f.stop() // every stream breaks
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(c.m.connected) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("connected_devices did not drop to 0 within 5 s of the server stopping")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := testutil.ToFloat64(c.m.disconnects); got != 4 {
		t.Errorf("disconnects_total = %v after the server stopped, want 4", got)
	}
}

func TestConfigRefusesTypedNilRegisterer(t *testing.T) {
	f := newFabric(t, nil)
	cfg := f.config(10)
	cfg.Registerer = (*prometheus.Registry)(nil)
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "registerer is a nil *prometheus.Registry") {
		t.Errorf("Validate with a typed-nil registerer: %v", err)
	}
}
