// Package torchq trains ProFlow's Q-network offline with libtorch (through
// gotch): the dynamics model f_ψ (Stage 1), fitted Q-iteration (Stage 2) and
// Dyna refinement with synthetic rollouts (Stage 3) of the paper's §IV-E,
// and exports the trained weights to the pure-Go model file that package
// policy loads.
//
// Everything but this file is behind the torch build tag; build and test it
// through the patched gotch workspace (see docs/torch.md):
//
//	make torch-test
//	GOWORK=$PWD/build/torch.work go test -tags torch ./training/torchq
//
// # Usage
//
//	ds, _ := training.LoadDataset("corpus.safetensors")
//	res, err := torchq.Train(ctx, ds, training.DefaultTrainConfig(), os.Stdout)
//	meta := qnet.NewMetadata(ds.Encoder) // fill in the provenance
//	err = qnet.Save("model.safetensors", res.Q, meta)
//
// # Weights
//
// An MLP keeps its layers in a gotch VarStore as "layers.l.weight", shape
// [out, in], and "layers.l.bias", and computes torch's linear(x, W, b) =
// x·Wᵀ + b: PyTorch's nn.Linear layout, which is qnet's [out][in] row-major
// layout, so export copies the values without transposing. (gotch's own
// nn.Linear stores the transpose, [in, out], as its Ws field; torchq does
// not use it.) The parity test checks the exported pure-Go forward pass
// against libtorch's on 1,000 random states.
//
// # Determinism
//
// gotch v0.7.0 binds no torch.manual_seed, so torchq draws nothing from
// libtorch's generator: initial weights come from a math/rand/v2 PCG seeded
// with TrainConfig.Seed (one stream per purpose: initialisation, split,
// dynamics batches, FQI batches, Dyna batches and rollouts), and no
// operation used is random. On the CPU, with the same libtorch and thread
// count, a seed therefore gives bit-identical weights.
//
// # Threads
//
// libtorch keeps its grad mode, and gotch the last libtorch error, per OS
// thread, so every torchq function that touches libtorch locks its goroutine
// to its OS thread while it runs. gotch v0.7.0's ts.GradSetEnabled
// misreports the previous mode (it always says "off"), so ts.NoGrad and the
// VarStore methods built on it (Copy, Load) leave gradients off; torchq
// turns them back on after each such call and after its own gradient-free
// evaluations.
//
// # Memory
//
// gotch v0.7.0 frees no tensor by itself; every computation here drops its
// intermediates when it ends. Call Trainer.Close (Train does) to free the
// networks.
//
// # Concurrency
//
// A Trainer or MLP must not be used by two goroutines at once.
package torchq
