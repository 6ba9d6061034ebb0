// Package eval evaluates policies on episodes: the simulated fabric's, or
// any recorded in the trace format. It builds the policies the proflow
// commands run (ReferencePolicy, AgentPolicy, OraclePolicy), runs them over
// scenarios and repeats (Sweep), summarises the episodes per scenario and
// policy with intervals (Summarize), and writes the report, CSV files and
// figures (Summary.WriteMarkdown, WriteCSV, WritePlots).
//
// # One protected flow
//
// An Episode holds the protected flow's throughput over the evaluation
// window and its reroutes; a Cell is one policy on one scenario over its
// repeats (mean throughput, reroute times, lead, overflow at the reroute);
// a Comparison sets a policy against the baseline policy across scenarios
// (gain with a scenario-bootstrap interval, paired t-test, lead) and, in
// each scenario, the difference of the two (a ScenarioDiff: repeats paired
// by seed, a t interval and a verdict of better, worse or tie).
//
// # Many protected flows
//
// A scenario that lists several protected flows (sim's M1–M4; MultiFlow)
// runs under a proflow.MultiController instead (RunMultiEpisode,
// MultiSweep): every flow of Fabric.Protected from its initial placement,
// each with its own encoder, baseline, policy and gate built by the same
// PolicySpec as for one flow (the agent's weights shared, its recorded
// gate per flow), in a joint mode: JointIndependent (proflow.Independent,
// every admitted move goes where its gate sends it) or JointGreedy
// (proflow.Greedy, moves share each switch's headroom). Both modes of a
// repeat run the same seed. A MultiEpisode records every flow's true
// goodput (Fabric.FlowTruths) and switch per step, the moves, and each
// step's herding.
//
// SummarizeMulti reports per scenario, policy and mode (MultiCell): each
// flow's mean throughput over the window; their sum; the minimum-flow mean
// (the worst-served flow); Jain's fairness index (Σx)²/(n·Σx²) over the
// per-flow means (1: all equal, 1/n: one flow takes everything); herding,
// the largest number of protected flows moved onto one switch in one step
// (max over the episode and repeats); over budget, the most flows moved onto
// one switch in one step beyond ⌈(C − ρ_k)/demand⌉, the flows its headroom
// in the observation acted on could take at their demand max(φ, φ0) (0:
// no step herded beyond it); and the reroutes. Sum, minimum and Jain are
// means over repeats with their range. A JointComparison gives joint over
// independent placement as ratios of the mean sum and of the mean minimum,
// with bootstrap intervals over the repeats paired by seed, and over the
// scenarios on a row "all"; Worse marks a ratio more than WorseBy below 1.
// The proflow evaluate command writes them as the report's section "Many
// protected flows", multi-*.csv and FigMulti.
//
// With one protected flow and JointIndependent, the MultiController takes
// the single-flow Controller's decisions step for step
// (TestOneFlowMultiControllerMatchesController, on S1–S12, C1 and C2).
//
// # What any policy can do
//
// Bound answers how close any policy can come to the per-scenario best
// rule when it cannot know whether the congestion will stay. A Twin is a
// scenario and a copy of it that a controller cannot tell apart until a
// time (sim.Scenario.EndedAt, FrozenAt); Bound checks that step by step,
// runs every single-move schedule (MovePolicy at every decision time to
// every other switch, and never moving) and the rules on both, and
// returns per twin the least worst-case shortfall behind the best rule
// (TwinBound). FanBound takes a scenario against all its twins at once:
// a policy's move, made at time t, plays out in every twin still the same
// at t, so whatever time it gives up waiting, the crowd may leave right
// after it moved or stay while it waits (the ski-rental question of
// proactive placement). Candidates (the agent) run beside, and WriteFans,
// WriteBound, BoundCSV and WriteBoundPlot write what proflow bound shows.
//
// # Concurrency
//
// Sweeps run their episodes on worker goroutines; every episode depends
// only on its seed, so the results do not depend on the parallelism. A
// Summary or MultiSummary is not safe to change concurrently.
package eval
