package sim

import (
	"fmt"
	"time"
)

// WindowLoad returns, per aggregation switch, the congestion load the
// scenario puts on it during its evaluation window, in weighted
// host-seconds: each congester host counts 1 for every second it sends
// through the switch within [Start(), Length()), a capped host only its
// share of the bucket rate (streams × stream cap / BucketRate, at most 1),
// and each stretch of sending is weighted by the share of the window left
// when it begins (congestion that arrives early hurts a flow for longer
// than the same congestion at the window's end). It reads the
// scenario, not the fabric: it is what an oracle that knows the future
// traffic would compare (eval's oracle policy), never what a deployable
// policy can see. The scenario must be valid for cfg.
func (s *Scenario) WindowLoad(cfg Config) ([]float64, error) {
	if err := s.Validate(cfg); err != nil {
		return nil, err
	}
	load := make([]float64, cfg.Switches)
	from, to := s.Start(), s.Length()
	for _, c := range s.Congesters {
		weight := 1.0
		if c.StreamCap > 0 {
			streams := c.Streams
			if streams == 0 {
				streams = cfg.StreamsPerCongester
			}
			weight = min(1, float64(streams)*float64(c.StreamCap)/cfg.BucketRate)
		}
		end := to
		if c.Depart > 0 {
			end = min(end, time.Duration(c.Depart))
		}
		// The congester's periods on each switch: from arrival to the first
		// move, between moves, from the last move to departure.
		at, sw := time.Duration(c.Arrive), c.Switch
		// A full slice expression: append must not write into the
		// scenario's own spare capacity (a race between callers).
		for _, m := range append(c.Moves[:len(c.Moves):len(c.Moves)], Move{At: Duration(end), Switch: ""}) {
			next := min(time.Duration(m.At), end)
			k, err := cfg.switchIndex(sw)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
			}
			if lo, hi := max(at, from), min(next, to); hi > lo {
				left := float64(to-lo) / float64(to-from)
				load[k] += weight * left * (hi - lo).Seconds()
			}
			at, sw = next, m.Switch
		}
	}
	return load, nil
}
