package sim_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
)

// referenceFactories returns the four policies of the benchmark sweep:
// static, reactive, crowd (with the immediate gate) and a learned agent
// with random weights behind the default stability gate. The agent's
// decisions are meaningless; it costs what a trained one costs.
func referenceFactories(tb testing.TB) map[string]sim.PolicyFactory {
	encoder := func(topo proflow.Topology) (*telemetry.Encoder, error) {
		return telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
	}
	return map[string]sim.PolicyFactory{
		"static": func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			enc, err := encoder(topo)
			return enc, policy.Static{}, policy.Immediate(), err
		},
		"reactive": func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			enc, err := encoder(topo)
			if err != nil {
				return nil, nil, nil, err
			}
			p, err := policy.NewReactive(policy.DefaultReactiveConfig())
			return enc, p, policy.Immediate(), err
		},
		"crowd": func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			enc, err := encoder(topo)
			if err != nil {
				return nil, nil, nil, err
			}
			p, err := policy.NewCrowd(policy.DefaultCrowdConfig())
			return enc, p, policy.Immediate(), err
		},
		"agent": func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			enc, err := encoder(topo)
			if err != nil {
				return nil, nil, nil, err
			}
			ec := enc.Config()
			m, err := qnet.New([]int{ec.Dim(), 64, 64, ec.NumSwitches}, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				return nil, nil, nil, err
			}
			a, err := policy.NewAgent(m, qnet.NewMetadata(ec), ec)
			if err != nil {
				return nil, nil, nil, err
			}
			g, err := policy.NewGate(policy.DefaultGateConfig())
			return enc, a, g, err
		},
	}
}

// BenchmarkEpisodeS1 runs one S1 episode (140 s of virtual time) under a
// controller with the default encoder and the static policy, on each
// built-in profile, and reports simulated seconds per wall-clock second.
func BenchmarkEpisodeS1(b *testing.B) {
	sc := mustScenario(b, "S1")
	factory := referenceFactories(b)["static"]
	for _, name := range sim.Profiles() {
		cfg, err := sim.ProfileConfig(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{Scenario: sc, Seed: uint64(i), Config: cfg, NewPolicy: factory}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(sc.Length().Seconds()*float64(b.N)/b.Elapsed().Seconds(), "sim-s/s")
		})
	}
}

// BenchmarkSweep runs the evaluation sweep on each built-in profile: the 14
// scenarios of the paper × 4 policies × 3 repeats (168 episodes, 6.5 h of
// virtual time) at parallelism 2, and reports its wall-clock time.
func BenchmarkSweep(b *testing.B) {
	factories := referenceFactories(b)
	for _, name := range sim.Profiles() {
		cfg, err := sim.ProfileConfig(name)
		if err != nil {
			b.Fatal(err)
		}
		var specs []sim.EpisodeSpec
		var virtual time.Duration
		for _, sn := range sim.BuiltinScenarios() {
			if sn[0] != 'S' && sn[0] != 'C' {
				continue // the paper's 14
			}
			sc := mustScenario(b, sn)
			for _, p := range []string{"static", "reactive", "crowd", "agent"} {
				for repeat := range 3 {
					specs = append(specs, sim.EpisodeSpec{Scenario: sc, Seed: uint64(repeat + 1), Config: cfg, Policy: p, NewPolicy: factories[p]})
					virtual += sc.Length()
				}
			}
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := sim.RunMany(context.Background(), specs, 2, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sweep")
			b.ReportMetric(virtual.Seconds()*float64(b.N)/b.Elapsed().Seconds(), "sim-s/s")
			b.ReportMetric(float64(len(specs)), "episodes")
		})
	}
}
