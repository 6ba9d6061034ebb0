// Package qnet is the pure-Go inference side of ProFlow's Q-network: a
// multilayer perceptron (Model) and the model file format the trainer
// exports and controllers load. It uses no cgo; a controller that only
// deploys a model never needs libtorch.
//
// # The network
//
// Q_θ maps a state vector s ∈ R^ds to one Q-value per aggregation switch:
// dense layers y = W·x + b with ReLU after every hidden layer and a linear
// output layer. Weights are float32, stored row-major as [out][in], the
// PyTorch nn.Linear convention. The default architecture has two hidden
// layers of 256 (34→256→256→4 for the paper's four switches and three
// congestion leaves).
//
// Such a per-fabric network fits one fabric size. A universal network
// (Metadata.Universal) fits all: it maps one candidate row
// (telemetry.EncoderConfig.EncodeCandidates, telemetry.CandidateLayout; 41
// values in layout v2) to one Q-value, Q(s, k) = MLP(row_k), with the same
// weights for every switch k, so it scores a fabric of any |S| ≥ 2 and
// |L| ≥ 0 as one ForwardBatch of |S| rows (41→128→128→1, say).
//
// # Many states at once
//
// ForwardBatch evaluates n states in one call (n×in in, n×out out,
// row-major), as a blocked matrix product over packed weights: an AVX2/FMA
// assembly kernel on amd64 CPUs that have it, a Go kernel elsewhere or under
// the purego build tag. It does not allocate after its first call.
// Forward, one state, is ForwardBatch of one row through a one-row variant
// of the same kernel: the same bits as that row in any batch, about 2.5 µs
// for 34→256→256→4 with the assembly kernel, and no allocation.
//
// # The model file
//
// A model file is a safetensors file (https://huggingface.co/docs/safetensors):
//
//	8 bytes     N, the header length, unsigned little-endian
//	N bytes     JSON header, padded with spaces
//	the rest    tensor data, little-endian, exactly as indexed by the header
//
// The header maps every tensor name to
// {"dtype":"F32","shape":[…],"data_offsets":[begin,end]} (offsets relative
// to the start of the data, contiguous from 0, covering all of it) and
// "__metadata__" to a map of strings. Layer l of the network is the pair of
// tensors "layers.l.weight" (shape [out, in]) and "layers.l.bias" (shape
// [out]); a PyTorch nn.Sequential of Linear and ReLU exports to these names
// once the indices are renumbered over the Linear layers only.
//
// The metadata keys, all strings:
//
//	format          "proflow-qnet"
//	format_version  "1" for a per-fabric network, "2" for a universal one
//	q_layout        "proflow-candidate-v1" (telemetry.CandidateLayout): in version "2" only, required there
//	num_switches    |S|, e.g. "4": the number of outputs (version "1"), the reference fabric's (version "2")
//	num_leaves      |L|, e.g. "3" (the reference fabric's in version "2")
//	state_layout    the state vector layout, e.g. "proflow-state-v1" (telemetry.StateLayout)
//	state_dim       the number of inputs: the state dimension, e.g. "34" (version "1"),
//	                the candidate row's, the encoder's CandidateDim, e.g. "41" (version "2")
//	encoder         the telemetry.EncoderConfig as JSON (the scaling constants)
//	architecture    JSON {"hidden":[256,256],"activation":"relu"}
//	made_by, corpus, seed, commit, created   provenance, free-form, optional
//
// A version "2" network has exactly one output, and its state_layout is its
// encoder's layout. Version "1" files are read exactly as before universal
// networks existed; a reader that knows only version "1" refuses a version
// "2" file by its version. Other keys are kept in Metadata.Extra. Read refuses, naming the problem, a
// truncated file, a header longer than 100 MiB, invalid JSON or duplicate
// keys, a dtype other than F32, shapes that disagree with their offsets,
// overlapping or non-contiguous offsets, trailing bytes, missing or extra
// tensors, layers that do not chain or disagree with the architecture, NaN or
// infinite values, missing metadata keys, an unknown format or version,
// state_dim other than the first layer's input, num_switches other than
// the output size (version "1"), and an unknown q_layout, a version "1"
// file with one or a universal network with other than one output
// (version "2"). Errors are *FormatError and *NonFiniteError; both match
// ErrInvalidModel, and truncation also matches ErrTruncated.
//
// # Size limits
//
// A network has at most MaxLayers dense layers, no layer size (input,
// hidden or output) above MaxLayerWidth, and at most MaxParams weights and
// biases in all. New and FromLayers check this before they allocate; Read
// checks the sizes the header declares (state_dim, the architecture, the
// output size) and the length of the data section (MaxDataBytes) before it
// reads any tensor data, so a file that claims a huge network costs no more
// memory than its header. Such errors match ErrTooLarge and name the layer
// and the limit. The messages of a FormatError are cut to a few hundred
// bytes, whatever the file holds.
//
// Save writes a temporary file and renames it, so a controller loading a
// model never sees half of one.
//
// # Concurrency
//
// A Model's weights never change, but Forward and ForwardBatch write into
// activation buffers the Model owns: one Model must not be used by two
// goroutines at once. Clone
// is cheap (it shares the weights) and gives each goroutine its own buffers.
// Read, Write, Load and Save are safe to call concurrently.
package qnet
