// Package simdp puts the simulated fabric (package southbound/sim) behind
// the P4Runtime target (package southbound/p4runtime/target): a
// target.Dataplane whose forwarding is a *sim.Fabric, so the p4runtime
// client programs simulated leaves over real gRPC and reads their counters
// as it would read BMv2's.
//
// # Forwarding
//
// Every leaf of the fabric is one P4Runtime device. Leaves describes them
// as the p4runtime client wants them (device IDs, host addresses, host
// ports, one uplink port per aggregation switch), and New maps each leaf's
// ports back to the simulator: host port i is the leaf's i-th host, the
// uplink port at index k of Leaf.Uplinks goes to aggregation switch k.
//
// Every protected flow of the scenario (sim.Fabric.Protected: the one flow
// f_p, or each flow of a many-flow scenario such as M1–M4) is handled
// alike, each by its own 5-tuple:
//
//   - SetPath of a protected flow's forward 5-tuple on its source host's
//     leaf moves the simulated flow (sim.Fabric.Place) to the aggregation
//     switch of that uplink port, at the fabric's current virtual time,
//     with the TCP cost of a reroute the simulator models. A port that is
//     not one of the leaf's uplinks is refused (INVALID_ARGUMENT), so the
//     server rejects the write and nothing moves.
//   - The reverse 5-tuple on the destination host's leaf is recorded and
//     checked: the simulator carries both directions of a host pair on one
//     switch and moves them together with the forward entry, so the reverse
//     entry has no effect of its own. PlacementOf (Placement for the
//     primary flow) reports where each direction's entry points; after a
//     complete placement they agree.
//   - ClearPath of the forward entry (the client's Release or Remove)
//     returns the flow to base forwarding: in the simulator that is the
//     switch the scenario starts that flow on (Scenario.ProtectedSwitch,
//     or its Protected entry's Switch), so deleting the entry moves the
//     flow back there (a reroute, if it was elsewhere).
//   - Any other flow's entries are recorded and have no forwarding effect:
//     the simulator reroutes only its protected flows, and their counters
//     stay at zero.
//
// So a MultiController with the p4runtime client as its BatchEnforcer and
// Telemetry (Observation.FlowIDs) drives a many-flow scenario over gRPC as
// it drives the simulator directly, e.g. proflow serve with the p4runtime
// southbound pointed at a local target.
//
// # Counters
//
// The simulator reports rates per telemetry interval, not counters. The
// data plane integrates the ground-truth sample (sim.Fabric.Truth, no
// measurement noise: switch counters are exact) over virtual time into
// cumulative byte counts, and packet counts as bytes over
// sim.Config.PacketSize (full-size frames). It integrates lazily: each call
// first folds in the samples taken since the previous call. The simulator
// keeps only its latest sample, so the counters are exact when the data
// plane is read at least once per sim.Config.Interval (a controller reads
// every interval); after a longer gap the latest sample's rates stand for
// the whole gap.
//
// What each counter counts, per interval of length Δ:
//
//   - path_select direct counter of a protected flow's forward entry:
//     the flow's frames entering its source leaf, φ·PacketSize/MSS; when
//     the leaf is in L, its protected flows together count μ−λ of that
//     leaf (what its hosts sent minus the congestion traffic), shared in
//     proportion to their φ (for the one flow f_p: exactly μ−λ). This is what a leaf's counter sees: frames,
//     retransmissions included, not the goodput φ the simulator reports.
//     The reverse entry counts zero: the simulator models no bytes on the
//     reverse path (ACKs).
//   - port_rx of a host port: what that host sent into the leaf; port_tx of
//     an uplink: what the leaf sent toward that switch. For a leaf in L
//     the totals are exact: the host ports add up to μ (the protected flows
//     plus λ) and the uplinks to μ. The split of a leaf's congestion
//     traffic λ among its congester hosts and their switches is estimated
//     from the scenario (which host sends through which switch during the
//     interval; see sim.Scenario): each congester is given its streams'
//     share of its switch's transmit rate ρ (capped at its StreamCap), and
//     the shares of a leaf are scaled to add up to its λ. Congesters on
//     leaves outside L keep their unscaled share.
//   - port_rx of an uplink and port_tx of a host port (traffic arriving
//     from the aggregation layer): switch k's transmit rate ρ_k split among
//     the flows through k — each protected flow gets its delivered frames
//     φ·PacketSize/MSS, the congesters share the rest by their sending
//     rates — credited to each flow's destination leaf and host.
//
// So the p4runtime client's signals over this data plane compare with the
// simulator's as follows: λ, μ and F are equal; φ is frames entering the
// leaf rather than goodput (1514/1448 times more, plus retransmissions);
// and TxRate ρ_k is the load the leaves offer to switch k (port_tx of their
// uplinks) where the simulator's ρ_k is what left k's shaped uplinks — they
// differ by what k's buckets drop.
//
// # Protected flows' switches
//
// The data plane attributes a sample's interval to the switch each
// protected flow was on when the previous sample was integrated, and integrates
// before every SetPath and ClearPath, so placements made through it are
// attributed exactly when they happen at sample boundaries (a controller
// stepping after sim.Fabric.Advance). Move the flow through the data plane,
// not with sim.Fabric.Place directly, or the first sample after such a move
// is attributed to the old switch.
//
// # Example
//
//	fab, _ := sim.New(sim.DefaultConfig(), sc, seed)
//	leaves := simdp.Leaves(fab.Config(), lis.Addr().String())
//	dp, _ := simdp.New(fab, leaves)
//	srv, _ := target.New(dp, dp.Devices(), nil)
//	gs := grpc.NewServer()
//	srv.Register(gs)
//	go gs.Serve(lis)
//	// p4runtime.Dial with Config.Leaves = leaves and Config.Clock = fab.Clock()
//
// examples/p4fabric runs a whole episode this way and compares it with the
// same episode run directly on the simulator.
//
// # Concurrency
//
// A Dataplane is safe for concurrent use, with the gRPC server's handlers
// and with sim.Fabric.Advance on another goroutine; each method holds the
// data plane's lock and then the fabric's.
package simdp
