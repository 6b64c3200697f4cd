// bin/copy-vector.cc: copies a Kaldi vector, converting between binary/text and float/double.
// SPDX-License-Identifier: Apache-2.0
#include "cutool/tool.h"
#include "matrix/vector.h"

#include <string>

namespace {

const char* kUsage =
    "Copies a vector in Kaldi's format, converting between binary and text and between float and\n"
    "double. Output is float unless --double.\n"
    "\n"
    "Usage: copy-vector [options] <vector-in> <vector-out>   (\"-\" is stdin / stdout)\n"
    " e.g.: copy-vector --binary=false weights.vec -\n"
    "Exit status: 0 copied; 1 the input could not be read or the output written; 2 usage error.\n";

template <typename Real>
void Copy(const std::string& in, const std::string& out, float scale, bool binary) {
  cuctx::Vector<Real> v;
  cuctx::ReadKaldiObject(in, &v);
  if (scale != 1.0f) v.Scale(static_cast<Real>(scale));
  cuctx::WriteKaldiObject(v, out, binary);
}

}  // namespace

int main(int argc, char* argv[]) {
  bool binary = true, write_double = false;
  float scale = 1.0f;
  return cuctx::RunTool(
      argc, argv, cuctx::ToolSpec{kUsage, 2, 2},
      [&](cuctx::ParseOptions* po) {
        po->Register("binary", &binary, "Write in binary mode (false: text)");
        po->Register("scale", &scale, "Multiply the vector by this factor");
        po->Register("double", &write_double, "Write double precision (DV) instead of float (FV)");
      },
      [&](const cuctx::ToolArgs& args) {
        if (write_double)
          Copy<double>(args.Arg(1), args.Arg(2), scale, binary);
        else
          Copy<float>(args.Arg(1), args.Arg(2), scale, binary);
        return cuctx::kToolExitOk;
      });
}
