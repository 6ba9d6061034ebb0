package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/proflow-sdn/proflow"
)

// Format is the value of Meta.Format for this version of the format.
const Format = "proflow-trace/1"

// Meta describes one episode. It is the first line of a trace.
type Meta struct {
	// Format is always Format; Writer fills it in.
	Format string `json:"format"`
	// Source names what produced the trace: "sim" for the simulated fabric,
	// or the southbound of a real fabric ("openflow", "p4runtime", …).
	Source string `json:"source"`
	// Scenario names the traffic scenario (for example "S1"); free text on
	// a real fabric.
	Scenario string `json:"scenario,omitempty"`
	// Policy names the policy under control (for example "reactive").
	Policy string `json:"policy,omitempty"`
	// Seed is the random seed of a simulated episode.
	Seed uint64 `json:"seed"`
	// Topology is the fabric the controller reasoned about; it fixes the
	// switch and leaf indices of every step.
	Topology proflow.Topology `json:"topology"`
	// Flow is the protected flow.
	Flow proflow.FlowID `json:"flow"`
	// InitialSwitch is the switch index carrying the flow at Start.
	InitialSwitch int `json:"initial_switch"`
	// Interval is the control interval.
	Interval Duration `json:"interval"`
	// Start is when the episode began (virtual time in a simulation).
	Start time.Time `json:"start"`
	// CongestionStart is when the evaluation window opened; zero if unknown.
	CongestionStart time.Time `json:"congestion_start,omitzero"`
	// End is when the episode was planned to end; zero if unknown.
	End time.Time `json:"end,omitzero"`
	// SimConfig holds the simulator's configuration (package
	// southbound/sim's Config as JSON), so an episode can be replayed; empty
	// for a real fabric.
	SimConfig json.RawMessage `json:"sim_config,omitempty"`
	// Labels holds free-form annotations.
	Labels map[string]string `json:"labels,omitempty"`
}

// Validate checks the metadata: the format, a valid topology and flow, an
// initial switch in range and a positive interval.
func (m *Meta) Validate() error {
	var errs []error
	if m.Format != Format {
		errs = append(errs, fmt.Errorf("format %q, want %q", m.Format, Format))
	}
	if err := m.Topology.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := m.Flow.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("flow: %w", err))
	}
	if n := m.Topology.NumSwitches(); m.InitialSwitch < 0 || m.InitialSwitch >= n {
		errs = append(errs, fmt.Errorf("initial_switch %d, want 0..%d", m.InitialSwitch, n-1))
	}
	if m.Interval <= 0 {
		errs = append(errs, fmt.Errorf("interval %v, want a positive duration", m.Interval))
	}
	if m.Start.IsZero() {
		errs = append(errs, errors.New("start unset, want the episode's start time"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("trace: invalid metadata: %w", err)
	}
	return nil
}

// Step is one control interval: what the controller observed, where the
// flow was, what it decided and what the flow achieved.
type Step struct {
	// Seq numbers the steps from 1 (proflow.Decision.Seq).
	Seq uint64 `json:"seq"`
	// Time is when the step ran.
	Time time.Time `json:"time"`
	// Obs is the observation the step acted on, as measured; nil when the
	// step had none that passed validation (a telemetry error).
	Obs *proflow.Observation `json:"obs,omitempty"`
	// Switch is the index of the switch that carried the protected flow
	// during the interval Obs covers (proflow.Decision.Current).
	Switch int `json:"switch"`
	// Decision is the controller's decision.
	Decision Decision `json:"decision"`
	// Throughput is the protected flow's throughput over the interval,
	// bytes/s: the ground truth without measurement noise in a simulation,
	// the measured value on a real fabric.
	Throughput float64 `json:"throughput"`
	// Recheck is the recheck the controller made within the interval
	// after the step, of a move its gate deferred (Decision.Recheck); nil
	// when it made none.
	Recheck *Recheck `json:"recheck,omitempty"`
}

// Recheck is a controller's recheck of a deferred move
// (proflow.Controller.Recheck).
type Recheck struct {
	// Time is when the recheck ran, after its step's and before the next.
	Time time.Time `json:"time"`
	// Load is the current switch's load over the time since the step's
	// sample (proflow.Decision.Load).
	Load float64 `json:"load"`
	// Decision is what the recheck decided; it moved the flow when
	// Rerouted is set.
	Decision Decision `json:"decision"`
}

// Action returns the switch that carries the flow after the step: the
// target of a reroute, the step's or its recheck's, else Switch. It is the
// action a of the transition (s, a, r, s') that starts at this step.
func (s *Step) Action() int {
	if to, _, ok := s.Moved(); ok {
		return to
	}
	return s.Switch
}

// Moved reports whether the flow moved at the step or at its recheck, and
// then to which switch and when.
func (s *Step) Moved() (to int, at time.Time, ok bool) {
	switch {
	case s.Decision.Rerouted:
		return s.Decision.Target, s.Time, true
	case s.Recheck != nil && s.Recheck.Decision.Rerouted:
		return s.Recheck.Decision.Target, s.Recheck.Time, true
	}
	return s.Switch, time.Time{}, false
}

// Decision is the part of a proflow.Decision a trace keeps: everything but
// the wall-clock latency (which would make simulated traces differ from run
// to run) and with the error as text.
type Decision struct {
	Reason   proflow.Reason `json:"reason"`
	Scores   []float64      `json:"scores,omitempty"`
	Best     int            `json:"best"`
	Margin   float64        `json:"margin"`
	Votes    int            `json:"votes"`
	Cooldown Duration       `json:"cooldown"`
	Target   int            `json:"target"`
	Rerouted bool           `json:"rerouted"`
	Error    string         `json:"error,omitempty"`
	// Recheck is how long after the step the gate asked to recheck a move
	// it deferred (proflow.Decision.Recheck); 0 for none.
	Recheck Duration `json:"recheck,omitempty"`
	// Forecast is the policy's forecast of the flow's next sample if it
	// stays (proflow.Decision.Forecast), absent when it made none.
	Forecast *Forecast `json:"forecast,omitempty"`
}

// Forecast is a proflow.FlowForecast that was made.
type Forecast struct {
	// Throughput is the forecast throughput, bytes/s.
	Throughput float64 `json:"throughput"`
	// AppLimited is the forecast share of the interval the sender is
	// application-limited, in [0, 1].
	AppLimited float64 `json:"app_limited"`
}

// FromDecision converts a controller decision, copying its scores.
func FromDecision(d proflow.Decision) Decision {
	out := Decision{
		Reason: d.Reason, Best: d.Best, Margin: d.Margin, Votes: d.Votes,
		Cooldown: Duration(d.Cooldown), Target: d.Target, Rerouted: d.Rerouted, Recheck: Duration(d.Recheck),
	}
	if len(d.Scores) > 0 {
		out.Scores = append([]float64(nil), d.Scores...)
	}
	if d.Err != nil {
		out.Error = d.Err.Error()
	}
	if d.Forecast.OK {
		out.Forecast = &Forecast{Throughput: d.Forecast.Throughput, AppLimited: d.Forecast.AppLimited}
	}
	return out
}

// Validate checks a step against the episode's metadata: indices in range,
// one score per switch (or none), finite numbers, an observation that
// passes proflow.Observation.Validate with valid flow IDs
// (proflow.FlowID.Validate, which reading them back requires), and a
// reroute that moves the flow.
func (s *Step) Validate(m *Meta) error {
	n := m.Topology.NumSwitches()
	d := &s.Decision
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if s.Seq == 0 {
		add("seq 0, want steps numbered from 1")
	}
	if s.Time.IsZero() {
		add("time unset")
	}
	if s.Switch < 0 || s.Switch >= n {
		add("switch %d, want 0..%d", s.Switch, n-1)
	}
	if s.Obs != nil {
		if err := s.Obs.Validate(m.Topology); err != nil {
			errs = append(errs, fmt.Errorf("obs: %w", err))
		}
		for i, id := range s.Obs.FlowIDs {
			if err := id.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("obs: flow_ids[%d]: %w", i, err))
			}
		}
	}
	if d.Reason == "" {
		add("decision.reason empty")
	}
	if len(d.Scores) != 0 && len(d.Scores) != n {
		add("decision.scores has %d values, want %d (one per switch) or none", len(d.Scores), n)
	}
	for k, v := range d.Scores {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			add("decision.scores[%d] is %v, want a finite number", k, v)
		}
	}
	if d.Best < -1 || d.Best >= n {
		add("decision.best %d, want -1 or 0..%d", d.Best, n-1)
	}
	if d.Target < -1 || d.Target >= n {
		add("decision.target %d, want -1 or 0..%d", d.Target, n-1)
	}
	if d.Rerouted && (d.Target < 0 || d.Target == s.Switch) {
		add("decision.rerouted with target %d from switch %d, want another switch", d.Target, s.Switch)
	}
	if d.Recheck < 0 {
		add("decision.recheck %v, want >= 0", time.Duration(d.Recheck))
	}
	if r := s.Recheck; r != nil {
		rd := &r.Decision
		switch {
		case d.Rerouted:
			add("a recheck after a step that rerouted, want one only after a deferred move")
		case !r.Time.Round(0).After(s.Time.Round(0)):
			add("recheck.time %s, want after the step's %s", r.Time.Format(time.RFC3339Nano), s.Time.Format(time.RFC3339Nano))
		case !(r.Load >= 0) || math.IsInf(r.Load, 0):
			add("recheck.load %v, want a finite ratio >= 0", r.Load)
		case rd.Target < -1 || rd.Target >= n:
			add("recheck.decision.target %d, want -1 or 0..%d", rd.Target, n-1)
		case rd.Rerouted && (rd.Target < 0 || rd.Target == s.Switch):
			add("recheck.decision.rerouted with target %d from switch %d, want another switch", rd.Target, s.Switch)
		}
	}
	if math.IsNaN(d.Margin) || math.IsInf(d.Margin, 0) {
		add("decision.margin is %v, want a finite number", d.Margin)
	}
	if d.Votes < 0 || d.Cooldown < 0 {
		add("decision.votes %d and cooldown %v, want non-negative", d.Votes, d.Cooldown)
	}
	if !(s.Throughput >= 0) || math.IsInf(s.Throughput, 0) {
		add("throughput %v, want a finite number >= 0", s.Throughput)
	}
	if f := d.Forecast; f != nil && (!(f.Throughput >= 0) || math.IsInf(f.Throughput, 0) || !(f.AppLimited >= 0 && f.AppLimited <= 1)) {
		add("decision.forecast throughput %v and app-limited share %v, want a finite number >= 0 and a share in [0, 1]", f.Throughput, f.AppLimited)
	}
	return errors.Join(errs...)
}

// Episode is a whole trace in memory.
type Episode struct {
	Meta  Meta
	Steps []Step
}

// Validate checks the metadata, every step, and that steps are numbered
// and timed in increasing order (by the wall clock, as a trace records it).
func (e *Episode) Validate() error {
	if err := e.Meta.Validate(); err != nil {
		return err
	}
	var prev *Step
	for i := range e.Steps {
		s := &e.Steps[i]
		if err := checkStep(&e.Meta, prev, s); err != nil {
			return fmt.Errorf("trace: step %d: %w", i, err)
		}
		prev = s
	}
	return nil
}

func checkStep(m *Meta, prev, s *Step) error {
	if err := s.Validate(m); err != nil {
		return err
	}
	if prev != nil {
		if s.Seq <= prev.Seq {
			return fmt.Errorf("seq %d does not follow %d", s.Seq, prev.Seq)
		}
		// By the wall clock, the only one a trace records: Round(0) strips a
		// monotonic reading, which After would otherwise compare instead.
		if !s.Time.Round(0).After(prev.Time.Round(0)) {
			return fmt.Errorf("time %s is not after the previous step's %s",
				s.Time.Format(time.RFC3339Nano), prev.Time.Format(time.RFC3339Nano))
		}
	}
	return nil
}

// Duration is a time.Duration written in JSON as a Go duration string
// ("500ms").
type Duration time.Duration

// MarshalText writes d like time.Duration.String.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("trace: duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }
