package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// DemandFraction: a sample of a rate or onoff flow violates its objective
// when its goodput is below this fraction of the demand of the interval.
const DemandFraction = 0.9

// latencyOf returns the latency FromTrace records for a step, seconds: an
// rr flow's completion-time p99 where the sample has one, else the RTT
// p99; 0 when the step has no observation or the source could not tell.
func latencyOf(st *trace.Step) float64 {
	if st.Obs == nil {
		return 0
	}
	if st.Obs.Flow.CompletionP99 > 0 {
		return st.Obs.Flow.CompletionP99
	}
	return st.Obs.Flow.RTTP99
}

// SetKind records the protected flow's kind of traffic on e (a simulated
// episode of a scenario whose primary protected flow is of kind k, on the
// fabric cfg, congestion starting at congestionStart after the start of the
// episode): Kind, the demand of every sample and, for rr, the SLO. A bulk
// flow records nothing: its objective is the throughput one
// (Options.SLOFraction of the baseline).
//
// The demand of a sample is the application's rate (FlowKind.DemandRate;
// for an onoff flow bursting at full rate, the episode's baseline) times
// the fraction of the sample's interval, which ends at the sample, that
// the application was sending.
func (e *Episode) SetKind(k sim.FlowKind, cfg sim.Config, congestionStart time.Duration) {
	if k.IsBulk() {
		e.Kind, e.Demand, e.SLO = "", nil, 0
		return
	}
	e.Kind = k.Name()
	e.SLO = k.SLOFor(cfg).Seconds()
	rate := k.DemandRate(cfg)
	if rate == 0 {
		rate = e.Baseline
	}
	const sub = 20 // points per interval at which the application is looked at
	iv := cfg.Interval
	e.Demand = make([]float64, len(e.T))
	for i, t := range e.T {
		end := congestionStart + time.Duration(t*float64(time.Second))
		on := 0
		for j := range sub {
			if k.Sending(end - iv + iv*time.Duration(2*j+1)/(2*sub)) {
				on++
			}
		}
		e.Demand[i] = rate * float64(on) / sub
	}
}

// violates reports whether sample i misses the episode's objective of its
// kind: an rr flow's latency above SLO, a rate or onoff flow's goodput
// below DemandFraction of a positive demand. A bulk episode has no such
// objective.
func (e *Episode) violates(i int) bool {
	switch {
	case e.Kind == sim.KindRR:
		return i < len(e.Latency) && e.Latency[i] > e.SLO
	case len(e.Demand) > i && e.Demand[i] > 0:
		return e.Throughput[i] < DemandFraction*e.Demand[i]
	}
	return false
}

// violationSeconds returns the time in the window of the samples that
// violate the kind's objective, weighted as belowSeconds weights them.
func (e *Episode) violationSeconds(window float64) float64 {
	total := 0.0
	for i, t := range e.T {
		if !inWindow(t, window) || !e.violates(i) {
			continue
		}
		total += e.span(i)
	}
	return total
}

// validateKind checks the kind fields of e: series as long as T (or
// absent) holding finite non-negative numbers, and an rr flow's SLO.
func (e *Episode) validateKind() error {
	id := e.id()
	for _, s := range []struct {
		name string
		v    []float64
	}{{"latency", e.Latency}, {"demand", e.Demand}} {
		if len(s.v) != 0 && len(s.v) != len(e.T) {
			return fmt.Errorf("%s: %d %s samples for %d times, want one per time or none", id, len(s.v), s.name, len(e.T))
		}
		for i, v := range s.v {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: %s sample %d is %v, want a finite number >= 0", id, s.name, i, v)
			}
		}
	}
	switch e.Kind {
	case "", sim.KindBulk, sim.KindRate, sim.KindOnOff:
	case sim.KindRR:
		if !(e.SLO > 0) || math.IsInf(e.SLO, 0) {
			return fmt.Errorf("%s: kind rr with SLO %vs, want a finite latency objective > 0", id, e.SLO)
		}
	default:
		return fmt.Errorf("%s: kind %q, want %s, %s, %s or %s", id, e.Kind, sim.KindBulk, sim.KindRate, sim.KindOnOff, sim.KindRR)
	}
	return nil
}

// summariseKind fills the cell's kind, latency percentiles and SLO
// violation seconds of the kind from its episodes.
func (c *Cell) summariseKind(eps []*Episode, window float64) {
	var lat, viol []float64
	for _, e := range eps {
		if c.Kind == "" && e.Kind != "" {
			c.Kind = e.Kind
		}
		for i, t := range e.T {
			if inWindow(t, window) && i < len(e.Latency) && e.Latency[i] > 0 {
				lat = append(lat, e.Latency[i])
			}
		}
		viol = append(viol, e.violationSeconds(window))
	}
	if c.Kind == "" {
		c.Kind = sim.KindBulk
	}
	c.LatencyP50, c.LatencyP99 = percentile(lat, 0.5), percentile(lat, 0.99)
	c.KindSLOSeconds = math.NaN()
	if c.Kind != sim.KindBulk {
		c.KindSLOSeconds = mean(viol)
	}
}

// percentile returns the q-quantile of v by nearest rank, NaN for no
// values; it sorts v.
func percentile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	return v[max(0, int(math.Ceil(q*float64(len(v))))-1)]
}

// ms formats seconds as milliseconds, "–" for NaN.
func ms(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.1f", 1000*v)
}

// writeKinds writes the report's section on the protected flow's kind of
// traffic and its latency, when any scenario's flow is not bulk.
func (s *Summary) writeKinds(b *strings.Builder) {
	show := false
	for _, c := range s.Cells {
		if c.Kind != sim.KindBulk {
			show = true
		}
	}
	if !show {
		return
	}
	b.WriteString("## Latency and the objective of each kind of flow\n\n")
	fmt.Fprintf(b, "Latency per sample: a request/response (rr) flow's 99th-percentile request completion time over the interval "+
		"(issue to last byte delivered), every other flow's 99th-percentile RTT; p50 and p99 of those samples in the window over all repeats, ms "+
		"(– where the source reported none). SLO seconds (mean over repeats): for rr the time with the latency above the scenario's objective "+
		"(default base RTT + %v); for rate and onoff flows the time with goodput below %g%% of the application's demand while it sends; "+
		"for bulk the time below %g%% of the baseline (the SLO column of Reroutes).\n\n", sim.DefaultSLOMargin, 100*DemandFraction, 100*s.Options.SLOFraction)
	b.WriteString("| scenario | kind | policy | latency p50 (ms) | latency p99 (ms) | SLO (s) |\n|---|---|---|---|---|---|\n")
	for _, c := range s.Cells {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", c.Scenario, c.Kind, c.Policy, ms(c.LatencyP50), ms(c.LatencyP99), secs(c.kindSLO()))
	}
	b.WriteString("\n")
	writeKindMeans(b, s.Cells)
	if scs := s.latencyScenarios(); len(scs) > 0 {
		fmt.Fprintf(b, "%s: the latency over time of %s, one panel each as in %s (a policy's median repeat by mean throughput, "+
			"a band over the other repeats, a dashed mark at its first reroute; log scale; samples without a latency left out).\n\n",
			FigLatency, strings.Join(scs, ", "), FigThroughput)
	}
}

// kindSLO is the cell's SLO seconds by its kind's objective: KindSLOSeconds,
// or SLOSeconds for bulk.
func (c Cell) kindSLO() float64 {
	if c.Kind == sim.KindBulk {
		return c.SLOSeconds
	}
	return c.KindSLOSeconds
}

// kindSLOMean is one kind's and policy's SLO seconds (Cell.kindSLO)
// averaged over the kind's scenarios that have them.
type kindSLOMean struct {
	kind, policy string
	scenarios    int
	slo          float64
}

// kindSLOMeans returns the mean SLO seconds of every kind and policy among
// cells, in the order they first appear.
func kindSLOMeans(cells []Cell) []kindSLOMean {
	var out []kindSLOMean
	for _, c := range cells {
		slo := c.kindSLO()
		if math.IsNaN(slo) {
			continue
		}
		i := slices.IndexFunc(out, func(m kindSLOMean) bool { return m.kind == c.Kind && m.policy == c.Policy })
		if i < 0 {
			i = len(out)
			out = append(out, kindSLOMean{kind: c.Kind, policy: c.Policy})
		}
		out[i].scenarios++
		out[i].slo += slo
	}
	for i := range out {
		out[i].slo /= float64(out[i].scenarios)
	}
	return out
}

// writeKindMeans writes each kind's and policy's SLO seconds averaged over
// the kind's scenarios: with evaluate -alone (congesters removed), the
// floor no placement can go below.
func writeKindMeans(b *strings.Builder, cells []Cell) {
	means := kindSLOMeans(cells)
	if len(means) == 0 {
		return
	}
	b.WriteString("SLO seconds per kind and policy, the mean over the kind's scenarios:\n\n| kind | policy | scenarios | mean SLO (s) |\n|---|---|---|---|\n")
	for _, m := range means {
		fmt.Fprintf(b, "| %s | %s | %d | %s |\n", m.kind, m.policy, m.scenarios, secs(m.slo))
	}
	b.WriteString("\n")
}
