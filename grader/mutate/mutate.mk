# mutate.mk - make rules for the generated mutants of the reference solutions (grader/mutate/). Course staff only;
# included by the top Makefile, whose variables it uses (LABS, B, NVCC, ALL_NVCCFLAGS, KIT_*, GRADER_EXTRA_*, LINK ...).
#
#   make mutate-gen                     generate build/mutate/NN-slug/ (needs /usr/bin/python3 with python3-clang)
#   make mutate [LAB=NN] [SAMPLE=N]     generate when it can, then build and grade the mutants on this GPU
#
# build/mutate/NN-slug/bin/ID is mutant ID linked exactly as the lab's grader is: its source, ID.cu, is its diff
# ID.diff applied to the solution, as the planted mutants' are (grader/mutate/apply.py);
# run.py asks for the ones it grades. They are compiled for this machine's GPU only (MUTANT_NVCCFLAGS).

MUTATE_DIR := $(B)/mutate
MUTATE_PY ?= /usr/bin/python3
# a grader finds a Criterion bundle at $ORIGIN/../criterion/lib; a mutant lies three folders further down
MUTATE_RPATH := $(if $(wildcard $(CRIT_BUNDLE)/include/criterion/criterion.h),-Xlinker -rpath='$$ORIGIN/../../../criterion/lib')

# $(1) = slug: a mutant's object and its grader
define MUTATE_RULES
$(MUTATE_DIR)/$(1)/%.cu: $(MUTATE_DIR)/$(1)/%.diff solutions/$(1)/lab.cu $(APPLY_DIFF)
	$$(QUIET_GEN)python3 $(APPLY_DIFF) $$< $$@
$(MUTATE_DIR)/$(1)/obj/%.o: $(MUTATE_DIR)/$(1)/%.cu
	@mkdir -p $$(dir $$@)
	$$(QUIET_NVCC)$$(NVCC) $$(MUTANT_NVCCFLAGS) -c $$< -o $$@ && $$(RENAME_LAB_CALLS)
$(MUTATE_DIR)/$(1)/bin/%: $(B)/obj/grader/$(1).o $$(GRADER_EXTRA_$(1)) $(MUTATE_DIR)/$(1)/obj/%.o $$(KIT_$(1)) $(GRADE_OBJ) $(LIBXL)
	@mkdir -p $$(dir $$@)
	$$(LINK) $$(CRIT_LIBS) $$(MUTATE_RPATH) $(call lab_wrap,$(1)) $(LDLIBS)
endef
$(foreach l,$(LABS),$(eval $(call MUTATE_RULES,$(l))))

.PHONY: mutate-gen mutate

MUTATE_HAS_CLANG = $(MUTATE_PY) -c 'import clang.cindex' >/dev/null 2>&1

# make mutate-gen [LAB=NN]: the mutants, their diffs and manifests into build/mutate/ (no GPU needed)
mutate-gen:
	@$(MUTATE_HAS_CLANG) || { echo "make mutate-gen: needs $(MUTATE_PY) with libclang's Python bindings (sudo apt-get install python3-clang)"; exit 2; }; \
	 $(MUTATE_PY) grader/mutate/generate.py $(if $(strip $(LAB)),--labs "$(LAB_IDS)") --out $(MUTATE_DIR)

# make mutate [LAB=NN] [SAMPLE=N]: generate where python3-clang is installed (else grade what build/mutate holds),
# then build and grade every mutant (or N per lab) on this machine's GPU
mutate: all
	@if $(MUTATE_HAS_CLANG); then $(MUTATE_PY) grader/mutate/generate.py $(if $(strip $(LAB)),--labs "$(LAB_IDS)") --out $(MUTATE_DIR) || exit 2; \
	 else echo "mutate: no python3-clang here: grading the mutants already in $(MUTATE_DIR)/"; fi; \
	 python3 grader/mutate/run.py $(if $(strip $(LAB)),--labs "$(LAB_IDS)") $(if $(SAMPLE),--sample $(SAMPLE)) --jobs $$(nproc) --out $(MUTATE_DIR)

-include $(wildcard $(MUTATE_DIR)/*/obj/*.d)
