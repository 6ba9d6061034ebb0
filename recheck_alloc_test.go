package proflow_test

import (
	"testing"
	"time"

	"github.com/proflow-sdn/proflow"
)

// wantRecheckAllocs fails t when cycle, a step that defers and its
// recheck, allocates more than twice what step, a step alone, does.
func wantRecheckAllocs(t *testing.T, step, cycle func()) {
	t.Helper()
	step()
	alone := testing.AllocsPerRun(50, step)
	cycle()
	both := testing.AllocsPerRun(50, cycle)
	t.Logf("a step alone allocates %v times, a step and its recheck %v", alone, both)
	if both > 2*alone {
		t.Errorf("a step and its recheck allocate %v times, a step alone %v; want at most twice that", both, alone)
	}
}

// A recheck allocates no more than a step does (its context with a
// timeout).
func TestControllerRecheckAllocs(t *testing.T) {
	ctx := t.Context()
	plain := newRecheckRig(t, false, nil)
	plain.gate.defers = false
	r := newRecheckRig(t, true, nil)
	r.fab.tx = proflow.PaperTopology().BucketRate / 2 // the crowd left: held, so every cycle defers again
	wantRecheckAllocs(t, func() {
		plain.clock.Advance(proflow.DefaultInterval)
		plain.ctrl.Step(ctx)
	}, func() {
		r.clock.Advance(proflow.DefaultInterval - 100*time.Millisecond)
		if d := r.ctrl.Step(ctx); d.Recheck == 0 {
			t.Fatalf("step %+v deferred nothing", d)
		}
		r.clock.Advance(100 * time.Millisecond)
		if _, ok := r.ctrl.Recheck(ctx); !ok {
			t.Fatal("no recheck")
		}
	})
}

// A MultiController's recheck allocates no more than its step does.
func TestMultiControllerRecheckAllocs(t *testing.T) {
	ctx := t.Context()
	plain, _, plainClock := newPeekMulti(t, false, 3, deferAll)
	plain.Step(ctx) // moves every flow to switch 2 at once: no peek, nothing deferred
	ctrl, fab, clock := newPeekMulti(t, true, 3, deferAll)
	fab.tx = proflow.PaperTopology().BucketRate / 2 // the crowds left: held, so every cycle defers again
	wantRecheckAllocs(t, func() {
		plainClock.Advance(proflow.DefaultInterval)
		plain.Step(ctx)
	}, func() {
		clock.Advance(proflow.DefaultInterval - 100*time.Millisecond)
		if s := ctrl.Step(ctx); s.Decisions[0].Recheck == 0 {
			t.Fatalf("step %+v deferred nothing", s.Decisions[0])
		}
		clock.Advance(100 * time.Millisecond)
		if _, ok := ctrl.Recheck(ctx); !ok {
			t.Fatal("no recheck")
		}
	})
}
