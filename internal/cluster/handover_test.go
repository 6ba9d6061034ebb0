package cluster

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A voluntary hand-over leaves the same margin as a lease expiry: the old
// owner's last writable instant for a shard (Epoch true) comes at least
// StopWritingAfter before the new owner's first, so that a switch write the
// old owner checked just before releasing is done before the new owner
// writes. Before the fix the owner key was deleted right after OnChange and
// the new owner wrote 10–100 ms later.
func TestHandOverWaitsStopWritingAfter(t *testing.T) {
	c := etcdOrSkip(t)
	admin := adminClient(t, c)
	const prefix = "/t/handover/"
	shards := testConfig(nil, "", "x", ttl).Shards
	swa := testConfig(nil, "", "x", ttl).StopWritingAfter
	a := join(t, c, prefix, "a", nil)
	waitFor(t, 20*time.Second, "a owns every shard", func() bool { return len(a.Owned()) == shards })

	// Sample both members' fences every millisecond: a's last writable
	// instant and b's first, per shard. a was seen owning every shard no
	// later than now, whatever the samples see after (a lease renewal held
	// up on a loaded machine makes a unwritable for a while, which is the
	// fence doing its work, not a hand-over).
	var (
		bp            atomic.Pointer[Member]
		mu            sync.Mutex
		aLast, bFirst = make(map[int]time.Time), make(map[int]time.Time)
		stop, done    = make(chan struct{}), make(chan struct{})
	)
	seen := time.Now()
	for s := range shards {
		aLast[s] = seen
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			b := bp.Load()
			mu.Lock()
			for s := range shards {
				now := time.Now()
				if _, ok := a.Epoch(s); ok {
					aLast[s] = now
				}
				if _, ok := bFirst[s]; b != nil && !ok {
					if _, ok := b.Epoch(s); ok {
						bFirst[s] = now
					}
				}
			}
			mu.Unlock()
		}
	}()
	b := join(t, c, prefix, "b", nil)
	bp.Store(b)
	waitFor(t, 20*time.Second, "a and b share the shards", func() bool {
		got, _ := owners(t, admin, prefix)
		return balanced(got, shards, "a", "b") && len(a.Owned()) == shards/2 && len(b.Owned()) == shards/2
	})
	close(stop)
	<-done

	mu.Lock()
	defer mu.Unlock()
	if len(bFirst) != shards/2 {
		t.Fatalf("b was seen writable for %d shards, want %d", len(bFirst), shards/2)
	}
	minGap, maxGap := time.Duration(1<<62), time.Duration(0)
	for s, first := range bFirst {
		gap := first.Sub(aLast[s])
		minGap, maxGap = min(minGap, gap), max(maxGap, gap)
		if gap < swa {
			t.Errorf("shard %d: b writable %v after a's last writable instant, want ≥ StopWritingAfter (%v)", s, gap.Round(time.Microsecond), swa)
		}
	}
	t.Logf("hand-over of %d shards: %v to %v between the old owner's last writable instant and the new owner's first (StopWritingAfter %v)",
		len(bFirst), minGap.Round(time.Millisecond), maxGap.Round(time.Millisecond), swa)
}
