# mk/etcd.mk — etcd for the replica tests: dependencies and tests.
#
# Included by the top-level Makefile (`include mk/etcd.mk`); it also works on
# its own: `make -f mk/etcd.mk etcd-test`.
#
# The tests of internal/cluster start a 3-member etcd cluster on loopback
# (Debian's etcd-server, /usr/bin/etcd, as child processes with their data
# in /dev/shm) and fail without it when run as root; etcd-deps installs it.
# The package installs no service: the Debian package's own etcd.service is
# not started (nor needed).
#
# Variables:
#   ETCD_APT_PKGS     Debian packages etcd-deps installs.
#   ETCD_TEST_FLAGS   Extra flags for `go test` in etcd-test.

GO              ?= go
ETCD_APT_PKGS   ?= etcd-server
ETCD_TEST_FLAGS ?=

.PHONY: etcd-deps etcd-test

## etcd-deps: install Debian's etcd-server (skipped when present).
etcd-deps:
	@if [ -x /usr/bin/etcd ] && [ "$$(dpkg-query -W -f='$${Status}\n' $(ETCD_APT_PKGS) 2>/dev/null | grep -c '^install ok installed$$')" -eq "$(words $(ETCD_APT_PKGS))" ]; then \
	  echo "etcd-deps: $(ETCD_APT_PKGS) already installed"; \
	else \
	  echo "etcd-deps: installing $(ETCD_APT_PKGS)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -q && apt-get install -y -q --no-install-recommends $(ETCD_APT_PKGS); \
	fi

## etcd-test: the replica tests against a real 3-member etcd cluster, with
## their measurements (takeover, writes per tick, flows per replica).
etcd-test: etcd-deps
	$(GO) test -count=1 -v $(ETCD_TEST_FLAGS) ./internal/cluster/

SERVE_REPLICA_FLOWS ?= 3000

.PHONY: serve-replicas-test

## serve-replicas-test: issue 14's acceptance through the binary — three
## proflow serve replicas on a 3-member etcd sharing SERVE_REPLICA_FLOWS
## protected flows (kill -9 takeover, etcd member loss, SIGSTOP past the
## lease, writes per tick); `make test` runs it too, at 3,000 flows.
serve-replicas-test: etcd-deps
	PROFLOW_REPLICA_FLOWS=$(SERVE_REPLICA_FLOWS) $(GO) test -count=1 -v -run TestServeReplicasAcceptance ./proflow/
