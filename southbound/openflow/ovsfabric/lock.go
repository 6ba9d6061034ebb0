package ovsfabric

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// LockFile is the file whose exclusive flock(2) a fabric holds from Up to
// Down. The fabric's ovs-vswitchd runs the userspace (netdev) datapath,
// which creates one tap device, ovs-netdev, in the root network namespace:
// a second such ovs-vswitchd on the machine cannot open its datapath
// ("ovs-netdev already exists but cannot be opened"), whatever its prefix
// and run directory. So two fabrics never run at once: Up waits for the
// lock until its ctx is done. The kernel drops the lock when the holding
// process exits, so a crashed run does not leave it held.
var LockFile = filepath.Join(os.TempDir(), "proflow-ovsfabric.lock")

// lockPoll is how often Up retries a held lock.
const lockPoll = 200 * time.Millisecond

// acquireLock takes the exclusive lock on path, waiting until ctx is done.
func acquireLock(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ovsfabric: lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("ovsfabric: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("ovsfabric: another OVS fabric is up on this machine (one userspace datapath per network namespace; lock %s held): %w", path, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}
