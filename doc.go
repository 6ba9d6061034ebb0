// Package proflow keeps a performance-sensitive flow healthy in a
// leaf/aggregation datacenter fabric by moving it to another aggregation
// switch before congestion degrades it: the ProFlow method ("RL-Driven and
// Performance-Aware Proactive Flow Placement in Datacenter Networks", 2026).
//
// # The loop
//
// Every interval (500 ms by default) a Controller runs one step:
//
//	Telemetry.Collect ─▶ Observation ─▶ StateEncoder.Encode ─▶ State ─▶ Policy.Score
//	      ▲                                                                │
//	      │                                                   Gate.Admit (δ, W votes, cooldown)
//	  the fabric ◀─────────────── Enforcer.Place(flow, switch) ◀──────────┘
//
// Telemetry reads per-switch transmit, overflow, flow-count and elephant
// rates, per-leaf rates and the protected flow's throughput (Observation).
// The StateEncoder turns them into the state vector of the paper (package
// telemetry provides the default). A Policy scores every aggregation switch
// (package policy: the learned Q-network agent and the static, reactive and
// crowd baselines). The Gate admits a move only when the best switch beats
// the current one by more than δ for W consecutive steps outside a cooldown.
// The Enforcer installs the new path for both directions (packages under
// southbound: OpenFlow 1.3, P4Runtime and the simulated fabric).
//
// Every step yields a Decision that says what happened and why: the scores,
// ΔQ, the gate's votes and cooldown, and, when the placement was held, the
// error behind it. Bad input — a telemetry error, a missing switch, NaN,
// infinite or negative rates, a stale sample, an enforcer failure — never
// stops the loop: the controller holds the current placement and reports it.
// Neither does a panic inside a Telemetry, StateEncoder, Policy, Gate or
// Enforcer method that the controller calls: it recovers the panic, holds
// the placement, and reports a *PanicError naming the method, the
// collaborator's type and the stack as the error of that step (or of
// NewController, Reset or Reconcile, if it happened there). A panic in a
// goroutine of the collaborator's own cannot be recovered by anyone but it.
//
// NewController refuses collaborators that cannot work: nil, and typed nils
// such as the nil *policy.Agent that policy.LoadModel returns with its
// error. An Enforcer that is a FlowValidator (the OpenFlow and P4Runtime
// southbounds are) checks the protected flow's hosts there too, so a flow
// that is not between two leaves of the fabric fails at once, not at the
// first reroute.
//
// # Baselines
//
// The state encoding compares the current switch with per-episode baselines
// (the protected flow's own overflow ξ̄, the flow count n̄ and its throughput
// φ0). A controller learns them in an explicit baseline phase at start, while
// the fabric is uncongested (Config.BaselineWarmup, Config.BaselineSamples),
// or takes them from Config.Baseline.
//
// # Many protected flows
//
// The paper protects one flow and leaves many to future work: "multiple
// performance-sensitive flows may simultaneously compete for limited clean
// paths, requiring the controller to jointly reason about congestion risk,
// path allocation, and flow prioritization". A controller that runs one
// independent agent per flow sends every threatened flow to the same clean
// switch and creates the crowd they were all running from.
//
// A MultiController protects a set of ProtectedFlow values, each with a
// weight, that may change while it runs (AddFlow, RemoveFlow; a change
// takes effect at the next step). Every flow has its own StateEncoder, Gate,
// baseline and, unless it is stateless and shared, Policy, built by
// FlowParts. One step collects one Observation: the controller lists its
// flows in Observation.FlowIDs and the Telemetry fills Observation.Flows.
// Each flow is encoded, scored and gated on a view of the observation whose
// Flow is its own sample, so parts written for one flow serve many. What the
// gates admit then goes through a joint placement step, a JointPlacer:
// Independent (the default) lets every wish through as a controller per flow
// would; Greedy takes wishes by ΔQ × weight and shares each switch's
// headroom (bucket rate C minus its transmit rate) among the protected flows
// moving there, so that a switch takes no more than it has room for and the
// rest fall to their next-best switch or hold (ReasonJoint). The moves go to
// the Enforcer in one PlaceBatch call when it is a BatchEnforcer; a flow the
// enforcer refuses holds alone.
//
// Step returns one Decision per flow and a StepSummary with the step's
// herding: the largest number of protected flows moved onto one switch. The
// metrics (proflow_multi_*) aggregate over flows and carry no flow label, so
// their number of series does not grow with the number of flows. With one
// flow and Independent, a MultiController decides exactly as a Controller.
//
// # Shadow mode
//
// With Config.Shadow (MultiConfig.Shadow) the controller runs every step
// as usual but moves nothing: a move the gate admits (and, for many flows,
// the joint step assigns) is reported with ReasonShadow and its Target,
// logged at Info, counted under that reason in the metrics, and never sent
// to the Enforcer. The flows stay where Reconcile found them, so the
// policy keeps seeing the fabric it would act on, and the gate's cooldown
// runs from each move not made, so each move the gate wants is reported
// once. An operator can watch what the learned agent would do on a live
// fabric, beside whatever moves flows today, before letting it act.
//
// # Cordoned switches
//
// An operator who takes an aggregation switch out of service cordons it
// (Config.Cordoned, or Cordon and SetCordoned of either controller while
// it runs; SetCordoned replaces the whole set at once): no flow is moved there until the cordon is lifted.
// Each step lowers the cordoned switches' scores below every other
// switch's before the gate sees them, so a learned agent's move goes to
// the best switch that is allowed, and the reference policies, which pick
// one destination by a rule of their own, skip them (Input.Cordoned). A
// flow already on a cordoned switch stays until its policy prefers another.
// A step reads the set once, when it begins, and runs with it throughout,
// every flow of a MultiController step alike: a change made while a step
// runs counts from the next step on.
//
// # Embedding
//
// The interfaces are small so a controller can plug in its own parts; each
// one-method interface has a function adapter (TelemetryFunc, PolicyFunc,
// GateFunc, EnforcerFunc). Optional capabilities are separate interfaces:
// Locator (an enforcer that reads back the placement), FlowValidator (an
// enforcer that checks a flow against its fabric), Baseliner, Resetter and
// IntervalBound (a policy trained at one control interval, such as the
// learned agent: NewController refuses it at another Config.Interval) and
// Forecaster (a policy that also forecasts the flow's next sample, such
// as the learned agent with its dynamics model, for a gate that counts
// forecasts: policy.LoadModel attaches the dynamics model when the
// model's gate does).
//
//	encCfg := telemetry.DefaultEncoderConfig(cfg.Topology)
//	agent, gateCfg, err := policy.LoadModel("model.safetensors", encCfg) // the gate its model was evaluated behind
//	if err != nil { ... }
//	enc, err := telemetry.NewEncoder(agent.EncoderConfig()) // the model's state layout
//	if err != nil { ... }
//	gate, err := policy.NewGate(gateCfg)
//	if err != nil { ... }
//	ctrl, err := proflow.NewController(cfg, myTelemetry, enc, agent, gate, myEnforcer)
//	if err != nil { ... }
//	err = ctrl.Run(ctx) // until ctx is cancelled
//
// models.LoadDefault(encCfg) returns the same for the embedded default
// model, which is universal: it serves a fabric of any number of
// aggregation switches and leaves and any bucket rate (package policy,
// Agent; examples/anyfabric runs it on 8 spines).
//
// Time is injected through Config.Clock, so simulations drive Step on
// virtual time. Metrics go to a Prometheus Registerer the caller passes in;
// the package keeps no global state.
//
// # Concurrency
//
// A Controller's Run and Step must be called from one goroutine; Current and
// Baseline are safe from any goroutine. A MultiController's Run and Step
// likewise; its AddFlow, RemoveFlow, Flows, Current and Baseline are safe
// from any goroutine. A Greedy keeps scratch space and serves one controller.
// The value types are not synchronised.
package proflow
