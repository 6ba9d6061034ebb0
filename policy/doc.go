// Package policy holds ProFlow's placement policies and its stability gate.
//
// # Policies
//
// A proflow.Policy scores every aggregation switch as a destination for the
// protected flow; a higher score is a better placement.
//
//   - Agent: the learned Q-network (package qnet), loaded from a model file
//     (LoadModel, ReadModel; package models embeds the default one). Its
//     scores are Q-values computed from the encoded state alone.
//   - Static: never reroutes.
//   - Reactive: reroutes once the overflow rate of the flow's switch has
//     exceeded a threshold (27,000 B/s) for three consecutive samples.
//     The threshold is App. E's at the paper's 200 Mbit/s buckets; on
//     buckets of another rate C use ReactiveConfigFor(C), which scales it
//     by C / 200 Mbit/s (1,350 at 10 Mbit/s), as proflow evaluate, fabric
//     run and fabric evaluate do.
//   - Crowd: reroutes once the flow count of the flow's switch exceeds a
//     threshold (5 flow-table entries).
//   - ThroughputDrop: reroutes once the protected flow's own throughput
//     stays below a fraction (0.9) of its learnt healthy level for two
//     samples, to the least stressed switch.
//   - LatencyThreshold: reroutes once the protected flow's own latency (a
//     request/response flow's completion-time p99, else its RTT p99, else
//     its smoothed RTT) stays above a ratio (1.1 for completion times,
//     1.15 for round trips) of the lowest it has shown for two samples, to
//     the same switch ThroughputDrop picks. A flow whose application asks
//     for less (an onoff flow going idle) does not wait longer, so it does
//     not move one.
//
// ThroughputDrop's and LatencyThreshold's defaults are the testbed
// profile's calibration on congestion-free traffic (policy/eval,
// proflow calibrate); both share a cooldown that doubles for each move made
// before the flow recovered from the previous one.
//
// Each type's documentation states its rule, its destination choice and its
// parameters with their defaults.
//
// # What a model fits
//
// A per-fabric model is trained for one fabric and one control interval.
// Its metadata records the state layout, the switch and leaf counts and the
// encoder's scaling constants (the bucket rate as rate_scale), which
// NewAgent checks against the deployment's encoder (a *ModelMismatchError
// otherwise), the control interval (ModelIntervalKey; 500 ms when absent),
// which proflow.NewController checks against Config.Interval through
// Agent.TrainedInterval, and the gate it was evaluated behind
// (ModelGateKey). For another fabric, train a model for it (make model;
// models/README.md). A universal model (qnet.Metadata.Universal) scores
// each switch from its candidate row with shared weights and fits a fabric
// of any size and bucket rate: NewAgent checks only the layout and the
// scaling with size and rate factored out
// (telemetry.EncoderConfig.ScalingMismatch), and the interval and gate as
// for a per-fabric model.
//
// # The gate
//
// Gate implements proflow.Gate, the three-part stability mechanism of the
// paper: a candidate switch must beat the current one by more than a margin
// δ, win W consecutive steps, and wait out a cooldown after the previous
// reroute. Run the Agent behind the gate its model was evaluated behind,
// which LoadModel returns with it (DefaultGateConfig for a model that
// records none), and the reference policies behind Immediate(), since they
// debounce by themselves:
//
//	agent, gateCfg, err := policy.LoadModel("model.safetensors", encCfg)
//	enc, err := telemetry.NewEncoder(agent.EncoderConfig())
//	gate, err := policy.NewGate(gateCfg)
//	ctrl, err := proflow.NewController(cfg, tel, enc, agent, gate, enf)
//
//	reactive, err := policy.NewReactive(policy.DefaultReactiveConfig())
//	ctrl, err := proflow.NewController(cfg, tel, enc, reactive, policy.Immediate(), enf)
//
// # Concurrency
//
// Static is safe for concurrent use. Reactive, Crowd, ThroughputDrop,
// LatencyThreshold, Gate and Agent keep
// state or buffers between steps and must be used by one controller (one
// goroutine) at a time; Agent.Clone gives another goroutine its own agent
// sharing the weights. Score and Admit do not allocate in the steady state.
package policy
