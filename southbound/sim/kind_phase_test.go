package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// An rr flow's request rate may change once, at from, to
// request_rate_from; the fields go together.
func TestFlowKindRRFromValidation(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"rate without from", `{"kind": "rr", "request_bytes": 1000, "request_rate": 5, "request_rate_from": 1}`, "protected_kind.from: unset with request_rate_from"},
		{"from without rate", `{"kind": "rr", "request_bytes": 1000, "request_rate": 5, "from": "30s"}`, "protected_kind.request_rate_from: unset with from"},
		{"negative rate", `{"kind": "rr", "request_bytes": 1000, "request_rate": 5, "from": "30s", "request_rate_from": -2}`, "protected_kind.request_rate_from: -2, want a number of requests per second > 0 and at most 100000"},
		{"negative from", `{"kind": "rr", "request_bytes": 1000, "request_rate": 5, "from": "-1s", "request_rate_from": 2}`, "protected_kind.from: -1s is negative"},
		{"rate kind", `{"kind": "rate", "rate": "96Mbit/s", "request_rate_from": 2}`, "protected_kind.request_rate_from: set for kind rate"},
		{"onoff kind", `{"kind": "onoff", "on": "1s", "off": "1s", "request_rate_from": 2}`, "protected_kind.request_rate_from: set for kind onoff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := `{"name": "k", "protected_switch": "agg1", "congesters": [], "protected_kind": ` + tc.json + `}`
			_, err := sim.ReadScenario(strings.NewReader(js), sim.DefaultConfig())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	js := `{"name": "k", "protected_switch": "agg1", "congesters": [], "protected_kind": {"kind": "rr", "request_bytes": 1000, "request_rate": 5, "from": "30s", "request_rate_from": 2}}`
	if _, err := sim.ReadScenario(strings.NewReader(js), sim.DefaultConfig()); err != nil {
		t.Error(err)
	}
}

// The request rate drops from 100 to 10 a second at from: the completions
// counted in the flow samples follow, periodic and Poisson alike, and
// before from they are those of the same flow without the change.
func TestFlowKindRRFrom(t *testing.T) {
	cfg := sim.DefaultConfig()
	const from = 10 * time.Second
	completions := func(k sim.FlowKind) []float64 {
		sc := &sim.Scenario{Name: "drop", ProtectedSwitch: "agg1", Congesters: []sim.Congester{}, ProtectedKind: k}
		f, err := sim.New(cfg, sc, 5)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		var obs proflow.Observation
		for range int(20 * time.Second / cfg.Interval) {
			if err := f.Advance(cfg.Interval); err != nil {
				t.Fatal(err)
			}
			if !f.Truth(&obs) {
				t.Fatal("no sample")
			}
			out = append(out, obs.Flow.Completions)
		}
		return out
	}
	per := int(time.Second / cfg.Interval)
	sum := func(c []float64, fromS, toS int) int {
		n := 0
		for _, x := range c[fromS*per : toS*per] {
			n += int(x)
		}
		return n
	}
	for _, arrivals := range []string{sim.ArrivalsPeriodic, sim.ArrivalsPoisson} {
		k := sim.FlowKind{Kind: sim.KindRR, RequestBytes: 16384, RequestRate: 100, Arrivals: arrivals}
		steady := completions(k)
		k.From, k.RequestRateFrom = sim.Duration(from), 10
		c := completions(k)
		before, after := sum(c, 2, 9), sum(c, 11, 19)
		if before < 600 || before > 800 {
			t.Errorf("%s: %d requests completed in [2s, 9s), want about 700 (100 a second)", arrivals, before)
		}
		if after < 50 || after > 110 {
			t.Errorf("%s: %d requests completed in [11s, 19s), want about 80 (10 a second from %v)", arrivals, after, from)
		}
		for i := range int(from/cfg.Interval) - 1 {
			if c[i] != steady[i] {
				t.Fatalf("%s: interval %d: %v completions, %v without the change at %v; want the same before it", arrivals, i, c[i], steady[i], from)
			}
		}
	}
}
