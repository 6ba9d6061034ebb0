# mk/ovs.mk — Open vSwitch fabric: dependencies, integration tests, cleanup.
#
# Included by the top-level Makefile (`include mk/ovs.mk`); it also works on
# its own: `make -f mk/ovs.mk ovs-test`.
#
# The default `go test ./...` needs none of this: the OVS integration tests
# in southbound/openflow/ovsfabric skip (with the reason) when not root or when
# OVS, iproute2 or ethtool are missing. These targets install the tools and
# run the tests for real (as root; no kernel module: userspace datapath).
#
# Variables:
#   OVS_APT_PKGS     Debian packages ovs-deps installs.
#   OVS_TEST_FLAGS   Extra flags for `go test` in ovs-test.

GO             ?= go
OVS_APT_PKGS   ?= openvswitch-switch iproute2 ethtool
OVS_TEST_FLAGS ?=
OVS_TEST_PKGS  := ./southbound/openflow/... ./telemetry/tcstat/... ./examples/ovsfabric/...

.PHONY: ovs-deps ovs-test ovs-measure ovs-down

## ovs-deps: install Open vSwitch, iproute2 and ethtool (skipped when present).
ovs-deps:
	@if [ "$$(dpkg-query -W -f='$${Status}\n' $(OVS_APT_PKGS) 2>/dev/null | grep -c '^install ok installed$$')" -eq "$(words $(OVS_APT_PKGS))" ]; then \
	  echo "ovs-deps: $(OVS_APT_PKGS) already installed"; \
	else \
	  echo "ovs-deps: installing $(OVS_APT_PKGS)"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -q && apt-get install -y -q --no-install-recommends $(OVS_APT_PKGS); \
	fi

## ovs-test: run the OpenFlow, tc-stat and OVS fabric tests, integration
## tests included (needs root; ~1.5 min on 2 cores).
ovs-test: ovs-deps
	$(GO) test -count=1 $(OVS_TEST_FLAGS) $(OVS_TEST_PKGS)

## ovs-measure: print reroute latency, stats round trip and controller CPU
## against OVS.
ovs-measure: ovs-deps
	PROFLOW_MEASURE=1 $(GO) test -count=1 -v -run 'TestMeasure$$' ./southbound/openflow/ovsfabric/
	$(GO) test -run '^$$' -bench . -benchtime 300x ./southbound/openflow/

## ovs-down: remove every namespace, link, qdisc and OVS process the example
## (prefix pf-) and the tests (prefix pt-) may have left after a crash.
ovs-down:
	$(GO) run ./examples/ovsfabric down -prefix pf- -rundir /tmp/proflow-ovs
	$(GO) run ./examples/ovsfabric down -prefix pt- -rundir /tmp/proflow-ovs-test
