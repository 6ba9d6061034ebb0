package proflow_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/qnet"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
	"github.com/proflow-sdn/proflow/telemetry"
)

// runPair drives two MultiControllers, one scoring flow by flow and one
// with FlowParts.Batch, through the same world for steps steps and returns
// every flow's decisions from each (by flow, then step). world sets up
// step t before both controllers run it.
func runPair(t *testing.T, flows, steps int, clock *southboundtest.ManualClock, world func(step int), tel proflow.Telemetry,
	perFlow, batch proflow.FlowParts) (want, got [][]proflow.Decision) {
	t.Helper()
	var ctrls [2]*proflow.MultiController
	for c, parts := range [2]proflow.FlowParts{perFlow, batch} {
		cfg := proflow.DefaultMultiConfig()
		cfg.Clock = clock
		enf := proflow.EnforcerFunc(func(ctx context.Context, flow proflow.FlowID, sw int) error { return nil })
		m, err := proflow.NewMultiController(cfg, tel, parts, enf)
		if err != nil {
			t.Fatal(err)
		}
		for i := range flows {
			if err := m.AddFlow(proflow.ProtectedFlow{ID: flowN(i)}, i%4); err != nil {
				t.Fatal(err)
			}
		}
		ctrls[c] = m
	}
	want, got = make([][]proflow.Decision, flows), make([][]proflow.Decision, flows)
	for step := 1; step <= steps; step++ {
		clock.Advance(500 * time.Millisecond)
		world(step)
		for c, out := range [2][][]proflow.Decision{want, got} {
			for i, d := range ctrls[c].Step(t.Context()).Decisions {
				out[i] = append(out[i], d.Clone())
			}
		}
	}
	return want, got
}

// TestMultiControllerBatchMatchesPerFlow runs the scripted world of
// TestMultiControllerMatchesControllers (baseline phase, telemetry
// failures, a stale and an invalid sample, NaN scores, reroutes under a
// voting gate with a cooldown) through a controller scoring flow by flow
// and one scoring all flows with one BatchPolicy call per step, which gives
// each row the scores the per-flow policy gives: every decision is equal.
func TestMultiControllerBatchMatchesPerFlow(t *testing.T) {
	const flows, dim = 3, 8
	s := &scripted{topo: proflow.PaperTopology(), clock: southboundtest.NewManualClock(epoch)}
	tel := s.telemetry()
	// The per-flow scores, without the script's policy errors: a per-flow
	// error holds one flow, a batch error every flow (see the next test).
	scores := func(i int, dst []float64) { _ = s.scores(i, dst) }
	encoder := func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return &fakeEncoder{dim: dim}, nil }
	gate := func(proflow.ProtectedFlow) (proflow.Gate, error) { return comparisonGate(t), nil }
	perFlow := proflow.FlowParts{Encoder: encoder, Gate: gate,
		Policy: func(f proflow.ProtectedFlow) (proflow.Policy, error) {
			i := int(f.ID.SrcPort) - 5000
			return proflow.PolicyFunc(func(dst []float64, in *proflow.Input) error { scores(i, dst); return nil }), nil
		}}
	var batches, rows int
	batch := proflow.FlowParts{Encoder: encoder, Gate: gate,
		Batch: proflow.BatchPolicyFunc(func(dst []float64, in *proflow.BatchInput) error {
			batches++
			rows += in.N
			k := s.topo.NumSwitches()
			if in.Dim != dim || len(in.States) != in.N*dim || len(in.Flows) != in.N || len(in.Current) != in.N || len(dst) != in.N*k {
				t.Fatalf("step %d: batch of %d rows, dim %d, %d state values, %d flows, %d currents, %d scores",
					s.t, in.N, in.Dim, len(in.States), len(in.Flows), len(in.Current), len(dst))
			}
			for j, i := range in.Flows {
				// fakeEncoder writes every switch's overflow rate: the row is
				// this step's state.
				if got, want := in.States[j*dim+1], float32(in.Obs.Switches[1].OverflowRate); got != want {
					t.Errorf("step %d row %d: state[1] = %v, want the overflow rate %v", s.t, j, got, want)
				}
				if in.Obs.Flows[i] != s.sample(i) {
					t.Errorf("step %d row %d: Obs.Flows[%d] = %+v, want flow %d's sample", s.t, j, i, in.Obs.Flows[i], i)
				}
				scores(i, dst[j*k:(j+1)*k])
			}
			return nil
		})}
	want, got := runPair(t, flows, 60, s.clock, func(step int) { s.t = step }, tel, perFlow, batch)
	reasons := map[proflow.Reason]bool{}
	for i := range flows {
		if diff := cmp.Diff(want[i], got[i], decisionOpts, errorText, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("flow %d: decisions differ (-per flow +batch):\n%s", i, diff)
		}
		for _, d := range got[i] {
			reasons[d.Reason] = true
		}
	}
	for _, r := range []proflow.Reason{proflow.ReasonBaseline, proflow.ReasonTelemetry, proflow.ReasonStale,
		proflow.ReasonInvalid, proflow.ReasonPolicy, proflow.ReasonVotes, proflow.ReasonCooldown, proflow.ReasonRerouted} {
		if !reasons[r] {
			t.Errorf("no decision with reason %q: the script misses a path", r)
		}
	}
	if batches == 0 || rows <= batches {
		t.Errorf("%d ScoreBatch calls for %d rows, want calls of several rows", batches, rows)
	}
}

// TestMultiControllerBatchAgent runs the learned agent of the committed
// model on 40 flows of a fabric whose congestion moves from two switches
// to the other two, with noise, once
// through Agent.Score flow by flow and once through Agent.ScoreBatch: the
// decisions are equal, the Q-values and margins up to float32 rounding.
func TestMultiControllerBatchAgent(t *testing.T) {
	const flows = 40
	topo := proflow.PaperTopology()
	encCfg := telemetry.DefaultEncoderConfig(topo)
	agent, err := policy.LoadAgent("models/default.safetensors", encCfg)
	if err != nil {
		t.Fatal(err)
	}
	clock := southboundtest.NewManualClock(epoch)
	var step int
	tel := proflow.TelemetryFunc(func(ctx context.Context, obs *proflow.Observation) error {
		rng := rand.New(rand.NewPCG(uint64(step), 1))
		obs.Time = clock.Now()
		// After the baselines, switches 0 and 1 congest, then 2 and 3: a
		// crowd drains their buckets (transmit above the bucket rate,
		// overflow) and the flows first placed there (flow i on switch
		// i mod 4) collapse.
		congested := func(k int) bool { return (step > 15 && step <= 45 && k < 2) || (step > 45 && k >= 2) }
		for k := range obs.Switches {
			// A quiet switch carries a little background traffic; the
			// protected flows' own load is left out, as it moves with them.
			obs.Switches[k] = proflow.SwitchSample{TxRate: 1e6, FlowCount: 1}
			if congested(k) {
				obs.Switches[k].ElephantRate = 2e7
				obs.Switches[k].OverflowRate = 2e5 + 4e5*rng.Float64()
				obs.Switches[k].FlowCount = float64(8 + rng.IntN(8))
				obs.Switches[k].TxRate = 8e7 + 4e7*rng.Float64() // 3–5 C: a crowd the committed model reads as one in this synthetic world (since session 31's retraining, 1.2–2 C no longer did)
			}
		}
		for l := range obs.Leaves {
			obs.Leaves[l] = proflow.LeafSample{IngressRate: 3e7 * rng.Float64(), TransmitRate: 2e7 * rng.Float64()}
		}
		for i := range obs.Flows {
			obs.Flows[i] = proflow.FlowSample{Throughput: 2e7 * (0.3 + 0.7*rng.Float64()), CongestionRate: 3e7 * rng.Float64()}
			if congested(i % 4) {
				obs.Flows[i].Throughput = 2e7 * (0.05 + 0.2*rng.Float64())
			}
		}
		return nil
	})
	encoder := func(proflow.ProtectedFlow) (proflow.StateEncoder, error) {
		return telemetry.NewEncoder(agent.EncoderConfig())
	}
	gate := func(proflow.ProtectedFlow) (proflow.Gate, error) { return policy.NewGate(policy.DefaultGateConfig()) }
	perFlow := proflow.FlowParts{Encoder: encoder, Gate: gate,
		Policy: func(proflow.ProtectedFlow) (proflow.Policy, error) { return agent, nil }}
	batch := proflow.FlowParts{Encoder: encoder, Gate: gate, Batch: agent.Clone()}
	want, got := runPair(t, flows, 80, clock, func(s int) { step = s }, tel, perFlow, batch)
	rerouted := 0
	for i := range flows {
		if diff := cmp.Diff(want[i], got[i], decisionOpts, errorText, cmpopts.EquateApprox(1e-5, 1e-4)); diff != "" {
			t.Errorf("flow %d: decisions differ (-Score +ScoreBatch):\n%s", i, diff)
		}
		for _, d := range got[i] {
			if d.Rerouted {
				rerouted++
			}
		}
	}
	if rerouted == 0 {
		t.Error("no flow was rerouted: the world does not exercise the gate")
	}
	t.Logf("%d reroutes of %d flows in 80 steps", rerouted, flows)
}

// A failing or panicking BatchPolicy holds every flow it was to score, with
// ReasonPolicy; flows in their baseline phase are not among its rows.
func TestMultiControllerBatchFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func() error
		want string
	}{
		{"error", func() error { return errBoom }, "proflow: batch policy: boom"},
		{"panic", func() error { panic("kaboom") }, "kaboom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := southboundtest.NewManualClock(epoch)
			fab := newFlowFabric(clock)
			cfg := proflow.DefaultMultiConfig()
			cfg.Clock = clock
			var rows []int
			parts := proflow.FlowParts{
				Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return &fakeEncoder{dim: 8}, nil },
				Gate:    func(proflow.ProtectedFlow) (proflow.Gate, error) { return comparisonGate(t), nil },
				Batch: proflow.BatchPolicyFunc(func(dst []float64, in *proflow.BatchInput) error {
					rows = append(rows, in.N)
					return tc.fail()
				}),
			}
			m, err := proflow.NewMultiController(cfg, fab, parts, fab)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if err := m.AddFlow(proflow.ProtectedFlow{ID: flowN(i)}, 0); err != nil {
					t.Fatal(err)
				}
			}
			var s proflow.StepSummary
			for range 20 {
				clock.Advance(500 * time.Millisecond)
				if s = m.Step(t.Context()); len(rows) > 0 {
					break
				}
			}
			if len(rows) != 1 || rows[0] != 3 {
				t.Fatalf("ScoreBatch rows per call %v, want one call of 3 rows once the baselines are learned (steps before: none)", rows)
			}
			for i, d := range s.Decisions {
				if d.Reason != proflow.ReasonPolicy || d.Err == nil || !strings.Contains(d.Err.Error(), tc.want) || d.Target != -1 {
					t.Errorf("flow %d: reason %q, error %v, target %d; want held with reason policy and an error containing %q", i, d.Reason, d.Err, d.Target, tc.want)
				}
			}
			if tc.name == "panic" {
				if _, ok := errors.AsType[*proflow.PanicError](s.Decisions[0].Err); !ok {
					t.Errorf("error %v, want a *PanicError", s.Decisions[0].Err)
				}
			}
		})
	}
}

func TestMultiControllerBatchRefuses(t *testing.T) {
	clock := southboundtest.NewManualClock(epoch)
	fab := newFlowFabric(clock)
	cfg := proflow.DefaultMultiConfig()
	cfg.Clock = clock
	dim := 8
	parts := proflow.FlowParts{
		Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return &fakeEncoder{dim: dim}, nil },
		Gate:    func(proflow.ProtectedFlow) (proflow.Gate, error) { return comparisonGate(t), nil },
	}
	var nilBatch proflow.BatchPolicyFunc
	parts.Batch = nilBatch
	if _, err := proflow.NewMultiController(cfg, fab, parts, fab); err == nil || !strings.Contains(err.Error(), "batch policy is a nil") {
		t.Errorf("NewMultiController with a nil BatchPolicyFunc = %v, want an error naming the batch policy", err)
	}
	parts.Batch = proflow.BatchPolicyFunc(func([]float64, *proflow.BatchInput) error { return nil })
	m, err := proflow.NewMultiController(cfg, fab, parts, fab)
	if err != nil {
		t.Fatalf("NewMultiController with Batch and no Policy: %v", err)
	}
	if err := m.AddFlow(proflow.ProtectedFlow{ID: flowN(0)}, 0); err != nil {
		t.Fatal(err)
	}
	dim = 9
	err = m.AddFlow(proflow.ProtectedFlow{ID: flowN(1)}, 0)
	if want := "its state encoder has dimension 9, the other flows' 8"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("AddFlow with another state dimension = %v, want an error containing %q", err, want)
	}
}

// BenchmarkMultiControllerStepAgent measures one MultiController step for
// 10,000 protected flows on the paper's 4 switches with the learned agent:
// telemetry (a fake filling the observation), every flow's state encoder,
// the agent's Q-forward, every flow's gate and the Greedy joint step, with
// an enforcer that accepts every move; one switch at a time is congested,
// for 10 steps each, so that flows wish to move and the joint step works. "batched" scores all flows with one
// Agent.ScoreBatch per step (FlowParts.Batch), "per-flow" calls Agent.Score
// once per flow, which is 10,000 single-flow decisions. "committed" is the
// committed default model (models/default.safetensors, universal:
// 41→128→128→1 over each switch's candidate row, layout v2), H=128 a random
// per-fabric 34→128→128→4 one (layout v1). Run it on one core: -cpu 1.
func BenchmarkMultiControllerStepAgent(b *testing.B) {
	const n = 10000
	topo := proflow.PaperTopology()
	encCfg := telemetry.DefaultEncoderConfig(topo)
	committed, err := policy.LoadAgent("models/default.safetensors", encCfg)
	if err != nil {
		b.Fatal(err)
	}
	m128, err := qnet.New([]int{encCfg.Dim(), 128, 128, encCfg.NumSwitches}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	small, err := policy.NewAgent(m128, qnet.NewMetadata(encCfg), encCfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, model := range []struct {
		name  string
		agent *policy.Agent
	}{{"committed", committed}, {"H=128", small}} {
		for _, batched := range []bool{true, false} {
			name := model.name + "/per-flow"
			if batched {
				name = model.name + "/batched"
			}
			b.Run(name, func(b *testing.B) {
				clock := southboundtest.NewManualClock(epoch)
				var step int
				tel := proflow.TelemetryFunc(func(ctx context.Context, obs *proflow.Observation) error {
					obs.Time = clock.Now()
					for k := range obs.Switches {
						obs.Switches[k] = healthySwitch
						obs.Switches[k].OverflowRate += float64((step * (k + 1)) % 7 * 3e4)
						if k == step/10%4 { // one switch congested at a time, 10 steps each
							obs.Switches[k].OverflowRate, obs.Switches[k].FlowCount, obs.Switches[k].TxRate = 5e5, 14, 2.4e7
						}
					}
					for l := range obs.Leaves {
						obs.Leaves[l] = healthyLeaf
					}
					for i := range obs.Flows {
						obs.Flows[i] = healthyFlow
						obs.Flows[i].Throughput -= float64((i + step) % 5 * 1e6)
						if i%4 == step/10%4 { // the flows first placed on the congested switch suffer
							obs.Flows[i].Throughput, obs.Flows[i].CongestionRate = 6e6, 3e7
						}
					}
					return nil
				})
				parts := proflow.FlowParts{
					Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) {
						return telemetry.NewEncoder(model.agent.EncoderConfig())
					},
					Gate: func(proflow.ProtectedFlow) (proflow.Gate, error) { return policy.NewGate(policy.DefaultGateConfig()) },
				}
				agent := model.agent.Clone()
				if batched {
					parts.Batch = agent
				} else {
					parts.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) { return agent, nil }
				}
				m := manyFlows(b, clock, tel, parts, n)
				ctx := context.Background()
				for range 15 { // apply the additions, grow the buffers (wishes from step 6)
					step++
					clock.Advance(500 * time.Millisecond)
					m.Step(ctx)
				}
				b.ReportAllocs()
				b.ResetTimer()
				moved, admitted := 0, 0
				for b.Loop() {
					step++
					clock.Advance(500 * time.Millisecond)
					s := m.Step(ctx)
					moved, admitted = moved+s.Rerouted, admitted+s.Admitted
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/flow")
				b.ReportMetric(float64(moved)/float64(b.N), "reroutes/op")
				b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
			})
		}
	}
}
