# matrix/module.mk: CPU matrices and vectors (BLAS through OpenBLAS), packed, sparse, Kaldi I/O.
matrix_SRCS  := matrix.cc matrix-elementwise.cc matrix-nnet.cc matrix-blas.cc matrix-io.cc \
                vector.cc compressed-matrix.cc packed-matrix.cc sp-matrix.cc tp-matrix.cc \
                packed-convert.cc sparse-matrix.cc
matrix_TESTS := matrix-test.cc matrix-elementwise-test.cc matrix-nnet-test.cc matrix-blas-test.cc \
                matrix-io-test.cc vector-test.cc compressed-matrix-test.cc packed-matrix-test.cc \
                packed-convert-test.cc sparse-matrix-test.cc
# FFT/DCT, optimization, GeneralMatrix and compressed-matrix conversions (Kaldi parity).
matrix_SRCS  += matrix-functions-fft.cc srfft.cc optimization.cc general-matrix.cc \
                compressed-matrix-range.cc compressed-convert.cc
matrix_TESTS += matrix-functions-fft-test.cc srfft-test.cc optimization-test.cc \
                general-matrix-test.cc compressed-matrix-range-test.cc
# Kaldi parity extras: whole-matrix softmax, sparse and packed operands, Sp congruences, vectors.
matrix_SRCS  += matrix-extra.cc matrix-sparse-ops.cc matrix-packed-ops.cc sp-matrix-ops.cc \
                vector-extra.cc
matrix_TESTS += matrix-extra-test.cc matrix-sparse-ops-test.cc matrix-packed-ops-test.cc \
                sp-matrix-ops-test.cc vector-extra-test.cc
# packed triangular vector products (VectorBase::MulTp, AddTpVec)
matrix_SRCS  += vector-packed.cc
# LAPACK family (lapack-wrappers.h): SVD/Eig/LogDet/Power, symmetric eigen routines, quadratic
# solvers, PCA.
matrix_SRCS  += matrix-lapack.cc sp-matrix-eig.cc sp-matrix-solve.cc matrix-functions-pca.cc
matrix_TESTS += matrix-lapack-test.cc sp-matrix-eig-test.cc sp-matrix-solve-test.cc \
                matrix-functions-pca-test.cc
# Kaldi parity (traces/products, Sp decompositions, matrix exponential, HTK I/O, SVD helpers).
matrix_SRCS  += matrix-traces.cc sp-matrix-extra.cc matrix-exponential.cc htk-io.cc
matrix_TESTS += matrix-traces-test.cc sp-matrix-extra-test.cc matrix-exponential-test.cc \
                htk-io-test.cc matrix-functions-extra-test.cc
