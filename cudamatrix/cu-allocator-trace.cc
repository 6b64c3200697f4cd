// cudamatrix/cu-allocator-trace.cc: internal::ParseTrace(), the one reader of allocator traces.
// SPDX-License-Identifier: Apache-2.0
#include "cudamatrix/internal/cu-allocator-trace.h"

#include "base/error.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <unordered_map>

namespace cuctx {
namespace internal {

std::vector<TraceOp> ParseTrace(std::istream& in, std::vector<uint32>* threads) {
  std::vector<TraceOp> ops;
  std::unordered_map<uint64, bool> live;
  std::string line;
  for (int64 line_no = 1; std::getline(in, line); ++line_no) {
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    std::istringstream fields(line);
    TraceOp op;
    fields >> op.kind;
    if (op.kind == 'm')
      fields >> op.thread >> op.a >> op.id;
    else if (op.kind == 'p')
      fields >> op.thread >> op.a >> op.b >> op.id;
    else if (op.kind == 'f')
      fields >> op.thread >> op.id;
    else if (op.kind == 's' || op.kind == 'd')
      fields >> op.thread;
    const char* problem = nullptr;
    if (std::string("mpfsd").find(op.kind) == std::string::npos) {
      problem = "unknown record (expected m, p, f, s or d)";
    } else if (fields.fail() || !(fields >> std::ws).eof()) {
      problem = "wrong number or type of fields";
    } else if (op.kind == 'f') {
      if (op.id == 0 || live.erase(op.id) == 0) problem = "free of a pointer id that is not live";
    } else if (op.kind == 'm' || op.kind == 'p') {
      const bool empty = op.a == 0 || (op.kind == 'p' && op.b == 0);
      if (empty != (op.id == 0))
        problem = "pointer id must be 0 exactly for zero-byte requests";
      else if (!empty && !live.emplace(op.id, true).second)
        problem = "pointer id allocated twice";
    }
    if (problem != nullptr)
      CUCTX_ERR << "allocator trace, line " << line_no << ": " << problem << ": '" << line << "'";
    if (std::find(threads->begin(), threads->end(), op.thread) == threads->end())
      threads->push_back(op.thread);
    ops.push_back(op);
  }
  CUCTX_CHECK(!in.bad()) << "error reading the allocator trace";
  return ops;
}

}  // namespace internal
}  // namespace cuctx
