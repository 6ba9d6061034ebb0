package main

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// limiterTrace writes a trace of the paper's fabric whose flow's switch
// carries, from the window's opening, a crowd at load for visit seconds,
// then the flow alone at 1.02 C for gap seconds, then the crowd again, and
// whose flow collapses (its throughput to a tenth) once a limiter served at
// rate × C with depth seconds of it has run dry: the integral of load −
// rate, clipped at 0. With moveAt > 0 the flow moves to agg3 at that time
// instead.
func limiterTrace(t *testing.T, dir, name string, load, visit, gap, rate, depth, moveAt float64) {
	t.Helper()
	topo := proflow.PaperTopology()
	c := topo.BucketRate
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ep := &trace.Episode{Meta: trace.Meta{
		Source: "sim", Scenario: name, Policy: "static", Seed: 1, Topology: topo,
		Flow:          proflow.FlowID{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.8"), SrcPort: 5001, DstPort: 5201, Proto: proflow.ProtoTCP},
		InitialSwitch: 0, Interval: trace.Duration(500 * time.Millisecond),
		Start: t0, CongestionStart: t0.Add(20 * time.Second),
	}}
	hidden, cur := 0.0, 0
	for i := 1; i <= 400; i++ { // 0.5 s … 200 s
		at := t0.Add(time.Duration(i) * 500 * time.Millisecond)
		sec := float64(i)/2 - 20 // since the window opened
		l := 0.6
		switch {
		case sec > 0 && sec <= visit, sec > visit+gap:
			l = load
		case sec > visit:
			l = 1.02
		}
		thr := 0.95 * c
		hidden = max(0, hidden+(l-rate)*0.5)
		if hidden >= depth {
			thr = 0.1 * c
		}
		o := &proflow.Observation{}
		o.Resize(topo)
		o.Time = at
		for k := range o.Switches {
			o.Switches[k] = proflow.SwitchSample{TxRate: 0.5 * c, FlowCount: 2}
		}
		o.Switches[cur].TxRate = l * c
		s := trace.Step{Seq: uint64(i), Time: at, Obs: o, Switch: cur, Throughput: thr,
			Decision: trace.Decision{Reason: proflow.ReasonStay, Best: -1, Target: -1}}
		if moveAt > 0 && sec == moveAt {
			s.Decision = trace.Decision{Reason: proflow.ReasonRerouted, Best: 2, Margin: 1, Votes: 1, Target: 2, Rerouted: true}
			cur = 2
		}
		ep.Steps = append(ep.Steps, s)
	}
	if err := trace.WriteFile(filepath.Join(dir, name+".jsonl.gz"), ep); err != nil {
		t.Fatal(err)
	}
}

// proflow reserve finds where flows collapse and fits the rate and depth of
// the reserve that ran out: from flows whose crowds come at several loads
// and leave them between visits at a load between C and the limiter's
// rate, it picks the limiter's rate (at C the deficits at collapse spread)
// and a depth at most the limiter's; a flow that moved first counts no
// collapse.
func TestReserveCommand(t *testing.T) {
	dir := t.TempDir()
	const rate, depth = 1.05, 50.0
	for i, c := range []struct{ load, visit, gap float64 }{
		{3, 60, 0}, {2, 30, 60}, {2.5, 20, 80}, {3, 10, 40}, {2, 5, 100},
	} {
		limiterTrace(t, dir, "L"+strconv.Itoa(i+1), c.load, c.visit, c.gap, rate, depth, 0)
	}
	limiterTrace(t, dir, "M1", 4, 100, 0, rate, depth, 3) // moved at 3 s: no collapse counted
	e, stdout, _ := newTestEnv()
	png := filepath.Join(t.TempDir(), "fig", "reserve.png")
	if err := e.dispatch(context.Background(), []string{"reserve", "-in", dir, "-rates", "1:1.1:0.01", "-plot", png}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("-plot %s: %d bytes, %v; want a PNG", png, len(b), err)
	}
	out := stdout.String()
	if !strings.HasPrefix(out, "5 of 6 traces show a collapse") {
		t.Errorf("output begins %q, want 5 of 6 traces collapsing", strings.SplitN(out, "\n", 2)[0])
	}
	m := regexp.MustCompile(`drain: rate ([0-9.]+) .*, depth ([0-9.]+) `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no drain line in\n%s", out)
	}
	gotRate, _ := strconv.ParseFloat(m[1], 64)
	gotDepth, _ := strconv.ParseFloat(m[2], 64)
	// A collapse is seen at the first sample at or past the depth, up to
	// one sample's drain (at most 1 s of C at these loads) late: that
	// blurs the rate by a step of the grid, and the depth by a sample.
	if gotRate < rate-0.011 || gotRate > rate+0.011 {
		t.Errorf("rate %v, want the limiter's %v within a step of the grid\n%s", gotRate, rate, out)
	}
	if !(gotDepth >= depth-1 && gotDepth < depth+1) {
		t.Errorf("depth %v, want within 1 s of C of the limiter's %v\n%s", gotDepth, depth, out)
	}
	if !regexp.MustCompile(`(?m)^\s+1\.000 .* ([0-9.]+)\s+$`).MatchString(out) {
		t.Errorf("no row for rate 1 in\n%s", out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"reserve"}, "-in is required"},
		{[]string{"reserve", "-in", dir, "-rates", "1:1.1"}, "want FROM:TO:STEP"},
		{[]string{"reserve", "-in", dir, "-rates", "1.1:1:0.01"}, "want 0 < FROM <= TO"},
		{[]string{"reserve", "-in", dir, "-fraction", "1"}, "-fraction 1, want a number in (0, 1)"},
		{[]string{"reserve", "-in", filepath.Join(dir, "none")}, "no such file"},
		{[]string{"reserve", "-in", t.TempDir()}, "no trace (*.jsonl, *.jsonl.gz) in it"},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
		}
		if strings.Contains(c.want, "want") && !errors.Is(err, errUsage) && !strings.Contains(c.want, "no trace") {
			t.Errorf("%q: error %v, want a usage error", c.args, err)
		}
	}
	quiet := t.TempDir()
	limiterTrace(t, quiet, "Q1", 1.02, 100, 0, rate, depth, 0)
	e, _, _ = newTestEnv()
	if err := e.dispatch(context.Background(), []string{"reserve", "-in", quiet}); err == nil || !strings.Contains(err.Error(), "none of the 1 traces shows a flow collapsing") {
		t.Errorf("no collapse: error %v, want one saying none collapsed", err)
	}
}
