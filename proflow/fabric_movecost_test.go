package main

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fabric movecost -sim-only runs the simulator's matrix alone (no root,
// no fabric); a bad -cases or -rtts is a usage error naming the flag.
func TestFabricMoveCostSimOnly(t *testing.T) {
	e, out, _ := newTestEnv()
	err := e.dispatch(context.Background(), []string{"fabric", "movecost", "-sim-only", "-rtts", "0,50ms", "-cases", "a,d",
		"-repeats", "1", "-warmup", "4s", "-observe", "4s", "-collapse", "5s"})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n0s (simulated 5ms) ") + strings.Count(out.String(), "\n50ms "); n != 12 {
		t.Errorf("%d simulator rows, want 12 (2 RTTs × 2 cases × 3 move models):\n%s", n, out)
	}
	for flag, args := range map[string][]string{"-cases": {"-cases", "a,e"}, "-rtts": {"-rtts", "5ms,x"}} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), append([]string{"fabric", "movecost", "-sim-only"}, args...))
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), flag) {
			t.Errorf("movecost %v: %v, want a usage error naming %s", args, err, flag)
		}
	}
}
