package main

import (
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// TestWriteKindTable: the demo's per-kind row names the best rule and the
// agent's ratio to it, and a summary without the agent says so.
func TestWriteKindTable(t *testing.T) {
	ep := func(pol string, seed uint64, late int) *eval.Episode {
		e := &eval.Episode{Scenario: "K1", Policy: pol, Seed: seed, Repeat: int(seed), Baseline: 3e6, Kind: sim.KindRR, SLO: 0.015}
		for i := range 120 { // the window's samples: 1 … 120 s
			e.T = append(e.T, float64(i+1))
			e.Throughput = append(e.Throughput, 3e6)
			e.Overflow = append(e.Overflow, 0)
			lat := 0.01
			if i < late {
				lat = 0.5
			}
			e.Latency = append(e.Latency, lat)
		}
		return e
	}
	var eps []*eval.Episode
	for seed := range uint64(2) {
		eps = append(eps, ep("static", seed, 40), ep("crowd", seed, 8), ep("oracle", seed, 2), ep("agent", seed, 2))
	}
	opt := eval.DefaultOptions()
	opt.Baseline = "static"
	s, err := eval.Summarize(eps, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeKindTable(&b, "testbed", "K1–K64", 2, 5000, s)
	if want := "| testbed | K1–K64 (1) | 2, 5000 | rr | 2.0 | crowd | 8.0 | 0.25× |"; !strings.Contains(b.String(), want) {
		t.Errorf("row lacks %q:\n%s", want, b.String())
	}
	noAgent, err := eval.Summarize(eps[:3], opt)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	writeKindTable(&b, "testbed", "K1–K64", 2, 5000, noAgent)
	if !strings.Contains(b.String(), "no agent") {
		t.Errorf("summary without the agent: %q, want \"no agent\"", b.String())
	}
}
