package proflow

import (
	"errors"
	"fmt"
)

// Sentinel errors. Implementations wrap them so callers can test with errors.Is.
var (
	// ErrStale marks a sample whose counters did not advance or whose time is
	// older than the controller allows.
	ErrStale = errors.New("stale telemetry sample")
	// ErrMissingSwitch marks telemetry that lacks a sample for a configured switch.
	ErrMissingSwitch = errors.New("missing switch sample")
	// ErrNotPlaced is returned by a Locator when the flow has no override.
	ErrNotPlaced = errors.New("flow has no placement override")
	// ErrBaselinePending is returned while the baseline phase is incomplete.
	ErrBaselinePending = errors.New("baseline not yet learned")
	// ErrBadScores marks policy scores that cannot be compared (NaN, ±Inf).
	ErrBadScores = errors.New("unusable policy scores")
	// ErrNotInFabric marks a flow that a southbound cannot carry between
	// aggregation switches: one of its hosts is not a host of the fabric, or
	// both hang off the same leaf. FlowValidator implementations wrap it.
	ErrNotInFabric = errors.New("flow is not between two leaves of the fabric")
)

// PanicError reports a panic inside a collaborator's method (Telemetry,
// StateEncoder, Policy, Gate, Enforcer or one of their optional
// capabilities) that the Controller recovered. The controller reports it as
// the error of the step, or of the call, in which it happened.
type PanicError struct {
	// Interface and Method name the method that panicked, for example
	// "Policy" and "Score".
	Interface, Method string
	// Type is the collaborator's dynamic type, for example "*policy.Agent".
	Type string
	// Value is the value the collaborator panicked with.
	Value any
	// Stack is the stack of the panicking goroutine, as runtime/debug.Stack
	// formats it.
	Stack []byte
}

// Error names the method, the collaborator's type and the panic value.
func (e *PanicError) Error() string {
	return fmt.Sprintf("%s.%s of %s panicked: %v", e.Interface, e.Method, e.Type, e.Value)
}

// Unwrap returns the panic value when it is an error (a runtime error such
// as a nil dereference, for example), nil otherwise.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// InvalidObservationError reports an observation field that failed validation.
type InvalidObservationError struct {
	Field   string // for example "switches[agg2].overflow_rate"
	Problem string // what is wrong and what was expected
	Err     error  // a sentinel such as ErrMissingSwitch, or nil
}

// Error formats the field and the problem.
func (e *InvalidObservationError) Error() string {
	return fmt.Sprintf("proflow: invalid observation: %s: %s", e.Field, e.Problem)
}

// Unwrap returns the sentinel behind the error, if any.
func (e *InvalidObservationError) Unwrap() error { return e.Err }

// UnknownSwitchError reports a switch name or index that is not in the topology.
type UnknownSwitchError struct {
	Name  string   // the name asked for, if any
	Index int      // the index asked for, if no name
	Known []string // the topology's switches
}

// Error names the unknown switch and the known ones.
func (e *UnknownSwitchError) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("proflow: unknown switch %q, want one of %v", e.Name, e.Known)
	}
	return fmt.Sprintf("proflow: switch index %d out of range, want 0..%d (%v)", e.Index, len(e.Known)-1, e.Known)
}

// Is makes UnknownSwitchError match ErrMissingSwitch.
func (e *UnknownSwitchError) Is(target error) bool { return target == ErrMissingSwitch }
