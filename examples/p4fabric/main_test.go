package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/proflow-sdn/proflow/southbound/p4runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReroutedOverGRPCLikeDirect is the acceptance of the P4Runtime
// southbound on the simulator: the controller reroutes the protected flow
// by writing path_select entries over gRPC, the flow recovers, and the
// episode's numbers match the same episode run directly on the simulator.
func TestReroutedOverGRPCLikeDirect(t *testing.T) {
	for _, tc := range []struct {
		scenario, policy string
		seed             uint64
	}{
		{"S1", "crowd", 1},
		{"S7", "reactive", 3},
	} {
		t.Run(tc.scenario+"/"+tc.policy, func(t *testing.T) {
			var out bytes.Buffer
			start := time.Now()
			r, err := run(context.Background(), options{Scenario: tc.scenario, Seed: tc.seed, Policy: tc.policy}, &out)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			t.Logf("%v\n%s", time.Since(start), out.String())

			if r.Held != 0 {
				t.Errorf("%d steps held on an error over P4Runtime, want none", r.Held)
			}
			// Rerouted over gRPC, in the window.
			if len(r.GRPC.Reroutes) == 0 || math.IsNaN(r.GRPCCell.FirstReroute) {
				t.Fatalf("no reroute over P4Runtime in the window (cell %+v)", r.GRPCCell)
			}
			final := r.Final
			if final == r.GRPC.Reroutes[0].From {
				t.Errorf("flow ends on %s, where it started", r.Topology.Switches[final])
			}
			if r.Forward != final || r.Reverse != final {
				t.Errorf("data plane entries: forward on %d, reverse on %d; simulated flow on %d", r.Forward, r.Reverse, final)
			}
			// The leaves hold the controller's entries, both directions,
			// toward the final switch.
			src, dst := r.Leaves[0], r.Leaves[3]
			var fwd, rev bool
			for _, e := range r.Entries {
				if e.Metadata != p4runtime.DefaultOwner {
					t.Errorf("entry on %s for %v has metadata %q, want the controller's %q", e.Leaf, e.Flow, e.Metadata, p4runtime.DefaultOwner)
					continue
				}
				switch {
				case e.Leaf == src.Name && e.Flow == r.Flow && e.Port == src.Uplinks[final] && e.Bytes > 0:
					fwd = true
				case e.Leaf == dst.Name && e.Flow == r.Flow.Reverse() && e.Port == dst.Uplinks[final]:
					rev = true
				}
			}
			if !fwd || !rev {
				t.Errorf("path_select entries %+v: forward on %s toward %s (with traffic counted) %v, reverse on %s %v; want both",
					r.Entries, src.Name, r.Topology.Switches[final], fwd, dst.Name, rev)
			}
			// The flow recovers: above 90% of its baseline after the reroute.
			if math.IsNaN(recovered(r.GRPC, r.GRPCCell.FirstReroute, 0.9)) {
				t.Errorf("flow never back above 90%% of its baseline after the reroute at %+.1f s", r.GRPCCell.FirstReroute)
			}
			// Comparable with the direct run.
			g, d := r.GRPCCell.MeanThroughput, r.DirectCell.MeanThroughput
			if math.Abs(g-d) > 0.15*d {
				t.Errorf("mean throughput %.0f B/s over gRPC, %.0f B/s direct: more than 15%% apart", g, d)
			}
			if math.Abs(r.GRPCCell.FirstReroute-r.DirectCell.FirstReroute) > 5 {
				t.Errorf("first reroute at %+.1f s over gRPC, %+.1f s direct", r.GRPCCell.FirstReroute, r.DirectCell.FirstReroute)
			}
			for _, want := range []string{"reroute ", "p4runtime over gRPC", "direct (sim.RunEpisode)", `metadata "proflow"`} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q", want)
				}
			}
		})
	}
}

func TestPolicyErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := run(ctx, options{Scenario: "S1", Seed: 1, Policy: "psychic"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `unknown policy "psychic"`) {
		t.Errorf("run(psychic) = %v, want an unknown policy error", err)
	}
	missing := filepath.Join(t.TempDir(), "none.safetensors")
	if _, err := run(ctx, options{Scenario: "S1", Seed: 1, Policy: "agent", Model: missing}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "policy agent needs a model") {
		t.Errorf("run(agent without model) = %v, want an error naming the missing model", err)
	}
	if _, err := run(ctx, options{Scenario: "S99", Seed: 1, Policy: "crowd"}, &bytes.Buffer{}); err == nil {
		t.Error("run(S99) succeeded")
	}
}

// update rewrites the README's sample output from a run.
var update = flag.Bool("update", false, "rewrite README.md's sample output from the default run")

// TestREADMESampleOutput keeps the README's sample output that of the
// default run (go run ./examples/p4fabric): the summary from its
// "S1, seed 1" line to the end. go test ./examples/p4fabric -run
// TestREADMESampleOutput -args -update rewrites it.
func TestREADMESampleOutput(t *testing.T) {
	var out bytes.Buffer
	if _, err := run(context.Background(), defaultOptions(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	o := defaultOptions()
	head := fmt.Sprintf("%s, seed %d, policy %s:", o.Scenario, o.Seed, o.Policy)
	i := strings.Index(out.String(), "\n"+head)
	if i < 0 {
		t.Fatalf("output lacks a line starting %q:\n%s", head, out.String())
	}
	got := strings.TrimSpace(out.String()[i:]) + "\n"

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(readme, []byte("```\n"+head))
	if start < 0 {
		t.Fatalf("README.md has no code block starting %q", head)
	}
	start += len("```\n")
	end := bytes.Index(readme[start:], []byte("```\n"))
	if end < 0 {
		t.Fatal("README.md: the sample output's code block does not end")
	}
	end += start
	if string(readme[start:end]) == got {
		return
	}
	if *update {
		next := append(append(append([]byte(nil), readme[:start]...), got...), readme[end:]...)
		if err := os.WriteFile("README.md", next, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's sample output is stale; go test ./examples/p4fabric -run TestREADMESampleOutput -args -update rewrites it.\nREADME:\n%s\nrun:\n%s", readme[start:end], got)
}
