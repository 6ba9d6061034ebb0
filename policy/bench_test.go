package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// BenchmarkDecision measures one decision of the learned policy for the
// paper's topology (4 switches, 3 congestion leaves) with the default
// architecture: encode the observation, score with the agent, apply the
// gate; v1 in the paper's state layout (34→256→256→4), v2 in layout v2
// (40→256→256→4, the committed testbed model's).
func BenchmarkDecision(b *testing.B) {
	for _, layout := range []struct{ name, layout string }{{"v1", telemetry.StateLayout}, {"v2", telemetry.StateLayoutV2}} {
		b.Run(layout.name, func(b *testing.B) { benchmarkDecision(b, paperEncoder().WithLayout(layout.layout)) })
	}
}

func benchmarkDecision(b *testing.B, encCfg telemetry.EncoderConfig) {
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
			FlowCount: float64(2 * rng.IntN(8)), ElephantRate: 1e7 * rng.Float64(), QueueBytes: 1e5 * rng.Float64()}
	}
	for l := range obs.Leaves {
		obs.Leaves[l] = proflow.LeafSample{IngressRate: 3e7 * rng.Float64(), TransmitRate: 2e7 * rng.Float64()}
	}
	obs.Flow = proflow.FlowSample{Throughput: 2.2e7, CongestionRate: 5e7, SmoothedRTT: 0.05, RTTP99: 0.053, AppLimited: 0.2}

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
