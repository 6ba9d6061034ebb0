package sim

import (
	"fmt"
	"slices"
	"time"
)

// EndedAt returns a twin of the scenario whose congestion ends at d after
// CongestionStart: every congester still sending then departs then, one
// that would arrive then or later does not come, and its moves from then
// on are dropped; the protected flow, the window and everything before
// that time are unchanged. Simulated with the same seed, the twin and the
// scenario give a controller the same observations up to that time (the
// simulator's random draws follow the streams that send, which are the
// same until then), so no policy can tell them apart before it: the
// brief visit and the burst of the held-out family are such ends of a
// congestion that could as well have stayed. The twin is named
// NAME-endD ("S1-end5s"). d must lie in [0, Window).
func (s *Scenario) EndedAt(d time.Duration) (*Scenario, error) {
	return s.twinAt(d, "end", "with every congester gone %v after congestion start (EndedAt)", func(c *Congester, at time.Duration) {
		c.Depart = Duration(at)
	})
}

// FrozenAt returns the other twin of the scenario at d after
// CongestionStart: every congester sending then stays, on the switch it
// is on then, to the end of the window (its later moves and departure
// dropped), one that would arrive then or later does not come, and
// everything before that time is unchanged. Where EndedAt asks "what if
// the congestion left now", FrozenAt asks "what if it stayed": until d a
// controller sees the same in the scenario and both twins. It is named
// NAME-freezeD ("H3-freeze10s"). d must lie in [0, Window).
func (s *Scenario) FrozenAt(d time.Duration) (*Scenario, error) {
	return s.twinAt(d, "freeze", "with every congester sending %v after congestion start staying where it is to the end (FrozenAt)", func(c *Congester, _ time.Duration) {
		c.Depart = 0
	})
}

// twinAt builds the twin named NAME-kindD: the congesters that arrive at
// d after CongestionStart or later are dropped, and each one still
// sending then loses its moves from then on and is passed to sending.
func (s *Scenario) twinAt(d time.Duration, kind, what string, sending func(c *Congester, at time.Duration)) (*Scenario, error) {
	w := s.Length() - s.Start()
	if d < 0 || d >= w {
		return nil, fmt.Errorf("sim: scenario %s: %s of congestion %v after its start, want in [0s, %v) (the window)", s.Name, kind, d, w)
	}
	at := s.Start() + d
	t := s.Clone()
	t.Name = fmt.Sprintf("%s-%s%v", s.Name, kind, d)
	t.Description = fmt.Sprintf("%s, "+what+": %s", s.Name, d, s.Description)
	kept := t.Congesters[:0]
	for _, c := range t.Congesters {
		if time.Duration(c.Arrive) >= at {
			continue
		}
		if c.Depart == 0 || time.Duration(c.Depart) > at {
			moves := c.Moves[:0]
			for _, m := range c.Moves {
				if time.Duration(m.At) < at {
					moves = append(moves, m)
				}
			}
			c.Moves = moves
			sending(&c, at)
		}
		kept = append(kept, c)
	}
	t.Congesters = kept
	return t, nil
}

// SameTrafficUntil returns how long after congestion start the congesters
// of a and b keep sending alike from from on: the first instant at or
// after from at which the hosts that send, their receivers, streams, caps
// or switches differ, or the window's length when they never do. a and b
// must share their congestion start. A twin built at d (EndedAt,
// FrozenAt) sends like its scenario at least until d, and may for longer:
// a twin that ends the congestion while no congester sends differs from
// its scenario only when the next one arrives, and a frozen one only at
// the scenario's next move or departure.
func SameTrafficUntil(a, b *Scenario, from time.Duration) time.Duration {
	start := a.Start()
	t0 := start + from
	times := []time.Duration{t0}
	for _, s := range [2]*Scenario{a, b} {
		for _, c := range s.Congesters {
			ts := []time.Duration{time.Duration(c.Arrive), time.Duration(c.Depart)}
			for _, m := range c.Moves {
				ts = append(ts, time.Duration(m.At))
			}
			for _, t := range ts {
				if t > t0 {
					times = append(times, t)
				}
			}
		}
	}
	slices.Sort(times)
	for _, t := range times {
		if t >= a.Length() {
			break
		}
		if !slices.Equal(sendingAt(a, t), sendingAt(b, t)) {
			return t - start
		}
	}
	return a.Length() - start
}

// sendingAt lists, sorted, what every congester of s sending at t sends:
// host, receiver, streams, cap and switch.
func sendingAt(s *Scenario, t time.Duration) []string {
	var out []string
	for _, c := range s.Congesters {
		if time.Duration(c.Arrive) > t || (c.Depart != 0 && time.Duration(c.Depart) <= t) {
			continue
		}
		sw, at := c.Switch, time.Duration(-1)
		for _, m := range c.Moves {
			if mt := time.Duration(m.At); mt <= t && mt > at {
				sw, at = m.Switch, mt
			}
		}
		out = append(out, fmt.Sprintf("%s>%s %d×%v on %s", c.Host, c.Dst, c.Streams, c.StreamCap, sw))
	}
	slices.Sort(out)
	return out
}
