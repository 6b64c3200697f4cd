// bin/matrix-info.cc: prints the shape, storage format and value statistics of a Kaldi matrix.
// SPDX-License-Identifier: Apache-2.0
#include "base/io-funcs.h"
#include "cudamatrix/cu-tool.h"
#include "matrix/matrix.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

namespace {

const char* kUsage =
    "Prints facts about a matrix in Kaldi's format, one per line as \"name: value\":\n"
    "rows, cols, format (binary|text), precision (float|double; text has none), compression\n"
    "(none|CM|CM2|CM3), then min, max and mean over the values that are not NaN (n/a if there\n"
    "are none), nan-count and inf-count.\n"
    "\n"
    "Usage: matrix-info [options] <matrix-in>   (\"-\" is stdin)\n"
    "Exit status: 0 printed; 1 the input could not be read or is malformed; 2 usage error.\n";

struct Storage {
  const char* precision;
  const char* compression;
};

// What the token of a binary matrix says about its storage. Unknown tokens are left to
// Matrix::Read, which rejects them with a message naming the tokens it accepts.
Storage StorageOf(const std::string& token, bool binary) {
  if (!binary) return {"none (text)", "none"};
  if (token == "DM") return {"double", "none"};
  if (token == "CM") return {"float", "CM (one byte per value, per-column ranges)"};
  if (token == "CM2") return {"float", "CM2 (two bytes per value)"};
  if (token == "CM3") return {"float", "CM3 (one byte per value)"};
  return {"float", "none"};
}

void PrintValue(const char* name, bool any, double value) {
  if (any)
    std::printf("%s: %.9g\n", name, value);
  else
    std::printf("%s: n/a\n", name);
}

int Info(const cuctx::ToolArgs& args) {
  cuctx::ToolInputBytes input = cuctx::ReadAllInput(args.Arg(1));
  std::istringstream is(input.bytes);
  std::string token;
  // Read in double, so that neither float nor double input loses anything in the statistics.
  cuctx::Matrix<double> m;
  try {
    if (input.binary && !input.bytes.empty()) {
      cuctx::ReadToken(is, true, &token);
      is.clear();
      is.seekg(0);
    }
    m.Read(is, input.binary);
  } catch (const cuctx::Error& e) {
    throw cuctx::Error("reading " + input.name + ": " + e.what());
  }
  const Storage storage = StorageOf(token, input.binary);

  double min = INFINITY, max = -INFINITY, sum = 0.0;
  cuctx::int64 nan_count = 0, inf_count = 0, finite_or_inf = 0;
  for (cuctx::MatrixIndexT r = 0; r < m.NumRows(); ++r) {
    const double* row = m.RowData(r);
    for (cuctx::MatrixIndexT c = 0; c < m.NumCols(); ++c) {
      const double x = row[c];
      if (std::isnan(x)) {
        ++nan_count;
        continue;
      }
      if (std::isinf(x)) ++inf_count;
      min = std::fmin(min, x);
      max = std::fmax(max, x);
      sum += x;
      ++finite_or_inf;
    }
  }
  const bool any = finite_or_inf > 0;
  std::printf("rows: %d\ncols: %d\n", m.NumRows(), m.NumCols());
  std::printf("format: %s\n", input.binary ? "binary" : "text");
  std::printf("precision: %s\ncompression: %s\n", storage.precision, storage.compression);
  PrintValue("min", any, min);
  PrintValue("max", any, max);
  PrintValue("mean", any, any ? sum / static_cast<double>(finite_or_inf) : 0.0);
  std::printf("nan-count: %lld\ninf-count: %lld\n", static_cast<long long>(nan_count),
              static_cast<long long>(inf_count));
  return cuctx::kToolExitOk;
}

}  // namespace

int main(int argc, char* argv[]) {
  return cuctx::RunTool(argc, argv, cuctx::ToolSpec{kUsage, 1, 1}, nullptr, Info);
}
