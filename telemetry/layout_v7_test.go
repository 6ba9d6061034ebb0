package telemetry_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

func TestLayoutV7Offsets(t *testing.T) {
	c := roundConfig(4, 3).WithLayout(telemetry.StateLayoutV7)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got := []int{c.AggOffset(1), c.LeafOffset(0), c.PlacementOffset(), c.FlowOffset(), c.Dim(), c.CandidateDim()}
	want := []int{7, 28, 34, 38, 45, 47} // [x_agg 7·4, x_leaf 2·3, h 4, x_flow 7]; rows 5·7+1+4+7
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
	if !telemetry.KnownLayout(telemetry.StateLayoutV7) || !c.HasFlowSignals() || !c.HasOwnDeficit() || !c.HasExcess() || c.HasDeficit() ||
		c.ExcessScale != 5000 || c.DeficitScale != 60000 {
		t.Errorf("v7: known %v, flow signals %v, own deficit %v, excess %v, per-switch deficit %v, scales %v and %v; want known, flow signals, own deficit, excess, none, 5000 and 60000",
			telemetry.KnownLayout(telemetry.StateLayoutV7), c.HasFlowSignals(), c.HasOwnDeficit(), c.HasExcess(), c.HasDeficit(), c.ExcessScale, c.DeficitScale)
	}
	noScale := c
	noScale.ExcessScale = 0
	if noScale.Validate() == nil {
		t.Error("v7 without an excess scale validated, want an error")
	}
	v6 := c.WithLayout(telemetry.StateLayoutV6)
	v6.ExcessScale = 5000
	if v6.Validate() == nil {
		t.Error("v6 with an excess scale validated, want an error (the layout has no excess feature)")
	}
	if _, _, _, ok := c.ScalingMismatch(c.WithLayout(telemetry.StateLayoutV7)); !ok {
		t.Error("v7 against itself: a scaling mismatch")
	}
	other := c
	other.ExcessScale *= 2
	if field, _, _, ok := c.ScalingMismatch(other); ok || field != "encoder.excess_scale/rate_scale" {
		t.Errorf("v7 against twice its excess scale: field %q, ok %v; want encoder.excess_scale/rate_scale", field, ok)
	}
}

// The v7 state is the v6 state with each switch's transmit rate above C,
// over Cx and clipped to [0, 1], after its backlog: a switch at 1.03 C and
// one at 5 C, alike in FeatureTxRate, differ there.
func TestEncodeV7(t *testing.T) {
	c7 := roundConfig(2, 1).WithLayout(telemetry.StateLayoutV7)
	c6 := c7.WithLayout(telemetry.StateLayoutV6)
	e7, err := telemetry.NewEncoder(c7)
	if err != nil {
		t.Fatal(err)
	}
	e6, err := telemetry.NewEncoder(c6)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	s7, s6 := make(proflow.State, c7.Dim()), make(proflow.State, c6.Dim())
	for i, st := range []struct {
		tx0, tx1 float64
		current  int
		excess   [2]float32
	}{
		{1030, 500, 0, [2]float32{0.006, 0}},
		{5000, 500, 0, [2]float32{0.8, 0}},
		{9000, 3000, 1, [2]float32{1, 0.4}},
		{500, 1000, 1, [2]float32{0, 0}},
	} {
		o := obs([]proflow.SwitchSample{sw(st.tx0, 10, 4, 0), sw(st.tx1, 0, 2, 0)}, []proflow.LeafSample{leaf(100, 100)}, 400, 0)
		o.Time = t0.Add(time.Duration(i) * 10 * time.Second)
		if err := e7.Encode(s7, o, st.current); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if err := e6.Encode(s6, o, st.current); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		var rest proflow.State
		for k := range 2 {
			x := s7[c7.AggOffset(k):][:c7.SwitchWidth()]
			rest = append(rest, x[:telemetry.FeatureExcess]...)
			if got, want := x[telemetry.FeatureExcess], st.excess[k]; got < want-1e-6 || got > want+1e-6 {
				t.Errorf("step %d: switch %d excess %v, want %v", i, k, got, want)
			}
		}
		rest = append(rest, s7[c7.LeafOffset(0):]...)
		if diff := cmp.Diff(s6, rest); diff != "" {
			t.Errorf("step %d: v7 without its excess features differs from v6 (-v6 +v7):\n%s", i, diff)
		}
	}
}
