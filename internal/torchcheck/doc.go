// Package torchcheck holds the smoke tests of proflow's libtorch set-up.
//
// The tests are behind the torch build tag: they prove that gotch, patched
// for the local libtorch by internal/cmd/gotchpatch, compiles, links and
// trains. Without the tag the package is empty and the default build stays
// free of cgo. Run them with
//
//	make torch-test
//
// or, once `make torch-setup` has written build/torch.work,
//
//	GOWORK=$PWD/build/torch.work go test -tags torch ./internal/torchcheck
//
// See docs/torch.md.
package torchcheck
