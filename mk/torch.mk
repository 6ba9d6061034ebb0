# mk/torch.mk — libtorch + gotch for code behind the `torch` build tag.
#
# Included by the top-level Makefile, where it adds torch-deps to DEPS_TARGETS
# and torch-test to TEST_EXTRA; it also works on its own:
# `make -f mk/torch.mk torch-test`. See docs/torch.md.
#
# The default build (`go build ./...`) never needs any of this: only files
# tagged `torch` import github.com/sugarme/gotch, and torch builds resolve it to
# a patched copy under $(TORCH_BUILD_DIR) through the workspace file
# $(TORCH_WORK), never to the module cache.
#
# Variables (override on the command line or in the environment):
#
#   PROFLOW_LIBTORCH  Empty (default): build against Debian's CPU libtorch
#                     (libtorch-dev, headers in /usr/include, libraries in the
#                     multiarch directory). Set it to the root of an unpacked
#                     CUDA libtorch (the folder holding include/ and lib/, e.g.
#                     PROFLOW_LIBTORCH=/opt/libtorch-cu121) to compile and link
#                     against that one instead, with its CUDA libraries
#                     (found at run time through an rpath). The tool's stamp
#                     records the selection, so changing it rebuilds.
#   TORCH_APT_PKGS    Debian packages torch-deps installs.
#   TORCH_BUILD_DIR   Ignored folder for the patched gotch, the workspace file
#                     and the tool's binary.
#   TORCH_PKGS        Packages torch-test runs (default: every package with a
#                     file whose //go:build line names torch, `!torch` too).
#   TORCH_TEST_FLAGS  Extra flags for `go test` in torch-test.

# Keep the including Makefile's default goal: this fragment's first target
# must not become it.
_torch_default_goal := $(.DEFAULT_GOAL)

GO               ?= go
PROFLOW_LIBTORCH ?=
TORCH_APT_PKGS   ?= libtorch-dev libopenblas0-pthread g++
TORCH_BUILD_DIR  ?= build
TORCH_WORK       := $(TORCH_BUILD_DIR)/torch.work
GOTCHPATCH       := $(TORCH_BUILD_DIR)/bin/gotchpatch
TORCH_TEST_FLAGS ?=
# Evaluated only when torch-test runs: the folders holding a file whose build
# constraint mentions the torch tag, as ./dir package patterns.
TORCH_PKGS ?= $(sort $(patsubst %/,./%,$(dir $(patsubst ./%,%,$(shell \
  grep -rlE --include='*.go' --exclude-dir=.git --exclude-dir=$(notdir $(TORCH_BUILD_DIR)) \
  '^//go:build .*\btorch\b' . 2>/dev/null)))))

# Environment for every torch-tagged go command. GOWORK must be absolute.
TORCH_GOENV := GOWORK=$(abspath $(TORCH_WORK)) CGO_ENABLED=1

DEPS_TARGETS += torch-deps
TEST_EXTRA   += torch-test

.PHONY: torch-deps torch-setup torch-test torch-clean

## torch-deps: install Debian's CPU libtorch and OpenBLAS (skipped when present,
## and skipped entirely when PROFLOW_LIBTORCH names a libtorch of its own).
torch-deps:
ifeq ($(strip $(PROFLOW_LIBTORCH)),)
	@if dpkg-query -W -f='$${Status}\n' $(TORCH_APT_PKGS) 2>/dev/null \
	    | grep -vq '^install ok installed$$' \
	  || [ "$$(dpkg-query -W -f='$${Status}\n' $(TORCH_APT_PKGS) 2>/dev/null | wc -l)" -ne "$(words $(TORCH_APT_PKGS))" ]; then \
	  echo "torch-deps: installing $(TORCH_APT_PKGS)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -q && apt-get install -y -q --no-install-recommends $(TORCH_APT_PKGS); \
	else \
	  echo "torch-deps: $(TORCH_APT_PKGS) already installed"; \
	fi
else
	@test -d "$(PROFLOW_LIBTORCH)/include" && test -d "$(PROFLOW_LIBTORCH)/lib" \
	  || { echo "torch-deps: PROFLOW_LIBTORCH=$(PROFLOW_LIBTORCH) has no include/ and lib/" >&2; exit 1; }
	@echo "torch-deps: using libtorch at $(PROFLOW_LIBTORCH)"
endif

## torch-setup: patch gotch into $(TORCH_BUILD_DIR)/gotch, compile it, and
## write $(TORCH_WORK). The tool keeps a stamp of everything the result
## depends on (its own build, the gotch version and checksum, the libtorch, the
## compiler): when nothing changed it says so and exits at once.
torch-setup: torch-deps $(GOTCHPATCH)
	@PROFLOW_LIBTORCH="$(PROFLOW_LIBTORCH)" $(GOTCHPATCH) -out $(TORCH_BUILD_DIR)

$(GOTCHPATCH): $(wildcard internal/cmd/gotchpatch/*.go)
	@$(GO) build -o $@ ./internal/cmd/gotchpatch

## torch-test: run, with -tags torch, the tests of every package that has
## torch-tagged files (the untagged tests run in the main test target).
torch-test: torch-setup
	$(if $(strip $(TORCH_PKGS)),$(TORCH_GOENV) $(GO) test -tags torch $(TORCH_TEST_FLAGS) $(TORCH_PKGS),@echo "torch-test: no torch-tagged packages")

## torch-clean: remove the patched gotch and the workspace.
torch-clean:
	rm -rf $(TORCH_BUILD_DIR)/gotch $(TORCH_WORK) $(TORCH_WORK).sum $(GOTCHPATCH)

.DEFAULT_GOAL := $(_torch_default_goal)
