package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// thresholdFactory is a stand-in for the reactive baseline written with the
// root package's adapters: it moves the flow to the switch with the least
// overflow once ξ on the current switch exceeded threshold on n
// consecutive samples.
func thresholdFactory(threshold float64, n int) sim.PolicyFactory {
	return func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
		run := 0
		pol := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
			if in.Obs.Switches[in.Current].OverflowRate > threshold {
				run++
			} else {
				run = 0
			}
			scores[in.Current] = 1
			if run >= n {
				run = 0
				best := -1
				for k, s := range in.Obs.Switches {
					if k != in.Current && (best < 0 || s.OverflowRate < in.Obs.Switches[best].OverflowRate) {
						best = k
					}
				}
				scores[in.Current], scores[best] = 0, 1
			}
			return nil
		})
		return oneDimEncoder{}, pol, proflow.GateFunc(argmaxGate), nil
	}
}

// moveAt returns a factory whose policy moves the flow to target once the
// step time reaches at.
func moveAt(at time.Time, target int) sim.PolicyFactory {
	return func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
		pol := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
			if !in.Time.Before(at) {
				scores[target] = 1
			} else {
				scores[in.Current] = 1
			}
			return nil
		})
		return oneDimEncoder{}, pol, proflow.GateFunc(argmaxGate), nil
	}
}

func mustScenario(t testing.TB, name string) *sim.Scenario {
	t.Helper()
	sc, err := sim.BuiltinScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// since returns the step's time relative to congestion start, in seconds.
func since(ep *trace.Episode, s *trace.Step) float64 {
	return s.Time.Sub(ep.Meta.CongestionStart).Seconds()
}

func TestRunEpisodeWithStandIns(t *testing.T) {
	ep, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{
		Scenario: mustScenario(t, "S1"), Seed: 1, Policy: "threshold", NewPolicy: thresholdFactory(reactiveThreshold, reactiveConsecutive),
		Labels: map[string]string{"purpose": "test"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ep.Validate(); err != nil {
		t.Fatal(err)
	}
	m := ep.Meta
	if m.Source != "sim" || m.Scenario != "S1" || m.Policy != "threshold" || m.Seed != 1 || m.Labels["purpose"] != "test" {
		t.Errorf("metadata %+v", m)
	}
	if len(ep.Steps) != 280 {
		t.Errorf("%d steps, want 280 (140 s at 500 ms)", len(ep.Steps))
	}
	var cfg sim.Config
	if err := json.Unmarshal(m.SimConfig, &cfg); err != nil || cfg.BucketRate != 25e6 {
		t.Errorf("sim config in the trace: %v, %+v", err, cfg.BucketRate)
	}
	// The baseline phase comes first, then the controller stays until the
	// bucket is exhausted and reroutes once.
	var reroutes []trace.Step
	for i, s := range ep.Steps {
		if i < 14 && s.Decision.Reason != proflow.ReasonBaseline {
			t.Errorf("step %d reason %s, want the baseline phase (warm-up 4 + 10 samples)", i, s.Decision.Reason)
		}
		if s.Obs == nil {
			t.Errorf("step %d has no observation", i)
		}
		if s.Decision.Rerouted {
			reroutes = append(reroutes, s)
		}
	}
	if len(reroutes) != 1 || reroutes[0].Switch != 0 || reroutes[0].Action() == 0 {
		t.Fatalf("reroutes %+v, want one move away from agg1", reroutes)
	}
	if at := since(ep, &reroutes[0]); at < 12 || at > 20 {
		t.Errorf("the threshold policy fired %.1fs after congestion start, want right after the bucket runs dry (12–20 s)", at)
	}
	last := ep.Steps[len(ep.Steps)-1]
	if last.Switch != reroutes[0].Action() || last.Throughput < 0.8*ep.Steps[30].Throughput {
		t.Errorf("end of episode on switch %d at %.1f MB/s", last.Switch, last.Throughput/1e6)
	}
}

// The policy package's reference policies, with the default encoder.
func TestRunEpisodeWithPolicyPackage(t *testing.T) {
	factories := map[string]sim.PolicyFactory{
		"static": func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
			return enc, policy.Static{}, policy.Immediate(), err
		},
		"reactive": func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			enc, err := telemetry.NewEncoder(telemetry.DefaultEncoderConfig(topo))
			if err != nil {
				return nil, nil, nil, err
			}
			r, err := policy.NewReactive(policy.DefaultReactiveConfig())
			return enc, r, policy.Immediate(), err
		},
	}
	mean := func(ep *trace.Episode) float64 {
		sum, n := 0.0, 0
		for i := range ep.Steps {
			if since(ep, &ep.Steps[i]) > 0 {
				sum += ep.Steps[i].Throughput
				n++
			}
		}
		return sum / float64(n)
	}
	results := map[string]*trace.Episode{}
	for _, name := range []string{"static", "reactive"} {
		ep, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{Scenario: mustScenario(t, "S1"), Seed: 2, Policy: name, NewPolicy: factories[name]})
		if err != nil {
			t.Fatal(err)
		}
		results[name] = ep
	}
	st, re := mean(results["static"]), mean(results["reactive"])
	t.Logf("S1 seed 2: static %.2f MB/s, reactive %.2f MB/s over the window", st/1e6, re/1e6)
	if st > 0.3*25e6 {
		t.Errorf("static keeps %.2f MB/s in S1, want the collapse", st/1e6)
	}
	if re < 2*st {
		t.Errorf("reactive %.2f MB/s does not beat static %.2f MB/s", re/1e6, st/1e6)
	}
	for _, s := range results["static"].Steps {
		if s.Decision.Rerouted {
			t.Fatalf("static rerouted at %v", s.Time)
		}
	}
}

// A reroute to a clean switch restores at least 80% of the baseline within
// 15 s, whether the flow leaves early (healthy, during the precursor) or
// late (collapsed, possibly waiting on a retransmission timeout).
func TestRerouteRecovery(t *testing.T) {
	sc := mustScenario(t, "S1")
	for _, after := range []time.Duration{5 * time.Second, 40 * time.Second, 70 * time.Second} {
		for _, seed := range calibrationSeeds {
			at := sim.DefaultConfig().Epoch.Add(sc.Start() + after)
			ep, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{Scenario: sc, Seed: seed, NewPolicy: moveAt(at, 2)})
			if err != nil {
				t.Fatal(err)
			}
			var phi0 float64
			n := 0
			moved, recovered := -1.0, -1.0
			minAfter := 1e18
			for i := range ep.Steps {
				s := &ep.Steps[i]
				x := since(ep, s)
				if x > -10 && x <= 0 {
					phi0 += s.Throughput
					n++
				}
				if s.Decision.Rerouted {
					moved = x
				}
				if moved >= 0 && x > moved {
					minAfter = min(minAfter, s.Throughput)
					if recovered < 0 && s.Throughput >= 0.8*phi0/float64(n) {
						recovered = x
					}
				}
			}
			phi0 /= float64(n)
			if moved < 0 {
				t.Fatalf("seed %d: the flow was not moved", seed)
			}
			t.Logf("moved at %5.1fs (seed %d): dip to %.0f%% of baseline, back above 80%% %.1fs later", moved, seed, 100*minAfter/phi0, recovered-moved)
			if recovered < 0 || recovered-moved > 15 {
				t.Errorf("seed %d: moved at %.1fs, recovered to 80%% of baseline at %.1fs, want within 15 s", seed, moved, recovered)
			}
		}
	}
}

func TestRunManyIndependentOfParallelism(t *testing.T) {
	var specs []sim.EpisodeSpec
	for _, name := range []string{"S1", "S6", "S12", "C2"} {
		for seed := uint64(1); seed <= 2; seed++ {
			specs = append(specs, sim.EpisodeSpec{Scenario: mustScenario(t, name), Seed: seed, Policy: "threshold", NewPolicy: thresholdFactory(reactiveThreshold, reactiveConsecutive)})
		}
	}
	write := func(parallelism int) [][]byte {
		var calls []int
		eps, err := sim.RunMany(context.Background(), specs, parallelism, func(done, total int) {
			if total != len(specs) {
				t.Errorf("progress total %d, want %d", total, len(specs))
			}
			calls = append(calls, done)
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(calls, want) {
			t.Errorf("progress calls %v, want %v", calls, want)
		}
		dir := t.TempDir()
		var out [][]byte
		for i, ep := range eps {
			path := filepath.Join(dir, fmt.Sprintf("%d.jsonl.gz", i))
			if err := trace.WriteFile(path, ep); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		return out
	}
	one, two := write(1), write(2)
	for i := range one {
		if !bytes.Equal(one[i], two[i]) {
			t.Errorf("episode %d (%s seed %d): trace files differ between parallelism 1 and 2", i, specs[i].Scenario.Name, specs[i].Seed)
		}
	}
	// Distinct seeds give distinct traces.
	if bytes.Equal(one[0], one[1]) {
		t.Error("seeds 1 and 2 wrote identical traces")
	}
}

func TestRunEpisodeErrors(t *testing.T) {
	ctx := context.Background()
	good := thresholdFactory(reactiveThreshold, reactiveConsecutive)
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		spec sim.EpisodeSpec
		want string
	}{
		{"nil scenario", sim.EpisodeSpec{NewPolicy: good}, "scenario is nil"},
		{"nil factory", sim.EpisodeSpec{Scenario: mustScenario(t, "S1")}, "policy factory is nil"},
		{"factory fails", sim.EpisodeSpec{Scenario: mustScenario(t, "S1"), Policy: "p", NewPolicy: func(proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
			return nil, nil, nil, boom
		}}, `build policy "p": boom`},
		{"bad config", sim.EpisodeSpec{Scenario: mustScenario(t, "S1"), NewPolicy: good, Config: sim.Config{Switches: 1}}, "invalid config"},
		{"bad controller config", sim.EpisodeSpec{Scenario: mustScenario(t, "S1"), NewPolicy: good, Controller: func(c *proflow.Config) { c.InitialSwitch = 9 }}, "initial switch 9"},
	} {
		_, err := sim.RunEpisode(ctx, c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: RunEpisode = %v, want an error containing %q", c.name, err, c.want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := sim.RunEpisode(cancelled, sim.EpisodeSpec{Scenario: mustScenario(t, "S1"), NewPolicy: good}); !errors.Is(err, context.Canceled) {
		t.Errorf("RunEpisode with a cancelled context = %v", err)
	}
	specs := []sim.EpisodeSpec{
		{Scenario: mustScenario(t, "S1"), NewPolicy: good},
		{Scenario: mustScenario(t, "S2"), NewPolicy: nil},
	}
	if _, err := sim.RunMany(ctx, specs, 2, nil); err == nil || !strings.Contains(err.Error(), "episode 1 (S2, seed 0)") {
		t.Errorf("RunMany with a broken spec = %v", err)
	}
	if _, err := sim.RunMany(cancelled, specs[:1], 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("RunMany with a cancelled context = %v", err)
	}
	if eps, err := sim.RunMany(ctx, nil, 4, nil); err != nil || len(eps) != 0 {
		t.Errorf("RunMany of nothing = %v, %v", eps, err)
	}
}

// TestRunEpisodeRecordsActedOnObservation checks that every step's Obs in
// the trace is the observation the controller acted on: the one its
// policy was given, field for field.
func TestRunEpisodeRecordsActedOnObservation(t *testing.T) {
	seen := map[time.Time]*proflow.Observation{}
	factory := func(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
		pol := proflow.PolicyFunc(func(scores []float64, in *proflow.Input) error {
			seen[in.Time] = in.Obs.Clone()
			return stay(scores, in)
		})
		return oneDimEncoder{}, pol, proflow.GateFunc(argmaxGate), nil
	}
	ep, err := sim.RunEpisode(context.Background(), sim.EpisodeSpec{Scenario: mustScenario(t, "S5"), Seed: 3, NewPolicy: factory})
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for i := range ep.Steps {
		s := &ep.Steps[i]
		want, ok := seen[s.Time]
		if !ok {
			continue
		}
		compared++
		if s.Obs == nil {
			t.Fatalf("step %d: no observation in the trace, the policy acted on one", i)
		}
		if !s.Obs.Time.Equal(want.Time) || s.Obs.Flow != want.Flow || !slices.Equal(s.Obs.Switches, want.Switches) || !slices.Equal(s.Obs.Leaves, want.Leaves) {
			t.Fatalf("step %d: trace observation %+v, the policy saw %+v", i, s.Obs, want)
		}
	}
	if compared < 200 {
		t.Errorf("compared %d steps, want every step after the baseline phase", compared)
	}
}
