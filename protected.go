package proflow

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// ProtectedFlow is one of the flows a multi-flow controller protects (the
// many-flow extension beyond the paper, which protects one). Weight is its
// priority when several protected flows compete for the same clean switch.
type ProtectedFlow struct {
	// ID is the flow's 5-tuple.
	ID FlowID `json:"id"`
	// Weight is the flow's priority in joint placement, > 0; 0 means 1.
	Weight float64 `json:"weight,omitempty"`
}

// EffectiveWeight returns p.Weight, or 1 when it is unset.
func (p ProtectedFlow) EffectiveWeight() float64 {
	if p.Weight == 0 {
		return 1
	}
	return p.Weight
}

// Validate checks the flow's 5-tuple and that Weight is unset or a finite
// positive number.
func (p ProtectedFlow) Validate() error {
	if err := p.ID.Validate(); err != nil {
		return err
	}
	if err := p.check(); err != nil {
		return fmt.Errorf("proflow: protected flow %v: %w", p.ID, err)
	}
	return nil
}

// check is Validate without naming the flow, for a caller that names it.
func (p ProtectedFlow) check() error {
	if s := p.ID.problem(); s != "" {
		return errors.New(s)
	}
	if p.Weight < 0 || math.IsNaN(p.Weight) || math.IsInf(p.Weight, 0) {
		return fmt.Errorf("weight %v, want a finite number > 0 (or 0 for the default 1)", p.Weight)
	}
	return nil
}

// Placement is one protected flow's move: put Flow on aggregation switch
// Switch (an index into Topology.Switches).
type Placement struct {
	Flow   FlowID `json:"flow"`
	Switch int    `json:"switch"`
}

// BatchEnforcer is an Enforcer that applies many placements in one call,
// batched per switch (one OpenFlow bundle, one multi-entry P4Runtime Write),
// as a multi-flow controller does once per step.
//
// PlaceBatch writes the outcome of placement i into errs[i] (nil where the
// flow now follows its new switch; errs has len(ps)), so that one flow
// refused — a full table, say — does not hold the others. The returned error
// is for the batch as a whole (the connection lost, ctx done); then errs
// says which placements are known to have been applied (nil) and which not.
// Each placement is make-before-break, as Place is.
type BatchEnforcer interface {
	Enforcer
	PlaceBatch(ctx context.Context, ps []Placement, errs []error) error
}

// CheckBatch checks the arguments of a PlaceBatch call, for the
// enforcers that implement it: errs must have one slot per placement. It
// clears errs, so that a slot left nil means applied.
func CheckBatch(ps []Placement, errs []error) error {
	if len(errs) != len(ps) {
		return fmt.Errorf("%d error slots for %d placements, want one per placement", len(errs), len(ps))
	}
	clear(errs)
	return nil
}

// FailBatch ends a PlaceBatch call that failed as a whole (the connection
// lost, ctx done) before it applied any placement: it records err in every
// slot of errs not already holding an outcome (a placement refused on its
// own keeps its error) and returns err. A call that fails after applying
// some placements must leave their slots nil instead.
func FailBatch(errs []error, err error) error {
	for i := range errs {
		if errs[i] == nil {
			errs[i] = err
		}
	}
	return err
}

// Releaser is an Enforcer that can drop what it installed for a flow: the
// flow's override rules or table entries, so that the fabric carries it on
// its default path again. A multi-flow controller releases a flow it stops
// protecting (MultiController.RemoveFlow) when its Enforcer is a Releaser;
// otherwise the flow stays where it was last placed.
//
// Release of a flow that has nothing installed is not an error. The
// default path must carry the flow before the override goes, so that no
// packet is lost to a missing rule.
type Releaser interface {
	Release(ctx context.Context, flow FlowID) error
}
