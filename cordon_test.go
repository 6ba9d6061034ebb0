package proflow_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
)

// A cordon set while a step runs counts from the next step on, and the
// whole step runs with the set it began with: the policy's input, the
// masking of the scores before the gate and the cordon metric agree. (The
// step used to read the set anew at each of them, so a Cordon landing
// between the policy and the gate masked a switch the policy had been told
// was open.) The rig's forecast runs between the two, where the change
// lands here.
func TestControllerStepSeesOneCordonSet(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := newRig(t, func(c *proflow.Config) { c.Registerer = reg })
	r.scores = []float64{0, 1, 3, 2}
	r.forecast = func(*proflow.FlowForecast, *proflow.Input) error {
		r.forecast = nil
		return r.ctrl.Cordon(2, true) // agg3, the policy's best
	}
	d := r.step()
	if r.policyIn.Cordoned != nil {
		t.Errorf("policy saw cordons %v, want none (the step began before the cordon)", r.policyIn.Cordoned)
	}
	if !d.Rerouted || d.Target != 2 || !slices.Equal(d.Scores, []float64{0, 1, 3, 2}) {
		t.Errorf("cordon set mid-step: reason %q, target %d, scores %v; want rerouted to agg3 on the policy's scores unmasked, as the policy was told",
			d.Reason, d.Target, d.Scores)
	}
	if got := gaugeValue(t, reg, "proflow_cordoned", "agg3"); got != 0 {
		t.Errorf(`proflow_cordoned{switch="agg3"} = %v after the step, want 0: the set the step ran with`, got)
	}

	// The next step runs with it.
	r.scores = []float64{0, 1, 3, 2}
	d = r.step()
	if want := []bool{false, false, true, false}; !slices.Equal(r.policyIn.Cordoned, want) {
		t.Errorf("next step: policy saw cordons %v, want %v", r.policyIn.Cordoned, want)
	}
	if d.Rerouted || d.Current != 2 {
		t.Errorf("next step: reason %q, rerouted %v, current %d; want the flow to stay on agg3 (a cordon moves no flow off)", d.Reason, d.Rerouted, d.Current)
	}
	if got := gaugeValue(t, reg, "proflow_cordoned", "agg3"); got != 1 {
		t.Errorf(`proflow_cordoned{switch="agg3"} = %v after the next step, want 1`, got)
	}
}

// In a MultiController step every flow runs with the cordon set the step
// began with, whether a flow's policy scores it alone (the first flow's
// Score cordons agg3 here) or a BatchPolicy scores all flows at once; the
// cordon counts from the next step on for all of them.
func TestMultiControllerStepSeesOneCordonSet(t *testing.T) {
	for _, batch := range []bool{false, true} {
		name := map[bool]string{false: "per-flow", true: "batch"}[batch]
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			clock := southboundtest.NewManualClock(epoch)
			fab := newFlowFabric(clock)
			cfg := proflow.DefaultMultiConfig()
			cfg.Clock, cfg.Registerer = clock, reg
			b := testBaseline
			cfg.Baseline = &b
			var (
				ctrl   *proflow.MultiController
				mu     sync.Mutex
				once   bool
				inputs []proflow.Input // the per-flow policy's inputs, in order
			)
			cordonOnce := func() error {
				if once {
					return nil
				}
				once = true
				return ctrl.Cordon(2, true) // agg3, every flow's best
			}
			best := []float64{0, 1, 3, 2}
			parts := proflow.FlowParts{
				Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) { return &fakeEncoder{dim: 8}, nil },
				Gate:    func(proflow.ProtectedFlow) (proflow.Gate, error) { return proflow.GateFunc(argmaxGate), nil },
			}
			if batch {
				parts.Batch = proflow.BatchPolicyFunc(func(scores []float64, in *proflow.BatchInput) error {
					for j := range in.N {
						copy(scores[j*len(best):], best)
					}
					return cordonOnce()
				})
			} else {
				parts.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) {
					return proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
						mu.Lock()
						defer mu.Unlock()
						inputs = append(inputs, *in)
						copy(scores, best)
						return cordonOnce()
					}), nil
				}
			}
			var err error
			if ctrl, err = proflow.NewMultiController(cfg, fab, parts, fab); err != nil {
				t.Fatal(err)
			}
			for n := range 2 {
				if err := ctrl.AddFlow(proflow.ProtectedFlow{ID: flowN(n + 1)}, 0); err != nil {
					t.Fatal(err)
				}
			}
			step := func() proflow.StepSummary {
				clock.Advance(500 * time.Millisecond)
				return ctrl.Step(t.Context())
			}

			s := step()
			want := []outcome{{1, 0, 2, true, proflow.ReasonRerouted, ""}, {2, 0, 2, true, proflow.ReasonRerouted, ""}}
			if diff := cmp.Diff(want, outcomes(s)); diff != "" {
				t.Errorf("cordon set mid-step: both flows go to agg3 by the set the step began with (-want +got):\n%s", diff)
			}
			for i := range s.Decisions {
				if d := s.Decisions[i]; !slices.Equal(d.Scores, best) {
					t.Errorf("flow %d: scores %v, want the policy's %v unmasked", i+1, d.Scores, best)
				}
			}
			for i, in := range inputs {
				if in.Cordoned != nil {
					t.Errorf("policy input %d saw cordons %v, want none", i+1, in.Cordoned)
				}
			}
			if got := gaugeValue(t, reg, "proflow_multi_cordoned", "agg3"); got != 0 {
				t.Errorf(`proflow_multi_cordoned{switch="agg3"} = %v after the step, want 0: the set the step ran with`, got)
			}

			inputs = nil
			s = step()
			want = []outcome{{1, 2, -1, false, proflow.ReasonStay, ""}, {2, 2, -1, false, proflow.ReasonStay, ""}}
			if diff := cmp.Diff(want, outcomes(s)); diff != "" {
				t.Errorf("next step: both flows stay on the cordoned agg3 (-want +got):\n%s", diff)
			}
			for i, in := range inputs {
				if want := []bool{false, false, true, false}; !slices.Equal(in.Cordoned, want) {
					t.Errorf("next step: policy input %d saw cordons %v, want %v", i+1, in.Cordoned, want)
				}
			}
			if got := gaugeValue(t, reg, "proflow_multi_cordoned", "agg3"); got != 1 {
				t.Errorf(`proflow_multi_cordoned{switch="agg3"} = %v after the next step, want 1`, got)
			}
		})
	}
}
