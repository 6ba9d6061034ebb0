# proflow — the two commands a newcomer needs:
#   make demo   evaluates the policies on the simulated fabric and writes a report
#   make test   installs what the tests need (Debian, as root) and runs every test
#
# Other targets: make bench (benchmarks for docs/performance.md),
# make model (collect → train → export the default agent), make fmt, make vet.

SHELL := /bin/bash
.DEFAULT_GOAL := all
GO ?= go
OUT ?= out

include mk/torch.mk
include mk/ovs.mk
include mk/model.mk
include mk/etcd.mk
DEPS_TARGETS += ovs-deps
DEPS_TARGETS += etcd-deps

.PHONY: all build vet fmt-check test test-go test-fuzz demo bench deps

# The targets install system packages and run test suites that share the
# machine; they run one at a time even under make -j.
.NOTPARALLEL:

all: build

build:
	$(GO) build ./...

vet:
	$(GO) vet ./...

fmt-check:
	@files=$$(git ls-files '*.go' 2>/dev/null || find . -path ./build -prune -o -name '*.go' -print); \
	if [ -z "$$files" ]; then echo "fmt-check: no Go files found"; exit 1; fi; \
	unformatted=$$(gofmt -l $$files); \
	if [ -n "$$unformatted" ]; then echo "gofmt: not formatted:"; echo "$$unformatted"; exit 1; fi

# deps installs the system packages the tests need on a fresh Debian machine.
deps: $(DEPS_TARGETS)

test: deps tidy-check build vet fmt-check test-go test-fuzz $(TEST_EXTRA)

# tidy-check fails when go.mod or go.sum differ from what `go mod tidy` would
# write; tidy reads every build tag, so what torch-tagged files import stays.
.PHONY: tidy-check
tidy-check:
	$(GO) mod tidy -diff

# The packages whose tests time real TCP over Open vSwitch, tc and host
# sockets run after the others, alone: run beside a simulation-heavy package
# on 2 cores, the controller's steps and the real flows' round trips stretch
# by hundreds of milliseconds and an episode's timing checks fail for the
# machine, not for the code.
REALNET_PKGS := ./southbound/openflow/ovsfabric ./telemetry/hostagent ./telemetry/tcstat
test-go:
	$(GO) test -count=1 $$($(GO) list ./... | grep -vxF "$$($(GO) list $(REALNET_PKGS))")
	$(GO) test -count=1 -p 1 $(REALNET_PKGS)

# A short run of every fuzz target over its committed seed corpus and a
# fixed number of new inputs. A count, not a duration: with a duration, Go
# 1.26's fuzz coordinator can report a bare "context deadline exceeded" as
# a failure when a starved worker misses the deadline on a loaded machine
# (golang/go#75804, fixed in Go 1.27), with no failing input behind it.
FUZZTIME ?= 10000x
test-fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# The main job: every policy (static, reactive, crowd, the oracle and the
# learned agent) on every built-in scenario of the testbed profile, three
# repeats, with the datacenter profile beside it; report.md, CSV files and
# four PNG figures in $(OUT)/demo, each profile's full report in
# $(OUT)/demo/PROFILE. The agent of a profile joins once its model exists
# (models/default.safetensors for the testbed, models/datacenter.safetensors).
demo:
	$(GO) run ./proflow demo -out $(OUT)/demo

bench:
	$(GO) test -run '^$$' -bench . -skip 'QForwardBatch' -benchmem -count 3 ./policy/... ./telemetry
	$(GO) test -run '^$$' -bench 'QForwardBatch' -benchtime 5x -count 3 -cpu 1 ./policy/qnet/
	$(GO) test -run '^$$' -bench 'MultiControllerStep' -benchtime 5x -count 3 -cpu 1 .
	$(GO) test -run '^$$' -bench 'EpisodeS1' -benchtime 20x ./southbound/sim/
	$(GO) test -run '^$$' -bench 'Sweep' -benchtime 1x ./southbound/sim/
	$(GO) test -run '^$$' -bench '^Benchmark(Reroute|Collect)$$' -benchtime 2000x ./southbound/p4runtime/
	$(GO) test -run '^$$' -bench '^Benchmark(Place|Collect)$$' -benchtime 300x ./southbound/openflow/
	$(GO) test -run '^$$' -bench 'Place1000' -benchtime 5x ./southbound/p4runtime/ ./southbound/openflow/
