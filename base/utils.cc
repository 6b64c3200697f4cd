// base/utils.cc: CharToString.
// SPDX-License-Identifier: Apache-2.0
#include "base/utils.h"

#include <cctype>

namespace cuctx {

std::string CharToString(const char& c) {
  const unsigned char u = static_cast<unsigned char>(c);
  if (u < 128 && std::isprint(u)) return std::string("'") + c + "'";
  return "[character " + std::to_string(static_cast<int>(c)) + "]";
}

}  // namespace cuctx
