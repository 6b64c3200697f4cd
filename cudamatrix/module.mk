# cudamatrix/module.mk: device runtime, caching allocator, pinned staging, Cu containers, kernels.
cudamatrix_SRCS  := cu-thread-state.cc cu-check.cc cu-launch.cc cu-capture-gate.cc cu-driver.cc cu-device-registry.cc cu-device.cc cu-graph.cc cu-graph-nodes.cc cu-capture-pool.cc cu-foreign-capture.cc cu-alloc-scope.cc cu-gemm-check.cc cu-pinned.cc cu-copy.cc \
                    cu-readback.cc \
                    pinned-matrix.cc cu-storage.cc cu-array.cc cu-vector.cc cu-matrix.cc
# the caching allocator, one job per file (cudamatrix/internal/cu-allocator.h lists them)
cudamatrix_SRCS  += cu-allocator.cc cu-allocator-placement.cc cu-allocator-expandable.cc \
                    cu-allocator-thread-cache.cc cu-allocator-stats.cc cu-allocator-replay.cc \
                    cu-allocator-options.cc cu-allocator-cuda.cc cu-allocator-vmm.cc
cudamatrix_CU    := cu-kernels-misc.cu cu-kernels-copy.cu cu-kernels-elementwise.cu \
                    cu-kernels-reduce.cu
cudamatrix_TESTS := cu-device-test.cc cu-capture-gate-test.cc cu-allocator-expandable-test.cc \
                    cu-allocator-vmm-test.cc \
                    cu-pinned-test.cc cu-copy-test.cc \
                    pinned-matrix-test.cc cu-array-test.cc cu-vector-test.cc cu-matrix-test.cc \
                    cu-multithread-test.cc cu-multi-device-test.cc cu-storage-test.cc
# BLAS family
cudamatrix_SRCS  += cu-matrix-blas.cc cu-vector-blas.cc
cudamatrix_CU    += cu-kernels-blas.cu
cudamatrix_TESTS += cu-matrix-blas-test.cc
# nnet family
cudamatrix_SRCS  += cu-matrix-nnet.cc cu-vector-nnet.cc
cudamatrix_CU    += cu-kernels-nnet.cu
cudamatrix_TESTS += cu-matrix-nnet-test.cc
cudamatrix_SRCS  += cu-matrix-nnet-diff.cc cu-math.cc
cudamatrix_CU    += cu-kernels-nnet-diff.cu cu-kernels-math.cu
cudamatrix_TESTS += cu-matrix-nnet-diff-test.cc cu-math-test.cc

# gather/scatter family
cudamatrix_SRCS  += cu-matrix-gather.cc
cudamatrix_CU    += cu-kernels-gather.cu
cudamatrix_TESTS += cu-matrix-gather-test.cc

# element-wise function family
cudamatrix_SRCS  += cu-matrix-functions.cc
cudamatrix_CU    += cu-kernels-functions.cu
cudamatrix_TESTS += cu-matrix-functions-test.cc

# vector family
cudamatrix_SRCS  += cu-vector-ops.cc
cudamatrix_CU    += cu-kernels-vector.cu
cudamatrix_TESTS += cu-vector-ops-test.cc cu-reduce-test.cc

# random, packed and solver classes
cudamatrix_SRCS  += cu-rand.cc cu-matrix-solve.cc cu-packed-matrix.cc cu-sp-matrix.cc cu-tp-matrix.cc
cudamatrix_CU    += cu-kernels-solve.cu
cudamatrix_TESTS += cu-rand-test.cc cu-matrix-solve-test.cc cu-sp-matrix-test.cc

# sparse family
cudamatrix_SRCS  += cu-sparse-matrix.cc
cudamatrix_CU    += cu-kernels-sparse.cu
cudamatrix_TESTS += cu-sparse-matrix-test.cc

# Kaldi-parity family: matrix/ <-> Cu conversions and small API helpers
cudamatrix_SRCS  += cu-host-conversions.cc cu-parity.cc
cudamatrix_TESTS += cu-host-conversions-test.cc cu-parity-test.cc
# LSTM nonlinearity, element selection and triangular vector products
cudamatrix_SRCS  += cu-math-lstm.cc cu-vector-packed.cc
cudamatrix_CU    += cu-kernels-lstm.cu cu-kernels-vector-packed.cu
cudamatrix_TESTS += cu-math-lstm-test.cc cu-vector-packed-test.cc
# block-diagonal, triangular-product, compressed and sparse-swap parity additions
cudamatrix_SRCS  += cu-block-matrix.cc cu-matrix-tp.cc cu-compressed-matrix.cc cu-sparse-swap.cc
cudamatrix_CU    += cu-kernels-compressed.cu
cudamatrix_TESTS += cu-block-matrix-test.cc cu-compressed-matrix-test.cc cu-matrix-tp-test.cc
cudamatrix_SRCS  += cu-memory-plan.cc cu-allocator-trace.cc
cudamatrix_TESTS += cu-memory-plan-test.cc
cudamatrix_SRCS  += cu-allocator-async.cc
cudamatrix_TESTS += cu-allocator-async-test.cc
# the caching allocator over a host upstream, one topic per file
cudamatrix_TESTS += cu-allocator-conformance-test.cc cu-allocator-placement-test.cc cu-allocator-threads-test.cc \
                    cu-allocator-thread-cache-test.cc cu-allocator-growth-test.cc cu-allocator-trace-test.cc \
                    cu-allocator-options-test.cc cu-allocator-invariants-test.cc
cudamatrix_TESTS += cu-graph-basics-test.cc cu-graph-ops-test.cc cu-graph-memory-test.cc cu-graph-errors-test.cc \
                    cu-graph-threads-test.cc cu-graph-foreign-test.cc cu-graph-sharing-test.cc
# planned scopes: serving a repeated iteration from its memory plan
cudamatrix_SRCS  += cu-planned-scope.cc
cudamatrix_TESTS += cu-planned-scope-test.cc
# per-op profiling: CUDA events resolved later, NVTX ranges
cudamatrix_SRCS  += cu-profile.cc
cudamatrix_TESTS += cu-profile-test.cc
# NCCL collectives on the Cu classes (libnccl loaded at run time)
cudamatrix_SRCS  += cu-nccl.cc
cudamatrix_TESTS += cu-nccl-test.cc

# option parsing and range checks of the allocator options
cudamatrix_TESTS += cu-allocator-options-parse-test.cc

# memory snapshots in PyTorch's format, and failures injected into the allocator layer's device calls
cudamatrix_SRCS  += cu-memory-snapshot.cc cu-allocator-history.cc cu-allocator-snapshot.cc \
                    cu-fault-injection.cc cu-device-snapshot.cc
cudamatrix_TESTS += cu-allocator-snapshot-test.cc cu-allocator-faults-test.cc cu-device-snapshot-test.cc
