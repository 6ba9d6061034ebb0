package proflow

import (
	"cmp"
	"slices"
)

// Wish is one protected flow's move that its gate admitted in a step of a
// MultiController: leave Current for Target.
type Wish struct {
	// Flow is the flow's index in the step: JointInput.Current[Flow] and
	// JointInput.Obs.Flows[Flow] are its placement and its sample. Flows are
	// indexed in the order they were added; a removal shifts the later ones
	// down.
	Flow int
	// Weight is the flow's priority (ProtectedFlow.EffectiveWeight, > 0).
	Weight float64
	// Current is the switch carrying the flow; Target the one its gate admitted.
	Current, Target int
	// Scores holds the policy's score per switch. It is the flow's Decision's
	// storage: read it, do not keep or change it.
	Scores []float64
	// Margin is the gate's ΔQ for the move (Decision.Margin).
	Margin float64
	// Throughput is the flow's throughput φ this step, bytes/s.
	Throughput float64
	// Baseline is the flow's pre-congestion throughput φ0 (its episode
	// baseline), bytes/s: what it will ask of its new switch.
	Baseline float64
}

// JointInput is what a JointPlacer sees at one step.
type JointInput struct {
	// Topology is the controller's topology (Topology.BucketRate is C).
	Topology Topology
	// Obs is the step's observation; Obs.Flows[i] is flow i's sample.
	Obs *Observation
	// Current holds the switch carrying every protected flow at the start
	// of the step, by flow index: those without a wish too.
	Current []int
	// Wishes are the step's admitted moves, in increasing Flow order.
	Wishes []Wish
}

// JointPlacer is the joint placement step of a MultiController, between the
// per-flow gates and the enforcer: it sees every protected flow's admitted
// wish at once and assigns destinations so that protected flows do not herd
// onto the same clean switch.
//
// Assign writes the destination of in.Wishes[j] into dst[j] (len(dst) ==
// len(in.Wishes)): a switch index to move the flow there, or -1 (or the
// flow's current switch) to hold it with ReasonJoint. It must not keep in
// or dst after it returns. The controller holds every wish, with
// ReasonPolicy, when Assign returns an error or panics, and holds a flow
// whose destination is not a switch of the topology.
type JointPlacer interface {
	Assign(dst []int, in *JointInput) error
}

// JointPlacerFunc adapts a function to JointPlacer.
type JointPlacerFunc func(dst []int, in *JointInput) error

// Assign calls f(dst, in).
func (f JointPlacerFunc) Assign(dst []int, in *JointInput) error { return f(dst, in) }

// Independent is the JointPlacer that does no joint reasoning: every
// admitted wish goes to its gate's target, exactly as if each flow had a
// controller of its own. It is the MultiController's default.
type Independent struct{}

// Assign copies every wish's Target into dst.
func (Independent) Assign(dst []int, in *JointInput) error {
	for j, w := range in.Wishes {
		dst[j] = w.Target
	}
	return nil
}

// Greedy is a JointPlacer that shares each switch's spare capacity among
// the protected flows that want to move there in the same step, so that a
// crowd of protected flows does not follow one another onto the one clean
// switch and congest it.
//
// # Rule
//
// Budget: every aggregation switch k starts the step with the headroom
//
//	budget_k = C − ρ_k
//
// where C is Topology.BucketRate (the token-bucket rate of its uplinks,
// bytes/s) and ρ_k is Obs.Switches[k].TxRate. The protected flows already
// placed on k are part of ρ_k. A flow that leaves k in this step is not
// credited back: the next sample shows what it freed.
//
// Demand: a wish asks demand_i = max(Throughput, Baseline) of its new switch
// — its baseline φ0, not the collapsed rate it may have now.
//
// Order: wishes are taken in decreasing priority ΔQ × weight (Margin ×
// Weight); equal priorities go in increasing flow index (the flow added
// first goes first).
//
// Open: a switch is open to a wish when budget_k > 0 or when no protected
// flow has been assigned to it yet in this step. One flow moved onto a
// switch does not herd, so the first one is never held for want of
// headroom: when a crowd has filled every switch to its bucket rate (ρ_k ≥ C
// everywhere, as congester TCP does), a budget rule alone would hold a flow
// on its collapsed switch that Independent moves.
//
// Assignment: a wish goes to its gate's Target when Target is open. Else
// it falls to its next-best switch by score: the highest-scoring open
// switch k, other than Current and Target, with Scores[k] strictly above
// Scores[Current]; equal scores go to the lower switch index. With no such
// switch the flow holds (ReasonJoint). The switch that receives a flow
// loses its demand from its budget (which may go negative).
//
// Every switch thus takes at least the first protected flow that wants it
// in a step — Greedy never stops a lone flow that Independent would move —
// and the budget bounds how many follow: herding onto k stops once the
// protected load moved there fills its headroom.
//
// The zero value is ready to use. It keeps scratch space between calls, so
// a Greedy must not be shared by controllers that step concurrently.
type Greedy struct {
	order  []int     // wish indexes in the order they are taken
	budget []float64 // by switch
	taken  []int     // flows assigned to each switch in this step
}

// Assign applies the rule above.
func (g *Greedy) Assign(dst []int, in *JointInput) error {
	n := in.Topology.NumSwitches()
	g.budget = slices.Grow(g.budget[:0], n)[:n]
	g.taken = slices.Grow(g.taken[:0], n)[:n]
	for k := range g.budget {
		g.budget[k] = in.Topology.BucketRate - in.Obs.Switches[k].TxRate
		g.taken[k] = 0
	}
	g.order = g.order[:0]
	for j := range in.Wishes {
		g.order = append(g.order, j)
	}
	ws := in.Wishes
	slices.SortFunc(g.order, func(a, b int) int {
		if c := cmp.Compare(ws[b].Margin*ws[b].Weight, ws[a].Margin*ws[a].Weight); c != 0 {
			return c
		}
		return cmp.Compare(ws[a].Flow, ws[b].Flow)
	})
	for _, j := range g.order {
		w := &ws[j]
		dst[j] = g.destination(w)
		if dst[j] >= 0 {
			g.budget[dst[j]] -= max(w.Throughput, w.Baseline)
			g.taken[dst[j]]++
		}
	}
	return nil
}

// open reports whether switch k may take another flow in this step.
func (g *Greedy) open(k int) bool { return g.budget[k] > 0 || g.taken[k] == 0 }

// destination returns the switch w goes to under the current budgets, or -1.
func (g *Greedy) destination(w *Wish) int {
	if w.Target >= 0 && w.Target < len(g.budget) && g.open(w.Target) {
		return w.Target
	}
	best := -1
	for k, s := range w.Scores {
		if k == w.Current || k == w.Target || k >= len(g.budget) || !g.open(k) || !(s > w.Scores[w.Current]) {
			continue
		}
		if best < 0 || s > w.Scores[best] {
			best = k
		}
	}
	return best
}
