package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

func traceCommand() command {
	return command{
		name:    "trace",
		summary: "print a recorded episode step by step: the flow's throughput, what each switch carried, its reserve deficit, the destinations another switch dominates, and what the controller decided",
		run:     runTrace,
	}
}

// traceRow is one printed step of proflow trace.
type traceRow struct {
	t          float64 // seconds since the evaluation window opened (or since the episode's start)
	on         int     // the switch that carried the flow during the step's interval
	throughput float64 // the flow's, bytes/s
	sw         []traceSwitch
	reason     string
	best       int
	margin     float64
	votes      int
	moved      bool
	dominated  []int   // destinations another switch beats on every congestion measure (proflow.DominatedSwitches)
	forecast   float64 // the policy's forecast of the flow's next sample, bytes/s; NaN when it made none
	recheck    *traceRecheck
}

// traceRecheck is the recheck a step's deferred move had (trace.Step.Recheck).
type traceRecheck struct {
	after  float64 // seconds after the step
	load   float64 // the current switch's load it read
	reason string
}

// traceSwitch is what one switch showed in a step.
type traceSwitch struct {
	load    float64 // transmit rate over the bucket rate
	flows   float64 // flow-table entries
	deficit float64 // the reserve deficit feature (layout v3 and v5), in [0, 1]
}

// runTrace prints a recorded trace (evaluate -traces, fabric run -traces,
// serve) one step per line. The reserve deficit is not recorded: it is
// re-encoded from the observations with the state layout -layout (the
// virtual bucket of telemetry.FeatureDeficit, 1 when DeficitSeconds of the
// bucket rate have been sent above it), so it reads the same whatever
// layout the controller ran with.
func runTrace(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("trace", "trace -in FILE [-from S] [-to S] [-switches current|all] [-csv]")
	in := fs.String("in", "", "the trace file (*.jsonl or *.jsonl.gz) to print (required)")
	from := fs.Float64("from", math.Inf(-1), "first step to print, seconds since the evaluation window opened (since the episode's start when the trace records no window)")
	to := fs.Float64("to", math.Inf(1), "last step to print, seconds on the same clock as -from")
	switches := fs.String("switches", "current", "which switches' columns to print: current (the one carrying the flow) or all")
	asCSV := fs.Bool("csv", false, "write CSV instead of an aligned table")
	if err := parseFlags(fs, "trace", args); err != nil {
		return err
	}
	switch {
	case *in == "":
		return fmt.Errorf("trace: -in is required, want a trace file (*.jsonl or *.jsonl.gz): %w", errUsage)
	case *switches != "current" && *switches != "all":
		return fmt.Errorf("trace: -switches %q, want current or all: %w", *switches, errUsage)
	case !(*from <= *to):
		return fmt.Errorf("trace: -from %v is after -to %v, want from <= to: %w", *from, *to, errUsage)
	}
	tr, err := trace.ReadFile(*in)
	if err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	rows, err := traceRows(tr, *from, *to, *switches == "all")
	if err != nil {
		return fmt.Errorf("trace: %s: %w", *in, err)
	}
	if *asCSV {
		return writeTraceCSV(e.stdout, rows, tr.Meta.Topology.NumSwitches(), *switches == "all")
	}
	return writeTraceTable(e.stdout, tr.Meta, rows, *switches == "all")
}

// traceRows re-encodes every observation of tr (layout v5, for the
// deficit) and keeps the steps from from to to.
func traceRows(tr *trace.Episode, from, to float64, all bool) ([]traceRow, error) {
	topo := tr.Meta.Topology
	cfg := telemetry.DefaultEncoderConfig(topo).WithLayout(telemetry.StateLayoutV5)
	enc, err := telemetry.NewEncoder(cfg)
	if err != nil {
		return nil, err
	}
	zero := tr.Meta.CongestionStart
	if zero.IsZero() {
		zero = tr.Meta.Start
	}
	state := make([]float32, cfg.Dim())
	var dom []bool
	var rows []traceRow
	for i := range tr.Steps {
		s := &tr.Steps[i]
		if s.Obs == nil {
			continue // a step without a valid observation: nothing to show or encode
		}
		if err := enc.Encode(state, s.Obs, s.Switch); err != nil {
			return nil, fmt.Errorf("step %d: %w", s.Seq, err)
		}
		t := s.Time.Sub(zero).Seconds()
		if t < from || t > to {
			continue
		}
		r := traceRow{t: t, on: s.Switch, throughput: s.Throughput, reason: string(s.Decision.Reason),
			best: s.Decision.Best, margin: s.Decision.Margin, votes: s.Decision.Votes, moved: s.Decision.Rerouted, forecast: math.NaN()}
		if f := s.Decision.Forecast; f != nil {
			r.forecast = f.Throughput
		}
		if rc := s.Recheck; rc != nil { // the deferred move's recheck, in the step's row
			r.recheck = &traceRecheck{after: rc.Time.Sub(s.Time).Seconds(), load: rc.Load, reason: string(rc.Decision.Reason)}
			r.moved = r.moved || rc.Decision.Rerouted
		}
		dom = proflow.DominatedSwitches(dom, s.Obs.Switches, s.Switch, nil)
		for k, d := range dom {
			if d {
				r.dominated = append(r.dominated, k)
			}
		}
		for k := range s.Obs.Switches {
			if !all && k != s.Switch {
				continue
			}
			sw := s.Obs.Switches[k]
			r.sw = append(r.sw, traceSwitch{load: sw.TxRate / topo.BucketRate, flows: sw.FlowCount,
				deficit: float64(state[cfg.AggOffset(k)+telemetry.FeatureDeficit])})
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// writeTraceTable prints rows as an aligned table, switches named as in the
// topology.
func writeTraceTable(w io.Writer, meta trace.Meta, rows []traceRow, all bool) error {
	names := meta.Topology.Switches
	name := func(k int) string {
		if k >= 0 && k < len(names) {
			return names[k]
		}
		return strconv.Itoa(k)
	}
	clock := "the evaluation window opened"
	if meta.CongestionStart.IsZero() {
		clock = "the episode started"
	}
	fmt.Fprintf(w, "%s, policy %s, seed %d: t is seconds since %s; load is the switch's transmit rate over the bucket rate; deficit is its reserve deficit (telemetry.FeatureDeficit, 1 = %d s of the bucket rate sent above it)\n",
		meta.Scenario, meta.Policy, meta.Seed, clock, telemetry.DeficitSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"t", "on", "MB/s"}
	if all {
		for k := range names {
			head = append(head, name(k)+" load", "flows", "deficit")
		}
	} else {
		head = append(head, "load", "flows", "deficit")
	}
	head = append(head, "reason", "best", "margin", "votes", "forecast MB/s", "dominated", "")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		cols := []string{fmt.Sprintf("%.1f", r.t), name(r.on), fmt.Sprintf("%.2f", r.throughput/1e6)}
		for _, s := range r.sw {
			cols = append(cols, fmt.Sprintf("%.2f", s.load), fmt.Sprintf("%.0f", s.flows), fmt.Sprintf("%.3f", s.deficit))
		}
		best, moved := "", ""
		if r.best >= 0 {
			best = name(r.best)
		}
		if r.moved {
			moved = "moved"
		}
		dominated := "-"
		if len(r.dominated) > 0 {
			ns := make([]string, len(r.dominated))
			for i, k := range r.dominated {
				ns[i] = name(k)
			}
			dominated = strings.Join(ns, ",")
		}
		fc := "-"
		if !math.IsNaN(r.forecast) {
			fc = fmt.Sprintf("%.2f", r.forecast/1e6)
		}
		reason := r.reason
		if rc := r.recheck; rc != nil {
			reason += fmt.Sprintf("; recheck +%.2fs at load %.2f: %s", rc.after, rc.load, rc.reason)
		}
		cols = append(cols, reason, best, fmt.Sprintf("%.2f", r.margin), strconv.Itoa(r.votes), fc, dominated, moved)
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	}
	return tw.Flush()
}

// writeTraceCSV writes rows as CSV, one column group per printed switch.
func writeTraceCSV(w io.Writer, rows []traceRow, n int, all bool) error {
	cw := csv.NewWriter(w)
	head := []string{"t_s", "switch", "throughput_Bps"}
	if all {
		for k := 0; k < n; k++ {
			p := "s" + strconv.Itoa(k) + "_"
			head = append(head, p+"load", p+"flows", p+"deficit")
		}
	} else {
		head = append(head, "load", "flows", "deficit")
	}
	head = append(head, "reason", "best", "margin", "votes", "rerouted", "dominated", "forecast_Bps", "recheck_after_s", "recheck_load", "recheck_reason")
	if err := cw.Write(head); err != nil {
		return err
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range rows {
		rec := []string{g(r.t), strconv.Itoa(r.on), g(r.throughput)}
		for _, s := range r.sw {
			rec = append(rec, g(s.load), g(s.flows), g(s.deficit))
		}
		dom := make([]string, len(r.dominated))
		for i, k := range r.dominated {
			dom[i] = strconv.Itoa(k)
		}
		fc := ""
		if !math.IsNaN(r.forecast) {
			fc = g(r.forecast)
		}
		rec = append(rec, r.reason, strconv.Itoa(r.best), g(r.margin), strconv.Itoa(r.votes), strconv.FormatBool(r.moved), strings.Join(dom, ";"), fc)
		if rc := r.recheck; rc != nil {
			rec = append(rec, g(rc.after), g(rc.load), rc.reason)
		} else {
			rec = append(rec, "", "", "")
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
