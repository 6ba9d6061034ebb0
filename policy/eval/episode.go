package eval

import (
	"fmt"
	"math"
)

// Episode is what the evaluation needs of one episode: the protected flow's
// throughput over the evaluation window and the reroutes that happened. It
// is independent of where the episode ran (simulator or real fabric); see
// FromTrace for episodes recorded in the trace format.
type Episode struct {
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	Repeat   int    `json:"repeat"`
	Seed     uint64 `json:"seed"`
	// Baseline is the protected flow's pre-congestion throughput φ0, bytes/s.
	Baseline float64 `json:"baseline"`
	// T holds the sample times in seconds since congestion start; the
	// window is [0, Window).
	T []float64 `json:"t"`
	// Throughput holds φ at each sample, bytes/s.
	Throughput []float64 `json:"throughput"`
	// Overflow holds ξ on the switch carrying the flow at each sample, bytes/s.
	Overflow []float64 `json:"overflow"`
	// Reroutes lists the moves of the protected flow in time order.
	Reroutes []Reroute `json:"reroutes"`
	// Switches names the aggregation switches by index, for reports; when
	// empty, reports name switch k as "#k".
	Switches []string `json:"switches,omitempty"`

	// Kind is the protected flow's kind of traffic (sim.KindRate,
	// sim.KindOnOff, sim.KindRR), empty for a bulk transfer; see SetKind.
	Kind string `json:"kind,omitempty"`
	// Latency holds the flow's latency at each sample, seconds: an rr
	// flow's 99th-percentile request completion time over the interval,
	// any other flow's 99th-percentile RTT; 0 where the source could not
	// tell. Empty when no sample had one.
	Latency []float64 `json:"latency,omitempty"`
	// Demand holds what the application asked for over each sample's
	// interval, bytes/s of payload (0 in an onoff flow's gaps); empty for
	// bulk.
	Demand []float64 `json:"demand,omitempty"`
	// SLO is an rr flow's completion time objective, seconds.
	SLO float64 `json:"slo,omitempty"`
}

// switchName names switch k for reports.
func (e *Episode) switchName(k int) string {
	if k >= 0 && k < len(e.Switches) {
		return e.Switches[k]
	}
	return fmt.Sprintf("#%d", k)
}

// Reroute is one move of the protected flow.
type Reroute struct {
	// At is the decision time in seconds since congestion start.
	At float64 `json:"at"`
	// From and To are switch indexes.
	From int `json:"from"`
	To   int `json:"to"`
	// Overflow is ξ on the old switch in the sample that triggered the move, bytes/s.
	Overflow float64 `json:"overflow"`
}

// id names the episode in errors: scenario/policy/repeat.
func (e *Episode) id() string {
	return fmt.Sprintf("eval: episode %s/%s/%d", e.Scenario, e.Policy, e.Repeat)
}

// Validate checks that the series line up and hold usable numbers.
func (e *Episode) Validate() error {
	id := e.id()
	switch {
	case e.Scenario == "" || e.Policy == "":
		return fmt.Errorf("%s: scenario and policy names are required", id)
	case len(e.T) == 0:
		return fmt.Errorf("%s: no samples", id)
	case len(e.Throughput) != len(e.T) || len(e.Overflow) != len(e.T):
		return fmt.Errorf("%s: %d times, %d throughput and %d overflow samples, want equal lengths",
			id, len(e.T), len(e.Throughput), len(e.Overflow))
	case !(e.Baseline > 0) || math.IsInf(e.Baseline, 0):
		return fmt.Errorf("%s: baseline throughput %v, want a positive rate", id, e.Baseline)
	}
	for i := range e.T {
		if i > 0 && !(e.T[i] > e.T[i-1]) {
			return fmt.Errorf("%s: sample %d at %vs does not follow %vs", id, i, e.T[i], e.T[i-1])
		}
		for _, v := range [...]float64{e.T[i], e.Throughput[i], e.Overflow[i]} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s: sample %d holds %v, want finite values", id, i, v)
			}
		}
	}
	for i := 1; i < len(e.Reroutes); i++ {
		if e.Reroutes[i].At < e.Reroutes[i-1].At {
			return fmt.Errorf("%s: reroute %d at %vs precedes reroute %d at %vs", id, i, e.Reroutes[i].At, i-1, e.Reroutes[i-1].At)
		}
	}
	return e.validateKind()
}

// inWindow reports whether the sample at t seconds after congestion start
// is one of the evaluation window's: a sample stands for the interval that
// ends at it, so the window (0, window] holds the samples of every interval
// after congestion start up to the window's end, and not the sample at 0,
// whose interval ends as congestion starts.
func inWindow(t, window float64) bool { return t > 0 && t <= window }

// checkWindow reports an episode without a sample in (0, window]: its mean
// throughput would be NaN and poison every mean, gain and test it enters.
func (e *Episode) checkWindow(window float64) error {
	for _, t := range e.T {
		if inWindow(t, window) {
			return nil
		}
	}
	span := "no samples"
	if len(e.T) > 0 {
		span = fmt.Sprintf("samples span [%vs, %vs]", e.T[0], e.T[len(e.T)-1])
	}
	return fmt.Errorf("%s: no sample in the evaluation window (0s, %vs] after congestion start (%s)", e.id(), window, span)
}

// meanThroughput is the mean of φ over the window's samples (inWindow),
// bytes/s; NaN if there is none (Summarize refuses such episodes, see
// checkWindow).
func (e *Episode) meanThroughput(window float64) float64 {
	sum, n := 0.0, 0
	for i, t := range e.T {
		if inWindow(t, window) {
			sum += e.Throughput[i]
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// reroute returns the i-th reroute inside [0, window), or false.
func (e *Episode) reroute(i int, window float64) (Reroute, bool) {
	n := 0
	for _, r := range e.Reroutes {
		if r.At < 0 || r.At >= window {
			continue
		}
		if n == i {
			return r, true
		}
		n++
	}
	return Reroute{}, false
}

// degradation returns the time of the window's first sample (inWindow) at
// which φ is below frac of the baseline, or false if none is.
func (e *Episode) degradation(frac, window float64) (float64, bool) {
	for i, t := range e.T {
		if inWindow(t, window) && e.Throughput[i] < frac*e.Baseline {
			return t, true
		}
	}
	return 0, false
}

// belowSeconds returns the time in the window during which φ is below
// frac of the baseline, seconds: each of the window's samples (inWindow)
// stands for its interval (span).
func (e *Episode) belowSeconds(frac, window float64) float64 {
	total := 0.0
	for i, t := range e.T {
		if !inWindow(t, window) || !(e.Throughput[i] < frac*e.Baseline) {
			continue
		}
		total += e.span(i)
	}
	return total
}

// span returns the time sample i stands for: its interval, from the
// previous sample (the first sample: the spacing after it), clipped at
// congestion start.
func (e *Episode) span(i int) float64 {
	t := e.T[i]
	var dt float64
	switch {
	case i > 0:
		dt = t - e.T[i-1]
	case i+1 < len(e.T):
		dt = e.T[i+1] - t
	}
	return math.Min(dt, t)
}
