package sim

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
)

// MoveCell is one cell of MoveMatrix: the recovery after each repeat's
// move of the protected flow.
type MoveCell struct {
	// Requested is the round trip asked for; RTT the BaseRTT simulated
	// (at least one Step).
	Requested, RTT time.Duration
	// Case is "a", "b", "c" or "d" (as ovsfabric's MoveCases).
	Case string
	// HMove is Config.RerouteTimeout.
	HMove bool
	// Model is the cell's move model: MoveModelHMove, MoveModelWindow or
	// MoveModelMeasured.
	Model string
	// Recovery is each repeat's time from the move to the start of the
	// first 500 ms at ≥ 90% of the healthy level; -1: not within the
	// observation.
	Recovery []time.Duration
	// Criteria says per repeat whether the case's condition held at the
	// move ("met") or the wait ran out ("timeout").
	Criteria []string
	// Observe is how long each move was watched.
	Observe time.Duration
}

// The move models MoveMatrix runs each cell with (MoveCell.Model).
const (
	// MoveModelHMove is hypothesis H-move (Config.RerouteTimeout): a move
	// costs the connection its window in flight and a timeout.
	MoveModelHMove = "hmove"
	// MoveModelWindow is a move taken for a loss: the window times
	// the base profile's Config.RerouteWindowFactor.
	MoveModelWindow = "window"
	// MoveModelMeasured is the move model fitted to the real fabric's
	// move-cost matrix (MeasuredMoves).
	MoveModelMeasured = "measured"
)

// MoveModels are the move models in MoveMatrix's order.
var MoveModels = []string{MoveModelHMove, MoveModelWindow, MoveModelMeasured}

// MeasuredMoves returns c with the move model fitted to the real fabric's
// move-cost matrix (make ovs-movecost; package documentation, "The move
// model"): a make-before-break move costs a connection that is sending
// nothing — no timeout (RerouteTimeout off) and no window reduction
// (RerouteWindowFactor 1) — while a connection already waiting on its
// retransmission timer keeps waiting, as it does under every move model.
func MeasuredMoves(c Config) Config {
	c.RerouteTimeout, c.RerouteWindowFactor = false, 1
	return c
}

// MoveMatrixSpec is the simulator's side of ovsfabric's MoveMatrix: the
// protected flow (CUBIC, the simulator's only algorithm) moved from agg1
// to agg2 in the four cases, per round trip, under each of MoveModels.
//
// The cases, as on the fabric: (a) healthy, no crowd; (b) ReserveLead
// after the crowd (h2–h6 → h7, two streams each capped at 0.15 C) arrives
// on agg1, its rate over the last half of that still ≥ 90% of healthy;
// (c) the crowd on agg1 and the flow's rate over the last 500 ms under 70%
// of healthy with no retransmission timer backed off; (d) the flow's timer
// backed off at least once (RTO backoff). (c) and (d) wait Collapse at
// most and move anyway ("timeout").
type MoveMatrixSpec struct {
	// Base is the profile (the testbed's: sim.TestbedConfig); per cell its
	// BaseRTT is the RTT (at least one Step), its ReceiveWindow scaled
	// with it (at least two packets), its Interval 100 ms and its
	// RerouteTimeout the cell's H-move.
	Base Config
	// BucketRate and BucketBurst, when BucketRate is set, put the real
	// fabric's bucket in Base (bytes/s, bytes): the flow-rate limit and
	// the receive window scale with the rate, the uncounted limit
	// (H-limit) is off as on a fabric without -hlimit, and case (b)'s
	// burst is 2 × ReserveLead × 1.5 × BucketRate as ovsfabric's.
	BucketRate, BucketBurst float64
	// FlowRate, when set, paces the protected flow at that many bytes/s
	// (a rate flow, KindRate), as ovsfabric's MoveCost.RateBytesPerSec.
	FlowRate float64
	RTTs     []time.Duration
	Cases    []string
	// Repeats is the moves per cell, each a fresh episode with its own
	// seed (default 5).
	Repeats int
	// Warmup is the flow alone before its healthy level is taken over its
	// last half (default 20 s); Observe how long each move
	// is watched (default 20 s); ReserveLead case (b)'s wait (default
	// 1 s); Collapse the longest wait for (c) and (d) (default 400 s: the
	// testbed's own reserves last 35 s and more against this crowd).
	Warmup, Observe, ReserveLead, Collapse time.Duration
	// Seed is the first repeat's seed.
	Seed uint64
}

// moveWindow is the span over which the flow must reach the level for a
// recovery (ovsfabric's recoveryWindow).
const moveWindow = 500 * time.Millisecond

// moveInterval is the sampling interval of the matrix.
const moveInterval = 100 * time.Millisecond

func (s MoveMatrixSpec) withDefaults() MoveMatrixSpec {
	s.Repeats = cmp.Or(max(s.Repeats, 0), 5)
	s.Warmup, s.Observe = cmp.Or(max(s.Warmup, 0), 20*time.Second), cmp.Or(max(s.Observe, 0), 20*time.Second)
	s.ReserveLead, s.Collapse = cmp.Or(max(s.ReserveLead, 0), time.Second), cmp.Or(max(s.Collapse, 0), 400*time.Second)
	return s
}

// moveConfig returns the spec's Base for a cell of round trip rtt, case
// mc and move model model (one of MoveModels).
func (s MoveMatrixSpec) moveConfig(rtt time.Duration, mc string, model string) Config {
	base := s.Base
	if s.BucketRate > 0 {
		k := s.BucketRate / base.BucketRate
		base.BucketRate, base.FlowRateLimit, base.ReceiveWindow = s.BucketRate, base.FlowRateLimit*k, base.ReceiveWindow*k
		base.BucketBurst = s.BucketBurst
		base.UncountedRate, base.UncountedBurst = 0, 0
		if mc == "b" {
			base.BucketBurst = 2 * s.ReserveLead.Seconds() * 1.5 * s.BucketRate
		}
	}
	c := base
	c.BaseRTT = max(rtt, c.Step)
	if c.ReceiveWindow > 0 && base.BaseRTT > 0 {
		c.ReceiveWindow = max(base.ReceiveWindow*c.BaseRTT.Seconds()/base.BaseRTT.Seconds(), 2*c.PacketSize)
	}
	c.Interval = moveInterval
	c.RerouteTimeout = model == MoveModelHMove
	if model == MoveModelMeasured {
		c = MeasuredMoves(c)
	}
	return c
}

// MoveMatrix runs the spec's cells: RTTs × Cases × MoveModels.
func MoveMatrix(ctx context.Context, spec MoveMatrixSpec) ([]MoveCell, error) {
	spec = spec.withDefaults()
	var cells []MoveCell
	for _, rtt := range spec.RTTs {
		for _, c := range spec.Cases {
			for _, model := range MoveModels {
				cfg := spec.moveConfig(rtt, c, model)
				cell := MoveCell{Requested: rtt, RTT: cfg.BaseRTT, Case: c, HMove: cfg.RerouteTimeout, Model: model, Observe: spec.Observe}
				for r := range spec.Repeats {
					rec, crit, err := moveRepeat(ctx, cfg, spec, c, spec.Seed+uint64(r))
					if err != nil {
						return cells, fmt.Errorf("sim: move matrix: rtt %v case %s move model %s repeat %d: %w", rtt, c, model, r+1, err)
					}
					cell.Recovery, cell.Criteria = append(cell.Recovery, rec), append(cell.Criteria, crit)
				}
				cells = append(cells, cell)
			}
		}
	}
	return cells, nil
}

// moveRepeat runs one episode of case c and returns the recovery after
// the move and whether the case's condition held at it.
func moveRepeat(ctx context.Context, cfg Config, spec MoveMatrixSpec, c string, seed uint64) (time.Duration, string, error) {
	total := spec.Warmup + spec.ReserveLead + spec.Collapse + spec.Observe + 5*time.Second
	sc := &Scenario{Name: "movecost-" + c, ProtectedSwitch: "agg1", CongestionStart: Duration(spec.Warmup), Window: Duration(total - spec.Warmup)}
	if spec.FlowRate > 0 {
		sc.ProtectedKind = FlowKind{Kind: KindRate, Rate: Rate(spec.FlowRate)}
	}
	if c != "a" {
		for _, h := range []string{"h2", "h3", "h4", "h5", "h6"} {
			sc.Congesters = append(sc.Congesters, Congester{Host: h, Dst: "h7", Streams: 2, StreamCap: Rate(0.15 * cfg.BucketRate),
				Arrive: Duration(spec.Warmup), Switch: "agg1"})
		}
	}
	f, err := New(cfg, sc, seed)
	if err != nil {
		return 0, "", err
	}
	var rates []float64 // one per moveInterval
	var truths []FlowTruth
	step := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := f.Advance(moveInterval); err != nil {
			return err
		}
		truths = f.FlowTruths(truths)
		rates = append(rates, truths[0].Throughput)
		return nil
	}
	n := int(spec.Warmup / moveInterval)
	for range n {
		if err := step(); err != nil {
			return 0, "", err
		}
	}
	healthy := meanRate(rates[n/2:])
	crit := "met"
	switch c {
	case "b":
		k := int(spec.ReserveLead / moveInterval)
		for range k {
			if err := step(); err != nil {
				return 0, "", err
			}
		}
		if meanRate(rates[len(rates)-max(1, k/2):]) < 0.9*healthy {
			crit = "timeout"
		}
	case "c", "d":
		// The condition is checked at every step of the engine (the
		// backoff of a timer lasts as long as it), the rate over the last
		// 500 ms of samples.
		crit = "timeout"
		w := int(moveWindow / moveInterval)
	wait:
		for range int(spec.Collapse / moveInterval) {
			for range int(moveInterval / cfg.Step) {
				if err := f.Advance(cfg.Step); err != nil {
					return 0, "", err
				}
				if len(rates) >= w && MoveCondition(c, meanRate(rates[len(rates)-w:]), healthy, f.primaryBackoff()) {
					crit = "met"
					break wait
				}
			}
			truths = f.FlowTruths(truths)
			rates = append(rates, truths[0].Throughput)
		}
	}
	if err := f.Place(ctx, f.Flow(), 1); err != nil {
		return 0, "", err
	}
	from := len(rates)
	for range int(spec.Observe / moveInterval) {
		if err := step(); err != nil {
			return 0, "", err
		}
	}
	return recoveryOf(rates[from:], moveInterval, moveWindow, 0.9*healthy), crit, nil
}

// MoveCondition reports whether the condition of move case c holds for a
// flow at rate recent (its last 500 ms) against its healthy level, its
// retransmission timer backed off backoff times: (c) degraded, under 70%
// of healthy with no backoff; (d) collapsed, backed off at least once;
// any other case at once. ovsfabric's MoveCost and MoveMatrix share it.
func MoveCondition(c string, recent, healthy float64, backoff int) bool {
	switch c {
	case "c":
		return recent < 0.7*healthy && backoff == 0
	case "d":
		return backoff >= 1
	}
	return true
}

// primaryBackoff returns how many times the primary protected flow's
// retransmission timer is backed off now.
func (f *Fabric) primaryBackoff() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.e.streams[0].backoff
}

// recoveryOf returns the start of the first span of window, in samples
// of dt after a move, whose mean reached level: the time from the move;
// -1 when none did.
func recoveryOf(rates []float64, dt, window time.Duration, level float64) time.Duration {
	w := max(1, int(window/dt))
	for end := w; end <= len(rates); end++ {
		if meanRate(rates[end-w:end]) >= level {
			return time.Duration(end-w) * dt
		}
	}
	return -1
}

func meanRate(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// WriteMoveMatrix writes the simulator's cells as a table: median and
// range of the recovery (s), how many never recovered, how many met the
// case's condition.
func WriteMoveMatrix(w io.Writer, cells []MoveCell) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nsimulator\nRTT\tcase\tmove model\trecovery to 90% (s): median [range]\tnot recovered\tcondition met")
	for _, c := range cells {
		var v []float64
		never, met := 0, 0
		for i, r := range c.Recovery {
			if r < 0 {
				never++
			} else {
				v = append(v, r.Seconds())
			}
			if c.Criteria[i] == "met" {
				met++
			}
		}
		rtt := c.RTT.String()
		if c.Requested != c.RTT {
			rtt = c.Requested.String() + " (simulated " + rtt + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d/%d\n", rtt, c.Case, c.Model, spread(v), never, met, len(c.Recovery))
	}
	return tw.Flush()
}

// spread formats the median and range of v ("–" when empty).
func spread(v []float64) string {
	if len(v) == 0 {
		return "–"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }
	return f(m) + " [" + f(s[0]) + ", " + f(s[len(s)-1]) + "]"
}
