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
OVS_TEST_PKGS  := ./southbound/openflow/... ./telemetry/tcstat/... ./telemetry/hostagent/... ./examples/ovsfabric/...

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
	$(GO) test -run '^$$' -bench '^Benchmark(Place|Collect)$$' -benchtime 300x ./southbound/openflow/

## ovs-down: remove every namespace, link, qdisc and OVS process the example
## (prefix pf-) and the tests may have left after a crash. Each test process
## has its own prefix (tXY- in package ovsfabric, dXY- in proflow's
## TestFabricRunTeardown; from its PID, so that two runs of the tests at
## once do not collide) and run directory /tmp/proflow-ovs-test/PREFIX,
## which is how a crashed one is found.
ovs-down:
	$(GO) run ./examples/ovsfabric down -prefix pf- -rundir /tmp/proflow-ovs
	@for d in /tmp/proflow-ovs-test/[a-z]??-; do \
	  [ -d "$$d" ] || continue; \
	  echo "ovs-down: $$d"; \
	  $(GO) run ./examples/ovsfabric down -prefix "$$(basename "$$d")" -rundir "$$d" || exit 1; \
	done

# ovs-eval: the learned agent of the ovs profile against the reference
# policies on the real fabric, and the same cells simulated on the ovs
# profile beside them (see examples/ovsfabric/README.md).
OVS_EVAL_SCENARIOS ?= S1,S5,S11,C1
OVS_EVAL_POLICIES  ?= static,reactive,crowd,agent
OVS_EVAL_REPEATS   ?= 3
# The evaluation window on the fabric (the scaled scenarios' 60 s
# shortened so that 48 episodes fit in an hour on 2 cores; the congestion
# still starts 10 s in, and every event keeps its time).
OVS_EVAL_DURATION  ?= 40s
OVS_EVAL_MODEL     ?= models/ovs.safetensors
OVS_EVAL_OUT       ?= $(OUT)/ovs-eval
OUT                ?= out
comma              := ,

.PHONY: ovs-eval
## ovs-eval: policies × S1, S5, S11, C1 × 3 repeats on the real fabric (root,
## ~45 min on 2 cores, a line per episode) into $(OVS_EVAL_OUT)/fabric, and
## the same cells on the simulator's ovs profile into $(OVS_EVAL_OUT)/sim.
ovs-eval: ovs-deps
	$(GO) build -o $(OVS_EVAL_OUT)/proflow ./proflow
	$(OVS_EVAL_OUT)/proflow fabric evaluate -policies $(OVS_EVAL_POLICIES) -scenarios $(OVS_EVAL_SCENARIOS) \
	  -repeats $(OVS_EVAL_REPEATS) -duration $(OVS_EVAL_DURATION) -model $(OVS_EVAL_MODEL) -out $(OVS_EVAL_OUT)/fabric
	$(OVS_EVAL_OUT)/proflow fabric scale -scenarios $(OVS_EVAL_SCENARIOS) -duration $(OVS_EVAL_DURATION) -out $(OVS_EVAL_OUT)/scenarios
	$(OVS_EVAL_OUT)/proflow evaluate -profile ovs -policies $(OVS_EVAL_POLICIES) \
	  $(foreach s,$(subst $(comma), ,$(OVS_EVAL_SCENARIOS)),-scenario-file $(OVS_EVAL_OUT)/scenarios/$(s).json) \
	  -repeats $(OVS_EVAL_REPEATS) -model $(OVS_EVAL_MODEL) -out $(OVS_EVAL_OUT)/sim

# ovs-movecost: what a move costs the protected flow on the real fabric
# (proflow fabric movecost, real kernel TCP) and the same matrix on the
# simulator's testbed profile with H-move on and off, side by side. The
# full matrix (cubic,bbr × 0,5ms,50ms × a,b,c,d × 5 repeats, 24 cells)
# takes about 37 min here (measured on 2 cores: a cell of case a 71 s,
# b 76 s, c 73 s, d 147 s with the flags below), over the 30-minute bound;
# the default runs the 16 cells of cubic,bbr × 0,50ms (about 25 min): set
# OVS_MOVECOST_RTTS=0,5ms,50ms for the full one.
OVS_MOVECOST_CCS     ?= cubic,bbr
OVS_MOVECOST_RTTS    ?= 0,50ms
OVS_MOVECOST_CASES   ?= a,b,c,d
OVS_MOVECOST_REPEATS ?= 5
OVS_MOVECOST_FLAGS   ?= -warmup 8s -observe 12s -collapse 15s -rate 1000000
OVS_MOVECOST_OUT     ?= $(OUT)/ovs-movecost

.PHONY: ovs-movecost
## ovs-movecost: the move-cost matrix on the fabric and the simulator (root,
## ≤ 30 min by default: cubic,bbr × 0,50ms × a–d × 5) into
## $(OVS_MOVECOST_OUT): movecost.csv, movecost.md, movecost.png.
ovs-movecost: ovs-deps
	$(GO) build -o $(OVS_MOVECOST_OUT)/proflow ./proflow
	$(OVS_MOVECOST_OUT)/proflow fabric movecost -sim -cc $(OVS_MOVECOST_CCS) -rtts $(OVS_MOVECOST_RTTS) -cases $(OVS_MOVECOST_CASES) \
	  -repeats $(OVS_MOVECOST_REPEATS) $(OVS_MOVECOST_FLAGS) -out $(OVS_MOVECOST_OUT)

# ovs-regime: the fabric in the paper's regime (a 50 ms delay line on h1's
# link, CUBIC, a 56 kB receive buffer at the protected flow's sink, an
# H-limit at 1.05 C; examples/ovsfabric/README.md, "The paper's regime")
# and the simulator's ovs-regime profile fitted to it
# (southbound/sim, "Profile ovs-regime").
OVS_REGIME_FLAGS     ?= -rtt 50ms -cc cubic -rcvbuf 57344 -hlimit 1.05
OVS_REGIME_SCENARIOS ?= S1,S5,S8,S11,C1,N1
OVS_REGIME_POLICIES  ?= static,reactive,throughput-drop,agent
OVS_REGIME_REPEATS   ?= 2
OVS_REGIME_DURATION  ?= 30s
OVS_REGIME_MODEL     ?= models/ovs-regime.safetensors
# The gate the agent runs behind (δ 0.5: above the model's Q differences
# between idle switches, up to 0.46 in the simulator; southbound/sim,
# "Profile ovs-regime").
OVS_REGIME_GATE      ?= models/gate-ovs-regime.json
OVS_REGIME_OUT       ?= $(OUT)/ovs-regime

.PHONY: ovs-regime-traces ovs-regime-model ovs-regime-eval
## ovs-regime-traces: the real traces the ovs-regime profile is fitted
## from (root, ~2 min): the protected flow alone and S1 under static.
ovs-regime-traces: ovs-deps
	$(GO) build -o $(OVS_REGIME_OUT)/proflow ./proflow
	$(OVS_REGIME_OUT)/proflow fabric run -scenario quiet -policy static -duration 20s $(OVS_REGIME_FLAGS) -traces $(OVS_REGIME_OUT)/fit
	$(OVS_REGIME_OUT)/proflow fabric run -scenario S1 -policy static -duration $(OVS_REGIME_DURATION) $(OVS_REGIME_FLAGS) -traces $(OVS_REGIME_OUT)/fit

## ovs-regime-model: the agent of the ovs-regime profile
## (models/ovs-regime.*, behind models/gate-ovs-regime.json).
ovs-regime-model:
	$(MAKE) model PROFILE=ovs-regime

## ovs-regime-eval: policies × S1, S5, S8, S11, C1, N1 × 2 repeats on the
## fabric in the paper's regime (root, ~45 min on 2 cores) into
## $(OVS_REGIME_OUT)/fabric, and the same cells on the simulator's
## ovs-regime profile into $(OVS_REGIME_OUT)/sim.
ovs-regime-eval: ovs-deps
	$(GO) build -o $(OVS_REGIME_OUT)/proflow ./proflow
	$(OVS_REGIME_OUT)/proflow fabric evaluate -policies $(OVS_REGIME_POLICIES) -scenarios $(OVS_REGIME_SCENARIOS) -baseline reactive \
	  -repeats $(OVS_REGIME_REPEATS) -duration $(OVS_REGIME_DURATION) $(OVS_REGIME_FLAGS) -model $(OVS_REGIME_MODEL) -gate $(OVS_REGIME_GATE) -out $(OVS_REGIME_OUT)/fabric
	$(OVS_REGIME_OUT)/proflow fabric scale -scenarios $(OVS_REGIME_SCENARIOS) -duration $(OVS_REGIME_DURATION) -out $(OVS_REGIME_OUT)/scenarios
	$(OVS_REGIME_OUT)/proflow evaluate -profile ovs-regime -policies $(OVS_REGIME_POLICIES) -baseline reactive \
	  $(foreach s,$(subst $(comma), ,$(OVS_REGIME_SCENARIOS)),-scenario-file $(OVS_REGIME_OUT)/scenarios/$(s).json) \
	  -repeats $(OVS_REGIME_REPEATS) -model $(OVS_REGIME_MODEL) -gate $(OVS_REGIME_GATE) -traces -out $(OVS_REGIME_OUT)/sim
