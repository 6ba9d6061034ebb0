package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// On 8 spines, with no model file, the embedded agent leaves the crowded
// switch for a quiet one (not the elephant's agg2), and keeps more of the
// flow than static.
func TestEmbeddedAgentOnEightSpines(t *testing.T) {
	o := options{spines: 8, leaves: 3, rateFactor: 1, seed: 1}
	_, sc, results, err := episodes(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]result{}
	for _, r := range results {
		byName[strings.Fields(r.policy)[0]] = r
	}
	agent, static := byName["agent"], byName["static"]
	if len(static.moves) != 0 {
		t.Errorf("static moved: %+v", static.moves)
	}
	if len(agent.moves) == 0 {
		t.Fatalf("the agent never left %s, where the crowd arrived", sc.ProtectedSwitch)
	}
	if to := agent.moves[0].to; to == sc.ProtectedSwitch || to == "agg2" {
		t.Errorf("the agent's first move went to %s, want a quiet switch (not the crowded %s nor the elephant's agg2)", to, sc.ProtectedSwitch)
	}
	if agent.mean <= 1.2*static.mean {
		t.Errorf("agent %.0f B/s, static %.0f B/s: want the agent well ahead of staying under the crowd", agent.mean, static.mean)
	}
}

func TestRunPrintsEveryPolicy(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), options{spines: 6, leaves: 3, rateFactor: 2, seed: 2}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fabric testbed-6x3@x2: 6 aggregation switches", "400 Mbit/s buckets", "static", "crowd", "agent (embedded default model)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestTooSmallFabric(t *testing.T) {
	err := run(context.Background(), options{spines: 3, leaves: 3, rateFactor: 1, seed: 1}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "want at least 4 spines") {
		t.Errorf("run on 3 spines = %v, want an error naming the minimum", err)
	}
}
