package southboundtest

import (
	"errors"
	"testing"

	"github.com/proflow-sdn/proflow"
)

// FlowValidatorHarness is what TestFlowValidator needs from one southbound.
type FlowValidatorHarness struct {
	// Enforcer is the implementation under test; it must be a
	// proflow.FlowValidator.
	Enforcer proflow.Enforcer
	// Topology is the fabric the enforcer controls; it must be valid.
	Topology proflow.Topology
	// Valid are flows the enforcer can place: between hosts of two
	// different leaves.
	Valid []proflow.FlowID
	// Outside are flows it can never place: a host that is not in the
	// fabric, or both hosts on one leaf.
	Outside []proflow.FlowID
}

// TestFlowValidator checks a proflow.FlowValidator, one subtest per flow:
// ValidateFlow accepts every Valid flow, and proflow.NewController builds a
// controller for it on the enforcer; ValidateFlow refuses every Outside
// flow with an error wrapping proflow.ErrNotInFabric, and so does
// NewController, so that a wrong flow fails when the controller is built
// instead of at its first reroute.
func TestFlowValidator(t *testing.T, h FlowValidatorHarness) {
	t.Helper()
	v, ok := h.Enforcer.(proflow.FlowValidator)
	if !ok {
		t.Fatalf("%T is not a proflow.FlowValidator", h.Enforcer)
	}
	newController := func(flow proflow.FlowID) error {
		cfg := proflow.DefaultConfig()
		cfg.Topology, cfg.Flow = h.Topology, flow
		pol := proflow.PolicyFunc(func([]float64, *proflow.Input) error { return nil })
		gate := proflow.GateFunc(func(*proflow.Decision) {})
		_, err := proflow.NewController(cfg, NewFabric(h.Topology, nil), zeroEncoder{}, pol, gate, h.Enforcer)
		return err
	}
	for _, flow := range h.Valid {
		t.Run("Valid "+flow.String(), func(t *testing.T) {
			if err := v.ValidateFlow(flow); err != nil {
				t.Errorf("ValidateFlow(%v) = %v, want nil", flow, err)
			}
			if err := newController(flow); err != nil {
				t.Errorf("NewController for %v = %v, want a controller", flow, err)
			}
		})
	}
	for _, flow := range h.Outside {
		t.Run("Outside "+flow.String(), func(t *testing.T) {
			if err := v.ValidateFlow(flow); !errors.Is(err, proflow.ErrNotInFabric) {
				t.Errorf("ValidateFlow(%v) = %v, want an error wrapping proflow.ErrNotInFabric", flow, err)
			}
			if err := newController(flow); !errors.Is(err, proflow.ErrNotInFabric) {
				t.Errorf("NewController for %v = %v, want an error wrapping proflow.ErrNotInFabric", flow, err)
			}
		})
	}
}

// zeroEncoder is a one-dimensional StateEncoder that writes zero.
type zeroEncoder struct{}

func (zeroEncoder) Dim() int { return 1 }

func (zeroEncoder) Encode(dst proflow.State, _ *proflow.Observation, _ int) error {
	clear(dst)
	return nil
}
