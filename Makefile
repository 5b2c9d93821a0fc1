# Makefile - xferlab: build, run, grade, plot and test every lab. One file, non-recursive.
#
#   make            build everything          make demo       the tour (start here)
#   make test       the kit's own tests       make help       every target, one line each
#
# Everything built goes under build/. Quiet unless V=1. See README.md.

.DEFAULT_GOAL := all
SHELL := /bin/bash

# ===== Tools =====
CUDA_HOME ?= $(or $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)),/usr/local/cuda)
NVCC ?= $(CUDA_HOME)/bin/nvcc
CC ?= gcc
B := build
# PTX for any GPU from Turing on (compiled by the driver once), native code for Hopper.
CUDA_ARCH ?= -gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90
# Mutants (planted and generated) run only where they are built, by make test and make mutate: native code for this
# machine's GPUs alone where it has one (half the compile time), else what everything else gets.
MUTANT_ARCH ?= $(if $(wildcard /dev/nvidia[0-9]*),-arch=native,$(CUDA_ARCH))
MUTANT_NVCCFLAGS = $(subst $(CUDA_ARCH),$(MUTANT_ARCH),$(ALL_NVCCFLAGS))

CRIT_BUNDLE := $(B)/criterion
ifneq ($(wildcard $(CRIT_BUNDLE)/include/criterion/criterion.h),)
  CRIT_CFLAGS := -I$(CRIT_BUNDLE)/include -DBXF_STATIC_LIB=1
  # RPATH (not RUNPATH) so that Criterion's own dependencies are found in the bundle too
  CRIT_LIBS := -L$(CRIT_BUNDLE)/lib -lcriterion -Xlinker -rpath-link=$(CRIT_BUNDLE)/lib \
    -Xlinker --disable-new-dtags -Xlinker -rpath='$$ORIGIN/../criterion/lib'
else
  CRIT_CFLAGS := $(filter-out -pthread,$(shell pkg-config --cflags criterion 2>/dev/null))
  CRIT_LIBS := $(filter-out -pthread,$(shell pkg-config --libs criterion 2>/dev/null))
endif

DEPFLAGS = -MMD -MP
CFLAGS ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) -std=gnu11 -Wall -Wextra -I. -I$(CUDA_HOME)/include $(DEPFLAGS)
NVCCFLAGS ?= -O2 -g
ALL_NVCCFLAGS = $(NVCCFLAGS) -std=c++17 $(CUDA_ARCH) -I. -Xcompiler -Wall,-Wextra $(DEPFLAGS)
LDLIBS := -lpthread -ldl -lrt
# Calls passed through the kit with no change to the code that makes them, in every program it links:
# common/copylog.c and common/tracecopy.c record copies (a grader checks what was copied; explorers and graders
# put copies on a timeline), common/pincount.c counts pinned memory, common/rescount.c device buffers, streams
# and events (graders find what a student's code never released), common/memlog.c records prefetches, advice,
# memsets and <<< >>> launches in order (a grader checks where and on which stream), common/peerlog.c records peer copies and
# the peer-access calls (asked, enabled, disabled; a grader can deny a path, and make an enable fail),
# common/synclog.c records waits and event orderings (device, stream and event synchronizes, stream waits, event
# records: a grader names a wait that covers the whole device or the legacy stream), and common/threads.c counts
# the threads started and joined (pthread_join, pthread_detach), and fails pthread_create on demand where a grader
# turns that on (xl_fault_threads; off by default: the CUDA runtime, linked statically, starts its own threads
# through it too), and common/devlog.c counts the cudaSetDevice calls of the test's thread (a grader finds code that
# changes its caller's device). A name no object calls (CUDA 12's _v2 forms
# under CUDA 13, the batch prefetch under CUDA 12) is ignored by the linker.
WRAP_CALLS := cudaMemcpy cudaMemcpyAsync cudaMemcpyBatchAsync \
  cudaMemcpyToSymbol cudaMemcpyToSymbolAsync cudaMemcpyFromSymbol cudaMemcpyFromSymbolAsync \
  cudaMemcpyPeerAsync cudaMemcpyPeer cudaDeviceCanAccessPeer cudaDeviceEnablePeerAccess cudaDeviceDisablePeerAccess \
  cudaMallocHost cudaHostAlloc cudaFreeHost cudaHostRegister cudaHostUnregister \
  cudaMalloc cudaMallocManaged cudaFree cudaStreamCreate cudaStreamCreateWithFlags cudaStreamCreateWithPriority \
  cudaStreamDestroy cudaEventCreate cudaEventCreateWithFlags cudaEventDestroy \
  cudaMemPrefetchAsync cudaMemAdvise cudaMemPrefetchAsync_v2 cudaMemAdvise_v2 cudaMemPrefetchBatchAsync \
  cudaMemset cudaMemsetAsync cudaMemset2D cudaMemset2DAsync __cudaPushCallConfiguration \
  cudaDeviceSynchronize cudaStreamSynchronize cudaEventSynchronize cudaStreamWaitEvent cudaEventRecord \
  cudaEventRecordWithFlags pthread_create pthread_join pthread_detach cudaSetDevice
WRAP := $(foreach f,$(WRAP_CALLS),-Xlinker --wrap=$(f))
# The calls a lab's own code must never make (common/labcalls.h: a wait for the whole device, a change of its
# settings, a reset): renamed in each lab object (student, reference, planted and generated mutants) right after nvcc makes
# it, so that they reach the kit's counters as xl_lab_NAME while the kit's and the grader's own calls keep their names.
LAB_RENAMED := cudaDeviceSynchronize cudaSetDeviceFlags cudaDeviceReset cudaDeviceSetCacheConfig cudaDeviceSetLimit
OBJCOPY ?= objcopy
RENAME_LAB_CALLS = $(OBJCOPY) $(foreach f,$(LAB_RENAMED),--redefine-sym $(f)=xl_lab_$(f)) $@
# make print-lab-renamed: the list, for make test's check that every lab object has them renamed
.PHONY: print-lab-renamed
print-lab-renamed:
	@echo $(LAB_RENAMED)
# A lab's own libraries, LIBS_NN-slug, on every link of that lab (explorers, graders, planted and generated mutants:
# grader/mutate/mutate.mk links with lab_wrap too). Lab 10's model runs on cuBLAS, the toolkit's shared library: it
# is found at run time through an rpath to the toolkit it was linked against (CUDA_HOME, from where nvcc is).
LIBS_10-inference-loop := -lcublas -Xlinker -rpath=$(CUDA_HOME)/lib64
# lab_wrap SLUG - what every link of lab SLUG adds: the --wrap flags, then the lab's libraries
lab_wrap = $(WRAP) $(LIBS_$(1))

ifeq ($(V),1)
  Q :=
  QUIET_CC = 
  QUIET_NVCC = 
  QUIET_LINK = 
  QUIET_GEN = 
else
  Q := @
  QUIET_CC = @echo '   CC     $@';
  QUIET_NVCC = @echo '   NVCC   $@';
  QUIET_LINK = @echo '   LINK   $@';
  QUIET_GEN = @echo '   GEN    $@';
endif

# ===== What there is =====
LABS := $(sort $(notdir $(patsubst %/,%,$(dir $(wildcard labs/[0-9][0-9]-*/lab.cu)))))
COMMON_C := $(wildcard common/*.c)
COMMON_CU := $(wildcard common/*.cu)
COMMON_OBJ := $(COMMON_C:%.c=$(B)/obj/%.o) $(COMMON_CU:%.cu=$(B)/obj/%.o)
LIBXL := $(B)/lib/libxl.a
GRADE_OBJ := $(B)/obj/grader/grade.o $(B)/obj/grader/kit.o $(B)/obj/grader/results.o $(B)/obj/grader/credit.o
# graders that watch the host memory a lab call allocates (grader/hostwatch.c replaces the malloc family in them)
HOSTWATCH_LABS := 02-pinned-copy 06-pinning 07-small-transfers
UNIT_TESTS := $(patsubst common/test/%.c,$(B)/bin/unit-%,$(wildcard common/test/*.c))
SELFTEST := $(B)/bin/grade-selftest
PROBE := $(B)/bin/gpu-probe
APPLY_DIFF := grader/mutate/apply.py
LOADGEN := $(B)/bin/loadgen

# ===== Pattern rules =====
$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(ALL_CFLAGS) $(CRIT_CFLAGS) -c $< -o $@

$(B)/obj/%.o: %.cu
	@mkdir -p $(dir $@)
	$(QUIET_NVCC)$(NVCC) $(ALL_NVCCFLAGS) -c $< -o $@

# a lab's own code, the student's or the reference's: its forbidden calls renamed (RENAME_LAB_CALLS)
$(B)/obj/labs/%/lab.o: labs/%/lab.cu
	@mkdir -p $(dir $@)
	$(QUIET_NVCC)$(NVCC) $(ALL_NVCCFLAGS) -c $< -o $@ && $(RENAME_LAB_CALLS)

$(B)/obj/solutions/%/lab.o: solutions/%/lab.cu
	@mkdir -p $(dir $@)
	$(QUIET_NVCC)$(NVCC) $(ALL_NVCCFLAGS) -c $< -o $@ && $(RENAME_LAB_CALLS)

$(LIBXL): $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

# link a program with nvcc (it brings the CUDA runtime, statically)
LINK = $(QUIET_LINK)$(NVCC) $(CUDA_ARCH) -o $@ $(filter %.o %.a,$^)

# ===== Per lab: explorers, graders, mutants =====
# $(1) = slug, e.g. 01-pageable-copy
# A lab's other files besides lab.cu and explore.c (e.g. lab 04's baseline.cu) are the kit's, linked into all.
define LAB_RULES
# a grader's objects besides its own: an instructor's hidden tests (grader/hidden/), the host-memory watch
GRADER_EXTRA_$(1) := $$(patsubst %.c,$(B)/obj/%.o,$$(wildcard grader/hidden/$(1).c)) \
  $$(if $$(filter $(1),$(HOSTWATCH_LABS)),$(B)/obj/grader/hostwatch.o)
KIT_$(1) := $$(patsubst %,$(B)/obj/%.o,$$(basename $$(filter-out labs/$(1)/lab.cu labs/$(1)/explore.c,$$(wildcard labs/$(1)/*.c labs/$(1)/*.cu))))
$(B)/bin/$(1)-explore: $(B)/obj/labs/$(1)/explore.o $(B)/obj/labs/$(1)/lab.o $$(KIT_$(1)) $(LIBXL)
	@mkdir -p $$(dir $$@)
	$$(LINK) $(call lab_wrap,$(1)) $(LDLIBS)
$(B)/bin/$(1)-explore-solution: $(B)/obj/labs/$(1)/explore.o $(B)/obj/solutions/$(1)/lab.o $$(KIT_$(1)) $(LIBXL)
	@mkdir -p $$(dir $$@)
	$$(LINK) $(call lab_wrap,$(1)) $(LDLIBS)
$(B)/bin/$(1)-grade: $(B)/obj/grader/$(1).o $$(GRADER_EXTRA_$(1)) $(B)/obj/labs/$(1)/lab.o $$(KIT_$(1)) $(GRADE_OBJ) $(LIBXL)
	@mkdir -p $$(dir $$@)
	$$(LINK) $$(CRIT_LIBS) $(call lab_wrap,$(1)) $(LDLIBS)
$(B)/bin/$(1)-grade-solution: $(B)/obj/grader/$(1).o $$(GRADER_EXTRA_$(1)) $(B)/obj/solutions/$(1)/lab.o $$(KIT_$(1)) $(GRADE_OBJ) $(LIBXL)
	@mkdir -p $$(dir $$@)
	$$(LINK) $$(CRIT_LIBS) $(call lab_wrap,$(1)) $(LDLIBS)
# a planted mutant is a diff of the reference solution (grader/mutants/NN-slug/NAME.diff), applied here
MUTANTS_$(1) := $$(patsubst grader/mutants/$(1)/%.diff,$(B)/bin/$(1)-mutant-%,$$(wildcard grader/mutants/$(1)/*.diff))
$(B)/mutants/$(1)/%.cu: grader/mutants/$(1)/%.diff solutions/$(1)/lab.cu $(APPLY_DIFF)
	@mkdir -p $$(dir $$@)
	$$(QUIET_GEN)python3 $(APPLY_DIFF) $$< $$@
$(B)/obj/mutants/$(1)/%.o: $(B)/mutants/$(1)/%.cu
	@mkdir -p $$(dir $$@)
	$$(QUIET_NVCC)$$(NVCC) $$(MUTANT_NVCCFLAGS) -c $$< -o $$@ && $$(RENAME_LAB_CALLS)
$(B)/bin/$(1)-mutant-%: $(B)/obj/grader/$(1).o $$(GRADER_EXTRA_$(1)) $(B)/obj/mutants/$(1)/%.o $$(KIT_$(1)) $(GRADE_OBJ) $(LIBXL)
	@mkdir -p $$(dir $$@)
	$$(LINK) $$(CRIT_LIBS) $(call lab_wrap,$(1)) $(LDLIBS)
LAB_BINS += $(B)/bin/$(1)-explore $(B)/bin/$(1)-grade $$(MUTANTS_$(1))
LAB_BINS += $$(if $$(wildcard solutions/$(1)/lab.cu),$(B)/bin/$(1)-explore-solution $(B)/bin/$(1)-grade-solution)
endef
$(foreach l,$(LABS),$(eval $(call LAB_RULES,$(l))))

# the unit tests of common/pincount.c, rescount.c and copylog.c go through the calls they count
$(B)/bin/unit-%: $(B)/obj/common/test/%.o $(LIBXL)
	@mkdir -p $(dir $@)
	$(LINK) $(CRIT_LIBS) $(WRAP) $(LDLIBS)

$(SELFTEST): $(B)/obj/grader/selftest.o $(GRADE_OBJ) $(LIBXL)
	@mkdir -p $(dir $@)
	$(LINK) $(CRIT_LIBS) $(WRAP) $(LDLIBS)

$(PROBE): $(B)/obj/grader/gpu-probe.o $(LIBXL)
	@mkdir -p $(dir $@)
	$(LINK) $(WRAP) $(LDLIBS)

$(LOADGEN): $(B)/obj/grader/load/loadgen.o $(LIBXL)
	@mkdir -p $(dir $@)
	$(LINK) $(WRAP) $(LDLIBS)

# ===== Targets =====
.PHONY: all deps build grade run plots demo test doctor bundle gradescope handout class stability classroom docs figures help clean mutate-gen mutate

# the build runs on every core unless make was given its own -j
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SUB_MAKE = $(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))
all: deps
	@$(SUB_MAKE) build

build: $(LIBXL) $(LAB_BINS) $(UNIT_TESTS) $(SELFTEST) $(PROBE) $(LOADGEN)
	@:

# an optional package apt-get could not install is tried once, not on every make: deps.sh keeps it in a stamp
deps:
	@NVCC=$(NVCC) XL_DEPS_TRIED=$(B)/.deps-tried grader/env/deps.sh

# ===== Which lab and which code: LAB and IMPL, read once for every target =====
# LAB is 1, 01 or 01-pageable-copy; where a target takes several, "01 02". IMPL is student or solution.
# A target given a value it cannot take stops with one line on stderr (ARG_ERROR), before building anything.
IMPL ?= student
, := ,
lab_id = $(firstword $(subst -, ,$(1)))
# lab_one TOKEN - the lab TOKEN names (01-pageable-copy, 01 or 1), or nothing
lab_one = $(firstword $(foreach l,$(LABS),$(if $(filter $(1),$(l) $(call lab_id,$(l)) $(patsubst 0%,%,$(call lab_id,$(l)))),$(l))))
LAB_SEL = $(if $(strip $(LAB)),$(foreach t,$(LAB),$(call lab_one,$(t))),$(LABS))
LAB_BAD = $(strip $(foreach t,$(LAB),$(if $(call lab_one,$(t)),,$(t))))
LAB_IDS = $(foreach l,$(LAB_SEL),$(call lab_id,$(l)))
LAB_ONE_TARGETS := run stability gradescope classroom
LAB_ANY_TARGETS := grade mutate mutate-gen
IMPL_TARGETS := grade run
STAFF_TARGETS := gradescope handout class stability classroom mutate mutate-gen figures
GOAL := $(firstword $(filter $(LAB_ONE_TARGETS) $(LAB_ANY_TARGETS) $(STAFF_TARGETS),$(MAKECMDGOALS)))
staff_error = $(if $(wildcard solutions),,for course staff: this is a student tree (it has no solutions/))
lab_error = $(if $(LAB_BAD),no lab '$(firstword $(LAB_BAD))': say 1$(,) 01 or the full name (labs: $(LABS)))
one_error = $(if $(strip $(LAB)),$(if $(word 2,$(LAB_SEL)),one lab at a time$(,) e.g. LAB=$(firstword $(LAB_IDS))),say which lab$(,) e.g. make $(GOAL) LAB=01 (labs: $(LABS)))
impl_error = $(if $(filter student solution,$(IMPL)),$(if $(word 2,$(IMPL)),IMPL is one word,$(if $(filter solution,$(IMPL)),$(if $(wildcard solutions),,IMPL=solution needs the reference solutions; a student tree has none))),IMPL is student (your lab.cu$(,) the default) or solution (the reference)$(,) not '$(IMPL)')
class_error = $(if $(strip $(SUBS)),$(if $(wildcard $(SUBS)/.),,no folder '$(SUBS)': SUBS= names the folder of submissions),say where the submissions are$(,) e.g. make class SUBS=submissions/)
# make stability's N, MINUTES and LOAD are checked by stability.py itself (--check), RESUME here
STABILITY_ARGS = $(LAB_IDS) $(or $(N),50) $(if $(MINUTES),--minutes '$(MINUTES)') $(if $(filter 1,$(RESUME)),--resume) $(if $(LOAD),--load '$(LOAD)')
stability_error = $(if $(filter-out 0 1,$(RESUME)),RESUME is 1 (add runs to the last report) or 0$(,) not '$(RESUME)',$(subst stability: ,,$(shell python3 grader/scripts/stability.py --check $(STABILITY_ARGS) 2>&1)))
sample_error = $(if $(SAMPLE),$(if $(shell [[ '$(SAMPLE)' =~ ^[0-9]+$$ ]] && echo ok),,SAMPLE is a whole number of mutants per lab$(,) e.g. SAMPLE=12$(,) not '$(SAMPLE)'))
# the goal's first error, checked in this order (each check is "" or one line), before anything is built
ARG_ERROR := $(if $(GOAL),$(strip $(or $(if $(filter $(GOAL),$(STAFF_TARGETS)),$(staff_error)),$(lab_error),$(if $(filter $(GOAL),$(LAB_ONE_TARGETS)),$(one_error)),$(if $(filter $(GOAL),$(IMPL_TARGETS)),$(impl_error)),$(if $(filter class,$(GOAL)),$(class_error)),$(if $(filter stability,$(GOAL)),$(stability_error)),$(if $(filter mutate,$(GOAL)),$(sample_error)))))
ifneq ($(ARG_ERROR),)
$(error make $(GOAL): $(ARG_ERROR))
endif

# quiet_make WHAT TARGETS... - a shell function for a recipe: makes TARGETS with one line of progress ("building
# WHAT") where there is something to build, instead of a line per file; on failure shows the compiler's message
# (the log, without the progress lines of make's own) and returns non-zero. With $$fresh set (a recipe found all its
# targets up to date in one make -q) it returns 0 at once: each make -q reads the whole Makefile again.
define quiet_make
quiet_make() { \
  w=$$1; shift; [ -z "$$fresh" ] || return 0; $(SUB_MAKE) -q "$$@" 2>/dev/null && return 0; echo "building $$w"; \
  mkdir -p $(B)/logs; log=$(B)/logs/build-$$$$.log; \
  if $(SUB_MAKE) -s "$$@" >$$log 2>&1; then rm -f $$log; return 0; fi; \
  grep -v -e '^   [A-Z]*  *$(B)/' -e '^make\[[0-9]*\]: \*\*\*' $$log; rm -f $$log; return 1; }
endef

# each_lab KINDS,DIR - a shell loop for a recipe: builds $(B)/bin/LAB-KIND, for each KIND and each lab of LAB_SEL,
# lab by lab (quiet_make: "building lab NN name (k of n)"). A lab whose DIR/LAB/lab.cu does not compile is said once
# (the compiler's message above it) and left out: the labs built are in $$built, the ids of the others in $$broken.
# One broken lab blocks no other.
define each_lab
$(quiet_make); built='' broken='' k=0; \
for l in $(LAB_SEL); do \
  k=$$((k + 1)); \
  if quiet_make "lab $${l%%-*} $${l#*-} ($$k of $(words $(LAB_SEL)))" $(foreach t,$(1),$(B)/bin/$$l-$(t)); then \
    built="$$built $$l"; \
  else echo "lab $${l%%-*} $${l#*-}: $(2)/$$l/lab.cu does not compile (the compiler's message is above): left out"; \
    broken="$$broken $${l%%-*}"; fi; \
done
endef

# make grade [LAB=01] [IMPL=solution|student]: each lab built and graded on its own; one whose lab.cu does not
# compile is told (the compiler's message above it) and the others are graded. After each lab's grading its report
# page, $(B)/report/NN-slug[-solution].html (grader/report/report.py; the history beside it), is written from the
# results; the pages' paths come last. A page that cannot be written is one line and changes neither the points nor
# the exit status. Several labs: the probe says once why GPU tests are skipped; one lab's line says it itself.
IMPL_DIR := $(if $(filter solution,$(IMPL)),solutions,labs)
IMPL_SFX := $(if $(filter solution,$(IMPL)),-solution)
grade: deps
	@$(quiet_make); fresh=''; \
	 $(SUB_MAKE) -q $(LIBXL) $(PROBE) $(foreach l,$(LAB_SEL),$(B)/bin/$(l)-grade$(IMPL_SFX)) 2>/dev/null && fresh=1; \
	 quiet_make "the kit's library" $(LIBXL) $(PROBE) || exit 2; \
	 if [ $(words $(LAB_SEL)) -gt 1 ]; then \
	   probe=$$($(PROBE)) || { echo "$$probe: the tests that need a GPU are skipped, and each lab's line says how many points they hold"; \
	   export XL_SKIP_REASON_SAID=1; }; fi; \
	 $(call each_lab,grade$(IMPL_SFX),$(IMPL_DIR)); \
	 pages=''; \
	 for l in $$built; do \
	   mkdir -p $(B)/results/$$l-$(IMPL); \
	   XL_IMPL=$(IMPL) XL_RESULTS_DIR=$(B)/results/$$l-$(IMPL) $(B)/bin/$$l-grade$(IMPL_SFX) --short-filename || exit 2; \
	   page=$(B)/report/$$l$(IMPL_SFX).html; \
	   if why=$$(python3 grader/report/report.py $(B)/results/$$l-$(IMPL) $$page --source $(IMPL_DIR)/$$l/lab.cu 2>&1 >/dev/null); \
	   then pages="$$pages $$page"; \
	   else why=$${why#report: }; echo "report: no page for lab $${l%%-*} ($${why:-report.py failed}); the points above stand"; fi; \
	 done; \
	 rc=0; [ -z "$$broken" ] || { echo "make grade: not graded, the code does not compile: lab$$broken" >&2; rc=2; }; \
	 for p in $$pages; do echo "report: $$p (open it in a browser)"; done; \
	 exit $$rc

# make run LAB=01 [IMPL=solution] [ARGS="..."]: builds that lab's explorer only
run: deps
	@bin=$(B)/bin/$(LAB_SEL)-explore$(IMPL_SFX); $(quiet_make); \
	 quiet_make "lab $(LAB_IDS)'s explorer" $$bin || { echo "make run: $(IMPL_DIR)/$(LAB_SEL)/lab.cu does not compile (the compiler's message is above)" >&2; exit 2; }; \
	 $$bin $(ARGS)

# make plots and make demo build only what they run, lab by lab: the tour's code is the reference solutions' (in a
# student tree, the student's); a lab that does not compile is told, the others go on, and the exit status is 2
TOUR_SFX := $(if $(wildcard solutions),-solution)
TOUR_DIR := $(if $(wildcard solutions),solutions,labs)
plots: deps
	@$(quiet_make); quiet_make "the kit's library" $(LIBXL) $(PROBE) || exit 2; \
	 if $(PROBE) >/dev/null; then $(call each_lab,explore$(TOUR_SFX),$(TOUR_DIR)); else broken=''; fi; \
	 XL_PLOTS_LABS="$$built" plots/render.sh || exit $$?; \
	 [ -z "$$broken" ] || { echo "make plots: not measured, the code does not compile: lab$$broken" >&2; exit 2; }

demo: deps
	@$(quiet_make); quiet_make "the kit's library" $(LIBXL) $(PROBE) || exit 2; \
	 if $(PROBE) >/dev/null; then $(call each_lab,explore$(TOUR_SFX) grade$(TOUR_SFX),$(TOUR_DIR)); \
	 else $(call each_lab,grade$(TOUR_SFX),$(TOUR_DIR)); fi; \
	 XL_DEMO_BROKEN="$$broken" labs/demo.sh

test: all
	@grader/test/test.sh

doctor:
	@NVCC=$(NVCC) grader/env/doctor.sh

# make bundle: the Criterion runtime and headers, for GPU hosts without packages
bundle:
	@grader/env/bundle.sh $(CRIT_BUNDLE)

# make gradescope LAB=NN: the autograder zip for Gradescope (no solutions, no mutants)
gradescope:
	@grader/class/gradescope.sh $(LAB_SEL) $(B)/gradescope/$(LAB_SEL)-autograder.zip

# make class SUBS=folder [ARGS="--labs '01 03' --force --out DIR ..."]: grade a whole class (docs/grading.md)
class: all
	@python3 grader/class/class.py "$(SUBS)" $(ARGS)

# make stability LAB=NN [N=50] [MINUTES=M] [RESUME=1] [LOAD=copy|compute|memory|cpu]: grade the reference N times (or until M minutes); pass rate and each timing ratio's margin; RESUME=1 adds to the last report until N; LOAD grades beside the kit's load generator
stability: all
	@python3 grader/scripts/stability.py $(STABILITY_ARGS)

# make classroom LAB=NN: a GitHub Classroom workflow for the lab, for a self-hosted GPU runner
classroom: all
	@mkdir -p $(B)/classroom && grader/class/classroom.sh $(LAB_IDS) >$(B)/classroom/$(LAB_SEL).yml && \
	 echo "classroom: $(B)/classroom/$(LAB_SEL).yml (put it in the assignment's .github/workflows/)"

# make figures: every figure the pages quote (<!--f:NN.name-->) written from refdata/ (docs/figures.py; staff only)
figures:
	@python3 docs/figures.py --write

# make docs: every handout and guide as HTML and PDF in build/docs/, charts from the committed reference data
# (in the staff tree the quoted figures are written from refdata/ first)
docs: deps
	@[ ! -f docs/figures.py ] || python3 docs/figures.py --write || exit 1; out=$$(XL_PLOTS_FROM_REF=1 plots/render.sh 2>&1) || { echo "$$out" | grep -A6 -e failed -e 'not installed' || echo "$$out" | tail -3; exit 1; }; docs/render.sh

# make handout: the student tree (build/handout/xferlab/) and its tarball: no solutions, mutants or hidden tests;
# then each lab's grader is built from the lab.cu it ships, and one that does not compile is named (exit 2)
handout: deps
	@docs/handout/handout.sh $(B)/handout || exit $$?; \
	 $(call each_lab,grade,labs); \
	 [ -z "$$broken" ] || { echo "make handout: it ships a lab.cu that does not compile: lab$$broken (fix it before you hand it out)" >&2; exit 2; }

help:
	@echo "xferlab - graded CUDA labs on moving data between host and GPU"
	@echo "  make              build everything (installs missing packages when it can)"
	@echo "  make demo         the tour: measure, grade, draw the charts"
	@echo "  make test         the kit's own test suite (GPU tests skipped without a GPU)"
	@echo "  make run LAB=01   your explorer: your own figures as a table (ARGS=\"--help\")"
	@echo "  make grade        grade your labs (LAB=01, or LAB=\"01 02\", for some)$(if $(wildcard solutions),; IMPL=solution for the reference)"
	@echo "                    and write each lab's report page, build/report/NN-slug.html: points, failures, your charts"
	@echo "  make plots        every chart into build/plots/ (SVG and PNG)"
	@echo "  make docs         every handout and guide as HTML and PDF into build/docs/ (pandoc, weasyprint)"
	@echo "  make doctor       check nvcc, driver, GPU, Criterion, gnuplot; print the fixes"
	@echo "  make bundle       pack the Criterion runtime for a GPU host without packages"
	@echo "  make clean        remove build/ (keeps a Criterion bundle)"
	@echo "  LAB is 1, 01 or 01-pageable-copy; V=1 shows the full commands; CUDA_HOME=... picks the toolkit"
	@[ ! -d solutions ] || { echo "course staff (this tree has the solutions):"; \
	 echo "  make gradescope LAB=NN  the lab's autograder zip for Gradescope (docs/grading.md)"; \
	 echo "  make handout      the student tree and tarball: no solutions, mutants or hidden tests"; \
	 echo "  make class SUBS=dir  grade a folder of submissions into build/class/gradebook.csv"; \
	 echo "  make stability LAB=NN N=50 [MINUTES=M] [RESUME=1] [LOAD=copy|compute|memory|cpu]  the reference graded N times: pass rate, each threshold's margin"; \
	 echo "  make classroom LAB=NN  a GitHub Classroom workflow for a self-hosted GPU runner"; \
	 echo "  make figures      write every figure the handouts, answer keys and guides quote from refdata/"; }
	@[ ! -f grader/mutate/mutate.mk ] || { echo "  make mutate-gen   generate mutants of every reference solution into build/mutate/ (python3-clang; LAB=NN for one)"; \
	 echo "  make mutate [LAB=NN] [SAMPLE=N]  build and grade the generated mutants on this GPU: killed, survived, score per lab"; }

clean:
	@find $(B) -mindepth 1 -maxdepth 1 ! -name criterion -exec rm -rf {} + 2>/dev/null || true

# make mutate: generated mutants of the reference solutions, graded on a GPU (grader/mutate/; staff only)
-include grader/mutate/mutate.mk

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
.SECONDARY:
