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
// # Universal models
//
// With TrainConfig.Universal the Q-network is one MLP from a candidate
// row (telemetry.CandidateLayout, CandidateDim values) to one value, shared
// by every switch: Q(s, k) = MLP(row_k), the rows made in Go by
// telemetry.EncoderConfig.EncodeCandidates. A batch of n states of one size
// becomes n·|S| rows, the forward pass gives [n·|S|, 1], viewed as [n, |S|],
// and the Bellman step (gather, row maximum, Huber loss, weights) is the
// per-fabric one. Dyna's greedy rollout actions, QValues, BellmanLoss,
// RerouteRate and the per-epoch evaluation go through the same rows. The
// switch relabelling of TrainConfig.PermuteSwitches is skipped in the Q
// stages (the network is equivariant by construction) and kept for the
// dynamics models.
//
// Such a network runs on any fabric, so one run may train on several
// datasets, one per fabric size (NewMultiTrainer, RunMulti, TrainMulti):
// every dataset is split and relabelled on its own; each size has its own
// dynamics model (a full-state network), trained on its dataset in Stage 1
// and synthesising its batches in Stage 3; every Q minibatch comes from one
// dataset, and each epoch visits every training transition of every
// dataset once, the batches of all datasets in an order drawn from the
// seed, so each dataset weighs in proportion to its size. The progress
// lines and FabricReport are per dataset, QEpoch is pooled over them with
// each dataset's held-out figures beside. The datasets must pass
// training.CheckFabrics: one layout and one scaling with size and bucket
// rate factored out, no size twice. The first dataset is the reference
// whose encoder the model records:
//
//	res, err := torchq.TrainMulti(ctx, []*training.Dataset{ds4x3, ds2x3, ds8x3}, cfg, os.Stdout)
//	meta := qnet.NewUniversalMetadata(ds4x3.Encoder) // fill in the provenance
//	err = qnet.Save("universal.safetensors", res.Q, meta)
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
// count, a seed therefore gives bit-identical weights: with several
// datasets, for the same datasets in the same order (the networks are
// initialised, the datasets split and the dynamics models trained in that
// order). A single dataset draws exactly what it drew before multi-fabric
// training existed.
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
