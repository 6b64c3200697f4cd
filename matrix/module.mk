# matrix/module.mk: CPU matrices and vectors (BLAS through OpenBLAS), packed, sparse, Kaldi I/O.
matrix_SRCS  := $(notdir $(wildcard matrix/*.cc))
matrix_TESTS := $(notdir $(wildcard tests/matrix/*-test.cc))
matrix_DEPS  := base
