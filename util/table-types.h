// util/table-types.h: Kaldi's typedefs of tables for the common value types (matrices and vectors
// in float and double, host and Cu; int32, BaseFloat, double, bool; int32 vectors, vectors of
// vectors and of pairs; tokens and token vectors; GeneralMatrix; sparse matrices).
// SPDX-License-Identifier: Apache-2.0
//
// The Cu forms read and write through the Cu classes' own Read/Write, which stage through host
// memory (pinned where a GPU is in use). GeneralMatrix, SparseMatrix and HTK tables are
// cuctx's additions; Kaldi's PosteriorHolder/GauPostHolder tables (hmm/) are not provided.
#ifndef CUCTX_UTIL_TABLE_TYPES_H_
#define CUCTX_UTIL_TABLE_TYPES_H_

#include "base/types.h"
#include "cudamatrix/cu-matrix.h"
#include "cudamatrix/cu-vector.h"
#include "matrix/compressed-matrix.h"
#include "matrix/general-matrix.h"
#include "matrix/matrix.h"
#include "matrix/sparse-matrix.h"
#include "matrix/vector.h"

#include "util/kaldi-holder.h"
#include "util/kaldi-table.h"

namespace cuctx {

typedef TableWriter<KaldiObjectHolder<Matrix<BaseFloat>>> BaseFloatMatrixWriter;
typedef SequentialTableReader<KaldiObjectHolder<Matrix<BaseFloat>>> SequentialBaseFloatMatrixReader;
typedef RandomAccessTableReader<KaldiObjectHolder<Matrix<BaseFloat>>>
    RandomAccessBaseFloatMatrixReader;
typedef RandomAccessTableReaderMapped<KaldiObjectHolder<Matrix<BaseFloat>>>
    RandomAccessBaseFloatMatrixReaderMapped;

typedef TableWriter<KaldiObjectHolder<Matrix<double>>> DoubleMatrixWriter;
typedef SequentialTableReader<KaldiObjectHolder<Matrix<double>>> SequentialDoubleMatrixReader;
typedef RandomAccessTableReader<KaldiObjectHolder<Matrix<double>>> RandomAccessDoubleMatrixReader;
typedef RandomAccessTableReaderMapped<KaldiObjectHolder<Matrix<double>>>
    RandomAccessDoubleMatrixReaderMapped;

typedef TableWriter<KaldiObjectHolder<CompressedMatrix>> CompressedMatrixWriter;

typedef TableWriter<KaldiObjectHolder<Vector<BaseFloat>>> BaseFloatVectorWriter;
typedef SequentialTableReader<KaldiObjectHolder<Vector<BaseFloat>>> SequentialBaseFloatVectorReader;
typedef RandomAccessTableReader<KaldiObjectHolder<Vector<BaseFloat>>>
    RandomAccessBaseFloatVectorReader;
typedef RandomAccessTableReaderMapped<KaldiObjectHolder<Vector<BaseFloat>>>
    RandomAccessBaseFloatVectorReaderMapped;

typedef TableWriter<KaldiObjectHolder<Vector<double>>> DoubleVectorWriter;
typedef SequentialTableReader<KaldiObjectHolder<Vector<double>>> SequentialDoubleVectorReader;
typedef RandomAccessTableReader<KaldiObjectHolder<Vector<double>>> RandomAccessDoubleVectorReader;

typedef TableWriter<KaldiObjectHolder<CuMatrix<BaseFloat>>> BaseFloatCuMatrixWriter;
typedef SequentialTableReader<KaldiObjectHolder<CuMatrix<BaseFloat>>>
    SequentialBaseFloatCuMatrixReader;
typedef RandomAccessTableReader<KaldiObjectHolder<CuMatrix<BaseFloat>>>
    RandomAccessBaseFloatCuMatrixReader;
typedef RandomAccessTableReaderMapped<KaldiObjectHolder<CuMatrix<BaseFloat>>>
    RandomAccessBaseFloatCuMatrixReaderMapped;

typedef TableWriter<KaldiObjectHolder<CuMatrix<double>>> DoubleCuMatrixWriter;
typedef SequentialTableReader<KaldiObjectHolder<CuMatrix<double>>> SequentialDoubleCuMatrixReader;
typedef RandomAccessTableReader<KaldiObjectHolder<CuMatrix<double>>>
    RandomAccessDoubleCuMatrixReader;
typedef RandomAccessTableReaderMapped<KaldiObjectHolder<CuMatrix<double>>>
    RandomAccessDoubleCuMatrixReaderMapped;

typedef TableWriter<KaldiObjectHolder<CuVector<BaseFloat>>> BaseFloatCuVectorWriter;
typedef SequentialTableReader<KaldiObjectHolder<CuVector<BaseFloat>>>
    SequentialBaseFloatCuVectorReader;
typedef RandomAccessTableReader<KaldiObjectHolder<CuVector<BaseFloat>>>
    RandomAccessBaseFloatCuVectorReader;
typedef RandomAccessTableReaderMapped<KaldiObjectHolder<CuVector<BaseFloat>>>
    RandomAccessBaseFloatCuVectorReaderMapped;

typedef TableWriter<KaldiObjectHolder<CuVector<double>>> DoubleCuVectorWriter;
typedef SequentialTableReader<KaldiObjectHolder<CuVector<double>>> SequentialDoubleCuVectorReader;
typedef RandomAccessTableReader<KaldiObjectHolder<CuVector<double>>>
    RandomAccessDoubleCuVectorReader;

typedef TableWriter<BasicHolder<int32>> Int32Writer;
typedef SequentialTableReader<BasicHolder<int32>> SequentialInt32Reader;
typedef RandomAccessTableReader<BasicHolder<int32>> RandomAccessInt32Reader;

typedef TableWriter<BasicVectorHolder<int32>> Int32VectorWriter;
typedef SequentialTableReader<BasicVectorHolder<int32>> SequentialInt32VectorReader;
typedef RandomAccessTableReader<BasicVectorHolder<int32>> RandomAccessInt32VectorReader;

typedef TableWriter<BasicVectorVectorHolder<int32>> Int32VectorVectorWriter;
typedef SequentialTableReader<BasicVectorVectorHolder<int32>> SequentialInt32VectorVectorReader;
typedef RandomAccessTableReader<BasicVectorVectorHolder<int32>> RandomAccessInt32VectorVectorReader;

typedef TableWriter<BasicPairVectorHolder<int32>> Int32PairVectorWriter;
typedef SequentialTableReader<BasicPairVectorHolder<int32>> SequentialInt32PairVectorReader;
typedef RandomAccessTableReader<BasicPairVectorHolder<int32>> RandomAccessInt32PairVectorReader;

typedef TableWriter<BasicPairVectorHolder<BaseFloat>> BaseFloatPairVectorWriter;
typedef SequentialTableReader<BasicPairVectorHolder<BaseFloat>> SequentialBaseFloatPairVectorReader;
typedef RandomAccessTableReader<BasicPairVectorHolder<BaseFloat>>
    RandomAccessBaseFloatPairVectorReader;

typedef TableWriter<BasicHolder<BaseFloat>> BaseFloatWriter;
typedef SequentialTableReader<BasicHolder<BaseFloat>> SequentialBaseFloatReader;
typedef RandomAccessTableReader<BasicHolder<BaseFloat>> RandomAccessBaseFloatReader;
typedef RandomAccessTableReaderMapped<BasicHolder<BaseFloat>> RandomAccessBaseFloatReaderMapped;

typedef TableWriter<BasicHolder<double>> DoubleWriter;
typedef SequentialTableReader<BasicHolder<double>> SequentialDoubleReader;
typedef RandomAccessTableReader<BasicHolder<double>> RandomAccessDoubleReader;

typedef TableWriter<BasicHolder<bool>> BoolWriter;
typedef SequentialTableReader<BasicHolder<bool>> SequentialBoolReader;
typedef RandomAccessTableReader<BasicHolder<bool>> RandomAccessBoolReader;

typedef TableWriter<TokenHolder> TokenWriter;
typedef SequentialTableReader<TokenHolder> SequentialTokenReader;
typedef RandomAccessTableReader<TokenHolder> RandomAccessTokenReader;

typedef TableWriter<TokenVectorHolder> TokenVectorWriter;
typedef SequentialTableReader<TokenVectorHolder> SequentialTokenVectorReader;
typedef RandomAccessTableReader<TokenVectorHolder> RandomAccessTokenVectorReader;

typedef TableWriter<KaldiObjectHolder<GeneralMatrix>> GeneralMatrixWriter;
typedef SequentialTableReader<KaldiObjectHolder<GeneralMatrix>> SequentialGeneralMatrixReader;
typedef RandomAccessTableReader<KaldiObjectHolder<GeneralMatrix>> RandomAccessGeneralMatrixReader;
typedef RandomAccessTableReaderMapped<KaldiObjectHolder<GeneralMatrix>>
    RandomAccessGeneralMatrixReaderMapped;

typedef TableWriter<KaldiObjectHolder<SparseMatrix<BaseFloat>>> BaseFloatSparseMatrixWriter;
typedef SequentialTableReader<KaldiObjectHolder<SparseMatrix<BaseFloat>>>
    SequentialBaseFloatSparseMatrixReader;
typedef RandomAccessTableReader<KaldiObjectHolder<SparseMatrix<BaseFloat>>>
    RandomAccessBaseFloatSparseMatrixReader;

typedef TableWriter<HtkMatrixHolder> HtkMatrixWriter;
typedef SequentialTableReader<HtkMatrixHolder> SequentialHtkMatrixReader;
typedef RandomAccessTableReader<HtkMatrixHolder> RandomAccessHtkMatrixReader;

}  // namespace cuctx

#endif  // CUCTX_UTIL_TABLE_TYPES_H_
