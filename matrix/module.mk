# matrix/module.mk: CPU matrices and vectors (BLAS through OpenBLAS), packed, sparse, Kaldi I/O.
matrix_SRCS  := matrix.cc matrix-elementwise.cc matrix-nnet.cc matrix-blas.cc matrix-io.cc \
                vector.cc compressed-matrix.cc packed-matrix.cc sp-matrix.cc tp-matrix.cc \
                packed-convert.cc sparse-matrix.cc
matrix_TESTS := matrix-test.cc matrix-elementwise-test.cc matrix-nnet-test.cc matrix-blas-test.cc \
                matrix-io-test.cc vector-test.cc compressed-matrix-test.cc packed-matrix-test.cc \
                packed-convert-test.cc sparse-matrix-test.cc
matrix_DEPS  := base
# Kaldi parity (traces/products, Sp decompositions, matrix exponential, HTK I/O, SVD helpers).
matrix_SRCS  += matrix-traces.cc sp-matrix-extra.cc matrix-exponential.cc htk-io.cc \
                matrix-functions-extra.cc
matrix_TESTS += matrix-traces-test.cc sp-matrix-extra-test.cc matrix-exponential-test.cc \
                htk-io-test.cc matrix-functions-extra-test.cc
