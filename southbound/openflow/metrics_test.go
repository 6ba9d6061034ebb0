package openflow_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/proflow-sdn/proflow/southbound/openflow"
)

// TestMetricsStartAtZero checks the server's metric names, labels and
// that every known label value is exported, at zero, before any event.
func TestMetricsStartAtZero(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	cfg := testConfig()
	cfg.Registerer = reg
	if _, err := openflow.NewServer(cfg); err != nil {
		t.Fatal(err)
	}
	var errs strings.Builder
	for _, typ := range []int{0, 1, 10, 11, 12, 13, 2, 3, 4, 5, 6, 65535, 7, 8, 9} { // label order
		fmt.Fprintf(&errs, "proflow_openflow_errors_total{type=\"%d\"} 0\n", typ)
	}
	want := `
# HELP proflow_openflow_connected_switches Switches connected with a completed handshake.
# TYPE proflow_openflow_connected_switches gauge
proflow_openflow_connected_switches 0
# HELP proflow_openflow_disconnects_total Switch connections that ended (closed, dead or failed).
# TYPE proflow_openflow_disconnects_total counter
proflow_openflow_disconnects_total 0
# HELP proflow_openflow_errors_total OpenFlow error messages received from switches, by OpenFlow error type (ofp_error_type number).
# TYPE proflow_openflow_errors_total counter
` + errs.String() + `# HELP proflow_openflow_flow_mods_total Flow-mod messages sent.
# TYPE proflow_openflow_flow_mods_total counter
proflow_openflow_flow_mods_total 0
# HELP proflow_openflow_placements_total Rule placements: Place calls that wrote a flow's rules for a new aggregation switch, by result (ok, error). Not proflow_reroutes_total, the controller's count of reroute decisions.
# TYPE proflow_openflow_placements_total counter
proflow_openflow_placements_total{result="error"} 0
proflow_openflow_placements_total{result="ok"} 0
# HELP proflow_openflow_polls_total Statistics polls of one switch, by result (ok, error, joined: an outstanding poll was reused).
# TYPE proflow_openflow_polls_total counter
proflow_openflow_polls_total{result="error"} 0
proflow_openflow_polls_total{result="joined"} 0
proflow_openflow_polls_total{result="ok"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "proflow_openflow_connected_switches", "proflow_openflow_disconnects_total",
		"proflow_openflow_errors_total", "proflow_openflow_flow_mods_total", "proflow_openflow_placements_total", "proflow_openflow_polls_total"); err != nil {
		t.Error(err)
	}
	for name, want := range map[string]int{
		"proflow_openflow_poll_duration_seconds":      1,
		"proflow_openflow_placement_duration_seconds": 1,
		"proflow_openflow_poll_latency_seconds":       0, // the old names
		"proflow_openflow_reroute_latency_seconds":    0,
		"proflow_openflow_reroutes_total":             0,
	} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != want {
			t.Errorf("%s: %d series, %v; want %d", name, n, err, want)
		}
	}
}
