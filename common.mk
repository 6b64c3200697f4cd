# common.mk: compilers, flags, CUDA detection, build variants and pattern rules.
# This is the only place that knows about compilers; module.mk files only list sources.
# `make print-config` shows the values in effect. Everything here can be overridden on the command line.

CUDA_HOME ?= /usr/local/cuda
CUDA      ?= $(if $(wildcard $(CUDA_HOME)/bin/nvcc),1,0)
CUDA_ARCH ?= sm_90
DEBUG     ?= 0
SAN       ?=
WERROR    ?= 0
PREFIX    ?= /usr/local
CXX       ?= g++
NVCC      ?= $(CUDA_HOME)/bin/nvcc

# ---- variant: each one builds into its own tree ------------------------------------------------
ifeq ($(SAN),address)
  VARIANT := asan
else ifeq ($(SAN),undefined)
  VARIANT := ubsan
else ifneq ($(SAN),)
  $(error SAN must be empty, 'address' or 'undefined' (got '$(SAN)'))
else ifeq ($(DEBUG),1)
  VARIANT := debug
else
  VARIANT := release
endif
ifneq ($(CUDA),1)
  VARIANT := $(if $(filter release,$(VARIANT)),cpu,cpu-$(VARIANT))
endif
BUILD ?= build/$(VARIANT)
OBJ   := $(BUILD)/obj
LIB   := $(BUILD)/lib

# ---- flags shared by both compilers ---------------------------------------------------------------
CPPFLAGS := -I. -DCUCTX_HAVE_CUDA=$(CUDA)
WARN     := -Wall -Wextra -Wshadow -Wnon-virtual-dtor $(if $(filter 1,$(WERROR)),-Werror)
OPT_release := -O2 -g -DNDEBUG
OPT_debug   := -O0 -g -DCUCTX_SYNC_CHECKS_DEFAULT=1
OPT_asan    := -O1 -g -fsanitize=address -fno-omit-frame-pointer
OPT_ubsan   := -O1 -g -fsanitize=undefined -fno-sanitize-recover=undefined
OPT := $(OPT_$(VARIANT:cpu-%=%))
ifeq ($(VARIANT),cpu)
  OPT := $(OPT_release)
endif
# Thread-local variables through TLS descriptors on x86-64 (the default elsewhere): in a shared
# library each access is otherwise a call to __tls_get_addr, and a Cu op reads its thread's state
# several times (CuDevice::Instantiate, the thread's device and capture flags). Measured on an H200
# (tools/probes/resize-layers.cc, run `tls`): a CuMatrix made and destroyed 186 -> 167 ns.
TLS_DIALECT := $(if $(findstring x86_64,$(shell $(CXX) -dumpmachine)),-mtls-dialect=gnu2)
CXXFLAGS := -std=c++17 -fPIC -pthread $(TLS_DIALECT) $(WARN) $(OPT)
LDFLAGS  := -pthread $(filter -fsanitize=%,$(OPT))
LDLIBS   := -lopenblas

ifeq ($(CUDA),1)
  # Host code compiled by g++ gets the same per-thread default stream as nvcc's --default-stream.
  CPPFLAGS  += -I$(CUDA_HOME)/include -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1
  ARCH_NUM  := $(CUDA_ARCH:sm_%=%)
  NVCCFLAGS := -std=c++17 --default-stream per-thread -I. -DCUCTX_HAVE_CUDA=1 \
               -gencode arch=compute_$(ARCH_NUM),code=[sm_$(ARCH_NUM),compute_$(ARCH_NUM)] \
               -Xcompiler=-fPIC,-Wall,-Wextra $(if $(filter debug,$(VARIANT)),-G -g -DCUCTX_SYNC_CHECKS_DEFAULT=1,-O2 -lineinfo -DNDEBUG)
  CUDA_LIBDIR := $(CUDA_HOME)/lib64
  LDFLAGS   += -L$(CUDA_LIBDIR) -Wl,-rpath,$(CUDA_LIBDIR)
  LDLIBS    += -lcusolver -lcusparse -lcurand -lcublas -lcudart
endif
# NCCL: only its header is needed at build time. cudamatrix/cu-nccl.cc loads libnccl.so.2 with
# dlopen on first use, so nothing links against it and libcuctx.so loads where NCCL is absent.
NCCL ?= $(if $(filter 1,$(CUDA)),$(if $(wildcard $(CUDA_HOME)/include/nccl.h),1,0),0)
CPPFLAGS += -DCUCTX_HAVE_NCCL=$(NCCL)
LDLIBS += -lm -ldl

GTEST_LIBS := -lgtest

# ---- flags stamp: rewritten only when the flags change, and every object depends on it ----------
# -Werror is left out: it changes whether a build stops, not what it produces, so switching WERROR
# (CI uses WERROR=1) does not force a full rebuild.
FLAGS_TEXT  := $(filter-out -Werror,$(CXX) $(CPPFLAGS) $(CXXFLAGS)) | $(NVCC) $(NVCCFLAGS) | $(LDFLAGS) $(LDLIBS)
FLAGS_STAMP := $(BUILD)/flags.stamp
$(shell mkdir -p $(BUILD) && (echo '$(FLAGS_TEXT)' | cmp -s - $(FLAGS_STAMP) || echo '$(FLAGS_TEXT)' > $(FLAGS_STAMP)))

# ---- revision stamp: the git revision the tools print with --version (cutool/tool.cc). Rewritten
# only when the revision changes, so a new commit rebuilds that one object. Empty outside a git
# checkout; a trailing "+" marks uncommitted changes to tracked files.
REVISION := $(shell r=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD -- 2>/dev/null || r="$$r+"; }; echo "$$r")
REVISION_STAMP := $(BUILD)/revision.stamp
$(shell mkdir -p $(BUILD) && (echo '$(REVISION)' | cmp -s - $(REVISION_STAMP) || echo '$(REVISION)' > $(REVISION_STAMP)))
$(OBJ)/cutool/tool.o: $(REVISION_STAMP)
$(OBJ)/cutool/tool.o: CPPFLAGS += -DCUCTX_REVISION='"$(REVISION)"'

# ---- pattern rules (dependency files come from -MMD -MP for both compilers) ---------------------
$(OBJ)/%.o: %.cc $(FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  CXX   $<"
	@$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@

$(OBJ)/%.o: %.cu $(FLAGS_STAMP)
	@mkdir -p $(@D)
	@echo "  NVCC  $<"
	@$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

# ---- per-module rules: $(1) is the folder name --------------------------------------------------
# A module.mk sets <dir>_SRCS (.cc), <dir>_CU (.cu, built only with CUDA=1) and <dir>_TESTS (sources
# under tests/<dir>/). Link order comes from the order of MODULES in the Makefile: each archive is
# put in front of ALL_LIBS, so a module may use the modules listed before it.
define MODULE_RULES
$(1)_OBJS := $$(addprefix $$(OBJ)/$(1)/,$$($(1)_SRCS:.cc=.o))
ifeq ($$(CUDA),1)
  $(1)_OBJS += $$(addprefix $$(OBJ)/$(1)/,$$($(1)_CU:.cu=.o))
endif
$(1)_LIB := $$(LIB)/libcuctx-$(1).a
$$($(1)_LIB): $$($(1)_OBJS)
	@mkdir -p $$(@D)
	@echo "  AR    $$@"
	@rm -f $$@ && $$(AR) rcs $$@ $$^
$(1)_TEST_BINS := $$(addprefix $$(BUILD)/tests/$(1)/,$$(basename $$($(1)_TESTS)))
ALL_OBJS += $$($(1)_OBJS) $$(addprefix $$(OBJ)/tests/$(1)/,$$($(1)_TESTS:.cc=.o))
ALL_LIBS := $$($(1)_LIB) $$(ALL_LIBS)
TEST_BINS += $$($(1)_TEST_BINS)
endef
