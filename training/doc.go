// Package training holds ProFlow's offline training side that needs no
// libtorch: the rewards (paper Eq. 4, App. B), the transition dataset and its file
// format, the training configuration, the state projection used by
// predicted states, and the pure-Go dynamics model f_ψ with its file
// format. The libtorch trainer (dynamics model, fitted Q-iteration, Dyna) is
// package training/torchq, behind the torch build tag.
//
// # Rewards
//
// The real-transition reward of Eq. 4 scores the outcome of the placement
// chosen at t:
//
//	r_t = clip(φ_norm − α_tc·ξ̂_k* + α_stay·(1 − ξ̂_k*) − α_coll·(1 − φ_norm) + β·Δn⁺_k*, −1, 2)
//
// with φ_norm = φ_{t+1}/φ0, ξ̂_k* = ξ_k*/Cξ and Δn⁺_k* = max(0, (n_k* − n̄)/Cn).
// The paper leaves two things open; proflow decides:
//
//   - Every term is read from the outcome observation o_{t+1}, like φ_{t+1},
//     with k* the switch that carried the flow during the step (the action).
//     A reroute away from a crowd is thus not charged for the crowd it left,
//     and the reward depends on the action, not only on s_t.
//   - ξ̂ and Δn⁺ are clipped to [0, 1], like the state's unsigned overflow
//     and flow-count features: Cξ is the largest overflow the encoding
//     tells apart and Cn the soft saturation of the crowd signal.
//   - ξ̂ is the overflow in excess of the flow's own, ξ̂ = (ξ_k* − ξ̄)/Cξ,
//     as the state encodes k* (Eq. 4 as printed has ξ_k*/Cξ). The flow alone
//     at 92% of the bucket overflows about ξ̄ ≈ 23,000 B/s by itself; charging
//     it would (1) lower every clean step by a constant the synthetic reward
//     (App. B, on deviations) does not have, so that in Dyna every synthetic
//     alternative outscored the logged action and the greedy policy rerouted
//     from 99% of states, and (2) pay every reroute, in real data too, for
//     the step after it, when the flow ramps up on its new path and
//     overflows less. A baseline with Overflow 0 gives the printed form.
//
// MeasureReward reads these RewardInputs from a raw observation and the
// episode's baseline; RewardConfig.Real weighs them. A Dataset keeps the
// inputs, so one corpus can be relabelled with other coefficients (the
// no-crowd ablation is β = 0).
//
// The synthetic reward (App. B) scores a transition predicted by the
// dynamics model, from the current state s and the predicted next state s':
//
//	reroute k ≠ k*: φ'_norm − μ1·ξ̃'_k + μ2·ReLU(ξ̃_k* − ξ̃'_k) + μ3·(1 − ξ̃_k*) − μ4·ξ̂_k(now)
//	stay k = k*:    φ'_norm − μ1·ξ̃'_k* + μ2·ReLU(ξ̃_k* − ξ̃'_k*) + ν1·(1 − ξ̃'_k*) − ν2·ξ̃'_k* − ν3·(1 − φ'_norm) + β·Δn⁺_k*
//
// ξ̃ are the states' overflow features (telemetry.FeatureOverflow): in s' the
// destination k is the current switch, so ξ̃'_k is its signed deviation from
// the baseline, counted from 0 (a flow overflowing less than its own
// baseline is ramping up or backing off, not on a cleaner switch; a negative
// ξ̃' would otherwise pay μ1 and μ2 for the ramp-up every reroute causes);
// ξ̂_k(now) is k's unsigned overflow feature in s; φ'_norm is
// the throughput feature of s' divided by φ0/Cφ (each transition carries it);
// Δn⁺_k* = max(0, ñ_k*) is read from the current state (unprimed in the
// paper: the crowd is observed, not predicted). The synthetic reward is
// clipped to the same [−1, 2] as the real one so both kinds of Bellman
// target share one scale.
//
// # Reward defaults
//
// The paper gives no coefficients. With the default encoder (Cξ = 50,000 B/s
// for a 200 Mbit/s bucket, Cn = 12, n̄ = 2) the defaults are:
//
//	α_tc 0.5, α_stay 0.2   a clean switch (no overflow beyond the flow's own,
//	                       ξ̂ = 0) nets +0.2, the same as the synthetic
//	                       clean-stay bonus ν1, so real and synthetic targets
//	                       of competing actions share one scale; a saturated
//	                       one −0.5: a spread of 0.7.
//	α_coll 0.5             a collapse below baseline costs 1.5× its raw loss.
//	β −0.7                 five congesters (n = 12, Δn⁺ = 0.83) cost 0.58 per
//	                       step, more than saturated overflow adds, so the
//	                       crowd alone makes leaving worth a reroute's TCP
//	                       ramp-up, as the paper's probe shows (the crowd sweep
//	                       flips the decision; overflow alone barely does). One
//	                       congester (S11's elephant, n = 4) costs 0.12: there
//	                       the predicted collapse must do the work. The learned
//	                       margin grows by about |β|/12 per flow-table entry
//	                       from a quiet offset that varies by ±0.1 between
//	                       trainings; with the gate's δ = 0.2, β = −0.7 puts
//	                       the crowd sweep's flip at 5–9 flows on every switch
//	                       (β = −0.45 with δ = 0.1 flipped at 4 on some).
//	μ1 0.5, ν2 0.5         predicted congestion of the switch the flow ends on
//	                       weighs like α_tc.
//	μ2 0.5                 escaping to a predicted-cleaner switch is rewarded
//	                       at the same rate.
//	μ3 0.2, ν1 0.2         equal on purpose: in a quiet state (ξ̃ ≈ 0 everywhere)
//	                       the lead-time bonus of leaving equals the clean-stay
//	                       bonus of staying, so the shaping alone never makes a
//	                       pointless reroute attractive; only the crowd penalty
//	                       on staying, or the destination terms, break the tie.
//	μ4 0.5                 a destination congested now weighs like α_tc (the S7
//	                       and S12 destination traps).
//	ν3 0.5                 predicted collapse weighs like α_coll.
//
// # Dataset file
//
// A dataset file is a safetensors file (8-byte little-endian header length,
// JSON header, little-endian data) with the tensors
//
//	states, next_states   F32 [N, dim]
//	actions, current      I32 [N]   switch after the step, switch before it
//	rewards               F32 [N]
//	done                  U8  [N]   1 on a transition into a terminal state
//	episodes, steps       I32 [N]
//	throughput_baseline   F32 [N]   φ0/Cφ
//	throughput_norm, overflow, crowd_excess   F32 [N]   the RewardInputs (when kept)
//	drain, latency, app_limited, deficit      F32 [N]   the other RewardInputs, where
//	                                                    the layout has them (Dataset)
//
// and the metadata "format" = "proflow-dataset", "format_version" = "2",
// "encoder" (the telemetry.EncoderConfig as JSON), "state_layout",
// "transitions" (N), "reward_inputs" ("true"/"false") and "corpus". Reading
// validates everything Validate checks, including that every state's
// placement one-hot marks its current switch and every next state's its
// action. A file that keeps reward inputs but was written before the
// app_limited and deficit tensors existed reads them from its next states,
// where they were measured; one without drain reads without it (and
// refuses κ and crowd_drain).
//
// Version "1" differed only in what done meant: 1 on the last transition of
// every episode. ReadDataset still reads it, with every done cleared (see
// Episode ends); any other version is refused.
//
// # Episode ends
//
// The problem has no terminal state: a protected flow is served for as long
// as it lasts, and an episode, simulated or recorded, ends only because its
// recording stops after a fixed time. Its last transition is therefore a
// time cut-off, not a step into a terminal state, and proflow treats it like
// any other: its target bootstraps from the stored next state,
// r + γ·max_a' Q(s', a'). Marking it terminal would teach the network that
// the last state of every episode is worth r alone — a value with no
// counterpart in deployment, and one that depends on when the recording
// happened to stop. FromEpisodes, Collect and DatasetFromTraces thus never
// set Transition.Done; the field and the done column remain, for data with
// real terminal states, and the trainer drops the bootstrap exactly where
// Done is set.
//
// # Training defaults
//
// DefaultTrainConfig is sized for the paper's corpus (779 episodes of 240
// intervals, about 187,000 transitions) on the developers' 2-core CPUs:
//
//	hidden [256, 256]          qnet's default architecture (34→256→256→4).
//	dynamics_hidden [256, 256] the same capacity for 38 inputs → 34 outputs.
//	q_learning_rate 5e-4       Adam; below the dynamics model's 1e-3 because
//	                           its targets move.
//	batch_size 256             an Adam step takes about 5 ms here.
//	gamma 0.95                 a horizon of about 20 intervals (10 s): the
//	                           collapse a single full-rate congester brings
//	                           10–20 s after it arrives (S8, S11) weighs on the
//	                           value of staying in its precursor window (0.95^30
//	                           ≈ 0.2; 0.9^30 ≈ 0.04, with which the agent waited
//	                           for the collapse there), while a light crowd of
//	                           the same size, which never collapses the flow,
//	                           does not.
//	huber_delta 1              rewards lie in [−1, 2]: most errors are
//	                           regressed quadratically, outliers linearly.
//	target_update_period 250   2.7 fitted-Q iterations per epoch (675 steps
//	                           on the default corpus), 81 in all: enough for
//	                           γ = 0.95 (make model ends at mean Q 22.9,
//	                           within 5% of its fixed point, 1.2/(1 − γ)).
//	dynamics_epochs 30, reroute_window 20 (10 s each side of a reroute, the
//	                           length of the precursor window),
//	                           min_dynamics_transitions 2000.
//	fqi_epochs 20, dyna_epochs 10, dyna_rollouts 64, dyna_horizon 3,
//	rollout_epsilon 0.1        short rollouts: model error compounds.
//	synthetic_weight 1, held_out 0.1, seed 1, device "cpu".
//	permute_switches true      every training row is relabelled by a random
//	                           permutation of the aggregation switches
//	                           (PermuteState): the fabric is symmetric, a
//	                           779-episode corpus is not, and without it the
//	                           learned margins differ from switch to switch
//	                           (the probe's crowd flip moved between 4 and 6
//	                           flows with k*).
//	universal false            a per-fabric Q-network; see "Universal models".
//
// # Decision lag
//
// A stability gate of W votes moves the flow W−1 intervals after the first
// vote for the move, but fitted Q-iteration values a move as taking effect
// in the interval it is decided. A Q-function that times its move to the
// last safe interval (one whose state tells when the reserve runs out)
// then moves W−1 intervals too late behind the gate. TrainConfig.DecisionLag
// = L (proflow's) fits the networks on Dataset.Lagged copies instead: every
// transition (a_t, r_t) is read from the states s_{t−L} and s_{t+1−L} of
// its episode, so Q(s, a) values an action that takes effect L intervals
// after s, and a gate of L+1 votes acts on it when it is due (proflow train
// refuses any other vote count). The lagged rows keep their own placement
// one-hot (ClampState), the L rows after a move show the telemetry from
// before it, and the first L of an episode repeat its first state. The
// default, 0, is the paper's Q(s_t, a_t).
//
// # Universal models
//
// TrainConfig.Universal (proflow train -universal) trains the Q-network as
// one MLP with shared weights over the candidate rows of the switches
// (telemetry.CandidateLayout, 41 values in layout v2): Q(s, k) =
// MLP(row_k). It runs on any |S| >= 2, |L| >= 0 and bucket rate, so one run
// may take several datasets, one per fabric size (proflow train -universal
// -data a.dataset,b.dataset; CheckFabrics says which can go together). Its
// input is one row, not a whole state, so its hidden layers default to
// UniversalHidden, [128, 128], unless the config sets hidden. The
// dynamics models stay full-state networks, one per size. The model file
// records the first dataset's encoder as the reference scaling
// (qnet.NewUniversalMetadata) and every dataset in its corpus; make
// model-universal (mk/model.mk) builds one from corpora of several sizes of
// the testbed profile. Package torchq's documentation describes the
// training.
//
// # Collection
//
// Collect builds a corpus on the simulated fabric (package southbound/sim)
// with the data-collection strategies of the paper's Table I (Strategies;
// App. C): each episode is a Plan drawn by PlanEpisode — a sim.Scenario
// (where the protected flow starts; which congester hosts send, through
// which switch, with how many streams, capped or full rate, arriving at once
// or one by one, moving or leaving) and a Script, the strategy's runner
// (ScriptedPolicy: no reroute, a reroute at a time drawn from the
// strategy's window, or one once the overflow of the flow's switch has been
// confirmed above a threshold, after a dwell; to a fixed, random or the
// cleanest switch). A controller runs every episode behind
// policy.Immediate(), exactly as it runs any policy; sim.RunMany runs them
// in parallel. Every random choice comes from a math/rand/v2 PCG seeded per
// episode from (CollectConfig.Seed, strategy, index), so a corpus is
// reproducible and one strategy's share can change without changing the
// others' episodes.
//
// Table I speaks of a "dwell" in two places, and proflow reads it two ways,
// on purpose. In D_SHORT and D_LONG it is the time from the congesters'
// move onto the flow's switch to the reroute (10–20 s, 30–50 s): a
// time-triggered reroute at a known offset, so the corpus shows the same
// precursor window at several lengths whether or not overflow has built up.
// In A_LONG it is the wait after the overflow has been confirmed above the
// threshold (Script.Dwell, 40–60 s): the reroute is triggered by the
// overflow, and the dwell extends the time spent on a switch known to be
// congested. The first measures from the cause, the second from its
// observed effect.
//
// The pile-up strategies (E, F_STAY, F_LATE, F_EARLY) put every congester
// host on the flow's switch, but not always at full rate, and not always
// all of them: their congesters may be bandwidth-capped (a crowd that
// hardly overflows) or mixed, and in E, F_LATE and F_EARLY the elephant
// trap, when drawn, takes one host to another switch (four of the default
// fabric's five then pile up on k*). Strategy.Description says so.
//
// Beyond Table I, some episodes carry the variations the evaluation
// scenarios need to be learnable: bandwidth-capped crowds (C1, C2: many
// flows, no overflow), congesters arriving one at a time (S8, C2), a
// full-rate elephant on another switch from the start (the S12 destination
// trap), bursts (S9) and rolling congesters (S6).
//
// H_EARLY is proflow's own strategy, not the paper's, and off by default
// (share 0; CollectConfig.Shares or proflow collect -shares turn it on):
// H_PARTIAL's 1–3 congesters on the flow's switch, with a reroute 3–10 s
// after they arrive. What motivated it, measured on the testbed profile:
// there one full-rate congester host collapses the flow about as fast as
// five (its reserve drains at the rate of the congesters' sink link), but
// the paper's strategies show early reroutes only from full pile-ups
// (A_SHORT, F_EARLY) and partial crowds only without a reroute (H_PARTIAL)
// or with a late one (D). The model of make model with β = −0.7 (779
// episodes, seed 1) left one or two congesters only after the collapse: S11 at 19
// s, S8 18.8 s, S7 33.8 s, S12 21 s after congestion start, 4–7.5 s after
// the flow degraded, while it left full crowds at 8–9 s, before. Why it
// is off: with a 6% share (taken from H_PARTIAL, F_STAY and A_LONG) the
// model also waited for the collapse in S1, S2 and S10 (18–20.5 s) and
// still in S11 (23.5 s): mean over S1–S10 20.2 MB/s against 21.5 without
// it. A longer horizon did not help either: γ = 0.98 (a 25 s horizon, past
// a move's 10 s dip) with or without H_EARLY gave the same late moves in S1
// (18.7–19 s) and lost S6 to reactive (16.1–17.3 against 18.1 MB/s), where
// γ = 0.95 is at 18.6. With the adopted β = −1.5 (below) and a 3% share,
// H_EARLY moved S5 to 8 s but S8 and S11 still waited for the collapse
// (21.5 s, 24.5 s) and S6 fell to 18.5 MB/s (one repeat at 13.5). Nor
// did more data: 1,500 episodes instead of 779 (same shares, β = −1.5)
// left S5, S8, S11 and S12 after the collapse as before and lost S6 to
// reactive (17.0 against 18.1 MB/s), in 354 s of make model.
//
// The testbed model was first trained with a stronger crowd penalty, β =
// −1.5 instead of −0.7 (models/train-testbed.json; delete it for the
// default).
// Measured with everything else the same (corpus, seed, gate): with −0.7
// the probe's crowd sweep flipped at 11–12 flows (paper 5–8), one or two
// repeats of S1, S2 and S9 left at or after the collapse (11.7–17.5 s), and
// S6 kept 18.6 MB/s; with −1.5 the sweep flips at 7, 7, 7 and 10 flows,
// every repeat of S1–S4, S6, S7, S9 and S10 leaves at 8–9 s, before the
// collapse, and S6 keeps 22.1 MB/s. On the testbed a crowd collapses the
// flow within 11 s whatever its overflow shows, so the flow count is worth
// more there than on the datacenter profile, whose model keeps −0.7.
//
// With the drain and elephant terms below added, β = −1.5 flipped the
// probe's crowd sweep at 11, 7, 8 and 9 flows (k* = agg1…agg4; paper 5–8),
// its margin within ±0.7 of zero from 6 to 10 flows on every switch. The
// testbed model is now trained with β = −2.0 (one value tried, everything
// else the same): the sweep flips at 8, 7, 7 and 7 flows. What it cost,
// measured on S1–S10 (3 repeats, base seed 1): mean 22.07 MB/s against
// 22.75 with −1.5 (gain over reactive 1.77× against 1.83×); S6's rolling
// congestion keeps 19.4 MB/s against 22.1 (it leaves at 13 s, after the
// flow degrades, and again at 85 s), and S2 and S9 leave after the
// degradation on some repeats (16.3 s, 13.8 s mean). S11 (8.0 s, before
// the flow degrades), S12 (only agg3, 36 of 36 repeats at base seeds 1,
// 1000, 2000), C1, C2, N1 and N2 behave as with −1.5 (models/README.md).
// Training seeds 2–4 on the same corpus reach 22.62–22.68 MB/s and flip
// at 5–8 flows on every switch, so −2.0 is not a lucky seed.
//
// The drain term (RewardConfig.Kappa, RewardInputs.Drain; proflow's, off by
// default) charges −κ·δ_k* for staying where the switch's transmit rate is
// above the bucket rate — where a token reserve is draining, however large
// the crowd. Measured on the testbed (the 779-episode corpus of make model,
// seed 1, β = −1.5, the 16-vote gate): with κ = 0.5 the agent leaves every
// crowd at 8–9 s, before the collapse, in S1–S11 — S5, S8 and S11 included,
// which the κ = 0 model left only after it (S11 at 18.8 s, onset 11.5 s) —
// but in S12, after moving correctly to agg3, it walked on into the
// elephant's agg2 on 11 of 36 repeats (12 each at base seeds 1, 1000 and
// 2000). With the flow and agg3's capped host together just under the
// bucket rate, agg3 reads as draining while agg2 — whose elephant has
// exhausted the uncounted reserve, so that it sends at 1.05 C with no
// overflow and a flow count of 2 — looks no worse by crowd or overflow.
// κ = 0.3 left S8 and S11 late again; β = −1.0 with κ = 0.5 kept S12 clean
// but left S8 and S11 late and flipped at 9–14 flows. The same κ in the
// synthetic reward changes nothing: it reads the state's transmit rate,
// which the encoder clips at Cρ.
//
// What tells S12's trap apart is the destination's elephant rate ẽ_k, so
// the synthetic reward of a reroute has a proflow term −μ5·ẽ_k(now)
// (RewardConfig.Mu5, 0 by default). Measured on the same corpus and seed
// (S5, S8, S11, S12 × 6 repeats at base seed 1000): μ5 = 0.5 with κ = 0.5
// kept S12 clean (6 of 6) but left S8 and S11 after the collapse again
// (21.2 s, 20.2 s), as did μ5 = 0.2; μ5 = 0.5 with κ = 0.7 leaves S5, S8 and
// S11 at 8–9 s and S12 only for agg3, on every repeat (36 of 36 over base
// seeds 1, 1000 and 2000). The testbed model is trained with κ = 0.7 and μ5
// = 0.5 (models/train-testbed.json); "kappa": 0 and "mu5": 0 there turn
// both off, and models/README.md has what the model does with them.
//
// A model records the stability gate it is meant to run behind (proflow
// train -gate; policy/eval.ModelGate), because the right gate depends on
// the world it was trained for. The testbed model's is models/
// gate-testbed.json: 16 votes (8 s), δ 0.2, cooldown 15 s. There a move
// costs a healthy flow 9–10 s of throughput while the precursor lasts at
// least 11 s, so a move made 8 s into a crowd is still early and one never
// made for a crowd that leaves within 8 s (N2) costs nothing. With 10
// votes and δ 0.1 (proflow evaluate -gate) the committed model moves in N2
// at 5 s and loses 3% of static's throughput there (22.81 against 23.59
// MB/s); with its recorded gate it stays (23.59).
//
// # What each choice looked at
//
// make model-judge (mk/judge.sh) runs the development checks the rules
// below name (D1–D64 and the built-ins at base seeds 1 and 1000, the 24
// S6 variants, the kind built-ins, the sized development families at base
// seed 1; 2 repeats) for any model and gate, and prints the scenarios more
// than 2% behind the per-scenario best rule; it runs no held-out family.
//
// The held-out family H1–H64 (southbound/sim, "Held-out family") was
// frozen at the commit that added it; from then on a profile, reward, gate
// or model choice may look only at the built-in scenarios (S1–S12 with
// their variants S11b–S11e and S12b–S12e, C1, C2, N1, N2, M1–M4), the
// collection strategies and the training data, and is logged here with
// what it looked at. Measurements of the family are reported (README,
// proflow demo) but never chosen on.
//
//   - The throughput-drop baseline (policy.ThroughputDrop) is a yardstick,
//     not a model choice: its fraction, debounce and cooldown come from
//     policy/eval.CalibrateThroughputDrop on congestion-free traffic only
//     (the flow alone, and moved once between idle switches). Its cooldown
//     doubling after a move made before the flow recovered was added after
//     proflow sensitivity showed it flapping in S1 with H-move off (18.5
//     moves an episode; 3.1 with the doubling). It looked at S1–S10 on the
//     sensitivity variants; it strengthens the baseline, it does not
//     change the agent.
//   - proflow demo runs the family at base seed 5000, used by no earlier
//     run.
//   - Disclosure: before the two choices below, make demo had printed the
//     family's summary row for the model of that time (0.99× the
//     per-scenario best rule, the names of the 21 scenarios more than 2%
//     behind). No family scenario was opened, traced or evaluated on its
//     own, and the choices were measured on the built-ins only, as listed.
//   - The testbed gate's tolerance, 0.2 → 3.0 (models/gate-testbed.json;
//     16 votes, δ 0.2 and the 15 s cooldown unchanged). Looked at: the
//     built-in single-flow scenarios (S1–S12, S11b–e, S12b–e, C1, C2, N1,
//     N2), 3 repeats, base seed 1, with the committed model and proflow
//     evaluate -gate. The traces showed the vote streak restarting when
//     the best of several clean destinations changed by 0.1–0.4 (S1, S11d):
//     the flow waited past its collapse. Mean over the 24 scenarios against
//     the per-scenario strongest rule: tolerance 0.2 0.97×, 0.5 0.98×, 1.0
//     1.00×, 3.0 1.00× (S2 no longer behind); with 8 or 12 votes instead of
//     16 the agent moved in N2 (the crowd that leaves after 6 s). 3.0 keeps
//     the streak while any candidate beats the current switch by more than
//     δ; the admitted move goes to the candidate in force.
//   - Strategy J_TRAP with share 0.16 of 1.16 (proflow's; S12's trap at
//     every position). Looked at: the same 24 built-ins at base seeds 1
//     and 1000, models trained by make model with MODEL_SHARES (seed 1) and
//     the gate above. The gate alone left S6, S11d, S12, S12b, S12c, S12e,
//     C1 and C2 more than 2% behind the strongest rule; J_TRAP 0.08: 1.01×
//     [0.99×, 1.03×], behind in S12, S12b, S12c, C1, C2 (seed 1000: S12,
//     S12b, C1, C2); J_TRAP 0.16: 1.01× [0.99×, 1.04×] at seed 1 and 1.02×
//     [0.99×, 1.04×] at seed 1000, behind in S6, S12b, S12d, C1, C2, ahead
//     in S12 and S12c; 1.06–1.07× the best single rule (throughput-drop)
//     with the interval above 1. 0.16 was taken for its higher mean at
//     seed 1000 and its wins in S12 and S12c; the two are within each
//     other's intervals. C1 and C2 stay 3% behind static: the crowd
//     penalty β (the paper's crowd term) moves the flow away from a capped
//     crowd that does not hurt it on this profile (the profile's C1
//     shortfall, southbound/sim).
//   - The committed testbed model was then retrained by make model with
//     these defaults (seed 1, 779 episodes).
//
// The held-out kinds family K1–K64 (southbound/sim, frozen at db57b02, its
// scenarios protecting rr, rate and onoff flows) was frozen before any of
// the following; the kinds choices looked at the built-in kind scenarios
// (R1–R12, V1–V12, O1–O12, T1–T3, Q1, Q2), the bulk built-ins above, the
// corpus and nothing of either family. Each candidate was trained by make
// model (seed 1, gate-testbed.json) and measured with proflow evaluate
// -policies static,reactive,crowd,throughput-drop,latency-threshold,oracle,agent
// -repeats 2 at base seed 1 (the per-kind table of the report: SLO seconds
// against the best single rule, and moves in the traps where the oracle
// stays):
//
//   - The committed bulk model (v1 layout, 779 episodes): rr 0.13× the best
//     rule (throughput-drop) [0.08×, 0.19×], rate 0.66× [0.48×, 0.88×],
//     onoff 1.04× static's (no policy beats staying there: moving costs an
//     on/off flow's bursts their window, the oracle is at 1.12×), and 2.0
//     moves per episode in the traps T2 and Q2 (it leaves a flow whose
//     request rate fell).
//   - Layout v2 (uplink backlog, latency inflation) and a corpus of 1,400
//     episodes, half protecting rr, rate or onoff flows (-kinds
//     bulk=0.5,rr=0.2,rate=0.15,onoff=0.15; 30% of them with a demand change
//     mid-episode): rate 0.50×, rr 0.24× with 1.75 trap moves; bulk
//     built-ins 1.02× the per-scenario strongest rule (behind by more than
//     2% in S12b, C1, C2). Adding the latency term λ = 0.5: rr 0.12×, trap
//     moves 1.5 (and 2.0 in the onoff traps).
//   - Strategy K_QUIET (share 0.1; no congestion, the flow's own demand
//     changes, a random move in half the episodes): 3.75 trap moves — the
//     network still read a request rate that fell as a collapse to leave.
//   - FlowSample.AppLimited in the state (FeatureAppLimited): Q2 clean, T2
//     still 7 moves an episode; the decision margin in T2 stayed between 0.4
//     and 2.8 (the gate's δ is 0.2) while the flow read 0.9
//     application-limited, because the rewards
//     still scored its throughput against the pre-drop baseline.
//   - RewardConfig.Served (an application-limited outcome counts as
//     served): no move in any trap (T1, T2, T3, Q2), rr 0.12× [0.06×,
//     0.23×], rate 0.49× [0.46×, 0.53×] (the oracle 0.52×), onoff 1.01×
//     static's; bulk built-ins 1.03× the per-scenario strongest [1.01×,
//     1.05×], 1.07× throughput-drop, behind by more than 2% only in C1 and
//     C2, 102% of the oracle's lead over the strongest closed. At base seed
//     1000: rr 0.13×, rate 0.48×, onoff 1.01×, no trap move, bulk 1.02×
//     [1.01×, 1.04×], behind only in C1 and C2. This is the committed
//     testbed model (make model with models/shares-testbed.json and
//     models/train-testbed.json).
//   - Training seed 2 on the same corpus (proflow train -seed 2, the same
//     config and gate), measured the same way after the choice: rr 0.10×,
//     rate 0.49×, onoff 1.01×, but 0.5 moves an episode in the quiet trap
//     T2 and bulk 0.99× the per-scenario strongest [0.95×, 1.03×], 14%
//     behind crowd in S5 (it left late). The recipe's kinds results hold
//     across the two seeds; its bulk margin and the quiet-trap behaviour
//     depend on the seed.
//   - The same recipe on the datacenter profile (make model
//     PROFILE=datacenter with the testbed's layout, kinds and shares, λ 0.5
//     and Served, its own β −0.7) was not adopted. Looked at: the same
//     built-ins on the datacenter profile, seed 1. Against the committed
//     v1 datacenter model it moved in the quiet onoff traps (6.0 moves an
//     episode against 0), missed rate flows' objective for 0.5 s against
//     0.0 and fell 4.6% behind crowd in S5 (bulk 1.00× the strongest rule
//     either way); rr 0.56× the best rule against 0.61×. The datacenter
//     model stays the v1 one.
//   - The ovs-regime profile and its model (issue 22's real fabric in the
//     paper's regime). The profile was fitted from the fabric's own traces
//     of the flow alone and of S1 under static (make ovs-regime-traces);
//     the model is make model's default recipe (779 bulk episodes, layout
//     v1). Its gate, δ 0.5 (models/gate-ovs-regime.json) instead of the
//     0.2 it was first built with, looked at the scaled S1, S5, S8, S11,
//     C1 and N1 on the ovs-regime simulator only: behind 0.2 it left the
//     flow's switch 2 s before any congestion in every one of them, N1
//     included (southbound/sim, "Profile ovs-regime"). Neither held-out
//     family was run on it.
//
// The universal default model (issue 23) came next; its choices looked at
// the built-in scenarios (bulk S1–S12 with variants, C1, C2, N1, N2 and
// the kind built-ins R, V, O, T, Q) on the 4x3 testbed at base seeds 1
// and 1000, and at the corpus; not at H1–H64, K1–K64 or the sized
// families H6x3-…, H16x3-….
//
//   - Architecture: one MLP 41→128→128→1 over each switch's candidate row
//     (telemetry.EncodeCandidates), trained in one run (TrainConfig.Universal)
//     on corpora of 4x3 (900 episodes), 2x3 (500), 8x3 (400) and 4x7 (400)
//     of the testbed profile with the testbed's recipe (layout v2, kinds,
//     shares, β −2, κ 0.7, μ5 0.5, λ 0.5, Served, the 16-vote gate). The
//     sizes and counts were set by the training time (under 10 minutes on
//     2 cores), not by any result. Against the committed 4x3 model on the
//     built-ins at base seed 1 (2 repeats): bulk 22.86 MB/s either way
//     (1.03× the per-scenario strongest rule, behind by more than 2% in C1
//     and C2 only, both); kinds rr 0.08× the best rule against 0.12×, rate
//     0.53× against 0.49×, onoff 1.00× static's against 1.01×. Adopted as
//     models/default.safetensors (make model).
//   - β = 0 on the same corpora (the no-crowd ablation): C1 and C2 clean,
//     but bulk 22.43 MB/s, behind by more than 2% in S2 and S12, rr 0.23×.
//     Not adopted.
//   - RewardConfig.CrowdDrain (the crowd term weighted by the drain of the
//     flow's switch, β·Δn⁺·δ), everything else the same: bulk 22.94 MB/s,
//     1.03× the per-scenario strongest [1.01×, 1.05×], better in 8, tied
//     in 12, behind by more than 2% in none (C1 and C2 included: the flow
//     stays with a capped crowd that leaves the reserve nearly whole);
//     rr 0.09×, rate 0.49×, onoff 1.00×. At base seed 1000: 22.93 MB/s,
//     behind in none (the model without it: 22.85, behind in C1 and C2).
//     Adopted (models/train-testbed.json, "crowd_drain": true). Its probe
//     (proflow probe) no longer flips on the crowd sweep, which holds the
//     transmit rate at its baseline: the flow count alone is no reason to
//     move any more (the paper's model flipped at 5–8 flows).
//   - Training seed 2 on the same corpora and config (proflow train
//     -universal -seed 2), measured the same way after the choice: bulk
//     22.84 MB/s, 1.02× the per-scenario strongest [1.01×, 1.04×], behind
//     by more than 2% in S6 and C1; rr 0.09×, rate 0.49×, onoff 1.01×. The
//     kinds results hold across the two seeds; C1 is clean at seed 1 only.
//   - A larger corpus (MODEL_FABRICS "4x3:1400 2x3:800 8x3:700 4x7:700",
//     1.6 times the transitions), trained at seeds 1 and 2, to see whether
//     more data removes the seed dependence. The rule, written before the
//     runs: adopt it if at both training seeds the bulk built-ins at base
//     seeds 1 and 1000 are behind the per-scenario strongest rule by more
//     than 2% nowhere, and the kinds are no worse than the adopted model's
//     (rr at most 0.10× the best rule, rate at most 0.50×, onoff at most
//     1.01× static's). Measured (make model MODEL_FABRICS=…, 1,336 s on 2
//     CPUs beside the seed-2 run; proflow train -universal -seed 2): seed
//     1 bulk 22.94 and 22.93 MB/s at base seeds 1 and 1000, behind
//     nowhere, rr 0.09×, rate 0.49×, onoff 1.01×; seed 2 bulk 22.66 and
//     22.62, behind in S6 (and S8 at base seed 1000), the kinds the same.
//     Not adopted: the seed dependence stays with 1.6 times the data.
//   - The gate's vote count, against the twins of the built-ins (proflow
//     bound: a scenario beside copies of it whose congestion ends at a
//     time, which no controller can tell from it until then). On S1, S10
//     and S11 with twins ending 2–12 s after the crowd arrives, the
//     adopted model behind its 16-vote gate moves about 8 s after a
//     full-rate crowd arrives, and a crowd that leaves 8–10 s after
//     arriving makes that move needless: its largest shortfall behind the
//     per-scenario best rule over each scenario and its twins is 3.1–3.4%,
//     where the best single-move policy must accept 1.8% (S1), 2.0% (S10)
//     and 0.0% (S11), moving about 10.5 s after the arrival, just before
//     the collapse. The rule, written before the fans of longer gates
//     were run (the built-in evaluation behind 20 votes had been printed):
//     adopt 20 or 21 votes for the testbed gate only if at base seeds 1 and
//     1000 the bulk built-ins are behind the per-scenario strongest rule by
//     more than 2% nowhere with the agent's mean within 0.2% of the
//     16-vote gate's, the kind built-ins are no worse (rr and rate ratios
//     at most 0.05 above the 16-vote gate's, onoff at most 1.01× static's),
//     and the agent's largest worst-case shortfall over the S1, S10 and S11
//     fans is below the 16-vote gate's; of those passing, the one with the
//     lowest; else keep 16.
//     Measured (scripts of proflow evaluate and proflow bound -gate, 2
//     repeats): 20 votes, bulk 22.93 MB/s at both base seeds (16 votes:
//     22.94, 22.93), behind nowhere, rr 0.09×, rate 0.46× (0.49×), onoff
//     1.00×; but its largest fan shortfall is 3.4% as behind 16 votes (S1
//     3.1%, S10 3.4%, S11 3.4%, now in the twins whose crowd leaves 10–10.5
//     s after arriving). 21 votes: bulk 22.80 and 22.80 MB/s, 0.6% below.
//     Neither adopted: a longer wait only moves the needless move to the
//     twins whose crowd leaves a little later.
//   - Brief pile-ups in the corpus (strategy L_BRIEF, share 0.08 beside
//     the testbed shares, everything else the default recipe). No pile-up
//     of the other strategies leaves within 20 s of arriving; the
//     hypothesis was that the agent learns its early move from that. The
//     rule, written before the run:
//     adopt it if at base seeds 1 and 1000 the bulk built-ins are behind
//     the per-scenario strongest rule by more than 2% nowhere with the
//     mean within 0.2% of the adopted model's, the kind built-ins are no
//     worse (rr and rate ratios at most 0.05 above the adopted model's,
//     onoff at most 1.01× static's), and the largest worst-case shortfall
//     over the S1, S10 and S11 fans (the -at times above) is below the
//     adopted model's 3.4%.
//     Measured (the same recipe with -shares adding L_BRIEF 0.08, seed 1;
//     proflow evaluate, 2 repeats): bulk 21.78 and 21.76 MB/s at base
//     seeds 1 and 1000, behind the per-scenario strongest rule by more than
//     2% in S8 and S11 with its variants: it now leaves S11's elephant 45
//     s after it arrived (S11c's 38 s), long after the collapse at about
//     11 s, and S8's ramp 22.5 s into it; rr 0.09×, rate 0.49×, onoff
//     1.00×. Not adopted
//     (the fans were not run). A corpus where crowds often leave teaches
//     waiting through the ones that stay.
//   - After these, the bound of the five H1–H64 scenarios where the
//     agent is more than 2% behind at base seed 5000 (H22, H34, H52, H62,
//     H63) was read: an analysis, not a choice (docs/reproduction.md,
//     "What any policy can do"). A later choice that used it would be
//     tuning on the family.
//   - The reserve deficit (telemetry.StateLayoutV3). Both failures above
//     have one cause: no state of layout v2 tells a crowd that arrived a
//     moment ago from one about to exhaust the reserve (nothing in one
//     sample integrates the drain), so the agent either leaves on arrival
//     or waits blind. Layout v3 adds each switch's deficit, a running sum
//     of its transmit rate over the bucket rate. Two models, on one v3
//     corpus of the default recipe with L_BRIEF 0.08 added (brief
//     pile-ups, so that waiting can pay; seed 1): M1 with the adopted
//     reward, M2 with RewardConfig.DeficitDrain (δ of the drain and crowd
//     terms read from the deficit). Each behind the 16-vote gate and a
//     6-vote one (3 s; the other settings of models/gate-testbed.json).
//     The rule, written before the runs: of the four, those pass that at
//     base seeds 1 and 1000 are behind the per-scenario strongest rule by
//     more than 2% in no bulk built-in, with the agent's bulk mean at most
//     0.2% below the adopted model's (22.94 and 22.93 MB/s), the kind
//     built-ins no worse (rr and rate ratios at most 0.05 above the
//     adopted model's 0.09× and 0.49×, onoff at most 1.01× static's), and
//     the largest worst-case shortfall over the S1, S10 and S11 fans (the
//     -at times above) below the adopted model's 3.4%; of those passing,
//     the one with the lowest fan shortfall is adopted; if none passes,
//     the adopted model stays.
//     Measured (build with make model-universal MODEL_LAYOUT=proflow-state-v3
//     and the shares plus L_BRIEF 0.08; M2 by proflow train -universal on
//     the same corpora with "deficit_drain": true; proflow evaluate, 2
//     repeats; the fans as proflow evaluate of S1, S10, S11 and their end
//     twins written as scenario files, the agent's largest shortfall
//     behind the best rule of each, which reads 3.4% in all three for the
//     adopted model). Re-measured at this commit, the adopted model's bulk
//     means are 22.92 and 22.90 MB/s (behind nowhere), the reference here.
//     M1, 16 votes: bulk 22.72 and 22.68, behind in S6 and S11e (and
//     S12d); fans 3.4%; rr 0.12×, rate 0.57×. M1, 6 votes: 22.76 and
//     22.76, behind in S6 and N2; fans 3.3–3.4%; onoff 1.07×. M2, 16
//     votes: fans 1.5% (S1), 3.3% (S10), 1.5% (S11) (proflow bound
//     -model, run afterwards: 3.3%, 3.3%, 1.3%), the deficit does
//     time its move, but bulk 21.85 and 21.82, behind in S4–S7, S12b,
//     S12d and C1: it leaves a lighter crowd (S5, S7) after the collapse,
//     the gate's 8 s added to a move it prefers only as the reserve runs
//     out; rr 0.09×, rate 0.70×. M2, 6 votes: bulk 22.54 and 22.53,
//     behind in S5, S6, C1, C2 and N2 (it moves in N2 at 5 s); fans
//     3.3–3.4%. None passes; the adopted model stays. What a policy needs
//     is a move timed to the reserve without the gate's fixed delay, and
//     the shorter gate lets noise move it: neither model learned both.
//   - M2 behind gates between the two, as M2 behind 16 votes was late
//     and behind 6 moved on noise. The rule, written before the runs:
//     M2 behind 8, 10 and 12 votes, each with margin 0.2 (the recorded
//     one) and 0.5 (the other settings of models/gate-testbed.json),
//     judged by the rule above (the same criteria, the same reference);
//     of those passing, the one with the lowest fan shortfall is adopted
//     with its gate; if none passes, the adopted model stays. A gate that
//     fails the bulk built-ins at base seed 1 is not run further.
//     Measured at base seed 1 (bulk mean; behind by more than 2% in):
//     8 votes 22.46 (S5, S6, C1, N2), margin 0.5 22.20 (S5, S6, S7, S12d);
//     10 votes 22.39 (S5, S6, C1), margin 0.5 21.94 (S4–S7, S9, S12b,
//     S12d); 12 votes 22.20 (S5, S6, S7, S12b, C1), margin 0.5 21.74 (ten
//     scenarios). None passes, none was run further, the adopted model
//     stays. Every v3 model and gate is behind in S6 (6.4–8.3%), where
//     each switch is congested for 30 s in turn: they move four times an
//     episode there (agg2, agg3, agg4, agg1), the adopted model twice
//     (agg2, agg1), with twice its SLO-violation seconds (35 s, 17.5 s).
//     The trace of M3 there (proflow evaluate -traces, base seed 1,
//     repeat 0) shows why: it leaves 28, 58.5, 88.5 and 118.5 s into
//     the episode, each time about 8 s into the crowd's stay, and each time to the clean switch
//     of lowest index, which is where S6's crowd goes next; the switch
//     the crowd has just left reads a deficit of about 0.7 and is
//     avoided, where the adopted model goes back to it. On a drained
//     switch a lone flow still gets the bucket rate; the agents learned
//     that a drained reserve is a bad destination, true only when more
//     traffic comes.
//   - The same two rewards on a v3 corpus of the default shares (no
//     L_BRIEF), to tell what the deficit does from what the brief
//     pile-ups do: M3 with the adopted reward, M4 with DeficitDrain, both
//     behind the 16-vote gate. The rule, written before the runs: the
//     rule of the layout-v3 models above (the same criteria and
//     reference); of those passing, the one with the lower fan
//     shortfall; if neither passes, the adopted model stays.
//     Measured: M3, bulk 22.78 and 22.75 MB/s, behind only in S6 (7.1%
//     and 7.2%); fans 3.4% as the adopted model; rr 0.13×, rate 0.57×,
//     onoff 1.00×. M4, bulk 21.95 and 21.95, behind in eight and seven
//     scenarios (S5 and S6 by 6.5–9.8%); fans 3.3–4.1%; rate 0.93×.
//     Neither passes; the adopted model stays, and layout v3 remains an
//     option of the encoder and the trainer that no committed model
//     uses. With the adopted reward the deficit changes nothing but S6;
//     read as δ it times the move to the reserve, too late for the
//     lighter crowds behind the 16-vote gate.
//   - A longer look ahead for M2. Its traces of the built-ins (proflow
//     evaluate -traces, base seed 1, repeat 0) show the advantage of
//     leaving (ΔQ, the decision's margin) clearing the gate's δ about 10 s
//     before the collapse under S1's full-rate crowd but only about 6 s
//     before it under S5's lighter one (31 s against 37 s into the
//     episode), so 16 votes (8 s) come after that collapse; a shorter
//     gate moves in N2, whose crowd reads like S1's until it leaves.
//     The hypothesis: the collapse weighs too little on ΔQ while it is
//     more than 6 s away. Two models on M1's corpus (the v3 corpora with
//     L_BRIEF 0.08) with M2's reward: M5 with γ = 0.97 instead of 0.95
//     (a horizon of about 16 s instead of 10), M6 with α_coll 1.0
//     instead of 0.5 (the collapse costs twice as much), each trained at
//     seed 1 and run behind the 16-vote gate. The rule, written before the
//     runs: the rule of the layout-v3 models above (the same criteria and
//     reference); of those passing, the one with the lower fan shortfall;
//     if neither passes, the adopted model stays.
//     Measured (proflow train -universal -config with "gamma": 0.97, or
//     "alpha_coll": 1.0, beside M2's reward; proflow evaluate, 2 repeats):
//     M5, bulk 21.71 and 21.65 MB/s at base seeds 1 and 1000, behind in
//     twelve scenarios (S1–S6, S9, S10, S12b, S12d, C1, C2; S5 by 15–18%);
//     fans 3.7% (S1), 5.2% (S10), 1.2% (S11); rr 0.20×, rate 0.71×. M6,
//     bulk 21.38 and 21.40, behind in ten and eleven (S6 by 36–39%); fans
//     6.3%, 5.9%, 2.4%; rate 1.12×. Neither passes; the adopted model
//     stays. The longer look ahead did not move M5 earlier under the
//     lighter crowd (its traces, base seed 1, repeat 0): it leaves S5 at
//     38 s, after the collapse that static's trace shows at 37.5 s, as
//     M2 did, and S1 at 30 s, 1 s before static's collapse there.
//   - An outcome-only reward for v3. The Q-function is fitted as if a
//     move took effect at once, so an exact one waits for the last safe
//     step, and any gate's delay then makes it late; the crowd and drain
//     terms (β, κ) instead open ΔQ on a crowd's arrival, whatever the
//     reserve, which is what moved M2 in N2 behind 6 votes. With the
//     deficit in the state, the collapse itself may time the move. M7: M1's
//     corpus, the adopted reward with β = 0 and κ = 0 (the throughput,
//     collapse, overflow and latency terms only), seed 1, behind the
//     16-vote gate and the 6-vote one of the M1/M2 runs. The rule, written
//     before the runs: the rule of the layout-v3 models above; of the two
//     gates passing, the one with the lower fan shortfall; if neither
//     passes, the adopted model stays.
//     Measured: M7 behind 16 votes, bulk 20.62 and 20.60 MB/s at base
//     seeds 1 and 1000, behind in 18 and 19 scenarios (S1–S10 by about
//     10%); behind 6 votes, 21.55 and 21.54, behind in eleven (S1–S7, S9,
//     S10 by 4–8%, S12b, S12d, S6 by 32%); fans 5.8% (S1), 5.9% (S10), 0.0%
//     (S11). Neither passes; the adopted model stays. Its traces (6 votes,
//     base seed 1) show what the hypothesis said: ΔQ clears δ half an
//     interval before the collapse, at 30.0 s in S1 (collapse at 30.5 s)
//     and at 37.0 s in S5 (37.0 s), never in N2, so the move comes the
//     gate's 2.5 s after the collapse. In S6 it moves four times (32, 66.5,
//     96.5, 126.5 s), each to the clean switch of lowest index whose
//     reserve is whole, as M3.
//   - M7's reward fitted with a decision lag (TrainConfig.DecisionLag, "Decision lag"
//     above), so that the move the gate delays is valued where the gate
//     lets it happen. M8: lag 5 behind the 6-vote gate; M9: lag 15 behind
//     the 16-vote gate; M1's corpus, seed 1. The rule, written before the
//     runs: the rule of the layout-v3 models above; of those passing, the
//     one with the lower fan shortfall; if neither passes, the adopted
//     model stays.
//     Measured (proflow train -universal with "decision_lag" and the
//     gate of lag+1 votes; proflow evaluate, 2 repeats): M8, bulk 22.43
//     and 22.36 MB/s at base seeds 1 and 1000, behind in S5 (12–17%), S6
//     (7–8%), S7, S12b, S12d (and S3 by 2.3% at seed 1), level or ahead
//     in S1, S2, S4 and S8–S11, where M7 behind the same gate was 4–10%
//     behind; fans 3.4% (S1), 3.2% (S10), 0.9% (S11); rr 0.26×, rate 1.31×.
//     Its traces (base seed 1) show the lag doing what it was for: it
//     leaves S1 and S10 at 30.0–30.5 s and S7 at 46.0–46.5 s, within a
//     second before static's collapse (31.0 s, 46.5 s), and never moves
//     in N2; but it leaves S5 three times (34, 59–61.5, 78.5–80 s) and S6
//     four. M9, bulk 19.61 and 19.77, behind in S5, S6 and the five S12
//     variants by 18–55%; rr 4.66×, rate 6.31×: 7.5 s ahead is more than
//     the network learned to see. Neither passes; the adopted model
//     stays. The lag fixes the timing; the destinations and the kinds
//     are what M7's outcome-only reward lost.
//   - Lag 5 with the crowd term back, for the destinations. M10: M2's
//     reward (β −2 read through the deficit, κ 0.7 from the deficit)
//     with lag 5; M11: M7's reward with M2's crowd term (β −2,
//     crowd_drain and deficit_drain) and no κ. Both on M1's corpus, seed
//     1, behind the 6-vote gate. The rule, written before the runs: the
//     rule of the layout-v3 models above; of those passing, the one with
//     the lower fan shortfall; if neither passes, the adopted model stays.
//     Measured: M10, bulk 22.82 and 22.81 MB/s at base seeds 1 and 1000,
//     behind in S6 (6.9%, 6.7%) and N2 (3.2%, 3.3%) only, better in 9 of
//     24; fans 3.3–3.4%; rr 0.09×, rate 0.52×, onoff 1.04×. M11, bulk
//     22.81 and 22.83, behind in S6 (7.2%, 6.8%) and, at base seed 1, N2
//     (3.3%), better in 9 of 24; fans 3.4%; rr 0.09×, rate 0.54×, onoff
//     1.02×. Neither passes; the adopted model stays. Both still leave S6
//     for the clean switch of lowest index, as every v3 model; the crowd
//     term, read through the deficit or not, changes nothing there.
//   - The development family D1–D64 (southbound/sim, "Development
//     family"): the held-out family's generator and design from another
//     seed, added so that a choice can be judged over the space H1–H64
//     samples without looking at H1–H64. From its commit on, choices may
//     look at D1–D64 as at the built-ins, and this log says when they do.
//     First look: the adopted model behind models/gate-testbed.json, the
//     four rules and the oracle, proflow evaluate -scenarios dev
//     -repeats 2 at base seeds 1 and 1000, to find where over the design
//     the agent loses to the per-scenario best rule, and the traces of
//     those scenarios (-traces) to see why.
//     Measured: 1.02× the per-scenario best rule at both seeds, better or
//     level in 61 of 64 (seed 1000: 61), more than 2% behind in D9, D40
//     and D51 at both seeds (D60 by 2.0% at seed 1). The traces (base
//     seed 1) show two failures: in D9 and D60 a lone elephant lands on
//     the flow's switch at once, with no precursor, the flow collapses
//     (24 → 4 MB/s) and the agent, whose margin clears δ from the next
//     sample on, waits out its 16 votes (8 s) where throughput-drop moves
//     within a second; in D40 (benign bursts) it moves once for nothing,
//     and in D51 (a ramped crowd with a trap) it loses one repeat of two.
//   - The distress gate (policy.DistressConfig): the vote count waived
//     while the flow's own throughput has been below the throughput-drop
//     rule's calibrated fraction for its debounce (0.9, 2 samples,
//     smoothing 0.1: DefaultThroughputDropConfig, calibrated on
//     congestion-free traffic), a candidate still needing ΔQ > δ and the
//     cooldown. The rule, written before the runs: the adopted model
//     behind models/gate-testbed.json with that distress, judged on the
//     bulk built-ins at base seeds 1 and 1000 (more than 2% behind the
//     per-scenario best rule nowhere), D1–D64 at base seeds 1 and 1000
//     (fewer scenarios more than 2% behind than without it, the mean not
//     lower), the fans (no worse) and the kind built-ins (rr and rate SLO
//     seconds no worse, no move in the quiet traps); if it passes, it is
//     adopted into models/gate-testbed.json.
//     Measured: D1–D64 1.02× at both seeds, D9 and D60 no longer behind
//     (it moves within a second of their collapse), D40 and D51 still
//     are; the bulk built-ins unchanged (22.92 and 22.90 MB/s, behind
//     nowhere), fans 3.4%; but in the quiet traps (the flow's own demand
//     falls, nothing on the fabric) it moved 6.5 (rr) and 5.5 (onoff)
//     times an episode, and rr's SLO seconds rose from 1.1 to 5.3: the
//     adopted model's margins there jump by 0.3–2 whenever a burst or a
//     request starts, and only the 16 votes kept it from moving. It does
//     not pass. A sample whose sender was application-limited says that
//     its demand set its rate, not the network (FlowSample.AppLimited,
//     what TCP_INFO's delivery-rate flag reports); the second version
//     counts such a sample (AppLimited ≥ 0.5) neither low nor healthy,
//     and is judged by the same rule. Its first look, the quiet traps
//     T1–T3, Q1, Q2 (base seed 1, 1 repeat): the same moves and
//     throughput as without distress.
//     Measured: D1–D64 22.71 and 22.72 MB/s (22.68 and 22.68 without),
//     more than 2% behind in D40 and D51 only at both seeds (D9 and D60
//     gone); the bulk built-ins 22.92 and 22.90, behind nowhere; fans
//     3.4%; kinds rr 0.09×, rate 0.49×, onoff 1.00×, no move in the
//     quiet traps, as without distress. It passes and is adopted:
//     models/gate-testbed.json carries it and proflow gate recorded it in
//     the committed model (same weights). What remains on D1–D64: D40,
//     where a capped neighbour of 6 Mbit/s arriving on the flow's switch
//     reads like a crowd and the agent moves for nothing (3.2%), and
//     D51, where it takes a trap's elephant switch over an empty one
//     they score alike (18.0 against 17.9) in one repeat of two.
//   - The destination of an admitted move. With tolerance 3.0 the vote
//     streak keeps its candidate while that scores within 3.0 of the best
//     switch, and the move goes to that candidate; in D51 (base seed 1,
//     repeat 1) the empty switch scored best at 34 s (18.14 against the
//     elephant's switch's 17.98) and the move went to the elephant's. A
//     Q-value gap of up to 3.0 is more than the gate's δ of 0.2 and
//     than the margins that time the moves. The rule, written before the
//     runs: the gate of models/gate-testbed.json with the move going to
//     the best-scoring switch of the admitting step (GateConfig.ToBest),
//     judged as the distress gate was (the bulk built-ins at base seeds
//     1 and 1000 behind nowhere, D1–D64 at both seeds with fewer
//     scenarios more than 2% behind or the same number and a higher
//     mean, fans no worse, kinds no worse and no quiet-trap move); if it
//     passes it is adopted.
//     Measured: D1–D64 22.60 and 22.64 MB/s (22.71 and 22.72 with the
//     candidate in force), more than 2% behind in D40, D42 (28% and 21%)
//     and, at base seed 1, D51 (8.4%); the built-ins, fans and kinds as
//     before. It does not pass: the best switch of one step is as noisy
//     a destination as the kept candidate, and in D42 it is a worse one.
//     GateConfig.ToBest (commit cd6d267) was removed again after this
//     run.
//   - A stricter proactive gate behind distress. The 16 votes were chosen
//     when a move the gate held back came 8 s after the collapse; with
//     distress it comes within a second of it, so holding back a move the
//     crowd may not justify costs less than it did, and the moves for
//     nothing (D40; the static-best scenarios) are what remains. The
//     rule, written before the runs: models/gate-testbed.json with 20 or
//     24 votes, or with δ 0.4 and 16 votes, each judged by the distress
//     gate's rule against the adopted gate (the bulk built-ins at base
//     seeds 1 and 1000 behind nowhere; D1–D64 at both seeds with fewer
//     scenarios more than 2% behind, or as many and a higher mean; fans
//     and kinds no worse; no quiet-trap move); of those passing, the one
//     with the highest mean over D1–D64 is adopted.
//     Measured: 20 votes, D1–D64 22.70 and 22.75 MB/s (the adopted gate
//     22.71 and 22.72), behind in D40 and D51 at both seeds as the
//     adopted gate; bulk built-ins 22.91 and 22.91, behind nowhere; fans
//     3.2–3.4%; rate 0.46× — level with the adopted gate within noise,
//     and below its mean at base seed 1, so it does not pass. 24 votes:
//     the bulk built-ins behind in seven (S1–S4, S6, S9, S10 by 2.7–4.1%),
//     D1–D64 in ten: the collapse a held-back move waits for costs more
//     than the second that distress takes. δ 0.4: D1–D64 22.61 and 22.58,
//     behind in four and five (D10, D42 new). None passes; the adopted
//     gate stays.
//   - The tolerance behind distress. Tolerance 3.0 was chosen over 1.0
//     when a streak restarted by a near-tie left the flow to collapse for
//     8 s (S2); distress now moves it within a second, and a kept
//     candidate up to 3.0 below the best is what D51 went to. The rule,
//     written before the run: models/gate-testbed.json with tolerance
//     1.0, judged by the same rule against the adopted gate; adopted if
//     it passes.
//     Measured: the same as the adopted gate to the last digit (D1–D64
//     22.71 and 22.72, behind in D40 and D51; built-ins, fans, kinds
//     alike): in D51 every switch but the flow's scores within 0.2 of the
//     others, so any tolerance keeps the candidate. It does not pass; the
//     destination there is the Q-network's to learn.
//   - First look at the development families of other sizes (D6x3-1 …,
//     D16x3-1 …; the adopted model and gate, every policy, proflow
//     evaluate -profile testbed-6x3 or testbed-16x3 -scenarios dev
//     -repeats 2 -seed 1): 1.02× the per-scenario best rule at both
//     sizes, better or level in 61 and 63 of 64, more than 2% behind in
//     D6x3-11, D6x3-44 and D16x3-11 (3.1–3.4%), each a move where staying
//     is best: a full-rate host on the flow's switch for one 10–15 s
//     burst at a time, which the bucket's reserve covers (the fans'
//     trade-off), and capped neighbours on the flow's switch while a
//     full-rate host sends elsewhere (D16x3-11, as D40). No choice was
//     made on it.
//   - A seed ensemble. What stays behind on D1–D64 and the sized D
//     families are moves where staying is best, taken on margins of one
//     fit that a second fit of the same recipe need not share; the gate
//     cannot tell such a margin from a real one (more votes or a larger δ
//     cost more elsewhere, above). Averaging the Q-values of fits that
//     differ only in their seeds keeps what the recipe learns and damps
//     what one fit's draws add. The rule, written before the runs: the
//     mean Q of three models of the adopted recipe (make model with
//     MODEL_SEED 1, the committed model, 2 and 3: other corpora and
//     training draws), as one network whose hidden layers lie side by
//     side (exactly the mean), behind the adopted gate, judged by the
//     distress gate's rule against the adopted model (the bulk built-ins
//     at base seeds 1 and 1000 behind nowhere; D1–D64 at both seeds with
//     fewer scenarios more than 2% behind, or as many and a higher mean;
//     fans and kinds no worse; no quiet-trap move), and on the sized D
//     families (testbed-6x3 and testbed-16x3, base seed 1, 2 repeats)
//     with no more scenarios behind than the adopted model. If it passes,
//     a 128-wide network distilled from it must pass the same rule before
//     it is adopted, since three networks side by side cost three times
//     the decision.
//     Measured (MODEL_SEED 3 first failed in its 2x3 corpus: an on/off
//     flow whose idle phases lined up with warm-up plus window never left
//     the baseline phase, fixed by BaselineEstimator.Restart, which changed
//     none of the adopted model's figures below): D1–D64 22.80 and 22.78
//     MB/s (the adopted model 22.71 and 22.72), more than 2% behind in none
//     at either seed (D40 and D51 gone); the sized D families behind in
//     D6x3-11 and D6x3-62 (the adopted model D6x3-11 and D6x3-44) and in
//     D16x3-11 and D16x3-57 (the adopted model D16x3-11 only); fans 3.4%
//     and kinds as before (rr 0.08×, rate 0.49×, no quiet-trap move); but
//     the bulk built-ins behind in S6 at both seeds (3.5% and 3.1%). In S6
//     the crowd rolls on to the next switch every 30 s; at 50.5 s three
//     switches are empty, their candidate rows identical and their scores
//     equal, and the streak keeps the candidate of its first vote, which a
//     transient of that step made agg3 (the adopted model's first vote fell
//     a step later, on agg1): the crowd reaches agg3 next and the flow
//     moves again. It does not pass; the adopted model stays, and the
//     distillation (written for it, torchq.Distill, commit 245ef75, and
//     reverted unused) was not run. What the three fits agree on improves the
//     development family, but a destination among equals is still set by
//     one step's noise.
//     Correction, measured afterwards: S6 with the flow and the crowd
//     starting on each switch and the crowd rolling through the other
//     three in each order (docs/scenarios/s6-rolling, 24 files; base
//     seeds 1 and 1000, 2 repeats): the adopted model is level with the
//     best rule in all 24, the ensemble more than 2% behind in five and
//     six (3.2–3.9%). Its traces of S6-1234, S6-2143 and S6-4123 (base
//     seed 1, repeat 0, -traces) show why: after its first move it goes to
//     a switch the crowd has not reached yet, never back to the one the
//     crowd has just left, and the crowd arrives there next; it moves three
//     or four times an episode. The ensemble's S6 loss is not one step's
//     noise among equals.
//   - The destination by majority over the streak. The gate times a move
//     by 16 votes but takes its destination from one step: the first vote
//     of the streak, kept by the tolerance (S6 with the ensemble, D51), or
//     the admitting step (ToBest, D42). Counting, over the streak, how
//     often each switch was the step's best, and moving to the switch
//     counted most among those that clear the margin at the admitting step
//     (GateConfig.Majority; ties to the higher score, then the lower
//     index), reads the destination as the timing is read: from the whole
//     streak. The rule, written before the runs: the adopted model behind
//     models/gate-testbed.json with majority on, judged by the ensemble's
//     rule against the adopted gate (the bulk built-ins at base seeds 1
//     and 1000 behind nowhere; D1–D64 at both seeds with fewer scenarios
//     more than 2% behind, or as many and a higher mean; fans and kinds no
//     worse, no quiet-trap move; the sized D families at base seed 1 with
//     no more scenarios behind); if it passes it is adopted.
//     Measured: D1–D64 22.59 and 22.60 MB/s (the adopted gate 22.71 and
//     22.72), more than 2% behind in D40, D42 (28% and 20%) and D51 (7.4%
//     and 15%) at both seeds; the bulk built-ins, fans, kinds and sized D
//     families as the adopted gate. It does not pass: in D42, as with
//     ToBest, the switch most often best step by step is a worse
//     destination than the candidate the tolerance kept, so neither one
//     step nor the streak's count reads the destination better than the
//     candidate does. GateConfig.Majority was not committed.
//   - A corpus twice the size. The ensemble's gain on D1–D64 says that
//     part of what remains is one fit's noise; more transitions of the
//     same strategies damp it at no cost to the decision. The rule,
//     written before the runs: make model with MODEL_FABRICS 4x3:1800
//     2x3:1000 8x3:800 4x7:800 (seed 1, the adopted recipe otherwise),
//     behind the adopted gate, judged by the ensemble's rule; if it
//     passes it is adopted.
//     Measured: D1–D64 22.82 and 22.83 MB/s, behind in D34 and D40 at
//     both seeds; the bulk built-ins behind in C1 (both seeds) and C2;
//     the sized D families behind in 6 (6x3) and 5 (16x3) scenarios
//     against the adopted model's 2 and 1; kinds rr 0.09× and rate
//     0.49× as before, onoff 1.02× (1.00× before), no quiet-trap move.
//     It does not pass; the adopted model stays.
//   - A move all three fits agree on. The seed ensemble's mean removed the
//     development family's moves for nothing but let one step's noise pick
//     among equal destinations (S6); its members disagree exactly where a
//     margin is one fit's draw. Scoring each candidate by the smallest
//     advantage over staying that any of the three fits gives it,
//     min_m [Q_m(s,k) − Q_m(s,k*)] (stay scored as the fits' mean), moves
//     only where every fit sees a gain and ranks destinations by the gain
//     they all see: pessimism over fits, as offline RL does with an
//     ensemble. The rule, written before the runs: the three fits of the
//     ensemble entry (MODEL_SEED 1, 2, 3) combined so, behind
//     models/gate-testbed.json, judged by the ensemble's rule against the
//     adopted model (the bulk built-ins at base seeds 1 and 1000 behind
//     nowhere; D1–D64 at both seeds with fewer scenarios more than 2%
//     behind, or as many and a higher mean; fans and kinds no worse, no
//     quiet-trap move; the sized D families at base seed 1 with no more
//     scenarios behind). Only this one combination is run. If it passes,
//     one network distilled from it must pass the same rule before it is
//     adopted (a decision of three networks costs more than issue 23's
//     5 µs).
//     Measured: D1–D64 22.74 MB/s at base seed 1, more than 2% behind in
//     D37 only (the adopted model 22.71, D40 and D51), and 22.65 at base
//     seed 1000, behind in D10 (6.1%, static best) and D22 (the adopted
//     model 22.72, D40 and D51); the bulk built-ins 22.90 and 22.88,
//     behind nowhere; fans 3.4%; kinds rr 0.08×, rate 0.49×, onoff
//     1.00×, no quiet-trap move; the sized D families behind in D6x3-11
//     and D6x3-54, and D16x3-11, as many as the adopted model. It does
//     not pass: at base seed 1000 as many scenarios behind and a lower
//     mean. Pessimism over the fits removes D40 and D51 as the mean did,
//     but the scenarios behind move elsewhere rather than vanish; no
//     distillation was run. The hack that combined the fits (in
//     policy.Agent, a dev build) was never committed.
//   - A proactive move on a strong streak only. Behind distress a move the
//     gate holds back costs about a second of a collapsed flow, and what
//     stays behind on the development families are proactive moves where
//     staying is best. Their streaks differ in size: the adopted model's
//     ΔQ over its 16 votes is 0.32–0.92 in D40 (a capped neighbour),
//     0.53–1.20 in D6x3-44, 0.85–1.34 in D6x3-11 and 0.93–1.40 in D16x3-11
//     (one full-rate host for one burst), against 0.85–1.37 in S7,
//     0.94–1.34 in S8, 0.94–1.32 in S11, 0.97–1.93 in S5, 0.64–2.09 in S12
//     and 1.52–2.26 in S1, S10 and N2 (base seed 1, -traces; the sized D
//     scenarios 2 repeats, the rest 1): a threshold on the streak's mean
//     margin can separate the capped neighbour, not the brief burst, which
//     looks like S11 until it ends.
//     The rule, written before the runs: models/gate-testbed.json with
//     GateConfig.MeanMargin 0.8 or 1.0 (the 16 votes admit a move only
//     once the streak's mean ΔQ exceeds it; distress unchanged), each
//     judged by the ensemble's rule against the adopted gate (the bulk
//     built-ins at base seeds 1 and 1000 behind nowhere; D1–D64 at both
//     seeds with fewer scenarios more than 2% behind, or as many and a
//     higher mean; fans and kinds no worse, no quiet-trap move; the sized
//     D families at base seed 1 with no more scenarios behind); of those
//     passing, the one with the higher D1–D64 mean is adopted.
//     Measured: 0.8, D1–D64 22.53 and 22.52 MB/s, more than 2% behind in
//     four at each seed (D10 by 12% with static best, D22, D42 or D37,
//     D51), the sized families in three and two; 1.0, 22.50 and 22.47,
//     behind in six and five, S12d behind at base seed 1000, rr 0.21×;
//     with either, rate 0.62× (0.49× before). Neither passes; the gate
//     stays. A held-back streak does not end in a stay: the move comes
//     later, when the flow is already failing or the crowd has moved, and
//     costs more than the early one. GateConfig.MeanMargin was not
//     committed.
//   - Fewer votes for a flow whose own application sets its rate. The
//     16 votes hold a proactive move back for 8 s because a backlogged
//     flow pays a move with 10–15 s of TCP recovery and a brief crowd
//     (N2) reads like a lasting one. A constant-bitrate flow pays its SLO
//     seconds mostly in that recovery, and more the later it moves: in V1
//     (the kind built-ins, base seed 1, 2 repeats) the agent moves 8 s into
//     the crowd's stay and spends 5.5 s below 90% of its demand, the crowd
//     rule moves on arrival and spends 4.5 s. While a sample says the sender was
//     application-limited (FlowSample.AppLimited, TCP_INFO's flag), the
//     network is not yet what limits the flow. The rule, written before
//     the runs: models/gate-testbed.json with a second vote count used
//     while the step's sample is application-limited (AppLimited ≥ 0.5),
//     3 (the paper's debounce, 1.5 s) or 6 (3 s); bulk flows are never
//     application-limited, so the bulk built-ins and D1–D64 must come out
//     identical to the adopted gate's (checked, not assumed); judged on
//     the kind built-ins (base seed 1, 2 repeats): the rate ratio to the
//     best rule below the adopted gate's 0.49×, rr at most 0.02 above its
//     0.09×, onoff at most 1.01× static's, no move in the quiet traps; of
//     those passing, the one with the lower rate ratio is adopted.
//     Measured (kind built-ins, base seed 1, 2 repeats): 3 votes, rate
//     0.46× [0.42×, 0.50×], rr 0.11×, onoff 1.09× static's, 0.50 and 1.25
//     moves an episode in the rr and onoff quiet traps; 6 votes, rate
//     0.46× [0.43×, 0.50×], rr 0.09×, onoff 1.07×, no quiet-trap move.
//     Neither passes (onoff above 1.01×, and with 3 votes quiet-trap
//     moves): an on/off flow is application-limited in its idle gaps, and
//     a move there costs the next burst its window, as a move of a
//     backlogged flow costs its recovery; the rate flows gain 0.03×.
//     The bulk runs were not made. The second vote count was not
//     committed.
//   - Analyses of the held-out families in the same session, after the
//     choices above and followed by none: the rule chosen per scenario from
//     another base seed's run (the cells.csv of make demo's H1–H64 at base
//     seed 5000 against base seed 9400's) is more than 2% behind the
//     per-scenario best rule in 0 and 1 of 64; the best of all policies per
//     K1–K64 rate scenario, picked with hindsight, is 0.34× the best rule;
//     and docs/heldout-family.md's descriptions of H1–H64 were read.
//   - Scenarios drawn the way the held-out family is drawn (strategy
//     M_FAMILY, session 16). The strategies A–L sample the paper's
//     patterns one at a time, each with its own script; what stays behind
//     on D1–D64 and at other sizes are moves whose worth depends on how
//     often such traffic lasts, brief bursts against lasting crowds, and
//     the corpus sets that prior by its shares, not by the space the
//     families sample. M_FAMILY draws scenarios with the held-out
//     family's generator from seeds of its own (sim.DrawFamilyScenario;
//     never an H or K member's traffic, which the draw checks), stays in
//     a third of the episodes and moves at a random time in the first 60
//     s otherwise. H1–H64 stay unseen; they are no longer outside the
//     training distribution's design, as D1–D64 never were, so a result
//     on them then says how the agent does on new draws of that design,
//     and S1–S12, C, N and the kinds built-ins are the out-of-design
//     checks. The rule, written before the runs: make model with
//     models/shares-testbed.json plus M_FAMILY 0.42 (a quarter of the
//     corpus) and MODEL_FABRICS 4x3:1200 2x3:667 8x3:533 4x7:533 (the
//     other strategies keep their episodes), seed 1 and the adopted recipe
//     otherwise, behind models/gate-testbed.json, judged by the ensemble's
//     rule against the adopted model (the bulk built-ins at base seeds 1
//     and 1000 behind nowhere; D1–D64 at both seeds with fewer scenarios
//     more than 2% behind, or as many and a higher mean; fans and kinds no
//     worse, no quiet-trap move; the sized D families at base seed 1 with
//     no more scenarios behind) and the S6 rolling files at base seeds 1
//     and 1000 behind nowhere. If it passes it is adopted, and the
//     held-out families are then run at base seed 9500, unused.
//     Measured (make model printed collect 83 s, train 927 s on 2 CPUs):
//     D1–D64 22.84 and 22.81 MB/s (the adopted model 22.71 and 22.72),
//     more than 2% behind in D34 (crowd best, 4.0% and 3.5%) and D40 at
//     both seeds (D51 gone), closing 93% and 87% of the oracle's lead
//     (71% and 79%); fans 3.4%; kinds rr 0.09×, rate 0.49×, onoff 1.01×
//     static's; but the bulk built-ins behind in S6 at both seeds (3.5%
//     and 3.1%), the S6 rolling files in six of 24 at each seed
//     (3.2–4.0%), and the sized D families behind in four (6x3: D6x3-7,
//     -11, -55 by 9.9%, -62) and two (16x3: -11, -57) against the adopted
//     model's two and one. It does not pass; the adopted model stays. As
//     with the seed ensemble, the development family's mean rose and S6
//     fell: every fit that gained on D1–D64 so far left S6's crowd for a
//     switch it had not reached yet.
//   - Which switch a crowd has just left (telemetry.StateLayoutV4,
//     session 16). The traces of S6 with the M_FAMILY model and the
//     adopted one (base seed 1, -traces) show the destination after the
//     crowd's second move set by score differences of 0.1–0.2 between
//     the empty switches, the one the crowd has just left and the one it
//     reaches next looking alike: no feature of a single sample tells
//     them apart, and the adopted model's choice there is its
//     tie-break's. The rolling crowds of the held-out family's design
//     need the same memory. Layout v4 adds to v2 each switch's vacated
//     flows, the gap between a leaky peak of its flow count (falling by
//     Cn flows in T = 30 s) and the count now. The rule, written before
//     the run: the M_FAMILY recipe above with MODEL_LAYOUT
//     proflow-state-v4 (the same corpus plans and seed), judged by the
//     same rule against the adopted model; if it passes it is adopted.
//     Measured (make model printed collect 89 s, train 977 s): the S6 rolling files
//     level with the best rule in all 24 at both base seeds, and S6 among
//     the bulk built-ins too, so the feature does what it was made for;
//     but S12b (4.1%) and S12d (2.3% and 4.4%) behind, D1–D64 22.66 and
//     22.71 MB/s, behind in four (D10 5.1% with static best, D22, D37,
//     D55) and two (D22, D55), the sized D families in two (6x3: -11,
//     -16) and two (16x3: -11, -13, the adopted model one); fans 3.4%,
//     kinds rr 0.09×, rate 0.49×, onoff 1.01×. It does not pass; the
//     adopted model stays.
//   - Layout v4 on the adopted corpus recipe (no M_FAMILY). The M_FAMILY
//     corpus alone moved the development family up and S6 down, v4 on it
//     moved S6 back and the rest down; the rule, written before the run:
//     make model with MODEL_LAYOUT proflow-state-v4 and the adopted recipe
//     otherwise (models/shares-testbed.json, MODEL_FABRICS 4x3:900 2x3:500
//     8x3:400 4x7:400, seed 1), judged by the same rule; if it passes it
//     is adopted.
//     Measured (make model printed collect 76 s, train 815 s): D1–D64 22.84 and
//     22.88 MB/s (the adopted model 22.71 and 22.72), more than 2% behind
//     in D42 (3.9%) and in none, closing 86% and 92% of the oracle's lead
//     (71% and 79%); the bulk built-ins behind nowhere at either seed and
//     the S6 rolling files level in all 24 at both; fans 3.4% as before;
//     kinds rr 0.09×, rate 0.49×, no quiet-trap move, but onoff 1.01×
//     static's with seven of its 14 scenarios worse than their strongest
//     rule (the adopted model 1.00×, none worse); and the sized D families
//     behind in three (6x3: -11, -44 as the adopted model, and -16 by
//     2.1%) and two (16x3: -11 and -57, the adopted model -11 only). It
//     does not pass (the sized families and onoff); the adopted model
//     stays. It is the first candidate level with the best rule on S1–S12,
//     C, N and all 24 S6 variants at both seeds while gaining on the
//     development family.
//   - A second fit of that recipe (MODEL_SEED 2: other corpus draws and
//     training draws), since what v4 on the adopted recipe loses is one
//     scenario per size and one kind, by margins a fit's draws have moved
//     before (the seed-ensemble entry). The rule, written before the run:
//     make model with MODEL_LAYOUT proflow-state-v4 and MODEL_SEED 2, the
//     adopted recipe otherwise, judged by the same rule against the
//     adopted model; only this one more fit is run. If it passes, it is
//     adopted after the held-out families are run with it at base seed
//     9500 (unused; a result there is reported, not a choice); the figures
//     that change are then redone by make demo and the commands of
//     docs/reproduction.md.
//     Measured: D1–D64 22.76 and 22.77 MB/s, behind in D40 and D54 (17%,
//     static best) and in D54; the bulk built-ins behind in S6 (7.1% and
//     6.7%) and S9 (8.5% and 9.1%) at both seeds; the S6 rolling files
//     behind in all 24 at both seeds (3.2–7.4%); fans 6.6%; kinds rr
//     0.11×, rate 0.67×, onoff 1.01×; the sized D families behind in five
//     (6x3) and seven (16x3). It does not pass; the adopted model stays.
//     What the first fit of layout v4 gained, S6 included, was that fit's
//     draws, not the layout's: two fits of one recipe differ by more
//     than any recipe change logged here has moved the figures, so a
//     single fit that passes a rule of this kind says little about the
//     recipe. A recipe would have to pass with several fits (or their
//     ensemble, distilled) before its model is worth adopting; no further
//     fit was run.
//   - The ensemble of layout v4's fits (session 17). A single fit of the
//     v4 recipe passed nearly everything and the next failed nearly
//     everything, and the seed ensemble of layout v2's fits gained on the
//     development family but lost S6 to a tie between empty switches,
//     which v4's vacated flows are meant to break. Averaging v4's fits
//     judges the recipe rather than one draw of it. The rule, written
//     before the third fit was made: the mean Q of three fits of layout
//     v4 on the adopted recipe (MODEL_SEED 1 and 2, the two fits above,
//     and 3), as one network whose hidden layers lie side by side
//     (exactly the mean), behind models/gate-testbed.json, judged by the
//     same rule against the adopted model (the bulk built-ins at base
//     seeds 1 and 1000 behind nowhere; D1–D64 at both seeds with fewer
//     scenarios more than 2% behind, or as many and a higher mean; fans
//     and kinds no worse, onoff's scenarios behind their strongest rule
//     no more than the adopted model's, no quiet-trap move; the sized D
//     families at base seed 1 with no more scenarios behind; the S6
//     rolling files at base seeds 1 and 1000 behind nowhere). Only this
//     combination is run. If it passes, one 128-wide network distilled
//     from it must pass the same rule before it is adopted (three
//     networks side by side cost more than issue 23's 5 µs a decision),
//     and the held-out families are then run at base seed 9500, unused.
//     Measured (the third fit: make model printed collect 66 s, train
//     653 s): D1–D64 22.85 and 22.84 MB/s (the adopted model 22.71 and
//     22.72), more than 2% behind in none at either seed, closing 85% and
//     83% of the oracle's lead (71% and 79%); fans 3.4% as before; but the
//     bulk built-ins behind in S6 at both seeds (7.1% and 6.7%), the S6
//     rolling files in all 24 and 22 of 24 (2.3–7.4%), the sized D
//     families in three (6x3: -11, -44, -62) and four (16x3: -11, -26 by
//     16%, -27, -57) against the adopted model's two and one, kinds rr
//     0.12× and rate 0.68× (0.09× and 0.49×), onoff 1.01×. It does not
//     pass; the adopted model stays. Averaging removes what one fit's
//     draws add to D1–D64 (no scenario behind, for the first time at both
//     seeds), but what the fits share on S6 is the second fit's habit, not
//     the first's: the recipe does not teach the way back to a switch the
//     crowd has left, and the first fit's S6 was its own.
//   - Rolling crowds in the corpus (strategy N_ROLLING, session 17). In
//     the adopted recipe a crowd rolls only in B, host by host from random
//     switches, in about one episode of a hundred, so whether the switch a
//     crowd has just left is a good destination is left to each fit's
//     draws. N_ROLLING rolls a whole crowd through a random cyclic order
//     of the switches every 20–40 s and reroutes to a random other switch
//     in two episodes of three. The rule, written before the runs: make
//     model with MODEL_LAYOUT proflow-state-v4 (its vacated flows tell the
//     switch left from the one next) and models/shares-testbed.json plus
//     N_ROLLING 0.08, the adopted recipe otherwise, with MODEL_SEED 1, 2
//     and 3; their mean Q (hidden layers side by side) behind
//     models/gate-testbed.json, judged by the rule of the entry above;
//     only this combination is run. If it passes, one 128-wide network
//     distilled from it must pass the same rule before it is adopted, and
//     the held-out families are then run at base seed 9500, unused.
//     Measured (make model printed train 676, 694 and 699 s): D1–D64 22.86
//     and 22.84 MB/s (the adopted model 22.71 and 22.72), more than 2%
//     behind in none at either seed, closing 84% and 85% of the oracle's
//     lead (71% and 79%); the bulk built-ins 22.92 and 22.91, behind
//     nowhere at either seed; the S6 rolling files behind in none of 24
//     at both seeds; fans 3.4% as before; kinds rr 0.08×, rate 0.49×,
//     onoff 1.00× with none of its 14 scenarios worse, no quiet-trap
//     move; but the sized D families behind in three (6x3: -11 and -44
//     as the adopted model, and -16 by 2.1%, a tie by its interval) and
//     two (16x3: -11 as the adopted model, and -57 by 3.2%) against the
//     adopted model's two and one. It does not pass, by one scenario at
//     each size; the adopted model stays, and no distillation was run.
//     In D16x3-57 (base seed 1, -traces) two flows join the flow's
//     switch at 61 s without touching its throughput and the ensemble
//     moves at 68 s (ΔQ 0.86 over 16 votes), paying 10 s of recovery
//     where staying costs nothing: the capped neighbour of D40, which
//     the adopted model left at 1.6%. It is the first candidate level
//     with the best rule on every development check at the paper's size,
//     S6's 24 variants included, across three fits.
//   - Brief pile-ups beside the rolling crowds (session 17). What the
//     N_ROLLING ensemble loses at other sizes are moves where staying is
//     best: neighbours that join the flow's switch without hurting it, or
//     one full-rate host for one brief burst. L_BRIEF (a pile-up that
//     leaves 3–15 s after arriving) was tried before the distress gate
//     existed and left the agent waiting through collapses; behind
//     distress a held-back move costs about a second. The rule, written
//     before the runs: the N_ROLLING recipe above with L_BRIEF 0.08 added
//     to its shares (MODEL_SEED 1, 2, 3; layout v4), their mean Q behind
//     models/gate-testbed.json, judged by the same rule against the
//     adopted model; only this combination is run. If it passes, one
//     128-wide network distilled from it must pass the same rule before it
//     is adopted, and the held-out families are then run at base seed
//     9500, unused.
//     Measured (make model printed train 686, 758 and 661 s): D1–D64
//     22.83 and 22.85 MB/s, behind in none at either seed; the bulk
//     built-ins and the 24 S6 rolling files behind nowhere at both seeds;
//     fans 3.4%; kinds rr 0.09×, rate 0.49×, but onoff 1.01× with three
//     of its 14 scenarios worse than their strongest rule; the sized D
//     families behind in three (6x3: -11, -44, -54) and three (16x3: -11,
//     -41, -57) against the adopted model's two and one. It does not
//     pass, and does worse at other sizes than N_ROLLING alone: brief
//     pile-ups do not teach the agent to stay beside neighbours that do
//     not hurt. The adopted model stays; no distillation was run.
//   - How faithful a distilled network is (a measurement, not a
//     candidate: its teachers failed the rule). proflow distill
//     (torchq.Distill, restored from commit 245ef75) on the N_ROLLING
//     ensemble's three fits, fitted on the first fit's four corpora with
//     the default DistillConfig (30 epochs; 4 min 30 s on 2 CPUs): held-out
//     greedy agreement 0.969, margin error 0.142. Judged by the same
//     checks: D1–D64 22.82 and 22.79 MB/s, behind in D42 at both seeds
//     (12% and 13%, throughput-drop best; the ensemble behind in none);
//     the bulk built-ins and the 24 S6 files behind nowhere; fans 3.4%;
//     kinds rr 0.08×, rate 0.49×, onoff 1.01×; the sized D families behind
//     in one (6x3: -11) and two (16x3: -11, -57). One state in thirty
//     gets another greedy action, and D42's destination is among them:
//     a student is a fit of its own and must be judged as one, as the
//     rules above require.
//     Distilled again from the same three teachers on all three fits'
//     corpora (12 datasets, the default 30 epochs; 11 min 48 s on 2 CPUs,
//     session 18): held-out greedy agreement 0.977, margin error 0.112.
//     D1–D64 22.86 and 22.84 MB/s, behind in none at either seed (D42
//     level again); the bulk built-ins and the 24 S6 files behind
//     nowhere; fans 3.4%; kinds rr 0.09×, rate 0.49×, but onoff 1.01×
//     with O1, O9 and O10 a second worse than static (its teachers: none);
//     the sized D families behind in one (6x3: -11) and two (16x3: -11,
//     -57). Three times the states brought the student closer to the
//     ensemble, not to it: one state in forty-four still gets another
//     greedy action. (Both held-out figures held out states, not
//     episodes, as Distill then did: a held-out state's neighbours in its
//     episode were fitted, so they flatter the student. Distill now holds
//     out whole episodes.)
//   - A lone neighbour's brief visits (strategy O_SOLO, session 18). What
//     the N_ROLLING ensemble loses at other sizes are moves under one
//     host's brief burst on the flow's switch that never touches the flow
//     (D16x3-57: a 16-stream elephant for 10 s; D6x3-11 and -44 alike),
//     and L_BRIEF, whose pile-ups are every congester host, did not teach
//     staying there. In the corpus one host on the flow's switch stays 20
//     s or more, and moves while a lone neighbour visits are rare. O_SOLO
//     sends one host (full rate in two episodes of three, else capped)
//     through the flow's switch in 1–3 bursts of 5–20 s, and the runner
//     stays in half the episodes, else reroutes in the first 60 s to a
//     random other switch. The rule, written before the runs: the
//     N_ROLLING recipe above with O_SOLO 0.08 added to its shares
//     (MODEL_SEED 1, 2, 3; layout v4), their mean Q behind
//     models/gate-testbed.json, judged by the same rule against the
//     adopted model; only this combination is run. If it passes, one
//     network that computes the ensemble's decisions (distilled, or the
//     fits evaluated side by side) must pass the same rule before it is
//     adopted, and the held-out families are then run at base seed 9500,
//     unused.
//     Measured (O_SOLO's bursts then 5–20 s, commit 186eba7; make model
//     printed train 629, 810 and 740 s): D1–D64 22.74 and 22.77 MB/s,
//     behind in one (D37, 2.5%) and none (the adopted model: D40 and D51
//     at both seeds); the bulk built-ins 22.90 and 22.88 (22.92 and
//     22.90), behind nowhere; the 24 S6 rolling files behind in none at
//     both seeds; fans 3.4% as before; the sized D families behind in one
//     (6x3: -11) and one (16x3: -11) against the adopted model's two and
//     one; kinds rr 0.08×, rate 0.49×, no quiet-trap move; but onoff 1.01×
//     with 3 of its 14 scenarios worse than static (O1, O9, O10: 66.5
//     against 65.5 SLO seconds at both repeats), where the adopted model
//     has none. It does not pass, by onoff; the adopted model stays. The
//     three are the flow under a full-rate crowd that the ensemble now
//     leaves at 8 s, the earliest its 16-vote gate allows (N_ROLLING's
//     left at 10.2–12.5 s), a move the onoff flow pays a second for: O_SOLO's
//     bursts outlast the reserve (about 10.5 s, docs/reproduction.md) in
//     two of three episodes, so its moves mostly paid, and the ensemble
//     learned to leave a lone host sooner, not to stay beside it.
//   - A lone neighbour that leaves before the reserve drains (session 18,
//     after the entry above). O_SOLO's bursts cut to 3–10 s, shorter than
//     the roughly 10.5 s a full-rate crowd leaves the flow whole
//     (proflow bound on S1, S5, S10 and S11), so a move while the
//     neighbour visits is always a needless cost, and H_PARTIAL still
//     shows a lone host that stays. The rule, written before the runs:
//     the N_ROLLING recipe with O_SOLO 0.08 (bursts 3–10 s), MODEL_SEED 1,
//     2, 3, layout v4, their mean Q behind models/gate-testbed.json,
//     judged by the same rule against the adopted model; only this
//     combination is run. If it passes, one network computing the
//     ensemble's decisions must pass the same rule before it is adopted,
//     and the held-out families are then run at base seed 9500, unused.
//     Measured (make model printed train 791, 619 and 712 s): D1–D64 22.84 and
//     22.89 MB/s, behind in none at either seed, closing 84% and 90% of
//     the oracle's lead, the most of any candidate; the bulk built-ins
//     22.92 and 22.91, behind nowhere; the 24 S6 rolling files behind in
//     none at both seeds; fans 3.4% as before; kinds rr 0.08×, rate 0.49×,
//     no quiet-trap move; but onoff 1.01× with 5 of 14 scenarios a second
//     worse than static (O1, O2, O6, O9, O10), and the sized D families
//     behind in three (6x3: -11, -44, -55) and two (16x3: -11, -57)
//     against the adopted model's two and one. It does not pass; the
//     adopted model stays. Between the two O_SOLO trials the recipes trade
//     what they fail: the long bursts kept the other sizes and lost onoff,
//     the short ones lost both. Each trial moves a check by one to three
//     scenarios, about what two fits of one recipe differ by (the entries
//     above), so no next corpus change is indicated by these figures.
//   - When a crowd that may leave is worth leaving (session 19). proflow
//     bound on the sized development scenarios where an agent was behind
//     (D6x3-11 and D16x3-57, one full-rate elephant on the flow's switch
//     for one 10 s burst, freeze twins 44–49.5 s after congestion start;
//     D6x3-44, one full-rate host of a three-host crowd on it for 15 s, end
//     and freeze twins 8–11 s; -repeats 2 -seed 1): the least worst-case
//     shortfall of a single-move policy is 0.0% in each (never, with a move
//     in the frozen twins at the latest safe time), against the adopted
//     model's 3.1% and 3.4% in D6x3-11 and D6x3-44 (1.6% in D16x3-57,
//     where the first O_SOLO ensemble was behind). These are the agent's
//     losses, not the physics'. The frozen twins say when a flow that
//     stays starts to pay: a move up to 10 s after the elephant arrives is
//     as good as any (8.5% ahead of the best rule in D6x3-11-freeze49s and
//     D16x3-57-freeze49s), and a later move costs more, 8.5% over the
//     next 4.5 s in D6x3-11-freeze49s (level with the best rule at 14.5 s);
//     beside the one host of D6x3-44 a move is as good up to 42 s after it
//     arrived (at congestion start). The adopted model moves 8 s
//     after either arrives, the earliest its 16 votes allow.
//     The rule, written before the runs: models/gate-testbed.json with 20
//     or 21 votes (10 or 10.5 s; all else unchanged), behind the adopted
//     model, each judged against the adopted gate: the bulk built-ins at
//     base seeds 1 and 1000 behind nowhere; D1–D64 at both seeds with no
//     more scenarios more than 2% behind and a mean at most 0.05 MB/s
//     lower; the sized D families at base seed 1 with fewer scenarios
//     behind in all; the kinds built-ins with no quiet-trap move, no more
//     onoff scenarios worse than static, rr and rate ratios at most 0.05
//     higher. Of those passing, the one with fewer sized scenarios behind,
//     then the higher D1–D64 mean, is adopted, and the held-out families
//     are then run at base seed 9500, unused. The 20-vote gate's D1–D64
//     and built-in figures were measured before (the stricter gate behind
//     distress, above); what is new is the sized families and this rule.
//     Measured (adopted model; -repeats 2): 16 votes, D1–D64 22.71 and
//     22.72 MB/s behind in D40 and D51 at both seeds, the bulk built-ins
//     behind nowhere, the sized families behind in D6x3-11, D6x3-44 and
//     D16x3-11, kinds rr 0.09×, rate 0.49×, onoff none worse than static,
//     no quiet-trap move. 20 votes: D1–D64 22.70 and 22.75, behind in D40
//     and D51; bulk built-ins behind nowhere; the sized families behind in
//     D6x3-11 and D6x3-44 only (D16x3-11 level: one repeat of two stays);
//     rr 0.09×, rate 0.46×, onoff none worse, no quiet-trap move. It
//     passes. 21 votes: D1–D64 22.58 and 22.62, behind in seven at each
//     seed (D17, D18, D22, D37, D64 new), the sized families in six and five:
//     half a second more and the move of a full-rate crowd comes after its
//     collapse. 20 votes is adopted (models/gate-testbed.json, recorded in
//     the committed model by proflow gate; same weights). D6x3-11 stays
//     behind: the move comes at 50.0 s, the sample before the elephant's
//     burst ends, 10 s after it arrived; D6x3-44's one host is left at
//     10 s where 42 s would be safe. The gate counts intervals, not how
//     fast the crowd drains the reserve; that is the Q-network's to learn.
//     Looked at: the bulk and kinds built-ins, D1–D64 and the sized D
//     families, all development data, and the bound on the three sized D
//     scenarios. The held-out families at base seed 9500 were run after
//     the adoption, with the 16-vote gate beside them as a measurement
//     (docs/reproduction.md): the same scenarios behind under both, rate
//     flows 0.53× against 0.49×; nothing was changed after them.
//   - The reserve deficit as an input of the universal model (session 19,
//     after the entry above). Every loss the bound reads on the sized
//     families is the agent's (H6x3-18: staying through a 6 s burst of two
//     full-rate hosts is free, the next burst 25 s later collapses the
//     flow, and the agent leaves only after that collapse, where a move
//     between the bursts is level with crowd: proflow bound -profile
//     testbed-6x3 -scenarios H6x3-18 -twins end,freeze -at 1s,…,5s
//     -repeats 2 -seed 9500, 0.0%; an analysis of the held-out family
//     read after the gate's adoption, which, with H15's move onto an
//     elephant's switch, is part of why this trial was run: a disclosure,
//     since no setting below was taken from it and no model from it was
//     adopted). With the
//     development scenarios above they ask one thing of the state: how
//     much of each switch's reserve is gone. It says how long the flow can
//     wait beside a crowd (10 s beside an elephant, 42 s beside a lone
//     host), that a switch a crowd has just drained is no place to stay,
//     and that a switch an elephant has held for a minute is no
//     destination (D51, traces of base seed 1: while its votes count, the
//     empty switch leads the elephant's by a median 0.66 in one repeat and
//     0.03 in the other, where the elephant's is ahead by up to 0.47 in
//     some steps and the flow went there). Layout v3's
//     reserve deficit is that signal; it was tried (above, "The reserve
//     deficit") on a corpus with L_BRIEF added, before the distress gate
//     and 20 votes, never on the committed recipe alone.
//     The rule, written before the run: make model with
//     MODEL_LAYOUT=proflow-state-v3, everything else the committed recipe
//     (shares, kinds, train config and reward, MODEL_SEED 1), behind
//     models/gate-testbed.json, judged against the adopted model by the
//     gate entry's rule (bulk built-ins at base seeds 1 and 1000 behind
//     nowhere; D1–D64 at both seeds with no more scenarios more than 2%
//     behind and a mean at most 0.05 MB/s lower; the sized D families at
//     base seed 1 with fewer behind in all; kinds with no quiet-trap move,
//     no more onoff scenarios worse than static, rr and rate ratios at most
//     0.05 higher) and the 24 S6 rolling files level at base seeds 1 and
//     1000. The fit itself is the candidate: if it passes it is adopted as
//     it is, and the held-out families are run at base seed 9600, unused.
//     Measured (make model printed collect 45 s, train 553 s, total 598 s
//     on 2 CPUs; -repeats 2): D1–D64 22.71 and 22.72 MB/s, more than 2%
//     behind in three and four (D5, D10, D34, and D55 at base seed 1000;
//     D40 and D51 no longer); the bulk built-ins behind in S6 at both
//     seeds (and V6); the 24 S6 rolling files behind in 12 at both seeds,
//     0.98×; the sized D families behind in four and two (D6x3-11, -44,
//     -55, -62; D16x3-11, -57); rr 0.13×, rate 0.54×, onoff none worse, no
//     quiet-trap move. It does not pass; the adopted model stays. As in
//     the first v3 trial, the rolling crowd of S6 is what the deficit
//     costs: a switch the crowd has just left reads drained, so the flow
//     no longer goes back to it (S6-1234, base seed 1: agg2, then agg3,
//     agg4 and agg1, each just before the crowd, four moves where the
//     adopted model makes two, agg2 and back to agg1).
//   - The rolling-crowd recipe behind 20 votes (session 19, after the
//     entry above). The N_ROLLING ensemble (session 17) passed every
//     development check at the paper's size and failed the sized families
//     by D6x3-16 (2.1%) and D16x3-57 (3.2%), the latter a move at 68 s,
//     8 s after an elephant's 10 s burst arrived, which 20 votes no longer
//     make. An ensemble is not one network (three fits side by side cost
//     three times a decision), so the candidate here is one fit. The rule,
//     written before the run: make model with MODEL_LAYOUT
//     proflow-state-v4 and models/shares-testbed.json plus N_ROLLING 0.08,
//     MODEL_SEED 1, behind models/gate-testbed.json, judged by the rule of
//     the v3 entry above (the gate entry's rule and the 24 S6 files); the
//     fit itself is the candidate, adopted as it is if it passes, and the
//     held-out families are then run at base seed 9600, unused.
//     Measured (make model printed collect 50 s, train 551 s, total 601 s
//     on 2 CPUs; -repeats 2): the 24 S6 rolling files 1.01× at both seeds,
//     behind in none; the bulk built-ins behind nowhere at either seed;
//     D1–D64 22.76 and 22.71 MB/s, more than 2% behind in one (D55) and
//     three (D9, D22, D55) against the adopted model's two and two; the
//     sized D families behind in two (D6x3-11, -16) and three (D16x3-3,
//     -41, -57) against two and none; rr 0.08×, rate 0.52× (0.46×), onoff
//     none worse, no quiet-trap move. It does not pass (D1–D64 at base
//     seed 1000, the sized families, rate); the adopted model stays and
//     base seed 9600 is still unused. D16x3-57 is behind again as
//     D6x3-11 is behind the adopted model: the move comes at 50.0 s, the
//     last sample of the elephant's 10 s burst, when the 20th vote lands.
//   - The reserve deficit with rolling crowds (session 19, after the two
//     entries above). Layout v3 lost S6 because a switch a crowd has just
//     left reads drained and the fit stopped going back to it; N_ROLLING
//     is the corpus strategy in which that switch is the right
//     destination. The rule, written before the run: make model with
//     MODEL_LAYOUT proflow-state-v3 and models/shares-testbed.json plus
//     N_ROLLING 0.08, MODEL_SEED 1, behind models/gate-testbed.json,
//     judged by the rule of the v3 entry; the fit itself is the
//     candidate, and the held-out families are then run at base seed
//     9600, unused.
//     Measured (make model printed collect 45 s, train 588 s, total 633 s
//     on 2 CPUs; -repeats 2): D1–D64 22.83 and 22.83 MB/s, the highest of
//     any candidate, more than 2% behind in two at each seed (D5, D34;
//     D40 and D51 no longer); but the 24 S6 rolling files 0.98× at both
//     seeds, 12 behind, and S6 and V6 behind among the built-ins, as
//     layout v3 without N_ROLLING; the sized D families behind in three
//     (D6x3-11, -44, -62) and one (D16x3-57) against two and none; rr
//     0.09×, rate 0.53×, onoff 2 of 14 worse than static. It does not
//     pass; the adopted model stays and base seed 9600 is still unused.
//     N_ROLLING's 8% of the corpus does not undo what the deficit teaches
//     about a switch a crowd has just left.
//   - Deficit and vacated flows together (telemetry.StateLayoutV5,
//     session 20). In both v3 fits a switch a crowd has just left read
//     drained and the flow stopped going back to it (S6), while the
//     deficit fixed D40 and D51 and, with N_ROLLING, gave the highest
//     D1–D64 mean of any candidate; v4's vacated flows, the one feature
//     that tells a switch a crowd has left from one it is about to reach,
//     kept S6 level in every v4 fit that passed S6. No single feature of
//     v3 tells a switch whose crowd has moved on (drained, but nothing
//     left to drain it) from one a burst has drained and will drain again
//     (the flow's own switch between bursts); v5 carries both. The rule,
//     written before the run: make model with MODEL_LAYOUT
//     proflow-state-v5 and models/shares-testbed.json plus N_ROLLING
//     0.08, MODEL_SEED 1, the adopted recipe otherwise, behind
//     models/gate-testbed.json, judged by the rule of the v3 entry above
//     (the gate entry's rule and the 24 S6 rolling files level at base
//     seeds 1 and 1000), the S6 files run first; the fit itself is the
//     candidate, adopted as it is if it passes, and the held-out
//     families are then run at base seed 9600, unused.
//     Measured (make model printed collect 47 s, train 568 s, total 615 s
//     on 2 CPUs; -repeats 2): the 24 S6 rolling files 1.01× at both
//     seeds, behind in none, so the vacated flows undo what the deficit
//     did to S6; the bulk built-ins behind nowhere at either seed; but
//     D1–D64 22.72 and 22.71 MB/s, more than 2% behind in three (D10 by
//     14%, static best; D38, D55) and four (D9, D10, D38 by 2.0%, D55)
//     against the adopted model's two and two; the sized D families
//     behind in five (D6x3-7, -11, -44; D16x3-11, -57) against two; rr
//     0.09×, rate 0.49×, onoff one scenario worse than static (O10, a
//     second). It does not pass; the adopted model stays and base seed
//     9600 is still unused. D40 and D51 are level, as in both v3 fits:
//     the deficit answers them; what comes behind instead (D10, D55, the
//     sized families' brief bursts) are moves where staying is best.
//   - The rolling-crowd ensemble behind 20 votes (session 20). Every mean
//     of three fits logged here was behind in none of D1–D64 at one base
//     seed or both, where single fits are behind in one to four; the
//     N_ROLLING ensemble (session 17, behind 16 votes) was level on every
//     development check at the paper's size, S6's 24 files included, and
//     lost the sized families by D6x3-16 (2.1%) and D16x3-57, a move 8 s
//     into a 10 s burst that 20 votes no longer make. The rule, written
//     before the second and third fits were made: the mean Q of three fits
//     of make model with MODEL_LAYOUT proflow-state-v4 and
//     models/shares-testbed.json plus N_ROLLING 0.08 (MODEL_SEED 1, the
//     session-19 fit above, then 2 and 3), as one network whose hidden
//     layers lie side by side (exactly the mean), behind
//     models/gate-testbed.json, judged against the adopted model behind
//     the same gate by the ensemble's rule: the bulk built-ins at base
//     seeds 1 and 1000 behind nowhere; D1–D64 at both seeds with fewer
//     scenarios more than 2% behind, or as many and a higher mean; the
//     sized D families at base seed 1 with no more scenarios behind; the
//     kind built-ins with no quiet-trap move, no more onoff scenarios worse
//     than static, rr and rate ratios at most 0.05 higher; the 24 S6
//     rolling files behind nowhere at base seeds 1 and 1000. Three networks
//     cost three times issue 23's decision (three times the 2.2 µs
//     measured, an estimate not benchmarked, against its 5 µs target), so if it passes, one 128-wide network distilled from it
//     (proflow distill on the three fits' corpora) must pass the same rule
//     before it is adopted, and the held-out families are then run with
//     that network at base seed 9600, unused.
//     Measured (make model printed train 517 s and 595 s for MODEL_SEED 2
//     and 3; the three merged by a dev tool that checks the merged
//     network's Q against the mean of the three on sample rows;
//     -repeats 2): D1–D64 22.74 and 22.76 MB/s, more than 2% behind in
//     one at each seed (D55, crowd best, 4.3% and 4.8%) against the
//     adopted model's two and two; the bulk built-ins behind nowhere at
//     either seed; the 24 S6 rolling files behind in none at both seeds;
//     rr 0.09×, rate 0.47×, no quiet-trap move; but the sized D families
//     behind in four (D6x3-11 and -16, D16x3-41 and -57) against the
//     adopted model's two, and onoff three scenarios a second worse than
//     static (O1, O9, O10) against none. It does not pass; the adopted
//     model stays, no distillation was run and base seed 9600 is still
//     unused. D16x3-57 is behind at 20 votes too (static best): 20 votes
//     did not take the move out of the ensemble's brief burst, as they
//     took it out of the adopted model's D16x3-11.
//     Each fit on its own, judged the same way afterwards (a
//     measurement, no choice): behind in D1–D64 at base seeds 1 and 1000
//     in one and three (MODEL_SEED 1), one and two (2), one and one (3);
//     the sized D families in five, four and six; onoff scenarios worse
//     than static in none, five and seven; the 24 S6 files level for all
//     three; rate 0.52×, 0.47×, 0.47×. D55 (crowd best, 3.9–4.8%) is
//     behind for every fit and the mean, and D6x3-11 and D6x3-16 for
//     most: those are the recipe's. The on/off seconds are each fit's
//     draw (0 to 7 of 14), and the mean keeps some of them (3).
//   - A move timed to the reserve, behind a shorter gate (session 20).
//     M2 (the crowd and drain terms' δ read from the deficit,
//     RewardConfig.DeficitDrain) timed its move to the reserve (fans
//     1.5–3.3%) but came late behind 16 votes and moved on noise behind
//     6; M10, the same reward fitted with decision lag 5 behind 6 votes,
//     was behind the best rule on the built-ins only in S6 (layout v3's
//     loss) and N2. Both were run before the distress gate existed (which
//     now moves a collapsed flow within a second whatever the vote count)
//     and before D1–D64 and the sized families, and on layout v3. The
//     rule, written before the runs (a first version of it, the same
//     without lag 5, was written before a run that lost its model to a
//     missing output directory and printed no figure): two models trained
//     by proflow train -universal on the four corpora of the v5 fit above
//     (layout v5, N_ROLLING 0.08, MODEL_SEED 1; no new collection), seed
//     1, with models/train-testbed.json plus "deficit_drain": true: MD
//     behind models/gate-testbed.json, and ML, with "decision_lag": 5 as
//     well, behind the same gate with 6 votes (lag + 1); each judged by
//     the rule of the v3 entry (make model-judge: the gate entry's rule
//     and the 24 S6 files level); of those passing, the one with fewer
//     sized scenarios behind, then the higher D1–D64 mean; the fit itself
//     is the candidate, and the held-out families are then run at base
//     seed 9600, unused.
//     Measured (the two trained side by side, 16 min 15 s and 16 min 21 s on 2 CPUs;
//     make model-judge): MD behind 20 votes, D1–D64 22.29 and 22.29 MB/s,
//     behind in 16 and 14 (D5 by 15%, D34 by 17%); the bulk built-ins
//     behind in S5 (12%), S6 (21%) and C1 (and C2 at base seed 1000); all
//     24 S6 files behind; the sized D families in 15 and 9; rr 0.37×, rate
//     1.04×. As M2 behind 16 votes: a move timed to the reserve and then
//     held 10 s by the gate comes after the collapse. ML (lag 5, 6 votes),
//     D1–D64 22.87 and 22.86 MB/s, the highest mean of any candidate, but
//     behind in four at each seed (D5, D7, D34, D39, each by 3.2–3.6%);
//     the bulk built-ins behind in S5, S6, C1 and N2 at both seeds; 12 of
//     the 24 S6 files behind at each seed; the sized D families in nine
//     and six; rr 0.10×, rate 0.53×, onoff 1.05× with five scenarios
//     worse than static. Neither passes; the adopted model stays and base
//     seed 9600 is still unused. The lag with the deficit reward times
//     the move well on the development family's mean, as M10 did on the
//     built-ins, but the vacated flows did not bring S6 back under that
//     reward (they did under the adopted one, the v5 entry above), and it
//     moves beside brief and capped neighbours at every size.
//     Disclosure: before this rule was written, docs/heldout-family.md
//     (the descriptions of H1–H64, read once in session 16, disclosed
//     above) was searched for its burst lengths, to check a claim about
//     the generators; the rule took nothing from it (its reward and lag
//     are M2's and M10's, its corpora the v5 fit's).
//   - The decision lag with the adopted reward (session 20, after the
//     entry above). With the adopted reward, layout v5 kept S6 level (the
//     v5 entry); with the deficit reward, lag 5 timed the move best on
//     D1–D64's mean but lost S6 (ML). The rule, written before the run:
//     ML2, proflow train -universal on the same four v5 corpora with
//     models/train-testbed.json plus "decision_lag": 5 (the adopted
//     reward, no deficit_drain), seed 1, behind models/gate-testbed.json
//     with 6 votes, judged by the rule of the v3 entry (make
//     model-judge); the fit itself is the candidate, and the held-out
//     families are then run at base seed 9600, unused.
//     Measured (train 540 s on 2 CPUs; make model-judge): D1–D64 22.71
//     and 22.71 MB/s, behind in ten and eleven (D42 by 11%, D51 by 8%,
//     most of the rest by 3.2–3.5%); the bulk built-ins behind in S5, S6,
//     N2 and all five S12 variants (to 20%); 12 of the 24 S6 files; the
//     sized D families in eleven and seven; rr 0.12×, rate 0.46×, onoff
//     1.07× with eleven of 14 worse than static and 1.25 moves an episode
//     in its quiet traps. It does not pass; the adopted model stays and
//     base seed 9600 is still unused. Without the deficit reward the lag
//     loses what ML kept (the destination traps of S12) and S6 as well:
//     both lagged fits lose about 3.3% in many scenarios where the best
//     rule stays or moves on arrival, and neither brought the S6 files
//     back, so the lag, not the reward, is what costs S6 here.
//     The traces of that 3.3% (proflow evaluate -scenarios D7,D39,D14,
//     2 repeats, base seed 1, an analysis after the choice): ML2 moves
//     3.0 s after congestion starts in D7 and D39, where no rule moves
//     and static is best, the earliest its 6 votes allow, and pays 9 s of
//     recovery; in D14 it moves at 3.0 s to the wrong switch and again at
//     18 s. The adopted model stays in D7 and D39 and moves D14 once, at
//     10 s. A lagged fit reads any congestion's start as a reason to
//     leave: its margin clears δ from the first sample.
//   - The mean of three v5 fits (session 20, after the entries above).
//     The v5 fit with N_ROLLING kept S6 level and fixed D40 and D51 and
//     lost elsewhere by scenarios that single fits differ in; every mean
//     of three fits so far removed most of its fits' D1–D64 losses. The
//     rule, written before the second and third fits were made: the mean
//     Q of make model with MODEL_LAYOUT proflow-state-v5 and
//     models/shares-testbed.json plus N_ROLLING 0.08 at MODEL_SEED 1 (the
//     v5 fit above), 2 and 3, as one network whose hidden layers lie side
//     by side, behind models/gate-testbed.json, judged by the ensemble
//     rule of the rolling-crowd ensemble entry above (make model-judge);
//     if it passes, a 128-wide student distilled from it must pass the
//     same rule before it is adopted, and the held-out families are then
//     run with the student at base seed 9600, unused.
//     Measured (make model printed train 489 s and 506 s for MODEL_SEED 2
//     and 3; make model-judge): D1–D64 22.81 and 22.80 MB/s, behind only
//     in D10 at each seed (11% and 13%, static best) against the adopted
//     model's two and two; the bulk built-ins and the 24 S6 files behind
//     nowhere at both seeds (S6 files 22.04 MB/s, the adopted model
//     21.84); rr 0.10×, rate 0.47×, no quiet-trap move; but the sized D
//     families behind in four (D6x3-11, -44, -54; D16x3-57) against two,
//     and onoff 1.01× with five scenarios a second worse than static (O1,
//     O2, O6, O9, O10) against none. It does not pass; no student was
//     distilled and base seed 9600 is still unused. It is the best
//     candidate at the paper's size so far (one scenario behind, S6
//     ahead of the adopted model); what it loses are the sized families'
//     brief bursts and the on/off second, as every N_ROLLING recipe.
//   - A pessimistic ensemble (session 21). Every mean of three fits
//     removed most of its fits' D1–D64 losses but kept moves that one fit
//     makes beside a brief neighbour or an on/off flow (the sized
//     families' brief bursts, the on/off second): a mean moves when the
//     fits prefer the move on average, so one fit's confident move can
//     carry it. Offline Q-learning overrates actions its data covers
//     thinly, and a move beside a crowd that may leave is one; the usual
//     remedy is pessimism over an ensemble. The candidate scores each
//     switch k by the least advantage any fit gives it over the current
//     switch k*, min_i (Q_i(k) − Q_i(k*)), so the gate's margin and votes
//     need every fit to prefer the move. It adds no setting: the gate is
//     models/gate-testbed.json and the fits exist. The same combination of
//     layout v2's three fits was measured before ("A move all three fits
//     agree on", above: as many behind as the adopted model, elsewhere);
//     this entry asks it of the v4 and v5 fits, whose means came closest
//     (a repetition the log could have spared: it was run before that
//     entry was reread). The rule, written
//     before the runs: two candidates, P5, the three v5 N_ROLLING fits of
//     the mean above (recovered from their merged network: each member's
//     weights exactly, its output bias the mean's, which no advantage
//     reads), and P4, the three v4 N_ROLLING fits of the rolling-crowd
//     ensemble entry; each behind models/gate-testbed.json, judged by the
//     ensemble rule of that entry (make model-judge); of those that pass,
//     the one with fewer sized scenarios behind, then the higher D1–D64
//     mean. A pass is then shipped as one model file the pure-Go agent
//     reads, its decision cost benchmarked against the 5 µs target, and
//     the held-out families are run with it at base seed 9600, unused.
//     Measured (make model-judge's script, mk/judge.sh, run with a
//     development binary that reads a folder of fits as this ensemble; 4
//     min for both on 2 CPUs): P5, D1–D64 22.61 and 22.61 MB/s, behind in
//     four and five (D10 by 14%, D37, D38, D55; D34 at base seed 1000),
//     the sized D families in five and two, onoff one scenario worse than
//     static (O10); P4, D1–D64 22.71 and 22.70, behind in one and two
//     (D55; D22), the sized D families in three and three, onoff none
//     worse, rate 0.52×. The bulk built-ins and the 24 S6 files are level
//     for both. Neither passes (the sized families: five and six behind
//     against the adopted model's two); the adopted model stays and base
//     seed 9600 is still unused. Pessimism makes the move later, not
//     rarer where it costs: where crowd or reactive is best the slowest
//     fit now sets the time (D6x3-4: a move at 39.5 s, the adopted
//     model's at 10 s), and D6x3-11's move into the end of a 10 s burst,
//     which every fit makes, stays (50.0 s).
//   - The objective as the reward (session 21). Every reward above is
//     Eq. 4's shaping plus proflow's own terms: the crowd penalty β (−2,
//     weighted by the drain), the drain κ, the destination terms μ4 and
//     μ5. They make the fit leave a crowd whether or not it would have
//     hurt the flow before it left, and the losses that every recipe
//     keeps are of that kind: the lone 6-stream host of D6x3-44 left at
//     10 s where 42 s were safe, moves beside brief neighbours at every
//     size, the on/off second. What the evaluation scores is the flow's
//     own service: its throughput, or its latency, or whether its own
//     demand was met. A fit whose reward is that alone has to learn from
//     the data when a crowd costs the flow anything, and with the reserve
//     deficit in the state (layout v5) it can tell how long that takes.
//     The rule, written before the runs: the four v5 corpora of the v5
//     fit above (make model's collection with MODEL_LAYOUT
//     proflow-state-v5, models/shares-testbed.json plus N_ROLLING 0.08,
//     MODEL_SEED 1, collected again: the collection is deterministic),
//     proflow train -universal seed 1 with models/train-testbed.json's
//     settings except the reward: every shaping weight 0 (alpha_tc,
//     alpha_stay, alpha_coll, beta, kappa, crowd_drain, mu1–mu5, nu1–nu3),
//     lambda 0.5 (a request/response flow's objective is its latency) and
//     served on (an application-limited sample met its demand), so the
//     real reward is φ_norm − λ·ℓ̂ and the synthetic one φ'_norm − λ·ℓ̂'.
//     Two discounts: O95, gamma 0.95 as now; O98, gamma 0.98 (a horizon
//     of 25 s, which a lone host's 42 s reserve still exceeds) with
//     target_update_period 125 so the longer horizon gets twice the
//     fitted-Q iterations. Each behind two gates: models/gate-testbed.json
//     (20 votes) and the same with 3 votes (the paper's count: a fit that
//     times its move itself needs no long confirmation; the distress rule
//     stays). Each of the four judged by the rule of the v3 entry above
//     (make model-judge); of those that pass, the one with fewer sized
//     scenarios behind, then the higher D1–D64 mean. The fit and gate
//     that pass are the candidate; the held-out families are then run
//     with it at base seed 9600, unused.
//     Measured (both trained side by side, 13 min 53 s and 13 min 57 s on
//     2 CPUs; mean Q 17.6 and 46.8; make model-judge for each of the
//     four): every one moves after the collapse, not before it. O95
//     behind 3 votes: S1, S5 and S11 left at 11, 17.5 and 12 s (the
//     adopted model at 10 s in each, before the 10.5 s collapse), moved
//     by the distress rule a sample after the flow collapsed; D1–D64
//     22.25 and 22.23 MB/s, 17 behind at each seed; the bulk built-ins
//     behind in 10 and 11, S6 by 22%; all 24 S6 files; the sized D
//     families in 16 and 14; rr 0.62×, rate 1.15× the best rule. Behind
//     20 votes, and O98 behind either gate, the same or worse (rate 1.22–
//     1.28×). None passes; the adopted model stays and base seed 9600 is
//     still unused. On this corpus a fit whose reward is the flow's own
//     service learns the reactive rule: the few seconds a move before
//     the collapse saves over one just after it are too small a
//     difference in its Q-values to clear the margin, and nothing in
//     that reward prices the crowd before the flow feels it. The crowd
//     term is what makes the agent proactive, as the paper's β = 0
//     ablation says.
//   - Acting on the first sample of a collapse (session 21). Traces of
//     static on S1, S5, S8 and S11 (base seed 1) and on D6x3-11 (testbed-6x3),
//     read through layout v5's reserve deficit (a development tool that
//     re-encodes the recorded observations): every crowd that stays
//     collapses the flow when the deficit reaches 0.84–0.85 (S1 between
//     10.0 and 10.5 s, S11 between 11.0 and 11.5 s, S5 at 17 s); D6x3-11's
//     elephant leaves when it has drained the deficit to 0.823, 10 s
//     after it arrived. At that sample S1 (10.0 s: deficit 0.821, the
//     switch sending 5.9 times the bucket rate, the flow whole) and
//     D6x3-11 (50.0 s: 0.823, 6.1 times, whole) read alike on the flow's
//     switch but for its flow-table entries (12 against 4), and the
//     congestion leaves show one sending host against five (a correction
//     after the runs below: this entry first said nothing told them
//     apart); at the next sample S1's flow is
//     already at 69% (16.3 MB/s, then 8.3 at 11.0 s) and D6x3-11's
//     elephant is gone. A move at the 20th vote, 10 s after a crowd
//     arrives, lands on that sample: right for S1, a needless reroute in
//     D6x3-11 (3.4%). One sample later is right for both (proflow
//     bound: S1's best single move is at 10.5 s, 1.8% worst case), but
//     the distress rule waits for two low samples (11.0 s in S1), which
//     is why 21 votes lost 0.6% on the built-ins (the gate entry above).
//     The two low samples are the throughput-drop rule's debounce,
//     calibrated so that a rule moving on them alone never fires on the
//     flow by itself; inside the gate a low sample only shortens the wait
//     for a move the Q-network already prefers by more than δ, so one is
//     enough there. The rule, written before the runs: the adopted model
//     behind models/gate-testbed.json with distress consecutive 1 and
//     votes 21 (G21) or 20 (G20), everything else the same; each judged
//     by the gate entry's rule (make model-judge: the bulk built-ins at
//     base seeds 1 and 1000 behind nowhere; D1–D64 at both seeds with no
//     more scenarios more than 2% behind and a mean at most 0.05 MB/s
//     lower; the sized D families with fewer behind in all; kinds with no
//     quiet-trap move, no more onoff scenarios worse than static, rr and
//     rate ratios at most 0.05 higher) and the 24 S6 rolling files level
//     at both seeds; of those that pass, G21 first (it is the schedule
//     the traces call for). The gate that passes is recorded in the model
//     (proflow gate), and the held-out families are run behind it at
//     base seed 9600, unused.
//     Measured (make model-judge's script, both runs within 6.5 min): G21,
//     D1–D64 22.61 and 22.66 MB/s, behind in six at each seed (D17, D18, D37,
//     D64 by 2.9–4.2%, besides D40 and D51), 2–5 of the 24 S6 files by
//     2.0–2.2%, the sized D families in six and five (D6x3-11 level, D6x3-44
//     not); G20, D1–D64 22.73 and 22.78 (the adopted gate 22.70 and 22.75),
//     behind in D40 and D51 as before, the sized families in D6x3-11 and
//     D6x3-44 as before; behind both gates the onoff flows of the quiet traps
//     are moved 6.0 times an episode (none behind the adopted gate), rr
//     0.09×, rate 0.48× and 0.46×. Neither passes; the adopted gate stays and
//     base seed 9600 is still unused. One low sample is not enough inside the
//     gate either: an on/off flow's first sample of an idle gap is low and
//     less than half application-limited, and the Q-network prefers some
//     other switch by more than δ there, which the votes filter and a
//     one-sample distress does not. And half a second more than 20 votes
//     still costs the full-rate crowds of D17, D18, D37 and D64 what 21 votes
//     cost them before.
//   - The drain term after distress (session 21). κ = 0.7 was chosen
//     (the drain term's entry above) when the κ = 0 model left S11 at
//     18.8 s, 7 s after its collapse, and S5 and S8 after theirs: a
//     collapsed flow then waited for the gate's votes. The distress rule
//     added since moves a collapsed flow within a second, and proflow
//     bound reads S11's best single move at 11.5 s, after its collapse
//     (0.0% worst case over its twins). The drain term charges staying
//     beside a lone elephant as it charges a crowd (−0.7 a step at any
//     load of twice the bucket rate or more, where the crowd term charges
//     D6x3-11's elephant of 4 flow-table entries −0.33 and S1's crowd of
//     12 −1.7; proflow trace on both, docs/reproduction.md), and the
//     sized families' moves into the end of a brief elephant burst (D6x3-11,
//     D16x3-57) and beside a lone host (D6x3-44) are what the adopted
//     model keeps losing. The rule, written before the run: make model
//     with models/train-testbed.json plus "kappa": 0, everything else the
//     adopted recipe (layout v2, models/shares-testbed.json, MODEL_SEED 1:
//     the adopted model's own corpora), behind models/gate-testbed.json,
//     judged by the rule of the v3 entry above (make model-judge); the fit
//     itself is the candidate, and the held-out families are then run
//     with it at base seed 9600, unused.
//     Measured (make model printed collect 43 s, train 431 s, total 474
//     s on 2 CPUs; make model-judge): D6x3-11, D6x3-44 and D16x3-57 are no
//     longer moved (the flow stays beside the brief elephant and the lone
//     host), but every crowd is now left after its collapse: S5, S8 and
//     S11 at 17.5, 11.75 and 12 s (the adopted model at 10 s in each),
//     by the distress rule; D1–D64 22.48 and 22.48 MB/s, behind in eight
//     at each seed (D2, D14, D22, D37, D38, D55 new); the bulk built-ins
//     behind in S5, S12b and S12d at both seeds; the sized D families in
//     ten and three; rr 0.26×, rate 0.59×, onoff none worse, no
//     quiet-trap move; the 24 S6 files level. It does not pass; the
//     adopted model stays and base seed 9600 is still unused. Behind the
//     distress rule the collapse still costs: the development scenarios
//     now behind are moves 1–11 s later than the adopted model's 10 s
//     (D37 at 11 s, D55 at 14 s, D38 at 17.5 s, D14 at 20.75 s), 3.3–5.1%
//     behind the best rule, and the drain term, not the crowd term, is
//     what puts the move before the collapse.
//   - The fit without the drain term behind fewer votes (session 21,
//     after the entry above). proflow trace on that fit (base seed 1, one
//     repeat; development scenarios): its Q-network votes beside a crowd
//     from its arrival (S1 at 0.5 s) or a few seconds in (D37 at 5.5 s,
//     D55 at 6.5 s) and never beside D6x3-11's brief elephant or D6x3-44's
//     lone host; behind 20 votes its moves come after the collapse (D37
//     first low sample 10.5 s, moved 11 s). A shorter count would move
//     those crowds before it and still leave the elephant and the host
//     alone. The rule, written before the runs: that fit (build of the
//     entry above, no new training) behind models/gate-testbed.json with
//     votes 8, 10 or 12, everything else the same, each judged by the
//     rule of the v3 entry (make model-judge); of those that pass, the
//     one with fewer sized scenarios behind, then the higher D1–D64 mean;
//     it is then adopted with its gate recorded (proflow gate), and the
//     held-out families are run at base seed 9600, unused.
//     Measured (make model-judge's script, 2 min each): behind 8, 10 and
//     12 votes D1–D64 22.51–22.54 MB/s, behind in five or six at each seed
//     (D10, D14, D22, D37, D51, and D2 or D55); the bulk built-ins behind
//     in S5, S12b, S12d and now N2 (its 6 s visit moved for) at both
//     seeds; the sized D families in nine to eleven; rr 0.23–0.26×, rate
//     0.53–0.59×; onoff eight scenarios worse than static behind 8 and 10
//     votes. None passes; the adopted model and gate stay and base seed
//     9600 is still unused. A shorter count does not bring D37 back
//     (2.5–5.1% behind at every count), moves for N2's brief visit, and
//     leaves what the drain term's absence costs elsewhere (S5, the S12
//     destination traps, D14, D22).
//   - Destinations ordered by congestion (TrainConfig.Monotone, session
//     23). In D51 (base seed 1, repeat 1; a development scenario) the
//     committed model's scores at 9.5 s were 19.11 for agg1 (a crowd of
//     four entries at 2.3 times the bucket rate), 18.96 for agg2 (empty),
//     18.73 for agg4 (the elephant's switch, its reserve drained) and
//     17.84 for the flow's agg3: the empty switch is not the first choice,
//     and its score relative to the others rises when its own transmit
//     rate and flow count are raised in the candidate row (agg2 at 0.9 of
//     the bucket rate and 4 entries: 15.83 against agg1's 14.81). The gate
//     then took agg4, and the flow collapsed there for 15 s. Raising a
//     destination's own congestion never makes it a better place to land;
//     the penalty asks the fit to respect that order, and nothing else:
//     when to move stays the rewards'. The rule, written before the run:
//     make model with models/train-testbed.json plus "monotone": 1, every
//     other setting the committed recipe (layout v2, models/shares-
//     testbed.json, MODEL_SEED 1), behind models/gate-testbed.json, judged
//     by the rule of the v3 entry above (make model-judge); the fit itself
//     is the candidate, and the held-out families are then run with it at
//     base seed 9600, unused.
//     Measured (make model printed collect 43 s, train 790 s, total 833
//     s on 2 CPUs: the penalty's second pass over each minibatch; make
//     model-judge): in D51's state above the empty switch now leads (18.90
//     against 18.31 for the elephant's and 18.25 for the crowd's), and D51
//     is level at both seeds; D1–D64 22.76 and 22.83 MB/s (the adopted
//     model 22.70 and 22.75), more than 2% behind in D22 (2.5%) and D40 at
//     base seed 1 and in D40 at 1000; the bulk built-ins behind nowhere at
//     either seed; the 24 S6 files 21.91 and 21.93 MB/s, behind in none;
//     but the sized D families behind in five (D6x3-4, -11, -16, -44, -54)
//     and three (D16x3-11, -13, -57) against two and none, and onoff flows
//     a second worse than static in O1, O9 and O10; rr 0.09×, rate 0.46×,
//     no quiet-trap move. It does not pass (the sized families, onoff);
//     the adopted model stays and base seed 9600 is still unused. The
//     destinations it was for are mended; what it loses is timing —
//     D16x3-11 moved where staying was best, D6x3-4 and -54 3.6% and 4.9%
//     behind — the same brief crowds the drain term's entries above
//     describe.
//   - Destinations on the Pareto front (GateConfig.Pareto, session 23,
//     after the entry above). The penalty mended D51's destination but
//     came with a new fit's timing. The order it asks for can be kept
//     without a new fit: the gate considers only destinations that no
//     other switch beats on every congestion measure at once (the flow's
//     own switch aside; Decision.Dominated), so a move never goes to a
//     switch another is cleaner than on transmit rate, overflow, flow
//     count, elephant rate and backlog together, and the committed
//     network's timing is untouched wherever its best destination is not
//     dominated. It holds no threshold: it compares switches with each
//     other. The rule, written before the run: the committed model
//     behind models/gate-testbed.json plus "pareto": true, judged against
//     the adopted gate by the rule of the v3 entry above (make
//     model-judge: the bulk built-ins at base seeds 1 and 1000 behind
//     nowhere; D1–D64 at both seeds with no more scenarios more than 2%
//     behind and a mean at most 0.05 MB/s lower; the sized D families at
//     base seed 1 with no more behind; kinds with no quiet-trap move, no
//     more onoff scenarios worse than static, rr and rate ratios at most
//     0.05 higher; the 24 S6 files level at base seeds 1 and 1000); if it
//     passes, the gate is adopted (models/gate-testbed.json, recorded in
//     the model by proflow gate), and the held-out families are then run
//     with it at base seed 9600, unused.
//     Measured (make model-judge, 2 min): D1–D64 22.76 and 22.76 MB/s,
//     behind in D40 alone at each seed (D51 level); the 24 S6 files level;
//     the sized D families as the adopted gate (D6x3-11, -44); onoff none
//     worse, no quiet-trap move; but the bulk built-ins behind in S12b and
//     S12d at both seeds (4.1–4.6%), rr 0.14× and rate 0.51× (0.09× and
//     0.46× behind the adopted gate). It does not pass. The trace of S12b
//     (base seed 1) says why: its two capped hosts' switches, agg2 and
//     agg4, read alike, each a few bytes a second under the other in turn,
//     so the one that led was dominated at the next sample; the vote
//     streak restarted at every swap (agg4, agg2, agg4, …) and the flow
//     left only in distress, at 14 s, collapsed. A near-tie is what the
//     gate's tolerance is for, and the first rule let Pareto override it.
//   - The Pareto front for the leader only (session 23, after the entry
//     above). The rule, written before the run: as the entry above, but
//     a destination Decision.Dominated marks may not become the
//     candidate, while a candidate already counted stays one through a
//     near-tie (Tolerance) as in the adopted gate, dominated or not; the
//     same judgement, adopted and then run on the held-out families at
//     base seed 9600 if it passes.
//     Measured (make model-judge, 2 min): D1–D64 22.79 and 22.77 MB/s
//     (the adopted gate 22.70 and 22.75), more than 2% behind in D40 alone
//     at each seed (D51 level at both); the bulk built-ins behind nowhere
//     at either seed (S12b and S12d level again); the 24 S6 files level,
//     21.84 and 21.83 MB/s as before; the sized D families as before
//     (D6x3-11, -44; none at 16x3); rr 0.09×, rate 0.46×, onoff none
//     worse, no quiet-trap move, as before. It passes and is adopted:
//     models/gate-testbed.json has "pareto": true and the committed model
//     records it (proflow gate). D40, a move where staying is best, is
//     the development family's one loss left; a destination rule cannot
//     reach it.
//     The held-out families were then run with it at base seed 9600 (an
//     analysis after the choice, docs/reproduction.md): H1–H64 1.02×
//     [1.01×, 1.04×] the per-scenario best rule, better or level in 61,
//     more than 2% behind in six (H22, H30, H34, H49, H52, H63), H15 now
//     33% ahead; the sized families behind in the same five as at base
//     seeds 9200–9500; rr 0.10×, rate 0.54×, onoff 1.00×. Base seed 9700
//     is the next unused one.
//   - Moves while a crowd loads the fabric elsewhere (strategy G_ASIDE,
//     session 23, after the entries above). D40 is the development
//     family's one loss behind the Pareto gate: an elephant in 15 s bursts
//     on agg1 and a capped host on the flow's agg4, where staying is best;
//     the agent votes from 0.5 s and moves at 10 s. Probing its state at
//     5 s (base seed 1; the committed network on the trace's states with
//     one input changed): with the congestion leaves' features zeroed the
//     flow's own switch leads by 1.8, with the flow's switch read as the
//     flow alone (2 entries, 0.95 of the bucket rate) agg2 still leads by
//     1.06. The network reads traffic from the congestion leaves as a
//     crowd about to arrive, wherever it goes: the D strategies move
//     such a crowd onto the flow's switch in every episode, and in G_CLEAN,
//     where it never comes, the flow never moves, so the cost of moving
//     there is extrapolated. The rule, written before the run: make model
//     with models/shares-testbed.json plus G_ASIDE 0.06, every other
//     setting the committed recipe (layout v2, models/train-testbed.json,
//     MODEL_SEED 1), behind models/gate-testbed.json (with Pareto),
//     judged against the adopted model and gate by the rule of the v3
//     entry above (make model-judge; the reference is the Pareto gate's
//     run: D1–D64 22.79 and 22.77 MB/s, behind in D40; the sized families
//     behind in two and none; rr 0.09×, rate 0.46×); the fit itself is
//     the candidate, and the held-out families are then run with it at
//     base seed 9700, unused.
//     Measured (make model printed collect 44 s, train 420 s, total 464
//     s on 2 CPUs; make model-judge): D40 is level at both seeds, though
//     in its state at 5 s agg2 still leads the flow's switch by 1.0; but
//     D1–D64 22.73 and 22.73 MB/s, behind in D55 (4.3%) at base seed 1
//     and in D22, D37 and D55 at 1000; the bulk built-ins behind in S12d
//     (2.1%) at base seed 1000; the 24 S6 files level; the sized D
//     families behind in five (D6x3-11, -31, -42, -44, -54) and two
//     (D16x3-21, -57); rr 0.09×, rate 0.46×; onoff a second worse than
//     static in O1, O9 and O10, no quiet-trap move. It does not pass; the
//     adopted model stays and base seed 9700 is still unused. As with
//     every single fit above, the moves one corpus change mends are paid
//     for by others that its draw makes.
//   - Bellman targets over the gate's destinations (TrainConfig.
//     ParetoTargets, session 23, after the entries above). The adopted
//     gate never moves the flow to a dominated destination, but the fit's
//     target r + γ·max_k Q(s', k) still takes the maximum over every
//     switch, and D51's probe shows dominated switches scoring above the
//     empty one: the value of what comes next is that of moves the
//     controller never makes. The rule, written before the run: make
//     model with models/train-testbed.json plus "pareto_targets": true
//     (the maximum over the current switch and the destinations no other
//     switch beats on every one of the next state's transmit rate,
//     overflow, flow count, elephant rate and backlog features), every
//     other setting the committed recipe (layout v2, models/shares-
//     testbed.json, MODEL_SEED 1), behind models/gate-testbed.json,
//     judged against the adopted model and gate by the rule of the
//     G_ASIDE entry above (make model-judge); the fit itself is the
//     candidate, and the held-out families are then run with it at base
//     seed 9700, unused.
//     Measured (make model printed collect 42 s, train 418 s, total 460
//     s on 2 CPUs; make model-judge): D1–D64 22.74 and 22.75 MB/s, behind
//     in D2, D38 and D40 at base seed 1 and in D38 and D40 at 1000; the
//     bulk built-ins behind in S12d (2.3%) at base seed 1; the 24 S6 files
//     level; the sized D families behind in three (D6x3-4, -11, -44) and
//     two (D16x3-11, -57); rr 0.08×, rate 0.46×; onoff a second worse than
//     static in O1, O9 and O10, no quiet-trap move. It does not pass; the
//     adopted model stays and base seed 9700 is still unused.
//   - How much of a fit is the machine's (session 24, a measurement, not
//     a choice; no held-out family was run). Three fits of the committed
//     recipe with MODEL_SEED 1, judged like the candidates above (make
//     model-judge behind models/gate-testbed.json):
//     the committed fit (trained at f439b7b on an earlier session's
//     machine): D1–D64 22.79 and 22.77 MB/s, behind in D40; the bulk
//     built-ins nowhere; the sized D families behind in D6x3-11 and -44;
//     no on/off scenario worse than static.
//     The same code and corpora on this session's machine (make model at
//     f439b7b; its corpus summaries equal the committed model's): D1–D64
//     22.74 and 22.73, behind in D40 and, at base seed 1000, D37; the
//     bulk built-ins behind in S12b and S12d (4.1–4.6%) at both seeds;
//     the sized families behind in D6x3-4, -11, -16, -44 and D16x3-57;
//     on/off O1, O2, O4, O6, O9 and O10 a second worse than static.
//     The current code (43c5cb0) on this machine, whose corpora differ in
//     6 of 2,200 episodes through the baseline fix of d0b3e11: D1–D64
//     22.79 and 22.79, behind nowhere; the bulk built-ins behind in S12d
//     (2.3%) at base seed 1; the sized families behind in D6x3-11, -16,
//     -55 and D16x3-57; on/off O1, O2, O9 and O10 worse. The trainer did
//     not change between the two commits (43c5cb0's on f439b7b's corpora
//     repeats f439b7b's run), and two runs on one machine agree bit for
//     bit: what separates the three fits is the corpora's six episodes
//     and the CPU libtorch sums on (models/README.md, "Reproducing the
//     committed weights").
//     What it says about the choices above: the spread between fits of
//     one recipe is as large as every candidate's measured effect. The
//     candidates of sessions 22 and 23 (Monotone, G_ASIDE,
//     ParetoTargets) were trained with the current code and judged
//     against the committed fit; their on/off losses (O1, O9, O10) and
//     part of their sized-family losses appear in the current code's
//     plain refit too, so they are the refit's, not the candidates'.
//     Against that refit every one of them is still worse on D1–D64 (it
//     is behind nowhere there), so no verdict changes. A candidate judged
//     from now on is judged against a refit of the adopted recipe made
//     with the same code on the same machine, and where one fit's margin
//     decides, against more than one fit of each.
//     The held-out families read with the two other fits afterwards (an
//     analysis after every choice, base seed 9600 as the committed
//     model's published figures; docs/reproduction.md): every fit is
//     more than 2% behind in the same six of H1–H64 (H22, H30, H34, H49,
//     H52, H63), the two others in H9 and H38 beside them, and in H6x3-18,
//     H6x3-25, H16x3-17 and H16x3-61. The held-out losses are the
//     recipe's, not one fit's draw; what the fits' draws change is the
//     development checks and the kind ratios (rate 0.54× to 0.60×).
//   - A second development family (session 24, E1–E64 and E<S>x<L>-1 …
//     -64; southbound/sim, "Development family"). Every choice since
//     session 14 was judged on D1–D64, and the committed model is behind
//     in one of them (D40) where it is behind in six of H1–H64: a model
//     chosen on 64 draws can fit them. E1–E64 is the same design from a
//     third seed, made after every choice above, looked at first by this
//     measurement (proflow evaluate -scenarios dev2, the deployable rules
//     and the agent, 2 repeats): the committed model behind
//     models/gate-testbed.json is more than 2% behind in five of E1–E64 at
//     base seeds 1 and 1000 alike (E10, E25, E39, E42, E50), the
//     f439b7b rebuild in three and four, the current code's refit in five
//     and six; every fit in E10, E42 and E50. At 6x3 (base seed 1) the
//     committed model is behind in five (E6x3-3, -10, -20, -30, -55),
//     at 16x3 in three (E16x3-26, -31, -51). So the development checks had
//     stopped telling a better recipe from one fitted to D1–D64; from now
//     on mk/judge.sh reports E1–E64 at base seeds 1 and 1000 beside
//     D1–D64, and a choice is judged on both. E10, E42 and E50, behind for
//     every fit, are where to look for the recipe's losses: development
//     data, which traces and bounds may read.
//     Read with proflow bound (base seed 1, 2 repeats, end and freeze
//     twins; the bound counting a twin as its scenario until their
//     congesters part): E50 (a full-rate host and a capped one on the
//     flow's switch in three 5 s bursts 35 s apart; the flow alone keeps
//     its switch near the bucket rate, so the reserve the first two
//     bursts took never comes back, deficit 0.70, and the third collapses
//     the flow 2.5 s after it arrives; -at 3s,10s,43s,50s,79s,81s,82s,83s)
//     0.0%, agg1 at 82.5 s, just before that collapse, where the agent
//     leaves on the collapse itself, 4.1–4.5% behind crowd, which left at
//     the first burst; E42 (a rolling mixture beside a trap) 0.0%, the
//     agent 4.7%; E25 (benign, a trap elsewhere) 0.0% by never moving, the
//     agent 3.3%; E39 (a crowd ramping in 10 s steps) 0.0%, the agent 2.4%
//     (-at 0s,10s,…,60s); E10 (a rolling mixture every 20 s) 3.0%: no
//     single move stays within 2% there, and the agent's two moves make
//     3.0%. So four of the five are the agent's timing, and E50 says what
//     it lacks: how much of its own switch's reserve is gone (the layout
//     v2 state has no such input; layout v3's deficit has it and was
//     rejected on D1–D64 and S6 above, before E1–E64 existed).
//   - The flow's own reserve (session 24, after the entry above; written
//     before any run). Layout v3 gave every switch its deficit, and S6's
//     rolling crowd then read the switch it had just left as drained, so
//     the flow stopped going back to it; what E50 asks for is only how
//     much of the flow's own switch's reserve is gone. Layout v6 is v2
//     with one more flow feature, FeatureOwnDeficit: the deficit of the
//     switch carrying the flow (v3's virtual bucket, kept for every
//     switch so that a move reads the new switch's), and no deficit in
//     any switch's block, so a destination is judged as in v2. The
//     rule: make model with MODEL_LAYOUT=proflow-state-v6, everything
//     else the committed recipe (MODEL_SEED 1), behind
//     models/gate-testbed.json, judged (mk/judge.sh) against the current
//     code's refit of the adopted recipe on this machine (build/repro,
//     the same code and machine) and against the committed fit: it
//     passes if, against each, the bulk built-ins at base seeds 1 and
//     1000 are behind nowhere, the 24 S6 files are level, D1–D64 and
//     E1–E64 at both base seeds together hold fewer scenarios more than
//     2% behind, the sized D families at base seed 1 no more, and the
//     kinds no quiet-trap move, no more onoff scenarios worse than static
//     and rr and rate ratios at most 0.05 higher. Only then are the
//     held-out families run with it, at base seed 9700, unused.
//     Looked at: E50's trace and bound (development data), the built-ins,
//     D1–D64, E1–E64 and the sized D families. Disclosure: earlier in the
//     session the held-out K11's trace was read (an elephant visiting in
//     10 s turns, analysis only) and the held-out families were run with
//     three fits of the adopted recipe at base seed 9600 (the spread
//     entry above); no setting here was taken from either.
//     Measured (make model printed collect 42 s, train 465 s, total 507
//     s on 2 CPUs; mk/judge.sh): D1–D64 22.85 and 22.85 MB/s, behind in
//     none at either seed; E1–E64 22.96 and 22.97, behind in E42, E50 and
//     E63 at both (E10, E25 and E39 level: six of D+E at the two seeds
//     against the refit's 11 and the committed fit's 12); the bulk
//     built-ins and the 24 S6 files behind nowhere at both seeds; rr
//     0.09×, rate 0.47×, no quiet-trap move; but the sized D families
//     behind in four and two (D6x3-7, -11, -44, -55; D16x3-11, -57)
//     against the refit's four and the committed fit's two, and on/off
//     O1, O9 and O10 a second worse than static (the refit: four; the
//     committed fit: none). It does not pass: the sized families are
//     worse than under either fit. The held-out families were not run;
//     base seed 9700 is still unused. What it shows: the flow's own
//     deficit, without the destinations', keeps S6 level where v3 lost
//     it, and the development family of the paper's size gains (D and E
//     together half the scenarios behind), yet E50, the scenario that
//     asked for it, stays behind (4.1–4.4%), and the larger fabrics lose
//     brief-burst scenarios (D6x3-7, -55) as other fits did.
//     A second fit of each recipe (written before either run): make
//     model with MODEL_SEED 2, once with MODEL_LAYOUT=proflow-state-v6 and
//     once with the adopted recipe (v2), same code and machine, both
//     behind models/gate-testbed.json and judged by mk/judge.sh. The v6
//     recipe is preferred to the adopted one if, summed over its two fits
//     against the adopted recipe's two (this machine's refit with
//     MODEL_SEED 1 and the new one), the scenarios more than 2% behind on
//     D1–D64 and E1–E64 at both base seeds are fewer, those of the sized
//     D families and the onoff scenarios worse than static no more, and
//     each v6 fit keeps the bulk built-ins behind nowhere and the S6
//     files level. Adopting a fit, with the held-out families run at base
//     seed 9700, is then a later step; if the v6 recipe is not preferred,
//     it stays an option.
//     Measured (make model printed train 423 s for the v6 fit and 565 s
//     for the v2 fit, the v6 fit's judge running beside it): the v6 fit
//     of MODEL_SEED 2, D1–D64
//     behind in D34 at both base seeds, E1–E64 in E39, E42 and E50 at
//     both, the bulk built-ins behind in S6 (3.2%, 3.5%) and 6 of the 24
//     S6 files at both seeds, the sized families in five and one, onoff
//     O1, O2, O9, O10 worse; the adopted recipe's fit of MODEL_SEED 2,
//     D1–D64 in D10 and D22 (seed 1) and D22 and D37 (seed 1000), E1–E64
//     in five and six (E10, E39, E42, E50, E62; E55), built-ins and S6
//     level, sized three and one, onoff five worse. Summed over the two
//     fits: D and E behind 14 (v6) against 26 (v2), sized 12 against 8,
//     onoff 7 against 9; and one v6 fit loses S6. Not preferred: the
//     destinations' deficit is gone, yet a fit of v6 can still leave S6's
//     crowd for the switch it reaches next, and the sized families lose
//     brief bursts. The v6 recipe stays an option (MODEL_LAYOUT); its
//     D1–D64 and E1–E64 gains across both fits are the largest measured
//     so far, and E39, E42, E50 stay behind in every fit of both recipes.
//   - Votes remembered across a quiet gap (GateConfig.Window, session 25;
//     written before any run of it). Every fit of both recipes loses E42
//     and E50 by the same amount (4.7%, 4.1%): none of them moves before
//     the collapse, and the distress gate moves after it, which costs
//     twice what a move from a healthy flow does (the flow ramps from
//     about 2 MB/s instead of about 11). In E50 the agent votes for agg1
//     through each 5 s burst, 10 votes, and the streak restarts when the
//     burst ends, so 20 consecutive votes are never reached and the third
//     burst collapses the flow (the trace of the committed model, base
//     seed 1). A switch's reserve remembers the load it carried for about
//     a minute (the deficit's 60 s scale); the candidate's votes may too.
//     With Window set, the gate counts a candidate's votes over the last
//     Window instead of in a row: a step without a candidate no longer
//     forgets them; Votes, δ, tolerance, cooldown, distress and Pareto are
//     unchanged. The rule: models/gate-testbed.json with "window" 60 s
//     (one value, from the deficit's scale, not searched), judged by
//     mk/judge.sh behind the committed model and behind the adopted
//     recipe's MODEL_SEED 2 fit (build/v2s2), each against the same model
//     behind the adopted gate; it passes for a model if the bulk built-ins
//     at base seeds 1 and 1000 are behind nowhere, no more of the 24 S6
//     files are behind, D1–D64 and E1–E64 at both base seeds together
//     hold fewer scenarios more than 2% behind, the sized D families at
//     base seed 1 no more, and the kinds no quiet-trap move, no more onoff
//     scenarios worse than static and rr and rate ratios at most 0.05
//     higher. It is adopted only if it passes for both models; the
//     held-out families are then run at base seed 9700, unused. The two
//     layout v6 fits behind the window are judged the same way, for the
//     record, against the v6 fits behind the adopted gate.
//     Looked at before the rule: E42's and E50's traces under five fits
//     (committed, the refit, v2s2, both v6 fits) behind the adopted gate
//     and without Pareto (no change in either), E25's trace (development
//     data).
//     Measured (mk/judge.sh, 2–3 min each on 2 CPUs): behind the
//     committed model, D1–D64 behind in D40 at both base seeds, E1–E64 in
//     E10, E25, E42, E55 and in E25, E42 (six of D+E against twelve
//     behind the adopted gate: E39 and E50 gone), the bulk built-ins and
//     the S6 files level; but the sized D families behind in six (D6x3-7,
//     -11, -32, -44, -55 by 9.0%, -58) and three (D16x3-1, -7, -11)
//     against two and none, and on/off flows now move in the quiet trap
//     (1.00 an episode) and are worse than static in O5, O7, O8. Behind
//     the v2s2 fit: D+E eight against fifteen, but C1 and C2 behind at
//     both seeds (3.2–3.3%), sized eight against four, on/off 1.25 moves
//     in the quiet trap and eight worse than static. It passes for
//     neither model and is not adopted; base seed 9700 is still unused.
//     For the record, the v6 fits behind the window: D+E four and five
//     (against six and eight behind the adopted gate; E50 gone in both,
//     E39 in one), but C1 and C2 behind (fit 1), the sized families nine
//     and eight (against six and six) and ten on/off scenarios worse than
//     static in each. What it shows: the window does what it was for,
//     the bursts of E50 and the ramp of E39 add up to a move before the
//     collapse, in every fit; but the votes an on/off flow's own idle
//     gaps and the brief bursts of the sized families cast add up too,
//     and the vote count in a row was what kept those flows in place.
//     GateConfig.Window stays in the gate as an option (off in every
//     committed gate): an operator whose neighbours come back in bursts
//     can turn it on, at that price.
//   - A development kinds family (session 25, J1–J64; southbound/sim,
//     "Development family"; a measurement, not a choice). The only kind
//     scenarios a choice could look at were the built-ins O, Q, R, T and
//     V, and the one clause of issue 21 still open is a ratio over the
//     held-out kinds family K1–K64 (rate SLO seconds at most half the best
//     single rule's: 0.53× at base seed 5000, 0.54× at 9600). J1–J64 is
//     K's generator and design from another seed (the same traps, ramps
//     and congestion cells, rr, rate and on/off flows in the same numbers),
//     made after every choice above; mk/judge.sh now runs it at base seeds
//     1 and 1000. First look, the committed model behind
//     models/gate-testbed.json (mk/judge.sh): rr 0.14× and 0.11× the best
//     single rule (crowd), rate 0.48× [0.35×, 0.65×] and 0.47× [0.34×,
//     0.61×] (throughput-drop), on/off 1.00× (static); worse than a
//     scenario's strongest rule in none of 64 at either seed, no move in a
//     quiet trap. So on a second draw of K's design the rate ratio is
//     under half, where on K it is just over; the interval spans both,
//     and a few scenarios (a rolling crowd, an elephant beside a trap)
//     hold most of the rate SLO seconds of every policy. Kind choices
//     from now on are judged on J1–J64 as well as the built-ins.
//   - How fast each reserve drains (telemetry.StateLayoutV7, session 25;
//     written before the layout exists or runs). The encoder clips each
//     switch's transmit rate at the bucket rate (FeatureTxRate, as the
//     paper's scaling does), so a switch sending at 1.03 C and one sending
//     at 5 C read alike: E25's capped neighbours (1.02–1.05 C, a reserve
//     that would last for half an hour) and E42's crowd (5 C from 70 s, the
//     reserve gone 19 s after it came) differ in that feature by nothing,
//     and the agent moved in the first and stayed in the second (traces of
//     the committed model, base seed 1; E42 under the v6 fits too). The
//     flow count, elephant rate and backlog tell a crowd's size only
//     through their own clips, and the deficit (v3, v6) only once the
//     drain has lasted. Layout v7 is v6 with one feature more in every
//     switch's block, FeatureExcess = clip((ρ_k − C)/Cx, 0, 1), Cx = 5 C
//     (ExcessScale: a switch sending at 6 C, the built-ins' fullest crowd,
//     S1's 5.7–6.2 C, reads 1): the rate at which that switch's reserve
//     drains, instantaneous, so a switch a crowd has left reads 0 at once
//     (unlike v3's deficit, which S6 punished). The rule: make model with
//     MODEL_LAYOUT=proflow-state-v7, everything else the committed recipe,
//     MODEL_SEED 1 and 2, each behind models/gate-testbed.json and judged
//     by mk/judge.sh; the v7 recipe is preferred to the adopted one if,
//     summed over its two fits against the adopted recipe's two on this
//     machine (build/repro, MODEL_SEED 1, and build/v2s2, MODEL_SEED 2,
//     re-judged with the same script), the scenarios more than 2% behind on
//     D1–D64 and E1–E64 at both base seeds are fewer, those of the sized D
//     families and the onoff built-ins worse than static no more, and
//     each v7 fit keeps the bulk built-ins behind nowhere, the S6 files
//     level, no move in a quiet trap, and its rr and rate ratios (the
//     built-ins and J1–J64 at both base seeds) at most 0.05 above the
//     adopted fit of the same seed. If preferred, the v7 fit with fewer
//     D+E scenarios behind (then fewer sized) is the candidate, and the
//     held-out families are run with it at base seed 9700, unused.
//     Looked at: the traces above, S1's trace (the crowd's 6 C), the
//     encoder and the paper's scaling (App. A).
//     Measured (make model printed totals of 509 s and 511 s on 2 CPUs;
//     mk/judge.sh): the v7 fit of MODEL_SEED 1, D1–D64 behind in D10 (12%),
//     D22, D37, D38 at both base seeds, E1–E64 in seven and five (E10,
//     E12, E20, E50, E56, E58, E62), the sized families in two and one;
//     that of MODEL_SEED 2, D1–D64 in D37 (and D64 at base seed 1000),
//     E1–E64 in E50 and E62 and in E50, the sized families in one
//     (D6x3-11) and none, the lowest of any fit so far. Both keep the
//     bulk built-ins behind nowhere and the S6 files level, move in no
//     quiet trap, and hold rr and rate below the adopted fits' (J1–J64:
//     rate 0.38× and 0.37–0.38× against 0.44×, 0.42× for build/repro and
//     0.41×, 0.45× for build/v2s2, whose J1–J64 was run for this rule with
//     the same command as mk/judge.sh's); E42 and E39 are level in both
//     (E42 for the first time in any fit). The adopted recipe's two fits
//     re-judged: build/repro D+E behind 11, sized four, S12d 2.3% behind
//     at base seed 1, on/off O1, O2, O9, O10; build/v2s2 D+E 15, sized
//     four, on/off five. Summed: D+E behind 26 (v7) against 26 (adopted),
//     sized four against eight, on/off worse than static nine against
//     nine (the v7 seed-2 fit seven of them). D+E is not fewer, so by the
//     rule the v7 recipe is not preferred; base seed 9700 is still unused.
//     The two v7 fits differ by 14 D+E scenarios, more than the recipes
//     do.
//     A third fit of each recipe (written before either run): make model
//     with MODEL_SEED 3, once with MODEL_LAYOUT=proflow-state-v7 and once
//     with the adopted recipe, same code and machine, each judged by
//     mk/judge.sh. The v7 recipe is preferred if, summed over its three
//     fits against the adopted recipe's three, the D1–D64 and E1–E64
//     scenarios more than 2% behind at both base seeds are fewer, those
//     of the sized D families and the on/off built-ins worse than static
//     no more, and its third fit, like the first two, keeps the bulk
//     built-ins behind nowhere, the S6 files level, no move in a quiet
//     trap and rr and rate ratios at most 0.05 above the adopted fit of
//     its seed. If preferred, the v7 fit with the fewest D+E scenarios
//     behind (then the fewest sized) is the candidate and the held-out
//     families are run with it at base seed 9700, unused.
//     Measured (make model printed totals of 519 s and 492 s; mk/judge.sh):
//     the v7 fit of MODEL_SEED 3, D1–D64 behind in six and eight (D10 by
//     11–12%, D22, D34, D37, D38, D64; D2, D55), E1–E64 in seven and six
//     (E10, E12, E20, E39, E50, E58, E62), the sized families in four and
//     seven (D16x3-32, -41, -61 by 11–16%), built-ins and S6 level, on/off
//     O10 alone, rate 0.38× and 0.40× on J1–J64; the adopted recipe's fit
//     of MODEL_SEED 3, D1–D64 in one and two (D55; D34), E1–E64 in three
//     and four (E39, E42, E50; E55), sized three and two, built-ins and S6
//     level, on/off seven, rate 0.47× and 0.38× on J1–J64. Summed over
//     three fits: D+E behind 53 (v7) against 36 (adopted), sized 15
//     against 13, on/off worse than static 10 against 16. The v7 recipe is
//     not preferred; base seed 9700 is still unused. What the three v7
//     fits share: E42 level in all three (behind in every fit of every
//     other recipe), the kinds better (J1–J64 rate 0.37–0.40× against
//     0.38–0.47×), fewer on/off losses; and two of them lose the same
//     rolling and ramped scenarios (D10, D22, D37, D38, E12, E58, E62).
//     D10's trace (MODEL_SEED 1, base seed 1; development data, read after
//     the verdict): a 12-stream elephant rolling every 20 s reaches the
//     flow's agg4 at 40 s; the fit votes from 41.5 s but its streak starts
//     over until 46.5 s, the flow collapses at 53 s, distress moves it to
//     agg1, the elephant's next switch, and it moves again when the
//     elephant arrives there; static, which waits the visit out, is best
//     by 12%. The drain rate makes the fit surer that a crowd is bad; it
//     does not say where the crowd goes next, which is what D10 and S6
//     ask, and the gate still holds its move past the collapse.
//     The on/off losses of the v7 fit of MODEL_SEED 2 (O1, O9, O10 read
//     after the verdict, base seed 1, one repeat): it leaves S1's crowd at
//     10 s as every fit leaves S1, and ends 66.5 SLO seconds against
//     static's 65.5 while its flow's mean throughput is 5.98 MB/s against
//     static's 1.11 to 1.49: the on/off objective counts the second the
//     move costs, and both policies miss it almost all the window (the
//     flow's own TCP restarts after each idle gap). A second's difference
//     there decides the rule's on/off count.
//   - The flow's own switch's drain rate only (telemetry.StateLayoutV8,
//     session 25, after the entries above; written before the layout
//     exists or runs). Every v7 fit left E42 before its collapse, but two
//     of three lost more development scenarios than any v6 fit, and v6's
//     two fits were the lowest of any recipe on D1–D64 and E1–E64 (14
//     behind in all, against 26 for the adopted recipe's first two). What
//     E42 asked for is how fast the flow's own reserve drains; v7 also
//     gave every destination its drain rate. Layout v8 is v6 with one more
//     flow feature, FeatureOwnExcess = clip((ρ_k* − C)/Cx, 0, 1), Cx = 5 C
//     (v7's excess of the switch carrying the flow), and no excess in any
//     switch's block. The rule: make model with
//     MODEL_LAYOUT=proflow-state-v8, everything else the committed recipe,
//     MODEL_SEED 1 and 2, judged by mk/judge.sh; the v8 recipe is
//     preferred to the adopted one if, summed over its two fits against
//     the adopted recipe's fits of the same seeds (build/repro and
//     build/v2s2, judged above: D+E 26, sized eight, on/off nine), the
//     D1–D64 and E1–E64 scenarios more than 2% behind at both base seeds
//     are fewer, the sized D families' and the on/off built-ins' no more,
//     and each v8 fit keeps the bulk built-ins behind nowhere, the S6
//     files level, no move in a quiet trap and its rr and rate ratios
//     (built-ins, J1–J64) at most 0.05 above the adopted fit of its seed.
//     If preferred, third fits of both recipes decide as for v7 before any
//     adoption; base seed 9700 stays unused until then.
//     Looked at: v7's judges and traces (development data). Disclosure:
//     before this rule, H1–H64 was run once at base seed 9600 (already
//     used in session 24) with the committed model, for the report table
//     of every policy against the best of the others
//     (docs/reproduction.md); only its per-policy counts were read, and no
//     setting here was taken from it.
//     Measured (make model printed totals of 499 s and 551 s; mk/judge.sh):
//     the v8 fit of MODEL_SEED 1, D1–D64 behind in none at either base
//     seed, E1–E64 in E42 and E50 at both (four of D+E, the fewest of any
//     fit), the sized families in two and one (D6x3-11, -44; D16x3-57),
//     the bulk built-ins behind nowhere, the 24 S6 files level at 22.04
//     MB/s (the committed model 21.84), no on/off built-in worse than
//     static, no quiet-trap move; rr 0.08× and rate 0.47× on the kind
//     built-ins, and on J1–J64 rr 0.14× and 0.21×, rate 0.41× and 0.38×
//     at base seeds 1 and 1000. The v8 fit of MODEL_SEED 2: D1–D64 in D56
//     at both, E1–E64 in E50 and in E4, E50 (five), sized four and one,
//     built-ins and S6 level, on/off seven worse than static (O1–O4, O6,
//     O9, O10), J1–J64 rr 0.14× and 0.11×, rate 0.42× and 0.40×. Summed
//     against the adopted recipe's fits of the same seeds: D+E behind 9
//     against 26, sized eight against eight, on/off seven against nine;
//     each fit keeps the built-ins behind nowhere, the S6 files level and
//     the quiet traps still. But the seed-1 fit's rr ratio on J1–J64 at
//     base seed 1000, 0.21× [0.06×, 0.63×], is 0.07 above build/repro's
//     0.14× [0.06×, 0.39×], more than the 0.05 the rule allows. By the
//     rule the v8 recipe is not preferred; no third fits were made and
//     base seed 9700 is still unused. For whoever writes the next rule:
//     the 0.05 margin on rr came from the kind built-ins, whose intervals
//     are [0.05×, 0.13×]; this session carried it over to J1–J64 (session
//     25, "A development kinds family"), where one base seed's interval
//     spans ten times the margin, without measuring that noise first. A
//     margin for J1–J64 has to be set from such measurements before it
//     looks at a candidate (the adopted recipe's three fits read 0.14–0.21×
//     there, a spread of 0.07 between fits of the same recipe).
//     Measurements for that rule (session 25, after the verdict above,
//     written before they ran; no choice): a third fit of the v8 recipe
//     (MODEL_SEED 3) judged by mk/judge.sh, and the kinds ratios on J1–J64
//     at base seeds 2000 and 3000 of the committed model and the adopted
//     recipe's three fits, to measure the noise a kinds margin must sit
//     above.
//     Measured: the rr ratio on J1–J64 of one and the same fit moves with
//     the base seed by as much as the margin and more: build/repro 0.21×,
//     0.14×, 0.18×, 0.12× at base seeds 1, 1000, 2000, 3000; build/v2s2
//     0.21×, 0.17×, 0.15×, 0.15×; build/v2s3 0.18×, 0.18×, 0.12×, 0.16×;
//     the committed model 0.14×, 0.11×, 0.12×, 0.12× (rate 0.39–0.48×
//     over the same runs). The v8 seed-1 fit's 0.21× is inside that
//     spread. The third v8 fit (make model printed a total of 503 s): D1–D64
//     behind in D34 at both base seeds, E1–E64 in E10 and E50 at both
//     (six of D+E; the three v8 fits 15 in all, against 36 for the
//     adopted recipe's three), the sized families in three and one, but
//     S6 behind among the built-ins at both seeds (3.2%, 3.5%) and six of
//     the 24 S6 files (S6-1234, -1243, -2134, -2143, -4123, -4213, the
//     same six as the v6 seed-2 fit), and nine on/off built-ins worse
//     than static. So a rule with a wider kinds margin would still not
//     prefer v8 on three fits: one fit in three of the v6 family leaves
//     S6's crowd for the switch it reaches next.
//   - Choosing a fit, not a recipe (session 26; written before the refit
//     below runs and before base seed 9700 is looked at, knowing every
//     judge above). Each rule since session 24 compared recipes by sums
//     over fits, because the spread between fits of one recipe is as
//     large as any recipe's effect ("How much of a fit is the
//     machine's"). But what make model gives a user is one fit, bit for
//     bit on one machine, and the development checks exist to choose
//     among candidates; a fit is a candidate as much as a recipe is. The
//     rule: among the fits judged by mk/judge.sh in the entries above (the
//     committed fit; the adopted recipe's MODEL_SEED 1, 2 and 3 on
//     session 24–25 machines; v6's 1 and 2; v7's and v8's 1, 2 and 3),
//     those that keep the bulk built-ins behind nowhere at base seeds 1
//     and 1000, move in no quiet trap, and hold the J1–J64 rr and rate
//     ratios at or under issue 21's 0.5× at both base seeds (its own bar:
//     the relative 0.05 margin of the rules above sits under the noise
//     measured in the entry before this one) are eligible; the one with
//     the fewest development scenarios behind in all (D1–D64 and E1–E64
//     more than 2% behind at both base seeds, the sized D families more
//     than 2% behind at base seed 1, the 24 S6 files behind at both, and
//     the on/off built-ins worse than static) is the candidate, and it
//     replaces the committed fit if its count is lower than the committed
//     fit's (12 + 2 + 0 + 0 = 14). Read from the entries above: the v8
//     fit of MODEL_SEED 1 counts 4 + 3 + 0 + 0 = 7, the lowest (v6's
//     first fit 15, the committed fit 14, every other eligible fit 14 or
//     more: v7's MODEL_SEED 2 fit 6 + 1 + 0 + 7).
//     Because that fit was made on session 25's machine, it is first
//     rebuilt here (make model MODEL_SEED=1
//     MODEL_LAYOUT=proflow-state-v8) and judged again; the rebuild is the
//     candidate only if its own count is still lower than 14. Then, and
//     only then, the held-out families run with it at base seed 9700,
//     unused, and what they show is reported, whatever it is. Selecting
//     one fit among fourteen on 300-odd development scenarios can fit
//     those scenarios' draws; the held-out families are what measure that.
//     Measured (make model printed collect 77 s, train 736 s, total 813 s
//     on 2 CPUs: this session's machine is slower than session 25's, whose
//     build took 499 s; mk/judge.sh): the rebuild is another fit. D1–D64
//     behind in D22 and D37 at both base seeds, E1–E64 in E39, E42, E50
//     and in E10, E39, E42, E50, E55, E62 (13 of D+E, where session 25's
//     build of the same command was behind in 4), the sized families in
//     D6x3-44 and -54, the bulk built-ins and the 24 S6 files level, no
//     on/off built-in worse than static, no quiet-trap move, J1–J64 rr
//     0.23× and 0.11×, rate 0.39× and 0.41×. Its count is 13 + 2 + 0 + 0
//     = 15, not lower than the committed fit's 14: by the rule it is not
//     the candidate, the committed model stays, and base seed 9700 is
//     still unused. What it shows: one command and seed gave 7 on one
//     machine and 15 on another. The development count of a single fit
//     moves with the machine's floating-point sums by as much as any
//     recipe or fit choice above has moved it, so choosing a fit by those
//     counts does not carry to the machine that runs make model next, and
//     a recipe's losses are only told apart from that noise where every
//     fit shares them (E42 and E50 in every fit of every recipe).
//   - A shorter cooldown (session 26; written before any run of it). The
//     gate's 15 s cooldown is the one setting of models/gate-testbed.json
//     no rule above has judged: it came from the paper's 10–15 s for a
//     rerouted TCP flow to ramp up on its new path (S8; GateConfig). What
//     every fit loses on the development families includes the rolling
//     crowds and elephants (D10, D22, D37, E10, E62: the flow reaches the
//     switch a crowd goes to next and stays there, collapsed, until the
//     cooldown ends, distress waiving the votes but not the cooldown), and
//     the held-out losses that no fit avoids are of that class too
//     (docs/reproduction.md; no setting below is read from them). The
//     rule: models/gate-testbed.json with "cooldown" 10 s, the lower end
//     of the paper's range (one value, not searched), everything else
//     unchanged, behind the committed model, judged by mk/judge.sh against
//     the committed model behind the adopted gate (the judge of session
//     25, build/judge-j-committed, the same code: D+E behind 12, sized 2,
//     S6 files and the bulk built-ins level, no on/off built-in worse than
//     static, no quiet-trap move, J1–J64 rr 0.14× and 0.11×, rate 0.48×
//     and 0.47×). It passes if the bulk built-ins at base seeds 1 and 1000
//     stay behind nowhere, no S6 file falls behind, D1–D64 and E1–E64 at
//     both base seeds hold fewer scenarios more than 2% behind, the sized
//     D families no more, no on/off built-in is worse than static, no
//     quiet trap sees a move, and the J1–J64 and kind built-in rr and rate
//     ratios stay at or under 0.5× (issue 21's bar). If it passes it is
//     adopted into models/gate-testbed.json and recorded in the committed
//     model (proflow gate; same weights), and the held-out families run
//     at base seed 9700, unused. The risk it is judged for: a flow still
//     ramping after 10 s reads low to distress once the cooldown ends.
//     Measured (mk/judge.sh, about 4 min each; the committed model behind
//     the adopted gate judged again on this machine, build/judge-committed,
//     with the figures of session 25's judge): behind the 10 s cooldown
//     D1–D64 behind in D40 at both base seeds, E1–E64 in E10, E25, E39,
//     E42 and E50 at both, the same twelve scenarios as behind 15 s and by
//     the same amounts to the printed tenth of a point; the bulk built-ins and the S6 files
//     level, the sized families in D6x3-11 and -44 as before, no on/off
//     built-in worse than static, no quiet-trap move, J1–J64 rr 0.14× and
//     0.11×, rate 0.48× and 0.47×; the means move by 0.01 MB/s. Not fewer
//     behind: it does not pass, and base seed 9700 is still unused. What
//     it shows: the cooldown binds almost nowhere on the development
//     checks. After a move the 20-vote streak (10 s) and distress, not the
//     cooldown, decide when the next one can come; in the rolling
//     scenarios the agent loses by where it goes and when it first leaves.
//   - Kernels pinned (session 26; a change to make model and a
//     measurement, not a model choice). The v8 rebuild above differs from
//     session 25's build of the same command only in the machine. On one
//     training run (the 4x3 corpus of that rebuild, 3 FQI epochs, 1 Dyna
//     epoch, seed 1) the weights changed with one CPU instead of two, with
//     one OpenBLAS or OpenMP thread, with OpenBLAS's kernels forced to
//     Haswell, SkylakeX or Zen instead of the core type it detects here
//     (Cooperlake), and with ATen's scalar kernels; two unset runs agree bit for bit. make model
//     now trains with OPENBLAS_CORETYPE=Haswell, OPENBLAS_NUM_THREADS=1,
//     OMP_NUM_THREADS=1 and ATEN_CPU_CAPABILITY=avx2 (since session 27
//     set by proflow train itself, -kernels portable, its default wherever
//     the CPU has AVX2 and FMA, which restarts the process with them when
//     its environment lacks them; docs/torch.md, "The same fit on another
//     CPU"), under which that run
//     gives the same bytes on one CPU and on two; TestTrainPinnedKernels
//     keeps it so. A fit made pinned is a fit of the same recipe, not the
//     committed one: the committed model, trained unpinned on an earlier
//     machine, stays. From now on a rule that compares fits can compare
//     fits made on different machines, provided both were pinned (the
//     model's train_host says), and a chosen fit is what make model gives
//     on the next machine too, which "Choosing a fit, not a recipe" lacked.
//     The rule (written while that fit was collecting, before any of its
//     results): make model of the adopted recipe, MODEL_SEED 1, pinned,
//     judged by mk/judge.sh, is a candidate as in "Choosing a fit, not a
//     recipe": if it keeps the bulk built-ins behind nowhere at base seeds
//     1 and 1000, moves in no quiet trap and holds the J1–J64 rr and rate
//     ratios at or under 0.5× at both base seeds, and counts fewer
//     development scenarios behind in all than the committed fit's 14
//     (D1–D64 and E1–E64 at both base seeds, the sized D families, the 24
//     S6 files at both, the on/off built-ins worse than static), it
//     replaces the committed fit, and the held-out families run with it at
//     base seed 9700, unused. Its time is recorded either way.
//     Measured (make model printed collect 78 s, train 699 s, total 777 s
//     on 2 CPUs, against 813 s for the unpinned v8 build on the same
//     machine: pinning costs no time; train_host ends "kernels pinned by
//     OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
//     ATEN_CPU_CAPABILITY=avx2"; mk/judge.sh): D1–D64 behind in D40 at
//     base seed 1, E1–E64 in E39, E42, E50 and in E10, E39, E42, E50 (8 of
//     D+E), but the bulk built-ins behind in S6 at both base seeds (3.2%,
//     3.5%) and the same six of the 24 S6 files as the v6 and v8 seed-3
//     fits (S6-1234, -1243, -2134, -2143, -4123, -4213) at both, the sized
//     families in seven (D6x3-11, -44, -55 by 9.5%, -62; D16x3-1, -11,
//     -58), on/off O10, J1–J64 rr 0.14× and 0.11×, rate 0.42× and 0.37×.
//     Not eligible (S6): the committed model stays; base seed 9700 is
//     still unused. The six S6 files lost are the same in every fit that
//     loses S6, of three recipes: the fits split into those that go back
//     to the switch S6's crowd has just left and those that go on to the
//     one it reaches next.
//   - The pinned fit of layout v8 (session 26, after the entry above;
//     written before the run): make model MODEL_SEED=1
//     MODEL_LAYOUT=proflow-state-v8, pinned, judged by mk/judge.sh, is a
//     candidate by the same rule (eligible, and fewer than the committed
//     fit's 14 development scenarios behind in all). If it passes, it
//     replaces the committed fit, mk/model.mk's testbed layout becomes v8,
//     and the held-out families run with it at base seed 9700, unused.
//     Measured (make model printed collect 59 s, train 705 s, total 764 s
//     on 2 CPUs; mk/judge.sh): D1–D64 behind in D37 at base seed 1 only,
//     E1–E64 in E10, E50, E62 and in E10, E50 (6 of D+E), the sized
//     families in D6x3-44, -55 and D16x3-57 (3), the bulk built-ins and the
//     24 S6 files level at both base seeds, on/off O1 and O10 worse than
//     static (the on/off built-ins 58.9 SLO seconds against static's 58.7),
//     no quiet-trap move, J1–J64
//     rr 0.14× and 0.11×, rate 0.42× and 0.38× (the kind built-ins rr
//     0.08×, rate 0.47×). Eligible, and it counts 6 + 3 + 0 + 2 = 11
//     against the committed fit's 14: it replaces the committed fit
//     (models/default.*, mk/model.mk's testbed layout v8), and the
//     held-out families ran with it at base seed 9700 (docs/reproduction.md,
//     "The pinned v8 model"). Unlike every model before it, make model
//     should rebuild it bit for bit on any machine with AVX2 and FMA and
//     the same software (docs/torch.md; shown for 1 and 2 CPUs here, not
//     yet on a second machine). Rebuilt with plain make model at commit
//     fb80983, after the adoption (train 746 s, total 801 s): the same
//     tensor bytes in the model and its four dynamics models.
//   - How much of the pinned v8 fit is its seed (session 27; written
//     before the runs; a measurement, not a choice). The committed fit is
//     one draw of its recipe, chosen against the model before it, not
//     among fits of its own recipe. Measured: make model MODEL_SEED=2, 3
//     and 4 (layout v8, the committed shares, reward and gate,
//     kernels pinned: proflow train -kernels portable, its default here;
//     seed 4 added before any result of 2 and 3 was read), each judged by
//     mk/judge.sh; then the held-out
//     families (H1–H64, K1–K64, the built-ins, 6x3 and 16x3 at their own
//     and the other bucket rate) at base seed 9800, unused, with the
//     committed fit and each, the same command for all four. The
//     committed model stays whatever they show: this tells which of the
//     committed fit's counts are its recipe's and which its seed's.
//     Measured (make model printed train 909, 832 and 862 s, seeds 2 and 3
//     side by side and 4 beside their judging; mk/judge.sh; build/…
//     held-out runs of proflow evaluate, 2 repeats, base seed 9800). On
//     the development checks the committed fit is the only eligible one
//     of the four: seed 2 counts 4 D+E, 5 sized, 0 S6 files and 6 on/off
//     (15) but its bulk built-ins are behind in C1 and C2; seed 3 counts
//     5, 5, 12 and 7 (29) and loses S6; seed 4 counts 18, 6, 12 and 4 (40),
//     loses S6, and its J1–J64 rate ratio is 0.51× at base seed 1; the
//     committed fit counted 11. On the held-out families at base seed
//     9800: H1–H64 1.03× the per-scenario best rule for all four
//     (intervals [1.01×, 1.05×] or [1.02×, 1.05×]), more than 2% behind
//     in H34, H52 and H63 for seeds 1, 2 and 3 and in H52 and H63 for
//     seed 4; at 6 and 16 switches 3 and 1 (seed 1), 5 and 3, 5 and 3, 6
//     and 2; K1–K64 rate 0.51×, 0.55×, 0.51× and 0.49× the best single
//     rule (throughput-drop), K11 the largest share in each (13–15 SLO
//     seconds where every rule misses none), rr 0.09–0.13×, onoff
//     1.00–1.04×, no move in the quiet traps. So the held-out losses are
//     the recipe's: every fit loses H52, H63 and K11, three of four H34,
//     whatever its development count, and the best fit on the development
//     checks has the fewest losses at 6 and 16 switches (4 against 8
//     each). Seed 4, the worst development count (40), is the only one
//     with two H losses and a rate ratio under half; a choice made on the
//     development checks could not
//     have picked it, and none was made. Afterwards H34, H52 and H63 were
//     read with proflow bound at base seed 9800, every rule beside the
//     agent (an analysis, no choice; docs/reproduction.md, "What any
//     policy can do").
//   - Votes held while the reserve is drained (GateConfig.Reserve,
//     session 28; written before any judged run of it). Every fit of
//     every recipe loses E50 (development) and, on the held-out side,
//     H63 and H6x3-18 are the same class (docs/reproduction.md): bursts
//     of 5–6 s that come back 25–30 s later to the flow's switch, whose
//     reserve the bulk flow alone keeps from refilling. The trace of the
//     committed model in E50 (base seed 1) shows 10 votes for agg1 in
//     each burst, the streak restarting in every gap, and the deficit
//     0.36, 0.71, 0.89 after each burst until the third collapses the
//     flow. Session 25's Window kept votes for 60 s whatever the switch
//     did, and an on/off flow's idle gaps added up too. Reserve keeps
//     them only while the switch has not earned back what it sent above
//     C since the first of them (the integral of Decision.Load − 1, no
//     depth, no threshold): a gap in which the switch refills forgets
//     them. Looked at before this rule: E50's trace above, and E50, E10,
//     E39 and E42 at base seed 1 behind the gate with Reserve (the agent
//     left E50 at 45 s, after the second burst; the other three as
//     before). The rule: models/gate-testbed.json with "reserve": true,
//     everything else unchanged, judged by mk/judge.sh behind each of the
//     four pinned v8 fits (build/pv8s1 is the committed model; MODEL_SEED
//     2, 3, 4 of "How much of the pinned v8 fit is its seed"), each
//     against its judge behind the adopted gate (the counts of that entry:
//     11, 15, 29, 40; 95 in all). It is adopted if, behind the committed
//     model, the bulk built-ins at base seeds 1 and 1000 stay behind
//     nowhere, no S6 file falls behind, no quiet trap sees a move, the
//     J1–J64 rr and rate ratios stay at or under 0.5× at both base seeds,
//     and the development count (D1–D64 and E1–E64 more than 2% behind
//     at both base seeds, the sized D families, the S6 files, the on/off
//     built-ins worse than static) is lower than 11; and if the four
//     fits' counts together are lower than 95 (the recipe, not one draw).
//     If it is adopted it is recorded in the committed model (proflow
//     gate; same weights) and the held-out families run at base seed 9900,
//     unused, with the committed model and, for the record, the other
//     three fits.
//     Measured (mk/judge.sh behind the committed model, 3 min 44 s;
//     build/judge-res-s1 against build/judge-pv8s1): E50 is no longer
//     behind at either base seed, nor E62, and E10 only at base seed 1
//     (2.8%); but D7 is behind at both base seeds (3.4%, 3.2%), the bulk
//     built-ins are behind in C1 and C2 at both (3.2–3.3%), the sized
//     families in six (D6x3-7, -32, -44, -55 by 9.1%; D16x3-7, -57)
//     against three, six on/off built-ins are worse than static (O1, O4,
//     O5, O6, O7, O10) against two, and J59's on/off flow is worse than
//     static at both base seeds; J1–J64 rate 0.46× and 0.42× (0.42× and
//     0.38× before), no quiet-trap move, the S6 files level. It fails the
//     committed-model clause (C1 and C2), so it is not adopted; the other
//     three fits' judges were stopped once that was read, since the
//     recipe clause could no longer adopt it, and base seed 9900 is still
//     unused. What it shows (the traces of C1 and O5 behind it, base seed
//     1): a capped crowd keeps the flow's switch just above C (load 1.1
//     in C1, 3 in O5) for the whole window, so the reserve never comes
//     back, and the scattered votes of margins at δ's edge (0.2–0.4 among
//     steps at 0.0–0.2) add up to a move that the paper's consecutive
//     count never admits. The count in a row filters those near-ties as
//     much as it waits out brief neighbours, and a memory that keeps the
//     waiting also keeps the noise. GateConfig.Reserve stays in the gate
//     as an option, off in every committed gate.
//   - Distress the dynamics model forecasts (DistressConfig.Forecast,
//     session 28; written before any judged run of it). The losses above
//     that every fit shares (E50 here, H63 and H6x3-18 held out) end with
//     the flow collapsing in place and the distress rule moving it two
//     samples later, from a collapsed flow, which costs about twice a move
//     from a healthy one. proflow train fits a dynamics model f_ψ before
//     the Q-network and saves it beside the model; at decision time it can
//     say what the flow's next sample will be if it stays. Looked at
//     before this rule (development data only): the one-step forecast of
//     the committed model's dynamics model on static's traces of S1, S11,
//     N2, E50 and C1 and of the kind built-ins (base seed 1, one repeat),
//     against the distress rule's own level and debounce: two forecasts in
//     a row below 0.9 of the healthy level came 1 s before two such
//     samples in S1 (17.5 s against 18.5 s), 2 s in S11 and E50, at the
//     same step for every rate built-in and every rr built-in but R9 (1 s
//     later there), 0.5–5 s earlier in six on/off built-ins (O1, O3, O5,
//     O6, O9, O10), never in N2 or C1; and E50, S1, S11, N2 and C1 at
//     base seed 1 behind the gate with the forecast (the agent left E50's
//     third burst at 82.2 s instead of 83.5 s, 1.2% behind crowd instead
//     of 4.1%; S1 and S11 at 10.0 s as before; no move in N2 or C1). The
//     rule: models/gate-testbed.json with "forecast": true in its distress
//     (the same fraction, debounce and smoothing; nothing else changed),
//     each fit with its own dynamics models (policy.LoadForecasts; at the
//     sizes no dynamics model was trained for, 6x3 and 16x3, the gate runs
//     on measured samples alone, so those checks cannot move), judged by
//     mk/judge.sh behind the committed model and the three other pinned v8
//     fits, with the clauses and counts of "Votes held while the reserve
//     is drained" above: adopted if the committed model passes every
//     clause with a development count lower than 11 and the four fits
//     together count fewer than 95. If it is adopted, the gate is recorded
//     in the committed model, every path that loads the model attaches its
//     dynamics model (a controller whose gate counts forecasts and whose
//     agent has none would not be the controller evaluated), and the
//     held-out families run at base seed 9900, unused.
//     Measured (mk/judge.sh, about 4 min each; build/judge-fc-s1…s4
//     against build/judge-pv8s1…s4). The committed model: D1–D64 behind
//     in D7 at both base seeds (3.2%, 3.4%: three 4 s bursts 35 s apart;
//     the forecast saw the third collapse a flow whose reserve the first
//     two had drained, and the burst left first, so the move cost its
//     reroute where static loses nothing), E1–E64 in none (E10, E50 and
//     E62 gone), D37 gone; the bulk built-ins and the 24 S6 files level
//     at both, the sized families as before (D6x3-44, -55, D16x3-57: no
//     dynamics model reads those fabrics), on/off O1 and O10 as before, no
//     quiet-trap move, J1–J64 rr 0.14× and 0.11×, rate 0.42× and 0.38×
//     (unchanged): 2 + 3 + 0 + 2 = 7 against 11. The other fits: MODEL_SEED
//     2 counts 4 + 5 + 0 + 5 = 14 against 15 (E4 and E50 still behind; C1
//     and C2 still behind, as before), 3 counts 4 + 5 + 12 + 7 = 28
//     against 29, 4 counts 11 + 6 + 12 + 4 = 33 against 40 (D22, E12, E58
//     gone, D10 smaller). The four together 82 against 95; every clause
//     holds for the committed model. Adopted: models/gate-testbed.json's
//     distress has "forecast": true, recorded in models/default.safetensors
//     with proflow gate (the same tensors; the four dynamics models
//     unchanged), policy.LoadModel and models.LoadDefault attach the
//     dynamics model of the deployment's fabric (the latter from embedded
//     copies), and policy/eval.AgentPolicy does for every episode.
//     Afterwards, for its cost (docs/performance.md), the controller asks
//     for a forecast only on a step where some switch scores above the
//     current one, the only steps on which the gate can move the flow;
//     judged again behind the committed model (build/judge-fc2-s1): the
//     same scenarios behind, by the same amounts, on/off 58.9 SLO seconds
//     instead of 59.0; the held-out reports at base seed 9900 below print
//     the same rows.
//     The held-out families at base seed 9900, unused (the commands of
//     docs/reproduction.md, "The forecast gate", every fit behind
//     models/gate-testbed.json; reported, no choice): the committed
//     model 1.04× [1.02×, 1.07×] the per-scenario best rule on H1–H64,
//     19 / 45 / 0, none more than 2% behind (H34 the worst, 1.9%), 101% of
//     the oracle's lead closed, no bulk built-in behind; 6x3 and 16x3 3
//     and 2 behind (H6x3-18, -25, -61; H16x3-59, -61), unchanged by
//     construction; K1–K64 rr 0.10×, rate 0.54×, onoff 1.00×. The other
//     fits: H12; H52; H52 and H63. Run again at base seeds 9800 and 9700
//     (a measurement after the choice): the committed model behind in H34
//     alone at both (3.5%, 3.4%), where it was behind in H34, H52 and H63
//     before.
//   - Forecasts on fabrics of other sizes (policy.Forecast.Project,
//     session 28; written before the judged runs). The dynamics models
//     are per fabric size (4x3, 2x3, 4x7, 8x3), so at 6 and 16 switches
//     the forecast gate ran on measured samples, and the held-out losses
//     there that every fit shares are of the class the forecast answered
//     at 4x3 (H6x3-18, H16x3-61: repeated bursts). Project reads a view of
//     a larger fabric with the same leaves: the flow's switch, the
//     switches after it in index order, every leaf and the flow's own
//     features (its switch's deficit and drain rate among them). Looked at
//     before this rule (development data only): static's traces of
//     D1–D64, D6x3-1…64 and D16x3-1…64 (base seed 1, one repeat), the
//     first two-in-a-row forecast below 0.9 of the healthy level against
//     the first two such samples. The 4x3 model on 4x3: 34 episodes where
//     both came, the forecast 0–5 s first (mostly 0.5–2 s), one where only
//     the forecast came (D7). The 4x3 model's view of 6x3: 30 both, 0–2 s
//     first (one 34.5 s), two forecast only (D6x3-11, -58); of 16x3: 31
//     both, 0–2.5 s first, two forecast only (D16x3-7, -57). The 8x3
//     model's view of 16x3: 31 both, 0–1 s first, mostly 0; the 2x3's of
//     6x3 0–2.5 s, two forecast only. So the view is read by the model's
//     own fabric's dynamics model (LoadForecasts puts it first), 4x3 here.
//     The rule: with Project in AttachForecast (and nothing else changed;
//     at 4x3, 2x3, 4x7 and 8x3 the exact models are used as before, so
//     only the sized checks can move), the sized development families of
//     mk/judge.sh (D6x3-1…64 and D16x3-1…64, base seed 1, 2 repeats)
//     for the committed model and the other three pinned fits, against
//     their counts behind the adopted gate (3, 5, 5, 6). Adopted if the
//     committed model's count is lower than 3 and the four together lower
//     than 19; the held-out families at 6 and 16 switches (and at the
//     other bucket rate) then run at base seed 10000, unused.
//     Measured (build/sz-s1…s4): the committed model D6x3-44 and -55 as
//     before and D16x3-7 (3.3%) beside D16x3-57, 4 against 3; MODEL_SEED
//     2 six against five (D16x3-7 again), 3 six against five (D6x3-58
//     and -54 for -54), 4 six against six: 22 against 19. Not adopted:
//     AttachForecast takes only a dynamics model of the agent's own
//     fabric, Project stays an explicit option (Agent.SetForecast), and
//     base seed 10000 is unused. What it shows: the view forecasts
//     collapses at 6 and 16 switches about as early as at 4 (static's
//     traces above), but it ends none of the development losses there
//     (D6x3-44 and -55 stay, by the same amounts), and its false alarm in
//     D16x3-7 (two 5 s bursts that leave before the collapse it
//     forecasts, as D7's at 4x3) costs a reroute.
//   - Moves held while the reserve lasts (GateConfig.Drain, session 29;
//     written before any judged run of it). The losses left at every size
//     are moves made when the 20th vote lands, long before the flow would
//     have suffered: J47 (development kinds, base seed 1): a rate flow's
//     switch takes four full-rate flows for 10 s, the agent moves as the
//     20th vote lands at the burst's last sample and misses 3.5 s where
//     staying misses none; D6x3-44 (two 15 s bursts that never drain the
//     reserve; the agent moves at 10 s); D16x3-57 (the same at the last
//     sample of an elephant's 10 s burst). Read after the choices of
//     session 28 and disclosed here, since they are part of why this was
//     tried: the held-out K11 at base seed 9900 (an elephant's 10 s visits
//     to the flow's switch and to agg1; the agent moves to agg1 as the
//     second visit ends and misses 18.8 s when the third drains agg1), and
//     H6x3-25 and -61 at 9900, where the agent's one move is 3.3% and 2.0%
//     behind static because the flow's switch, sending 35 MB/s against C =
//     25 MB/s, would have emptied its bucket only 5–12 s after the window
//     ends (the integral of Decision.Load − 1 on static's traces reaches
//     1.21 and 1.27 GB of the 1.33 GB depth). proflow floor (this
//     session) puts the least any single-move policy can miss on J1–J64's
//     rate flows, picked with hindsight, at 2.0 s against the agent's 2.6 s
//     (base seed 1), and its moves come 0–8 s after congestion start in
//     most scenarios, just before the reserve runs out, not when a vote
//     count ends. Drain holds a move the votes admit (not one distress
//     admits) while the current switch's token bucket, by the gate's own
//     estimate, lasts longer than Horizon: the deficit D, the integral of
//     Decision.Load − 1 over decision time since the flow came to the
//     switch, clipped at 0, and the time to empty (Depth − D)/(Load − 1)
//     while Load > 1 (never while the switch sends at most C). Depth is
//     the bucket's depth in seconds of C, a fact of the deployment (the
//     testbed profile's tc burst, 1,332,500,000 B at 25 MB/s: 53.3 s).
//     Looked at before this rule: that estimate on static's traces of
//     D1–D64 and J1–J64 (base seed 1, one repeat) with Depth 53.3 s
//     against the first sample below half the flow's baseline while not
//     application-limited: with Horizon 2 s it fires 1–2 s before that
//     collapse in every D scenario that collapses (34 of them) but D64
//     (at 10 s, 32.5 s early), at 81.5 s in D7 where nothing collapses,
//     never in a D scenario without a collapse; on J1–J64's rate flows
//     1.5–3 s before the collapse in 10 of 12, 26 s early in J15 and with
//     no collapse in J44; where tc's overflow begins the estimate reads
//     53.0–53.5 s. (Corrected in review: this entry first said "1–3 s
//     before on every rate and bulk-like collapse" of J1–J64, which the
//     same output does not show for J15 and J44; the rule and its runs
//     are unchanged.) The rule: models/gate-testbed.json
//     with "drain": {"depth": 53.3, "horizon": 2 s}, nothing else changed,
//     judged by mk/judge.sh behind the committed model and the three other
//     pinned v8 fits against their judges behind the adopted gate
//     (build/judge-fc-s1…s4: 7, 14, 28, 33; 82 in all), with the clauses of
//     "Votes held while the reserve is drained": adopted if, behind the
//     committed model, the bulk built-ins at base seeds 1 and 1000 stay
//     behind nowhere, no S6 file falls behind, no quiet trap sees a move,
//     the J1–J64 rr and rate ratios stay at or under 0.5× at both base
//     seeds, and the development count is lower than 7; and if the four
//     fits together count fewer than 82. If it is adopted it is recorded
//     in the committed model (proflow gate; same weights) and the held-out
//     families run at base seed 10000, unused, with the committed model
//     and, for the record, the other three fits.
//     Measured (mk/judge.sh behind the committed model, 3 min 38 s;
//     build/judge-dr-s1 against build/judge-fc-s1): D7 behind at both base
//     seeds as before (its forecast distress is not held), E1–E64, the
//     bulk built-ins and the S6 files level; the on/off built-ins O1 and
//     O10 no longer worse than static; J1–J64 rate 0.45× and 0.42×
//     (0.42× and 0.38× before; J40 worse than its strongest rule at base
//     seed 1000), rr unchanged, no quiet-trap move; the sized families
//     behind in D6x3-4, -24, -42 and D16x3-22, -57 (D6x3-44 and -55 no
//     longer): 2 + 5 + 0 + 0 = 7, not lower than 7. Not adopted; the other
//     three fits were not judged. What it shows (D6x3-24's trace, base
//     seed 1): two 10 s bursts of four flows 30 s apart; the first is held
//     and leaves, as intended, but the flow alone keeps its switch at C,
//     so the reserve the first burst took never comes back (the estimate
//     reads about 33 s of C gone when the second arrives), the second
//     empties it 6 s in, and by then only 11 votes are in: the flow
//     collapses and leaves by distress, where the adopted gate had moved
//     it as the first burst's 20th vote landed. A hold alone turns the
//     vote count into the slower of two clocks.
//   - The reserve's end waives the votes (GateConfig.Drain with Waive,
//     session 29; written after the entry above and before any judged run
//     of it). The estimate that holds a move while the reserve lasts also
//     says when it is about to run out, which the measured loss above
//     needed: as Distress.Forecast counts a collapse the dynamics model
//     sees coming, Waive counts a bucket within Horizon of empty as
//     distress, so the candidate that beats the current switch by more
//     than Margin is admitted without its Votes (the cooldown still
//     holds). Looked at before this rule: D6x3-24's trace above; nothing
//     else new. The rule: models/gate-testbed.json with "drain": {"depth":
//     53.3, "horizon": 2 s, "waive": true}, nothing else changed, judged
//     and adopted by the clauses and counts of the entry above (behind the
//     committed model a development count lower than 7 with every clause,
//     and the four fits together fewer than 82); if adopted, recorded in
//     the committed model and the held-out families run at base seed
//     10000, unused.
//     Measured (mk/judge.sh behind the committed model, about 4 min;
//     build/judge-drw-s1): D7 behind at both base seeds as before, E1–E64,
//     the bulk built-ins and the S6 files level; the sized families behind
//     in D6x3-11, -58 and D16x3-7, -57 (D6x3-24 no longer: the second
//     burst now moves the flow 2 s before the bucket empties); but six
//     on/off built-ins worse than static (O2, O3, O6, O8, O9, O10) and
//     J19's on/off flow at both base seeds; J1–J64 rate 0.41× and 0.42×,
//     rr unchanged, no quiet-trap move: 2 + 4 + 0 + 6 = 12 against 7. Not
//     adopted; Drain stays in the gate as an option, off in every
//     committed gate, and base seed 10000 is still unused. What the two
//     entries show together: behind the adopted gate the sized families
//     lose D6x3-44, -55 and D16x3-57; behind the hold D6x3-4, -24, -42
//     and D16x3-22, -57; behind the hold with the waiver D6x3-11, -58 and
//     D16x3-7, -57. Each timing rule, the vote count, the reserve's end or
//     both, loses its own three to five of the 128: a move made when the
//     reserve is nearly gone is needless when the burst leaves in the
//     next two seconds (D6x3-11, D16x3-7, as the forecast's false alarms
//     in "Forecasts on fabrics of other sizes"), one held until then is
//     late when a later burst finds the reserve spent, and one made on
//     the votes is needless when the reserve outlasts the crowd. On/off
//     flows pay for any move the waiver adds (each move costs the bursts
//     after it their window).
//   - Votes remembered while the reserve is drained, the move held while
//     it lasts (GateConfig.Drain with Reserve, session 30; written before
//     any judged run of it). The hold's measured loss above (D6x3-24's
//     trace: the first burst's 20 votes are held and then forgotten when
//     it leaves, the second burst finds a spent reserve and gets only 11
//     new votes before the flow collapses) is a loss of memory, which
//     Reserve ("Votes held while the reserve is drained") is: a
//     candidate's votes stay across steps without a candidate while the
//     switch has not earned back what it sent above C since the first of
//     them, and in D6x3-24 the flow alone holds its switch at C, so the
//     first burst's votes would still count when the second comes, and
//     the hold would let the move through 2 s before the bucket empties.
//     Reserve alone lost C1, C2 and on/off scenarios to scattered votes
//     that added up into moves; behind the hold such a move also waits
//     for the bucket's end. Looked at before this rule: the entries above
//     and their judges; nothing new. The rule: models/gate-testbed.json
//     with "reserve": true and "drain": {"depth": 53.3, "horizon": 2 s}
//     (no waiver), nothing else changed, judged and adopted by the
//     clauses and counts of "Moves held while the reserve lasts" (behind
//     the committed model a development count lower than 7 with every
//     clause, and the four fits together fewer than 82); if adopted,
//     recorded in the committed model and the held-out families run at
//     base seed 10000, unused.
//     Measured (mk/judge.sh behind the committed model, about 4 min;
//     build/judge-drr-s1): D7 behind at both base seeds as before, E1–E64,
//     the bulk built-ins and the S6 files level; the sized families behind
//     in D16x3-7 and -57 only (D6x3-44, -55 and -24 no longer: the
//     remembered votes let the second burst's move through 2 s before the
//     bucket empties); J1–J64 rate 0.41× and 0.42×, rr unchanged, no
//     quiet-trap move; but five on/off built-ins worse than static (O2,
//     O3, O6, O9, O10) and J19's on/off flow at both base seeds, as behind
//     the waiver: 2 + 2 + 0 + 5 = 9 against 7. Not adopted; the other
//     three fits were not judged, and base seed 10000 is still unused. What
//     it shows: of the three timing rules with the reserve's estimate, this
//     one loses the fewest bulk scenarios at 6 and 16 switches (2 of 128,
//     against 3 behind the adopted gate), but an on/off flow's idle gaps
//     do not refill a switch its neighbours keep above C, so remembered
//     votes reach 20 across bursts and the bucket's end moves the flow,
//     which on/off flows pay for in every burst after it. (Later in the
//     session an audit changed Drain's estimate: a deficit that has
//     reached Depth reads as an empty bucket at any load, where before a
//     switch sending at C with its estimate at Depth held the move. The
//     same judge run again after it printed the same summary,
//     build/judge-drr2-s1.)
//   - The synthetic crowd term under crowd_drain (found in session 30 by
//     an audit of the training code; nothing trained or judged for it).
//     With RewardConfig.CrowdDrain the crowd term is β·Δn⁺·δ in both
//     rewards, but the synthetic reward reads δ from the current state as
//     clip(FeatureTxRate − 1, 0, 1), and the encoder caps that feature at
//     1 (ClampState keeps predicted states there), so without DeficitDrain
//     δ is 0 on every state Dyna scores, and so is the synthetic crowd
//     term, however large the crowd (κ's synthetic drain term is 0 for the
//     same reason, as the paragraph on the drain term above records). The
//     real reward keeps β·Δn⁺·δ, δ measured from the observation. The
//     committed model's recipe (models/train-testbed.json) sets
//     crowd_drain, so its synthetic transitions carried no crowd term: in
//     Dyna the reward of staying beside a crowd charged nothing for the
//     crowd itself, and only the real transitions, and the values
//     bootstrapped from them, carried its cost. The measurements of the
//     CrowdDrain entry above (adopted with "crowd_drain": true) are of
//     models trained so and stand as measured; what they credit to the
//     crowd term weighted by the drain is the real reward's term alone.
//     The computation stays as it is, as the committed model was trained
//     (TestSyntheticCrowdDrainAtCap pins it). A recipe whose synthetic δ
//     reads layout v7's FeatureExcess or v8's FeatureOwnExcess (the drain
//     rate the capped transmit rate cannot tell, scaled by ExcessScale,
//     not Cρ) would be a new recipe, to be judged like any other before it
//     is adopted.
//   - The simulator's idle move corrected, and the remembered-votes hold
//     judged again (session 31; written before any judged run on the
//     corrected simulator). An audit found that the simulator charged a
//     move to a connection with nothing in flight (an on/off flow in a
//     gap, an rr flow between requests) what it charges a busy one:
//     H-move's timeout on the testbed profile, though with no packet on
//     the old path none is lost (southbound/sim, "The move model"). The
//     correction acts for every policy alike and changes no bulk or rate
//     episode. `make demo` after it (base seed 5000, the held-out kinds
//     family, looked at before this rule): on the testbed profile the
//     on/off flows' best rule is now throughput-drop, 30.6 s against the
//     agent's 37.3 (static's was the best before, 41.7 against 41.5), rr
//     0.11× and rate 0.59× as before. The remembered-votes hold above lost
//     on on/off flows, whose moves the correction makes cheaper when they
//     land in a gap, so it is judged again, and the adopted gate beside
//     it, both on the corrected simulator. The rule: behind the committed
//     model, mk/judge.sh for models/gate-testbed.json and for the same
//     gate with "reserve": true and "drain": {"depth": 53.3, "horizon":
//     2 s}; the development count of each is the number of rows behind
//     (D1–D64 and E1–E64 at both base seeds, the bulk built-ins, the S6
//     files, the sized D families) plus the on/off built-ins the judge
//     lists as worse than their strongest rule (the yardstick; static
//     was every on/off built-in's strongest before the correction, so
//     this is the count used so far). The hold is adopted if, behind the
//     committed model, the bulk built-ins stay behind nowhere, no S6 file
//     falls behind, no quiet trap sees a move, the J1–J64 rr and rate
//     ratios stay at or under 0.5× at both base seeds, and its count is
//     lower than the adopted gate's; and then if the four pinned fits
//     together count fewer behind it than behind the adopted gate, both
//     judged on the corrected simulator. If adopted, it is recorded in the
//     committed model (proflow gate; same weights) and the held-out
//     families run at base seed 10000, unused.
//     Measured (mk/judge.sh behind the committed model, 4 min 9 s and 4
//     min 52 s; build/j31-adopted-s1, build/j31-drr-s1): behind the
//     adopted gate D7 behind at both base seeds, D6x3-44, -55 and D16x3-57
//     as before, E1–E64, the bulk built-ins and the S6 files level, J1–J64
//     rr 0.14× and 0.11×, rate 0.42× and 0.38×, no quiet-trap move; but
//     on the on/off built-ins throughput-drop is now the best rule, 15.4
//     s against the agent's 46.5 (3.03×), and seven of them are worse than
//     their strongest rule (O2, O4, O5, O7, O8, O11, O12): 2 + 3 + 7 = 12.
//     Behind the hold: D7 at both, D16x3-7 and -57, J44's rate flow worse
//     than its strongest rule at both base seeds, and all twelve on/off
//     built-ins worse (59.0 s, 3.84×): 2 + 2 + 12 = 16. Not adopted; base
//     seed 10000 is still unused. What the correction shows: the committed
//     model was trained on episodes in which every move of an on/off flow
//     cost a retransmission timeout, so it learned to keep such flows
//     where they are; with moves in a gap free, the rule that moves them
//     when their bursts fall short gains most, and both gates, which only
//     pass on the model's preferences, lose on them.
//   - The recipe trained again on the corrected simulator (session 31;
//     written before the training runs). `make model` on the corrected
//     simulator, the committed recipe unchanged (models/train-testbed.json,
//     the shares, the four fabrics, MODEL_SEED 1–4 into build/m31s1 …
//     build/m31s4), is what a fresh clone's `make model` now trains. The
//     seed-1 fit replaces models/default if, behind the adopted gate
//     (mk/judge.sh, corrected simulator), the bulk built-ins stay behind
//     nowhere, no S6 file falls behind, no quiet-trap move is made, the
//     J1–J64 rr and rate ratios stay at or under 0.5× at both base seeds,
//     and its development count (as in the entry above) is at most the
//     committed model's 12; and if the four new fits together count at
//     most what the four pinned fits count behind the adopted gate on the
//     corrected simulator (build/pv8s2…s4 judged for this). It is a
//     correction of the training data, not a new recipe, so it needs to be
//     no worse, not better. If adopted, the held-out families run at base
//     seed 10000, unused, and `make demo`'s tables are printed again.
//     Measured (mk/judge.sh behind the adopted gate, corrected simulator;
//     build/j31-m31s1 and build/j31-{m31s2,m31s3,m31s4,pv8s2,pv8s3,
//     pv8s4}-adopted; `make model` printed "collect total 86 s, train 797
//     s" for the seed-1 fit beside another training): the seed-1 fit is
//     behind in D7 at both base seeds (3.2%, 3.4%) as the committed model,
//     in D6x3-11, D6x3-44 and D16x3-13 (2.5%), the bulk built-ins and the
//     S6 files nowhere, no quiet-trap move, J1–J64 rr 0.14× and 0.11×,
//     rate 0.43× and 0.41×; on the on/off built-ins 39.2 s against
//     throughput-drop's 15.4 (2.55×; 46.5 s before), three worse than
//     their strongest rule (O5, O8, O11): 5 + 3 = 8 against 12. The four
//     new fits count 8, 25, 8 and 29 (70), the four pinned fits 12, 16,
//     29 and 36 (93). Adopted: models/default.safetensors and its four
//     dynamics models are the seed-1 fit (commit 393d9f6, the commit
//     holding this rule; the binary was built from a later tree that
//     differed from it only outside training: the cordon, trace, cluster
//     and service fixes of the same session). Its gate is the adopted one,
//     recorded by the training run. The held-out families at base seed
//     10000 and `make demo` are in docs/reproduction.md ("The idle move
//     corrected and the default retrained").
//   - Moves timed to the flow's own idle gaps (GateConfig.Gap, session 31;
//     written before any judged run of it). Looked at before this rule:
//     the retrained model's on/off built-ins O5, O8 and O11, worse than
//     throughput-drop (base seed 1, one repeat, traces): in O8 the agent
//     moves at 16 s, inside a burst, to an empty switch, where the flow
//     then delivers 3.4 MB/s of each 12.5 MB/s burst to the end of the
//     window (the move cost it a retransmission timeout, H-move, and with
//     CUBIC's state reset and the restart after every idle gap its window
//     never grows back at 50 ms); throughput-drop moves at 4 s, in a gap
//     (its sample delivered nothing), and the flow keeps 12.4 MB/s bursts
//     on the new switch. A move made while the connection has nothing in
//     flight costs it nothing (the correction above). Gap holds a move the
//     gate admits (votes or distress) while the flow is sending in a burst
//     no longer than its previous one bounded by idle samples (a sample
//     is idle when the flow delivered nothing while application-limited),
//     so the move lands at the next gap, at most one burst later; a flow
//     that is never idle is never held. The rule: models/gate-testbed.json
//     with "gap": true, nothing else changed, judged by mk/judge.sh behind
//     the committed model (the retrained seed-1 fit) and adopted if the
//     bulk built-ins stay behind nowhere, no S6 file falls behind, no
//     quiet trap sees a move, the J1–J64 rr and rate ratios stay at or
//     under 0.5× at both base seeds and the development count is lower
//     than 8; and then if the four fits of the recipe retrained on the
//     corrected simulator (build/m31s1…s4) count fewer than 70 behind it
//     together. If adopted, recorded in the committed model (proflow gate;
//     same weights) and the held-out families run at base seed 10100,
//     unused.
//     Measured (mk/judge.sh behind the committed model, build/j31-gap-m31s1):
//     the same development count, 8 (D7 at both base seeds, D6x3-11,
//     -44, D16x3-13; on/off built-ins O5, O8, O11 worse than their
//     strongest rule), the on/off built-ins 37.3 s against 39.2, J1–J64's
//     on/off flows at base seed 1 worse than their strongest rule in none
//     (J13, J59 before), rr and rate as before. Not lower than 8: not
//     adopted; the four fits were not judged and base seed 10100 is
//     unused. Why it did not end O8's loss (its trace behind the gate,
//     base seed 1): the move is held through each burst (reason gap) as
//     meant, but at the idle samples that follow, the model's margin for
//     the destination falls to 0.1–0.3 (the flow sends nothing there, and
//     the state reads a switch it barely loads) and the votes restart, so
//     the move the burst admitted is never made in a gap, and the flow
//     stays on its congested switch. A gate that carries the move it held
//     into the next idle sample (made there while the destination still
//     scores at least the current switch) is the next rule to judge.
//   - The held move made in the next gap (GateConfig.Gap as changed in
//     session 31; written before any judged run of it). Gap now keeps the
//     destination of the move it holds in a burst and makes that move at
//     the first idle sample after it, if the destination still scores at
//     least the current switch and no cooldown runs, whatever that
//     sample's votes and margin; otherwise the move is dropped. Looked at
//     before this rule: O8's trace above, nothing else. The rule:
//     models/gate-testbed.json with "gap": true, judged and adopted by the
//     clauses and counts of the entry above (behind the committed model a
//     development count lower than 8 with every clause, then the four
//     retrained fits together fewer than 70); if adopted, recorded in the
//     committed model and the held-out families run at base seed 10100,
//     unused.
//     Measured (mk/judge.sh behind the committed model,
//     build/j31-gap2-m31s1): the same summary as the hold without it,
//     count 8 (the on/off built-ins 37.3 s, O5, O8, O11 worse than their
//     strongest rule). Not adopted; base seed 10100 is unused. O8's trace
//     behind it: the held move is now made in the gap (at 19 s), but the
//     flow has been collapsed on its switch since 13 s, when the crowd
//     emptied the bucket, and the timeouts of the collapse, not the move,
//     left it the small window it keeps on the empty switch (1–2.3 MB/s of
//     each 12.5 MB/s burst: every idle gap restarts the window, and CUBIC
//     at 50 ms regrows little of it within a 3 s burst). Throughput-drop
//     moves at 4 s, in the first gap after the crowd arrives, before any
//     collapse, and the flow keeps its full bursts. For an on/off flow a
//     move after the collapse is worth far less than for a bulk flow,
//     which regrows its window in 9–13 s; the 20 votes (10 s) of the
//     adopted gate, chosen on bulk flows, are what lose O5, O8 and O11.
//   - The votes waived at an idle sample (GateConfig.Idle, session 32;
//     written before any judged run of it). Looked at before this rule:
//     O8's trace behind the committed model (base seed 1, one repeat),
//     nothing else (times on the trace's clock; congestion starts at 20 s):
//     the crowd arrives at 20.5 s, and at the idle samples of the gap at
//     23.5–25 s the model already prefers an empty switch
//     by 0.6–1.2 (far above δ = 0.2), but the burst that follows opens
//     with a sample where it does not, and the count of 20 starts again
//     in every burst, so the agent never moves before the collapse;
//     throughput-drop moves at 24 s, in that gap. A move made while the
//     connection has nothing in flight costs it nothing (the idle move
//     corrected above), which is what the vote count guards against; a
//     destination that is wrong still costs, and the margin and the
//     cooldown still guard against that. Idle waives the Votes at an idle
//     sample (the flow delivered nothing while application-limited for
//     at least half the interval, the definition Gap uses); a flow that is
//     never idle (bulk, constant-bitrate, busy request/response) decides
//     as without it. The rule: models/gate-testbed.json with "idle": true,
//     nothing else changed, judged by mk/judge.sh behind the committed
//     model and adopted by the clauses and counts of the two entries
//     above (a development count lower than 8 with every clause, then
//     the four retrained fits build/m31s1…s4 together fewer than 70); if
//     adopted, recorded in the committed model (proflow gate; same
//     weights) and the held-out families run at base seed 10100, unused.
//     Measured (mk/judge.sh behind the committed model,
//     build/j32-idle): development count 5 (D7 at both base seeds,
//     D6x3-11, -44, D16x3-13, as before; no on/off built-in worse than its
//     strongest rule, O5, O8 and O11 before), the on/off built-ins 13.9 s
//     against throughput-drop's 15.4 (0.91×; 39.2 s before), J1–J64 on/off
//     0.96× and 0.97× (1.00×, 1.01× before), rr 0.10×, rate 0.47× on the
//     built-ins, J rr 0.14×, 0.11×, rate 0.43×, 0.41×. But the quiet traps
//     see moves: 1.00 a repeat on the built-ins, 0.67 on J1–J64 at both
//     base seeds (none before). A clause fails: not adopted; base seed
//     10100 is unused. Why (traces of the quiet on/off traps T1 and T3
//     behind it, base seed 1, two repeats): in an idle gap with nothing
//     on the fabric (every switch reads 0 on every measure) the model
//     prefers another switch by 0.21–0.27, just above δ, and the waiver
//     takes it; the vote count had filtered that preference, which never
//     lasts through the next burst.
//   - The idle waiver only towards a switch that reads less loaded than
//     the current one (GateConfig.Idle as changed in session 32; written
//     before any judged run of it). Looked at before this rule: the
//     measurements of the entry above and the traces of T1, T3 and O8
//     behind it, nothing else. At an idle sample the flow itself loads
//     its switch with nothing, so what the switch reads is its neighbours':
//     the waiver now applies only when the destination reads at most the
//     current switch's value on every congestion measure and less on one
//     (TxRate, OverflowRate, FlowCount, ElephantRate, QueueBytes:
//     Decision.Relieves, the comparison Pareto makes between destinations
//     made against the current switch). An empty fabric gives no such
//     destination, a crowd on the flow's switch does. It compares
//     switches and holds no threshold. The rule: models/gate-testbed.json
//     with "idle": true, nothing else changed, judged by mk/judge.sh
//     behind the committed model and adopted by the clauses and counts of
//     the entries above (a development count lower than 8 with every
//     clause, no quiet trap with a move among them, then the four
//     retrained fits build/m31s1…s4 together fewer than 70); if adopted,
//     recorded in the committed model (proflow gate; same weights) and the
//     held-out families run at base seed 10100, unused.
//     Measured (mk/judge.sh behind the committed model,
//     build/j32-idle2): development count 5 (D7 at both base seeds,
//     D6x3-11, -44, D16x3-13, as before; no on/off built-in worse than its
//     strongest rule), every clause holding: the bulk built-ins and S6's
//     variants behind nowhere, no quiet trap with a move (0.00 on the
//     built-ins and on J1–J64 at both base seeds), J1–J64 rr 0.14× and
//     0.11×, rate 0.43× and 0.41×; the on/off built-ins 13.9 s against
//     throughput-drop's 15.4 (0.91× [0.74×, 1.00×]; 39.2 s, 2.55×, before),
//     J1–J64 on/off 0.96× and 0.97×. Lower than 8: on to the four fits.
//     The four fits behind it (build/j32-idle2, build/j32-idle2-m31s2…s4):
//     5 + 19 + 3 + 24 = 51 against 70 (each fit's bulk scenarios behind
//     as before; no on/off built-in worse than its strongest rule in any,
//     3 + 6 + 5 + 5 before; no quiet-trap move in any; J1–J64 rate 0.37×–
//     0.46×). Adopted: models/gate-testbed.json gains "idle": true and the
//     committed model records it (proflow gate; the weights unchanged).
//     The held-out families at base seed 10100 are in docs/reproduction.md
//     ("Moves in the flow's idle gaps (session 32)").
//   - The waiver extended to application-limited samples (session 32;
//     written before any judged run of it). Looked at before this rule:
//     the development kinds family's rate rows behind the adopted gate
//     (build/j32-idle2/devkinds-1 and -1000: the agent's SLO seconds in a
//     scenario that needs a move are about one move's cost, 2–6 s, made
//     10 s after the crowd arrives) and J47's trace (base seed 1, one
//     repeat: two elephants on the flow's switch for a visit static rides
//     out; the agent's move at 10 s costs the rate flow 3.5 s), and
//     the held-out floor at base seed 10100 (docs/reproduction.md), which
//     picks moves at 0–44.5 s after congestion starts, most of them within
//     13 s, at 1.0–4.8 s each, where the agent's moves cost 1.5–9.0 s: a
//     move of a constant-bitrate flow costs it its recovery, and the
//     hypothesis of this rule is that an earlier move costs less (not
//     measured: a retransmission timeout under H-move would grow with the
//     queue a crowd builds on the path). The
//     rule: GateConfig.Idle's waiver also at a sample where the flow was
//     application-limited for at least half the interval (its demand, not
//     the network, set its rate), towards a destination that reads less
//     loaded than the current switch, margin and cooldown kept
//     (GateConfig.Limited); bulk flows are never application-limited and
//     decide as without it. Judged by mk/judge.sh behind the committed
//     model and adopted only if the development count stays 5 or lower,
//     no quiet trap sees a move, the J1–J64 rr ratios stay at or under
//     0.5× and the J1–J64 rate ratios fall at both base seeds, and then
//     if the four fits together count no more than 51; if adopted,
//     recorded in the committed model and the held-out kinds family run
//     at base seed 10200, unused.
//     Measured (mk/judge.sh behind the committed model, build/j32-limited):
//     the development count 17 (the same five bulk scenarios, and now
//     every on/off built-in, O1–O12, worse than its strongest rule: 65.3 s
//     against throughput-drop's 15.4; an on/off flow is
//     application-limited within its bursts too, and the waiver moved it
//     there, where a move costs the burst its window), a move in the rr
//     quiet trap (1.00 a repeat), and the J1–J64 rate ratios up, not down
//     (0.48× and 0.47× against 0.43× and 0.41×; worse than their
//     strongest rule J40, J44 at base seed 1 and J37, J44, J51 at 1000).
//     Not adopted, and the option
//     (GateConfig.Limited) removed again; base seed 10200 is unused.
//   - A step within the margin holds the streak (GateConfig.Hold, session
//     32; written before any judged run of it). Looked at before this
//     rule: the second development draws at 6 and 16 switches behind the
//     adopted gate (`evaluate -profile testbed-6x3 -scenarios dev2`, and
//     16x3, base seed 1, 2 repeats, build/e32-6x3 and build/e32-16x3:
//     E6x3-1 and E6x3-10 4.5–4.8% behind crowd, E16x3-15 2.4% behind
//     crowd, E16x3-26 3.3% behind static), and E6x3-1's trace (one repeat):
//     heavy traffic on the flow's switch from 0.5 s after congestion starts,
//     the candidate winning 17 steps in a row, then one step at ΔQ 0.20
//     (not above δ) resets the count; the flow collapses at 11.5 s, 5
//     votes into the new count, and distress moves it at 12 s, where crowd
//     moved at 10.5 s. δ filters the jitter of the learned
//     margins; a step whose candidate still beats the current switch, but
//     by no more than δ, is within that jitter: it neither confirms the
//     move nor contradicts it. Hold keeps the streak through such a step
//     without adding a vote (the previous candidate still scoring above
//     the current switch); a step where the current switch scores at
//     least as high as every destination still resets it. It holds no
//     threshold of its own. The rule: models/gate-testbed.json with "hold":
//     true, nothing else changed, judged by mk/judge.sh behind the
//     committed model and adopted if the development count is lower than
//     5 with every clause of the entries above (no quiet-trap move, J1–J64
//     rr and rate ratios at or under 0.5× at both base seeds, no on/off
//     built-in worse than its strongest rule) and E6x3/E16x3 at base seed 1
//     have no more than the 4 scenarios behind they have now; then if the
//     four fits together count fewer than 51. If adopted, recorded in the
//     committed model and the held-out families run at base seed 10200,
//     unused.
//     Measured (behind the committed model, build/j32-hold): development
//     count 4 (D7 at both base seeds, D6x3-11, -44; D16x3-13 no longer
//     behind), every clause holding (no quiet-trap move, J1–J64 rr 0.14×
//     and 0.11×, rate 0.43× and 0.41×, no on/off built-in worse than its
//     strongest rule; the kinds rows as behind the gate without Hold), and
//     E6x3/E16x3 at base seed 1 behind in 2 (E6x3-10, E16x3-26; E6x3-1
//     and E16x3-15 no longer). Lower than 5: on to the four fits.
//     The four fits behind it (build/j32-hold, build/j32-hold-m31s2…s4):
//     4 + 23 + 3 + 21 = 51, not fewer than the 51 behind the adopted gate
//     (5 + 19 + 3 + 24): the seed-2 fit gains E4, C1 at both base seeds
//     and C2 (C1 and C2 are the capped crowds), the seed-4 fit
//     loses D37, E39 and D6x3-4 from its list. Not adopted; GateConfig.Hold
//     stays, off in every committed gate; base seed 10200 is unused.
//   - The second sized development draws join the judge (session 32).
//     mk/judge.sh now also runs E6x3-1…64 and E16x3-1…64 (`-scenarios
//     dev2` at 6 and 16 switches, base seed 1): the first sized families
//     hardly show the loss of the held-out ones at those sizes (a full
//     crowd the crowd rule leaves at once and the agent only at the
//     collapse), the second draws do (E6x3-1, E6x3-10, E16x3-15). A
//     development count from here on includes their rows: the committed
//     model's, behind the adopted gate, is 5 + 4 = 9 (E6x3-1, -10,
//     E16x3-15, -26; build/e32-6x3, build/e32-16x3); the four fits'
//     rows there were not measured.
//   - Remembered votes and the reserve's hold beside the idle waiver
//     (GateConfig.Reserve with Drain, session 33; written before any
//     judged run of it). Behind the adopted gate the losses left are
//     timing losses the reserve's estimate speaks to: J47's rate flow
//     moved as the 20th vote lands at the last sample of a 10 s burst its
//     switch's reserve carries (2.0–3.5 s missed where staying misses
//     none), and E6x3-10, a crowd that visits the flow's switch twice for
//     about 3 s before it stays, whose first visits' votes are forgotten
//     (the session 32 entries above). Reserve with Drain keeps such votes
//     while the switch has not earned back what the visits took and holds
//     the move while the bucket lasts; it was rejected twice for its
//     on/off losses (sessions 30 and 31), both times behind a model
//     trained on episodes where every move of an on/off flow cost a
//     timeout and behind a gate without the idle waiver. Both have changed
//     since: the committed model was trained on the corrected move model,
//     and the idle waiver moves on/off flows in their gaps. So that the
//     hold does not delay a move that costs nothing, Drain now also leaves
//     alone a move the idle waiver admits (policy.GateConfig.Drain; it
//     changes nothing in any committed gate, none of which holds). Looked
//     at before this rule: the judge summary of the committed model
//     (build/j32-final), the per-scenario J1–J64 rate rows behind it (the
//     agent's missed seconds are mostly the 2.0 s a move costs, made 10 s
//     after congestion starts) and the entries above; nothing held out.
//     The rule: three variants of models/gate-testbed.json, each judged by
//     mk/judge.sh behind the committed model: (a) with "reserve": true and
//     "drain": {"depth": 53.3, "horizon": 2 s}; (b) as (a) with the
//     drain's "waive": true; (c) as (a) with "hold": true. A variant is
//     eligible if the bulk built-ins stay behind nowhere, no S6 file falls
//     behind, no quiet trap sees a move, the J1–J64 rr and rate ratios
//     stay at or under 0.5× at both base seeds, and its development count
//     (the rows behind, E6x3 and E16x3 included, plus the on/off built-ins
//     worse than their strongest rule) is lower than the adopted gate's 9;
//     of the eligible ones the lowest count is taken (a tie goes to the
//     lower J1–J64 rate ratios summed over both base seeds). It is adopted
//     if the four pinned fits (build/m31s1…s4) together count fewer behind
//     it than behind the adopted gate on the same basis (the seed-2…4
//     fits' E6x3 and E16x3 rows behind the adopted gate measured for this,
//     build/e33base-m31s2…s4). If adopted, it is recorded in the committed
//     model (proflow gate; same weights) and the held-out families run at
//     base seed 10200, unused.
//     Measured (mk/judge.sh behind the committed model, about 4 min each;
//     build/j33a, build/j33b, build/j33c): (a) count 8 (D7 at both base
//     seeds, D6x3-11, -58, D16x3-7, E6x3-41, -47, E16x3-26; D6x3-44,
//     D16x3-13, E6x3-1, -10 and E16x3-15 no longer behind), every clause
//     holding: no bulk built-in or S6 file behind, no quiet-trap move, no
//     on/off built-in worse than its strongest rule (the kind built-ins'
//     rows as behind the adopted gate: rr 0.10×, rate 0.47×, on/off
//     0.91×), J1–J64 rr 0.14× and 0.11×, rate 0.39× and 0.42× (0.43× and
//     0.41× before; J47's needless move gone, 3.5 s and 2.0 s, but J44's
//     rate flow, whose switch's bucket the estimate empties with no
//     collapse, now moves at 27 s and misses 4.5–5.8 s where staying
//     misses none). (b) count 9 (D16x3-57 as well): not eligible. (c) the
//     same summary as (a), row for row (by the code, with Reserve a step
//     within the margin already keeps the remembered votes while the
//     switch has not refilled, so Hold can add little; not traced); the
//     stated tie-break does not separate them, and (a), the gate with the
//     fewer settings, is taken. The four fits behind (a) (build/j33a,
//     build/j33a-m31s2…s4): 8 + 20 + 10 + 27 = 65 against 9 + 24 + 6 + 27
//     = 66 behind the adopted gate (its seed-2…4 rows 19, 3 and 24 from
//     session 32 plus their E6x3 and E16x3 rows, 5, 3 and 3, measured for
//     this: build/e33base-m31s2…s4). Fewer, by one: adopted, by the rule
//     as written. The seed-3 fit loses E10 at both base seeds and the
//     sized losses move from scenario to scenario as they did behind every
//     timing rule before ("The reserve's end waives the votes" above).
//     Held out, after the adoption (base seed 10200, never used before;
//     docs/reproduction.md, "Remembered votes and the reserve's hold"):
//     K1–K64 rate 0.36× [0.29×, 0.42×], rr 0.16× [0.05×, 0.29×] (p99 247
//     against 893 ms), on/off 0.93× (alone 0.92×), no quiet-trap move;
//     H1–H64 behind in H34 (4.2%); at 6 and 16 switches behind in
//     H6x3-25 alone over the four sized families. The gate before it, run
//     beside at the same seed: rate 0.51× [0.32×, 0.93×], rr 0.10×, H34
//     (2.3%), and seven sized scenarios behind. Base seed 10200 is now
//     used; 10300 and above are not.
//   - The reserve's hold with a shorter horizon (GateConfig.Drain.Horizon,
//     session 33; written after the adoption above and before any judged
//     run of it). Looked at before this rule: the traces of the
//     development losses behind the adopted gate (`evaluate -traces`,
//     base seed 1, one repeat; `proflow trace`): D6x3-11, -58, D16x3-7,
//     E6x3-47 and E16x3-26 are one pattern, four flows at full rate on
//     the flow's switch for 10 s (load 5.6–6.1), the 20th vote landing at
//     the burst's last sample, and the hold letting the move through
//     there because the estimate gives the bucket 0.8–1.3 s, less than
//     the 2 s horizon; the burst leaves at the next sample and the flow,
//     staying, would have lost nothing (static is the best rule in each).
//     D7's move is the forecast's. Read too, after the adoption above and
//     disclosed here because it is part of why this was tried: the
//     held-out H6x3-25 at base seed 10200 behind the adopted gate is the
//     same pattern (a second 10 s burst, 1.3 s left by the estimate at
//     the move); its design recurs at every base seed, so a held-out run
//     cannot confirm this rule on it. The horizon is the lead a held move
//     needs to land before the flow suffers; the next decision comes one
//     interval (0.5 s) later, so a held move needs more than one interval
//     of estimate left to be safe to hold, and the 2 s of session 29 added
//     a margin for the estimate's error. The rule: models/gate-testbed.json
//     with the drain's horizon 1 s (d1) and 0.5 s (d05), nothing else
//     changed, each judged by mk/judge.sh behind the committed model with
//     the clauses of the entry above; eligible if every clause holds and
//     the development count is lower than the adopted gate's 8; the lower
//     count taken (a tie to the longer horizon, the safer). Adopted if the
//     four pinned fits together count fewer than 65 behind it; then
//     recorded in the committed model and the held-out families run at
//     base seed 10300, unused, with the adopted gate beside.
//     Measured (mk/judge.sh behind the committed model; build/j33d1,
//     build/j33d05): 1 s counts 18 (the built-ins S5 and S7 behind at both
//     base seeds, D45, D51, E6x3-9, -50, E16x3-18, -43 and more; of the
//     five above only D6x3-58 and D16x3-7 no longer behind) and fails the
//     clauses (J1–J64 rate 0.61× and 0.56×, rr 0.33× and 0.45×; the kind
//     built-ins' rate 0.58×); 0.5 s counts 112 (every S6 file family, the
//     sized families in dozens; rate 1.06× the best rule). Neither is
//     eligible; the horizon stays 2 s and base seed 10300 is unused. What
//     it shows: where the crowd stays (S5, S7), a move held until the
//     estimate gives the bucket 1 s comes too late for the flow, so the
//     2 s margin is what moves made on the estimate need, and a 10 s burst
//     that leaves within that margin costs the flow a needless move. Why
//     1 s is too little was not traced (one candidate: the estimate reads
//     the counted bucket, and the testbed's flow collapses when its
//     uncounted reserve runs out).
//   - The reserve's depth from the development collapses (GateConfig.Drain
//     Depth, session 33; written after the two entries above and before
//     any judged run of it). Looked at before this rule: S5's trace behind
//     the 1 s horizon (base seed 1: the flow collapses at a deficit of 50.9
//     s of C while the estimate, with the counted depth 53.3, still gave
//     the bucket 1.1 s) and static's traces of D1–D64 (base seed 1, one
//     repeat): the 34 flows that collapse do so at 50.1–52.1 s of C
//     (median 50.8), so on the testbed profile the depth at which a flow
//     suffers is about 50 s, not the counted bucket's 53.3 (its uncounted
//     limiter runs out first). With the depth at the least of them, 50.1,
//     the estimate is no longer late, and the horizon only needs the lead
//     of one or two decisions. Read before this rule as well, and
//     disclosed: H6x3-25's trace and `proflow bound` at base seed 10200
//     (the entry above and docs/reproduction.md), so a held-out run cannot
//     confirm this rule on that scenario's design. The rule:
//     models/gate-testbed.json with the
//     drain's depth 50.1 and horizon 1 s (e1) or 0.5 s (e05), nothing else
//     changed, judged as in "The reserve's hold with a shorter horizon"
//     (eligible if every clause holds and the count is lower than 8; the
//     lower count taken, a tie to the longer horizon; adopted if the four
//     fits together count fewer than 65; then recorded and held out at
//     base seed 10300, unused, with the adopted gate beside).
//     Measured (mk/judge.sh behind the committed model; build/j33e1,
//     build/j33e05): e1 counts 8, the same rows as the adopted gate (the
//     10 s bursts leave within a second of the depth too), every clause
//     holding and J1–J64 rate 0.37× at both base seeds: not lower than 8,
//     not eligible. e05 counts 7 (D7 at both base seeds, D6x3-11, D16x3-7,
//     E6x3-41, -47, E16x3-26; D6x3-58 no longer behind), every clause
//     holding (no quiet-trap move, no on/off built-in worse, J1–J64 rr
//     0.14× and 0.11×, rate 0.37× and 0.42×; the kind built-ins rr 0.10×,
//     rate 0.45×): eligible. The four fits behind e05 (build/j33e05,
//     build/j33e05-m31s2…s4): 7 + 18 + 9 + 25 = 59 against 65 (8 + 20 +
//     10 + 27) behind the adopted gate: adopted, models/gate-testbed.json
//     and the committed model's recorded gate with depth 50.1 and horizon
//     0.5 s (same weights). Every fit loses D6x3-58 from its list; the
//     10 s-burst losses D6x3-11, D16x3-7, E6x3-47 and E16x3-26 stay, as
//     the measured spread said they might (their bursts leave less than
//     one sample before the depth).
//     Held out, after the adoption (base seed 10300, never used before;
//     docs/reproduction.md, "Remembered votes and the reserve's hold"):
//     H1–H64 behind in none (the gate before it, beside: H34, 3.1%); at
//     6 and 16 switches behind in H6x3-25 alone, under both gates; K1–K64
//     rate 0.36× [0.29×, 0.42×], rr 0.15× (p99 232 against 906 ms), on/off
//     0.91× (alone 29.3 s against the rule's 31.3), no quiet-trap move.
//     Base seed 10300 is now used; 10400 and above are not.
//   - The reserve's rate from the development collapses (GateConfig.Drain
//     Rate, session 34; written before any judged run of it). Looked at
//     before this rule: static's traces of D1–D64 and E1–E64 (base seed 1,
//     one repeat; `evaluate -scenarios dev` and `dev2 -policies static
//     -traces`): 69 flows collapse (the first sample after congestion
//     starts below half the mean of the 16 samples before it), and the
//     deficit at that sample, the integral of load − r from the episode's
//     start clipped at 0, spreads over 3.18 s of C at r = 1 (50.08–53.26),
//     2.47 at 1.01, 1.75 at 1.02, 1.15 at 1.03, 1.07 at 1.04 (49.59–50.66),
//     1.44 at 1.05, 2.15 at 1.06, 3.58 at 1.08. The reserve that runs out
//     is served near 1.04 C, not at C: a load between C and that rate
//     refills it, and the gate's estimate at r = 1 overstates its deficit
//     by the integral of what lies between, so the flows that spent long at
//     such loads (two bursts with the flow alone between) collapse later
//     than the estimate says, and the move comes a sample early. (As
//     written, this sentence also named D6x3-11, D16x3-7, E6x3-47 and
//     E16x3-26 as such flows; that was not traced, and D6x3-11's trace
//     read after the judged runs is one burst onto a full reserve.) Read before this rule as well, and disclosed:
//     H6x3-25's static and agent traces at base seed 10200 (its burst
//     lasts through the sample at 40.0 s, the agent moves at 39.5 s), so a
//     held-out run cannot confirm this rule on that scenario's design. The
//     rule: r is the value on the grid 1.00, 1.01, …, 1.10 with the least
//     spread (1.04), the depth the least deficit at collapse under it
//     rounded down to 0.1 s (49.5); models/gate-testbed.json with the
//     drain's depth 49.5, rate 1.04 and horizon 0.5 s (r05) or 0.25 s
//     (r025), nothing else changed, judged by mk/judge.sh behind the
//     committed model with the clauses of "Remembered votes and the
//     reserve's hold" (bulk built-ins and S6 files behind nowhere, no
//     quiet-trap move, J1–J64 rr and rate ratios at or under 0.5× at both
//     base seeds); eligible if every clause holds and the count is lower
//     than the adopted gate's 7; the lower count taken (a tie to the
//     longer horizon); adopted if the four fits together count fewer than
//     59; then recorded in the committed model (same weights) and the
//     held-out families run at base seed 10400, unused, with the adopted
//     gate beside.
//     Measured (mk/judge.sh behind the committed model; build/j34r05,
//     build/j34r025; the fit is `proflow reserve -in D,E` over those
//     traces, docs/reserve-fit.png): r05 counts 6 (D7 at both base seeds,
//     D6x3-11, E6x3-41, -47, E16x3-26; D16x3-7 no longer behind), every
//     clause holding (no bulk built-in or S6 file behind, no quiet-trap
//     move, no on/off built-in worse, J1–J64 rr 0.14× and 0.11×, rate
//     0.40× and 0.41×); r025 counts 6 too (D7 ×2, D6x3-11, E6x3-17
//     (2.0%), -41, -47; J1–J64 rate 0.44× and 0.42×), eligible: a tie,
//     taken by the rule to the longer horizon, r05. The four fits behind
//     r05 (build/j34r05 and build/j34r05-m34s2…s4, the seed-2…4 fits
//     trained again by `make model MODEL_SEED=N MODEL_DIR=build/m34sN`):
//     6 + 15 + 6 + 22 = 49 against 59 (7 + 18 + 9 + 25) behind the adopted
//     gate; the retrained fits count behind that gate what session 33's
//     did (18, 9 and 25 measured again, build/j34base-m34s2…s4):
//     adopted, models/gate-testbed.json and the committed model's recorded
//     gate with the drain's depth 49.5, rate 1.04, horizon 0.5 s (same
//     weights). Every fit loses D16x3-7 from its list, and fits 2–4 D7; the
//     10 s-burst losses D6x3-11, E6x3-47 and E16x3-26 stay behind every
//     fit: their bursts leave within the sample in which the estimate,
//     now at the reserve's own rate, still says it runs out.
//     Held out, after the adoption (base seed 10400, never used before;
//     docs/reproduction.md, "The reserve's rate"), with the gate before
//     it beside: H1–H64 1.04× [1.02×, 1.06×] the per-scenario best rule,
//     behind in H34 alone (2.2%, as behind the gate before it); at 6 and
//     16 switches behind in H6x3-25 alone over the four sized families
//     (3.2%; before, 3.4%): its move now comes at 40.0 s, one sample
//     later than the gate before it moved in the trace read at base seed
//     10200, and the burst leaves before the next; K1–K64 rr 0.12×
//     [0.05×, 0.20×] (p99 117 against 1,001 ms), rate 0.38× [0.31×,
//     0.45×] (before, 0.37×), on/off 0.92× (28.8 s; alone 29.3), no
//     quiet-trap move. Base seed 10400 is now used; 10500 and above are
//     not.
//   - The reserve's hold until the estimate's end (GateConfig.Drain
//     Horizon, session 34; written after the entry above and its held-out
//     run, before any judged run of this). Looked at before this rule: the
//     entry above (r025 was level with r05, the losses moving), D6x3-11's
//     agent trace behind r05 (base seed 1: the 20th vote at the burst's
//     last sample, 50.0 s, where the estimate gives the reserve about 0.1
//     s at load 6, worked out by hand from the trace's deficit column,
//     49.4 s of C at r = 1, less 0.04 C over the 10 s burst; the burst
//     leaves before the next sample), and, disclosed,
//     H6x3-25 behind the held-out run above (the same pattern at 40.0 s)
//     and its `proflow bound` of session 33 (a policy that stayed there
//     and moved one sample later where the burst stays was level in every
//     twin). With the estimate at the reserve's own rate and depth the
//     least deficit at collapse, a move at the first sample at which the
//     estimate says the reserve is spent comes at most about a sample
//     after the collapse of the flows that hold least; whether that costs
//     less than the needless moves of bursts that leave within that sample
//     is what the judge measures. The rule: models/gate-testbed.json with
//     the drain's horizon 1 ms (r0: in effect, hold until the estimate
//     says the reserve is spent), nothing else changed, judged by
//     mk/judge.sh behind the committed model with the clauses of the
//     entry above; eligible if every clause holds and the count is lower
//     than the adopted gate's 6; adopted if the four fits together count
//     fewer than 49; then recorded and held out at base seed 10500,
//     unused, with the adopted gate beside.
//     Measured (mk/judge.sh behind the committed model; build/j34r0): r0
//     counts 46 (D5, D7, D18, D34, E2, E29, E47, E56, two S6 files, 9 of
//     D6x3, 7 of D16x3, 7 of E6x3, 8 of E16x3) and fails a clause (J1–J64
//     rate 0.71× and 0.65×, rr 0.28× and 0.20×; the kind built-ins' rate
//     0.81×): not eligible, and base seed 10500 is unused. Of the three
//     10 s bursts behind r05 it holds D6x3-11 and E16x3-26, not E6x3-47,
//     and where the crowd stays the move one sample after the estimate's
//     end costs the flow what the collapse took, in dozens of scenarios.
//     With the estimate within about 0.2 s of the collapse (the spread
//     above at a burst's load), the horizon's three values, 0.5 s, 0.25 s
//     and none, count 6, 6 and 46: the sample-wide losses that remain are
//     the price of deciding every 500 ms, not of the estimate.
//   - The reserve's recheck between steps (GateConfig.Drain Recheck,
//     session 35; written before any judged run of it). Looked at before
//     this rule: the entries above; static's traces of D1–D64 and E1–E64
//     at base seed 1 on the testbed profile sampled every 100 ms instead
//     of 500 ms (a profile file with interval 100ms; `proflow reserve`
//     over them fits rate 1.04 again, the least deficit at collapse 49.83
//     s of C, spread 0.83); static's traces of D6x3-11, E6x3-47 and
//     E16x3-26 at 100 ms (base seed 1): each 10 s burst ends on a 500 ms
//     sample (70.0 s, 67.0 s and 50.0 s from the episode's start), with
//     the estimate at depth 49.5 giving the reserve about 0.1–0.3 s at
//     that sample, so the sample that reads the burst's last half second
//     is the one at which the move goes ahead, and any reading after it
//     finds the burst gone; and, while the mechanism was written, one
//     agent run of D6x3-11 at base seed 1 to see that a deferred move is
//     rechecked. (As written, the sentence before gave all three 0.1–0.3
//     s; worked out after the judged runs from the same 100 ms traces,
//     the integral of load − 1.04 from the episode's start clipped at 0,
//     the estimate gives D6x3-11 0.24 s and E16x3-26 0.17 s at the
//     burst's last sample, and E6x3-47 none: by it the reserve had run
//     out about 0.14 s before its burst ended, with no collapse.)
//     Disclosed: the mechanism is the next step session 34's closing note
//     named, and that note was prompted by H6x3-25's held-out trace at
//     base seed 10400 (read after that session's adoption, disclosed in
//     the entry above); the leads, the eligibility and the adoption below
//     were judged on the development checks alone. The mechanism: a move
//     the horizon lets go ahead while the estimate still gives the
//     reserve more than the lead is deferred to
//     one reading that lead before the estimate's end (Telemetry Peek,
//     the rates since the step's sample), and goes ahead only if the
//     reserve, advanced over that reading, still runs out within the
//     horizon. The rule: models/gate-testbed.json with the drain's recheck
//     50 ms (rc50) or 100 ms (rc100), nothing else changed, judged by
//     mk/judge.sh behind the committed model with the clauses of "The
//     reserve's rate" entry; eligible if every clause holds and the count
//     is lower than the adopted gate's 6; the lower count taken (a tie to
//     the longer lead, which moves earlier); adopted if the four fits
//     together count fewer than 49; then recorded in the committed model
//     (same weights) and the held-out families run at base seed 10500,
//     unused, with the adopted gate beside.
//     Measured (mk/judge.sh behind the committed model; build/j35rc50,
//     build/j35rc100): rc50 counts 4 (D7 at both base seeds, E6x3-41,
//     -47) and rc100 counts 4, the same four, every clause holding for both
//     (no bulk built-in or S6 file behind, no quiet-trap move, no on/off
//     built-in worse; J1–J64 rr 0.14× and 0.13×, rate 0.41× and 0.39× for
//     rc50, rr 0.15× and 0.12×, rate 0.42× and 0.42× for rc100): a tie,
//     taken by the rule to the longer lead, rc100. D6x3-11 and E16x3-26
//     are no longer behind: the recheck finds their bursts gone. E6x3-47
//     stays (3.2%): its burst leaves 0.2 s after the recheck, within the
//     estimate's spread (the recheck at 46.8 s reads load 5.77 and moves;
//     read after the judged runs, `evaluate -profile testbed-6x3
//     -scenarios E6x3-47 -policies static,agent -repeats 1 -seed 1 -traces`
//     behind rc100). The four fits behind rc100 (build/j35rc100-m34s2…s4):
//     4 + 13 + 3 + 19 = 39 against 49 (6 + 15 + 6 + 22) behind the
//     adopted gate; every fit loses D6x3-11, E16x3-26 and D16x3-57 where it
//     had them: adopted, models/gate-testbed.json and the committed
//     model's recorded gate with the drain's recheck 100 ms (same weights).
//     Held out, after the adoption (base seed 10500, never used before,
//     with the gate before it beside, and 10600, never used before;
//     docs/reproduction.md, "The reserve's recheck between steps"):
//     H1–H64 1.03× [1.02×, 1.05×] and 1.04× [1.02×, 1.06×], behind in
//     H34 alone (2.4% and 2.1%, a tie by its interval; the gate before it
//     level there at 10500); at 6 and 16 switches, at the testbed's rate
//     and at 2× and 0.5× of it, behind in none at either seed (the gate
//     before it: H6x3-25, 3.4%, at 10500); K1–K64 rr 0.09× and 0.08×,
//     rate 0.36× and 0.38×, on/off 0.93× and 0.92×, no quiet-trap move.
//     H34's traces at 10500 behind both gates were read after this held-out
//     run and informed no choice (docs/reproduction.md). Base seeds 10500
//     and 10600 are now used; 10700 and above are not.
//
// EpisodeFromTrace turns any recorded trace (telemetry/trace) into a raw
// Episode, replaying the controller's baseline phase, so a corpus can also
// come from a real fabric (DatasetFromTraces; proflow collect -from-traces).
//
// # Probe
//
// Probe is the Q-network signal analysis of the paper's Fig. 8: synthetic
// states of the protected flow alone on k* at its baseline (measured on the
// simulated fabric by AloneObservations), in which the flow count or the
// overflow rate of k* is swept, and the decision margin
// max_{k≠k*} Q(s,k) − Q(s,k*) read at each point. It only evaluates the
// trained weights: the agent holds no threshold.
//
// # Concurrency
//
// Datasets, configurations and rewards are plain values, safe for concurrent
// reads. A DynamicsModel is not safe for concurrent use (Clone it).
package training
