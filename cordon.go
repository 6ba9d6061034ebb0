package proflow

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// cordons is the set of cordoned switches of a controller: read once at
// the start of every step without locking (snapshot), changed by Cordon
// from any goroutine.
type cordons struct {
	mu  sync.Mutex             // serialises writers
	set atomic.Pointer[[]bool] // by switch index; nil: none cordoned
}

// cordon is Controller.Cordon and MultiController.Cordon on topo.
func (c *cordons) cordon(topo Topology, sw int, on bool) error {
	if n := topo.NumSwitches(); sw < 0 || sw >= n {
		return fmt.Errorf("proflow: cordon: %w", unknownSwitch(topo, sw))
	}
	c.update(topo.NumSwitches(), sw, on)
	return nil
}

// replace is Controller.SetCordoned and MultiController.SetCordoned on
// topo: the whole set at once, so that no step sees half of a change.
func (c *cordons) replace(topo Topology, sws []int) error {
	n := topo.NumSwitches()
	next := make([]bool, n)
	for _, sw := range sws {
		if sw < 0 || sw >= n {
			return fmt.Errorf("proflow: cordon: %w", unknownSwitch(topo, sw))
		}
		next[sw] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store(next)
	return nil
}

// update cordons (on) or uncordons switch sw of a topology of n switches.
func (c *cordons) update(n, sw int, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make([]bool, n)
	if p := c.set.Load(); p != nil {
		copy(next, *p)
	}
	next[sw] = on
	c.store(next)
}

// store publishes next, nil when it marks no switch; c.mu must be held.
func (c *cordons) store(next []bool) {
	if !slices.Contains(next, true) {
		c.set.Store(nil)
		return
	}
	c.set.Store(&next)
}

// snapshot returns the cordon marks by switch index, nil when none: a
// slice no one writes to again. A step reads it once, when it begins, and
// runs with that set throughout (flowLoop.begin), so that a change made
// while it runs counts from the next step on.
func (c *cordons) snapshot() []bool {
	if p := c.set.Load(); p != nil {
		return *p
	}
	return nil
}

// list returns the cordoned switches' indices in increasing order.
func (c *cordons) list() []int {
	var out []int
	if p := c.set.Load(); p != nil {
		for k, on := range *p {
			if on {
				out = append(out, k)
			}
		}
	}
	return out
}

// maskCordoned lowers the score of every switch marks cordons, other than
// current, below every other score, so that no gate picks it: to the
// lowest score minus 1 (the next float below it where 1 is lost to
// rounding). The scores must be finite.
func maskCordoned(scores []float64, marks []bool, current int) {
	if marks == nil || len(scores) == 0 {
		return
	}
	low := slices.Min(scores)
	v := low - 1
	if v == low {
		v = math.Nextafter(low, math.Inf(-1))
	}
	if math.IsInf(v, 0) {
		v = low
	}
	for k, on := range marks {
		if on && k != current && k < len(scores) {
			scores[k] = v
		}
	}
}
