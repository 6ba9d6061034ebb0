package proflow_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow"
)

// TestCheckAndFailBatch: CheckBatch refuses a slot count that is not one
// per placement and clears the slots; FailBatch fills only the slots
// without an outcome, so the nil ones stay "applied".
func TestCheckAndFailBatch(t *testing.T) {
	ps := make([]proflow.Placement, 3)
	if err := proflow.CheckBatch(ps, make([]error, 2)); err == nil || !strings.Contains(err.Error(), "2 error slots for 3 placements") {
		t.Errorf("CheckBatch with 2 slots for 3 placements: %v, want an error naming both counts", err)
	}
	stale := errors.New("stale")
	errs := []error{stale, stale, stale}
	if err := proflow.CheckBatch(ps, errs); err != nil {
		t.Fatal(err)
	}
	for i, e := range errs {
		if e != nil {
			t.Errorf("slot %d after CheckBatch: %v, want cleared", i, e)
		}
	}
	refused := errors.New("table full")
	errs[1] = refused
	lost := errors.New("connection lost")
	if err := proflow.FailBatch(errs, lost); err != lost {
		t.Errorf("FailBatch returned %v, want the batch's error", err)
	}
	if errs[0] != lost || errs[1] != refused || errs[2] != lost {
		t.Errorf("slots after FailBatch: %v, want [lost, table full, lost]", errs)
	}
}
