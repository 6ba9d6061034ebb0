package ovsfabric

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// One holder at a time: a second acquire waits until its ctx is done and
// says why; once the first lets go, it gets the lock.
func TestAcquireLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fabric.lock")
	first, err := acquireLock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*lockPoll)
	defer cancel()
	if _, err := acquireLock(ctx, path); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "another OVS fabric is up") {
		t.Fatalf("second acquire while held: %v, want the deadline and the reason", err)
	}
	done := make(chan error, 1)
	go func() {
		second, err := acquireLock(context.Background(), path)
		if err == nil {
			second.Close()
		}
		done <- err
	}()
	first.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("acquire after release: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("acquire still waiting 10 s after the lock was released")
	}
}
