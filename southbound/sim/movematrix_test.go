package sim

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestRecoveryOf(t *testing.T) {
	// 100 ms samples: 1 for 1 s after the move, then 10.
	var r []float64
	for i := range 40 {
		v := 10.0
		if i < 10 {
			v = 1
		}
		r = append(r, v)
	}
	if got := recoveryOf(r, moveInterval, moveWindow, 9); got != time.Second {
		t.Errorf("recovery %v, want 1s", got)
	}
	if got := recoveryOf(r[:12], moveInterval, moveWindow, 9); got != -1 {
		t.Errorf("recovery within 1.2 s %v, want -1", got)
	}
}

func TestMoveCondition(t *testing.T) {
	for _, tc := range []struct {
		c       string
		recent  float64
		backoff int
		want    bool
	}{
		{"a", 10, 0, true}, {"c", 6, 0, true}, {"c", 8, 0, false}, {"c", 6, 1, false},
		{"d", 1, 0, false}, {"d", 9, 1, true},
	} {
		if got := MoveCondition(tc.c, tc.recent, 10, tc.backoff); got != tc.want {
			t.Errorf("MoveCondition(%s, %v, 10, %d) = %v, want %v", tc.c, tc.recent, tc.backoff, got, tc.want)
		}
	}
}

// TestMoveMatrixHMove checks the matrix's logic on the testbed profile at
// the fabric's bucket: a healthy move at 50 ms costs the flow more with
// H-move than without, and more with the window halved than under the
// measured move model, which costs it nothing; every cell has its
// repeats, and the table lists every cell.
func TestMoveMatrixHMove(t *testing.T) {
	spec := MoveMatrixSpec{Base: TestbedConfig(), BucketRate: 10e6 / 8, BucketBurst: 32 << 10, RTTs: []time.Duration{0, 50 * time.Millisecond},
		Cases: []string{"a", "c"}, Repeats: 2, Warmup: 8 * time.Second, Observe: 12 * time.Second, Collapse: 15 * time.Second}
	cells, err := MoveMatrix(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 12 {
		t.Fatalf("%d cells, want 12 (2 RTTs × 2 cases × 3 move models)", len(cells))
	}
	for _, c := range cells {
		if len(c.Recovery) != 2 || len(c.Criteria) != 2 {
			t.Errorf("cell %v/%s/%v: %d recoveries, %d criteria, want 2", c.Requested, c.Case, c.HMove, len(c.Recovery), len(c.Criteria))
		}
		if c.Requested == 0 && c.RTT != spec.Base.Step {
			t.Errorf("RTT 0 simulated as %v, want one step %v", c.RTT, spec.Base.Step)
		}
	}
	on, off, measured := cells[6], cells[7], cells[8] // 50 ms, case a
	if on.Case != "a" || !on.HMove || off.HMove || on.Requested != 50*time.Millisecond ||
		on.Model != MoveModelHMove || off.Model != MoveModelWindow || measured.Model != MoveModelMeasured || measured.Case != "a" {
		t.Fatalf("cells out of order: %+v %+v %+v", on, off, measured)
	}
	if on.Recovery[0] <= off.Recovery[0] {
		t.Errorf("50 ms healthy move: recovery %v with H-move, %v without; want longer with", on.Recovery[0], off.Recovery[0])
	}
	for _, r := range measured.Recovery {
		if r != 0 {
			t.Errorf("50 ms healthy move under the measured move model: recovery %v, want 0 (the flow never fell under 90%%)", r)
		}
	}
	var b bytes.Buffer
	if err := WriteMoveMatrix(&b, cells); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 12+3 {
		t.Errorf("table has %d lines, want 15:\n%s", n, b.String())
	}
}
