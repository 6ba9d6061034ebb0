package eval

import (
	"fmt"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
)

// OracleName is the name of the oracle reference policy in reports.
const OracleName = "oracle"

// OraclePolicy returns the oracle: a reference policy that is NOT
// deployable, because it reads the scenario instead of telemetry. At
// congestion start it moves the protected flow, once, to the switch the
// scenario loads least over the evaluation window (Scenario.WindowLoad),
// and stays there; ties keep the current switch, then go to the lowest
// index. It is the ceiling a policy that sees only telemetry is measured
// against: perfect foresight of where congestion will be, at the earliest
// moment it could matter, paying one move's cost.
//
// The returned spec builds its policy per scenario (PolicySpec.ForScenario);
// its New refuses to build one without a scenario.
func OraclePolicy() PolicySpec {
	return PolicySpec{
		Name: OracleName,
		New: func(proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			return nil, nil, nil, fmt.Errorf("eval: the %s policy reads the scenario; build it with ForScenario", OracleName)
		},
		ForScenario: func(sc *sim.Scenario, cfg sim.Config) (sim.PolicyFactory, error) {
			load, err := sc.WindowLoad(cfg)
			if err != nil {
				return nil, fmt.Errorf("eval: %s: %w", OracleName, err)
			}
			start := cfg.Epoch.Add(sc.Start())
			return func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
				enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
				if err != nil {
					return nil, nil, nil, err
				}
				if len(load) != topo.NumSwitches() {
					return nil, nil, nil, fmt.Errorf("eval: %s: scenario load for %d switches, topology has %d", OracleName, len(load), topo.NumSwitches())
				}
				return enc, &oracle{load: load, start: start}, policy.Immediate(), nil
			}, nil
		},
	}
}

// oracle is the policy OraclePolicy builds for one scenario.
type oracle struct {
	load  []float64 // per switch, host-seconds over the window
	start time.Time // congestion start
	moved bool      // the one decision has been made
}

// Score keeps the current switch until congestion start, then once scores
// the least-loaded switch above it.
func (o *oracle) Score(scores []float64, in *proflow.Input) error {
	if in == nil || in.Current < 0 || in.Current >= len(scores) || len(scores) != len(o.load) {
		return fmt.Errorf("eval: %s: input for %d scores, want a current switch among %d", OracleName, len(scores), len(o.load))
	}
	clear(scores)
	scores[in.Current] = 1
	if o.moved || in.Time.Before(o.start) {
		return nil
	}
	o.moved = true
	best := in.Current
	for k, l := range o.load {
		if l < o.load[best] {
			best = k
		}
	}
	scores[best] = 2
	return nil
}

// Reset forgets the decision, for a new episode.
func (o *oracle) Reset() { o.moved = false }
