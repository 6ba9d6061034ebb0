package eval

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// BaselineWindow is how much of the pre-congestion phase FromTrace averages
// to get an episode's baseline throughput.
const BaselineWindow = 10 * time.Second

// FromTrace converts a recorded episode for evaluation. Times become seconds
// since the trace's congestion start; the throughput is the step's
// Throughput (ground truth in a simulation); the overflow is the observed ξ
// of the switch carrying the flow; the baseline is the mean throughput over
// the BaselineWindow before congestion starts; the latency is the
// observation's (see Episode.Latency). The repeat number comes from
// the "repeat" label when present, else from repeat. A step whose switch
// index is outside the topology (or outside its observation) is an error.
func FromTrace(ep *trace.Episode, repeat int) (*Episode, error) {
	if ep == nil {
		return nil, fmt.Errorf("eval: trace is nil")
	}
	if err := checkSwitches(ep); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	m := &ep.Meta
	if m.CongestionStart.IsZero() {
		return nil, fmt.Errorf("eval: trace %s/%s seed %d has no congestion start", m.Scenario, m.Policy, m.Seed)
	}
	if r, ok := m.Labels["repeat"]; ok {
		n, err := strconv.Atoi(r)
		if err != nil {
			return nil, fmt.Errorf("eval: trace %s/%s label repeat=%q, want an integer", m.Scenario, m.Policy, r)
		}
		repeat = n
	}
	e := &Episode{Scenario: m.Scenario, Policy: m.Policy, Repeat: repeat, Seed: m.Seed, Switches: m.Topology.Switches}
	var base []float64
	overflow := 0.0
	for i := range ep.Steps {
		st := &ep.Steps[i]
		t := st.Time.Sub(m.CongestionStart).Seconds()
		if st.Obs != nil {
			overflow = st.Obs.Switches[st.Switch].OverflowRate
		}
		e.T = append(e.T, t)
		e.Throughput = append(e.Throughput, st.Throughput)
		e.Overflow = append(e.Overflow, overflow)
		e.Latency = append(e.Latency, latencyOf(st))
		if t <= 0 && t > -BaselineWindow.Seconds() { // the intervals before congestion start
			base = append(base, st.Throughput)
		}
		if to, at, ok := st.Moved(); ok {
			e.Reroutes = append(e.Reroutes, Reroute{At: at.Sub(m.CongestionStart).Seconds(), From: st.Switch, To: to, Overflow: overflow})
		}
	}
	if !slices.ContainsFunc(e.Latency, func(v float64) bool { return v != 0 }) {
		e.Latency = nil
	}
	e.Baseline = mean(base)
	if len(base) == 0 {
		return nil, fmt.Errorf("eval: trace %s/%s seed %d has no samples in the %v before congestion", m.Scenario, m.Policy, m.Seed, BaselineWindow)
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// checkSwitches checks that every step's switch index lies in the trace's
// topology and, where the step has an observation, in its switches, so
// that indexing by it cannot panic.
func checkSwitches(ep *trace.Episode) error {
	m := &ep.Meta
	n := m.Topology.NumSwitches()
	for i := range ep.Steps {
		st := &ep.Steps[i]
		if st.Switch < 0 || st.Switch >= n {
			return fmt.Errorf("trace %s/%s seed %d: step %d: switch %d, want 0..%d (the topology's %d switches)",
				m.Scenario, m.Policy, m.Seed, i, st.Switch, n-1, n)
		}
		if st.Obs != nil && st.Switch >= len(st.Obs.Switches) {
			return fmt.Errorf("trace %s/%s seed %d: step %d: switch %d, but the observation has %d switch samples, want one per switch (%d)",
				m.Scenario, m.Policy, m.Seed, i, st.Switch, len(st.Obs.Switches), n)
		}
	}
	return nil
}
