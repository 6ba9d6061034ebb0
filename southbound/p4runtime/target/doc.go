// Package target is a P4Runtime server for ProFlow's leaf switches: a
// stand-in for a P4 software switch (no BMv2 is installable on the
// project's machines) that the p4runtime southbound and its tests talk to
// over real gRPC.
//
// # What it enforces
//
// Server implements p4.v1.P4RuntimeServer from github.com/p4lang/p4runtime
// (v1.4) and holds the P4Runtime state of every device: the committed
// pipeline config (P4Info and cookie), table entries, counter writes and the
// arbitration of clients. Every request is checked against the P4Info with
// the status codes of the specification:
//
//   - unknown device: NOT_FOUND; a Write or SetForwardingPipelineConfig from a
//     client that is not the primary: PERMISSION_DENIED; before a config is
//     committed: FAILED_PRECONDITION. These fail the whole RPC.
//   - per update: unknown table, field, action or parameter IDs, a value wider
//     than its field, masked or prefix bits set, a zero mask, the wrong match
//     kind, a missing exact field or action parameter, a bad priority:
//     INVALID_ARGUMENT; an action outside its scope (a table-only action as
//     default) and, on a const table (is_const_table), an INSERT, a DELETE
//     or a MODIFY with an action: PERMISSION_DENIED; a duplicate INSERT:
//     ALREADY_EXISTS; MODIFY or DELETE of a missing entry: NOT_FOUND; a full
//     table: RESOURCE_EXHAUSTED; a counter index beyond the array:
//     OUT_OF_RANGE. A MODIFY without an action changes only the direct
//     counter it sets (nothing else: action, metadata and
//     controller_metadata stay); with an action it replaces them all.
//     A batch with a failed update returns UNKNOWN with one p4.v1.Error per
//     update (OK for the others) in the status details; Read does the same
//     per request.
//   - StreamChannel arbitration per (device, role), each role on its own:
//     the highest election ID ever seen for the role is its primary, and
//     only that primary may Write (or set the pipeline) with that role —
//     a client superseded by a higher election ID of its role gets
//     PERMISSION_DENIED, which is how replicas fence a former owner; notifications carry OK to the primary,
//     ALREADY_EXISTS to backups and NOT_FOUND to everyone while there is no
//     primary; a reused election ID is INVALID_ARGUMENT, and so is one set
//     but zero wherever a request carries one (arbitration, Write,
//     SetForwardingPipelineConfig), as Stratum answers — an unset ID makes
//     a backup, never primary; a stream changing device or role is
//     FAILED_PRECONDITION. When the primary's stream closes,
//     the role has no primary until a client arbitrates with an election ID at
//     least the highest seen (the specification); Options.PromoteBackup
//     instead promotes the best connected backup at once.
//   - SetForwardingPipelineConfig (VERIFY, VERIFY_AND_COMMIT) checks the
//     P4Info (IDs, prefixes, references) and that this target can realize it
//     (leaf.p4's path_select, set_uplink and port counters); a commit clears
//     the device's forwarding state. GetForwardingPipelineConfig returns it
//     with its cookie.
//
// Table entries keep their metadata and controller_metadata for reads; reads
// follow the wildcard rules, and return direct counters (in the entry's
// counter_data or as DirectCounterEntry) and indexed counters. A read's role
// filters nothing, since every role has full pipeline access here (the
// server takes no role.config), but a role no client has arbitrated for is
// NOT_FOUND.
//
// # The data plane behind it
//
// The forwarding effect of path_select entries and all counter values come
// from a Dataplane: MemDataplane for tests, or an adapter to the simulated
// fabric. For each flow the winning path_select entry (highest priority)
// decides the uplink the Dataplane uses; counter writes and entry lifetimes
// are the Server's bookkeeping on top of the data plane's cumulative counts.
//
//	srv, err := target.New(target.NewMemDataplane(), []uint64{1, 2, 3, 4}, nil)
//	gs := grpc.NewServer()
//	srv.Register(gs)
//	go gs.Serve(lis)
//
// # Concurrency
//
// Server and MemDataplane are safe for concurrent use.
package target
