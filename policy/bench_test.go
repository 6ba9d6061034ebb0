package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/telemetry"
)

// BenchmarkDecision measures one decision of the learned policy for the
// paper's topology (4 switches, 3 congestion leaves) with the default
// architecture: encode the observation, score with the agent, apply the
// gate; v1 in the paper's state layout (34→256→256→4), v2 in layout v2
// (40→256→256→4, the committed testbed model's).
func BenchmarkDecision(b *testing.B) {
	for _, layout := range []struct{ name, layout string }{{"v1", telemetry.StateLayout}, {"v2", telemetry.StateLayoutV2}} {
		encCfg := paperEncoder().WithLayout(layout.layout)
		m, meta := testModel(b, encCfg)
		b.Run(layout.name, func(b *testing.B) { benchmarkDecision(b, m, meta, encCfg, false) })
	}
}

// BenchmarkDecisionUniversal measures one decision, as BenchmarkDecision,
// of a universal agent (random 41→128→128→1 in layout v2): encode the
// observation, encode its candidate rows and score them in one batch of
// |S| rows, apply the gate; on the paper's 4 switches and 3 congestion
// leaves, and on 16 switches and 8 leaves.
func BenchmarkDecisionUniversal(b *testing.B) {
	m, meta := universalModel(b, 128, 128)
	for _, size := range [][2]int{{4, 3}, {16, 8}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			benchmarkDecision(b, m, meta, fabricEncoder(size[0], size[1], proflow.PaperTopology().BucketRate), false)
		})
	}
}

// BenchmarkDecisionForecast measures one decision as
// BenchmarkDecisionUniversal/4x3 does, plus the dynamics model's forecast
// of the flow's next sample that the committed gate counts (a random
// dynamics network of the default shape, state and switch one-hot →
// 256 → 256 → state change, Agent.Forecast), behind the committed gate's
// settings (models/gate-testbed.json: the forecast's distress, Pareto,
// the idle waiver, remembered votes and the reserve's hold), decision
// time advancing by the interval.
func BenchmarkDecisionForecast(b *testing.B) {
	m, meta := universalModel(b, 128, 128)
	benchmarkDecision(b, m, meta, fabricEncoder(4, 3, proflow.PaperTopology().BucketRate), true)
}

// benchmarkDecision measures decisions of the agent of m for deployment
// encCfg on a random observation of its fabric; with forecast, the agent
// also forecasts with a random dynamics network and the gate counts it.
func benchmarkDecision(b *testing.B, m *qnet.Model, meta qnet.Metadata, encCfg telemetry.EncoderConfig, forecast bool) {
	agent, err := NewAgent(m, meta, encCfg)
	if err != nil {
		b.Fatal(err)
	}
	gateCfg := DefaultGateConfig()
	if forecast {
		ec := agent.EncoderConfig()
		dn, err := qnet.New([]int{ec.Dim() + ec.NumSwitches, 256, 256, ec.Dim()}, rand.New(rand.NewPCG(7, 8)))
		if err != nil {
			b.Fatal(err)
		}
		f, err := NewForecast(dn, ec)
		if err != nil {
			b.Fatal(err)
		}
		if err := agent.SetForecast(f); err != nil {
			b.Fatal(err)
		}
		if gateCfg, err = LoadGateConfig("../models/gate-testbed.json"); err != nil {
			b.Fatal(err)
		}
		if !gateCfg.Distress.Forecast {
			b.Fatal("models/gate-testbed.json counts no forecast; this benchmark measures a gate that does")
		}
	}
	enc, err := telemetry.NewEncoder(agent.EncoderConfig())
	if err != nil {
		b.Fatal(err)
	}
	if err := enc.SetBaseline(proflow.Baseline{Overflow: 23000, FlowCount: 2, Throughput: 23e6}); err != nil {
		b.Fatal(err)
	}
	gate, err := NewGate(gateCfg)
	if err != nil {
		b.Fatal(err)
	}

	rng := rand.New(rand.NewPCG(5, 5))
	obs := &proflow.Observation{Time: t0, Switches: make([]proflow.SwitchSample, encCfg.NumSwitches), Leaves: make([]proflow.LeafSample, encCfg.NumLeaves)}
	for k := range obs.Switches {
		obs.Switches[k] = proflow.SwitchSample{TxRate: 2e7 * rng.Float64(), OverflowRate: 3e4 * rng.Float64(),
			FlowCount: float64(2 * rng.IntN(8)), ElephantRate: 1e7 * rng.Float64(), QueueBytes: 1e5 * rng.Float64()}
	}
	for l := range obs.Leaves {
		obs.Leaves[l] = proflow.LeafSample{IngressRate: 3e7 * rng.Float64(), TransmitRate: 2e7 * rng.Float64()}
	}
	obs.Flow = proflow.FlowSample{Throughput: 2.2e7, CongestionRate: 5e7, SmoothedRTT: 0.05, RTTP99: 0.053, AppLimited: 0.2}

	state := make(proflow.State, enc.Dim())
	d := proflow.Decision{Scores: make([]float64, encCfg.NumSwitches)}
	in := proflow.Input{Obs: obs, State: state}
	b.ReportAllocs()
	now := obs.Time
	for b.Loop() {
		now = now.Add(500 * time.Millisecond)
		d.Time, d.Current, d.Load = now, 0, 1.2
		if err := enc.Encode(state, obs, d.Current); err != nil {
			b.Fatal(err)
		}
		in.Time, in.Current = d.Time, d.Current
		if err := agent.Score(d.Scores, &in); err != nil {
			b.Fatal(err)
		}
		if err := agent.Forecast(&d.Forecast, &in); err != nil {
			b.Fatal(err)
		}
		d.Throughput = obs.Flow.Throughput
		gate.Admit(&d)
	}
}

// BenchmarkScoreBatchUniversal measures the agent's share of one step of
// 10,000 protected flows (BenchmarkMultiControllerStepAgent in package
// proflow has the whole step): one Agent.ScoreBatch of 10,000 encoded
// states, for a universal agent (random 41→128→128→1, layout v2) on 4
// switches and 3 leaves and on 16 switches and 8 leaves, and for a
// per-fabric agent of the same width (40→128→128→4) on 4 switches for
// comparison. Run it on one core: -cpu 1.
func BenchmarkScoreBatchUniversal(b *testing.B) {
	const n = 10000
	rate := proflow.PaperTopology().BucketRate
	um, umeta := universalModel(b, 128, 128)
	v2 := fabricEncoder(4, 3, rate).WithLayout(telemetry.StateLayoutV2)
	pm, err := qnet.New([]int{v2.Dim(), 128, 128, v2.NumSwitches}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    *qnet.Model
		meta qnet.Metadata
		enc  telemetry.EncoderConfig
	}{
		{"universal/4x3", um, umeta, fabricEncoder(4, 3, rate)},
		{"universal/16x8", um, umeta, fabricEncoder(16, 8, rate)},
		{"per-fabric/4x3", pm, qnet.NewMetadata(v2), v2},
	} {
		b.Run(tc.name, func(b *testing.B) {
			agent, err := NewAgent(tc.m, tc.meta, tc.enc)
			if err != nil {
				b.Fatal(err)
			}
			enc := agent.EncoderConfig()
			in := &proflow.BatchInput{N: n, Dim: enc.Dim(), States: placedStates(rand.New(rand.NewPCG(3, 4)), enc, n)}
			scores := make([]float64, n*enc.NumSwitches)
			if err := agent.ScoreBatch(scores, in); err != nil { // grow the buffers
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := agent.ScoreBatch(scores, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/flow")
		})
	}
}
