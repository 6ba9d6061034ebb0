package cluster

import "fmt"

// Fence is what a southbound writer consults before writing for a shard:
// whether the replica may write at all, and the epoch to attach to the
// write. *Member implements it.
type Fence interface {
	// Writable reports whether the replica may write to switches now.
	Writable() bool
	// Epoch returns the epoch of the replica's ownership of shard, and
	// false when it must not write for it.
	Epoch(shard int) (uint64, bool)
}

// Role returns the P4Runtime role of shard: each shard's writes form one
// role, whose primary is the client with the highest election id.
func Role(shard int) string { return fmt.Sprintf("proflow-shard-%d", shard) }

// ElectionID returns the P4Runtime election id (high, low) of an owner
// epoch: a later owner of a shard has a larger one, so the switch makes it
// the role's primary and refuses the earlier owner's writes.
func ElectionID(epoch uint64) (high, low uint64) { return 0, epoch }

// Cookie returns the OpenFlow cookie of shard's rules under epoch: the
// shard in the top 16 bits, the epoch's low 48 bits below (etcd revisions
// stay below 2^48 for years at thousands of writes a second).
func Cookie(shard int, epoch uint64) uint64 {
	return uint64(shard)<<48 | epoch&(1<<48-1)
}

// CookieMask matches every rule of shard whatever its epoch (use it with
// Cookie(shard, 0) to find an earlier owner's rules).
const CookieMask = uint64(0xffff) << 48
