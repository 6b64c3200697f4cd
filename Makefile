# Makefile: cuctx build targets. Flags and rules live in common.mk; sources in */module.mk.
# Quick start: `make run` (install missing packages, build, check the GPU) and `make test`.

# LIB_MODULES make up libcuctx.so and are installed; cutool/ (the bin/ tools' frame and the health
# check) is linked into bin/ and tests only. Order matters: a module links against those before it.
LIB_MODULES := base matrix util cudamatrix
MODULES := $(LIB_MODULES) cutool
.DEFAULT_GOAL := all

include common.mk

# A build on a machine that lacks a Debian package stops here, before compiling, and says which
# and how to get it (make run, make test and make deps install what is missing themselves).
ifeq ($(filter deps run test clean help format format-check lint print-config,$(MAKECMDGOALS)),)
  MISSING_DEPS := $(shell tools/install-deps.sh --check 2>/dev/null | sed -n 's/^install-deps: missing: //p')
  ifneq ($(strip $(MISSING_DEPS)),)
    $(error missing Debian packages: $(MISSING_DEPS). Install them with `make deps` (or `tools/install-deps.sh`; `make run` and `make test` do it too), then build again)
  endif
endif
include $(addsuffix /module.mk,$(MODULES)) tests/module.mk bin/module.mk
$(foreach m,$(MODULES),$(eval $(call MODULE_RULES,$(m))))

TEST_SUPPORT_OBJS := $(addprefix $(OBJ)/tests/,$(tests_SUPPORT:.cc=.o))
TOOL_BINS := $(addprefix $(BUILD)/bin/,$(basename $(bin_TOOLS)))
SHARED_LIB := $(LIB)/libcuctx.so
ALL_OBJS += $(TEST_SUPPORT_OBJS) $(addprefix $(OBJ)/bin/,$(bin_TOOLS:.cc=.o))
MODULE_OBJS := $(foreach m,$(LIB_MODULES),$($(m)_OBJS))

# Objects made by chained pattern rules are kept (make would delete them as intermediates).
.SECONDARY:

.PHONY: all libs tools tests run test test-both bench deps install print-config format format-check lint clean help

all: libs tools tests
libs: $(ALL_LIBS) $(SHARED_LIB)
tools: $(TOOL_BINS)
tests: $(TEST_BINS)

$(SHARED_LIB): $(MODULE_OBJS)
	@mkdir -p $(@D)
	@echo "  LD    $@"
	@$(CXX) -shared -Wl,-soname,libcuctx.so $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/bin/%: $(OBJ)/bin/%.o $(ALL_LIBS)
	@mkdir -p $(@D)
	@echo "  LD    $@"
	@$(CXX) $(LDFLAGS) $< $(ALL_LIBS) $(LDLIBS) -o $@

$(BUILD)/tests/%: $(OBJ)/tests/%.o $(TEST_SUPPORT_OBJS) $(ALL_LIBS)
	@mkdir -p $(@D)
	@echo "  LD    $@"
	@$(CXX) $(LDFLAGS) $< $(TEST_SUPPORT_OBJS) $(ALL_LIBS) $(GTEST_LIBS) $(LDLIBS) -o $@

# Installs missing Debian packages; the script itself is a no-op when everything is there.
deps:
	@tools/install-deps.sh --if-missing

# A CUDA=0 build answers "built without CUDA" with exit status 1 after its CPU check; that is success.
run: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/bin/cuda-gpu-available --use-gpu=optional$(if $(filter 0,$(CUDA)), || test $$? -eq 1)

# CUCTX_TEST_GPU=no|optional|yes picks the device mode of the gtest binaries (default optional).
test: deps
	@$(MAKE) --no-print-directory all
	@MAKE="$(MAKE)" BUILD="$(BUILD)" CUDA="$(CUDA)" tools/run-tests.sh $(TEST_BINS) $(SCRIPT_TESTS)

# On a GPU host: every binary in CPU mode and in GPU mode, as Kaldi's tests do.
test-both: all
	@CUCTX_TEST_GPU=no tools/run-tests.sh $(TEST_BINS)
	@CUCTX_TEST_GPU=yes tools/run-tests.sh $(TEST_BINS)

install: libs tools
	@tools/install.sh "$(PREFIX)" "$(BUILD)" "$(CUDA)" "$(CUDA_HOME)" "$(LIB_MODULES)"

print-config:
	@echo "CUDA=$(CUDA) NCCL=$(NCCL) CUDA_HOME=$(CUDA_HOME) CUDA_ARCH=$(CUDA_ARCH) VARIANT=$(VARIANT) BUILD=$(BUILD)"
	@echo "CXX=$(CXX) CPPFLAGS=$(CPPFLAGS)"
	@echo "CXXFLAGS=$(CXXFLAGS)"
	@echo "NVCCFLAGS=$(NVCCFLAGS)"
	@echo "LDFLAGS=$(LDFLAGS) LDLIBS=$(LDLIBS)"

SOURCES = $(shell git ls-files '*.h' '*.cc' '*.cu' '*.cuh')
format:
	clang-format -i $(SOURCES)
format-check:
	clang-format --dry-run --Werror $(SOURCES)

lint:
	@tools/lint.sh

clean:
	rm -rf build

help:
	@echo "targets: all run test test-both install PREFIX=dir print-config format format-check lint clean"
	@echo "variables: CUDA=0|1 CUDA_ARCH=sm_90 DEBUG=1 SAN=address|undefined WERROR=1 BUILD=dir"

-include $(ALL_OBJS:.o=.d)
