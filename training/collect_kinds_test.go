package training

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/proflow-sdn/proflow/southbound/sim"
)

// TestCorpusKinds: kinds change only the protected flow's kind of each
// plan (congestion and scripts as without them), draw every kind with a
// positive share and only those, and a corpus without kinds is bulk only.
func TestCorpusKinds(t *testing.T) {
	base := CollectConfig{Episodes: 120, Seed: 4, Sim: sim.TestbedConfig()}
	plain, err := PlanCorpus(base)
	if err != nil {
		t.Fatal(err)
	}
	withKinds := base
	withKinds.Kinds = map[string]float64{sim.KindBulk: 1, sim.KindRR: 1, sim.KindOnOff: 1}
	kinded, err := PlanCorpus(withKinds)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	changed := 0
	for i := range plain {
		if !plain[i].Scenario.ProtectedKind.IsBulk() {
			t.Fatalf("plan %d without kinds: kind %+v, want bulk", i, plain[i].Scenario.ProtectedKind)
		}
		k := kinded[i].Scenario.ProtectedKind
		seen[k.Name()]++
		if k.From != 0 {
			changed++
		}
		kinded[i].Scenario.ProtectedKind = sim.FlowKind{}
		if diff := cmp.Diff(plain[i], kinded[i]); diff != "" {
			t.Fatalf("plan %d: kinds changed more than the kind (-without +with):\n%s", i, diff)
		}
	}
	for _, name := range []string{sim.KindBulk, sim.KindRR, sim.KindOnOff} {
		if seen[name] < 20 {
			t.Errorf("kind %s in %d of 120 plans, want about 40", name, seen[name])
		}
	}
	if seen[sim.KindRate] != 0 {
		t.Errorf("kind rate, share 0, in %d plans", seen[sim.KindRate])
	}
	if changed < 5 {
		t.Errorf("%d plans with a demand change, want about 30%% of the rr and onoff ones", changed)
	}
}

func TestCorpusKindsInvalid(t *testing.T) {
	for _, tc := range []struct {
		kinds map[string]float64
		want  string
	}{
		{map[string]float64{"video": 1}, `kind "video", want one of`},
		{map[string]float64{sim.KindRR: -1}, "share of kind rr is -1"},
		{map[string]float64{sim.KindRR: 0}, "kind shares sum to 0"},
	} {
		cfg := CollectConfig{Episodes: 4, Kinds: tc.kinds}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("kinds %v: %v, want an error containing %q", tc.kinds, err, tc.want)
		}
	}
}
