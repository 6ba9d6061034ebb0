//go:build torch

package torchcheck

import (
	"math"
	"math/rand"
	"testing"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"
)

// Sizes of the smoke MLP: a proflow state vector in, one score per
// aggregation switch out.
const (
	inDim     = 34
	hiddenDim = 64
	outDim    = 4
	batch     = 256
)

// device is where the tests run: CUDA when the linked libtorch has it and a
// GPU is present, the CPU otherwise — the same rule training uses.
func device() gotch.Device { return gotch.CudaIfAvailable() }

func TestDevice(t *testing.T) {
	d := device()
	t.Logf("device: %s (index %d); CUDA available: %v, CUDA devices: %d",
		d.Name, d.Value, gotch.CUDA.IsAvailable(), gotch.CUDA.DeviceCount())

	x := ts.MustOnes([]int64{2, 3}, gotch.Float, d)
	defer x.MustDrop()
	// Compare names, and indices only for CUDA: gotch v0.7.0 reports the
	// CPU as {CPU 1} although gotch.CPU is {CPU -1}.
	if got := x.MustDevice(); got.Name != d.Name || (d.IsCuda() && got.Value != d.Value) {
		t.Errorf("tensor created on %v reports device %v", d, got)
	}
	sum := x.MustSum(gotch.Float, false)
	defer sum.MustDrop()
	if got := sum.Float64Values()[0]; got != 6 {
		t.Errorf("sum of a 2×3 tensor of ones = %v, want 6", got)
	}
}

// TestMLPTrains fits a 34→64→4 MLP to a fixed random regression task with
// Adam and requires the loss to fall well below its starting value.
func TestMLPTrains(t *testing.T) {
	d := device()
	x, y := regressionData(rand.New(rand.NewSource(1)), d)
	defer x.MustDrop()
	defer y.MustDrop()

	vs := nn.NewVarStore(d)
	root := vs.Root()
	mlp := nn.Seq()
	mlp.Add(nn.NewLinear(root.Sub("l1"), inDim, hiddenDim, nn.DefaultLinearConfig()))
	mlp.AddFn(nn.NewFunc(func(xs *ts.Tensor) *ts.Tensor { return xs.MustRelu(false) }))
	mlp.Add(nn.NewLinear(root.Sub("l2"), hiddenDim, outDim, nn.DefaultLinearConfig()))

	opt, err := nn.DefaultAdamConfig().Build(vs, 1e-2)
	if err != nil {
		t.Fatalf("build Adam: %v", err)
	}

	const steps = 100
	var first, last float64
	for step := 0; step < steps; step++ {
		pred := mlp.Forward(x)
		loss := pred.MustMseLoss(y, ts.ReductionMean, true)
		if err := opt.BackwardStep(loss); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		v := loss.Float64Values()[0]
		loss.MustDrop()
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("step %d: loss %v", step, v)
		}
		if step == 0 {
			first = v
		}
		last = v
	}
	t.Logf("MSE on %s: %.4f after 1 step, %.4f after %d steps", d.Name, first, last, steps)
	if !(last < 0.5*first) {
		t.Errorf("loss fell from %.4f to %.4f in %d Adam steps; want below half", first, last, steps)
	}
}

// regressionData returns a batch of inputs and the targets of a fixed smooth
// function of them, both on device d.
func regressionData(r *rand.Rand, d gotch.Device) (x, y *ts.Tensor) {
	w := make([]float64, inDim*outDim)
	for i := range w {
		w[i] = r.NormFloat64() / math.Sqrt(inDim)
	}
	xs := make([]float32, batch*inDim)
	ys := make([]float32, batch*outDim)
	for b := 0; b < batch; b++ {
		in := xs[b*inDim : (b+1)*inDim]
		for i := range in {
			in[i] = float32(r.NormFloat64())
		}
		for o := 0; o < outDim; o++ {
			var s float64
			for i, v := range in {
				s += w[i*outDim+o] * float64(v)
			}
			ys[b*outDim+o] = float32(math.Tanh(s))
		}
	}
	return toDevice(xs, []int64{batch, inDim}, d), toDevice(ys, []int64{batch, outDim}, d)
}

// toDevice makes a tensor of the given shape from data on device d.
func toDevice(data []float32, shape []int64, d gotch.Device) *ts.Tensor {
	flat := ts.MustOfSlice(data)
	shaped := flat.MustView(shape, true)
	return shaped.MustTo(d, true)
}
