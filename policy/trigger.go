package policy

import (
	"math"
	"time"

	"github.com/proflow-sdn/proflow"
)

// trigger is the debounce and cooldown logic shared by Reactive, Crowd,
// ThroughputDrop and LatencyThreshold.
type trigger struct {
	consecutive int
	cooldown    time.Duration

	streak   int       // consecutive samples above the threshold on the current switch
	prev     int       // Input.Current at the previous step, -1 before the first
	prevTime time.Time // Input.Time of the previous step
	movedAt  time.Time // when the last move was issued; zero if none seen
}

func newTrigger(consecutive int, cooldown time.Duration) trigger {
	return trigger{consecutive: consecutive, cooldown: cooldown, prev: -1}
}

func (t *trigger) reset() {
	t.streak, t.prev, t.prevTime, t.movedAt = 0, -1, time.Time{}, time.Time{}
}

// step records one sample taken at now with the flow on current, whose
// signal is over the threshold or not, and reports whether to fire.
//
// A change of current since the previous step is a completed move: it was
// issued at the previous step (the controller moves the flow within the step
// whose gate admitted it), so the cooldown runs from that step's time, and
// the streak restarts because its samples were taken on the old switch.
func (t *trigger) step(now time.Time, current int, over bool) bool {
	if t.prev >= 0 && current != t.prev {
		t.streak = 0
		t.movedAt = t.prevTime
	}
	t.prev, t.prevTime = current, now
	if over {
		t.streak++
	} else {
		t.streak = 0
	}
	if t.streak < t.consecutive {
		return false
	}
	return t.movedAt.IsZero() || now.Sub(t.movedAt) >= t.cooldown
}

// cooling reports whether now is within the cooldown of the last move seen
// by step.
func (t *trigger) cooling(now time.Time) bool {
	return !t.movedAt.IsZero() && now.Sub(t.movedAt) < t.cooldown
}

// backoff doubles a cooldown for every move made before the flow
// recovered from the previous one, as route-flap damping stops a flapping
// route; a move after a recovery restores it. ThroughputDrop and
// LatencyThreshold share it.
type backoff struct {
	prev      int  // Input.Current at the previous step, -1 before the first
	recovered bool // a healthy sample since the last move (or no move yet)
	shift     int  // the cooldown is the base cooldown << shift
}

// maxBackoff caps the doubling at 16 × the base cooldown.
const maxBackoff = 4

func newBackoff() backoff { return backoff{prev: -1, recovered: true} }

// observe records the switch the flow is on at a step; a change since the
// previous step is a move.
func (b *backoff) observe(current int) {
	if b.prev >= 0 && current != b.prev {
		if b.recovered {
			b.shift = 0
		} else if b.shift < maxBackoff {
			b.shift++
		}
		b.recovered = false
	}
	b.prev = current
}

// recover records a healthy sample.
func (b *backoff) recover() { b.recovered = true }

// cooldown returns base doubled for every move in a row made before a
// recovery, saturating at the longest time.Duration rather than wrapping.
func (b *backoff) cooldown(base time.Duration) time.Duration {
	if base > math.MaxInt64>>b.shift {
		return math.MaxInt64
	}
	return base << b.shift
}

// leastStressedOther returns the destination of ThroughputDrop and
// LatencyThreshold: the switch other than current with the lowest overflow
// rate, then the fewest flows, then the lowest transmit rate, then the
// lowest index, skipping the cordoned ones; -1 when there is no other
// switch that is not cordoned.
func leastStressedOther(sw []proflow.SwitchSample, current int, cordoned []bool) int {
	dest := -1
	for k, s := range sw {
		if k == current || isCordoned(cordoned, k) {
			continue
		}
		if dest < 0 || lessStressed(s, sw[dest]) {
			dest = k
		}
	}
	return dest
}

// isCordoned reports whether cordoned (proflow.Input.Cordoned, nil for
// none) marks switch k.
func isCordoned(cordoned []bool, k int) bool { return k < len(cordoned) && cordoned[k] }

// lessStressed orders destinations: lower overflow, then fewer flows, then
// a lower transmit rate.
func lessStressed(a, b proflow.SwitchSample) bool {
	switch {
	case a.OverflowRate != b.OverflowRate:
		return a.OverflowRate < b.OverflowRate
	case a.FlowCount != b.FlowCount:
		return a.FlowCount < b.FlowCount
	}
	return a.TxRate < b.TxRate
}
