package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

func TestCrowdReroutesOnBundledRecording(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), "", "crowd", false, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	// The recording's crowd arrives on agg1 at 12:00:20; the crowd policy
	// must move the flow to agg4 (the fewest flows) right after, once.
	re := regexp.MustCompile(`at=2026-11-29T12:00:2[0-2][.0-9]*Z reason=rerouted current=agg1 .* target=agg4`)
	if !re.MatchString(got) {
		t.Errorf("no reroute agg1→agg4 between 12:00:20 and 12:00:22 in output:\n%s", got)
	}
	if n := strings.Count(got, "enforcer: install"); n != 1 {
		t.Errorf("%d installs, want 1:\n%s", n, got)
	}
	if !strings.Contains(got, "end of recording: flow on agg4") {
		t.Errorf("flow not on agg4 at the end:\n%s", got)
	}
}

func TestStaticNeverMoves(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), "", "static", false, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "enforcer: install") || !strings.Contains(out.String(), "flow on agg1") {
		t.Errorf("static moved the flow:\n%s", out.String())
	}
}

func TestUnknownPolicy(t *testing.T) {
	err := run(context.Background(), "", "psychic", false, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `unknown policy "psychic"`) {
		t.Errorf("run = %v, want unknown policy error", err)
	}
}
