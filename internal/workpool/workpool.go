// Package workpool runs independent jobs on a bounded number of goroutines:
// the episode sweeps of the simulator and of the evaluation harness.
package workpool

import (
	"context"
	"errors"
	"sync"
)

// Run calls do(ctx, i) for every i in [0, n) on up to parallelism
// goroutines (at least one) and returns each job's error by index. The
// first failure cancels the ctx the other jobs see, and the jobs not
// started yet are not started (their errors stay nil, so a caller that
// needs every result must also check them). progress, when set, is called
// after each finished job with the number done so far; calls never
// overlap. Run returns when every started job has returned.
func Run(ctx context.Context, n, parallelism int, do func(ctx context.Context, i int) error, progress func(done, total int)) []error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	jobs := make(chan int)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for range max(1, min(parallelism, n)) {
		wg.Go(func() {
			for i := range jobs {
				if errs[i] = do(ctx, i); errs[i] != nil {
					cancel()
				}
				mu.Lock()
				done++
				if progress != nil {
					progress(done, n)
				}
				mu.Unlock()
			}
		})
	}
feed:
	for i := range n {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return errs
}

// First returns the index of the first real failure in errs: the first
// error that is not a cancellation caused by another job's failure, or,
// when every error is a cancellation (parent, the ctx given to Run, was
// cancelled), the first error. It returns -1 when errs holds none.
func First(parent context.Context, errs []error) int {
	first := -1
	for i, err := range errs {
		if err == nil {
			continue
		}
		if first < 0 {
			first = i
		}
		if !errors.Is(err, context.Canceled) || parent.Err() != nil {
			return i
		}
	}
	return first
}
