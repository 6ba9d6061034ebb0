package eval

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

func TestVariantApply(t *testing.T) {
	base := sim.TestbedConfig()
	same, err := Variant{Reserve: 66, MoveTimeout: true}.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	if same.BucketBurst != base.BucketBurst || same.RerouteTimeout != base.RerouteTimeout {
		t.Errorf("the 66 s, H-move on variant changes the testbed profile: burst %v (want %v)", same.BucketBurst, base.BucketBurst)
	}
	v, err := Variant{Reserve: 30}.Apply(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := (v.BucketBurst - v.UncountedBurst) / (v.UncountedRate - v.BucketRate); math.Abs(got-30) > 1e-9 || v.RerouteTimeout {
		t.Errorf("reserve %v s, H-move %v; want 30 s, off", got, v.RerouteTimeout)
	}
	if v.Digest() == base.Digest() || !strings.Contains(v.Name, "reserve30-hmove-off") {
		t.Errorf("variant %q keeps the profile's digest or name", v.Name)
	}
	if _, err := (Variant{Reserve: 30}).Apply(sim.DatacenterConfig()); err == nil || !strings.Contains(err.Error(), "H-limit") {
		t.Errorf("datacenter profile: %v, want a refusal naming H-limit", err)
	}
	if _, err := (Variant{Reserve: -1}).Apply(base); err == nil || !strings.Contains(err.Error(), "reserve -1s") {
		t.Errorf("negative reserve: %v", err)
	}
}

func TestSensitivityRowsAndPlot(t *testing.T) {
	eps := []*Episode{
		episode("S1", "reactive", 0, 20e6, 8e6, 20, 40),
		episode("S1", "agent", 0, 20e6, 20e6, 200, 10),
		episode("S2", "reactive", 0, 20e6, 8e6, 20, 45),
		episode("S2", "agent", 0, 20e6, 20e6, 200, 12),
	}
	s, err := Summarize(eps, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	rows := SensitivityRows(Variant{Reserve: 45, MoveTimeout: true}, s)
	if len(rows) != 2 || rows[1].Policy != "agent" || math.IsNaN(rows[1].GainOverReactive) || rows[1].GainOverStrongest <= 1 {
		t.Fatalf("rows %+v", rows)
	}
	var b strings.Builder
	if err := WriteSensitivity(&b, rows); err != nil || !strings.Contains(b.String(), "| reserve 45 s, H-move on | agent |") {
		t.Errorf("table: %v\n%s", err, b.String())
	}
	if err := WriteSensitivityPlot(filepath.Join(t.TempDir(), FigSensitivity), rows); err != nil {
		t.Error(err)
	}
	if err := WriteSensitivityPlot(filepath.Join(t.TempDir(), FigSensitivity), rows[:1]); err == nil {
		t.Error("a plot without any gain over reactive was drawn")
	}
}
