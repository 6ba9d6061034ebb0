package eval_test

import (
	"context"
	"fmt"

	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
)

// Summarize turns hand-made episodes into per-cell numbers and gains over the reactive baseline.
func ExampleSummarize() {
	// In three scenarios congestion degrades the protected flow at 15, 25
	// and 40 s (a second later in the second repeat). The static policy
	// never moves it, the reactive one moves it 2 s after it degrades and a
	// proactive agent 8 s before. Each cell's lead is measured from the
	// static policy's degradation onset; each comparison gives the gain in
	// throughput with its scenario-bootstrap interval and, where both
	// moved the flow, how much earlier the candidate did.
	// episode samples the protected flow every second from 10 s before
	// congestion starts to the window's end, each sample for the second
	// that ends at it: 20 MB/s until it degrades at onset (unless it was
	// moved first), 4 MB/s while it stays on the congested switch and
	// 19 MB/s after the move at moveAt (negative: never moved).
	episode := func(scenario, policy string, repeat int, onset, moveAt float64) *eval.Episode {
		e := &eval.Episode{Scenario: scenario, Policy: policy, Repeat: repeat, Baseline: 20e6}
		for t := -10.0; t <= 120; t++ {
			rate := 20e6
			switch {
			case moveAt >= 0 && t >= moveAt:
				rate = 19e6
			case t >= onset:
				rate = 4e6
			}
			e.T = append(e.T, t)
			e.Throughput = append(e.Throughput, rate)
			e.Overflow = append(e.Overflow, 20000+200*max(t, 0))
		}
		if moveAt >= 0 {
			e.Reroutes = []eval.Reroute{{At: moveAt, From: 0, To: 1, Overflow: 20000 + 200*moveAt}}
		}
		return e
	}
	var eps []*eval.Episode
	for i, onset := range []float64{15, 25, 40} {
		sc := fmt.Sprintf("S%d", i+1)
		for rep := range 2 {
			at := onset + float64(rep) // the repeats differ by a second
			eps = append(eps,
				episode(sc, "static", rep, at, -1),
				episode(sc, "reactive", rep, at, at+2),
				episode(sc, "agent", rep, at, at-8))
		}
	}

	s, err := eval.Summarize(eps, eval.DefaultOptions())
	if err != nil {
		panic(err)
	}
	for _, c := range s.Cells {
		fmt.Printf("%s %-8s %4.1f MB/s, moved in %d/%d repeats", c.Scenario, c.Policy, c.MeanThroughput/1e6, c.Fired, c.Repeats)
		if c.Fired > 0 {
			fmt.Printf(" at %.1f s (lead %+.1f s)", c.FirstReroute, c.Lead)
		}
		fmt.Println()
	}
	for _, c := range s.Comparisons {
		fmt.Printf("%s vs %s: gain %.2f [%.2f, %.2f]", c.Candidate, c.Baseline, c.Gain, c.GainLo, c.GainHi)
		if len(c.LeadScenarios) > 0 {
			fmt.Printf(", moves %.1f s earlier", c.Lead)
		}
		fmt.Println()
	}
	// Output:
	// S1 static    5.9 MB/s, moved in 0/2 repeats
	// S1 reactive 18.9 MB/s, moved in 2/2 repeats at 17.5 s (lead -2.0 s)
	// S1 agent    19.1 MB/s, moved in 2/2 repeats at 7.5 s (lead +8.0 s)
	// S2 static    7.3 MB/s, moved in 0/2 repeats
	// S2 reactive 19.0 MB/s, moved in 2/2 repeats at 27.5 s (lead -2.0 s)
	// S2 agent    19.1 MB/s, moved in 2/2 repeats at 17.5 s (lead +8.0 s)
	// S3 static    9.3 MB/s, moved in 0/2 repeats
	// S3 reactive 19.1 MB/s, moved in 2/2 repeats at 42.5 s (lead -2.0 s)
	// S3 agent    19.3 MB/s, moved in 2/2 repeats at 32.5 s (lead +8.0 s)
	// static vs reactive: gain 0.39 [0.31, 0.49]
	// agent vs reactive: gain 1.01 [1.01, 1.01], moves 10.0 s earlier
}

// A small sweep of the reference policies on the simulated fabric, summarised.
func ExampleSweep_Run() {
	// Three of the paper's scenarios, whose congestion sets in at different
	// times; every policy sees the same traffic in a given repeat. The
	// reactive policy moves the flow once it degrades, the crowd policy as
	// soon as the congesters' flow entries crowd its switch.
	var scenarios []*sim.Scenario
	for _, name := range []string{"S1", "S5", "S7"} {
		sc, err := sim.BuiltinScenario(name)
		if err != nil {
			panic(err)
		}
		scenarios = append(scenarios, sc)
	}
	var policies []eval.PolicySpec
	for _, name := range []string{"static", "reactive", "crowd"} {
		p, err := eval.ReferencePolicy(name)
		if err != nil {
			panic(err)
		}
		policies = append(policies, p)
	}
	sweep := eval.Sweep{Scenarios: scenarios, Policies: policies, Repeats: 1, Seed: 1, Parallelism: 2}
	eps, err := sweep.Run(context.Background())
	if err != nil {
		panic(err)
	}
	s, err := eval.Summarize(eps, eval.DefaultOptions())
	if err != nil {
		panic(err)
	}
	for _, c := range s.Cells {
		fmt.Printf("%s %-8s %4.1f MB/s", c.Scenario, c.Policy, c.MeanThroughput/1e6)
		if c.Degraded > 0 {
			fmt.Printf(", degraded at %.1f s", c.Degradation)
		}
		if c.Fired > 0 {
			fmt.Printf(", moved at %.1f s", c.FirstReroute)
		}
		fmt.Println()
	}
	crowd, _ := s.Comparison("crowd")
	fmt.Printf("crowd vs reactive: gain %.2f, moves %.1f s earlier on %d scenarios\n",
		crowd.Gain, crowd.Lead, len(crowd.LeadScenarios))
	// Output:
	// S1 static    3.3 MB/s, degraded at 15.5 s
	// S1 reactive 22.9 MB/s, degraded at 15.5 s, moved at 16.0 s
	// S1 crowd    23.1 MB/s, moved at 0.5 s
	// S5 static    6.3 MB/s, degraded at 25.0 s
	// S5 reactive 22.8 MB/s, degraded at 25.0 s, moved at 26.0 s
	// S5 crowd    23.1 MB/s, moved at 0.5 s
	// S7 static    8.2 MB/s, degraded at 38.0 s
	// S7 reactive 22.9 MB/s, degraded at 38.0 s, moved at 38.5 s
	// S7 crowd    23.1 MB/s, moved at 0.5 s
	// crowd vs reactive: gain 1.01, moves 26.3 s earlier on 3 scenarios
}

// Calibrating the reactive threshold (App. E) on simulated no-congestion traces.
func ExampleAnalyseThreshold() {
	// Eight episodes without congesters, two on each aggregation switch,
	// recorded under the static policy so that nothing disturbs the flow.
	// The curve says in how many of them the reactive rule (three samples
	// in a row above the threshold) would fire on the flow's own,
	// self-induced overflow.
	cfg := sim.DefaultConfig()
	static, err := eval.ReferencePolicy("static")
	if err != nil {
		panic(err)
	}
	var specs []sim.EpisodeSpec
	for i := range 8 {
		sw := cfg.Topology().Switches[i%cfg.Switches]
		specs = append(specs, sim.EpisodeSpec{
			Scenario: &sim.Scenario{Name: "quiet-" + sw, ProtectedSwitch: sw},
			Seed:     eval.EpisodeSeed(1, "quiet", i), Policy: "static", NewPolicy: static.New,
		})
	}
	traces, err := sim.RunMany(context.Background(), specs, 2, nil)
	if err != nil {
		panic(err)
	}
	r, err := eval.AnalyseThreshold(traces, eval.DefaultThresholdOptions())
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d samples in %d episodes: mean %.0fk, p95 %.0fk, max %.0fk overlimits/s\n",
		r.Samples, r.Episodes, r.Mean/1e3, r.P95/1e3, r.Max/1e3)
	last := -1.0
	for _, p := range r.Curve {
		if p.FalseAlarmRate != last { // print only where the curve steps
			fmt.Printf("threshold %.0f: false alarms in %.0f of %d episodes\n", p.Threshold, p.FalseAlarmRate*float64(r.Episodes), r.Episodes)
			last = p.FalseAlarmRate
		}
	}
	fmt.Printf("lowest threshold without false alarms: %.0f\n", r.Lowest)
	// Output:
	// 2240 samples in 8 episodes: mean 22k, p95 26k, max 30k overlimits/s
	// threshold 20000: false alarms in 8 of 8 episodes
	// threshold 22500: false alarms in 7 of 8 episodes
	// threshold 23000: false alarms in 4 of 8 episodes
	// threshold 23500: false alarms in 3 of 8 episodes
	// threshold 24000: false alarms in 1 of 8 episodes
	// threshold 24500: false alarms in 0 of 8 episodes
	// lowest threshold without false alarms: 24500
}
