// bin/copy-object.h: the one body of copy-matrix and copy-vector: read a Kaldi object, scale it,
// write it in the chosen mode (binary/text) and precision (float unless --double).
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BIN_COPY_OBJECT_H_
#define CUCTX_BIN_COPY_OBJECT_H_

#include "cutool/tool.h"

#include <string>

namespace cuctx {

// Describes one copy tool. `Object` is Matrix or Vector: read with ReadKaldiObject, which accepts
// either precision (and, for Matrix, compressed input), then Scale(), then WriteKaldiObject.
struct CopyToolText {
  const char* usage;         // the --help text (ToolSpec::usage)
  const char* noun;          // "matrix" or "vector", in the --scale help
  const char* float_token;   // "FM" or "FV", in the --double help
  const char* double_token;  // "DM" or "DV"
};

// main() of a copy tool: options --binary (true), --scale (1) and --double (false), two positional
// arguments <in> <out> ("-" is stdin / stdout); exit codes as RunTool (0, 1, 2).
template <template <typename> class Object>
int RunCopyTool(int argc, char* argv[], const CopyToolText& text) {
  bool binary = true, write_double = false;
  float scale = 1.0f;
  auto copy = [&](auto real_zero, const std::string& in, const std::string& out) {
    using Real = decltype(real_zero);
    Object<Real> object;
    ReadKaldiObject(in, &object);
    if (scale != 1.0f) object.Scale(static_cast<Real>(scale));
    WriteKaldiObject(object, out, binary);
  };
  return RunTool(
      argc, argv, ToolSpec{text.usage, 2, 2},
      [&](ParseOptions* po) {
        po->Register("binary", &binary, "Write in binary mode (false: text)");
        po->Register("scale", &scale, std::string("Multiply the ") + text.noun + " by this factor");
        po->Register("double", &write_double,
                     std::string("Write double precision (") + text.double_token +
                         ") instead of float (" + text.float_token + ")");
      },
      [&](const ToolArgs& args) {
        if (write_double)
          copy(0.0, args.Arg(1), args.Arg(2));
        else
          copy(0.0f, args.Arg(1), args.Arg(2));
        return kToolExitOk;
      });
}

}  // namespace cuctx

#endif  // CUCTX_BIN_COPY_OBJECT_H_
