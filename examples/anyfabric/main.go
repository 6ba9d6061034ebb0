// Command anyfabric runs proflow's embedded default agent on a fabric it was
// never trained on, with no model file at hand.
//
// The default model (package models) is universal: it scores every
// aggregation switch from that switch's own telemetry, the current
// switch's, pooled leaf telemetry and the protected flow's, with one set of
// weights, and reads every rate in units of the fabric's bucket rate. So
// the same bytes steer a flow on 8 spines, 16, or the paper's 4, at any
// link speed. Here it runs on a simulated fabric of 8 aggregation switches
// (the simulator's testbed profile resized), where five hosts crowd the
// protected flow's switch while an elephant sits on another and capped
// decoys on the rest; static, the flow-count rule (crowd) and the agent run
// the same episode.
//
//	go run ./examples/anyfabric                        # 8 spines, 3 congestion leaves
//	go run ./examples/anyfabric -spines 16 -rate-factor 2
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/models"
	"github.com/proflow-sdn/proflow/policy"
	"github.com/proflow-sdn/proflow/policy/eval"
	"github.com/proflow-sdn/proflow/southbound/sim"
	"github.com/proflow-sdn/proflow/telemetry"
	"github.com/proflow-sdn/proflow/telemetry/trace"
)

// options are the command line.
type options struct {
	spines, leaves int
	rateFactor     float64
	seed           uint64
}

func main() {
	var o options
	flag.IntVar(&o.spines, "spines", 8, "aggregation switches (at least 4)")
	flag.IntVar(&o.leaves, "leaves", 3, "congestion leaves (at least 3)")
	flag.Float64Var(&o.rateFactor, "rate-factor", 1, "link speed as a multiple of the testbed's (200 Mbit/s buckets)")
	flag.Uint64Var(&o.seed, "seed", 1, "simulation seed")
	flag.Parse()
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "anyfabric:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	cfg, sc, results, err := episodes(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "fabric %s: %d aggregation switches, %d congestion leaves, %.0f Mbit/s buckets\n",
		cfg.Name, cfg.Switches, len(cfg.CongestionLeaves), cfg.BucketRate*8/1e6)
	fmt.Fprintf(out, "scenario: %s\n\n", sc.Description)
	fmt.Fprintf(out, "%-32s %12s  %s\n", "policy", "mean Mbit/s", "moves (time after the crowd arrives → switch)")
	for _, r := range results {
		moves := "none"
		for i, m := range r.moves {
			if i == 0 {
				moves = ""
			} else {
				moves += ", "
			}
			moves += fmt.Sprintf("%.1f s → %s", m.after.Seconds(), m.to)
		}
		fmt.Fprintf(out, "%-32s %12.1f  %s\n", r.policy, r.mean*8/1e6, moves)
	}
	return nil
}

// result is one policy's episode: the protected flow's mean throughput
// from congestion start to the end (bytes/s) and its moves.
type result struct {
	policy string
	mean   float64
	moves  []move
}

// move is one reroute: how long after congestion start, and where to.
type move struct {
	after time.Duration
	to    string
}

// episodes runs static, crowd and the embedded agent on the fabric and
// scenario o describes.
func episodes(ctx context.Context, o options) (sim.Config, *sim.Scenario, []result, error) {
	if o.spines < 4 || o.leaves < 3 {
		return sim.Config{}, nil, nil, fmt.Errorf("-spines %d -leaves %d: want at least 4 spines and 3 congestion leaves (the scenario uses four switches and five congester hosts)", o.spines, o.leaves)
	}
	cfg, err := sim.TestbedConfig().WithFabric(o.spines, o.leaves)
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	if cfg, err = cfg.ScaleRates(o.rateFactor); err != nil {
		return sim.Config{}, nil, nil, err
	}
	sc, err := crowdScenario(o.spines).ScaleRates(o.rateFactor)
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	if err := sc.Validate(cfg); err != nil {
		return sim.Config{}, nil, nil, err
	}
	static, err := eval.ReferencePolicy("static")
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	crowd, err := eval.ReferencePolicy("crowd")
	if err != nil {
		return sim.Config{}, nil, nil, err
	}
	policies := []struct {
		name string
		new  sim.PolicyFactory
	}{
		{"static", sim.PolicyFactory(static.New)},
		{"crowd (flow-count rule)", sim.PolicyFactory(crowd.New)},
		{"agent (embedded default model)", embeddedAgent},
	}
	var results []result
	for _, p := range policies {
		ep, err := sim.RunEpisode(ctx, sim.EpisodeSpec{Scenario: sc, Seed: o.seed, Config: cfg, Policy: p.name, NewPolicy: p.new})
		if err != nil {
			return sim.Config{}, nil, nil, fmt.Errorf("%s: %w", p.name, err)
		}
		results = append(results, summarise(p.name, ep))
	}
	return cfg, sc, results, nil
}

// crowdScenario puts the protected flow on the second-to-last switch, five
// full-rate congester hosts on it at congestion start, an elephant on agg2
// and capped streams on agg1 at the same time, so that the right
// destination is one of the quiet switches.
func crowdScenario(spines int) *sim.Scenario {
	k := spines - 2
	sw := func(i int) string { return fmt.Sprintf("agg%d", i+1) }
	at := sim.Duration(sim.DefaultCongestionStart) // after the flow's ramp-up and the baseline phase
	var cgs []sim.Congester
	for h := 2; h <= 4; h++ {
		cgs = append(cgs, sim.Congester{Host: fmt.Sprintf("h%d", h), Streams: 8, Switch: sw(k), Arrive: at})
	}
	cgs = append(cgs,
		sim.Congester{Host: "h5", Streams: 8, Switch: sw(1), Arrive: at},
		sim.Congester{Host: "h6", Streams: 6, StreamCap: sim.Rate(1e6 / 8), Switch: sw(0), Arrive: at},
	)
	return &sim.Scenario{
		Name:            "anyfabric-crowd",
		Description:     fmt.Sprintf("protected flow on %s; h2–h4 (8 streams each) join it at congestion start; at the same time an elephant (h5, 8 streams) on agg2 and h6's capped streams on agg1", sw(k)),
		ProtectedSwitch: sw(k),
		Congesters:      cgs,
	}
}

// embeddedAgent deploys the embedded default model on topo with the gate it
// was evaluated behind: the construction README.md shows, with no file.
func embeddedAgent(topo proflow.Topology) (proflow.StateEncoder, proflow.Policy, proflow.Gate, error) {
	agent, gateCfg, err := models.LoadDefault(telemetry.DefaultEncoderConfig(topo))
	if err != nil {
		return nil, nil, nil, err
	}
	if !agent.Universal() {
		return nil, nil, nil, errors.New("the embedded default model is not universal")
	}
	enc, err := telemetry.NewEncoder(agent.EncoderConfig())
	if err != nil {
		return nil, nil, nil, err
	}
	gate, err := policy.NewGate(gateCfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return enc, agent, gate, nil
}

// summarise returns the episode's result.
func summarise(name string, ep *trace.Episode) result {
	r := result{policy: name}
	var n int
	for _, s := range ep.Steps {
		if s.Time.Before(ep.Meta.CongestionStart) {
			continue
		}
		r.mean += s.Throughput
		n++
		if to, at, ok := s.Moved(); ok {
			r.moves = append(r.moves, move{after: at.Sub(ep.Meta.CongestionStart), to: ep.Meta.Topology.Switches[to]})
		}
	}
	if n > 0 {
		r.mean /= float64(n)
	}
	return r
}
