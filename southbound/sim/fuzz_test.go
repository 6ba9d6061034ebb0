package sim_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// FuzzReadScenario reads arbitrary scenario files under small limits and
// under the defaults. A refused file gets an error of at most
// MaxProblems+1 lines of at most 512 bytes each; an accepted one is within
// the limits, survives a round trip unchanged, and the fabric built from it
// runs. The committed corpus (testdata/fuzz/FuzzReadScenario) holds files
// that once exhausted memory or flooded the terminal, scaled down.
func FuzzReadScenario(f *testing.F) {
	for _, name := range sim.BuiltinScenarios() {
		data, err := sim.BuiltinScenarioJSON(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	cfg := sim.DefaultConfig()
	small := sim.Limits{MaxBytes: 4 << 10, MaxCongestionStart: time.Minute, MaxWindow: 5 * time.Minute,
		MaxCongesters: 8, MaxMoves: 4, MaxStreamsPerCongester: 16, MaxTotalStreams: 32, MaxProtected: 4, MaxProblems: 4}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lim := range []sim.Limits{small, sim.DefaultLimits()} {
			sc, err := sim.ReadScenarioWithLimits(bytes.NewReader(data), cfg, lim)
			if err != nil {
				checkBounded(t, err, lim.MaxProblems)
				continue
			}
			if n := len(sc.Congesters); n > lim.MaxCongesters {
				t.Fatalf("accepted %d congesters, over the limit %d", n, lim.MaxCongesters)
			}
			if n := len(sc.Protected); n > lim.MaxProtected {
				t.Fatalf("accepted %d protected flows, over the limit %d", n, lim.MaxProtected)
			}
			if l := sc.Length(); l > lim.MaxCongestionStart+lim.MaxWindow {
				t.Fatalf("accepted an episode of %v, over the limits %v + %v", l, lim.MaxCongestionStart, lim.MaxWindow)
			}
			out, err := json.Marshal(sc)
			if err != nil {
				t.Fatalf("marshal an accepted scenario: %v", err)
			}
			back, err := sim.ReadScenarioWithLimits(bytes.NewReader(out), cfg, lim)
			if err != nil {
				t.Fatalf("reading back %s: %v", out, err)
			}
			if diff := cmp.Diff(sc, back, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("round trip changed the scenario (-read +back):\n%s", diff)
			}
			fab, err := sim.New(cfg, sc, 1)
			if err != nil {
				t.Fatalf("New refused an accepted scenario: %v", err)
			}
			if err := fab.Advance(cfg.Interval); err != nil {
				t.Fatalf("Advance: %v", err)
			}
		}
	})
}
