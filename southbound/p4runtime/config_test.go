package p4runtime

import (
	"math"
	"strings"
	"testing"
)

func TestElectionID(t *testing.T) {
	maxID := ElectionID{High: math.MaxUint64, Low: math.MaxUint64}
	for _, tc := range []struct{ a, b, want ElectionID }{
		{ElectionID{Low: 10}, ElectionID{Low: 5}, ElectionID{Low: 15}},
		{ElectionID{Low: math.MaxUint64}, ElectionID{Low: 1}, ElectionID{High: 1}},
		{ElectionID{High: math.MaxUint64, Low: math.MaxUint64}, ElectionID{Low: 1}, maxID},
		{ElectionID{Low: 1}, ElectionID{High: math.MaxUint64, Low: math.MaxUint64}, maxID},
		{ElectionID{High: 1}, ElectionID{High: math.MaxUint64}, maxID},
	} {
		if got := tc.a.Add(tc.b); got != tc.want {
			t.Errorf("%v + %v = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if !(ElectionID{Low: 9}).Less(ElectionID{High: 1}) || (ElectionID{High: 1}).Less(ElectionID{Low: 9}) {
		t.Error("Less orders by High first")
	}
	if s := (ElectionID{High: 2, Low: 3}).String(); s != "2:3" {
		t.Errorf("String = %q", s)
	}
}

// An election ID of zero is refused: a P4Runtime server refuses it
// (INVALID_ARGUMENT), and a client without one would never be primary.
func TestConfigRefusesElectionIDZero(t *testing.T) {
	f := newFabric(t, nil)
	cfg := f.config(0)
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "election ID 0") {
		t.Fatalf("Validate with ElectionID{}: %v, want an error about election ID 0", err)
	}
	ctx, cancel := ctxT(t)
	defer cancel()
	if c, err := Dial(ctx, cfg); err == nil {
		c.Close()
		t.Error("Dial with ElectionID{} succeeded, want the Validate error")
	}
	cfg.ElectionID = ElectionID{High: 1}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate with election ID %v: %v, want nil", cfg.ElectionID, err)
	}
}
