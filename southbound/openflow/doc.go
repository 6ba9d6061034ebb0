// Package openflow is the OpenFlow 1.3 southbound of proflow: the controller
// side that Open vSwitch (or any OpenFlow 1.3 switch) connects to. A Server
// implements proflow.Telemetry, proflow.Enforcer, proflow.BatchEnforcer,
// proflow.Locator and proflow.Releaser for a two-tier leaf/aggregation
// fabric described by a Fabric.
//
// # Connections
//
// Switches connect to the server (TCP port 6653 by default, TLS when
// Config.TLS is set). The server sends hello and a features request, reads
// the datapath id, and refuses datapaths the Fabric does not name. It sends
// echo requests to a quiet switch every Config.EchoInterval and drops one
// that has said nothing for Config.DeadTimeout (both timed by the tickers of
// Config.Clock). A failed write closes the connection. Replies are matched to
// requests by transaction id; multipart replies split with the "more" flag
// are reassembled. A switch that reconnects (a new connection with the same
// datapath id replaces the old one) gets its rules back.
//
// # Rules
//
// Every rule carries a cookie whose top 16 bits are Config.CookiePrefix, so
// the server finds its own rules and leaves others alone. On connect it
// installs permanent base forwarding: delivery to local hosts, and one rule
// per ordered host pair on every switch (leaves pick an aggregation switch
// with Config.BasePath; aggregation switches send toward the destination's
// leaf). ARP follows the same routes by target address, so hosts need no
// static neighbours. Base forwarding never expires: if the controller dies,
// traffic keeps flowing.
//
// Place moves a flow (the protected flow f_p, or any host pair) with
// override rules on the leaves of both ends, one per direction, above base
// priority. It is make-before-break: the new rules go in one priority above
// the old ones and are confirmed with barrier replies from both leaves before
// the old ones are deleted; on failure the old rules still carry the flow.
// Overrides are leases: their hard timeout (Config.LeaseTimeout) is
// refreshed by Serve every third of the lease (one batch and one barrier per
// leaf, every leaf at once, each within Config.RequestTimeout, which must
// be at most a third of the lease; see Server), so if the controller dies
// the flow falls back to base forwarding.
// Override rules whose delete a switch did not confirm are deleted again on
// every refresh round and when their leaf reconnects, so they do not linger
// even when overrides are permanent. Locate reads the overrides back by
// cookie, so a restarted controller resumes where the last one left off.
//
// # Many flows in one step
//
// The Server places any number of flows, one override pair each (forward
// on the source leaf, reverse on the destination leaf); a flow and its
// reverse take the same pair, so one direction per connection is placed
// (Place and PlaceBatch refuse a flow whose reverse is placed). It is a
// proflow.BatchEnforcer: PlaceBatch applies a MultiController's step with
// one write of flow-mods and one barrier per leaf and phase. Phase one adds
// the new rules of every moving flow on every leaf involved (in parallel)
// and waits for each leaf's barrier; phase two deletes the old rules of the
// flows whose new rules were all confirmed, and rolls back the new rules of
// the others. No old rule goes before its flow's new rules are confirmed in
// both directions, so the batch is make-before-break for every flow.
// Errors are per flow: a flow-mod the switch refuses (a full table:
// errors.Is(err, ErrTableFull), OFPET_FLOW_MOD_FAILED/OFPFMFC_TABLE_FULL)
// fails that flow's slot and the others proceed; a leaf that fails as a
// whole (no barrier reply within Config.RequestTimeout, disconnected) fails
// the flows with rules there and the batch. The batch is not an OpenFlow
// bundle: a bundle commits atomically, so one flow refused for a full table
// would fail every flow of its leaf, and one move spans two leaves, which
// no bundle covers; one write and one barrier per leaf costs the same round
// trips. Each phase has Config.RequestTimeout, so size it for the largest
// step a switch must take in.
// BenchmarkPlace1000Batch and BenchmarkPlace1000OneByOne compare one step of
// 1,000 flows both ways (make bench).
//
// The Server is a proflow.Releaser: Release deletes a flow's override pair
// on both leaves (barrier-confirmed) and leaves the base rules, which carry
// every host pair all along, so the flow is on its default path before its
// override goes. A MultiController releases the flows it stops protecting.
// Forget drops the server's record of a placement and writes nothing: the
// rules lapse with their lease, as a replica wants for a flow another owner
// now manages.
//
// # Several controllers: owner cookies
//
// Replicas that share the switches and own disjoint sets of flows (proflow
// serve with etcd) set Config.Owner: each flow's override rules then carry
// its owner's cookie (for a replica, its shard and the epoch of its
// ownership), every write of a flow's overrides first asks the Owner and
// fails with ErrFenced when it says no, and deletes name the exact cookie
// the rules were installed with, so an owner that lost a flow can never
// delete its successor's rules. A new owner calls Locate for each flow it
// gains: Locate adopts the highest-priority override whatever its cookie
// and re-stamps it with the new owner's cookie.
//
// # Telemetry
//
// Collect polls port and flow statistics of every switch (one multipart
// request each, at most one poll per switch in flight) and turns the
// counters of the two latest polls into an Observation: transmit rates per
// aggregation switch, active host-pair entries (two per connection, one per
// direction), elephant rate, leaf ingress and transmit rates, and the
// protected flow's throughput from its own override rule. A multi-flow
// controller lists its flows in Observation.FlowIDs, and Collect fills
// Observation.Flows with each one's throughput, measured the same way (its
// override rule's byte counter on its source leaf over the interval, its
// host pair's base rule while it has no override); the leaves' ingress
// rates leave every listed flow out. Every sample is
// stamped when its reply arrives; a missing or late reply makes Collect
// return an error wrapping proflow.ErrStale, and the proflow.Controller then
// holds the placement: rerouting stops while telemetry is stale. Overflow
// rates come from tc, not OpenFlow (package telemetry/tcstat).
//
// # Example
//
//	srv, err := openflow.NewServer(openflow.Config{
//		Fabric:   openflow.PaperFabric(),
//		Topology: proflow.PaperTopology(),
//		Flow:     flow,
//	})
//	if err != nil { ... }
//	go srv.ListenAndServe(ctx)
//	if err := srv.WaitReady(ctx); err != nil { ... }
//	ctrl, err := proflow.NewController(cfg, srv, enc, pol, gate, srv)
//
// # Metrics
//
// With Config.Registerer set, the server exports proflow_openflow_*:
// connected_switches, disconnects_total, errors_total{type} (the OpenFlow
// error type number), flow_mods_total, polls_total{result} (ok, error,
// joined), poll_duration_seconds, placements_total{result} (ok, error) and
// placement_duration_seconds. placements_total counts the flows Place and
// PlaceBatch moved or failed to move, whoever asked (a batch observes its
// duration once); the controller's
// proflow_reroutes_total counts its own decisions to reroute that were
// carried out. Every label value above is exported, at zero, from the
// start.
//
// # Concurrency
//
// A Server is safe for concurrent use; Serve may be called once.
package openflow
