package proflow_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow"
)

func TestPaperTopology(t *testing.T) {
	topo := proflow.PaperTopology()
	if err := topo.Validate(); err != nil {
		t.Fatalf("PaperTopology().Validate() = %v", err)
	}
	if topo.NumSwitches() != 4 || topo.NumLeaves() != 3 || topo.BucketRate != 25e6 {
		t.Errorf("PaperTopology() = %d switches, %d leaves, %v B/s; want 4, 3, 25e6 (200 Mbit/s)",
			topo.NumSwitches(), topo.NumLeaves(), topo.BucketRate)
	}
}

func TestTopologyValidate(t *testing.T) {
	valid := func() proflow.Topology {
		return proflow.Topology{Switches: []string{"a", "b"}, Leaves: []string{"l"}, BucketRate: 1}
	}
	for _, c := range []struct {
		name string
		mod  func(*proflow.Topology)
		want []string // substrings; none for a valid topology
	}{
		{"valid", func(*proflow.Topology) {}, nil},
		{"no leaves", func(t *proflow.Topology) { t.Leaves = nil }, nil},
		{"no switches", func(t *proflow.Topology) { t.Switches = nil }, []string{"0 aggregation switches, want at least 2"}},
		{"one switch", func(t *proflow.Topology) { t.Switches = []string{"a"} }, []string{"1 aggregation switches, want at least 2"}},
		{"duplicate switch", func(t *proflow.Topology) { t.Switches = []string{"a", "b", "b"} },
			[]string{`switch name "b" used at index 1 and 2`}},
		{"empty switch name", func(t *proflow.Topology) { t.Switches = []string{"a", ""} }, []string{"switch 1 has an empty name"}},
		{"duplicate leaf", func(t *proflow.Topology) { t.Leaves = []string{"x", "x"} }, []string{`leaf name "x" used at index 0 and 1`}},
		{"zero bucket rate", func(t *proflow.Topology) { t.BucketRate = 0 }, []string{"bucket rate 0 bytes/s, want a positive finite rate"}},
		{"negative bucket rate", func(t *proflow.Topology) { t.BucketRate = -1 }, []string{"bucket rate -1"}},
		{"NaN bucket rate", func(t *proflow.Topology) { t.BucketRate = math.NaN() }, []string{"bucket rate NaN"}},
		{"infinite bucket rate", func(t *proflow.Topology) { t.BucketRate = math.Inf(1) }, []string{"bucket rate +Inf"}},
		{"every problem at once", func(t *proflow.Topology) {
			t.Switches, t.Leaves, t.BucketRate = []string{"a"}, []string{"", "y"}, 0
		}, []string{"1 aggregation switches", "leaf 0 has an empty name", "bucket rate 0"}},
	} {
		topo := valid()
		c.mod(&topo)
		err := topo.Validate()
		if len(c.want) == 0 {
			if err != nil {
				t.Errorf("%s: Validate = %v, want nil", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: Validate = nil, want an error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Validate = %q, want it to contain %q", c.name, err, w)
			}
		}
	}
}

func TestTopologySwitchIndex(t *testing.T) {
	topo := proflow.PaperTopology()
	if k, err := topo.SwitchIndex("agg3"); err != nil || k != 2 {
		t.Errorf("SwitchIndex(agg3) = %d, %v; want 2, nil", k, err)
	}
	k, err := topo.SwitchIndex("agg9")
	var use *proflow.UnknownSwitchError
	if k != -1 || !errors.As(err, &use) || use.Name != "agg9" || !errors.Is(err, proflow.ErrMissingSwitch) {
		t.Fatalf("SwitchIndex(agg9) = %d, %v; want -1 and an UnknownSwitchError matching ErrMissingSwitch", k, err)
	}
	if want := `proflow: unknown switch "agg9", want one of [agg1 agg2 agg3 agg4]`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	idx := &proflow.UnknownSwitchError{Index: 7, Known: topo.Switches}
	if want := "proflow: switch index 7 out of range, want 0..3 ([agg1 agg2 agg3 agg4])"; idx.Error() != want {
		t.Errorf("index error = %q, want %q", idx, want)
	}
}

func TestTopologyJSONRoundTrip(t *testing.T) {
	in := proflow.PaperTopology()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out proflow.Topology
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(b), `"bucket_rate_bytes_per_sec":25000000`) {
		t.Errorf("JSON %s does not name the bucket rate's unit", b)
	}
}
