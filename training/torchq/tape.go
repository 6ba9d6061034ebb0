//go:build torch

package torchq

import (
	"fmt"
	"runtime"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"
)

// tape owns the tensors of one computation and keeps its first error.
// gotch v0.7.0 frees nothing by itself: every tensor an operation returns
// must be dropped. Each method is a no-op returning nil once an operation has
// failed, so a computation reads straight through and checks err once;
// free drops everything the tape holds.
type tape struct {
	dev  gotch.Device
	live []*ts.Tensor
	err  error
}

func newTape(dev gotch.Device) *tape { return &tape{dev: dev} }

// keep records x, or the error.
func (t *tape) keep(x *ts.Tensor, err error) *ts.Tensor {
	if err != nil {
		if t.err == nil {
			t.err = err
		}
		return nil
	}
	t.live = append(t.live, x)
	return x
}

// free drops every tensor the tape holds; the error is kept.
func (t *tape) free() {
	for _, x := range t.live {
		x.Drop()
	}
	t.live = t.live[:0]
}

// floats returns a float tensor of the given shape holding data, on the
// tape's device.
func (t *tape) floats(data []float32, shape ...int64) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	if n := numel(shape); int64(len(data)) != n || n == 0 {
		t.err = fmt.Errorf("tensor of shape %v from %d values", shape, len(data))
		return nil
	}
	flat := t.keep(ts.OfSlice(data))
	if t.err != nil {
		return nil
	}
	shaped := t.keep(flat.View(shape, false))
	if t.err != nil || t.dev == gotch.CPU {
		return shaped
	}
	return t.keep(shaped.To(t.dev, false))
}

// ints returns an int64 tensor holding data on the tape's device.
func (t *tape) ints(data []int64) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	if len(data) == 0 {
		t.err = fmt.Errorf("empty index tensor")
		return nil
	}
	x := t.keep(ts.OfSlice(data))
	if t.err != nil || t.dev == gotch.CPU {
		return x
	}
	return t.keep(x.To(t.dev, false))
}

func (t *tape) linear(x, w, b *ts.Tensor) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	return t.keep(ts.Linear(x, w, b))
}

func (t *tape) relu(x *ts.Tensor) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	return t.keep(x.Relu(false))
}

func (t *tape) add(a, b *ts.Tensor) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	return t.keep(a.Add(b, false))
}

func (t *tape) sub(a, b *ts.Tensor) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	return t.keep(a.Sub(b, false))
}

func (t *tape) mul(a, b *ts.Tensor) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	return t.keep(a.Mul(b, false))
}

func (t *tape) sum(x *ts.Tensor) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	return t.keep(x.Sum(gotch.Float, false))
}

func (t *tape) mse(pred, target *ts.Tensor) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	return t.keep(pred.MseLoss(target, ts.ReductionMean, false))
}

// elementLoss returns the per-element Huber loss (delta > 0) or squared
// error (delta == 0) of pred against target.
func (t *tape) elementLoss(pred, target *ts.Tensor, delta float64) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	if delta > 0 {
		return t.keep(pred.HuberLoss(target, ts.ReductionNone, delta, false))
	}
	return t.keep(pred.MseLoss(target, ts.ReductionNone, false))
}

// gather returns q[i, idx[i]] for every row i, as a vector.
func (t *tape) gather(q, idx *ts.Tensor) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	col := t.keep(idx.Unsqueeze(1, false))
	if t.err != nil {
		return nil
	}
	g := t.keep(q.Gather(1, col, false, false))
	if t.err != nil {
		return nil
	}
	return t.keep(g.SqueezeDim(1, false))
}

// rowMax returns the maximum of every row of x, as a vector.
func (t *tape) rowMax(x *ts.Tensor) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	v, i, err := x.MaxDim(1, false, false)
	if err != nil {
		return t.keep(nil, err)
	}
	t.keep(i, nil)
	return t.keep(v, nil)
}

// values copies x (any shape, float) into Go memory, row-major.
func (t *tape) values(x *ts.Tensor) []float32 {
	if t.err != nil {
		return nil
	}
	dst := make([]float32, x.Numel())
	if len(dst) == 0 {
		return dst
	}
	if err := x.CopyData(dst, uint(len(dst))); err != nil {
		t.keep(nil, err)
		return nil
	}
	return dst
}

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// lockThread locks the calling goroutine to its OS thread until the
// returned function is called. libtorch keeps its grad mode, and gotch the
// last libtorch error, per OS thread: a goroutine that moved between threads
// between a call and its error check, or between disabling and restoring
// gradients, would lose the error or leave another thread without
// gradients. Every exported function that touches libtorch holds the lock
// (calls nest).
func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// withoutGrad runs f with gradient tracking off, on one OS thread, and
// turns tracking back on. torchq runs with tracking on (libtorch's default)
// everywhere else: gotch v0.7.0's GradSetEnabled misreports the previous
// mode (it reads a 4-byte C int as an 8-byte Go int, so it always says
// "off"), so the previous mode cannot be restored faithfully; for the same
// reason gotch's ts.NoGrad, which VarStore.Copy and VarStore.Load use, leaves
// tracking off, and the MLP methods calling them turn it back on.
func withoutGrad(f func() error) error {
	defer lockThread()()
	if _, err := ts.GradSetEnabled(false); err != nil {
		return err
	}
	ferr := f()
	if err := enableGrad(); err != nil && ferr == nil {
		return err
	}
	return ferr
}

// enableGrad turns gradient tracking on for the calling OS thread; the
// caller must hold lockThread.
func enableGrad() error {
	_, err := ts.GradSetEnabled(true)
	return err
}

// view returns x reshaped to shape (same values, row-major).
func (t *tape) view(x *ts.Tensor, shape ...int64) *ts.Tensor {
	if t.err != nil {
		return nil
	}
	return t.keep(x.View(shape, false))
}
