// Package cluster lets several replicas of the proflow controller share one
// set of protected flows through an etcd cluster: which replica decides for
// which flow, where each flow is placed and what its baseline is, and when a
// replica must stop writing to the switches.
//
// The package is internal: only the proflow command imports it, so the
// library's own import graph (the root package, policy, southbound) stays
// free of etcd.
//
// # Shards, not flows
//
// Flows are hashed (FNV-1a of FlowID.String) into S shards, S fixed for a
// prefix (default 64, recorded in etcd by the first replica; a replica with
// another S is refused at Join). A shard is owned by at most one replica, and
// a replica decides only for the flows of the shards it owns.
//
// Ownership is per shard rather than per flow because its cost grows with
// S, not with the flow count: with 3,000–10,000 flows, per-flow ownership
// keys would mean thousands of lease-bound keys, thousands of creations on
// every takeover and a watch stream the size of the flow set, while 64 shard
// keys change hands in 64 small transactions and balance to within one
// shard (1.6% of the flows with S = 64) over any number of replicas up to S.
//
// # Keys
//
// Under Config.Prefix (P, ending in "/"):
//
//	P shards                      the shard count S, created once
//	P members/REPLICA             one per live replica, bound to its lease
//	P owners/SSSS                 the owner of shard SSSS (4 decimal digits):
//	                              the replica's name, bound to its lease
//	P flows/FLOW                  a protected flow of the set (JSON
//	                              proflow.ProtectedFlow; FLOW is FlowID.String)
//	P state/SSSS/FLOW             the flow's placement and baseline (JSON
//	                              FlowState), grouped by shard so that a new
//	                              owner reads a shard's states in one range
//
// # Leases and balance
//
// Join grants one lease (Config.LeaseTTL, or the server's minimum if that is
// larger) and keeps it alive with one KeepAliveOnce every KeepAliveInterval
// (default TTL/6). The member key and every owner key the replica creates
// are bound to it, so a replica that dies loses everything when the lease
// expires, and Close revokes it so that the others take over at once.
//
// Each replica balances on its own, every BalanceInterval (default TTL/3)
// and whenever a member or owner key changes (one watch on both prefixes):
// with L live members, it keeps at most ceil(S/L) shards, releases the
// extra ones (highest-numbered first) and claims free shards up to that
// target, each claim one transaction
//
//	If(CreateRevision(P owners/SSSS) == 0) Then(Put(owner key, REPLICA, lease))
//
// so two replicas never both create an owner key: etcd's revision history
// of the owner keys shows every creation (version 1) and deletion, and never
// a second owner over a live key. A shard is free between the expiry of a
// dead owner's lease and the next claim, at most TTL + one BalanceInterval
// after the owner died (the watch usually makes it milliseconds after the
// expiry).
//
// # Epochs and fencing
//
// The epoch of a shard's ownership is the owner key's create revision: it
// is unique, and every later owner of the shard has a larger one. A replica
// attaches it to what it writes:
//
//   - to etcd: SaveFlow and SaveFlows commit only
//     If(CreateRevision(P owners/SSSS) == epoch), so a replica that lost the
//     shard gets ErrNotOwner and writes nothing (and only while each flow's
//     key exists, so a save racing the flow's deletion does not re-create
//     its state: ErrFlowDeleted); DeleteState, with which the owner removes
//     the state of a flow deleted without it, commits on the same compare;
//   - to P4Runtime switches: Role(shard) as the role and ElectionID(epoch) as
//     the election id, so the switch itself makes the newest owner the
//     primary of the shard's role and refuses an older owner's writes;
//   - to OpenFlow switches: Cookie(shard, epoch) on every flow-mod, so the
//     new owner can find and replace (cookie-masked modify or delete) the
//     rules of an older epoch.
//
// The switches learn of a new owner only when it writes, so the replica
// also guards itself: Writable reports false as soon as the last keepalive
// that etcd acknowledged was sent more than StopWritingAfter (default TTL/2)
// ago, that is well before the lease can expire at etcd (the server counts
// the TTL from the moment it received that keepalive, later than it was
// sent). A replica cut from etcd therefore stops writing to switches while
// it still owns its shards, and no other replica can own them before the
// lease expires. Callers check Writable (or Owns) right before every switch
// write; OnChange reports the same loss within one KeepAliveInterval.
//
// The time since that keepalive is counted on Config.Clock and on the
// host's uptime (CLOCK_BOOTTIME on Linux), whichever counts more: Go's
// monotonic clock stops while the host is suspended and etcd's lease timer
// does not, so a replica waking from a suspend is unwritable at once, until
// a keepalive sent after the wake-up is acknowledged; and a Clock slower
// than real time cannot keep the fence up.
//
// A voluntary hand-over (balance releasing a shard) keeps the same margin:
// the member stops deciding for the shard (Owns, Epoch and OnChange say so
// at once), waits StopWritingAfter, and only then deletes the owner key, so
// a switch write it checked just before has that long to finish before
// another replica can own the shard.
//
// # Placements and baselines
//
// SaveFlow stores a flow's FlowState (switch, baseline) only when it differs
// from what this replica last read or wrote, so a steady state with no
// reroutes writes nothing to etcd; FlowState.Updated and the key's
// ModRevision say when it last changed. A new owner calls LoadShard for each
// shard it gains and resumes from the stored placements and baselines
// instead of learning them again.
//
// A flow's state does not outlive the flow while its shard has an owner:
// DeleteFlow deletes both, and the owner deletes (DeleteState) the state of
// a flow deleted without it. A state stored with no flow key is otherwise
// kept: a cluster started again from the states a previous one stored
// puts its flows after it joins (the replicas seed them from their
// configuration), and those states are what it resumes. So a flow deleted
// while its shard has no owner leaves its state, which the flow, put again,
// resumes.
//
// # Concurrency
//
// A Member is safe for concurrent use. OnChange is called from one
// goroutine, in order, and must not block for long.
package cluster
