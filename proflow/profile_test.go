package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// TestProfileShowReadsBack: profile show prints a JSON profile that
// -profile FILE.json loads as the same world (same digest).
func TestProfileShowReadsBack(t *testing.T) {
	e, out, _ := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"profile", "show", "-profile", "testbed"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "testbed.json")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadProfile("test", path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Digest() != sim.TestbedConfig().Digest() {
		t.Errorf("profile show | -profile FILE changed the world: digest %s, want %s", cfg.Digest(), sim.TestbedConfig().Digest())
	}
}

func TestProfileUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"profile"},
		{"profile", "teleport"},
		{"profile", "fit"},                                        // no -vary
		{"profile", "fit", "-vary", "base_rtt"},                   // no values
		{"profile", "fit", "-vary", "bogus_field=1"},              // unknown field
		{"profile", "fit", "-vary", "bucket_rate=-1"},             // invalid value
		{"profile", "check", "-profile", "lab"},                   // unknown profile
		{"profile", "check", "-seeds", "one"},                     // bad seeds
		{"evaluate", "-profile", "nowhere.json", "-repeats", "1"}, // missing file
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), args)
		if !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestProfileFitRanks runs a two-point grid on one seed and checks that it
// writes the ranked table and a best profile that loads.
func TestProfileFitRanks(t *testing.T) {
	dir := t.TempDir()
	e, out, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"profile", "fit", "-profile", "testbed", "-vary", "rtt_jitter=0.07,0.3",
		"-seeds", "1", "-repeats", "1", "-out", dir})
	if err != nil {
		t.Fatal(err)
	}
	table := out.String()
	i, j := strings.Index(table, `"rtt_jitter":0.07`), strings.Index(table, `"rtt_jitter":0.3`)
	if i < 0 || j < 0 || i > j {
		t.Errorf("the fitted jitter (0.07) is not ranked above 0.3:\n%s", table)
	}
	best, err := sim.LoadProfile(filepath.Join(dir, "best.json"))
	if err != nil {
		t.Fatal(err)
	}
	if best.RTTJitter != 0.07 {
		t.Errorf("best.json has rtt_jitter %v, want 0.07", best.RTTJitter)
	}
}
