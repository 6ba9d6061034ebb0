package policy

import "time"

// trigger is the debounce and cooldown logic shared by Reactive, Crowd and
// ThroughputDrop.
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
