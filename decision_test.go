package proflow_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow"
)

func TestDominatedSwitches(t *testing.T) {
	sw := []proflow.SwitchSample{
		{TxRate: 9e6, FlowCount: 2, ElephantRate: 9e6},  // 0: the flow's own, never marked
		{TxRate: 5e7, OverflowRate: 3e4, FlowCount: 12}, // 1: a crowd: beaten by 2
		{}, // 2: empty
		{TxRate: 2.5e7, FlowCount: 2, ElephantRate: 2.5e7},          // 3: an elephant: beaten by 2
		{TxRate: 0, FlowCount: 0, QueueBytes: 0},                    // 4: empty too: ties 2, not beaten
		{TxRate: 1e5, FlowCount: 0, OverflowRate: 0, QueueBytes: 9}, // 5: beaten by 2 and 4
	}
	got := proflow.DominatedSwitches(nil, sw, 0, nil)
	want := []bool{false, true, false, true, false, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dominated (-want +got):\n%s", diff)
	}
	// The current switch is no yardstick: with the flow on 2, the empty 4
	// still beats 1, 3 and 5, and 2 is not marked.
	got = proflow.DominatedSwitches(got, sw, 2, nil)
	if diff := cmp.Diff([]bool{true, true, false, true, false, true}, got); diff != "" {
		t.Errorf("flow on switch 2 (-want +got):\n%s", diff)
	}
	// One measure higher is enough not to be beaten: a crowd of capped
	// flows (many entries, little rate) beside an elephant (few, at rate).
	two := []proflow.SwitchSample{{}, {TxRate: 2e6, FlowCount: 12}, {TxRate: 2.5e7, FlowCount: 2, ElephantRate: 2.5e7}}
	if got := proflow.DominatedSwitches(nil, two, 0, nil); got[1] || got[2] {
		t.Errorf("capped crowd beside an elephant: dominated %v, want neither", got)
	}
	// A cordoned switch dominates none: with the empty 2 and 4 cordoned,
	// no switch a flow may go to beats 1, 3 or 5 on every measure (5's
	// backlog is above the crowd's and the elephant's), so none is marked.
	cordoned := []bool{false, false, true, false, true, false}
	if diff := cmp.Diff([]bool{false, false, false, false, false, false}, proflow.DominatedSwitches(nil, sw, 0, cordoned)); diff != "" {
		t.Errorf("2 and 4 cordoned (-want +got):\n%s", diff)
	}
	buf := make([]bool, 0, len(sw))
	if n := testing.AllocsPerRun(100, func() { buf = proflow.DominatedSwitches(buf, sw, 0, nil) }); n != 0 {
		t.Errorf("DominatedSwitches allocates %v times with room in dst, want 0", n)
	}
}

func TestRelievingSwitches(t *testing.T) {
	sw := []proflow.SwitchSample{
		{TxRate: 4e7, FlowCount: 6, ElephantRate: 3e7, QueueBytes: 1e4}, // 0: the flow's, under a crowd
		{},                          // 1: empty: relieves 0
		{TxRate: 5e7, FlowCount: 2}, // 2: more traffic than 0: does not
		{TxRate: 4e7, FlowCount: 6, ElephantRate: 3e7, QueueBytes: 1e4}, // 3: reads as 0: does not
		{TxRate: 1e6, FlowCount: 1},                                     // 4: less on every measure: relieves 0
		{TxRate: 1e6, FlowCount: 7},                                     // 5: one more flow: does not
	}
	got := proflow.RelievingSwitches(nil, sw, 0, nil)
	if diff := cmp.Diff([]bool{false, true, false, false, true, false}, got); diff != "" {
		t.Errorf("relieving switch 0 (-want +got):\n%s", diff)
	}
	// An empty fabric: no switch reads less than another.
	if got := proflow.RelievingSwitches(nil, make([]proflow.SwitchSample, 4), 1, nil); got[0] || got[1] || got[2] || got[3] {
		t.Errorf("empty fabric: relieving %v, want none", got)
	}
	// A cordoned switch is never marked, and the current one is not either.
	cordoned := []bool{false, true, false, false, false, false}
	if diff := cmp.Diff([]bool{false, false, false, false, true, false}, proflow.RelievingSwitches(got[:0], sw, 0, cordoned)); diff != "" {
		t.Errorf("1 cordoned (-want +got):\n%s", diff)
	}
	// A current outside the fabric marks none.
	if got := proflow.RelievingSwitches(nil, sw, 9, nil); slices.Contains(got, true) {
		t.Errorf("current 9 of 6: relieving %v, want none", got)
	}
	buf := make([]bool, 0, len(sw))
	if n := testing.AllocsPerRun(100, func() { buf = proflow.RelievingSwitches(buf, sw, 0, nil) }); n != 0 {
		t.Errorf("RelievingSwitches allocates %v times with room in dst, want 0", n)
	}
}
