// Package telemetry turns raw fabric telemetry into ProFlow's state vector:
// Encoder is the default proflow.StateEncoder (paper §IV-C and App. A;
// docs/method.md), and Merge combines several telemetry sources into one
// proflow.Observation.
//
// # What the encoder computes
//
// Every step the controller hands Encoder.Encode one observation o_t and the
// index k* of the switch carrying the protected flow. The encoder scales each
// signal by a constant so that its normal operating range maps to [0, 1],
// clips what lies beyond, and writes the result as float32 (it computes in
// float64). Two signals are rates of change and one is a drop from a recent
// peak, so the encoder keeps a little history:
//
//   - ρ̇_k and Δφ_t are the differences to the previous encoded sample, per
//     sample (one controller interval, 500 ms by default), not per second:
//     both are differences of rates in bytes/s and are scaled like the rates
//     themselves. They are 0 on the first sample after NewEncoder or Reset.
//   - φ̄_t is the maximum of φ over the last DropWindow samples, the current
//     one included; d_t = max(0, φ̄_t − φ_t)/φ̄_t, and 0 when φ̄_t = 0.
//
// The current switch's overflow and flow count are signed deviations from
// the per-episode baseline (ξ̄, n̄) that the controller passes to SetBaseline;
// every other switch gets plain normalised values. The signed encoding
// follows k*: when the flow moves, the new switch is encoded against the
// baseline and the old one becomes unsigned. Before SetBaseline is called
// (the controller encodes during its baseline phase, which warms up the
// history) and after Reset, the baseline is zero.
//
// # Layout
//
// The state has 6|S|+2|L|+4 entries (34 for the paper's |S| = 4, |L| = 3),
// in the order [x_agg (5|S|), x_leaf (2|L|), h (|S|), x_flow (4)]; the
// constant StateLayout names this layout (v1) in model files.
//
//	x_agg, per switch k in index order, at AggOffset(k):
//	  FeatureTxRate           clip(ρ_k/Cρ, 0, 1)
//	  FeatureTxRateChange     clip(ρ̇_k/Cρ, −1, 1)
//	  FeatureOverflow         k = k*: clip((ξ_k − ξ̄)/Cξ, −1, 1)   else clip(ξ_k/Cξ, 0, 1)
//	  FeatureFlowCount        k = k*: clip((n_k − n̄)/Cn, −0.5, 1) else clip(n_k/Cn, 0, 1)
//	  FeatureElephant         clip(e_k/Cρ, 0, 1)
//	x_leaf, per congestion leaf ℓ in index order, at LeafOffset(ℓ):
//	  FeatureLeafIngress      clip(λ_ℓ/Cλ, 0, 1)
//	  FeatureLeafTxRate       clip(μ_ℓ/Cρ, 0, 1)
//	h, at PlacementOffset(): one-hot of k* (|S| entries)
//	x_flow, at FlowOffset():
//	  FeatureThroughput       clip(φ_t/Cφ, 0, 1)
//	  FeatureCongestionRate   clip(F_t/Cρ, 0, 1)
//	  FeatureThroughputChange clip(Δφ_t/Cφ, −1, 1)
//	  FeatureDrop             d_t, in [0, 1]
//
// StateLayoutV2 (EncoderConfig.Layout; WithLayout sets it) appends one
// feature to each switch's block and one to x_flow, for flows whose
// trouble shows as delay before it shows as throughput (request/response,
// application-limited): 7|S|+2|L|+6 entries (40 for |S| = 4, |L| = 3).
//
//	x_agg, per switch k, after FeatureElephant:
//	  FeatureQueue            clip(q_k/Cq, 0, 1), q_k = SwitchSample.QueueBytes
//	x_flow, after FeatureDrop:
//	  FeatureLatency          clip(ℓ_t/ℓ_min − 1, 0, 1)
//	  FeatureAppLimited       clip(a_t, 0, 1), a_t = FlowSample.AppLimited
//
// ℓ_t is the flow's latency over the interval: its completion-time p99
// where the sample has one (request/response traffic), else its RTT p99,
// else its smoothed RTT; ℓ_min is the lowest of that kind since the last
// Reset, so the feature is the inflation over the path's own floor and
// means the same at any base RTT. A sample with no latency encodes 0 and
// leaves ℓ_min alone. a_t is the share of the interval the sender had
// less to send than TCP allowed (Linux's app-limited delivery-rate
// samples): a flow whose throughput falls because its application asks
// for less stays near 1, one the fabric starves falls to 0. Cq = C·5 ms (QueueScale): the testbed's uplink queue
// holds 6 ms at the bucket rate, so a full queue saturates.
//
// StateLayoutV3 appends one more feature to each switch's block,
// 8|S|+2|L|+6 entries (44 for |S| = 4, |L| = 3):
//
//	x_agg, per switch k, after FeatureQueue:
//	  FeatureDeficit          D_k/CD, D_k ← clip(D_k + (ρ_k − C)·Δt, 0, CD)
//
// D_k is the deficit of a virtual token bucket of depth CD = C·60 s
// (DeficitScale) filled at the bucket rate and drained by the switch's
// transmit rate, Δt the time between observations. No single sample tells
// how long a crowd has been draining a reserve; this running sum does, so
// a policy can tell a crowd that arrived a moment ago from one about to
// exhaust the reserve (a collapse on the testbed profile comes at 0.8–0.9).
// It is a reading of the transmit rates, not of any bucket's counters, so
// it needs nothing a switch does not already report.
//
// StateLayoutV4 appends instead one feature to v2's switch block, also
// 8|S|+2|L|+6 entries:
//
//	x_agg, per switch k, after FeatureQueue:
//	  FeatureVacated          clip((m_k − n_k)/Cn, 0, 1), m_k ← max(n_k, m_k − Cn·Δt/T)
//
// m_k is a leaky peak of the switch's flow count n_k that falls by Cn
// flows in T = 30 s (VacatedSeconds), Δt the time between observations.
// Two empty switches read alike in every other feature; this one tells
// the switch a crowd has just left (it reads the flows gone for T seconds)
// from one no crowd has touched. Like the deficit it reads only what a
// switch already reports.
//
// StateLayoutV5 appends both, 9|S|+2|L|+6 entries (48 for |S| = 4,
// |L| = 3):
//
//	x_agg, per switch k, after FeatureQueue:
//	  FeatureDeficit          as in StateLayoutV3
//	  FeatureVacatedV5        FeatureVacated as in StateLayoutV4
//
// A switch a rolling crowd has just left reads drained in v3's deficit,
// like one a burst has drained and will drain again; the vacated flows
// beside it say that the crowd has gone elsewhere, so the two can be
// told apart (training/doc.go, "Deficit and vacated flows together").
//
// StateLayoutV6 is v2 with one more flow feature, 7|S|+2|L|+7 entries (41
// for |S| = 4, |L| = 3):
//
//	x_flow, after FeatureAppLimited:
//	  FeatureOwnDeficit       the deficit of StateLayoutV3 of the switch
//	                          carrying the flow (kept for every switch, so
//	                          it follows the flow when it moves)
//
// No switch block carries a deficit: a destination reads as in v2, and
// only the flow's own switch tells how much of its reserve is gone
// (training/doc.go, "The flow's own reserve").
//
// StateLayoutV7 is v6 with one more feature in each switch's block,
// 8|S|+2|L|+7 entries (45 for |S| = 4, |L| = 3):
//
//	x_agg, per switch k, after FeatureQueue:
//	  FeatureExcess           clip((ρ_k − C)/Cx, 0, 1), Cx = 5·C (ExcessScale)
//
// FeatureTxRate is clipped at C, as the paper scales it, so a switch
// sending at 1.03 C and one sending at 5 C read alike there; the excess
// is how fast a reserve behind the switch drains, and with the flow's own
// deficit it tells how long the reserve has left (training/doc.go, "How
// fast each reserve drains").
//
// StateLayoutV8 is v6 with one more flow feature, 7|S|+2|L|+8 entries (42
// for |S| = 4, |L| = 3):
//
//	x_flow, after FeatureOwnDeficit:
//	  FeatureOwnExcess        FeatureExcess of the switch carrying the flow
//
// Only the flow's own switch tells how fast its reserve drains; the
// switch blocks are v2's (training/doc.go, "The flow's own switch's drain
// rate only").
//
// The paper clips "values exceeding the constant" to 1 and says nothing of a
// lower bound; since every unsigned input is a non-negative rate or count,
// the encoder clips them to [0, 1], which only ever bites at the top.
//
// # Candidates
//
// The layouts above fix |S| and |L|: a network reading them fits one
// fabric. EncodeCandidates turns a state of any size into one row per
// aggregation switch (CandidateLayout, CandidateDim values each): the
// candidate's own block, the current switch's block, a flag for "this is
// the current switch", the mean, minimum and maximum of each switch
// feature over the switches other than the current one, the mean and
// maximum of each leaf feature, and x_flow. A network that scores every
// row with the same weights (a universal model, package policy) is
// permutation-equivariant in the switches, takes any |S| >= 2 and |L| >= 0,
// and, since every rate is scaled by the bucket rate, any link speed:
// ScalingMismatch compares two configurations with size and rate factored
// out.
//
// # Scaling constants
//
// The paper gives a number only for Cρ. DefaultEncoderConfig derives the
// others from the bucket rate C of the topology, so a fabric with another
// rate keeps the same meaning; every one is a field of EncoderConfig.
//
//   - Cρ = C (RateScale): the paper normalises rates by the token-bucket
//     rate; it scales ρ, ρ̇, e, μ and F.
//   - Cξ = 2·10⁻³·C (OverflowScale), 50,000 B/s for a 200 Mbit/s bucket: the
//     paper's overflow rates live between 20,000 and 40,000 B/s (the
//     protected flow alone averages 23,093 B/s, the reactive threshold is
//     27,000, the reactive baseline reroutes at a mean of 32,100 and the
//     Q-probe's overflow sweep flips between 30,000 and 40,000), so they land
//     in 0.4–0.8, clear of the clip.
//   - Cn = 12 (FlowCountScale): the protected flow plus five congesting
//     hosts at two flow-table entries each, the fully crowded switch of the
//     testbed; more flows than that saturate the crowd signal.
//   - Cλ = 2·C (IngressScale): a leaf has two hosts, each able to send at the
//     bucket rate.
//   - Cφ = C (ThroughputScale): the protected flow cannot exceed its bucket.
//   - DropWindow = 10 samples, 5 s at 500 ms: long enough to hold the peak
//     across TCP's sawtooth, short enough that d_t reports a drop within
//     seconds and forgets a peak from before a reroute.
//
// # Merging sources
//
// In the paper's testbed the controller reads port and flow statistics over
// OpenFlow and the token-bucket overflow from an agent on each node. Merge
// runs a primary proflow.Telemetry, then Overlays that each write only the
// fields they own, and reports any error naming the failing source.
//
// # Concurrency
//
// An Encoder is not safe for concurrent use: it holds the history of one
// episode, so use one per controller. EncoderConfig and the offset methods
// are plain values, safe everywhere.
package telemetry
