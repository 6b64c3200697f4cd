// bin/copy-matrix.cc: copies a Kaldi matrix, converting
// binary/text, float/double, compressed input.
// SPDX-License-Identifier: Apache-2.0
#include "cutool/tool.h"
#include "matrix/matrix.h"

#include <string>

namespace {

const char* kUsage =
    "Copies a matrix in Kaldi's format, converting between binary and text and between float and\n"
    "double; reads compressed (CM, CM2, CM3) matrices too. Output is float unless --double.\n"
    "\n"
    "Usage: copy-matrix [options] <matrix-in> <matrix-out>   (\"-\" is stdin / stdout)\n"
    " e.g.: copy-matrix --binary=false feats.mat - | less\n"
    "Exit status: 0 copied; 1 the input could not be read or the output written; 2 usage error.\n";

template <typename Real>
void Copy(const std::string& in, const std::string& out, float scale, bool binary) {
  cuctx::Matrix<Real> m;
  cuctx::ReadKaldiObject(in, &m);
  if (scale != 1.0f) m.Scale(static_cast<Real>(scale));
  cuctx::WriteKaldiObject(m, out, binary);
}

}  // namespace

int main(int argc, char* argv[]) {
  bool binary = true, write_double = false;
  float scale = 1.0f;
  return cuctx::RunTool(
      argc, argv, cuctx::ToolSpec{kUsage, 2, 2},
      [&](cuctx::ParseOptions* po) {
        po->Register("binary", &binary, "Write in binary mode (false: text)");
        po->Register("scale", &scale, "Multiply the matrix by this factor");
        po->Register("double", &write_double, "Write double precision (DM) instead of float (FM)");
      },
      [&](const cuctx::ToolArgs& args) {
        if (write_double)
          Copy<double>(args.Arg(1), args.Arg(2), scale, binary);
        else
          Copy<float>(args.Arg(1), args.Arg(2), scale, binary);
        return cuctx::kToolExitOk;
      });
}
