// Package p4runtime is proflow's P4Runtime southbound: it moves the
// protected flow between aggregation switches by programming the leaf
// switches (leaf.p4, package p4) and reads their counters as telemetry.
//
// # Placement
//
// Client is a proflow.Enforcer: Place(flow, k) installs, for each direction,
// a path_select entry (exact IPv4 source and destination, ternary protocol
// and ports, action set_uplink) on the leaf where that direction enters the
// fabric, sending it toward the leaf's uplink to aggregation switch k. A
// reroute is one MODIFY per leaf, so each direction switches atomically and
// the old uplink carries the flow until the new one does; both leaves are
// written in parallel and a half-done reroute is rolled back. Entries carry
// Config.Owner in the TableEntry metadata field: the ownership mark. Client
// is also a proflow.Locator: Locate reads the owned entries back, so a
// restarted or newly promoted controller resumes from the switches' real
// state (and repairs a half-placed flow). Client is a proflow.Releaser:
// Release deletes a flow's own entries on both leaves, one atomic DELETE
// each, so that base forwarding carries the flow from the next packet on
// (a flow with nothing installed is no error). A flow and its reverse take
// the same two entries, so one direction per connection is placed: Place
// and PlaceBatch refuse a flow whose reverse the Client has placed.
//
// # Many flows in one step
//
// Client places any number of flows, one path_select entry per direction,
// and is a proflow.BatchEnforcer: PlaceBatch applies a MultiController's
// step as one multi-update Write RPC per leaf (CONTINUE_ON_ERROR), the
// leaves in parallel, after one multi-entity Read per leaf of the entries
// it has not cached yet. Each update is the same atomic INSERT or MODIFY as
// in Place, so every flow is make-before-break. The per-update errors of a
// Write (status UNKNOWN, one p4.v1.Error per update in the details, §12.3)
// go to their flows' error slots as *DeviceError — a full table is
// RESOURCE_EXHAUSTED — and the other updates stand; a flow with one
// direction written and the other refused is restored. A Write or Read
// that fails as a whole fails the flows with a direction on that leaf and
// the batch. leaf.p4's path_select holds 256 entries: at most 256 flow
// directions enter the fabric at one leaf. BenchmarkPlace1000Batch and
// BenchmarkPlace1000OneByOne compare one step of 1,000 flows both ways
// (make bench), on a pipeline with a larger table.
//
// # Telemetry
//
// Client is a proflow.Telemetry: Collect reads per-port counters and the
// path entries' direct counters, one Read RPC per leaf, and turns them into
// the signals a leaf can provide — transmit rates toward each aggregation
// switch, the congestion leaves' ingress and transmit rates, the protected
// flow's throughput. With Observation.FlowIDs set (a MultiController),
// Collect also fills Observation.Flows: each flow's throughput from the
// direct counter of its own forward entry, read by the same one Read per
// leaf; a flow with no entry yet is NaN, a flow outside the fabric an
// error. Overflow rates, flow counts and elephants are not
// visible to a leaf; merge the Client with a source that has them
// (telemetry.Merge), or use Client.Overlay on top of one.
//
// # Sessions
//
// Dial opens one StreamChannel per device and arbitrates with
// Config.ElectionID; the highest election ID is primary and only the primary
// writes. The streams are watched: a broken stream is reopened with backoff
// (timed by Config.Clock) and arbitrated again. A refusal with PERMISSION_DENIED, or a stream
// notification that another client is primary, is loss of primary:
// errors.Is(err, ErrNotPrimary). With Config.TakeOver a backup takes over
// when the server reports that no primary is left.
//
// Roles are arbitrated independently (Config.Role): each role's primary is
// its client with the highest election ID. Replicas fence each other with
// them: each owner of a shard arbitrates for the shard's role with an
// election ID that grows with its ownership epoch, so a new owner becomes
// the role's primary and the superseded client's writes are refused with
// PERMISSION_DENIED, reported as errors.Is(err, ErrFenced) (and
// ErrNotPrimary), by Client.Fenced and in LeafStatus (Fenced, Highest).
// A refusal that reaches the client before the stream's notice of the new
// primary waits for it (up to Config.CallTimeout) so that the error says
// why. Leave TakeOver off where election IDs fence owners.
//
// The forwarding pipeline (Config.Pipeline, leaf.p4 by default) is pushed
// to a device only when its cookie differs. Every unary RPC has a deadline (Config.CallTimeout).
// Config.TLS secures the connections. After Close, calls fail with
// ErrClosed.
//
//	cfg := p4runtime.DefaultConfig()
//	cfg.Leaves = leaves // device IDs, addresses, hosts, ports
//	cfg.Flow = flow
//	cfg.ElectionID = p4runtime.ElectionID{Low: 10}
//	c, err := p4runtime.Dial(ctx, cfg)
//	if err != nil { ... }
//	defer c.Close()
//	ctrl, err := proflow.NewController(ctrlCfg, c, enc, pol, gate, c)
//
// Package target is a P4Runtime server that enforces the P4Info and the
// arbitration rules, fronting an in-memory or simulated data plane; the
// tests run this package against it over loopback TCP.
//
// # Metrics
//
// With Config.Registerer set, the client exports proflow_p4runtime_*, the
// OpenFlow server's families where they apply: connected_devices,
// disconnects_total, errors_total{code} (gRPC canonical code names),
// write_updates_total, polls_total{result} (ok, error: one leaf's counter
// read), poll_duration_seconds, placements_total{result} (ok, error: the
// flows Place and PlaceBatch wrote) and placement_duration_seconds. Every label value is
// exported, at zero, from Dial on; Close unregisters them.
//
// # Concurrency
//
// A Client is safe for concurrent use; placements are serialised.
package p4runtime
