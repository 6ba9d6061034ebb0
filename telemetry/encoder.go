package telemetry

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/proflow-sdn/proflow"
)

// Encoder is the default proflow.StateEncoder: it writes the state vector of
// the paper's §IV-C and App. A in the layout StateLayout names (see the
// package documentation).
// It also implements proflow.Baseliner and proflow.Resetter.
//
// An Encoder remembers the previous encoded sample (for ρ̇ and Δφ), the
// last DropWindow throughputs (for φ̄) and, in StateLayoutV3, each
// switch's reserve deficit. It is not safe for concurrent use.
type Encoder struct {
	cfg      EncoderConfig
	baseline proflow.Baseline

	// prevTx holds ρ_k of the previous encoded sample; prevPhi its φ and
	// prevTime its time.
	prevTx   []float64
	prevPhi  float64
	prevTime time.Time
	havePrev bool

	// deficit holds D_k of each switch in bytes (v3 only; package
	// documentation of FeatureDeficit).
	deficit []float64
	// peak holds m_k of each switch, in flows (v4 only; package
	// documentation of FeatureVacated).
	peak []float64

	// phi is a ring of the last len(phi) throughputs; next is the slot the
	// next sample goes to and filled how many slots hold a sample.
	phi          []float64
	next, filled int

	// minLat is ℓ_min of each latency source (completion p99, RTT p99,
	// srtt) since the last Reset, 0 before its first sample (v2 only).
	minLat [3]float64
}

// Compile-time checks of the interfaces the controller looks for.
var (
	_ proflow.StateEncoder = (*Encoder)(nil)
	_ proflow.Baseliner    = (*Encoder)(nil)
	_ proflow.Resetter     = (*Encoder)(nil)
)

// NewEncoder returns an encoder for cfg, or cfg's validation error. It starts
// with no history and a zero baseline.
func NewEncoder(cfg EncoderConfig) (*Encoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Encoder{
		cfg:     cfg,
		prevTx:  make([]float64, cfg.NumSwitches),
		deficit: make([]float64, cfg.NumSwitches),
		peak:    make([]float64, cfg.NumSwitches),
		phi:     make([]float64, cfg.DropWindow),
	}, nil
}

// Config returns the configuration the encoder was built with; its offset
// methods (AggOffset, LeafOffset, PlacementOffset, FlowOffset) index the
// states the encoder writes.
func (e *Encoder) Config() EncoderConfig { return e.cfg }

// Dim returns the state dimension (EncoderConfig.Dim).
func (e *Encoder) Dim() int { return e.cfg.Dim() }

// SetBaseline sets the per-episode baseline the current switch's overflow
// and flow count are compared with: b.Overflow is ξ̄ and b.FlowCount is n̄.
// The encoder ignores b.Throughput and b.Switch: the deviations are taken on
// whichever switch currently carries the flow. Until SetBaseline is called,
// and again after Reset, the baseline is zero, so the current switch encodes
// clip(ξ/Cξ, −1, 1) and clip(n/Cn, −0.5, 1). History is kept.
func (e *Encoder) SetBaseline(b proflow.Baseline) error {
	for _, f := range [...]struct {
		name string
		v    float64
	}{{"overflow", b.Overflow}, {"flow count", b.FlowCount}} {
		if !(f.v >= 0) || math.IsInf(f.v, 1) {
			return fmt.Errorf("telemetry: set baseline: %s is %v, want a finite non-negative number", f.name, f.v)
		}
	}
	e.baseline = b
	return nil
}

// Baseline returns the baseline in use (zero before SetBaseline and after
// Reset).
func (e *Encoder) Baseline() proflow.Baseline { return e.baseline }

// Reset starts a new episode: it forgets the previous sample, the throughput
// history, the lowest latencies, the deficits and the baseline.
func (e *Encoder) Reset() {
	clear(e.prevTx)
	clear(e.deficit)
	clear(e.peak)
	e.prevTime = time.Time{}
	e.minLat = [3]float64{}
	clear(e.phi)
	e.prevPhi, e.havePrev = 0, false
	e.next, e.filled = 0, 0
	e.baseline = proflow.Baseline{}
}

// Encode writes the state for obs, with the protected flow on switch current,
// into dst, and records obs as the previous sample. Rates of change (ρ̇, Δφ)
// are differences to the previous successfully encoded sample, per sample
// rather than per second, and 0 on the first sample after NewEncoder or
// Reset; the deficits of StateLayoutV3 (and V5 to V8) and the leaky peaks of
// StateLayoutV4 (and V5) integrate over the observations' Time instead (an
// observation without a Time, or not later than the previous one, adds
// nothing to them). Encode fails, leaving dst and the
// history untouched, when len(dst) is not Dim(), current is not a switch
// index, obs has the wrong number of switch or leaf samples (wrapping
// proflow.ErrMissingSwitch for switches), or a value is NaN, infinite or
// negative (wrapping a *proflow.InvalidObservationError). It does not
// allocate on success.
func (e *Encoder) Encode(dst proflow.State, obs *proflow.Observation, current int) error {
	if err := e.check(dst, obs, current); err != nil {
		return fmt.Errorf("telemetry: encode: %w", err)
	}
	c := &e.cfg
	nS := c.NumSwitches
	v2, v3, v4, v6, v7 := c.HasFlowSignals(), c.HasDeficit(), c.HasVacated(), c.HasOwnDeficit(), c.HasExcess()
	var dt float64 // seconds since the previous sample, for the deficits and peaks
	if e.havePrev && !obs.Time.IsZero() && !e.prevTime.IsZero() {
		dt = max(0, obs.Time.Sub(e.prevTime).Seconds())
	}
	e.prevTime = obs.Time

	for k, s := range obs.Switches {
		var dTx float64
		if e.havePrev {
			dTx = s.TxRate - e.prevTx[k]
		}
		var xi, n float64
		if k == current {
			xi = clip((s.OverflowRate-e.baseline.Overflow)/c.OverflowScale, -1, 1)
			n = clip((s.FlowCount-e.baseline.FlowCount)/c.FlowCountScale, -0.5, 1)
		} else {
			xi = clip(s.OverflowRate/c.OverflowScale, 0, 1)
			n = clip(s.FlowCount/c.FlowCountScale, 0, 1)
		}
		x := dst[c.AggOffset(k):][:SwitchFeatures]
		x[FeatureTxRate] = float32(clip(s.TxRate/c.RateScale, 0, 1))
		x[FeatureTxRateChange] = float32(clip(dTx/c.RateScale, -1, 1))
		x[FeatureOverflow] = float32(xi)
		x[FeatureFlowCount] = float32(n)
		x[FeatureElephant] = float32(clip(s.ElephantRate/c.RateScale, 0, 1))
		if v2 {
			dst[c.AggOffset(k)+FeatureQueue] = float32(clip(s.QueueBytes/c.QueueScale, 0, 1))
		}
		if v3 || v6 {
			e.deficit[k] = clip(e.deficit[k]+(s.TxRate-c.RateScale)*dt, 0, c.DeficitScale)
		}
		if v3 {
			dst[c.AggOffset(k)+FeatureDeficit] = float32(e.deficit[k] / c.DeficitScale)
		}
		if v7 {
			dst[c.AggOffset(k)+FeatureExcess] = float32(clip((s.TxRate-c.RateScale)/c.ExcessScale, 0, 1))
		}
		if v4 {
			m := s.FlowCount
			if e.havePrev {
				m = max(m, e.peak[k]-c.FlowCountScale*dt/c.VacatedSeconds)
			}
			e.peak[k] = m
			dst[c.AggOffset(k)+c.VacatedFeature()] = float32(clip((m-s.FlowCount)/c.FlowCountScale, 0, 1))
		}
		e.prevTx[k] = s.TxRate
	}

	for l, s := range obs.Leaves {
		x := dst[c.LeafOffset(l):][:LeafFeatures]
		x[FeatureLeafIngress] = float32(clip(s.IngressRate/c.IngressScale, 0, 1))
		x[FeatureLeafTxRate] = float32(clip(s.TransmitRate/c.RateScale, 0, 1))
	}

	h := dst[c.PlacementOffset():][:nS]
	clear(h)
	h[current] = 1

	phi := obs.Flow.Throughput
	var dPhi float64
	if e.havePrev {
		dPhi = phi - e.prevPhi
	}
	e.prevPhi, e.havePrev = phi, true
	e.phi[e.next] = phi
	e.next = (e.next + 1) % len(e.phi)
	e.filled = min(e.filled+1, len(e.phi))
	peak := 0.0
	for _, p := range e.phi[:e.filled] {
		peak = max(peak, p)
	}
	var drop float64
	if peak > 0 {
		drop = max(0, peak-phi) / peak
	}
	x := dst[c.FlowOffset():][:FlowFeatures]
	x[FeatureThroughput] = float32(clip(phi/c.ThroughputScale, 0, 1))
	x[FeatureCongestionRate] = float32(clip(obs.Flow.CongestionRate/c.RateScale, 0, 1))
	x[FeatureThroughputChange] = float32(clip(dPhi/c.ThroughputScale, -1, 1))
	x[FeatureDrop] = float32(drop)
	if v2 {
		dst[c.FlowOffset()+FeatureLatency] = float32(e.inflation(&obs.Flow))
		dst[c.FlowOffset()+FeatureAppLimited] = float32(clip(obs.Flow.AppLimited, 0, 1))
	}
	if v6 {
		dst[c.FlowOffset()+FeatureOwnDeficit] = float32(e.deficit[current] / c.DeficitScale)
	}
	if c.HasOwnExcess() {
		dst[c.FlowOffset()+FeatureOwnExcess] = float32(clip((obs.Switches[current].TxRate-c.RateScale)/c.ExcessScale, 0, 1))
	}
	return nil
}

// inflation returns FeatureLatency's value for f and lowers ℓ_min of f's
// latency source.
func (e *Encoder) inflation(f *proflow.FlowSample) float64 {
	src, lat := 0, f.CompletionP99
	if lat <= 0 {
		src, lat = 1, f.RTTP99
	}
	if lat <= 0 {
		src, lat = 2, f.SmoothedRTT
	}
	if lat <= 0 {
		return 0
	}
	if m := e.minLat[src]; m == 0 || lat < m {
		e.minLat[src] = lat
	}
	return clip(lat/e.minLat[src]-1, 0, 1)
}

// check validates Encode's arguments without touching any state. It builds
// messages only on the error path.
func (e *Encoder) check(dst proflow.State, obs *proflow.Observation, current int) error {
	c := &e.cfg
	if len(dst) != c.Dim() {
		return fmt.Errorf("state has %d entries, want %d", len(dst), c.Dim())
	}
	if current < 0 || current >= c.NumSwitches {
		return fmt.Errorf("current switch %d out of range, want 0..%d", current, c.NumSwitches-1)
	}
	if obs == nil {
		return errors.New("nil observation")
	}
	if len(obs.Switches) != c.NumSwitches {
		return fmt.Errorf("observation has %d switch samples, want %d: %w", len(obs.Switches), c.NumSwitches, proflow.ErrMissingSwitch)
	}
	if len(obs.Leaves) != c.NumLeaves {
		return fmt.Errorf("observation has %d leaf samples, want %d", len(obs.Leaves), c.NumLeaves)
	}
	for k, s := range obs.Switches {
		if !valid(s.TxRate) || !valid(s.OverflowRate) || !valid(s.FlowCount) || !valid(s.ElephantRate) || !valid(s.QueueBytes) {
			return switchError(k, s)
		}
	}
	for l, s := range obs.Leaves {
		if !valid(s.IngressRate) || !valid(s.TransmitRate) {
			return leafError(l, s)
		}
	}
	f := obs.Flow
	if !valid(f.Throughput) {
		return invalid("flow.throughput", f.Throughput)
	}
	if !valid(f.CongestionRate) {
		return invalid("flow.congestion_rate", f.CongestionRate)
	}
	for _, l := range [...]struct {
		name string
		v    float64
	}{{"flow.completion_p99", f.CompletionP99}, {"flow.rtt_p99", f.RTTP99}, {"flow.srtt", f.SmoothedRTT}, {"flow.app_limited", f.AppLimited}} {
		if !valid(l.v) {
			return invalid(l.name, l.v)
		}
	}
	return nil
}

// valid reports whether v is finite and non-negative.
func valid(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

func switchError(k int, s proflow.SwitchSample) error {
	for _, f := range [...]struct {
		name string
		v    float64
	}{{"tx_rate", s.TxRate}, {"overflow_rate", s.OverflowRate}, {"flow_count", s.FlowCount}, {"elephant_rate", s.ElephantRate}, {"queue_bytes", s.QueueBytes}} {
		if !valid(f.v) {
			return invalid(fmt.Sprintf("switches[%d].%s", k, f.name), f.v)
		}
	}
	return nil
}

func leafError(l int, s proflow.LeafSample) error {
	if !valid(s.IngressRate) {
		return invalid(fmt.Sprintf("leaves[%d].ingress_rate", l), s.IngressRate)
	}
	return invalid(fmt.Sprintf("leaves[%d].transmit_rate", l), s.TransmitRate)
}

func invalid(field string, v float64) error {
	return &proflow.InvalidObservationError{Field: field, Problem: fmt.Sprintf("%v, want a finite non-negative number", v)}
}

// clip limits x to [lo, hi].
func clip(x, lo, hi float64) float64 { return min(max(x, lo), hi) }
