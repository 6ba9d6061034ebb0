package training

import (
	"errors"
	"fmt"
	"math"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/telemetry"
)

// RewardConfig holds the coefficients of the real-transition reward (Eq. 4)
// and of the synthetic reward (App. B). The paper gives no values; the
// defaults (DefaultRewardConfig) and the reasoning behind them are in the
// package documentation. Signs are part of the formulas: every coefficient
// is a magnitude except Beta, which is the crowd penalty and must be ≤ 0.
type RewardConfig struct {
	// AlphaTC weighs the congestion penalty −α_tc·ξ̂_k*.
	AlphaTC float64 `json:"alpha_tc"`
	// AlphaStay weighs the clean-switch bonus α_stay·(1 − ξ̂_k*).
	AlphaStay float64 `json:"alpha_stay"`
	// AlphaColl weighs the collapse penalty −α_coll·(1 − φ_norm).
	AlphaColl float64 `json:"alpha_coll"`
	// Beta weighs the crowd term β·Δn⁺_k*, in both rewards. It must be ≤ 0;
	// 0 is the no-crowd ablation of the paper (Sec. V-B f).
	Beta float64 `json:"beta"`
	// Kappa weighs proflow's drain term −κ·δ_k* of the real-transition
	// reward (RewardInputs.Drain): staying on a switch whose transmit rate
	// exceeds the bucket rate, so that a reserve is draining. It must be
	// ≥ 0; 0 (the default) is Eq. 4 as printed. Relabelling with Kappa > 0
	// needs a dataset that kept the drain input.
	Kappa float64 `json:"kappa,omitempty"`
	// Lambda weighs proflow's latency term −λ·ℓ̂ of both rewards: the
	// protected flow's latency inflation (telemetry.FeatureLatency) in the
	// outcome state, for flows whose objective is delay (request/response
	// traffic) rather than throughput. It must be ≥ 0; 0 (the default) is
	// the paper's rewards. It needs states of telemetry.StateLayoutV2 or V3.
	Lambda float64 `json:"lambda,omitempty"`
	// Served makes an application-limited sample count as served: the
	// throughput and collapse terms of both rewards read φ_norm as
	// max(φ_norm, a), a the outcome state's share of the interval the
	// flow was application-limited (telemetry.FeatureAppLimited). A flow
	// whose own demand fell is then not "collapsed"; one the fabric
	// starves (a → 0) is, as before. Off (the paper's rewards) by
	// default; it needs states of telemetry.StateLayoutV2 or V3.
	Served bool `json:"served,omitempty"`
	// CrowdDrain weighs the crowd term of both rewards by the drain of the
	// flow's switch: β·Δn⁺_k*·δ_k*, δ as in Kappa's term (proflow's, a
	// hypothesis): a crowd counts as much as it drains the bucket, so a
	// crowd of capped flows that leaves the reserve nearly whole costs
	// little and a full-rate crowd the whole β. Off (the paper's crowd term)
	// by default.
	//
	// In the synthetic reward this makes the crowd term 0. It reads δ from
	// the current state, as its drain term does: clip(FeatureTxRate − 1,
	// 0, 1) (the deficit under DeficitDrain). The encoder clips
	// telemetry.FeatureTxRate at 1, and ClampState keeps predicted states
	// there, so that δ is 0 on every state Dyna scores, whatever the crowd
	// and however fast the reserve drains: with CrowdDrain (and without
	// DeficitDrain) only real transitions carry a crowd term, β·Δn⁺·δ with
	// δ measured from the observation (RewardInputs.Drain). The committed
	// testbed recipe (models/train-testbed.json) sets crowd_drain, so its
	// synthetic transitions carried no crowd term. That is kept as the
	// model was trained (package documentation, "The synthetic crowd term
	// under crowd_drain"); reading δ from a feature that is not capped at
	// the bucket rate would be a new recipe.
	CrowdDrain bool `json:"crowd_drain,omitempty"`
	// DeficitDrain makes δ, wherever Kappa's and CrowdDrain's terms read
	// it, the reserve deficit of telemetry.StateLayoutV3
	// (telemetry.FeatureDeficit, RewardInputs.Deficit) instead of the
	// excess of the transmit rate over the bucket rate (proflow's, a
	// hypothesis): a crowd then costs as much as it has drained the
	// reserve so far, little when it has just arrived and the whole term
	// as the reserve runs dry, instead of the whole term from the first
	// sample. The synthetic reward reads it from the current state, of the
	// destination for a reroute and of k* for a stay. Off by default; it
	// needs states of telemetry.StateLayoutV3.
	DeficitDrain bool `json:"deficit_drain,omitempty"`

	// Mu1 weighs the predicted congestion of the chosen switch, −μ1·ξ̃'_k.
	Mu1 float64 `json:"mu1"`
	// Mu2 weighs the escape bonus μ2·ReLU(ξ̃_k* − ξ̃'_k).
	Mu2 float64 `json:"mu2"`
	// Mu3 weighs the lead-time bonus of a reroute, μ3·(1 − ξ̃_k*).
	Mu3 float64 `json:"mu3"`
	// Mu4 weighs the penalty on a destination congested now, −μ4·ξ̂_k(now).
	Mu4 float64 `json:"mu4"`
	// Mu5 weighs proflow's penalty on a destination carrying elephants now,
	// −μ5·ẽ_k(now) (reroute only): on a switch whose reserve an elephant
	// has already exhausted, the overflow no longer tells the trap (see the
	// package documentation). It must be ≥ 0; 0 (the default) is App. B as
	// printed.
	Mu5 float64 `json:"mu5,omitempty"`
	// Nu1 weighs the clean-stay bonus ν1·(1 − ξ̃'_k*).
	Nu1 float64 `json:"nu1"`
	// Nu2 weighs the penalty on staying as k* congests, −ν2·ξ̃'_k*.
	Nu2 float64 `json:"nu2"`
	// Nu3 weighs the predicted collapse penalty −ν3·(1 − φ'_norm).
	Nu3 float64 `json:"nu3"`

	// ClipMin and ClipMax bound both rewards (Eq. 4 clips to [−1, 2]; the
	// synthetic reward is clipped to the same range so that real and
	// synthetic Bellman targets share one scale).
	ClipMin float64 `json:"clip_min"`
	ClipMax float64 `json:"clip_max"`
}

// DefaultRewardConfig returns the coefficients proflow trains with (see the
// package documentation for why).
func DefaultRewardConfig() RewardConfig {
	return RewardConfig{
		AlphaTC: 0.5, AlphaStay: 0.2, AlphaColl: 0.5, Beta: -0.7,
		Mu1: 0.5, Mu2: 0.5, Mu3: 0.2, Mu4: 0.5,
		Nu1: 0.2, Nu2: 0.5, Nu3: 0.5,
		ClipMin: -1, ClipMax: 2,
	}
}

// Validate checks that every coefficient is finite, every magnitude is
// non-negative, Beta is not positive and ClipMin < ClipMax.
func (c RewardConfig) Validate() error {
	var errs []error
	for _, f := range [...]struct {
		name string
		v    float64
	}{
		{"alpha_tc", c.AlphaTC}, {"alpha_stay", c.AlphaStay}, {"alpha_coll", c.AlphaColl},
		{"mu1", c.Mu1}, {"mu2", c.Mu2}, {"mu3", c.Mu3}, {"mu4", c.Mu4}, {"mu5", c.Mu5},
		{"nu1", c.Nu1}, {"nu2", c.Nu2}, {"nu3", c.Nu3}, {"kappa", c.Kappa}, {"lambda", c.Lambda},
	} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("%s %v, want a finite number >= 0 (the sign is in the formula)", f.name, f.v))
		}
	}
	if !(c.Beta <= 0) || math.IsInf(c.Beta, 0) {
		errs = append(errs, fmt.Errorf("beta %v, want a finite number <= 0 (the crowd penalty; 0 disables it)", c.Beta))
	}
	if math.IsNaN(c.ClipMin) || math.IsNaN(c.ClipMax) || !(c.ClipMin < c.ClipMax) {
		errs = append(errs, fmt.Errorf("clip range [%v, %v], want clip_min < clip_max", c.ClipMin, c.ClipMax))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("training: invalid reward config: %w", err)
	}
	return nil
}

// RewardInputs are the measured quantities of Eq. 4 for one real transition,
// read from the outcome observation o_{t+1} on the switch k* that carried the
// protected flow during the step. They do not depend on the coefficients, so
// a dataset that keeps them can be relabelled with any RewardConfig.
type RewardInputs struct {
	// ThroughputNorm is φ_norm = φ_{t+1}/φ0 (not clipped).
	ThroughputNorm float64 `json:"throughput_norm"`
	// Overflow is ξ̂_k* = (ξ_k* − ξ̄)/Cξ, the overflow in excess of the
	// protected flow's own (the episode baseline ξ̄, as the state encodes
	// k*), clipped to [0, 1]: Cξ is the largest overflow the encoding
	// distinguishes, so the penalty saturates there too. See the package
	// documentation for why the flow's own overflow is not penalised.
	Overflow float64 `json:"overflow"`
	// CrowdExcess is Δn⁺_k* = max(0, (n_k* − n̄)/Cn), clipped to 1 like the
	// state's ñ: Cn is the soft saturation above which the crowd counts as
	// fully present.
	CrowdExcess float64 `json:"crowd_excess"`
	// Drain is δ_k* = clip((ρ_k* − Cρ)/Cρ, 0, 1): how far the transmit
	// rate of the flow's switch exceeds the bucket rate, the rate at which
	// a token reserve drains whatever its depth. It is proflow's, not Eq.
	// 4's; RewardConfig.Kappa weighs it (0 by default).
	Drain float64 `json:"drain,omitempty"`
	// AppLimited is a, the outcome state's application-limited share
	// (telemetry.FeatureAppLimited, in [0, 1]); 0 in layouts without it.
	// RewardConfig.Served reads it.
	AppLimited float64 `json:"app_limited,omitempty"`
	// Latency is ℓ̂, the protected flow's latency inflation in the outcome
	// state s_{t+1} (telemetry.FeatureLatency, in [0, 1]); 0 in layouts
	// without it. It is proflow's; RewardConfig.Lambda weighs it.
	Latency float64 `json:"latency,omitempty"`
	// Deficit is D_k*, the reserve deficit of the flow's switch in the
	// outcome state s_{t+1} (telemetry.FeatureDeficit, in [0, 1]); 0 in
	// layouts without it. RewardConfig.DeficitDrain reads it as δ.
	Deficit float64 `json:"deficit,omitempty"`
}

// MeasureReward reads the RewardInputs of a transition from its outcome
// observation next, with the protected flow on switch k during the step (the
// action: the switch it is on after the step), the episode's baseline (φ0 =
// base.Throughput, ξ̄ = base.Overflow, n̄ = base.FlowCount) and the
// encoder's scaling constants (Cξ = enc.OverflowScale, Cn =
// enc.FlowCountScale). A baseline with Overflow 0 gives Eq. 4 as printed,
// ξ̂ = ξ_k*/Cξ.
//
// Every term is read from o_{t+1}, like φ_{t+1} in Eq. 4: the reward scores
// the outcome of the placement chosen at t, so a reroute away from a crowd is
// not charged for the crowd it left.
func MeasureReward(enc telemetry.EncoderConfig, base proflow.Baseline, next *proflow.Observation, k int) (RewardInputs, error) {
	if next == nil {
		return RewardInputs{}, errors.New("training: measure reward: nil observation")
	}
	if err := base.Validate(); err != nil {
		return RewardInputs{}, fmt.Errorf("training: measure reward: %w", err)
	}
	if k < 0 || k >= len(next.Switches) {
		return RewardInputs{}, fmt.Errorf("training: measure reward: switch %d out of range, want 0..%d", k, len(next.Switches)-1)
	}
	if !(enc.OverflowScale > 0) || !(enc.FlowCountScale > 0) || !(enc.RateScale > 0) {
		return RewardInputs{}, fmt.Errorf("training: measure reward: overflow scale %v, flow count scale %v and rate scale %v, want positive",
			enc.OverflowScale, enc.FlowCountScale, enc.RateScale)
	}
	sw := next.Switches[k]
	in := RewardInputs{
		ThroughputNorm: next.Flow.Throughput / base.Throughput,
		Overflow:       clip((sw.OverflowRate-base.Overflow)/enc.OverflowScale, 0, 1),
		CrowdExcess:    clip((sw.FlowCount-base.FlowCount)/enc.FlowCountScale, 0, 1),
		Drain:          clip((sw.TxRate-enc.RateScale)/enc.RateScale, 0, 1),
	}
	for _, v := range [...]float64{in.ThroughputNorm, in.Overflow, in.CrowdExcess, in.Drain} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return RewardInputs{}, fmt.Errorf("training: measure reward: non-finite input %+v (observation values must be finite)", in)
		}
	}
	return in, nil
}

// RealRewardTerms are the signed terms of Eq. 4; Reward clips their sum.
type RealRewardTerms struct {
	// Throughput is φ_norm.
	Throughput float64
	// Congestion is −α_tc·ξ̂_k*.
	Congestion float64
	// Stay is α_stay·(1 − ξ̂_k*).
	Stay float64
	// Collapse is −α_coll·(1 − φ_norm).
	Collapse float64
	// Crowd is β·Δn⁺_k*.
	Crowd float64
	// Drain is −κ·δ_k* (proflow's term; 0 unless RewardConfig.Kappa is set).
	Drain float64
	// Latency is −λ·ℓ̂ (proflow's term; 0 unless RewardConfig.Lambda is
	// set).
	Latency float64
}

// Sum returns the unclipped sum of the terms.
func (t RealRewardTerms) Sum() float64 {
	return t.Throughput + t.Congestion + t.Stay + t.Collapse + t.Crowd + t.Drain + t.Latency
}

// RealTerms returns the terms of Eq. 4 for measured inputs.
func (c RewardConfig) RealTerms(in RewardInputs) RealRewardTerms {
	if c.Served {
		in.ThroughputNorm = max(in.ThroughputNorm, in.AppLimited)
	}
	return RealRewardTerms{
		Throughput: in.ThroughputNorm,
		Congestion: -c.AlphaTC * in.Overflow,
		Stay:       c.AlphaStay * (1 - in.Overflow),
		Collapse:   -c.AlphaColl * (1 - in.ThroughputNorm),
		Crowd:      c.crowd(in.CrowdExcess, c.delta(in)),
		Drain:      -c.Kappa * c.delta(in),
		Latency:    -c.Lambda * in.Latency,
	}
}

// Real returns the real-transition reward of Eq. 4,
// clip(φ_norm − α_tc·ξ̂ + α_stay·(1 − ξ̂) − α_coll·(1 − φ_norm) + β·Δn⁺, ClipMin, ClipMax).
func (c RewardConfig) Real(in RewardInputs) float64 {
	return clip(c.RealTerms(in).Sum(), c.ClipMin, c.ClipMax)
}

// SyntheticStep is one transition predicted by the dynamics model: the
// current state, the action and the predicted next state.
type SyntheticStep struct {
	// State is s_t, with the protected flow on Current.
	State []float32
	// Next is the predicted s'_{t+1} after placing the flow on Action; in it
	// Action is the current switch (its overflow is the signed deviation).
	Next []float32
	// Current is k*, the switch carrying the flow in State.
	Current int
	// Action is k, the switch chosen; Action == Current is the stay action.
	Action int
	// ThroughputBaseline is φ0/Cφ, the episode's pre-congestion throughput
	// in state units, so that φ'_norm = φ'/φ0 = Next[throughput]/ThroughputBaseline.
	ThroughputBaseline float64
}

// SyntheticRewardTerms are the signed terms of the synthetic reward (App. B).
// A reroute uses Throughput, Destination, Escape, LeadTime, DestinationNow and
// DestinationElephant;
// a stay uses Throughput, Destination, Escape, CleanStay, StayCongestion,
// Collapse and Crowd. The others are zero.
type SyntheticRewardTerms struct {
	// Throughput is φ'_norm.
	Throughput float64
	// Destination is −μ1·ξ̃'_k (k = k* for a stay).
	Destination float64
	// Escape is μ2·ReLU(ξ̃_k* − ξ̃'_k).
	Escape float64
	// LeadTime is μ3·(1 − ξ̃_k*) (reroute only).
	LeadTime float64
	// DestinationNow is −μ4·ξ̂_k(now), the destination's unsigned overflow
	// feature in the current state (reroute only).
	DestinationNow float64
	// DestinationElephant is proflow's −μ5·ẽ_k(now), the destination's
	// elephant feature in the current state (reroute only; 0 unless
	// RewardConfig.Mu5 is set). f_p is not on k then, so ẽ_k is the other
	// traffic's.
	DestinationElephant float64
	// CleanStay is ν1·(1 − ξ̃'_k*) (stay only).
	CleanStay float64
	// StayCongestion is −ν2·ξ̃'_k* (stay only).
	StayCongestion float64
	// Collapse is −ν3·(1 − φ'_norm) (stay only).
	Collapse float64
	// Crowd is β·Δn⁺_k* (stay only), with Δn⁺_k* = max(0, ñ_k*) read from
	// the current state: the crowd is observed now, not predicted. Under
	// RewardConfig.CrowdDrain it is β·Δn⁺_k*·δ with δ as in Drain, which
	// is 0 on any state the encoder or ClampState produces unless
	// RewardConfig.DeficitDrain is set (see CrowdDrain).
	Crowd float64
	// Latency is proflow's −λ·ℓ̂' (0 unless RewardConfig.Lambda is set), ℓ̂'
	// the latency inflation of the predicted next state (both actions).
	Latency float64
	// Drain is proflow's −κ·δ (0 unless RewardConfig.Kappa is set), with δ =
	// clip(ρ/Cρ − 1, 0, 1) read from s_t: of the destination for a reroute
	// (a switch sending above the bucket rate is draining a reserve or has
	// none left), of k* for a stay. State features clip ρ/Cρ at 1, so this
	// δ is 0 on any state the encoder or ClampState produces; under
	// RewardConfig.DeficitDrain δ is the deficit instead.
	Drain float64
}

// Sum returns the unclipped sum of the terms.
func (t SyntheticRewardTerms) Sum() float64 {
	return t.Throughput + t.Destination + t.Escape + t.LeadTime + t.DestinationNow + t.DestinationElephant +
		t.CleanStay + t.StayCongestion + t.Collapse + t.Crowd + t.Drain + t.Latency
}

// SyntheticTerms returns the terms of the synthetic reward of step (App. B),
// reading the state features through enc's layout:
//
//	reroute (k ≠ k*): φ'_norm − μ1·ξ̃'_k + μ2·ReLU(ξ̃_k* − ξ̃'_k) + μ3·(1 − ξ̃_k*) − μ4·ξ̂_k(now) − μ5·ẽ_k(now)
//	stay    (k = k*): φ'_norm − μ1·ξ̃'_k* + μ2·ReLU(ξ̃_k* − ξ̃'_k*) + ν1·(1 − ξ̃'_k*) − ν2·ξ̃'_k* − ν3·(1 − φ'_norm) + β·Δn⁺_k*
//
// ξ̃ are the states' overflow features (signed deviation on the current
// switch of each state, unsigned elsewhere), so ξ̃'_k is the destination's
// deviation once the flow is there; ξ̂_k(now) is the destination's unsigned
// overflow feature in the current state. A negative deviation (the flow
// overflowing less than its own baseline: its TCP backing off or ramping up
// after a move) counts as 0 in ξ̃_k* and ξ̃'_k, as the real reward's ξ̂
// does: it is not a cleaner switch, and rewarding it would pay every reroute
// for the ramp-up it causes.
func (c RewardConfig) SyntheticTerms(enc telemetry.EncoderConfig, step SyntheticStep) (SyntheticRewardTerms, error) {
	dim, nS := enc.Dim(), enc.NumSwitches
	switch {
	case len(step.State) != dim || len(step.Next) != dim:
		return SyntheticRewardTerms{}, fmt.Errorf("training: synthetic reward: states of %d and %d values, want %d", len(step.State), len(step.Next), dim)
	case step.Current < 0 || step.Current >= nS || step.Action < 0 || step.Action >= nS:
		return SyntheticRewardTerms{}, fmt.Errorf("training: synthetic reward: current %d, action %d, want switches 0..%d", step.Current, step.Action, nS-1)
	case !(step.ThroughputBaseline > 0) || math.IsInf(step.ThroughputBaseline, 0):
		return SyntheticRewardTerms{}, fmt.Errorf("training: synthetic reward: throughput baseline %v, want φ0/Cφ > 0", step.ThroughputBaseline)
	}
	s, n := step.State, step.Next
	cur, k := step.Current, step.Action
	xiCur := max(0, float64(s[enc.AggOffset(cur)+telemetry.FeatureOverflow]))
	xiNext := max(0, float64(n[enc.AggOffset(k)+telemetry.FeatureOverflow]))
	phiNorm := float64(n[enc.FlowOffset()+telemetry.FeatureThroughput]) / step.ThroughputBaseline
	if c.Served {
		if !enc.HasFlowSignals() {
			return SyntheticRewardTerms{}, fmt.Errorf("training: synthetic reward: served needs states of layout %s or %s, these are %s", telemetry.StateLayoutV2, telemetry.StateLayoutV3, enc.LayoutName())
		}
		phiNorm = max(phiNorm, clip(float64(n[enc.FlowOffset()+telemetry.FeatureAppLimited]), 0, 1))
	}

	t := SyntheticRewardTerms{
		Throughput:  phiNorm,
		Destination: -c.Mu1 * xiNext,
		Escape:      c.Mu2 * max(0, xiCur-xiNext),
	}
	// δ of the destination, which for a stay is the current switch: the
	// drain term reads it, and so does the crowd term under CrowdDrain.
	// Without DeficitDrain it is 0 on every encoded or clamped state
	// (FeatureTxRate is capped at 1; see CrowdDrain), kept so because the
	// committed model was trained with it.
	var drain float64
	switch {
	case c.DeficitDrain && !enc.HasDeficit():
		return SyntheticRewardTerms{}, fmt.Errorf("training: synthetic reward: deficit_drain needs states of layout %s or %s, these are %s", telemetry.StateLayoutV3, telemetry.StateLayoutV5, enc.LayoutName())
	case c.DeficitDrain:
		drain = clip(float64(s[enc.AggOffset(k)+telemetry.FeatureDeficit]), 0, 1)
	default:
		drain = clip(float64(s[enc.AggOffset(k)+telemetry.FeatureTxRate])-1, 0, 1)
	}
	if c.Kappa != 0 {
		t.Drain = -c.Kappa * drain
	}
	if c.Lambda != 0 {
		if !enc.HasFlowSignals() {
			return SyntheticRewardTerms{}, fmt.Errorf("training: synthetic reward: lambda %v needs states of layout %s or %s, these are %s", c.Lambda, telemetry.StateLayoutV2, telemetry.StateLayoutV3, enc.LayoutName())
		}
		t.Latency = -c.Lambda * clip(float64(n[enc.FlowOffset()+telemetry.FeatureLatency]), 0, 1)
	}
	if k != cur {
		t.LeadTime = c.Mu3 * (1 - xiCur)
		t.DestinationNow = -c.Mu4 * float64(s[enc.AggOffset(k)+telemetry.FeatureOverflow])
		t.DestinationElephant = -c.Mu5 * float64(s[enc.AggOffset(k)+telemetry.FeatureElephant])
		return t, nil
	}
	t.CleanStay = c.Nu1 * (1 - xiNext)
	t.StayCongestion = -c.Nu2 * xiNext
	t.Collapse = -c.Nu3 * (1 - phiNorm)
	t.Crowd = c.crowd(max(0, float64(s[enc.AggOffset(cur)+telemetry.FeatureFlowCount])), drain)
	return t, nil
}

// delta returns δ of the real reward: in.Deficit under DeficitDrain, else
// in.Drain.
func (c RewardConfig) delta(in RewardInputs) float64 {
	if c.DeficitDrain {
		return in.Deficit
	}
	return in.Drain
}

// crowd returns the crowd term β·Δn⁺ for crowd excess n and drain d, times
// d when CrowdDrain is set.
func (c RewardConfig) crowd(n, d float64) float64 {
	if c.CrowdDrain {
		return c.Beta * n * d
	}
	return c.Beta * n
}

// Synthetic returns the synthetic reward of step: the sum of SyntheticTerms
// clipped to [ClipMin, ClipMax].
func (c RewardConfig) Synthetic(enc telemetry.EncoderConfig, step SyntheticStep) (float64, error) {
	t, err := c.SyntheticTerms(enc, step)
	if err != nil {
		return 0, err
	}
	return clip(t.Sum(), c.ClipMin, c.ClipMax), nil
}

// clip limits x to [lo, hi].
func clip(x, lo, hi float64) float64 { return min(max(x, lo), hi) }
