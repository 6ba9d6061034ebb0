package main

import (
	"context"
	"encoding/csv"
	"errors"
	"math"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// writeReserveTrace writes a trace of the paper's fabric in which the flow's
// switch agg1 sends twice the bucket rate for 2 s from the window's opening
// and the flow then moves to agg3: its reserve deficit rises by Δt/60 s per
// sample, and agg3's stays 0. agg4 carries two more flow-table entries
// than agg2 and agg3 throughout, so they dominate it.
func writeReserveTrace(t *testing.T) string {
	t.Helper()
	topo := proflow.PaperTopology()
	c := topo.BucketRate
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ep := &trace.Episode{Meta: trace.Meta{
		Source: "sim", Scenario: "X1", Policy: "agent", Seed: 3, Topology: topo,
		Flow:          proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"), SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP},
		InitialSwitch: 0, Interval: trace.Duration(500 * time.Millisecond),
		Start: t0, CongestionStart: t0.Add(10 * time.Second),
	}}
	cur := 0
	for i := range 8 { // 10.0 s … 13.5 s after the start
		at := t0.Add(10*time.Second + time.Duration(i)*500*time.Millisecond)
		o := &proflow.Observation{}
		o.Resize(topo)
		o.Time = at
		for k := range o.Switches {
			o.Switches[k] = proflow.SwitchSample{TxRate: 0.9 * c, FlowCount: 2}
		}
		o.Switches[3].FlowCount = 4
		if i < 5 {
			o.Switches[0] = proflow.SwitchSample{TxRate: 2 * c, FlowCount: 12}
		}
		o.Flow = proflow.FlowSample{Throughput: 0.9 * c}
		s := trace.Step{Seq: uint64(i + 1), Time: at, Obs: o, Switch: cur, Throughput: 0.9 * c,
			Decision: trace.Decision{Reason: proflow.ReasonVotes, Best: 2, Margin: 1.5, Votes: i + 1, Target: -1,
				Forecast: &trace.Forecast{Throughput: float64(i) * 1e6, AppLimited: 0}}}
		if i == 3 { // a move deferred to a recheck 0.2 s later, which found the crowd gone
			s.Decision.Reason, s.Decision.Recheck = proflow.ReasonReserve, trace.Duration(200*time.Millisecond)
			s.Recheck = &trace.Recheck{Time: at.Add(200 * time.Millisecond), Load: 0.7,
				Decision: trace.Decision{Reason: proflow.ReasonReserve, Best: 2, Votes: 4, Target: -1}}
		}
		if i == 4 {
			s.Decision = trace.Decision{Reason: proflow.ReasonRerouted, Best: 2, Margin: 1.5, Votes: 5, Target: 2, Rerouted: true}
			cur = 2
		}
		ep.Steps = append(ep.Steps, s)
	}
	path := filepath.Join(t.TempDir(), "x1.jsonl.gz")
	if err := trace.WriteFile(path, ep); err != nil {
		t.Fatal(err)
	}
	return path
}

// proflow trace -csv prints one row per step in the window, the switch
// carrying the flow, its load and its reserve deficit re-encoded from the
// observations, and the decision.
func TestTraceCommandCSV(t *testing.T) {
	path := writeReserveTrace(t)
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"trace", "-in", path, "-csv", "-to", "3"}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(stdout.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %q in %v", name, head)
		return -1
	}
	if len(recs) != 1+7 { // 0.0 … 3.0 s
		t.Fatalf("%d rows, want 7 (0.0 to 3.0 s):\n%s", len(recs)-1, stdout)
	}
	for i, r := range recs[1:] {
		at, _ := strconv.ParseFloat(r[col("t_s")], 64)
		deficit, _ := strconv.ParseFloat(r[col("deficit")], 64)
		load, _ := strconv.ParseFloat(r[col("load")], 64)
		sw := r[col("switch")]
		wantAt := 0.5 * float64(i)
		wantSw, wantLoad, wantDeficit := "0", 2.0, wantAt/telemetry.DeficitSeconds // one bucket rate above C for wantAt seconds
		if i > 4 {                                                                 // on agg3 since the move at 2.0 s
			wantSw, wantLoad, wantDeficit = "2", 0.9, 0
		}
		if math.Abs(at-wantAt) > 1e-9 || sw != wantSw || math.Abs(load-wantLoad) > 1e-9 || math.Abs(deficit-wantDeficit) > 1e-6 {
			t.Errorf("row %d: t %v, switch %s, load %v, deficit %v; want %v, %s, %v, %v", i, at, sw, load, deficit, wantAt, wantSw, wantLoad, wantDeficit)
		}
	}
	if r := recs[5]; r[col("rerouted")] != "true" || r[col("reason")] != string(proflow.ReasonRerouted) || r[col("best")] != "2" {
		t.Errorf("the move at 2.0 s reads %v", r)
	}
	// The recheck at 1.5 s + 0.2 s, in its step's row alone.
	for i, r := range recs[1:] {
		want := []string{"", "", ""}
		if i == 3 {
			want = []string{"0.2", "0.7", string(proflow.ReasonReserve)}
		}
		if got := []string{r[col("recheck_after_s")], r[col("recheck_load")], r[col("recheck_reason")]}; !slices.Equal(got, want) {
			t.Errorf("row %d: recheck %q, want %q", i, got, want)
		}
	}
	if r := recs[4]; r[col("reason")] != string(proflow.ReasonReserve) || r[col("rerouted")] != "false" {
		t.Errorf("the deferred step at 1.5 s reads %v", r)
	}
	// The forecast the policy made, none at the move.
	for i, r := range recs[1:] {
		want := strconv.FormatFloat(float64(i)*1e6, 'g', 6, 64)
		if i == 4 {
			want = ""
		}
		if got := r[col("forecast_Bps")]; got != want {
			t.Errorf("row %d: forecast %q, want %q", i, got, want)
		}
	}
	// agg4 is dominated at every step; after the move agg1, back at agg2's
	// level, is not, and neither is the flow's own switch.
	for i, r := range recs[1:] {
		if got := r[col("dominated")]; got != "3" {
			t.Errorf("row %d: dominated %q, want 3 (agg4)", i, got)
		}
	}
}

// The table names the switches, shows every switch with -switches all, and
// -from keeps only the later steps.
func TestTraceCommandTable(t *testing.T) {
	path := writeReserveTrace(t)
	e, stdout, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"trace", "-in", path, "-switches", "all", "-from", "1.9"}); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2+4 { // a caption, the header, 2.0 … 3.5 s
		t.Fatalf("%d lines, want a caption, a header and 4 steps:\n%s", len(lines), out)
	}
	for _, want := range []string{"X1, policy agent", "agg1 load", "agg4 load", "moved", "dominated", "forecast MB/s", "agg4  "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if f := strings.Fields(lines[2]); f[0] != "2.0" || f[1] != "agg1" {
		t.Errorf("first step %v, want 2.0 s on agg1", f)
	}
	// A step's recheck is in its row.
	e, stdout, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"trace", "-in", path, "-from", "1.4", "-to", "1.6"}); err != nil {
		t.Fatal(err)
	}
	if want := "reserve; recheck +0.20s at load 0.70: reserve"; !strings.Contains(stdout.String(), want) {
		t.Errorf("the step at 1.5 s lacks %q:\n%s", want, stdout)
	}
}

// Bad flags and a missing file are refused with what was expected.
func TestTraceCommandErrors(t *testing.T) {
	path := writeReserveTrace(t)
	for _, c := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"trace"}, true, "-in is required"},
		{[]string{"trace", "-in", path, "-switches", "some"}, true, "want current or all"},
		{[]string{"trace", "-in", path, "-from", "5", "-to", "1"}, true, "want from <= to"},
		{[]string{"trace", "-in", filepath.Join(t.TempDir(), "none.jsonl.gz")}, false, "none.jsonl.gz"},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, errUsage) != c.usage {
			t.Errorf("%v: error %v, want one containing %q (usage error %v)", c.args, err, c.want, c.usage)
		}
	}
}
