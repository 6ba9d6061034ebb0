package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// BenchmarkDecision measures one decision of the learned policy for the
// paper's topology (4 switches, 3 congestion leaves) with the default
// architecture 34→256→256→4: encode the observation, score with the agent,
// apply the gate.
func BenchmarkDecision(b *testing.B) {
	encCfg := paperEncoder()
	enc, err := telemetry.NewEncoder(encCfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := enc.SetBaseline(proflow.Baseline{Overflow: 23000, FlowCount: 2, Throughput: 23e6}); err != nil {
		b.Fatal(err)
	}
	m, meta := testModel(b, encCfg)
	agent, err := NewAgent(m, meta, encCfg)
	if err != nil {
		b.Fatal(err)
	}
	gate, err := NewGate(DefaultGateConfig())
	if err != nil {
		b.Fatal(err)
	}

	rng := rand.New(rand.NewPCG(5, 5))
	obs := &proflow.Observation{Time: t0, Switches: make([]proflow.SwitchSample, 4), Leaves: make([]proflow.LeafSample, 3)}
	for k := range obs.Switches {
		obs.Switches[k] = proflow.SwitchSample{TxRate: 2e7 * rng.Float64(), OverflowRate: 3e4 * rng.Float64(),
			FlowCount: float64(2 * rng.IntN(8)), ElephantRate: 1e7 * rng.Float64()}
	}
	for l := range obs.Leaves {
		obs.Leaves[l] = proflow.LeafSample{IngressRate: 3e7 * rng.Float64(), TransmitRate: 2e7 * rng.Float64()}
	}
	obs.Flow = proflow.FlowSample{Throughput: 2.2e7, CongestionRate: 5e7}

	state := make(proflow.State, enc.Dim())
	d := proflow.Decision{Scores: make([]float64, 4)}
	in := proflow.Input{Obs: obs, State: state}
	b.ReportAllocs()
	for b.Loop() {
		d.Time, d.Current = obs.Time, 0
		if err := enc.Encode(state, obs, d.Current); err != nil {
			b.Fatal(err)
		}
		in.Time, in.Current = d.Time, d.Current
		if err := agent.Score(d.Scores, &in); err != nil {
			b.Fatal(err)
		}
		gate.Admit(&d)
	}
}
