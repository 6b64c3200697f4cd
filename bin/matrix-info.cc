// bin/matrix-info.cc: prints the shape, storage format and value statistics of a Kaldi matrix.
// SPDX-License-Identifier: Apache-2.0
#include "base/io-funcs.h"
#include "cutool/tool.h"
#include "matrix/compressed-matrix.h"
#include "matrix/matrix.h"

#include <cmath>
#include <cstdio>
#include <istream>
#include <string>

namespace {

const char* kUsage =
    "Prints facts about a matrix in Kaldi's format, one per line as \"name: value\":\n"
    "rows, cols, format (binary|text), precision (float|double; text has none), compression\n"
    "(none|CM|CM2|CM3), then min, max and mean over the values that are not NaN (n/a if there\n"
    "are none; the mean is inf or -inf when infinities of one sign are among them, and\n"
    "\"n/a (+inf and -inf)\" when both signs are, as their sum has no value), nan-count and\n"
    "inf-count.\n"
    "\n"
    "Usage: matrix-info [options] <matrix-in>   (\"-\" is stdin)\n"
    "Exit status: 0 printed; 1 the input could not be read or is malformed; 2 usage error.\n";

struct Storage {
  bool binary;
  const char* precision;
  const char* compression;
};

Storage StorageOf(cuctx::CompressedMatrix::DataFormat format) {
  switch (format) {
    case cuctx::CompressedMatrix::kOneByteWithColHeaders:
      return {true, "float", "CM (one byte per value, per-column ranges)"};
    case cuctx::CompressedMatrix::kTwoByte:
      return {true, "float", "CM2 (two bytes per value)"};
    default:
      return {true, "float", "CM3 (one byte per value)"};
  }
}

void PrintValue(const char* name, bool any, double value) {
  if (any)
    std::printf("%s: %.9g\n", name, value);
  else
    std::printf("%s: n/a\n", name);
}

// Reads the matrix in double, so that neither float nor double input loses anything in the
// statistics, and notes how it was stored. Has the Read signature ReadKaldiObject expects.
struct StoredMatrix {
  cuctx::Matrix<double> m;
  Storage storage{false, "none (text)", "none"};

  void Read(std::istream& is, bool binary) {
    const int first = binary ? cuctx::Peek(is, true) : -1;
    if (first == 'C') {
      // A compressed matrix names its own kind, which the matrix reader would hide.
      cuctx::CompressedMatrix cm;
      cm.Read(is, true);
      m.Resize(cm.NumRows(), cm.NumCols(), cuctx::kUndefined);
      cm.CopyToMat(&m);
      storage = StorageOf(cm.Format());
      return;
    }
    m.Read(is, binary);
    if (binary) storage = {true, first == 'D' ? "double" : "float", "none"};
  }
};

int Info(const cuctx::ToolArgs& args) {
  StoredMatrix stored;
  cuctx::ReadKaldiObject(args.Arg(1), &stored);
  const cuctx::Matrix<double>& m = stored.m;
  const Storage& storage = stored.storage;

  double min = INFINITY, max = -INFINITY, sum = 0.0;
  cuctx::int64 nan_count = 0, pos_inf_count = 0, neg_inf_count = 0, finite_or_inf = 0;
  for (cuctx::MatrixIndexT r = 0; r < m.NumRows(); ++r) {
    const double* row = m.RowData(r);
    for (cuctx::MatrixIndexT c = 0; c < m.NumCols(); ++c) {
      const double x = row[c];
      if (std::isnan(x)) {
        ++nan_count;
        continue;
      }
      if (std::isinf(x)) ++(x > 0 ? pos_inf_count : neg_inf_count);
      min = std::fmin(min, x);
      max = std::fmax(max, x);
      sum += x;
      ++finite_or_inf;
    }
  }
  const bool any = finite_or_inf > 0;
  std::printf("rows: %d\ncols: %d\n", m.NumRows(), m.NumCols());
  std::printf("format: %s\n", storage.binary ? "binary" : "text");
  std::printf("precision: %s\ncompression: %s\n", storage.precision, storage.compression);
  PrintValue("min", any, min);
  PrintValue("max", any, max);
  if (pos_inf_count > 0 && neg_inf_count > 0)
    std::printf("mean: n/a (+inf and -inf)\n");
  else
    PrintValue("mean", any, any ? sum / static_cast<double>(finite_or_inf) : 0.0);
  std::printf("nan-count: %lld\ninf-count: %lld\n", static_cast<long long>(nan_count),
              static_cast<long long>(pos_inf_count + neg_inf_count));
  return cuctx::kToolExitOk;
}

}  // namespace

int main(int argc, char* argv[]) {
  return cuctx::RunTool(argc, argv, cuctx::ToolSpec{kUsage, 1, 1}, nullptr, Info);
}
