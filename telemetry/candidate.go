package telemetry

import (
	"fmt"
	"math"

	"github.com/proflow-sdn/proflow"
)

// CandidateLayout names the per-candidate input layout of a universal
// Q-network (package documentation, "Candidates"): one row of CandidateDim
// values per aggregation switch, derived from a state of any size, so that
// one network with shared weights scores every switch of any fabric.
const CandidateLayout = "proflow-candidate-v1"

// CandidateDim returns the number of values in one candidate row for states
// in c's layout: 5w+5+f, w the switch width (SwitchWidth) and f the flow
// width (FlowWidth); 46 in StateLayoutV3, 41 in StateLayoutV2, 34 in the
// paper's layout.
func (c EncoderConfig) CandidateDim() int {
	w := c.SwitchWidth()
	return 5*w + 1 + 2*LeafFeatures + c.FlowWidth()
}

// The blocks of a candidate row, as offsets for switch width w: the
// candidate's own switch block, the current switch's block, the flag
// "the candidate is the current switch", the mean, minimum and maximum of
// each switch feature over the switches other than the current one, the
// mean and maximum of each leaf feature over the congestion leaves, and
// x_flow.
func candidateOffsets(w int) (own, cur, flag, mean, lo, hi, leaf, flow int) {
	own, cur, flag = 0, w, 2*w
	mean = flag + 1
	lo, hi = mean+w, mean+2*w
	leaf = mean + 3*w
	flow = leaf + 2*LeafFeatures
	return
}

// CurrentSwitch returns the switch the one-hot h of s (encoded with c)
// marks as carrying the protected flow. It fails when h is not a one-hot.
func (c EncoderConfig) CurrentSwitch(s proflow.State) (int, error) {
	if len(s) != c.Dim() {
		return -1, fmt.Errorf("telemetry: state has %d values, want %d (%d switches, %d leaves, layout %s)",
			len(s), c.Dim(), c.NumSwitches, c.NumLeaves, c.LayoutName())
	}
	cur := -1
	for k, v := range s[c.PlacementOffset():][:c.NumSwitches] {
		switch v {
		case 0:
		case 1:
			if cur >= 0 {
				return -1, fmt.Errorf("telemetry: placement one-hot marks switches %d and %d, want exactly one", cur, k)
			}
			cur = k
		default:
			return -1, fmt.Errorf("telemetry: placement one-hot has %v at switch %d, want 0 or 1", v, k)
		}
	}
	if cur < 0 {
		return -1, fmt.Errorf("telemetry: placement one-hot marks no switch, want exactly one")
	}
	return cur, nil
}

// EncodeCandidates writes the candidate rows of state s, encoded with c,
// into dst: NumSwitches rows of CandidateDim values, row k for switch k
// (CandidateLayout). Row k holds switch k's block, the current switch's
// block, 1 if k is the current switch (else 0), the mean, minimum and
// maximum of every switch feature over the other switches than the current
// one, the mean and maximum of every leaf feature over the congestion
// leaves (zeros when there are none), and x_flow. Permuting the switches
// of s permutes the rows alike, and the rows do not depend on |S| or |L|
// beyond those pools: a network scoring each row with the same weights is
// permutation-equivariant in the switches and runs on any fabric.
//
// It fails, writing nothing, when s or dst has the wrong length or the
// one-hot h of s does not mark exactly one switch. It does not allocate.
func (c EncoderConfig) EncodeCandidates(dst []float32, s proflow.State) error {
	cur, err := c.CurrentSwitch(s)
	if err != nil {
		return err
	}
	nS, dim := c.NumSwitches, c.CandidateDim()
	if len(dst) != nS*dim {
		return fmt.Errorf("telemetry: candidate rows: %d values, want %d (%d switches × %d)", len(dst), nS*dim, nS, dim)
	}
	w, fw := c.SwitchWidth(), c.FlowWidth()
	own, curOff, flag, mean, lo, hi, leaf, flow := candidateOffsets(w)
	// Build row 0's shared blocks in place, then copy them to the others.
	row := dst[:dim]
	clear(row)
	for f := range w {
		sum, mn, mx := 0.0, math.Inf(1), math.Inf(-1)
		for k := range nS {
			if k == cur {
				continue
			}
			v := float64(s[c.AggOffset(k)+f])
			sum += v
			mn, mx = min(mn, v), max(mx, v)
		}
		row[mean+f] = float32(sum / float64(nS-1))
		row[lo+f], row[hi+f] = float32(mn), float32(mx)
	}
	if nL := c.NumLeaves; nL > 0 {
		for f := range LeafFeatures {
			sum, mx := 0.0, math.Inf(-1)
			for l := range nL {
				v := float64(s[c.LeafOffset(l)+f])
				sum += v
				mx = max(mx, v)
			}
			row[leaf+f] = float32(sum / float64(nL))
			row[leaf+LeafFeatures+f] = float32(mx)
		}
	}
	copy(row[curOff:][:w], s[c.AggOffset(cur):][:w])
	copy(row[flow:][:fw], s[c.FlowOffset():][:fw])
	for k := range nS {
		r := dst[k*dim:][:dim]
		if k > 0 {
			copy(r, row)
		}
		copy(r[own:][:w], s[c.AggOffset(k):][:w])
		r[flag] = 0
		if k == cur {
			r[flag] = 1
		}
	}
	return nil
}

// EncodeCandidatesBatch writes the candidate rows of n states, back to back
// in states (Dim values each), into dst: NumSwitches rows of CandidateDim
// values per state, state after state, as EncodeCandidates writes one. It
// fails, naming the state, when the lengths disagree or a state's one-hot
// does not mark exactly one switch. It does not allocate.
func (c EncoderConfig) EncodeCandidatesBatch(dst, states []float32, n int) error {
	if n == 1 {
		return c.EncodeCandidates(dst, states) // it checks both lengths
	}
	dim, width := c.Dim(), c.NumSwitches*c.CandidateDim()
	if n < 0 || len(states) != n*dim {
		return fmt.Errorf("telemetry: candidate rows: states has %d values, want n×state dim = %d×%d = %d", len(states), n, dim, n*dim)
	}
	if len(dst) != n*width {
		return fmt.Errorf("telemetry: candidate rows: %d values, want n×switches×%d = %d", len(dst), c.CandidateDim(), n*width)
	}
	for i := range n {
		if err := c.EncodeCandidates(dst[i*width:][:width], states[i*dim:][:dim]); err != nil {
			return fmt.Errorf("state %d: %w", i, err)
		}
	}
	return nil
}

// ScalingMismatch compares the scaling of c with that of o with the fabric
// size and the bucket rate factored out, as a universal model needs: the
// layout, the drop window, the flow-count scale and every rate scale
// relative to RateScale must agree. It returns the name of the first field
// that differs, with both values, or ok true.
func (c EncoderConfig) ScalingMismatch(o EncoderConfig) (field, mine, theirs string, ok bool) {
	if c.LayoutName() != o.LayoutName() {
		return "state_layout", c.LayoutName(), o.LayoutName(), false
	}
	if c.DropWindow != o.DropWindow {
		return "encoder.drop_window", fmt.Sprint(c.DropWindow), fmt.Sprint(o.DropWindow), false
	}
	if c.FlowCountScale != o.FlowCountScale {
		return "encoder.flow_count_scale", fmt.Sprint(c.FlowCountScale), fmt.Sprint(o.FlowCountScale), false
	}
	for _, r := range [...]struct {
		name string
		a, b float64
	}{
		{"encoder.overflow_scale/rate_scale", c.OverflowScale / c.RateScale, o.OverflowScale / o.RateScale},
		{"encoder.ingress_scale/rate_scale", c.IngressScale / c.RateScale, o.IngressScale / o.RateScale},
		{"encoder.throughput_scale/rate_scale", c.ThroughputScale / c.RateScale, o.ThroughputScale / o.RateScale},
		{"encoder.queue_scale/rate_scale", c.QueueScale / c.RateScale, o.QueueScale / o.RateScale},
		{"encoder.deficit_scale/rate_scale", c.DeficitScale / c.RateScale, o.DeficitScale / o.RateScale},
		{"encoder.excess_scale/rate_scale", c.ExcessScale / c.RateScale, o.ExcessScale / o.RateScale},
		{"encoder.vacated_seconds", c.VacatedSeconds, o.VacatedSeconds},
	} {
		if math.Abs(r.a-r.b) > 1e-9*max(math.Abs(r.a), math.Abs(r.b)) {
			return r.name, fmt.Sprint(r.a), fmt.Sprint(r.b), false
		}
	}
	return "", "", "", true
}
