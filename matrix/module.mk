# matrix/module.mk: CPU matrices and vectors (BLAS through OpenBLAS), packed, sparse, Kaldi I/O.
matrix_SRCS  := matrix.cc matrix-elementwise.cc matrix-nnet.cc matrix-blas.cc matrix-io.cc \
                vector.cc compressed-matrix.cc packed-matrix.cc sp-matrix.cc tp-matrix.cc \
                packed-convert.cc sparse-matrix.cc
# LAPACK family (lapack-wrappers.h): SVD/Eig/LogDet/Power, symmetric eigen routines, quadratic
# solvers, PCA.
matrix_SRCS  += matrix-lapack.cc sp-matrix-eig.cc sp-matrix-solve.cc matrix-functions-pca.cc
matrix_TESTS := matrix-test.cc matrix-elementwise-test.cc matrix-nnet-test.cc matrix-blas-test.cc \
                matrix-io-test.cc vector-test.cc compressed-matrix-test.cc packed-matrix-test.cc \
                packed-convert-test.cc sparse-matrix-test.cc
matrix_TESTS += matrix-lapack-test.cc sp-matrix-eig-test.cc sp-matrix-solve-test.cc \
                matrix-functions-pca-test.cc
matrix_DEPS  := base
