package telemetry

// Features of one aggregation switch's block of x_agg, in order. Read switch
// k's feature f of a state s as s[cfg.AggOffset(k)+f].
const (
	// FeatureTxRate is ρ_k/Cρ, clipped to [0, 1].
	FeatureTxRate = iota
	// FeatureTxRateChange is clip(ρ̇_k/Cρ, −1, 1), ρ̇_k the change of ρ_k
	// since the previous encoded sample.
	FeatureTxRateChange
	// FeatureOverflow is ξ̃_k: on the current switch the signed deviation
	// clip((ξ_k − ξ̄)/Cξ, −1, 1), elsewhere clip(ξ_k/Cξ, 0, 1).
	FeatureOverflow
	// FeatureFlowCount is ñ_k: on the current switch the signed deviation
	// clip((n_k − n̄)/Cn, −0.5, 1), elsewhere clip(n_k/Cn, 0, 1).
	FeatureFlowCount
	// FeatureElephant is e_k/Cρ, clipped to [0, 1].
	FeatureElephant
	// SwitchFeatures is the number of features per switch in the v1
	// layout (5).
	SwitchFeatures
)

// The feature StateLayoutV2 appends to each switch's block.
const (
	// FeatureQueue is clip(q_k/Cq, 0, 1), q_k the backlog on switch k's
	// bucketed uplinks (SwitchSample.QueueBytes). StateLayoutV2 to V8
	// (every layout's switch block from v2 on starts with v2's).
	FeatureQueue = SwitchFeatures + iota
	// SwitchFeaturesV2 is the number of features per switch in
	// StateLayoutV2 (6).
	SwitchFeaturesV2
)

// The feature StateLayoutV3 appends to each switch's block.
const (
	// FeatureDeficit is clip(D_k/CD, 0, 1), D_k the deficit of a virtual
	// token bucket of depth CD (EncoderConfig.DeficitScale) filled at the
	// bucket rate C (RateScale) and drained by what switch k transmits:
	// D_k ← clip(D_k + (ρ_k − C)·Δt, 0, CD), Δt the time between the
	// observations (their Time), 0 on the first sample after NewEncoder
	// or Reset. A reserve that a crowd drains reads rising from 0, and how
	// close it is to running dry reads directly, which no single sample's
	// rates tell. StateLayoutV3 and StateLayoutV5.
	FeatureDeficit = SwitchFeaturesV2 + iota
	// SwitchFeaturesV3 is the number of features per switch in
	// StateLayoutV3 (7).
	SwitchFeaturesV3
)

// The feature StateLayoutV4 appends to each switch's block (v2's).
const (
	// FeatureVacated is clip((m_k − n_k)/Cn, 0, 1), n_k the switch's flow
	// count and m_k a leaky peak of it: m_k ← max(n_k, m_k − Cn·Δt/T), T
	// = EncoderConfig.VacatedSeconds, Δt the time between the
	// observations (their Time), m_k = n_k on the first sample after
	// NewEncoder or Reset. It reads how many flows have left the switch in
	// the last T seconds: a crowd that has just moved on from a switch
	// shows there for T seconds after it left, which no single sample's
	// counts tell. StateLayoutV4 here; StateLayoutV5 at FeatureVacatedV5.
	FeatureVacated = SwitchFeaturesV2 + iota
	// SwitchFeaturesV4 is the number of features per switch in
	// StateLayoutV4 (7).
	SwitchFeaturesV4
)

// The features StateLayoutV5 appends to each switch's block (v2's): both
// of the above, FeatureDeficit first, so v5's switch block is v3's with
// v4's vacated flows after it.
const (
	// FeatureVacatedV5 is FeatureVacated's place in StateLayoutV5's switch
	// block (after FeatureDeficit); read it through
	// EncoderConfig.VacatedFeature.
	FeatureVacatedV5 = SwitchFeaturesV3 + iota
	// SwitchFeaturesV5 is the number of features per switch in
	// StateLayoutV5 (8).
	SwitchFeaturesV5
)

// The feature StateLayoutV7 appends to each switch's block (v2's; x_flow
// is v6's).
const (
	// FeatureExcess is clip((ρ_k − C)/Cx, 0, 1), ρ_k switch k's transmit
	// rate, C the bucket rate (RateScale) and Cx EncoderConfig.ExcessScale:
	// the rate at which a token reserve behind the switch drains, which
	// FeatureTxRate, clipped at C, cannot tell (a switch at 1.03 C and one
	// at 5 C both read 1 there). It is of the sample alone, so a switch a
	// crowd has left reads 0 at once. StateLayoutV7 only.
	FeatureExcess = SwitchFeaturesV2 + iota
	// SwitchFeaturesV7 is the number of features per switch in
	// StateLayoutV7 (7).
	SwitchFeaturesV7
)

// The feature StateLayoutV8 appends to x_flow (v6's; the switch blocks
// are v2's).
const (
	// FeatureOwnExcess is FeatureExcess of the switch carrying the
	// protected flow, clip((ρ_k* − C)/Cx, 0, 1): how fast its own reserve
	// drains. No switch block carries a drain rate in this layout.
	// StateLayoutV8 only.
	FeatureOwnExcess = FlowFeaturesV6 + iota
	// FlowFeaturesV8 is the number of features in x_flow in
	// StateLayoutV8 (8).
	FlowFeaturesV8
)

// Features of one congestion leaf's block of x_leaf, in order. Read leaf l's
// feature f of a state s as s[cfg.LeafOffset(l)+f].
const (
	// FeatureLeafIngress is λ_ℓ/Cλ, clipped to [0, 1].
	FeatureLeafIngress = iota
	// FeatureLeafTxRate is μ_ℓ/Cρ, clipped to [0, 1].
	FeatureLeafTxRate
	// LeafFeatures is the number of features per leaf (2).
	LeafFeatures
)

// Features of x_flow, in order. Read feature f of a state s as
// s[cfg.FlowOffset()+f].
const (
	// FeatureThroughput is φ_t/Cφ, clipped to [0, 1].
	FeatureThroughput = iota
	// FeatureCongestionRate is F_t/Cρ, clipped to [0, 1].
	FeatureCongestionRate
	// FeatureThroughputChange is clip(Δφ_t/Cφ, −1, 1), Δφ_t the change of
	// φ since the previous encoded sample.
	FeatureThroughputChange
	// FeatureDrop is d_t = max(0, φ̄_t − φ_t)/φ̄_t, φ̄_t the rolling maximum
	// of φ over the last DropWindow samples (0 when φ̄_t = 0).
	FeatureDrop
	// FlowFeatures is the number of features in x_flow in the v1 layout
	// (4).
	FlowFeatures
)

// The feature StateLayoutV2 appends to x_flow.
const (
	// FeatureLatency is the protected flow's latency inflation
	// clip(ℓ_t/ℓ_min − 1, 0, 1): ℓ_t its latency over the interval
	// (FlowSample.CompletionP99 where the sample has one, else RTTP99,
	// else SmoothedRTT) and ℓ_min the lowest latency of that kind seen
	// since the encoder's last Reset; 0 when the sample has no latency.
	// StateLayoutV2 to V8 (EncoderConfig.HasFlowSignals).
	FeatureLatency = FlowFeatures + iota
	// FeatureAppLimited is the share of the interval the protected flow's
	// sender was application-limited (FlowSample.AppLimited), in [0, 1]:
	// near 1 while the fabric carries all the flow asks for, whatever its
	// throughput. StateLayoutV2 to V8 (EncoderConfig.HasFlowSignals).
	FeatureAppLimited
	// FlowFeaturesV2 is the number of features in x_flow in StateLayoutV2
	// (6).
	FlowFeaturesV2
)

// The feature StateLayoutV6 appends to x_flow (v2's).
const (
	// FeatureOwnDeficit is the reserve deficit of the switch carrying the
	// protected flow, clip(D_k*/CD, 0, 1), D_k as in FeatureDeficit (the
	// virtual bucket is kept for every switch, so after a move it reads
	// the new switch's). No switch block carries a deficit in this
	// layout: a destination is judged on what it carries, the flow's own
	// switch also on how much of its reserve is gone. StateLayoutV6,
	// StateLayoutV7 and StateLayoutV8 (EncoderConfig.HasOwnDeficit).
	FeatureOwnDeficit = FlowFeaturesV2 + iota
	// FlowFeaturesV6 is the number of features in x_flow in
	// StateLayoutV6 (7).
	FlowFeaturesV6
)

// AggOffset returns the index in the state vector of switch k's first
// feature (FeatureTxRate); k must be in [0, NumSwitches).
func (c EncoderConfig) AggOffset(k int) int { return c.SwitchWidth() * k }

// LeafOffset returns the index in the state vector of leaf l's first feature
// (FeatureLeafIngress); l must be in [0, NumLeaves).
func (c EncoderConfig) LeafOffset(l int) int {
	return c.SwitchWidth()*c.NumSwitches + LeafFeatures*l
}

// PlacementOffset returns the index in the state vector of the one-hot h:
// s[cfg.PlacementOffset()+k] is 1 when the protected flow is on switch k.
func (c EncoderConfig) PlacementOffset() int {
	return c.SwitchWidth()*c.NumSwitches + LeafFeatures*c.NumLeaves
}

// FlowOffset returns the index in the state vector of x_flow's first feature
// (FeatureThroughput).
func (c EncoderConfig) FlowOffset() int { return c.PlacementOffset() + c.NumSwitches }
