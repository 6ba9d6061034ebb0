package p4runtime

import (
	"math"
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
