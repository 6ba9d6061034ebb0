package training

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/proflow-sdn/proflow/telemetry"
)

// Every transition reads the states lag intervals earlier in its own
// episode (the first state before the episode starts), keeps its action,
// reward and reward inputs, and marks its own placement.
func TestDatasetLagged(t *testing.T) {
	const lag = 3
	d := testDataset(t, 3, 10, true)
	l, err := d.Lagged(lag)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Validate(); err != nil {
		t.Fatalf("the lagged dataset does not validate: %v", err)
	}
	if diff := cmp.Diff([][]int32{d.A, d.Current, d.Episode, d.Step}, [][]int32{l.A, l.Current, l.Episode, l.Step}); diff != "" {
		t.Errorf("actions, placements, episodes or steps changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]float32{d.R, d.Phi0, d.PhiNorm, d.OverflowHat, d.CrowdExcess}, [][]float32{l.R, l.Phi0, l.PhiNorm, l.OverflowHat, l.CrowdExcess}); diff != "" {
		t.Errorf("rewards or reward inputs changed (-want +got):\n%s", diff)
	}
	// In testDataset, transition i is step i%10 of its episode and the
	// flow moves at steps 4 and 9.
	enc, n := d.Encoder, 10
	exact := 0
	for i := range d.Len() {
		first, step := i-i%n, i%n
		src, src2 := first+max(step-lag, 0), first+max(step+1-lag, 0)
		got := l.At(i)
		for _, c := range []struct {
			name      string
			got, want []float32
			on        int32
			wantOn    int32
		}{
			{"state", got.State, d.At(src).State, d.Current[src], d.Current[i]},
			{"next state", got.Next, d.At(src2).State, d.Current[src2], d.A[i]},
		} {
			if k, err := Placement(enc, c.got); err != nil || k != int(c.wantOn) {
				t.Errorf("transition %d (step %d): %s placed on %d (%v), want %d", i, step, c.name, k, err, c.wantOn)
			}
			if c.on != c.wantOn {
				continue // the lagged row is projected onto the later placement
			}
			exact++
			if diff := cmp.Diff(c.want, c.got); diff != "" {
				t.Errorf("transition %d (step %d): %s is not that of step %d (-want +got):\n%s", i, step, c.name, src-first, diff)
			}
		}
	}
	if exact < d.Len() {
		t.Errorf("only %d of %d lagged rows had the flow where it is now; the test checks too little", exact, 2*d.Len())
	}

	// The order of the transitions does not matter.
	perm := rand.New(rand.NewPCG(3, 4)).Perm(d.Len())
	lp, err := d.Subset(perm).Lagged(lag)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l.Subset(perm), lp, datasetCmp); diff != "" {
		t.Errorf("lagging shuffled transitions differs from shuffling lagged ones (-want +got):\n%s", diff)
	}

	l0, err := d.Lagged(0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, l0, datasetCmp); diff != "" {
		t.Errorf("Lagged(0) differs from the dataset (-want +got):\n%s", diff)
	}
	l0.S[0]++
	if l0.S[0] == d.S[0] {
		t.Error("Lagged(0) shares its states with the dataset, want a copy")
	}
}

func TestDatasetLaggedRefuses(t *testing.T) {
	d := testDataset(t, 2, 6, false)
	if _, err := d.Lagged(-1); err == nil || !strings.Contains(err.Error(), "lag -1 intervals, want >= 0") {
		t.Errorf("Lagged(-1) = %v, want an error naming the lag", err)
	}
	gap := d.Subset([]int{0, 1, 3, 4, 6, 7, 8})
	if _, err := gap.Lagged(2); err == nil || !strings.Contains(err.Error(), "episode 100 has steps 1 and 3") || !strings.Contains(err.Error(), "consecutive") {
		t.Errorf("Lagged on an episode with a missing step = %v, want an error naming the episode and the steps", err)
	}
	dup := d.Subset([]int{6, 7, 7, 8})
	if _, err := dup.Lagged(1); err == nil || !strings.Contains(err.Error(), "episode 101 has steps 1 and 1") {
		t.Errorf("Lagged on an episode with a repeated step = %v, want an error naming the episode", err)
	}
}

// servedEpisode is testEpisode with a flow at 5 MB/s (φ_norm about 0.22)
// whose application-limited share grows by 0.2 an interval, so that
// served reads another share in every outcome state.
func servedEpisode(id int) Episode {
	ep := testEpisode(id)
	for t := range ep.Observations {
		ep.Observations[t].Flow.Throughput = 5e6
		ep.Observations[t].Flow.AppLimited = 0.2 * float64(t)
	}
	return ep
}

// drainingEpisode is testEpisode with every switch sending above the
// bucket rate C of enc (1.5 C to 3 C), so that every reserve deficit of
// layout v3 grows from interval to interval.
func drainingEpisode(enc telemetry.EncoderConfig, id int) Episode {
	ep := testEpisode(id)
	for t := range ep.Observations {
		for k := range ep.Observations[t].Switches {
			ep.Observations[t].Switches[k].TxRate = enc.RateScale * (1.5 + 0.5*float64(k))
		}
	}
	return ep
}

// A lagged dataset relabels to the rewards of the dataset it was lagged
// from, with every reward input: those read from the outcome state
// (served's application-limited share, deficit_drain's deficit) are the
// transition's own, not the lagged next state's. They also survive a
// write and a read.
func TestDatasetLaggedRelabel(t *testing.T) {
	const lag = 2
	for _, tc := range []struct {
		name    string
		layout  string
		episode func(telemetry.EncoderConfig) Episode
		reward  func(*RewardConfig)
	}{
		{"served", telemetry.StateLayoutV2, func(telemetry.EncoderConfig) Episode { return servedEpisode(1) },
			func(c *RewardConfig) { c.Served = true }},
		{"deficit_drain", telemetry.StateLayoutV3, func(enc telemetry.EncoderConfig) Episode { return drainingEpisode(enc, 1) },
			func(c *RewardConfig) { c.DeficitDrain, c.Kappa = true, 0.7 }},
	} {
		enc := testEncoder().WithLayout(tc.layout)
		d, err := FromEpisodes([]Episode{tc.episode(enc)}, enc, DefaultRewardConfig(), "unit")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		l, err := d.Lagged(lag)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		paper := slices.Clone(d.R)
		c := DefaultRewardConfig()
		tc.reward(&c)
		back := writeRead(t, l)
		for _, ds := range []*Dataset{d, l, back} {
			if err := ds.Relabel(c); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		if slices.Equal(paper, d.R) {
			t.Fatalf("%s: relabelling changed no reward (%v); the test checks nothing", tc.name, d.R)
		}
		if diff := cmp.Diff(d.R, l.R); diff != "" {
			t.Errorf("%s: the lagged dataset's relabelled rewards differ (-unlagged +lagged):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(d.R, back.R); diff != "" {
			t.Errorf("%s: the lagged dataset's relabelled rewards differ after a write and a read (-unlagged +read):\n%s", tc.name, diff)
		}
		for i := range d.Len() {
			if diff := cmp.Diff(d.At(i).Inputs, l.At(i).Inputs); diff != "" {
				t.Errorf("%s: transition %d: reward inputs changed by the lag (-unlagged +lagged):\n%s", tc.name, i, diff)
			}
		}
	}
}
