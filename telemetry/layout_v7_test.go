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

// The v8 state is the v6 state with the drain rate of the switch carrying
// the flow appended to x_flow: v7's excess of that switch.
func TestEncodeV8(t *testing.T) {
	c8 := roundConfig(2, 1).WithLayout(telemetry.StateLayoutV8)
	if err := c8.Validate(); err != nil {
		t.Fatal(err)
	}
	c7, c6 := c8.WithLayout(telemetry.StateLayoutV7), c8.WithLayout(telemetry.StateLayoutV6)
	if got, want := []int{c8.FlowOffset(), c8.Dim(), c8.SwitchWidth()}, []int{c6.FlowOffset(), c6.Dim() + 1, c6.SwitchWidth()}; !cmp.Equal(got, want) {
		t.Errorf("v8 flow offset, dim, switch width %v, want v6's with one more flow feature %v", got, want)
	}
	if !c8.HasOwnExcess() || c8.HasExcess() || !c8.HasOwnDeficit() || c8.ExcessScale != 5000 {
		t.Errorf("v8: own excess %v, switch excess %v, own deficit %v, excess scale %v; want own excess, no switch excess, own deficit, 5000",
			c8.HasOwnExcess(), c8.HasExcess(), c8.HasOwnDeficit(), c8.ExcessScale)
	}
	var encs [3]*telemetry.Encoder
	for i, c := range []telemetry.EncoderConfig{c8, c7, c6} {
		e, err := telemetry.NewEncoder(c)
		if err != nil {
			t.Fatal(err)
		}
		encs[i] = e
	}
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	s8, s7, s6 := make(proflow.State, c8.Dim()), make(proflow.State, c7.Dim()), make(proflow.State, c6.Dim())
	for i, st := range []struct {
		tx0, tx1 float64
		current  int
	}{{5000, 500, 0}, {5000, 3000, 1}, {500, 1030, 1}, {500, 500, 0}} {
		o := obs([]proflow.SwitchSample{sw(st.tx0, 10, 4, 0), sw(st.tx1, 0, 2, 0)}, []proflow.LeafSample{leaf(100, 100)}, 400, 0)
		o.Time = t0.Add(time.Duration(i) * 10 * time.Second)
		for j, s := range []proflow.State{s8, s7, s6} {
			if err := encs[j].Encode(s, o, st.current); err != nil {
				t.Fatalf("step %d, encoder %d: %v", i, j, err)
			}
		}
		if diff := cmp.Diff(s6, s8[:c6.Dim()]); diff != "" {
			t.Errorf("step %d: v8 without its last feature differs from v6 (-v6 +v8):\n%s", i, diff)
		}
		own := s8[c8.FlowOffset()+telemetry.FeatureOwnExcess]
		if want := s7[c7.AggOffset(st.current)+telemetry.FeatureExcess]; own != want {
			t.Errorf("step %d on switch %d: own excess %v, want v7's excess of that switch %v", i, st.current, own, want)
		}
		if i == 0 && own == 0 {
			t.Errorf("step %d: the flow's switch sends at 5 C and its excess reads 0", i)
		}
	}
}
