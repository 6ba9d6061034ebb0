# mk/torch.mk — libtorch + gotch for code behind the `torch` build tag.
#
# Included by the top-level Makefile (`include mk/torch.mk`); it also works on
# its own: `make -f mk/torch.mk torch-test`. See docs/torch.md.
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
#                     against that one instead, with its CUDA libraries. The
#                     stamp records the value, so changing it rebuilds.
#   TORCH_APT_PKGS    Debian packages torch-deps installs.
#   TORCH_BUILD_DIR   Ignored folder for the patched gotch and the workspace.
#   TORCH_PKGS        Packages torch-test runs (default: all).
#   TORCH_TEST_FLAGS  Extra flags for `go test` in torch-test.

GO               ?= go
PROFLOW_LIBTORCH ?=
TORCH_APT_PKGS   ?= libtorch-dev libopenblas0-pthread
TORCH_BUILD_DIR  ?= build
TORCH_WORK       := $(TORCH_BUILD_DIR)/torch.work
TORCH_STAMP      := $(TORCH_BUILD_DIR)/gotch/.stamp
TORCH_PKGS       ?= ./...
TORCH_TEST_FLAGS ?=

# Environment for every torch-tagged go command: the workspace with the
# replace, and the libtorch shared libraries on the loader path when a custom
# (CUDA) libtorch is used.
TORCH_GOENV := GOWORK=$(abspath $(TORCH_WORK)) CGO_ENABLED=1
ifneq ($(strip $(PROFLOW_LIBTORCH)),)
TORCH_GOENV += LD_LIBRARY_PATH=$(PROFLOW_LIBTORCH)/lib$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH))
endif

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
	  if ! apt-get install -y --no-install-recommends $(TORCH_APT_PKGS); then \
	    apt-get update && apt-get install -y --no-install-recommends $(TORCH_APT_PKGS); \
	  fi; \
	else \
	  echo "torch-deps: $(TORCH_APT_PKGS) already installed"; \
	fi
else
	@test -d "$(PROFLOW_LIBTORCH)/include" && test -d "$(PROFLOW_LIBTORCH)/lib" \
	  || { echo "torch-deps: PROFLOW_LIBTORCH=$(PROFLOW_LIBTORCH) has no include/ and lib/" >&2; exit 1; }
	@echo "torch-deps: using libtorch at $(PROFLOW_LIBTORCH)"
endif

## torch-setup: patch gotch into $(TORCH_BUILD_DIR)/gotch, compile its C++
## wrapper, and write $(TORCH_WORK). Fast when the stamp is current.
torch-setup: torch-deps $(TORCH_STAMP)

# The stamp depends on the tool's sources and on the libtorch selection; the
# tool itself also skips the work when its own stamp matches.
$(TORCH_STAMP): $(wildcard internal/cmd/gotchpatch/*.go) go.mod FORCE
	@PROFLOW_LIBTORCH="$(PROFLOW_LIBTORCH)" $(GO) run ./internal/cmd/gotchpatch -out $(TORCH_BUILD_DIR)

## torch-test: run the tests of every package with torch-tagged files.
torch-test: torch-setup
	$(TORCH_GOENV) $(GO) test -tags torch $(TORCH_TEST_FLAGS) $(TORCH_PKGS)

## torch-clean: remove the patched gotch and the workspace.
torch-clean:
	rm -rf $(TORCH_BUILD_DIR)/gotch $(TORCH_WORK) $(TORCH_WORK).sum

.PHONY: FORCE
FORCE:
