package proflow_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/southboundtest"
	"github.com/proflow-sdn/proflow/telemetry"
)

// boundPolicy is a policy trained at a given interval.
type boundPolicy struct {
	proflow.PolicyFunc
	trained time.Duration
}

func (p boundPolicy) TrainedInterval() time.Duration { return p.trained }

// TestNewControllerRefusesAnotherInterval checks that a controller running
// every 100 ms refuses the default model, trained at 500 ms, with an error
// that names both intervals and the remedy, and accepts it at 500 ms.
func TestNewControllerRefusesAnotherInterval(t *testing.T) {
	topo := proflow.PaperTopology()
	encCfg := telemetry.DefaultEncoderConfig(topo)
	agent, gateCfg, err := policy.LoadModel("models/default.safetensors", encCfg)
	if err != nil {
		t.Fatal(err)
	}
	build := func(interval time.Duration, pol proflow.Policy) error {
		cfg := proflow.DefaultConfig()
		cfg.Flow, cfg.Interval = testFlow, interval
		fab := southboundtest.NewFabric(topo, nil)
		enc, err := telemetry.NewEncoder(agent.EncoderConfig())
		if err != nil {
			t.Fatal(err)
		}
		gate, err := policy.NewGate(gateCfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = proflow.NewController(cfg, fab, enc, pol, gate, fab)
		return err
	}

	err = build(100*time.Millisecond, agent)
	var ie *proflow.IntervalMismatchError
	if !errors.Is(err, proflow.ErrIntervalMismatch) || !errors.As(err, &ie) {
		t.Fatalf("NewController at 100ms with the 500ms model = %v, want an *IntervalMismatchError", err)
	}
	if ie.Trained != 500*time.Millisecond || ie.Interval != 100*time.Millisecond || ie.Policy != "*policy.Agent" {
		t.Errorf("error fields %+v, want *policy.Agent, 500ms, 100ms", *ie)
	}
	for _, want := range []string{"proflow: new controller: ", "trained at a 500ms control interval", "runs every 100ms", "set the interval to 500ms", "train a model at 100ms", "make model", "models/README.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}

	if err := build(500*time.Millisecond, agent); err != nil {
		t.Errorf("NewController at 500ms with the 500ms model: %v", err)
	}
	if err := build(0, agent); err != nil {
		t.Errorf("NewController at the default interval with the 500ms model: %v", err)
	}
	nop := proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil })
	if err := build(100*time.Millisecond, boundPolicy{nop, 0}); err != nil {
		t.Errorf("NewController with a policy bound to no interval (0): %v", err)
	}
	if err := build(100*time.Millisecond, nop); err != nil {
		t.Errorf("NewController with a policy that is no IntervalBound: %v", err)
	}
}

// TestNewMultiControllerRefusesAnotherInterval checks the same for the
// multi-flow controller: a batch policy at construction, a per-flow policy
// in AddFlow.
func TestNewMultiControllerRefusesAnotherInterval(t *testing.T) {
	topo := proflow.PaperTopology()
	encCfg := telemetry.DefaultEncoderConfig(topo)
	agent, gateCfg, err := policy.LoadModel("models/default.safetensors", encCfg)
	if err != nil {
		t.Fatal(err)
	}
	parts := func(batch bool) proflow.FlowParts {
		p := proflow.FlowParts{
			Encoder: func(proflow.ProtectedFlow) (proflow.StateEncoder, error) {
				return telemetry.NewEncoder(agent.EncoderConfig())
			},
			Gate: func(proflow.ProtectedFlow) (proflow.Gate, error) { return policy.NewGate(gateCfg) },
		}
		if batch {
			p.Batch = agent
		} else {
			p.Policy = func(proflow.ProtectedFlow) (proflow.Policy, error) { return agent.Clone(), nil }
		}
		return p
	}
	cfg := proflow.DefaultMultiConfig()
	cfg.Interval = 100 * time.Millisecond
	fab := southboundtest.NewFabric(topo, nil)

	_, err = proflow.NewMultiController(cfg, fab, parts(true), fab)
	if !errors.Is(err, proflow.ErrIntervalMismatch) || !strings.Contains(err.Error(), "batch policy: policy *policy.Agent was trained at a 500ms control interval, but the controller runs every 100ms") {
		t.Errorf("NewMultiController at 100ms with the 500ms model as batch policy = %v, want ErrIntervalMismatch naming both", err)
	}

	m, err := proflow.NewMultiController(cfg, fab, parts(false), fab)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddFlow(proflow.ProtectedFlow{ID: testFlow}, 0); !errors.Is(err, proflow.ErrIntervalMismatch) {
		t.Errorf("AddFlow at 100ms with the 500ms model = %v, want ErrIntervalMismatch", err)
	}

	cfg.Interval = 500 * time.Millisecond
	for _, batch := range []bool{true, false} {
		m, err := proflow.NewMultiController(cfg, fab, parts(batch), fab)
		if err != nil {
			t.Fatalf("NewMultiController at 500ms (batch %t): %v", batch, err)
		}
		if err := m.AddFlow(proflow.ProtectedFlow{ID: testFlow}, 0); err != nil {
			t.Errorf("AddFlow at 500ms (batch %t): %v", batch, err)
		}
	}
}
