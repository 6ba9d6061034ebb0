package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// loadFlags parses args into the shared profile flags and loads them.
func loadFlags(t *testing.T, args ...string) (sim.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	prof := profileFlag(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return prof.load("test")
}

func TestProfileFlagsSizeAndRate(t *testing.T) {
	cfg, err := loadFlags(t, "-profile", "testbed", "-fabric", "16x3", "-rate-factor", "2")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "testbed-16x3@x2" || cfg.Switches != 16 || cfg.BucketRate != 2*sim.TestbedConfig().BucketRate {
		t.Errorf("-fabric 16x3 -rate-factor 2: %s, %d switches, bucket %v; want testbed-16x3@x2, 16, twice the testbed's", cfg.Name, cfg.Switches, cfg.BucketRate)
	}
	same, err := loadFlags(t, "-profile", "testbed-16x3@x2")
	if err != nil || same.Digest() != cfg.Digest() {
		t.Errorf("-profile testbed-16x3@x2 = %s, %v; want the same world as the flags", same.Name, err)
	}
	plain, err := loadFlags(t)
	if err != nil || plain.Digest() != sim.TestbedConfig().Digest() {
		t.Errorf("no flags: %s, %v; want the testbed unchanged", plain.Name, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-fabric", "6"}, "-fabric 6: sim: fabric size \"6\", want SWITCHESxLEAVES"},
		{[]string{"-fabric", "1x3"}, "want SWITCHESxLEAVES such as 6x3 (2 or more"},
		{[]string{"-fabric", "4x200"}, "want at most 250"},
		{[]string{"-rate-factor", "0"}, "-rate-factor 0: sim: rate factor 0, want a positive finite number"},
		{[]string{"-rate-factor", "-2"}, "want a positive finite number"},
	} {
		_, err := loadFlags(t, tc.args...)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
}

// "heldout" is the family of the profile's size, sized names and ranges
// select single members, and on a faster fabric the named scenarios'
// caps scale with it.
func TestSelectSizedFamily(t *testing.T) {
	cfg, err := loadFlags(t, "-fabric", "6x3", "-rate-factor", "2")
	if err != nil {
		t.Fatal(err)
	}
	scs, err := selectScenarios("heldout", nil, cfg, sim.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sim.SizedFamilyScenarios(6, 3)
	var got []string
	for _, sc := range scs {
		got = append(got, sc.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("heldout on 6x3 = %v, want %v", got, want)
	}
	scs, err = selectScenarios("H6x3-2-H6x3-4,H6x3-9,C1", nil, cfg, sim.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, sc := range scs {
		got = append(got, sc.Name)
	}
	if w := []string{"H6x3-2", "H6x3-3", "H6x3-4", "H6x3-9", "C1"}; !slices.Equal(got, w) {
		t.Errorf("selection = %v, want %v", got, w)
	}
	c1, _ := sim.BuiltinScenario("C1")
	if c := scs[len(scs)-1].Congesters[0].StreamCap; c == 0 || c != 2*c1.Congesters[0].StreamCap {
		t.Errorf("C1 at x2: cap %v, want twice %v", c, c1.Congesters[0].StreamCap)
	}
	two, err := loadFlags(t, "-fabric", "2x3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := selectScenarios("heldout", nil, two, sim.DefaultLimits()); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "want at least 3") {
		t.Errorf("heldout on 2x3 = %v, want a usage error saying the family needs 3 switches", err)
	}
}

// evaluate runs every reference policy on a fabric of another size.
func TestEvaluateSizedFabric(t *testing.T) {
	e, out, _ := newTestEnv()
	dir := t.TempDir()
	err := e.dispatch(context.Background(), []string{"evaluate", "-fabric", "8x7", "-scenarios", "H8x7-1,S1",
		"-policies", "static,reactive,crowd,throughput-drop,latency-threshold,oracle", "-repeats", "1", "-out", dir})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "testbed-8x7") {
		t.Errorf("report does not name the profile testbed-8x7:\n%s", s)
	}
}
