package workpool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// Every job runs once; the result does not depend on parallelism; progress
// counts every job.
func TestRunAll(t *testing.T) {
	for _, par := range []int{0, 1, 3, 100} {
		var ran [20]atomic.Int32
		last := 0
		errs := Run(context.Background(), len(ran), par, func(_ context.Context, i int) error {
			ran[i].Add(1)
			return nil
		}, func(done, total int) {
			if done != last+1 || total != len(ran) {
				t.Errorf("parallelism %d: progress %d/%d after %d", par, done, total, last)
			}
			last = done
		})
		for i := range ran {
			if ran[i].Load() != 1 || errs[i] != nil {
				t.Errorf("parallelism %d: job %d ran %d times, error %v; want once, nil", par, i, ran[i].Load(), errs[i])
			}
		}
	}
}

// A failure cancels the others; First names it, not the cancellations.
func TestRunFailureCancels(t *testing.T) {
	boom := errors.New("boom")
	ctx := context.Background()
	errs := Run(ctx, 50, 2, func(ctx context.Context, i int) error {
		if i == 3 {
			return boom
		}
		if i > 3 {
			<-ctx.Done() // a long job, stopped by the failure
			return ctx.Err()
		}
		return nil
	}, nil)
	if i := First(ctx, errs); i != 3 || !errors.Is(errs[3], boom) {
		t.Fatalf("First = %d (%v), want job 3's failure", i, errs)
	}
	if errs[49] != nil {
		t.Errorf("job 49 has error %v: it should never have started", errs[49])
	}
	if First(ctx, make([]error, 4)) != -1 {
		t.Error("First of no errors is not -1")
	}
}
