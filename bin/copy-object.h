// bin/copy-object.h: the one body of copy-matrix and copy-vector: copy one Kaldi object (plain
// rx/wxfilenames) or a whole table (rspecifier to wspecifier), scaling it, in the chosen
// precision (float unless --double); binary/text from --binary for one object, from the
// wspecifier's b/t for a table.
// SPDX-License-Identifier: Apache-2.0
#ifndef CUCTX_BIN_COPY_OBJECT_H_
#define CUCTX_BIN_COPY_OBJECT_H_

#include "cutool/tool.h"

#include "util/kaldi-table.h"
#include <string>

namespace cuctx {

// Describes one copy tool. `Object` is Matrix or Vector: read with ReadKaldiObject or a table
// reader, which accept either precision (and, for Matrix, compressed input), then Scale(), then
// written with WriteKaldiObject or a table writer.
struct CopyToolText {
  const char* usage;         // the --help text (ToolSpec::usage)
  const char* noun;          // "matrix" or "vector", in the --scale help and messages
  const char* float_token;   // "FM" or "FV", in the --double help
  const char* double_token;  // "DM" or "DV"
};

// main() of a copy tool: options --binary (true), --scale (1) and --double (false), two positional
// arguments <in> <out>: both table specifiers, or both rx/wxfilenames (a mix is a usage error, as
// is a name that is neither); exit codes as RunTool (0, 1, 2).
template <template <typename> class Object>
int RunCopyTool(int argc, char* argv[], const CopyToolText& text) {
  bool binary = true, write_double = false;
  float scale = 1.0f;
  auto copy_one = [&](auto real_zero, const std::string& in, const std::string& out) {
    using Real = decltype(real_zero);
    Object<Real> object;
    ReadKaldiObject(in, &object);
    if (scale != 1.0f) object.Scale(static_cast<Real>(scale));
    WriteKaldiObject(object, out, binary);
  };
  auto copy_table = [&](auto real_zero, const std::string& in, const std::string& out) {
    using Holder = KaldiObjectHolder<Object<decltype(real_zero)>>;
    SequentialTableReader<Holder> reader(in);
    TableWriter<Holder> writer(out);
    int64 count = 0;
    for (; !reader.Done(); reader.Next(), ++count) {
      if (scale != 1.0f) reader.Value().Scale(static_cast<decltype(real_zero)>(scale));
      writer.Write(reader.Key(), reader.Value());
    }
    if (!writer.Close()) CUCTX_ERR << "failed to write the table '" << out << "'";
    CUCTX_VLOG(1) << "copied " << count << " " << text.noun << (count == 1 ? "" : "s");
  };
  return RunTool(
      argc, argv, ToolSpec{text.usage, 2, 2},
      [&](ParseOptions* po) {
        po->Register("binary", &binary,
                     "Write in binary mode (false: text); for a table, the wspecifier's b/t "
                     "decides instead");
        po->Register("scale", &scale, std::string("Multiply the ") + text.noun + " by this factor");
        po->Register("double", &write_double,
                     std::string("Write double precision (") + text.double_token +
                         ") instead of float (" + text.float_token + ")");
      },
      [&](const ToolArgs& args) {
        const std::string in = args.Arg(1), out = args.Arg(2);
        const bool in_table = LooksLikeTableSpecifier(in);
        const bool out_table = LooksLikeTableSpecifier(out);
        if (in_table != out_table)
          throw ToolUsageError(std::string("cannot mix a table and a single ") + text.noun + ": '" +
                               (in_table ? in : out) + "' is a table specifier but '" +
                               (in_table ? out : in) +
                               "' is not (copy a table as \"ark:in.ark ark:out.ark\", one " +
                               text.noun + " as \"in.mat out.mat\")");
        if (in_table) {
          if (ClassifyRspecifier(in, nullptr, nullptr) == kNoRspecifier)
            throw ToolUsageError(internal::InvalidRspecifierMessage(in));
          if (ClassifyWspecifier(out, nullptr, nullptr, nullptr) == kNoWspecifier)
            throw ToolUsageError(internal::InvalidWspecifierMessage(out));
          if (write_double)
            copy_table(0.0, in, out);
          else
            copy_table(0.0f, in, out);
          return kToolExitOk;
        }
        CheckRxfilenameArg(in, std::string("the input ") + text.noun);
        CheckWxfilenameArg(out, std::string("the output ") + text.noun);
        if (write_double)
          copy_one(0.0, in, out);
        else
          copy_one(0.0f, in, out);
        return kToolExitOk;
      });
}

}  // namespace cuctx

#endif  // CUCTX_BIN_COPY_OBJECT_H_
