# cudamatrix/module.mk: device runtime, caching allocator, pinned staging, Cu containers, kernels.
cudamatrix_SRCS  := $(notdir $(wildcard cudamatrix/*.cc))
cudamatrix_CU    := $(notdir $(wildcard cudamatrix/*.cu))
cudamatrix_TESTS := $(notdir $(wildcard tests/cudamatrix/*-test.cc))
cudamatrix_DEPS  := matrix base
