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
// trace. The latency fields that FlowSample gained later are cleared
// before hashing (they are omitted when zero, so a cleared trace is the
// trace as it was), and so are the switches' queue backlogs (QueueBytes,
// added after both); bulkDigestsWithLatency pins the whole trace as it is.
var bulkDigests = map[string]string{
	"datacenter": "6dad99412efad6a97af4c554dbbf332b50f6d1215a9cd7ff136b7e256b5a70a4",
	"testbed":    "28fb16df0600af154f9c500d82accb65ac4eeabee1c2f91be35c5c1b0b2d695b",
}

// bulkDigestsWithLatency pins the same traces with their latency fields
// and queue backlogs (re-pinned when QueueBytes was added: the cleared
// digests above did not change).
var bulkDigestsWithLatency = map[string]string{
	"datacenter": "bfe6fd932e6e6b6f1d00791e3c82a118d975e34510e4b4c2161d2a9f4c482a68",
	"testbed":    "12120317f235e931c4a67c086e755e652931725af65472fc8e772993ea27224b",
}

// bulkTrace returns the JSONL trace of S1 at seed 7 on profile, with the
// flow samples' latency fields cleared unless latency is set.
func bulkTrace(t *testing.T, profile string, latency bool) []byte {
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
	for i := range ep.Steps {
		if o := ep.Steps[i].Obs; o != nil && !latency {
			if o.Flow.SmoothedRTT == 0 || o.Flow.RTTP99 == 0 {
				t.Fatalf("%s: step %d: flow sample %+v, want its RTT filled in", profile, i, o.Flow)
			}
			o.Flow.SmoothedRTT, o.Flow.RTTP99, o.Flow.CompletionP99, o.Flow.Completions = 0, 0, 0, 0
			for k := range o.Switches {
				o.Switches[k].QueueBytes = 0
			}
		}
	}
	var buf bytes.Buffer
	if err := trace.Write(&buf, ep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBulkTraceBitIdentical(t *testing.T) {
	for _, latency := range []bool{false, true} {
		digests := bulkDigests
		if latency {
			digests = bulkDigestsWithLatency
		}
		for profile, want := range digests {
			sum := sha256.Sum256(bulkTrace(t, profile, latency))
			if got := hex.EncodeToString(sum[:]); got != want {
				t.Errorf("%s: S1 seed 7 trace digest %s (latency fields kept: %v), want %s (a bulk episode's trace changed)", profile, got, latency, want)
			}
		}
	}
}
