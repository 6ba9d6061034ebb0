package sim_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// bulkDigests pins the SHA-256 of the JSONL trace of S1 at seed 7 under
// the overflow-threshold stand-in (27,000 on three samples, so the flow
// moves once), one per profile. They were taken before the protected-flow
// kinds existed: a bulk flow, the default kind, must keep every byte of its
// trace.
var bulkDigests = map[string]string{
	"datacenter": "6dad99412efad6a97af4c554dbbf332b50f6d1215a9cd7ff136b7e256b5a70a4",
	"testbed":    "28fb16df0600af154f9c500d82accb65ac4eeabee1c2f91be35c5c1b0b2d695b",
}

// bulkTrace returns the JSONL trace of S1 at seed 7 on profile.
func bulkTrace(t *testing.T, profile string) []byte {
	t.Helper()
	cfg, err := sim.ProfileConfig(profile)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{
		Scenario: mustScenario(t, "S1"), Seed: 7, Config: cfg, Policy: "threshold",
		NewPolicy: thresholdFactory(27000, 3),
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := trace.Write(&buf, ep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBulkTraceBitIdentical(t *testing.T) {
	for profile, want := range bulkDigests {
		sum := sha256.Sum256(bulkTrace(t, profile))
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: S1 seed 7 trace digest %s, want %s (a bulk episode's trace changed)", profile, got, want)
		}
	}
}
