# cudamatrix/module.mk: device runtime, caching allocator, pinned staging, Cu containers, kernels.
cudamatrix_SRCS  := cu-check.cc cu-device.cc cu-gemm-check.cc cu-allocator.cc \
                    cu-allocator-cuda.cc cu-allocator-options.cc cu-pinned.cc cu-copy.cc \
                    pinned-matrix.cc cu-storage.cc cu-array.cc cu-vector.cc cu-matrix.cc
cudamatrix_CU    := cu-kernels-misc.cu cu-kernels-copy.cu cu-kernels-elementwise.cu \
                    cu-kernels-reduce.cu
cudamatrix_TESTS := cu-device-test.cc cu-allocator-test.cc cu-pinned-test.cc cu-copy-test.cc \
                    pinned-matrix-test.cc cu-array-test.cc cu-vector-test.cc cu-matrix-test.cc
cudamatrix_DEPS  := matrix base
# BLAS family
cudamatrix_SRCS  += cu-matrix-blas.cc cu-vector-blas.cc
cudamatrix_CU    += cu-kernels-blas.cu
cudamatrix_TESTS += cu-matrix-blas-test.cc
# nnet family
cudamatrix_SRCS  += cu-matrix-nnet.cc cu-vector-nnet.cc
cudamatrix_CU    += cu-kernels-nnet.cu
cudamatrix_TESTS += cu-matrix-nnet-test.cc

# gather/scatter family

# element-wise function family

# vector family
cudamatrix_SRCS  += cu-vector-ops.cc
cudamatrix_CU    += cu-kernels-vector.cu
cudamatrix_TESTS += cu-vector-ops-test.cc

# random, packed and solver classes

# sparse family

# health-check family
