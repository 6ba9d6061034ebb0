# mk/model.mk — the committed default agent: collect → train → export.
#
# Included by the top-level Makefile (after mk/torch.mk); it also works on
# its own: `make -f mk/model.mk model`. See models/README.md.
#
#   make model            the profile's default agent, timing each stage. With
#                         MODEL_FABRICS set (the testbed's default): collect a
#                         corpus on each fabric size it lists (profile
#                         PROFILE, -fabric SxL) and train one universal
#                         Q-network on all of them (proflow train -universal)
#                         into $(MODEL_DIR)/default.safetensors, the first
#                         size's dynamics model in
#                         default.dynamics.safetensors and the others' in
#                         default.dynamics-SxL.safetensors. With MODEL_FABRICS
#                         empty (the other profiles'): collect MODEL_EPISODES
#                         episodes on the profile's own fabric and train a
#                         model of that fabric into
#                         $(MODEL_DIR)/$(PROFILE).safetensors and its
#                         .dynamics.safetensors. Provenance in the metadata.
#   make model-ablation   the no-crowd ablation (β = 0) on the same corpus,
#                         into $(MODEL_BUILD)/ablation-beta0.safetensors.
#   make model-probe      the Q-network signal analysis of the default model
#                         into $(MODEL_BUILD)/probe.
#   make model-judge      the development checks of training/doc.go's rules
#                         (mk/judge.sh) for JUDGE_MODEL behind JUDGE_GATE
#                         (default: the committed testbed model and gate),
#                         into JUDGE_DIR (default $(MODEL_BUILD)/judge), its
#                         figures in summary.md; about 2 min 20 s on 2 CPUs.
#   make model-evaluate   every policy on every built-in scenario, 3 repeats,
#                         into $(MODEL_BUILD)/evaluate.
#
# Variables:
#   PROFILE            simulator profile the corpus is collected on (default
#                      testbed); the testbed model is models/default.*, any
#                      other profile's models/$(PROFILE).*
#   MODEL_DIR          where the model files go (default models)
#   MODEL_CONFIG_DIR   where the committed recipe files (shares-, train-,
#                      gate-$(PROFILE).json) are read from (default models,
#                      so that a model written elsewhere, MODEL_DIR=build/x,
#                      is still built with them)
#   MODEL_EPISODES     corpus size (default 779, the paper's; 1400 for testbed,
#                      whose corpus also protects flows of other kinds)
#   MODEL_SEED         collection and training seed (default 1)
#   MODEL_SHARES       JSON file of strategy shares for collect (default
#                      $(MODEL_CONFIG_DIR)/shares-$(PROFILE).json when present, else the
#                      built-in shares)
#   MODEL_KINDS        shares of the protected flow's kinds for collect (default
#                      bulk=0.5,rr=0.2,rate=0.15,onoff=0.15 for testbed, bulk
#                      only for the others)
#   MODEL_LAYOUT       state layout of the corpus and model (default
#                      proflow-state-v8 for testbed since session 26:
#                      proflow-state-v2, which adds uplink backlogs and the
#                      flow's latency and app-limited share, with the reserve
#                      deficit and drain rate of the flow's own switch;
#                      proflow-state-v1, the paper's, for the others;
#                      proflow-state-v3 adds each switch's reserve deficit
#                      to v2, proflow-state-v4 each switch's vacated flows;
#                      proflow-state-v6 the reserve deficit of the flow's
#                      own switch, proflow-state-v7 each switch's reserve
#                      drain rate to v6, proflow-state-v8 only the flow's
#                      own switch's; training/doc.go says what each
#                      measured)
#   MODEL_TRAIN_CONFIG TrainConfig JSON for train (default
#                      $(MODEL_CONFIG_DIR)/train-$(PROFILE).json when present)
#   MODEL_GATE         GateConfig JSON recorded in the model as the gate it runs
#                      behind (default $(MODEL_CONFIG_DIR)/gate-$(PROFILE).json when present)
#   MODEL_BUILD        ignored folder for the corpus and logs (default build/model)
#   MODEL_PORTABLE     1: train with libtorch's and OpenBLAS's kernels and
#                      thread counts pinned (proflow train -kernels portable:
#                      OpenBLAS's Haswell kernels, ATen's AVX2 ones, one
#                      thread each), so that a fit does not depend on the CPU
#                      it runs on; the model's train_host records the
#                      settings. 0: the kernels the CPU chooses (-kernels
#                      native), as every model before session 26 was
#                      trained (models/README.md, "Reproducing the committed
#                      weights"). Empty (the default): train's own default,
#                      portable wherever the CPU has AVX2 and FMA
#   MODEL_FABRICS      the fabric sizes and episode counts of a universal
#                      model, SxL:episodes; the first is the reference fabric
#                      whose encoder and profile the model records (default
#                      for testbed 4x3:900 2x3:500 8x3:400 4x7:400, 448,000
#                      training transitions: 9 minutes on 2 cores, collect
#                      47 s and train 469 s, of which Dyna 5.5 minutes;
#                      training time grows with the transitions, 8x3's most:
#                      its Dyna batches have 7 synthetic branches and 8
#                      candidate rows per state; empty for the other
#                      profiles). The i-th size (from 0) is collected with
#                      seed MODEL_SEED + 100·i, so the sizes do not replay
#                      each other's draws. MODEL_FABRICS= makes a testbed
#                      model of the 4x3 fabric alone (MODEL_EPISODES 1400).

_model_default_goal := $(.DEFAULT_GOAL)

# Stand-alone use: bring in the torch set-up.
ifndef TORCH_GOENV
SHELL := /bin/bash
include $(dir $(lastword $(MAKEFILE_LIST)))torch.mk
endif

GO                 ?= go
PROFILE            ?= testbed
MODEL_DIR          ?= models
MODEL_CONFIG_DIR   ?= models
MODEL_NAME         ?= $(if $(filter testbed,$(PROFILE)),default,$(PROFILE))
MODEL_EPISODES     ?= $(if $(filter testbed,$(PROFILE)),1400,779)
MODEL_SEED         ?= 1
MODEL_SHARES       ?= $(wildcard $(MODEL_CONFIG_DIR)/shares-$(PROFILE).json)
MODEL_LAYOUT       ?= $(if $(filter testbed,$(PROFILE)),proflow-state-v8,proflow-state-v1)
MODEL_KINDS        ?= $(if $(filter testbed,$(PROFILE)),bulk=0.5$(model_comma)rr=0.2$(model_comma)rate=0.15$(model_comma)onoff=0.15)
model_comma        := ,
MODEL_TRAIN_CONFIG ?= $(MODEL_CONFIG_DIR)/train-$(PROFILE).json
MODEL_GATE         ?= $(MODEL_CONFIG_DIR)/gate-$(PROFILE).json
MODEL_BUILD        ?= $(TORCH_BUILD_DIR)/model-$(PROFILE)
MODEL_FABRICS      ?= $(if $(filter testbed,$(PROFILE)),4x3:900 2x3:500 8x3:400 4x7:400)
# Kernels pinned (1), as the CPU chooses them (0), or train's default
# (empty: pinned wherever the CPU has AVX2 and FMA); passed to every
# training run (TestTrainPinnedKernels checks that each has it).
MODEL_PORTABLE     ?=
model_kernels       = $(if $(filter 1,$(MODEL_PORTABLE)),-kernels portable,$(if $(filter 0,$(MODEL_PORTABLE)),-kernels native))

MODEL_CORPUS := $(MODEL_BUILD)/corpus.dataset
# The corpora of the last make model: one per fabric size of a universal
# model, comma-separated, with -universal; else the single corpus.
model_empty  :=
model_space  := $(model_empty) $(model_empty)
MODEL_DATA    = $(if $(strip $(MODEL_FABRICS)),-universal -data $(subst $(model_space),$(model_comma),$(strip $(foreach fe,$(MODEL_FABRICS),$(MODEL_BUILD)/universal-$(firstword $(subst :, ,$(fe))).dataset))),-data $(MODEL_CORPUS))
MODEL_BIN    := $(MODEL_BUILD)/proflow-torch
# The revision recorded in the model: HEAD, marked -dirty when the working
# tree differs from it.
MODEL_COMMIT  = $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)

.PHONY: model model-single model-universal model-ablation model-probe model-evaluate model-judge model-bin

model-bin: torch-setup
	@mkdir -p $(MODEL_BUILD)
	$(TORCH_GOENV) $(GO) build -tags torch -o $(MODEL_BIN) ./proflow

## model: collect, train and export the profile's default agent: universal
## when MODEL_FABRICS lists fabric sizes, of the profile's fabric otherwise.
model: $(if $(strip $(MODEL_FABRICS)),model-universal,model-single)

## model-single: collect and train a model of the profile's own fabric.
model-single: model-bin
	@set -eo pipefail; mkdir -p $(MODEL_DIR); \
	t0=$$(date +%s); \
	$(MODEL_BIN) collect -profile $(PROFILE) -episodes $(MODEL_EPISODES) -seed $(MODEL_SEED) -out $(MODEL_CORPUS) \
	  -layout $(MODEL_LAYOUT) $(if $(MODEL_KINDS),-kinds $(MODEL_KINDS)) $(if $(MODEL_SHARES),-shares $(MODEL_SHARES)) | tee $(MODEL_BUILD)/collect.log; \
	t1=$$(date +%s); \
	$(MODEL_BIN) train $(model_kernels) -data $(MODEL_CORPUS) -seed $(MODEL_SEED) -commit "$(MODEL_COMMIT)" \
	  $(if $(wildcard $(MODEL_TRAIN_CONFIG)),-config $(MODEL_TRAIN_CONFIG)) \
	  $(if $(wildcard $(MODEL_GATE)),-gate $(MODEL_GATE)) \
	  -out $(MODEL_DIR)/$(MODEL_NAME).safetensors -dynamics $(MODEL_DIR)/$(MODEL_NAME).dynamics.safetensors | tee $(MODEL_BUILD)/train.log; \
	t2=$$(date +%s); \
	echo "make model PROFILE=$(PROFILE): collect $$((t1 - t0)) s, train $$((t2 - t1)) s, total $$((t2 - t0)) s on $$(nproc) CPUs" | tee $(MODEL_BUILD)/time.log

## model-universal: collect a corpus per fabric size and train one
## universal agent on all of them, timing each stage.
model-universal: model-bin
	@set -eo pipefail; mkdir -p $(MODEL_DIR); \
	t0=$$(date +%s); data=; i=0; times=; \
	for fe in $(MODEL_FABRICS); do \
	  f=$${fe%%:*}; n=$${fe##*:}; ts=$$(date +%s); \
	  $(MODEL_BIN) collect -profile $(PROFILE) -fabric $$f -episodes $$n -seed $$(($(MODEL_SEED) + 100 * i)) \
	    -out $(MODEL_BUILD)/universal-$$f.dataset -layout $(MODEL_LAYOUT) $(if $(MODEL_KINDS),-kinds $(MODEL_KINDS)) \
	    $(if $(MODEL_SHARES),-shares $(MODEL_SHARES)) | tee $(MODEL_BUILD)/universal-collect-$$f.log; \
	  times="$$times, collect $$f ($$n episodes) $$(($$(date +%s) - ts)) s"; \
	  data=$${data:+$$data,}$(MODEL_BUILD)/universal-$$f.dataset; i=$$((i + 1)); \
	done; \
	t1=$$(date +%s); \
	$(MODEL_BIN) train $(model_kernels) $(MODEL_DATA) -seed $(MODEL_SEED) -commit "$(MODEL_COMMIT)" \
	  $(if $(wildcard $(MODEL_TRAIN_CONFIG)),-config $(MODEL_TRAIN_CONFIG)) \
	  $(if $(wildcard $(MODEL_GATE)),-gate $(MODEL_GATE)) \
	  -out $(MODEL_DIR)/$(MODEL_NAME).safetensors -dynamics $(MODEL_DIR)/$(MODEL_NAME).dynamics.safetensors | tee $(MODEL_BUILD)/universal-train.log; \
	t2=$$(date +%s); \
	echo "make model PROFILE=$(PROFILE) (universal)$$times, collect total $$((t1 - t0)) s, train $$((t2 - t1)) s, total $$((t2 - t0)) s on $$(nproc) CPUs" \
	  | tee $(MODEL_BUILD)/universal-time.log

## model-ablation: the β = 0 ablation on the corpus of the last make model.
model-ablation: model-bin
	$(MODEL_BIN) train $(model_kernels) $(MODEL_DATA) -seed $(MODEL_SEED) -beta 0 -commit "$(MODEL_COMMIT)" \
	  $(if $(wildcard $(MODEL_TRAIN_CONFIG)),-config $(MODEL_TRAIN_CONFIG)) \
	  $(if $(wildcard $(MODEL_GATE)),-gate $(MODEL_GATE)) \
	  -out $(MODEL_BUILD)/ablation-beta0.safetensors | tee $(MODEL_BUILD)/ablation.log

## model-probe: the signal analysis (Fig. 8) of the default model.
model-probe:
	$(GO) run ./proflow probe -profile $(PROFILE) -model $(MODEL_DIR)/$(MODEL_NAME).safetensors -out $(MODEL_BUILD)/probe

## model-evaluate: the default agent against the reference policies.
model-evaluate:
	$(GO) run ./proflow evaluate -profile $(PROFILE) -model $(MODEL_DIR)/$(MODEL_NAME).safetensors -policies static,reactive,crowd,oracle,agent \
	  -scenarios all -repeats 3 -out $(MODEL_BUILD)/evaluate

## model-judge: the development checks a model or gate choice is judged by.
JUDGE_MODEL ?= models/default.safetensors
JUDGE_GATE  ?= models/gate-testbed.json
JUDGE_DIR   ?= $(MODEL_BUILD)/judge
model-judge:
	@mkdir -p $(MODEL_BUILD)
	$(GO) build -o $(MODEL_BUILD)/proflow ./proflow
	mk/judge.sh $(MODEL_BUILD)/proflow $(JUDGE_MODEL) $(JUDGE_GATE) $(JUDGE_DIR)

.DEFAULT_GOAL := $(_model_default_goal)
