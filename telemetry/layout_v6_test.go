package telemetry_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

func TestLayoutV6Offsets(t *testing.T) {
	c := roundConfig(4, 3).WithLayout(telemetry.StateLayoutV6)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got := []int{c.AggOffset(1), c.LeafOffset(0), c.PlacementOffset(), c.FlowOffset(), c.Dim(), c.CandidateDim()}
	want := []int{6, 24, 30, 34, 41, 42} // [x_agg 6·4, x_leaf 2·3, h 4, x_flow 7]; rows 5·6+1+4+7
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
	if !telemetry.KnownLayout(telemetry.StateLayoutV6) || !c.HasFlowSignals() || c.HasDeficit() || c.DeficitScale != 60000 {
		t.Errorf("v6: known %v, flow signals %v, per-switch deficit %v, deficit scale %v; want known, flow signals, none, 60000",
			telemetry.KnownLayout(telemetry.StateLayoutV6), c.HasFlowSignals(), c.HasDeficit(), c.DeficitScale)
	}
	noScale := c
	noScale.DeficitScale = 0
	if noScale.Validate() == nil {
		t.Error("v6 without a deficit scale validated, want an error")
	}
}

// The v6 state is the v2 state with the deficit of the switch carrying
// the flow appended to x_flow: v3's deficit of that switch, which follows
// the flow when it moves.
func TestEncodeV6(t *testing.T) {
	c6 := roundConfig(2, 1).WithLayout(telemetry.StateLayoutV6)
	c3, c2 := c6.WithLayout(telemetry.StateLayoutV3), c6.WithLayout(telemetry.StateLayoutV2)
	var encs [3]*telemetry.Encoder
	for i, c := range []telemetry.EncoderConfig{c6, c3, c2} {
		e, err := telemetry.NewEncoder(c)
		if err != nil {
			t.Fatal(err)
		}
		encs[i] = e
	}
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	s6, s3, s2 := make(proflow.State, c6.Dim()), make(proflow.State, c3.Dim()), make(proflow.State, c2.Dim())
	for i, st := range []struct {
		tx0, tx1 float64
		current  int
	}{
		{3000, 500, 0}, {3000, 500, 0}, {4000, 2500, 0}, {500, 2500, 1}, {500, 3000, 1}, {500, 0, 0},
	} {
		o := obs([]proflow.SwitchSample{sw(st.tx0, 10, 4, 0), sw(st.tx1, 0, 2, 0)}, []proflow.LeafSample{leaf(100, 100)}, 400, 0)
		o.Time = t0.Add(time.Duration(i) * 10 * time.Second)
		for j, pair := range []struct {
			e *telemetry.Encoder
			s proflow.State
		}{{encs[0], s6}, {encs[1], s3}, {encs[2], s2}} {
			if err := pair.e.Encode(pair.s, o, st.current); err != nil {
				t.Fatalf("step %d, encoder %d: %v", i, j, err)
			}
		}
		if diff := cmp.Diff(s2, s6[:c2.Dim()]); diff != "" {
			t.Errorf("step %d: v6 without its last feature differs from v2 (-v2 +v6):\n%s", i, diff)
		}
		own := s6[c6.FlowOffset()+telemetry.FeatureOwnDeficit]
		if want := s3[c3.AggOffset(st.current)+telemetry.FeatureDeficit]; own != want {
			t.Errorf("step %d on switch %d: own deficit %v, want v3's deficit of that switch %v", i, st.current, own, want)
		}
		if i == 2 && own == 0 {
			t.Errorf("step %d: switch 0 sent above C for 20 s and its deficit reads 0", i)
		}
	}
}
